"""What every solver module shares: the kernel interface, options dataclasses, sampling.

The registry (:mod:`pdsparse.solvers.registry`), :func:`~pdsparse.solvers.solve` and the
module of each family (:mod:`pdsparse.solvers.rcd`, :mod:`~pdsparse.solvers.erm`, ...) build
on these; this module imports none of them, so that the registry can import the families
without an import cycle (an options class learns its registry name through
:func:`register_options`).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from pdsparse import objective
from pdsparse.errors import ConfigError
from pdsparse.names import SAMPLINGS
from pdsparse.problem import Problem
from pdsparse.solvers._sampling import sampler_arrays, seed_state

__all__ = ["sampling_probabilities"]


def sampling_probabilities(sqnorms: np.ndarray, l2: float, n: int, beta: float,
                           sampling: str) -> np.ndarray:
    """Serial sampling probabilities: uniform, or importance sampling, Face-Off eq. (14).

    Importance: p_i proportional to beta u_i + lambda n (primal, u = column norms^2)
    or q_j proportional to beta v_j + lambda n (dual, v = row norms^2). A random
    permutation visits each coordinate once per epoch: its marginal is uniform.
    """
    m = sqnorms.shape[0]
    if sampling in ("uniform", "permutation"):
        return np.full(m, 1.0 / m)
    if sampling == "importance":
        wts = beta * sqnorms + l2 * n
        return wts / wts.sum()
    raise ConfigError(f"unknown sampling {sampling!r}; choose one of {list(SAMPLINGS)}")


def primal_lipschitz(problem: Problem) -> np.ndarray:
    """L_i = beta u_i / n + l2, u_i = ||A_{:,i}||^2: the coordinate Lipschitz constants of the
    smooth part of P (Face-Off eq. 7), the step 1/L_i of primal RCD; with example weights s,
    u_i = sum_j s_j A_ji^2. With pure l1 (l2 = 0)
    an empty column would give L_i = 0; its partial gradient is 0, so any L_i > 0 gives the
    same step (the prox then takes w_i to 0): it gets 1."""
    p = problem
    lipschitz = p.smoothness * p.weighted_col_sqnorms / p.n + p.l2
    if p.l2 == 0.0:
        lipschitz[lipschitz == 0.0] = 1.0
    return lipschitz


def primal_start(problem: Problem, w0: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """A primal method's (w, z = A w + c): zeros, or the warm start ``w0`` and its margins
    (its last entry the intercept c when the problem has one)."""
    if w0 is None:
        return np.zeros(problem.var_shape), np.zeros(problem.n)
    w = np.array(w0, dtype=np.float64)
    z = problem.csr @ (w[:-1] if problem.intercept else w)
    return w, (z + w[-1] if problem.intercept else z)


class _Kernel:
    """State of one run: the iterates, the random state and the kernel's fixed arguments.

    ``run(budget)`` advances it; ``solution()`` is the primal iterate w (no extra work);
    ``iterates()`` is the pair (w, alpha) the duality gap is evaluated at, which for
    primal RCD costs a product with A to form alpha(w) = -phi'(A w); ``evaluated()`` is the
    pair with its P, D and gap.
    """

    paired: bool = False
    """A primal method's: its dual point is alpha(w) (:func:`pdsparse.objective.alpha_of_w`),
    which :meth:`evaluated` forms in the passes of the gap (2 passes over A, where forming it
    first and then evaluating the pair took 3, 4 for pure l1)."""

    max_chunk_epochs: float = math.inf
    """At most this many passes between two evaluations of :func:`pdsparse.solvers.solve`'s
    adaptive schedule (its prediction of where the gap reaches tol assumes a geometric
    decrease; a kernel whose gap falls faster sets a cap)."""

    def __init__(self, problem: Problem, sampling: str, seed: int):
        self.problem = problem
        self.state = seed_state(seed)
        self.sampling = sampling

    def ready(self, tol: float) -> bool:
        """Whether an evaluation could find the relative gap at most ``tol`` (a kernel that
        knows it cannot, from what its iterations computed anyway, says False and the
        adaptive schedule runs it on, one call at a time, at most
        :data:`pdsparse.solvers.NOT_READY_CALLS` calls in a row). Only when to check
        depends on it, never what is certified."""
        return True

    def iterates(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.paired:
            raise NotImplementedError(f"{type(self).__name__} defines no iterates()")
        w = self.solution()
        return w, objective.alpha_of_w(self.problem, w)

    def evaluated(self) -> tuple[np.ndarray, np.ndarray, float, float, float]:
        """(w, alpha, P(w), D(alpha), gap) at the current iterates
        (:func:`pdsparse.objective.certificate`)."""
        if self.paired:
            w, alpha = self.solution(), None
        else:
            w, alpha = self.iterates()
        p_val, d_val, gap, alpha = objective.certificate(self.problem, w, alpha)
        return w, alpha, p_val, d_val, gap

    def _sampler(self, probs: np.ndarray) -> tuple:
        """Kernel arguments (mode, prob, alias, perm, perm_pos) for this sampling."""
        return sampler_arrays(self.sampling, probs)


def _did_you_mean(word: Any, candidates: Iterable[Any]) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in candidates], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _option(default: str, choices: tuple[str, ...], doc: str, *, late: bool = False) -> Any:
    """An option field: a name out of ``choices`` (validated), with a one-line ``doc``.

    ``late``: an option added after results were tagged; at its default it is left out of
    the tag when every option after it is too (:meth:`SolverSpec.tag`), so earlier tags
    (and the files named by them) stay valid.
    """
    return field(default=default,
                 metadata={"choices": tuple(choices), "doc": doc, "late": late})


def _int_option(default: str, choices: tuple[str, ...], doc: str, *,
                late: bool = False) -> Any:
    """An option field that is a positive integer written in decimal ("423"), or a name out
    of ``choices`` ("auto"). Values stay strings, so that tags and trace columns are text."""
    return field(default=default,
                 metadata={"choices": tuple(choices), "doc": doc, "integer": True,
                           "late": late})


def _is_count(value: Any) -> bool:
    return isinstance(value, str) and value.isdigit() and value.isascii() and int(value) >= 1


@dataclass(frozen=True)
class _Options:
    """Base of the options dataclasses: every field is a name out of its ``choices``."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value, choices = getattr(self, f.name), f.metadata["choices"]
            if isinstance(value, int) and not isinstance(value, bool) and f.metadata.get(
                    "integer"):
                value = str(value)
                object.__setattr__(self, f.name, value)
            if f.metadata.get("integer") and _is_count(value):
                object.__setattr__(self, f.name, str(int(value)))  # "007" and "7": one tag
                continue
            if not isinstance(value, str) or value not in choices:
                if f.metadata.get("integer"):
                    choices = (*choices, "<positive integer>")
                raise ConfigError(
                    f"{self.solver}: unknown {f.name} {value!r}{_did_you_mean(value, choices)}; "
                    f"choose one of {list(choices)}")

    @property
    def solver(self) -> str:
        return registered_name(type(self))


_NAMES: dict[type, str] = {}


def register_options(options: type, name: str) -> None:
    """Record the registry name of an options dataclass (:class:`SolverSpec` does)."""
    _NAMES[options] = name


def registered_name(options: type) -> str:
    """The registry name of an options dataclass (its class name when unregistered)."""
    return _NAMES.get(options, options.__name__)
