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

The intercept (``fit_intercept``) is unpenalized, fitted inside primal RCD's kernel
(``Problem(..., intercept=True)``: one more coordinate, no copy of a sparse X; a dense X is
copied to CSR), for the elastic-net penalties with ``solver`` "auto" (which then runs primal
RCD) or "primal_rcd". With another solver or the l1 ball it is LIBLINEAR's: a constant
feature of value ``intercept_scaling`` appended to X (a copy), whose weight is regularized
like the others (scikit-learn's ``LogisticRegression(solver="liblinear")``); a large
``intercept_scaling`` makes its penalty negligible. Multiclass targets are fitted
one-vs-rest, all classes in one problem with a label matrix (one kernel per class).

``sample_weight`` in ``fit`` weighs each example's loss inside the kernels (no copy of X):
P(w, c) = sum_i s_i loss(x_i^T w + c, y_i) / sum_i s_i + alpha R(w), so that a weight of 2
is a duplicated row and a weight of 0 a removed one (scikit-learn's semantics). Primal RCD
(every penalty but the l1 ball) and dual RCD (l2) read the weights on a sparse X (a dense X
is copied to CSR for a weighted fit); ``solver="auto"`` chooses between those, any other
solver refuses a weighted fit by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from pdsparse.penalties import ElasticNet, L1Ball, Penalty
from pdsparse.problem import Problem

__all__ = ["LinearClassifier", "LinearClassifierCV", "LinearRegressor", "LinearRegressorCV",
           "Path", "alpha_max", "penalty_params", "regularization_path"]

PENALTIES = ("l2", "l1", "elasticnet", "l1_ball")
NO_TIME_LIMIT = 1e12


def penalty_params(penalty: Penalty) -> dict:
    """The estimators' ``penalty``, ``alpha`` and ``l1_ratio`` or ``radius`` that make
    ``penalty`` (the inverse of their mapping, ``_LinearModel._penalty``): the elastic net's
    ``ElasticNet.alpha_ratio`` (``"l2"`` or ``"l1"`` alone at a ratio of 0 or 1,
    ``"elasticnet"`` with ``l1_ratio`` between), the l1 ball ``"l1_ball"`` with its radius
    and alpha = l2."""
    if isinstance(penalty, L1Ball):
        return {"penalty": "l1_ball", "radius": float(penalty.radius), "alpha": float(penalty.l2)}
    if not isinstance(penalty, ElasticNet):
        raise ValueError(f"the estimators take the elastic net and the l1 ball, not {penalty!r}")
    alpha, ratio = penalty.alpha_ratio
    if ratio in (0.0, 1.0):
        return {"penalty": "l2" if ratio == 0.0 else "l1", "alpha": alpha}
    return {"penalty": "elasticnet", "alpha": alpha, "l1_ratio": ratio}


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

    def _kernel_intercept(self) -> bool:
        """The intercept is the kernel's (unpenalized, primal RCD) rather than a constant
        feature: for the elastic-net penalties with ``solver`` "auto" or "primal_rcd"."""
        return bool(self.fit_intercept) and self.penalty != "l1_ball" and \
            self.solver in ("auto", "primal_rcd", "prox_newton")

    def _design(self, X):
        """X with the intercept's constant column appended when ``fit_intercept`` and the
        kernel does not fit it."""
        if not self.fit_intercept or self._kernel_intercept():
            return X
        col = np.full((X.shape[0], 1), float(self.intercept_scaling))
        return sp.hstack([X, sp.csr_matrix(col)], format="csr") if sp.issparse(X) else (
            np.hstack([X, col]))

    def fit(self, X, y, sample_weight=None):
        X, targets, loss = self._fit_data(X, y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        self._set_coef(*self._solve(X, targets, loss, sample_weight))
        return self

    def _problem(self, X, targets, loss: str, sample_weight=None) -> Problem:
        A = self._design(X)
        intercept = self._kernel_intercept()
        if (sample_weight is not None or intercept) and not sp.issparse(A):
            # the dense kernels read no weights and fit no intercept: the sparse ones do
            A = sp.csr_matrix(A)
        # a sparse X as given (Problem makes its CSR, int32): its cached canonical check
        return Problem(A, targets, loss, penalty=self._penalty(), sample_weight=sample_weight,
                       intercept=intercept)

    def _solve(self, X, targets, loss: str, sample_weight=None):
        """Fit the coefficients (rows: one per target column) and the intercepts."""
        from pdsparse.solvers import solve

        problem = self._problem(X, targets, loss, sample_weight)
        start = None
        if self.warm_start and hasattr(self, "coef_"):
            prev = np.column_stack([np.atleast_2d(self.coef_), np.atleast_1d(self.intercept_)]
                                   if self.fit_intercept else [np.atleast_2d(self.coef_)])
            if prev.shape == (problem.k, problem.var_shape[0]):
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
        if problem.intercept:
            coef, intercept = W[:, :-1], W[:, -1]
        elif self.fit_intercept:
            coef, intercept = W[:, :-1], W[:, -1] * float(self.intercept_scaling)
        else:
            coef, intercept = W, np.zeros(W.shape[0])
        self.n_iter_ = max(1, math.ceil(res.epochs)) if math.isfinite(res.epochs) else 1
        self.objective_, self.gap_, self.status_ = res.objective, res.rel_gap, res.status
        return np.ascontiguousarray(coef), intercept


def _classes(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted classes of y and each label's index into them, as ``np.unique(y,
    return_inverse=True)``, after scikit-learn's check that y holds classes. Two integral
    numeric values (the usual binary labels) are found by a min, a max and one comparison,
    where ``np.unique`` sorts y twice (once more in ``type_of_target``): 4 ms of a 60 ms fit
    on ijcnn1's 50,000 labels."""
    if y.dtype.kind in "biuf" and y.size:
        lo, hi = y.min(), y.max()
        top = y == hi
        if (float(lo).is_integer() and float(hi).is_integer() and lo != hi
                and np.all(top | (y == lo))):
            return np.array([lo, hi], dtype=y.dtype), top.astype(np.intp)
    check_classification_targets(y)
    return np.unique(y, return_inverse=True)


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
        Unpenalized, in primal RCD's kernel, for the elastic-net penalties with solver
        "auto" or "primal_rcd"; else a constant feature (module docstring).
    intercept_scaling : float, default 1.0
        The constant feature's value when the intercept is one (its weight is regularized).
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

    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features; dense or sparse) and the class labels y;
        ``sample_weight`` (n_samples,) weighs each example's loss (module docstring)."""
        return super().fit(X, y, sample_weight)

    def _fit_data(self, X, y):
        if self.loss not in ("logistic", "smooth_hinge", "squared"):
            raise ValueError(f"loss must be logistic, smooth_hinge or squared, got "
                             f"{self.loss!r}")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        self.classes_, index = _classes(y)
        if self.classes_.size < 2:
            raise ValueError(f"this solver needs samples of at least 2 classes in the data, "
                             f"but the data contains only one class: {self.classes_[0]!r}")
        if self.classes_.size == 2:
            targets = np.where(index == 1, 1.0, -1.0)
        else:
            targets = np.where(index[:, None] == np.arange(self.classes_.size), 1.0, -1.0)
        return X, targets, self.loss

    def _set_coef(self, coef, intercept) -> None:
        self.coef_, self.intercept_ = coef, intercept

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

    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features; dense or sparse) and the real targets y;
        ``sample_weight`` (n_samples,) weighs each example's loss (module docstring)."""
        return super().fit(X, y, sample_weight)

    def _fit_data(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
        return X, np.asarray(y, dtype=np.float64), "squared"

    def _set_coef(self, coef, intercept) -> None:
        self.coef_, self.intercept_ = coef[0], float(intercept[0])

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_


# ------------------------------------------------------------------------------------------
# the regularization path and cross-validation over it
# ------------------------------------------------------------------------------------------

def _l1_share(estimator) -> float:
    """The l1 weight is alpha times this; 0 for the penalties without an l1 term."""
    return {"l1": 1.0, "elasticnet": float(estimator.l1_ratio)}.get(estimator.penalty, 0.0)


def alpha_max(estimator: _LinearModel, X, y) -> float:
    """The smallest ``alpha`` at which every weight of ``estimator``'s model on (X, y) is 0.

    The KKT conditions at w = 0 of the mean loss f plus alpha (r ||w||_1 + (1 - r) ||w||^2 / 2)
    hold exactly when ``alpha r >= ||grad f(0)||_inf`` (:func:`pdsparse.solvers.predict.
    lambda_max`; the l2 term's gradient vanishes at 0), so alpha_max = lambda_max / r, the
    largest over the classes of a one-vs-rest fit. An unpenalized intercept sits at its best
    value for w = 0; a constant feature (module docstring) counts in lambda_max. Only
    ``penalty="l1"`` and ``"elasticnet"`` with ``l1_ratio > 0`` have one.
    """
    from pdsparse.solvers.predict import lambda_max

    share = _l1_share(estimator)
    if not share > 0:
        raise ValueError(f"penalty={estimator.penalty!r} (l1_ratio={estimator.l1_ratio!r}) has "
                         "no l1 term, so no alpha gives w = 0: give the alphas")
    est = clone(estimator).set_params(alpha=1.0)
    problem = est._problem(*est._fit_data(X, y))
    lam = max(lambda_max(problem.column(c)) for c in range(problem.k))
    return lam / share


def _alpha_grid(estimator, X, y, alphas, n_alphas: int, eps: float) -> np.ndarray:
    if alphas is not None:
        grid = np.asarray(alphas, dtype=np.float64).ravel()
        if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
            raise ValueError(f"alphas must be positive finite numbers, got {alphas!r}")
        return np.sort(grid)[::-1]
    if int(n_alphas) < 1 or not 0 < float(eps) < 1:
        raise ValueError(f"n_alphas must be >= 1 and 0 < eps < 1, got {n_alphas!r}, {eps!r}")
    top = alpha_max(estimator, X, y)
    if not top > 0:  # e.g. one sample, which an unpenalized intercept fits exactly
        raise ValueError(f"alpha_max = 0 on these data (n_samples = {X.shape[0]}): every "
                         "alpha gives w = 0, so there is no path: give the alphas")
    return np.geomspace(top, top * float(eps), int(n_alphas))


@dataclass
class Path:
    """The fits of :func:`regularization_path`, one per alpha (decreasing)."""

    alphas: np.ndarray
    coefs: np.ndarray
    """(n_alphas, n_features) for a regressor or a binary classifier; (n_alphas, n_classes,
    n_features) one-vs-rest."""
    intercepts: np.ndarray
    gaps: np.ndarray
    """The certified relative duality gap reached at each alpha."""
    n_iters: np.ndarray
    statuses: list
    solvers: list


def regularization_path(estimator: _LinearModel, X, y, alphas=None, n_alphas: int = 20,
                        eps: float = 1e-3) -> Path:
    """Fit ``estimator`` (a :class:`LinearClassifier` or :class:`LinearRegressor`, cloned)
    at each alpha, from the largest down, each fit warm-started at the previous one's
    coefficients (solvers that start from w; the dual ones start afresh).

    Without ``alphas``: ``n_alphas`` values log-spaced from :func:`alpha_max` (w = 0) down to
    ``eps`` times it, as scikit-learn's ``lasso_path``. Every fit is certified to the
    estimator's ``tol`` (``gaps``). No screening yet: each fit works on every feature.
    """
    est = clone(estimator).set_params(warm_start=True)
    grid = _alpha_grid(est, X, y, alphas, n_alphas, eps)
    fits = []
    for alpha in grid:
        est.set_params(alpha=float(alpha)).fit(X, y)
        fits.append((np.array(est.coef_, copy=True), np.array(est.intercept_, copy=True),
                     est.gap_, est.n_iter_, est.status_, est.solver_))
    coefs, intercepts, gaps, n_iters, statuses, solvers = zip(*fits, strict=True)
    coefs = np.array(coefs)
    if coefs.ndim == 3 and coefs.shape[1] == 1:
        coefs = coefs[:, 0, :]
    return Path(grid, coefs, np.squeeze(np.array(intercepts)), np.array(gaps),
                np.array(n_iters), list(statuses), list(solvers))


_CV_DOC = """
    alphas : array-like or None, default None
        The strengths to try; None: ``n_alphas`` from :func:`alpha_max` down to ``eps`` times it.
    n_alphas : int, default 20
    eps : float, default 1e-3
    cv : int, cross-validation generator or iterable, default 5
        scikit-learn's ``check_cv`` (stratified folds for a classifier).
    scoring : str, callable or None, default None
        scikit-learn's ``check_scoring`` (None: the estimator's ``score``).
"""


class _PathCV:
    """Cross-validation over the regularization path: on each fold the path (warm starts),
    scored on the held-out part; ``alpha_`` maximizes the mean score (ties: the larger alpha,
    the sparser model); then one fit on all the data at ``alpha_``."""

    _base_class: type
    _FITTED = ("coef_", "intercept_", "n_iter_", "objective_", "gap_", "status_", "solver_",
               "solver_reason_", "classes_", "n_features_in_", "feature_names_in_")

    def _base(self) -> _LinearModel:
        names = self._base_class._get_param_names()
        return self._base_class(**{k: getattr(self, k) for k in names
                                   if k not in ("alpha", "warm_start")})

    def fit(self, X, y):
        from sklearn.base import is_classifier
        from sklearn.metrics import check_scoring
        from sklearn.model_selection import check_cv
        from sklearn.utils import _safe_indexing, indexable

        base = self._base()
        X, y = indexable(X, y)
        grid = _alpha_grid(base, X, y, self.alphas, self.n_alphas, self.eps)
        cv = check_cv(self.cv, y, classifier=is_classifier(self))
        scorer = check_scoring(base, scoring=self.scoring)
        scores = []
        for train, test in cv.split(X, y):
            path = clone(base).set_params(warm_start=True)
            row = []
            for alpha in grid:
                path.set_params(alpha=float(alpha)).fit(_safe_indexing(X, train),
                                                        _safe_indexing(y, train))
                row.append(scorer(path, _safe_indexing(X, test), _safe_indexing(y, test)))
            scores.append(row)
        self.alphas_ = grid
        self.cv_scores_ = np.array(scores)
        self.alpha_ = float(grid[int(np.argmax(self.cv_scores_.mean(axis=0)))])
        final = clone(base).set_params(alpha=self.alpha_).fit(X, y)
        for name in self._FITTED:
            if hasattr(final, name):
                setattr(self, name, getattr(final, name))
        return self


class LinearClassifierCV(_PathCV, LinearClassifier):
    __doc__ = ("""A :class:`LinearClassifier` whose ``alpha`` is chosen by cross-validation
    over the regularization path (:func:`regularization_path`), as scikit-learn's
    ``LogisticRegressionCV`` and celer's ``LassoCV`` do.

    Parameters
    ----------
    loss, penalty, l1_ratio, radius, solver, tol, max_iter, max_time, fit_intercept,
    intercept_scaling, random_state
        As :class:`LinearClassifier`'s (penalty default "l1": the path from w = 0).""" +
               _CV_DOC + """
    Attributes
    ----------
    alpha_, alphas_ (decreasing), cv_scores_ (n_folds, n_alphas), and those of
    :class:`LinearClassifier` for the final fit at ``alpha_``.
    """)
    _base_class = LinearClassifier

    def __init__(self, loss="logistic", penalty="l1", l1_ratio=0.15, radius=1.0,
                 alphas=None, n_alphas=20, eps=1e-3, cv=5, scoring=None, solver="auto",
                 tol=1e-6, max_iter=1000, max_time=None, fit_intercept=True,
                 intercept_scaling=1.0, random_state=None):
        self.loss = loss
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.radius = radius
        self.alphas = alphas
        self.n_alphas = n_alphas
        self.eps = eps
        self.cv = cv
        self.scoring = scoring
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.random_state = random_state

    def fit(self, X, y):
        """Choose ``alpha_`` by cross-validation, then fit at it on all of X, y."""
        return _PathCV.fit(self, X, y)


class LinearRegressorCV(_PathCV, LinearRegressor):
    __doc__ = ("""A :class:`LinearRegressor` whose ``alpha`` is chosen by cross-validation
    over the regularization path (scikit-learn's ``LassoCV``, ``ElasticNetCV``).

    Parameters
    ----------
    penalty, l1_ratio, radius, solver, tol, max_iter, max_time, fit_intercept,
    intercept_scaling, random_state
        As :class:`LinearRegressor`'s (penalty default "l1": the lasso path).""" + _CV_DOC + """
    Attributes
    ----------
    alpha_, alphas_ (decreasing), cv_scores_ (n_folds, n_alphas), and those of
    :class:`LinearRegressor` for the final fit at ``alpha_``.
    """)
    _base_class = LinearRegressor

    def __init__(self, penalty="l1", l1_ratio=0.15, radius=1.0, alphas=None, n_alphas=20,
                 eps=1e-3, cv=5, scoring=None, solver="auto", tol=1e-6, max_iter=1000,
                 max_time=None, fit_intercept=True, intercept_scaling=1.0, random_state=None):
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.radius = radius
        self.alphas = alphas
        self.n_alphas = n_alphas
        self.eps = eps
        self.cv = cv
        self.scoring = scoring
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.max_time = max_time
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.random_state = random_state

    def fit(self, X, y):
        """Choose ``alpha_`` by cross-validation, then fit at it on all of X, y."""
        return _PathCV.fit(self, X, y)
