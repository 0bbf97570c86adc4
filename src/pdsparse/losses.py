"""Loss registry: names, Cython ids and smoothness constants.

The formulas themselves live once, in ``_losses.pxd`` (inlined by the kernels)
and its array wrappers ``_losses.pyx`` (used by :mod:`pdsparse.objective`).
Dual convention (Face-Off eq. 3): D(alpha) uses phi_j^*(-alpha_j) and the
optimality conditions are w* = A^T alpha* / (lambda n), alpha*_j = -phi_j'(a_j^T w*).
The Face-Off text prints alpha*_j = +phi_j'(...) and the fixed dual step
eta (phi_j' + alpha_j); both carry a sign slip, corrected here and tested.
"""

from __future__ import annotations

from dataclasses import dataclass

from pdsparse import _losses
from pdsparse.errors import ConfigError


@dataclass(frozen=True)
class LossInfo:
    name: str
    cid: int
    smoothness: float
    """beta in Face-Off eq. (2): phi_j' is beta-Lipschitz."""
    binary_labels: bool
    """Labels must be +-1 (the conjugate domain depends on it)."""
    twice_differentiable: bool
    """phi'' exists everywhere, so a primal Newton method applies."""


LOSSES: dict[str, LossInfo] = {
    "logistic": LossInfo("logistic", 0, 0.25, True, True),
    "squared": LossInfo("squared", 1, 1.0, False, True),
    "smooth_hinge": LossInfo("smooth_hinge", 2, 1.0, True, False),
}


def get_loss(name: str) -> LossInfo:
    """Look up a loss by name; unknown names raise :class:`ConfigError` listing the valid ones."""
    try:
        return LOSSES[name]
    except KeyError:
        raise ConfigError(f"unknown loss {name!r}; choose one of {sorted(LOSSES)}") from None


values = _losses.values
derivs = _losses.derivs
curvatures = _losses.curvatures
conj_neg = _losses.conj_neg
dual_steps = _losses.dual_steps
logistic_dot = _losses.logistic_dot
