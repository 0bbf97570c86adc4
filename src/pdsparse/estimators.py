"""scikit-learn estimators over :func:`pdsparse.solvers.solve`: a model a practitioner can drop
into a ``Pipeline``, ``GridSearchCV`` or ``cross_val_score``.

The objective is the package's, in scikit-learn's :class:`~sklearn.linear_model.SGDClassifier`
convention (also skglm's and celer's): the mean loss plus ``alpha`` times the penalty,

    P(w, c) = 1/n sum_i loss(x_i^T w + c, y_i) + alpha R(w),

R(w) = ||w||^2 / 2 (``penalty="l2"``), ||w||_1 (``"l1"``, pure l1: no strong convexity, a
certified gap through the rescaled dual point), l1_ratio ||w||_1 + (1 - l1_ratio) ||w||^2 / 2
(``"elasticnet"``), or the indicator of ||w||_1 <= ``radius`` plus alpha ||w||^2 / 2
(``"l1_ball"``, PDBFW's constraint). ``alpha``/``l1_ratio`` rather than LIBLINEAR's ``C``
because the package's P is a mean over examples (the papers' and the solvers' scaling), which
is what ``alpha`` multiplies: ``alpha = 1 / (C n)`` maps one onto the other for l2.

``tol`` is the certified relative duality gap: fit stops once P(w) - D(alpha) <= tol |P(w)|,
so P(w) - P* <= tol |P(w)| holds at the returned coefficients whatever the solver
(``gap_`` and ``status_`` say what was reached). ``solver="auto"`` runs the solver
:func:`pdsparse.solvers.predict.predict` names for the problem (``pdsparse advise``'s
prediction; its reason is ``solver_reason_``); any registered solver that accepts the problem
may be named instead.

The intercept is, for now, LIBLINEAR's: a constant feature of value ``intercept_scaling``
appended to X, whose weight is regularized like the others (scikit-learn's
``LogisticRegression(solver="liblinear")``); a large ``intercept_scaling`` makes its penalty
negligible. It copies X once. Multiclass targets are fitted one-vs-rest, all classes in one
problem with a label matrix (one kernel per class).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from pdsparse.penalties import ElasticNet, L1Ball, Penalty
from pdsparse.problem import Problem

__all__ = ["LinearClassifier", "LinearRegressor"]

PENALTIES = ("l2", "l1", "elasticnet", "l1_ball")
NO_TIME_LIMIT = 1e12


class _LinearModel(BaseEstimator):
    """What the classifier and the regressor share: the penalty, the problem, the solve."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _penalty(self) -> Penalty:
        alpha, ratio = float(self.alpha), float(self.l1_ratio)
        if self.penalty not in PENALTIES:
            raise ValueError(f"penalty must be one of {PENALTIES}, got {self.penalty!r}")
        if not (math.isfinite(alpha) and alpha >= 0):
            raise ValueError(f"alpha must be a finite number >= 0, got {self.alpha!r}")
        if self.penalty == "l1_ball":
            return L1Ball(float(self.radius), alpha)
        if alpha == 0:
            raise ValueError(f"penalty={self.penalty!r} needs alpha > 0 (no regularization "
                             "otherwise); penalty='l1_ball' takes alpha = 0")
        if self.penalty == "l2":
            return ElasticNet(alpha)
        if self.penalty == "l1":
            return ElasticNet(0.0, alpha)
        if not 0.0 <= ratio <= 1.0:
            raise ValueError(f"l1_ratio must be in [0, 1], got {self.l1_ratio!r}")
        return ElasticNet(alpha * (1.0 - ratio), alpha * ratio)

    def _design(self, X):
        """X with the intercept's constant column appended when ``fit_intercept``."""
        if not self.fit_intercept:
            return X
        col = np.full((X.shape[0], 1), float(self.intercept_scaling))
        return sp.hstack([X, sp.csr_matrix(col)], format="csr") if sp.issparse(X) else (
            np.hstack([X, col]))

    def _solve(self, X, targets, loss: str):
        """Fit the coefficients (rows: one per target column) and the intercepts."""
        from pdsparse.solvers import solve

        A = self._design(X)
        if sp.issparse(A):
            A = sp.csr_matrix(A)
            A.indices, A.indptr = A.indices.astype(np.int32), A.indptr.astype(np.int32)
        problem = Problem(A, targets, loss, penalty=self._penalty())
        start = None
        if self.warm_start and hasattr(self, "coef_"):
            prev = np.column_stack([np.atleast_2d(self.coef_), np.atleast_1d(self.intercept_)]
                                   if self.fit_intercept else [np.atleast_2d(self.coef_)])
            if prev.shape == (problem.k, problem.d):
                start = prev.T if problem.matrix else prev[0]
        seed = 0 if self.random_state is None else int(
            np.random.RandomState(self.random_state).randint(2**31 - 1)
            if not isinstance(self.random_state, int) else self.random_state)
        kwargs = {"seed": seed, "tol": float(self.tol), "max_epochs": float(self.max_iter),
                  "max_seconds": NO_TIME_LIMIT if self.max_time is None else
                  float(self.max_time)}
        method = self.solver
        if start is not None:
            from pdsparse.solvers import get_solver
            from pdsparse.solvers.predict import predict

            if method == "auto":
                pred = predict(problem, tol=float(self.tol))
                method, kwargs["options"] = pred.method, pred.options
                self.solver_reason_ = pred.reason
            if get_solver(method).start == "w0":
                kwargs["w0"] = start
        res = solve(problem, method, **kwargs)
        if self.solver == "auto" and "auto" in res.params:
            self.solver_reason_ = res.params["auto"]
        self.solver_ = res.params.get("method", method)
        W = np.atleast_2d(res.w.T) if problem.matrix else res.w[None, :]
        if self.fit_intercept:
            coef, intercept = W[:, :-1], W[:, -1] * float(self.intercept_scaling)
        else:
            coef, intercept = W, np.zeros(W.shape[0])
        self.n_iter_ = max(1, math.ceil(res.epochs)) if math.isfinite(res.epochs) else 1
        self.objective_, self.gap_, self.status_ = res.objective, res.rel_gap, res.status
        return np.ascontiguousarray(coef), intercept


_PARAMS_DOC = """
    penalty : {"l2", "l1", "elasticnet", "l1_ball"}, default "l2"
    alpha : float, default 1e-4
        The strength: R(w) is multiplied by it (module docstring).
    l1_ratio : float in [0, 1], default 0.15
        The elastic net's mix (``penalty="elasticnet"``).
    radius : float, default 1.0
        The l1 ball's radius (``penalty="l1_ball"``).
    solver : str, default "auto"
        A name of :data:`pdsparse.solvers.SOLVERS` or "auto" (``solver_``, ``solver_reason_``).
    tol : float, default 1e-6
        The certified relative duality gap to stop at.
    max_iter : float, default 1000
        At most this many passes over the data (epochs).
    max_time : float or None, default None
        At most this much kernel CPU time, in seconds.
    fit_intercept : bool, default True
    intercept_scaling : float, default 1.0
        The intercept's constant feature (its weight is regularized: module docstring).
    warm_start : bool, default False
        Start from the previous fit's coefficients (primal solvers).
    random_state : int, RandomState or None, default None
        The coordinate draws' seed (None: 0, so that fits repeat).
"""


class LinearClassifier(LinearClassifierMixin, ClassifierMixin, _LinearModel):
    __doc__ = ("""A linear classifier fitted to a certified duality gap by pdsparse's solvers.

    Parameters
    ----------
    loss : {"logistic", "smooth_hinge", "squared"}, default "logistic"
        The loss of the margin y (x^T w + c), y = ±1 (one-vs-rest for more classes).""" +
               _PARAMS_DOC + """
    Attributes
    ----------
    classes_, coef_ (1 or n_classes, n_features), intercept_, n_iter_ (passes),
    objective_, gap_ (the relative gap reached), status_, solver_, solver_reason_ ("auto").
    """)

    def __init__(self, loss="logistic", penalty="l2", alpha=1e-4, l1_ratio=0.15, radius=1.0,
                 solver="auto", tol=1e-6, max_iter=1000, max_time=None, fit_intercept=True,
                 intercept_scaling=1.0, warm_start=False, random_state=None):
        self.loss = loss
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.radius = radius
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.warm_start = warm_start
        self.random_state = random_state

    def fit(self, X, y):
        """Fit on X (n_samples, n_features; dense or sparse) and the class labels y."""
        if self.loss not in ("logistic", "smooth_hinge", "squared"):
            raise ValueError(f"loss must be logistic, smooth_hinge or squared, got "
                             f"{self.loss!r}")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        self.classes_, index = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"this solver needs samples of at least 2 classes in the data, "
                             f"but the data contains only one class: {self.classes_[0]!r}")
        if self.classes_.size == 2:
            targets = np.where(index == 1, 1.0, -1.0)
        else:
            targets = np.where(index[:, None] == np.arange(self.classes_.size), 1.0, -1.0)
        self.coef_, self.intercept_ = self._solve(X, targets, self.loss)
        return self

    def _has_proba(self):
        return self.loss == "logistic"

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities (logistic loss): the sigmoid of the decision function; with
        more classes the one-vs-rest sigmoids normalized to sum to 1 (as scikit-learn's
        one-vs-rest logistic regression)."""
        check_is_fitted(self)
        scores = self.decision_function(X)
        if scores.ndim == 1:
            pos = 1.0 / (1.0 + np.exp(-scores))
            return np.column_stack([1.0 - pos, pos])
        prob = 1.0 / (1.0 + np.exp(-scores))
        return prob / prob.sum(axis=1, keepdims=True)

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


class LinearRegressor(RegressorMixin, _LinearModel):
    __doc__ = ("""A linear least-squares regressor (the lasso with ``penalty="l1"``, the
    elastic net, ridge) fitted to a certified duality gap by pdsparse's solvers.

    The loss is (x^T w + c - y)^2 / 2, so that ``penalty="l1"`` is scikit-learn's ``Lasso``
    objective at the same ``alpha``.

    Parameters
    ----------""" + _PARAMS_DOC + """
    Attributes
    ----------
    coef_ (n_features,), intercept_, n_iter_ (passes), objective_, gap_ (the relative gap
    reached), status_, solver_, solver_reason_ ("auto").
    """)

    def __init__(self, penalty="l2", alpha=1e-4, l1_ratio=0.15, radius=1.0, solver="auto",
                 tol=1e-6, max_iter=1000, max_time=None, fit_intercept=True,
                 intercept_scaling=1.0, warm_start=False, random_state=None):
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.radius = radius
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.warm_start = warm_start
        self.random_state = random_state

    def fit(self, X, y):
        """Fit on X (n_samples, n_features; dense or sparse) and the real targets y."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
        coef, intercept = self._solve(X, np.asarray(y, dtype=np.float64), "squared")
        self.coef_, self.intercept_ = coef[0], float(intercept[0])
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_
