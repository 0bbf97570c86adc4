"""When ``solve`` evaluates and stops: the fixed schedule of the figures (unchanged since before
issue 7) and the adaptive default (evaluations where the gap is predicted to reach tol).

No timings are asserted: the machine is shared and the point of the adaptive schedule (fewer
evaluations) is checked by counting them; benchmarks/solve_vs_liblinear.py measures the time.
"""

import math

import numpy as np
import pandas as pd
import pytest
from conftest import make_data

from pdsparse import objective
from pdsparse.errors import ConfigError
from pdsparse.penalties import ElasticNet, L1Ball
from pdsparse.problem import Problem
from pdsparse.solvers import (
    DUAL_STEPS,
    FIRST_EPOCHS_PER_DECADE,
    MARGIN_EPOCHS,
    MAX_GROWTH,
    SAMPLINGS,
    _AdaptiveSchedule,
    make_kernel,
    solve,
)

COLS = ["iteration", "epoch", "primal", "dual", "gap", "nnz_primal", "nnz_dual", "status"]
CONFIGS = [("primal_rcd", s, "fixed") for s in SAMPLINGS] + [
    ("dual_rcd", s, st) for s in SAMPLINGS for st in DUAL_STEPS]

# ---- the fixed schedule (eval_every given) -------------------------------------------------

# Traces made by pdsparse.solvers.solve at commit 6339f71 (before the adaptive schedule), on
# make_data(loss=loss, seed=7): (loss, l2, l1, method, sampling, dual_step, seed, kwargs, rows
# of (iteration, epoch, primal, dual, gap, nnz_primal, nnz_dual, status)). Floats are exact
# reprs. A failure here means the iterates, the evaluation points or the objective changed.
LEGACY = [
    ('logistic', 0.01, 0.0, 'dual_rcd', 'uniform', 'fixed', 0, {'max_epochs': 4, 'eval_every': 0.5},
     [
      (0, 0.0, 0.6931471805599453, -0.0, 0.6931471805599453, 0, 0, ''),
      (23, 0.5105740181268882, 0.4849879497635678, 0.0461558445561131, 0.4388321052074547, 25, 15, ''),
      (42, 1.0151057401812689, 0.3722745944532994, 0.07374649166153745, 0.29852810279176195, 25, 22, ''),
      (63, 1.5347432024169185, 0.3187173530459008, 0.09424434435725437, 0.22447300868864645, 25, 31, ''),
      (83, 2.0483383685800605, 0.29300773837508975, 0.10828158492719608, 0.18472615344789367, 25, 33, ''),
      (104, 2.5709969788519635, 0.2614647652287182, 0.1203231312456503, 0.1411416339830679, 25, 36, ''),
      (122, 3.090634441087613, 0.2462073248395262, 0.13131968755862883, 0.11488763728089738, 25, 37, ''),
      (144, 3.604229607250755, 0.23359050440169915, 0.13759683102721026, 0.09599367337448889, 25, 38, ''),
      (160, 4.027190332326284, 0.23828975354076226, 0.14095616315989726, 0.097333590380865, 25, 39, 'max_epochs'),
     ]),
    ('logistic', 0.025, 0.0, 'primal_rcd', 'importance', 'fixed', 1, {'max_epochs': 3, 'eval_every': 1.0},
     [
      (0, 0.0, 0.6931471805599453, -3.2095347849207743, 3.9026819654807197, 0, 40, ''),
      (24, 1.012084592145015, 0.3821866544478605, -0.015219222196235116, 0.3974058766440956, 16, 40, ''),
      (48, 2.0422960725075527, 0.3414530467453956, 0.08880271352863567, 0.25265033321675995, 21, 40, ''),
      (72, 3.003021148036254, 0.284497081519851, 0.24636394337421982, 0.03813313814563116, 25, 40, 'max_epochs'),
     ]),
    ('logistic', 0.025, 0.0, 'dual_rcd', 'permutation', 'newton', 2, {'max_epochs': 200, 'eval_every': 2.0, 'tol': 1e-08},
     [
      (0, 0.0, 0.6931471805599453, -0.0, 0.6931471805599453, 0, 0, ''),
      (80, 2.0, 0.2757311258945445, 0.25801285571816623, 0.01771827017637828, 25, 40, ''),
      (160, 4.0, 0.26932964009004406, 0.2666234948644025, 0.002706145225641554, 25, 40, ''),
      (240, 6.0, 0.2682378370590248, 0.26790758169522194, 0.00033025536380287823, 25, 40, ''),
      (320, 8.0, 0.2681487729405341, 0.2680641052813452, 8.466765918885288e-05, 25, 40, ''),
      (400, 10.0, 0.2681170429062545, 0.2680946263545607, 2.2416551693771325e-05, 25, 40, ''),
      (480, 12.0, 0.26810720906678526, 0.2681028956846366, 4.313382148679601e-06, 25, 40, ''),
      (560, 14.0, 0.2681054150174659, 0.2681049382713123, 4.767461535548634e-07, 25, 40, ''),
      (640, 16.0, 0.2681053270197089, 0.2681051837320175, 1.43287691378724e-07, 25, 40, ''),
      (720, 18.0, 0.26810526582853544, 0.26810522863018926, 3.719834618109985e-08, 25, 40, ''),
      (800, 20.0, 0.2681052443184073, 0.26810523899818456, 5.320222762339455e-09, 25, 40, ''),
      (880, 22.0, 0.26810524127934954, 0.2681052408554254, 4.2392411803149344e-10, 25, 40, 'converged'),
     ]),
    ('squared', 0.001, 0.05, 'primal_rcd', 'permutation', 'fixed', 3, {'max_epochs': 5, 'eval_every': 0.75},
     [
      (0, 0.0, 6.371357668233169, -5870.450902719292, 5876.822260387525, 0, 40, ''),
      (18, 0.7522658610271903, 1.8400958776851168, -322.7085673997133, 324.5486632773984, 16, 40, ''),
      (39, 1.5377643504531722, 1.0575983761847798, -68.09904708059545, 69.15664545678024, 22, 40, ''),
      (57, 2.308157099697885, 0.8959612128660766, -4.620254672749821, 5.516215885615898, 23, 40, ''),
      (77, 3.0876132930513593, 0.8218691159792374, -10.947412832901867, 11.769281948881105, 22, 40, ''),
      (97, 3.882175226586103, 0.795850070249785, -1.1741670361368786, 1.9700171063866636, 21, 40, ''),
      (117, 4.652567975830816, 0.7759456327558333, -1.119790089573715, 1.8957357223295483, 21, 40, ''),
      (125, 5.0, 0.7736926420324771, -0.06840752783913528, 0.8421001698716124, 21, 40, 'max_epochs'),
     ]),
    ('smooth_hinge', 0.05, 0.0, 'dual_rcd', 'importance', 'printed', 4, {'max_epochs': 2, 'eval_every': 0.3333333333333333},
     [
      (0, 0.0, 0.5, -0.0, 0.5, 0, 0, ''),
      (14, 0.35347432024169184, 0.48465288845668636, 0.001061261424772723, 0.48359162703191366, 25, 12, ''),
      (27, 0.716012084592145, 0.47019922306361445, 0.0020303801378891042, 0.46816884292572536, 25, 22, ''),
      (40, 1.0634441087613293, 0.4526115306701875, 0.0029230283191978733, 0.4496885023509896, 25, 28, ''),
      (53, 1.404833836858006, 0.4368753005315213, 0.0037768845752221615, 0.4330984159562991, 25, 30, ''),
      (65, 1.743202416918429, 0.42957150853641696, 0.00456587980298853, 0.42500562873342845, 25, 32, ''),
      (74, 2.015105740181269, 0.4157167064445762, 0.0050165614365972125, 0.41070014500797897, 25, 32, 'max_epochs'),
     ]),
]


@pytest.mark.parametrize("case", LEGACY, ids=lambda c: f"{c[3]}-{c[4]}-{c[5]}-{c[0]}")
def test_fixed_schedule_traces_equal_the_stored_ones(case):
    loss, l2, l1, method, sampling, dual_step, seed, kwargs, rows = case
    A, b = make_data(loss=loss, seed=7)
    p = Problem(A, b, loss=loss, l2=l2, l1=l1)
    res = solve(p, method, sampling, dual_step, seed=seed, **kwargs)
    want = pd.DataFrame(rows, columns=COLS)
    # The schedule (rows, iterations, epochs, nonzero counts, status) is the kernel's and
    # must match exactly; P, D and the gap are numpy/scipy reductions whose last bits move
    # between their releases (numpy 2.4 / scipy 1.17 changed one ulp here): P and D to
    # 1e-13 relative, the gap, their difference, to 1e-14 (|P| + |D|).
    values = ["primal", "dual", "gap"]
    exact = [c for c in COLS if c not in values]
    pd.testing.assert_frame_equal(res.trace[exact], want[exact], check_exact=True)
    pd.testing.assert_frame_equal(res.trace[values[:2]], want[values[:2]], check_exact=False,
                                  rtol=1e-13, atol=0)
    scale = want["primal"].abs() + want["dual"].abs()
    assert np.all(np.abs(res.trace["gap"] - want["gap"]) <= 1e-14 * scale)
    assert res.params["schedule"] == "fixed"


def legacy_solve(problem, method, sampling, dual_step, seed, max_epochs, tol, eval_every):
    """The run loop of solve() before issue 7, verbatim but for the timing columns."""
    kernel = make_kernel(problem, method, sampling, dual_step, seed)
    nnz = max(problem.nnz, 1)
    chunk = max(1, int(math.ceil(eval_every * nnz)))
    limit = int(math.ceil(max_epochs * nnz))
    rows = []
    iters = touched = 0
    while True:
        w, alpha = kernel.iterates()
        p_val = objective.primal(problem, w)
        d_val = objective.dual(problem, alpha)
        gap = p_val - d_val
        rows.append((iters, touched / nnz, p_val, d_val, gap,
                     int(np.count_nonzero(w)), int(np.count_nonzero(alpha)), ""))
        status = ""
        if not np.isfinite(p_val):
            status = "diverged"
        elif tol > 0 and gap <= tol * abs(p_val):
            status = "converged"
        elif touched >= limit:
            status = "max_epochs"
        if status:
            break
        k_iters, k_touched = kernel.run(min(chunk, limit - touched))
        iters += k_iters
        touched += k_touched
    trace = pd.DataFrame(rows, columns=COLS)
    trace.loc[trace.index[-1], "status"] = status
    return trace, kernel.iterates()


@pytest.mark.parametrize("method,sampling,dual_step", CONFIGS)
@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_fixed_schedule_is_the_legacy_loop_bit_for_bit(loss, method, sampling, dual_step):
    A, b = make_data(n=35, d=20, loss=loss, seed=8)
    p = Problem(A, b, loss=loss, l2=0.03)
    for max_epochs, tol, eval_every in ((3, 0.0, 0.4), (400, 1e-7, 2.5), (2, 1e-2, 1 / 3)):
        want, (w, alpha) = legacy_solve(p, method, sampling, dual_step, 5, max_epochs, tol,
                                        eval_every)
        res = solve(p, method, sampling, dual_step, seed=5, max_epochs=max_epochs, tol=tol,
                    eval_every=eval_every, max_seconds=math.inf)
        pd.testing.assert_frame_equal(res.trace[COLS], want, check_exact=True)
        np.testing.assert_array_equal(res.w, w)
        np.testing.assert_array_equal(res.alpha, alpha)


# ---- the adaptive schedule (the default) ---------------------------------------------------


def problem(loss="logistic", l2=0.02, seed=3):
    A, b = make_data(n=60, d=30, loss=loss, seed=seed)
    return Problem(A, b, loss=loss, l2=l2)


# the printed step is n times shorter: it converges, but not within this test's budget
@pytest.mark.parametrize("method,sampling,dual_step", [c for c in CONFIGS if c[2] != "printed"])
def test_default_solve_reaches_tol_with_few_evaluations(method, sampling, dual_step):
    p = problem()
    res = solve(p, method, sampling, dual_step, seed=1)
    t = res.trace
    last = t.iloc[-1]
    assert res.status == "converged" and last.status == "converged"
    assert last.gap <= 1e-6 * abs(last.primal)
    assert t.epoch.iloc[0] > 0  # no evaluation at the start
    assert np.all(np.diff(t.epoch) > 0) and np.all(np.diff(t.iteration) > 0)
    every = solve(p, method, sampling, dual_step, seed=1, eval_every=1.0, max_epochs=1e4)
    assert every.status == "converged"
    assert len(t) <= 6 < len(every.trace)
    # the adaptive run stops at most a quarter later (in epochs) than a check every epoch
    assert last.epoch <= 1.25 * every.trace.epoch.iloc[-1] + 1
    # P at the returned w is the last row's, and the iterate is the kernel's after as many
    # nonzeros: evaluating does not change the iterates
    assert objective.primal(p, res.w) == last.primal
    k = make_kernel(p, method, sampling, dual_step, seed=1)
    k.run(int(round(last.epoch * p.nnz)))
    np.testing.assert_array_equal(k.iterates()[0], res.w)
    assert res.params["schedule"] == "adaptive" and res.params["evaluations"] == len(t)
    assert res.eval_s > 0


def test_adaptive_trace_depends_on_the_seed_only():
    p = problem(l2=0.005)
    r1 = solve(p, "dual_rcd", "permutation", "newton", seed=4, tol=1e-9)
    r2 = solve(p, "dual_rcd", "permutation", "newton", seed=4, tol=1e-9)
    pd.testing.assert_frame_equal(r1.trace[COLS], r2.trace[COLS], check_exact=True)
    np.testing.assert_array_equal(r1.w, r2.w)


def test_adaptive_schedule_places_checks_at_the_predicted_crossing():
    nnz = 1000
    s = _AdaptiveSchedule(1e-6, nnz, from_zero=True)
    first = s.first() / nnz
    assert first == pytest.approx(6 * FIRST_EPOCHS_PER_DECADE, abs=1e-3)
    # gap 10^-t: from (0, 1) and (3, 1e-3) the fit crosses 1e-6 at t = 6
    nxt = s.next(s.first(), 10 ** -first) / nnz
    assert nxt == pytest.approx(6 + MARGIN_EPOCHS, abs=1e-3)
    # a check that falls short of the prediction: the fit over the three points puts the
    # next one a little later (at least MIN_STEP_EPOCHS), not a whole epoch
    nxt2 = s.next(int(nxt * nnz), 10 ** -(nxt - 0.5)) / nnz
    assert nxt < nxt2 < nxt + 1
    # no decrease: the run length doubles; a slow decrease is capped at MAX_GROWTH
    s = _AdaptiveSchedule(1e-6, nnz, from_zero=False)
    assert s.next(2000, 0.5) / nnz == pytest.approx(4)
    assert s.next(4000, 0.5) / nnz == pytest.approx(8)
    assert s.next(8000, 0.49) / nnz == pytest.approx(8 * MAX_GROWTH)
    # without a target (tol = 0) the run length doubles
    s = _AdaptiveSchedule(0.0, nnz, from_zero=True)
    assert s.next(s.first(), 1e-3) == 2 * s.first()


def test_tol_zero_runs_to_the_epoch_budget_with_doubling_checks():
    p = problem()
    res = solve(p, "dual_rcd", "uniform", seed=0, tol=0, max_epochs=20)
    t = res.trace
    assert res.status == "max_epochs" and 20 <= t.epoch.iloc[-1] < 20 + 0.1
    assert len(t) <= 6 and np.all(t.epoch.iloc[1:-1].to_numpy() / t.epoch.iloc[:-2] > 1.9)


def test_budgets_and_bad_settings():
    p = problem()
    r = solve(p, "primal_rcd", max_epochs=0)
    assert r.status == "max_epochs" and len(r.trace) == 1 and r.trace.epoch.iloc[0] == 0
    r = solve(p, "dual_rcd", tol=1e-300, max_seconds=1e-4)
    assert r.status == "max_time"
    with pytest.raises(ConfigError, match="nothing would stop"):
        solve(p, "dual_rcd", tol=0, max_seconds=math.inf)
    with pytest.raises(ConfigError, match="eval_every must be > 0"):
        solve(p, "dual_rcd", eval_every=0)
    with pytest.raises(ConfigError, match="max_epochs must be >= 0"):
        solve(p, "dual_rcd", max_epochs=-1)
    with pytest.raises(ConfigError, match="tol must be >= 0"):
        solve(p, "dual_rcd", tol=float("nan"))


def test_warm_start_converges_at_once():
    p = problem(l2=0.01)
    first = solve(p, "dual_rcd", "importance", "newton", tol=1e-4)
    again = solve(p, "dual_rcd", "importance", "newton", tol=1e-4, alpha0=first.alpha)
    assert again.status == "converged" and len(again.trace) == 1
    w0 = solve(p, "primal_rcd", tol=1e-8, w0=first.w)
    assert w0.status == "converged"


# ---- what one call costs besides the kernel (benchmarks/solve_vs_liblinear.py) -------------


def test_the_trace_frame_is_built_on_first_access_only(monkeypatch):
    """A pandas DataFrame costs 0.15-0.4 ms to build, a quarter of a whole solve of a
    100 x 10 problem: ``solve`` keeps the rows and builds ``trace`` when it is read."""
    import pdsparse.solvers as solvers

    built = []
    frame = pd.DataFrame

    def counting(*args, **kwargs):
        built.append(1)
        return frame(*args, **kwargs)

    p = problem()
    expected = solve(p, "dual_rcd", seed=2).trace
    monkeypatch.setattr(solvers.pd, "DataFrame", counting)
    res = solve(p, "dual_rcd", seed=2)
    assert built == [] and res.status == "converged"
    t = res.trace
    assert built == [1] and res.trace is t  # built once, on first access
    assert list(t.columns) == solvers.TRACE_COLUMNS and len(t) == len(res.rows)
    pd.testing.assert_frame_equal(t[COLS], expected[COLS], check_exact=True)
    assert t.dtypes.equals(expected.dtypes) and t.status.iloc[-1] == res.status


def test_evaluations_share_one_transposed_view_of_the_data():
    """scipy builds a new matrix object at each ``A.T`` (a third of an evaluation of a
    100 x 10 problem): the problem makes A^T once, a view of the CSR's arrays, no copy."""
    p = problem()
    t = p.mat_t
    assert p.mat_t is t and t.shape == (p.d, p.n)
    assert np.shares_memory(t.data, p.csr.data) and np.shares_memory(t.indices, p.csr.indices)
    alpha = np.linspace(-0.5, 0.5, p.n)
    np.testing.assert_array_equal(t @ alpha, p.mat.T @ alpha)
    assert objective.dual(p, alpha) == objective.dual(Problem(p.csr, p.b, p.loss, p.l2), alpha)


def test_row_norms_are_scipys_row_sums_to_the_bit():
    """The row norms (sampling probabilities and steps of dual RCD) are summed without a
    scipy matrix around them, in the same order: empty rows, a row of one entry, none."""
    import scipy.sparse as sp

    A = sp.random(30, 20, density=0.3, random_state=3, format="lil")
    A[0, :] = 0
    A[7, :] = 0
    A[8, :] = 0
    A[8, 2] = 3.0
    for M in (A.tocsr(), sp.csr_matrix((4, 3)), make_data(n=300, d=80, seed=5)[0]):
        p = Problem(M, np.ones(M.shape[0]), "squared", l2=1.0)
        ref = np.asarray(sp.csr_matrix((M.data * M.data, M.indices, M.indptr),
                                       shape=M.shape).sum(axis=1)).ravel()
        assert p.row_sqnorms.dtype == ref.dtype and p.row_sqnorms.tobytes() == ref.tobytes()


def test_one_pass_evaluation_is_primal_and_dual_to_the_bit():
    """``objective.evaluate`` (what ``solve`` evaluates with) takes A w and A^T alpha from one
    pass over A: the values of ``primal`` and ``dual`` to the bit, the products those of
    scipy; alpha outside the logistic conjugate's domain gives D = -inf as before."""
    import scipy.sparse as sp

    from pdsparse import _products

    rng = np.random.default_rng(11)
    A = sp.random(40, 25, density=0.2, random_state=4, format="lil")
    A[3, :] = 0  # an empty row
    A = A.tocsr()
    cases = [(A, "logistic"), (make_data(n=120, d=60, seed=3)[0], "logistic"),
             (make_data(n=50, d=200, seed=4, loss="squared")[0], "squared")]
    for M, loss in cases:
        b = np.where(rng.standard_normal(M.shape[0]) > 0, 1.0, -1.0)
        p = Problem(M, b, loss, l2=0.03)
        outside = 2.0 * b  # outside the logistic conjugate's domain
        for w, alpha in ((rng.standard_normal(p.d), 0.9 * rng.uniform(-1, 1, p.n) * b),
                         (np.zeros(p.d), -np.zeros(p.n)),
                         (rng.standard_normal(p.d), outside)):
            z, u = _products.csr_products(p.csr.data, p.csr.indices, p.csr.indptr, w, alpha)
            assert z.tobytes() == (p.mat @ w).tobytes()
            assert u.tobytes() == (p.mat.T @ alpha).tobytes()
            # the CSC pass (what a wide matrix is evaluated with): the same bits
            C = p.csc
            zc, uc = _products.csc_products(C.data, C.indices, C.indptr, w, alpha)
            assert zc.tobytes() == z.tobytes() and uc.tobytes() == u.tobytes()
            assert _products.csc_matvec(C.data, C.indices, C.indptr, w, p.n).tobytes() \
                == z.tobytes()
            assert _products.csc_rmatvec(C.data, C.indices, C.indptr, alpha).tobytes() \
                == u.tobytes()
            got = objective.evaluate(p, w, alpha)
            want = (objective.primal(p, w), objective.dual(p, alpha))
            assert got[:2] == want and got[2] == want[0] - want[1]
            if loss == "logistic" and alpha is outside:
                assert got[1] == -np.inf
            # alpha = alpha(w) (a primal method's evaluation), pure l1's scaled alpha too
            for q in (p, Problem(M, b, loss, l2=0.0, l1=0.05)):
                got = objective.evaluate(q, w)
                a = objective.alpha_of_w(q, w)
                want = (objective.primal(q, w), objective.dual(q, a))
                assert got[:2] == want and got[2] == want[0] - want[1]


@pytest.mark.parametrize("method, penalty", [
    ("primal_rcd", ElasticNet(0.01, 0.002)), ("primal_rcd", ElasticNet(0.0, 0.02)),
    ("prox_newton", ElasticNet(0.0, 0.02)), ("acc_pg", L1Ball(2.0, 0.01)),
    ("dual_rcd", ElasticNet(0.01))])
def test_a_kernels_evaluation_is_the_objectives_at_its_iterates(method, penalty):
    """``kernel.evaluated()`` (a primal method forms alpha(w) inside the gap's passes) gives
    what the certificate of ``kernel.iterates()`` gives, its alpha included (pure l1: scaled
    into the dual's domain; prox_newton's pair is its margins'), bit for bit."""
    A, b = make_data(n=60, d=30, seed=2)
    p = Problem(A, b, "logistic", penalty=penalty)
    kernel = make_kernel(p, method)
    kernel.run(2 * p.nnz)
    w, alpha, p_val, d_val, gap = kernel.evaluated()
    w2, alpha2 = kernel.iterates()
    assert w is kernel.solution() or np.array_equal(w, w2)
    P, D, G, alpha3 = objective.certificate(p, w2, alpha2)
    assert alpha.tobytes() == alpha3.tobytes()
    assert (p_val, d_val, gap) == (P, D, G) == objective.evaluate(p, w2, alpha2)
