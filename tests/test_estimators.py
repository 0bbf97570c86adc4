"""pdsparse's scikit-learn estimators: scikit-learn's own estimator checks, a Pipeline and a
GridSearchCV, and the fitted models against independent optima (scikit-learn's Lasso and
LogisticRegression at tight tolerances, on the same objective)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import Lasso, LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from pdsparse.estimators import (
    LinearClassifier,
    LinearClassifierCV,
    LinearRegressor,
    LinearRegressorCV,
    _classes,
    alpha_max,
    penalty_params,
    regularization_path,
)
from pdsparse.penalties import ElasticNet, L1Ball, TraceBall


# The regressors at a tight tol and the passes it needs: scikit-learn compares a fit with
# integer sample weights against a fit on the rows repeated, to rtol 1e-7 and atol 1e-9 in the
# predictions. At the default tol (a certified relative gap of 1e-6) and max_iter the two fits
# stop 1e-4 apart, at 1e-13 still 2e-9 apart on a prediction of 1e-3 (a gap eps leaves w
# within sqrt(2 eps / mu)); at 1e-14 they pass. The fits are deterministic (seeded, stopped
# by the gap, not by time). tests/test_sample_weights.py checks the equivalence on the
# objective and the certified optimum.
# tol: the sample-weight equivalence checks compare predictions to rtol 1e-7, which a
# certified relative gap of 1e-6 (the default) does not promise; whether the default's fits
# happened to pass depended on where the solve's evaluations fell
@parametrize_with_checks([LinearClassifier(tol=1e-10),
                          LinearClassifier(loss="smooth_hinge", penalty="l1"),
                          LinearRegressor(tol=1e-14, max_iter=100000),
                          LinearRegressor(penalty="elasticnet", tol=1e-14, max_iter=100000),
                          LinearClassifierCV(n_alphas=3, cv=2),
                          LinearRegressorCV(penalty="elasticnet", n_alphas=3, cv=2)])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_in_a_pipeline_and_a_grid_search():
    # no redundant (collinear) features: pure l1 is not strongly convex, and coordinate
    # descent crawls on exact collinearity (a working set with Newton steps is issue 32's)
    X, y = make_classification(300, 12, n_redundant=0, random_state=1)
    pipe = make_pipeline(StandardScaler(), LinearClassifier(penalty="l1"))
    grid = GridSearchCV(pipe, {"linearclassifier__alpha": [1e-3, 1e-2, 1e-1]}, cv=3)
    grid.fit(X, y)
    assert grid.best_score_ > 0.8 and grid.best_params_["linearclassifier__alpha"] in (
        1e-3, 1e-2, 1e-1)
    assert grid.best_estimator_[-1].status_ == "converged"


def test_the_lasso_equals_scikit_learns():
    """penalty="l1" is Lasso's objective at the same alpha (mean squared loss / 2)."""
    X, y = make_regression(150, 30, n_informative=8, noise=2.0, random_state=2)
    alpha = 1.0
    ours = LinearRegressor(penalty="l1", alpha=alpha, tol=1e-12, fit_intercept=False).fit(X, y)
    ref = Lasso(alpha=alpha, tol=1e-14, max_iter=100000, fit_intercept=False).fit(X, y)

    def objective(w):
        return 0.5 * np.mean((X @ w - y) ** 2) + alpha * np.abs(w).sum()

    assert ours.gap_ <= 1e-12 and ours.objective_ == pytest.approx(objective(ours.coef_))
    assert objective(ours.coef_) <= objective(ref.coef_) * (1 + 1e-12)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    assert (ours.coef_ == 0).sum() == (np.abs(ref.coef_) < 1e-12).sum() > 0


def test_l2_logistic_equals_scikit_learns_at_c_equal_1_over_alpha_n():
    X, y = make_classification(200, 10, random_state=3)
    alpha = 1e-2
    ours = LinearClassifier(alpha=alpha, tol=1e-12, fit_intercept=False).fit(X, y)
    ref = LogisticRegression(C=1.0 / (alpha * len(y)), fit_intercept=False, tol=1e-12,
                             max_iter=10000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5, atol=1e-7)


def test_pure_l1_is_sparse_and_certified_on_sparse_input():
    X, y = make_classification(400, 60, n_informative=6, random_state=4)
    Xs = sp.csr_matrix(np.where(np.abs(X) > 1.0, X, 0.0))
    clf = LinearClassifier(penalty="l1", alpha=2e-2, tol=1e-8).fit(Xs, y)
    assert clf.status_ == "converged" and clf.gap_ <= 1e-8
    assert 0 < np.count_nonzero(clf.coef_) < 30
    with pytest.raises(ValueError, match="needs l2 > 0.*primal_rcd"):
        LinearClassifier(penalty="l1", solver="dual_rcd").fit(Xs, y)


def test_one_vs_rest_and_warm_start():
    X, y = make_classification(300, 8, n_informative=5, n_classes=3, random_state=5)
    clf = LinearClassifier(alpha=1e-2, tol=1e-10, solver="primal_rcd").fit(X, y)
    assert clf.coef_.shape == (3, 8) and clf.intercept_.shape == (3,)
    for k, label in enumerate(clf.classes_):  # each row is the binary fit of its class
        one = LinearClassifier(alpha=1e-2, tol=1e-10, solver="primal_rcd").fit(X, y == label)
        # both within a relative gap 1e-10 of P* (about 0.5): by alpha-strong convexity each
        # is within sqrt(2 gap / alpha) = 1e-4 of the optimum
        np.testing.assert_allclose(clf.coef_[k], one.coef_[0], atol=2e-4)
        np.testing.assert_allclose(clf.intercept_[k], one.intercept_[0], atol=2e-4)
    first = clf.n_iter_
    clf.set_params(warm_start=True).fit(X, y)
    assert clf.n_iter_ < first


def test_l1_ball_constraint_and_bad_settings():
    X, y = make_classification(200, 10, random_state=6)
    clf = LinearClassifier(loss="smooth_hinge", penalty="l1_ball", radius=0.5, alpha=1e-3,
                           fit_intercept=False).fit(X, y)
    assert np.abs(clf.coef_).sum() <= 0.5 * (1 + 1e-9)
    for bad in ({"penalty": "l0"}, {"alpha": -1.0}, {"penalty": "l1", "alpha": 0.0},
                {"penalty": "elasticnet", "l1_ratio": 2.0}, {"loss": "hinge"}):
        with pytest.raises(ValueError):
            LinearClassifier(**bad).fit(X, y)


# ------------------------------------------------------------------ path and cross-validation


def test_the_lasso_path_equals_scikit_learns():
    from sklearn.linear_model import lasso_path

    X, y = make_regression(120, 25, n_informative=6, noise=1.0, random_state=3)
    est = LinearRegressor(penalty="l1", tol=1e-12, fit_intercept=False)
    top = alpha_max(est, X, y)
    assert top == pytest.approx(np.abs(X.T @ y).max() / len(y), rel=1e-12)
    path = regularization_path(est, X, y, n_alphas=6, eps=1e-2)
    alphas, coefs, _ = lasso_path(X, y, alphas=path.alphas, tol=1e-14, max_iter=100000)
    assert np.allclose(path.alphas, alphas)
    assert path.coefs.shape == (6, 25) and np.all(path.gaps <= 1e-12)
    assert np.abs(path.coefs[0]).max() <= 1e-10 * np.abs(path.coefs[-1]).max()  # w = 0
    assert np.allclose(path.coefs, coefs.T, atol=1e-6 * np.abs(coefs).max())
    # the supports grow as alpha falls
    support = (path.coefs != 0).sum(axis=1)
    assert support[-1] > support[1] > 0


def test_a_path_without_an_l1_term_needs_its_alphas():
    X, y = make_regression(30, 5, random_state=0)
    with pytest.raises(ValueError, match="no l1 term"):
        regularization_path(LinearRegressor(penalty="l2"), X, y)
    path = regularization_path(LinearRegressor(penalty="l2"), X, y, alphas=[0.1, 1.0])
    assert list(path.alphas) == [1.0, 0.1]
    with pytest.raises(ValueError, match="alphas must be positive"):
        regularization_path(LinearRegressor(penalty="l1"), X, y, alphas=[0.1, -1])


def test_lasso_cv_picks_scikit_learns_alpha():
    from sklearn.linear_model import LassoCV

    X, y = make_regression(150, 20, n_informative=5, noise=8.0, random_state=4)
    ours = LinearRegressorCV(n_alphas=8, cv=3, tol=1e-10, scoring="neg_mean_squared_error",
                             fit_intercept=False).fit(X, y)
    ref = LassoCV(alphas=ours.alphas_, cv=3, tol=1e-12, max_iter=100000,
                  fit_intercept=False).fit(X, y)
    assert ours.alpha_ == pytest.approx(ref.alpha_, rel=1e-12)
    assert np.allclose(-ours.cv_scores_.T, ref.mse_path_, rtol=1e-5)
    assert np.allclose(ours.coef_, ref.coef_, atol=1e-5 * np.abs(ref.coef_).max())


def test_classifier_cv_refits_at_the_best_alpha():
    X, y = make_classification(200, 10, n_redundant=0, random_state=5)
    cv = LinearClassifierCV(n_alphas=5, cv=3, tol=1e-8).fit(X, y)
    assert cv.cv_scores_.shape == (3, 5)
    assert cv.alpha_ == cv.alphas_[np.argmax(cv.cv_scores_.mean(axis=0))]
    alone = LinearClassifier(penalty="l1", alpha=cv.alpha_, tol=1e-8).fit(X, y)
    assert np.allclose(cv.coef_, alone.coef_, atol=1e-5)
    assert cv.score(X, y) > 0.8 and cv.status_ == "converged"


def test_the_intercept_is_unpenalized_as_scikit_learns():
    """fit_intercept: the kernel's unpenalized intercept, the same model as scikit-learn's
    LogisticRegression (lbfgs, whose intercept is unpenalized) and Lasso (which centers),
    weighted too; the constant-feature intercept of another solver is not."""
    X, y = make_classification(200, 8, n_redundant=0, weights=[0.8], random_state=3)
    sw = np.random.default_rng(1).uniform(0.5, 2.0, 200)
    C = 0.5
    for weights in (None, sw):
        ours = LinearClassifier(alpha=1 / (C * (weights.sum() if weights is not None
                                                else 200)), tol=1e-12, max_iter=100000)
        ours.fit(X, y, sample_weight=weights)
        ref = LogisticRegression(C=C, tol=1e-12, max_iter=10000).fit(X, y, sample_weight=weights)
        assert ours.solver_ == "prox_newton" and ours.gap_ <= 1e-12
        np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-5, atol=1e-6)
    Xr, yr = make_regression(150, 20, n_informative=5, noise=1.0, bias=7.0, random_state=2)
    lasso = LinearRegressor(penalty="l1", alpha=0.5, tol=1e-12, max_iter=100000).fit(Xr, yr)
    ref = Lasso(alpha=0.5, tol=1e-14, max_iter=100000).fit(Xr, yr)
    np.testing.assert_allclose(lasso.coef_, ref.coef_, atol=1e-6)
    assert lasso.intercept_ == pytest.approx(ref.intercept_, abs=1e-6)
    # a solver without the kernel intercept falls back to the penalized constant feature
    other = LinearRegressor(penalty="l2", alpha=1.0, solver="dual_rcd", tol=1e-12,
                            max_iter=100000).fit(Xr, yr)
    assert abs(other.intercept_ - 7.0) > 1.0


@pytest.mark.parametrize("y", [
    np.array([1.0, -1.0, -1.0, 1.0]), np.array([0, 1, 1, 0, 1]), np.array([3, 7, 7]),
    np.array([True, False, True]), np.array([2.0, 5.0, 2.0], dtype=np.float32),
    np.array([0, 1, 2, 1]), np.array(["b", "a", "b"])])
def test_the_fast_class_lookup_is_np_unique(y):
    classes, index = _classes(y)
    want_classes, want_index = np.unique(y, return_inverse=True)
    assert classes.dtype == want_classes.dtype
    np.testing.assert_array_equal(classes, want_classes)
    np.testing.assert_array_equal(index, want_index)


@pytest.mark.parametrize("y", [np.array([0.5, 1.5, 0.5]), np.array([0.1, 0.2, 0.3])])
def test_continuous_labels_are_refused_as_scikit_learn_does(y):
    with pytest.raises(ValueError, match="Unknown label type"):
        _classes(y)


@pytest.mark.parametrize("penalty", [ElasticNet(0.3), ElasticNet(0.0, 0.2), ElasticNet(0.3, 0.2),
                                     ElasticNet(1e-9, 5.0), L1Ball(2.5, 0.1), L1Ball(1.0, 0.0)])
def test_penalty_params_are_the_inverse_of_the_estimators_mapping(penalty):
    """``penalty_params`` (what ``advise`` prints) gives back the penalty through the
    estimators' own mapping, to the rounding of alpha (l2 = alpha (1 - l1_ratio) cancels
    when l2 << l1)."""
    params = penalty_params(penalty)
    ulp = 4e-16 * params["alpha"]
    for model in (LinearClassifier(**params), LinearRegressor(**params)):
        back = model._penalty()
        assert type(back) is type(penalty)
        for name in ("l2", "l1", "radius"):
            if hasattr(penalty, name):
                assert getattr(back, name) == pytest.approx(getattr(penalty, name), rel=1e-15,
                                                            abs=ulp)
    with pytest.raises(ValueError, match="elastic net and the l1 ball"):
        penalty_params(TraceBall(1.0))
