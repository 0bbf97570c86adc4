"""Dense data (one C-order copy) and one-vs-rest label matrices: Problem, objective, solve."""

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse import objective
from pdsparse.errors import ConfigError, DataError
from pdsparse.problem import Problem, one_vs_rest
from pdsparse.solvers import solve


def _data(n=30, d=12, seed=0, density=0.4):
    rng = np.random.default_rng(seed)
    A = sp.random(n, d, density=density, random_state=rng, format="csr")
    y = rng.integers(0, 3, size=n)
    return A, y


def test_dense_problem_evaluates_like_sparse():
    A, y = _data()
    b = np.where(y == 0, 1.0, -1.0)
    ps = Problem(A, b, "smooth_hinge", l2=0.1, l1=0.01)
    pd_ = Problem(A.toarray(), b, "smooth_hinge", l2=0.1, l1=0.01)
    assert pd_.dense and not ps.dense and pd_.nnz == A.shape[0] * A.shape[1]
    rng = np.random.default_rng(1)
    w, alpha = rng.normal(size=A.shape[1]), rng.uniform(0, 1, A.shape[0]) * b
    assert objective.primal(pd_, w) == pytest.approx(objective.primal(ps, w), rel=1e-14)
    assert objective.dual(pd_, alpha) == pytest.approx(objective.dual(ps, alpha), rel=1e-14)
    np.testing.assert_allclose(pd_.row_sqnorms, ps.row_sqnorms, rtol=1e-14)
    np.testing.assert_allclose(pd_.col_sqnorms, ps.col_sqnorms, rtol=1e-14)
    with pytest.raises(ConfigError, match="dense"):
        pd_.csr  # noqa: B018 - a CSR copy of dense features is never made


def test_lines_describe_rows_and_columns_of_one_copy():
    A, y = _data(n=5, d=4)
    p = Problem(A.toarray(), np.ones(5), "squared")
    layout, data, _, _, count, length, step, inc = p.lines("rows")
    assert (layout, count, length, step, inc) == (1, 5, 4, 4, 1)
    layout, data2, _, _, count, length, step, inc = p.lines("cols")
    assert (layout, count, length, step, inc) == (1, 4, 5, 1, 4)
    assert np.shares_memory(data, data2) and np.shares_memory(data, p.mat)
    q = Problem(A, np.ones(5), "squared")
    layout, data, indices, indptr, count, *_ = q.lines("cols")
    assert layout == 0 and count == 4 and indptr.shape == (5,) and indices.dtype == np.int32
    with pytest.raises(ValueError, match="rows"):
        q.lines("columns")


def test_one_vs_rest_labels():
    B, classes = one_vs_rest(np.array([3, 1, 3, 2]))
    assert classes.tolist() == [1, 2, 3]
    np.testing.assert_array_equal(B, [[-1, -1, 1], [1, -1, -1], [-1, -1, 1], [-1, 1, -1]])
    with pytest.raises(DataError, match="two classes"):
        one_vs_rest(np.array([1, 1]))


@pytest.mark.parametrize("method,options", [("primal_rcd", {"sampling": "uniform"}),
                                            ("dual_rcd", {"sampling": "uniform",
                                                          "dual_step": "newton"})])
def test_one_vs_rest_solve_sums_the_class_problems(method, options):
    A, y = _data(n=40, d=10, seed=3)
    B, _ = one_vs_rest(y)
    l1 = 0.01 if method == "primal_rcd" else 0.0
    p = Problem(A, B, "smooth_hinge", l2=0.1, l1=l1)
    res = solve(p, method, options=options, tol=1e-9, max_epochs=5000)
    assert res.status == "converged" and res.w.shape == (10, 3)
    # P of the label matrix is the sum of the k binary problems' P, each near its optimum
    parts = []
    for c in range(3):
        pc = p.column(c)
        assert pc.csc is p.csc or method == "dual_rcd"  # the columns share the data
        parts.append(objective.primal(pc, res.w[:, c]))
        single = solve(Problem(A, B[:, c], "smooth_hinge", l2=0.1, l1=l1), method,
                       options=options, tol=1e-11, max_epochs=5000)
        # the summed gap (<= 1e-9 |P|) bounds each class's suboptimality
        total = abs(res.trace.primal.iloc[-1])
        assert parts[-1] - single.trace.primal.iloc[-1] <= 2e-9 * total
    assert objective.primal(p, res.w) == pytest.approx(sum(parts), rel=1e-13)
    last = res.trace.iloc[-1]
    assert last.nnz_primal == np.count_nonzero(res.w)
    # an epoch is a pass over A for every class
    assert res.trace.epoch.iloc[-1] > 0 and res.trace.sweeps.iloc[-1] > 0


def test_from_dataset_makes_multiclass_one_vs_rest():
    from pdsparse.data.store import Dataset

    A, y = _data(n=12, d=5)
    ds = Dataset("toy", A, y.astype(float), {"task": "multiclass"})
    p = Problem.from_dataset(ds, "smooth_hinge", l2=0.1, l1=0.01)
    assert p.matrix and p.k == 3 and set(np.unique(p.b)) == {-1.0, 1.0}


@pytest.mark.parametrize("dense", [False, True], ids=["sparse", "dense"])
@pytest.mark.parametrize(("method", "options"), [
    ("dgpd", {"inner": "3"}), ("dual_rcd", {}), ("primal_rcd", {"sampling": "uniform"}),
    ("spdc", {}), ("dgpd", {"inner": "5", "batch": "8", "passes": "gauss_seidel",
                           "step": "curvature", "eta": "theorem"})])
def test_one_vs_rest_chunked_calls_equal_one_long_call(method, options, dense):
    """The columns' kernels, advanced in lockstep, end where one long call ends whatever the
    calls' sizes, and the work counted is the same (``solve`` splits its calls by the time
    left and stops once the counted work reaches its goal: with a share per call, or with
    the columns' actual work counted, a time-capped run evaluated on other iterations than an
    uncapped run: the DGPD runs on digits differed between clean runs)."""
    from pdsparse.solvers import make_kernel

    rng = np.random.default_rng(3)
    A, y = rng.standard_normal((60, 20)), rng.integers(0, 3, size=60)
    B, _ = one_vs_rest(y)
    p = Problem(A if dense else sp.csr_matrix(A), B, "smooth_hinge", l2=0.05, l1=0.01)
    one, many = (make_kernel(p, method, options=options) for _ in range(2))
    goal = 30 * p.nnz * p.k
    touched = one.run(goal)[1]
    done = 0
    while done < goal:  # as solve's loop: each call asks for what is left, or less
        done += many.run(min(goal - done, int(rng.integers(1, 2 * p.nnz))))[1]
    assert done == touched
    np.testing.assert_array_equal(many.solution(), one.solution())


def test_a_matrix_is_checked_for_its_canonical_format_once(monkeypatch):
    """Duplicates are summed and indices sorted (the kernels assume both), and scipy's cached
    check on the caller's CSR is asked, so that repeated problems of one matrix (a
    regularization path, a benchmark's fits) scan it once, not once a problem."""
    from scipy.sparse import _compressed

    messy = sp.csr_matrix((np.array([1.0, 2.0, 5.0, 4.0]), np.array([2, 0, 2, 1]),
                           np.array([0, 3, 4])), shape=(2, 3))
    p = Problem(messy, np.array([1.0, -1.0]), "logistic", l2=0.1)
    assert p.csr.toarray().tolist() == [[2.0, 0.0, 6.0], [0.0, 4.0, 0.0]]
    assert p.csr.indices.tolist() == [0, 2, 1]
    scans = []
    real = _compressed.csr_has_canonical_format
    monkeypatch.setattr(_compressed, "csr_has_canonical_format",
                        lambda *a: scans.append(1) or real(*a))
    A = sp.random(40, 30, density=0.2, format="csr", random_state=0)
    b = np.where(np.arange(40) % 2, 1.0, -1.0)
    for _ in range(3):
        Problem(A, b, "logistic", l2=0.1)
    assert len(scans) == 1
    from pdsparse.estimators import LinearClassifier  # the estimator hands X on as given

    for _ in range(3):  # (no constant column appended: that is a new matrix each fit)
        LinearClassifier(alpha=0.1, solver="dual_rcd", tol=1e-3, fit_intercept=False).fit(A, b)
    assert len(scans) == 1


@pytest.mark.parametrize("shape,density", [((7, 1000), 0.6), ((30, 600), 0.9),
                                           ((40, 300), 0.05), ((5, 257), 1.0)])
def test_the_banded_csc_is_scipys(shape, density):
    """The CSC copy built in bands of columns (``_products.csr_to_csc``; long rows, as on
    leu's) has scipy's ``tocsc`` arrays exactly, empty rows, empty columns and a last
    partial band included, for every band width; the Problem picks bands where its rule
    says so and scipy's copy elsewhere, the same arrays either way."""
    from pdsparse import _products
    from pdsparse.problem import CSC_BAND, CSC_BAND_ROW_ENTRIES

    rng = np.random.default_rng(shape[1])
    A = sp.random(*shape, density=density, format="csr", random_state=rng)
    A = sp.csr_matrix(A.multiply(rng.uniform(size=(shape[0], 1)) < 0.8))  # some empty rows
    A.indices, A.indptr = A.indices.astype(np.int32), A.indptr.astype(np.int32)
    want = A.tocsc()
    want.sort_indices()
    for band in (1, 3, 64, 256, shape[1], 10 * shape[1]):
        data, indices, indptr = _products.csr_to_csc(A.data, A.indices, A.indptr, shape[1],
                                                     band)
        assert data.tobytes() == want.data.tobytes()
        assert indices.tolist() == want.indices.tolist()
        assert indptr.tolist() == want.indptr.tolist()
    with pytest.raises(ValueError, match="block must be positive"):
        _products.csr_to_csc(A.data, A.indices, A.indptr, shape[1], 0)
    p = Problem(A, np.where(np.arange(shape[0]) % 2, 1.0, -1.0), "logistic", l2=0.1)
    banded = shape[1] > CSC_BAND and A.nnz >= CSC_BAND_ROW_ENTRIES * shape[0] * -(
        -shape[1] // CSC_BAND)
    assert banded == (density >= 0.6)
    C = p.csc
    assert C.data.tobytes() == want.data.tobytes() and C.indices.dtype == np.int32
    assert C.indices.tolist() == want.indices.tolist()
    assert C.indptr.tolist() == want.indptr.tolist() and C.indptr.dtype == np.int32


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_data_is_refused_and_huge_finite_data_is_not(bad):
    """A NaN or an infinity in A is refused, sparse or dense (found by the sum's fast path or
    the entrywise test); finite values whose sum overflows are accepted, without a warning."""
    import warnings

    b = np.array([1.0, -1.0])
    A = np.array([[1.0, bad], [0.0, 2.0]])
    for M in (A, sp.csr_matrix(A)):
        with pytest.raises(DataError, match="NaN or infinite"):
            Problem(M, b, "logistic", l2=0.1)
    huge = np.array([[1e308, 1e308], [1e308, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for M in (huge, sp.csr_matrix(huge)):
            assert Problem(M, b, "logistic", l2=0.1).n == 2
