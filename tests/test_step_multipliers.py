"""The step-multiplier vocabulary (``pdsparse.names.STEP_MULTIPLIERS``, one parser
``step_multiplier``) and every option that takes it: SVRG's and block FW's ``step``, SPDC's,
SCGS's and STORC's ``step``, DGPD's ``eta``. Each option scales the published quantity it
documents by the parsed factor, and its default (``theory``/``theorem``) is the factor 1 and
leaves tags and trace columns as they were."""

import math

import numpy as np
import pytest
from conftest import make_data

from pdsparse import names
from pdsparse.errors import ConfigError
from pdsparse.names import STEP_MULTIPLIERS, step_multiplier
from pdsparse.penalties import TraceBall
from pdsparse.problem import Problem
from pdsparse.solvers import SOLVERS
from pdsparse.solvers.ball import (
    SCGSOptions,
    STORCOptions,
    SVRGOptions,
    scgs_parameters,
    storc_inner,
    storc_parameters,
    svrg_parameters,
)
from pdsparse.solvers.dgpd import DGPDKernel, DGPDOptions
from pdsparse.solvers.erm import SPDCKernel, spdc_parameters

TAKERS = [("svrg", "step"), ("block_fw", "step"), ("spdc", "step"), ("scgs", "step"),
          ("storc", "step")]


def test_parser_reads_every_name():
    want = {"theory": 1.0, "x0_1": 0.1, "x0_3": 0.3, "x2": 2.0, "x3": 3.0, "x5": 5.0,
            "x10": 10.0, "x100": 100.0}
    assert {s: step_multiplier(s) for s in STEP_MULTIPLIERS} == want
    assert step_multiplier("theorem") == 1.0 and step_multiplier("x1000") == 1000.0
    assert step_multiplier("x100000") == 1e5 and step_multiplier("x0_25") == 0.25
    for bad in ("x", "x0", "x0_0", "x-1", "x1_", "x_5", "x1_2_3", "X2", "2", "x1.5", "x²",
                "", None, 2.0):
        with pytest.raises(ValueError):
            step_multiplier(bad)


def test_every_step_option_offers_the_vocabulary():
    for method, option in TAKERS:
        assert SOLVERS[method].choices()[option] == STEP_MULTIPLIERS, method
        assert names.SOLVER_OPTIONS[method][option] == STEP_MULTIPLIERS
    for method in ("dgpd", "dgpd_full"):  # theorem is DGPD's x1 (its tags keep the name)
        etas = SOLVERS[method].choices()["eta"]
        assert etas[0] == "theorem" and set(STEP_MULTIPLIERS[1:]) < set(etas)
    for spec in SOLVERS.values():  # every value of a step-like option parses
        for option in ("step", "eta", "delta"):
            for value in spec.choices().get(option, ()):
                if value not in ("exact", "line_search", "open_loop", "eq16", "curvature"):
                    assert step_multiplier(value) > 0


def test_defaults_keep_tags_and_columns():
    """The new options are late: at their default they leave tags and columns as before."""
    assert SOLVERS["spdc"].tag() == "default"
    assert SOLVERS["spdc"].option_columns()["step"] == "none"
    assert SOLVERS["scgs"].tag() == "theory-n"
    assert SOLVERS["storc"].tag() == "theory-100-n"
    assert SOLVERS["scgs"].tag({"step": "x3"}) == "theory-n-x3"
    assert SOLVERS["spdc"].tag({"step": "x0_3"}) == "x0_3"
    assert SOLVERS["storc"].option_columns({"step": "x10"})["step"] == "x10"
    with pytest.raises(ConfigError, match="unknown step 'x4'"):
        SOLVERS["spdc"].parse_options({"step": "x4"})


def test_svrg_step_scales_eta():
    base, m = svrg_parameters(SVRGOptions(), 2.0, 30)
    for s in STEP_MULTIPLIERS:
        eta, m2 = svrg_parameters(SVRGOptions(step=s), 2.0, 30)
        assert eta == pytest.approx(base * step_multiplier(s), rel=1e-15) and m2 == m


@pytest.mark.parametrize("step", ["x0_1", "x3", "x100"])
def test_sliding_steps_use_l_over_c(step):
    """SCGS and STORC with step c run the theory's parameters of the smoothness L / c."""
    c, lip = step_multiplier(step), 7.0
    for k in (1, 2, 5):
        assert scgs_parameters(SCGSOptions(step=step), k, lip, 4.0, 3.0, 10**6) == \
            scgs_parameters(SCGSOptions(), k, lip / c, 4.0, 3.0, 10**6)
        for mu in (0.0, 0.2):
            assert storc_inner(STORCOptions(step=step), k, lip, mu) == \
                storc_inner(STORCOptions(), k, lip / c, mu)
            assert storc_parameters(STORCOptions(step=step), k, 2, 6, lip, mu, 4.0, 1.5,
                                    10**6) == \
                storc_parameters(STORCOptions(), k, 2, 6, lip / c, mu, 4.0, 1.5, 10**6)
    # the theory's beta_k (the prox weight of CndG, 1 / step) is divided by c
    assert scgs_parameters(SCGSOptions(step=step), 3, lip, 4.0, 3.0, 10)[1] == \
        pytest.approx(scgs_parameters(SCGSOptions(), 3, lip, 4.0, 3.0, 10)[1] / c)


def test_spdc_step_scales_tau_and_sigma():
    A, b = make_data(n=30, d=12, density=0.4, seed=3, loss="smooth_hinge")
    p = Problem(A, b, loss="smooth_hinge", l2=0.05, l1=0.01)
    tau, sigma, theta = spdc_parameters(p)
    assert spdc_parameters(p, "theory") == (tau, sigma, theta)
    R = math.sqrt(float(np.max(p.row_sqnorms)))
    assert tau * sigma == pytest.approx(1.0 / (4.0 * R * R))  # Theorem 1's coupling
    for s in ("x0_1", "x3", "x10"):
        c = step_multiplier(s)
        t2, s2, th2 = spdc_parameters(p, s)
        assert (t2, s2) == pytest.approx((c * tau, c * sigma), rel=1e-14)
        n, mu, gamma = p.n, p.l2, 1.0 / p.smoothness
        assert th2 == pytest.approx(1.0 - 1.0 / (n + (R / c) * math.sqrt(n / (mu * gamma))))
        k = SPDCKernel(p, step=s)
        assert (k.tau, k.sigma, k.theta) == (t2, s2, th2)
        assert SOLVERS["spdc"].make_kernel(p, {"step": s}).tau == t2


def test_dgpd_eta_multiplies_the_theorem_step():
    A, b = make_data(n=30, d=12, density=0.4, seed=3, loss="smooth_hinge")
    p = Problem(A, b, loss="smooth_hinge", l2=0.05, l1=0.01)
    base = DGPDKernel(p, DGPDOptions()).q_per_s
    for s in names.DGPD_ETAS:
        assert DGPDKernel(p, DGPDOptions(eta=s)).q_per_s == pytest.approx(
            base / step_multiplier(s), rel=1e-15)


def test_block_fw_step_scales_eta():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((20, 6))
    B = A @ rng.standard_normal((6, 3))
    p = Problem(A, B, loss="squared", penalty=TraceBall(1.0, 0.1))
    base = SOLVERS["block_fw"].make_kernel(p).eta
    for s in STEP_MULTIPLIERS:
        eta = SOLVERS["block_fw"].make_kernel(p, {"step": s}).eta
        assert eta == pytest.approx(min(1.0, base * step_multiplier(s)), rel=1e-15)
