"""The compiled kernels give exactly the bytes they gave before the sampler left ``_rcd``.

Refactors of the draw / lookahead-prefetch code must not change a single draw or a single
bit of an iterate. The hashes below were recorded with the build of commit 6339f71 (sampler
and lookahead inside ``_rcd.pyx``). Each case runs a kernel in uneven chunks (so the random
and permutation states carry over between calls, mid-epoch) on a fixed problem built here,
from the ``_rcd`` / ``_sampling`` entry points alone, and hashes everything the kernel writes.

The three primal logistic hashes were re-recorded on branch epoch-floor, when ``_fastexp.h``
moved from a degree-13 polynomial to a 128-entry table and a degree-5 polynomial (a new
exp, not a refactor): the same draws, iterations and random state as before, iterates
within 6e-16 (relative) of the old ones; every other hash is unchanged.

The six dual hashes were re-recorded in session 5, when dual RCD's row dot product moved to
four interleaved partial sums (``sparse_dot4`` in ``_matrix.pxd``: a different, fixed order
of the same additions): the same draws, iterations and random state, iterates within 9e-16
(relative) of the old ones on every dual case here (and within 2e-15 with the logistic loss,
whose Newton step also stops one sigmoid earlier).

Only IEEE +, -, *, / reach the hashed bytes (squared and smooth-hinge losses, and the
primal logistic gradient through ``_fastexp.h``, deterministic by construction with
-ffp-contract=off): the dual logistic steps call glibc's exp, whose last bit may depend on
the CPU, so they are checked by the Python transcriptions of ``test_solvers.py`` instead.
"""

import hashlib

import numpy as np
import pytest
import scipy.sparse as sp

from pdsparse.solvers import _rcd, _sampling

LOSS_ID = {"logistic": 0, "squared": 1, "smooth_hinge": 2}
MODE = {"uniform": 0, "importance": 1, "permutation": 2}
BETA = {"logistic": 0.25, "squared": 1.0, "smooth_hinge": 1.0}


def golden_problem():
    """60 x 37, about 15% dense, with one empty column and one empty row (each costs a unit)."""
    rng = np.random.default_rng(20260707)
    n, d = 60, 37
    A = sp.random(n, d, density=0.15, random_state=rng, format="lil")
    for j in range(n):
        A[j, j % (d - 1)] = rng.uniform(0.5, 1.5)
    A[:, d - 1] = 0.0
    A[n - 1, :] = 0.0
    A = A.tocsr()
    A.eliminate_zeros()
    A.data = A.data * rng.choice([-1.0, 1.0], size=A.nnz)
    w = rng.standard_normal(d)
    y = A @ w + 0.2 * rng.standard_normal(n)
    return A, y, np.where(y >= 0, 1.0, -1.0)


def sampler_args(sqnorms, l2, n, beta, sampling):
    m = sqnorms.shape[0]
    prob, alias = np.zeros(1), np.zeros(1, dtype=np.int32)
    perm, pos = np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.int64)
    if sampling == "importance":
        prob, alias = _sampling.build_alias(beta * sqnorms + l2 * n)
    elif sampling == "permutation":
        perm, pos = np.arange(m, dtype=np.int32), np.array([m], dtype=np.int64)
    return (MODE[sampling], prob, alias, perm, pos)


def run_case(method, sampling, loss, step="", l1=0.0):
    A, y, labels = golden_problem()
    b = y if loss == "squared" else labels
    n, d = A.shape
    l2, beta = 0.7 / n, BETA[loss]
    state = _sampling.seed_state(123)
    smp = None
    out = []
    if method == "primal":
        C = A.tocsc()
        u = np.asarray(C.multiply(C).sum(axis=0)).ravel()
        lip = beta * u / n + l2
        smp = sampler_args(u, l2, n, beta, sampling)
        w, z = np.zeros(d), np.zeros(n)
        for budget in (1, 5, 0, 333, 1000, 77, 2500):
            out.append(_rcd.primal_rcd(C.data, C.indices, C.indptr, b, w, z, lip, l2, l1,
                                       LOSS_ID[loss], *smp, state, budget))
        arrays = (w, z)
    else:
        v = np.asarray(A.multiply(A).sum(axis=1)).ravel()
        q = beta * v + l2 * n
        q = q / q.sum() if sampling == "importance" else np.full(n, 1.0 / n)
        theta = float(np.min(q * l2 * n / (beta * v + l2 * n)))
        smp = sampler_args(v, l2, n, beta, sampling)
        alpha, w = np.zeros(n), np.zeros(d)
        for budget in (1, 5, 0, 333, 1000, 77, 2500):
            out.append(_rcd.dual_rcd(A.data, A.indices, A.indptr, b, alpha, w, v / (l2 * n),
                                     theta / q, l2, LOSS_ID[loss], step == "newton", *smp,
                                     state, budget))
        arrays = (alpha, w)
    h = hashlib.sha256()
    for a in (*arrays, state, smp[3], smp[4], np.array(out, dtype=np.int64)):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:32]


GOLDEN = {
    ("primal", "uniform", "logistic", "", 0.0): "dd056e0bfd81484122aff0a8a8c14231",
    ("primal", "importance", "logistic", "", 0.0): "1f0925da46b18889652defc0b0a70c99",
    ("primal", "permutation", "logistic", "", 0.0): "2641a1c12bb783da8d3ad0b53fe94656",
    ("primal", "uniform", "squared", "", 0.0): "11dec6de57d80543d799229560a4fcd0",
    ("primal", "importance", "squared", "", 0.02): "03ff737a9f556e324b47b153b0b8f98c",
    ("primal", "permutation", "smooth_hinge", "", 0.0): "ee9730fbd7edfd66850c652cac9b8b73",
    ("dual", "uniform", "squared", "fixed", 0.0): "a17276d200f377b8d66a55a346dadcd4",
    ("dual", "importance", "squared", "fixed", 0.0): "06a8905cf02d997e2157eea92a5adf03",
    ("dual", "permutation", "squared", "fixed", 0.0): "fc129d84be6378442f5ff1a09a33b5e1",
    ("dual", "uniform", "smooth_hinge", "newton", 0.0): "daf5feb93587f3a05c11892582177acc",
    ("dual", "importance", "smooth_hinge", "newton", 0.0): "51d894ff245dfc879cb1a72302cc6ecf",
    ("dual", "permutation", "squared", "newton", 0.0): "a3d17dabe048e571d2a39af2558d3068",
}


@pytest.mark.parametrize("case", list(GOLDEN), ids=lambda c: "-".join(map(str, c)))
def test_kernel_bytes_unchanged(case):
    assert run_case(*case) == GOLDEN[case]


def test_kernels_reject_arrays_of_the_wrong_length():
    A, y, _ = golden_problem()
    n, d = A.shape
    C = A.tocsc()
    smp = sampler_args(np.ones(d), 0.1, n, 1.0, "uniform")
    state = _sampling.seed_state(0)
    with pytest.raises(ValueError, match="w has"):
        _rcd.primal_rcd(C.data, C.indices, C.indptr, y, np.zeros(d - 1), np.zeros(n),
                        np.ones(d), 0.1, 0.0, 1, *smp, state, 10)
    with pytest.raises(ValueError, match="alias table"):
        bad = sampler_args(np.ones(n), 0.1, n, 1.0, "importance")  # the other side's table
        _rcd.primal_rcd(C.data, C.indices, C.indptr, y, np.zeros(d), np.zeros(n),
                        np.ones(d), 0.1, 0.0, 1, *bad, state, 10)
    with pytest.raises(ValueError, match="curvature has"):
        _rcd.dual_rcd(A.data, A.indices, A.indptr, y, np.zeros(n), np.zeros(d), np.ones(d),
                      np.ones(n), 0.1, 1, False, *sampler_args(np.ones(n), 0.1, n, 1.0,
                                                               "uniform"), state, 10)
    assert np.array_equal(state, _sampling.seed_state(0))  # nothing ran
