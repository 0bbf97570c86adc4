"""The norm-ball baselines of PDBFW (Lei et al., Sec. 5): Acc PG, FW, SVRG, SCGS and STORC.

Problem: P(x) = f(x) + indicator{x in C}, f(x) = 1/n sum_i phi(a_i^T x, b_i) + mu/2 ||x||^2,
C the l1 ball of radius r (``L1Ball(r, mu)``, vector labels) or the trace-norm ball
(``TraceBall(r, mu)``, a label matrix). The options dataclasses below are shared by both
balls: the factories run the l1-ball kernels of this module, and hand a trace-ball problem
to :func:`pdsparse.solvers_trace.trace_kernel` with the same options object.
"""

from __future__ import annotations

from dataclasses import dataclass

from pdsparse.names import (
    BALL_BATCH_CAPS,
    BALL_BATCHES,
    BALL_INNER,
    BALL_MOMENTA,
    BALL_STEPS,
    FW_STEPS,
    STORC_INNER,
)
from pdsparse.solver_base import _int_option, _option, _Options

__all__ = ["AccPGOptions", "FWOptions", "SVRGOptions", "SCGSOptions", "STORCOptions"]

_BATCH_CAP_DOC = ("largest minibatch: n (default; a minibatch of n draws costs one pass, "
                  "as a full gradient), none (the theorem's size uncapped) or an integer")


@dataclass(frozen=True)
class AccPGOptions(_Options):
    """Options of accelerated projected gradient (Acc PG)."""

    momentum: str = _option(
        "nesterov", BALL_MOMENTA,
        "nesterov (default: the constant momentum (sqrt(L) - sqrt(mu)) / (sqrt(L) + "
        "sqrt(mu)) of Nesterov's scheme for mu-strongly convex f, Nesterov 2004 (2.2.19), "
        "linear rate) or fista (Beck & Teboulle 2009, t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2)")


@dataclass(frozen=True)
class FWOptions(_Options):
    """Options of Frank-Wolfe (FW)."""

    step: str = _option(
        "line_search", FW_STEPS,
        "line_search (default: the exact minimizer of P on the segment to the vertex) or "
        "open_loop (2 / (t + 2), Jaggi 2013)")


@dataclass(frozen=True)
class SVRGOptions(_Options):
    """Options of projected SVRG (Prox-SVRG, Xiao & Zhang 2014)."""

    step: str = _option(
        "theory", BALL_STEPS,
        "step eta: theory (default: 0.1 / L_max, Xiao & Zhang 2014 Sec. 3.1 and Sec. 4) or "
        "that step times 2, 5 or 10")
    inner: str = _int_option(
        "2n", BALL_INNER,
        "inner steps m per snapshot: 2n (default: Johnson & Zhang 2013 Sec. 4 and Xiao & "
        "Zhang 2014 Sec. 4), n, 5n or an integer")


@dataclass(frozen=True)
class SCGSOptions(_Options):
    """Options of stochastic conditional gradient sliding (SCGS, Lan & Zhou 2016)."""

    batch: str = _int_option(
        "theory", BALL_BATCHES,
        "minibatch B_k: theory (default: the growing size of Lan & Zhou's theorem, see "
        ":class:`SCGSKernel`) or an integer (a constant batch)")
    batch_cap: str = _int_option("n", BALL_BATCH_CAPS, _BATCH_CAP_DOC)


@dataclass(frozen=True)
class STORCOptions(_Options):
    """Options of STORC (Hazan & Luo 2016, Algorithm 2)."""

    inner: str = _int_option(
        "theory", STORC_INNER,
        "inner iterations N_t per snapshot: theory (default: Hazan & Luo's theorem, see "
        ":class:`STORCKernel`) or an integer")
    batch: str = _int_option(
        "theory", BALL_BATCHES,
        "minibatch m_{t,k}: theory (the theorem's size, capped by batch_cap) or an integer")
    batch_cap: str = _int_option("n", BALL_BATCH_CAPS, _BATCH_CAP_DOC)
