"""Alias tables, seeding and draws."""

import numpy as np
import pytest

from pdsparse.solvers import _sampling


def alias_distribution(prob, alias):
    m = prob.size
    p = prob / m
    np.add.at(p, alias, (1.0 - prob) / m)
    return p


@pytest.mark.parametrize("m", [1, 2, 7, 100, 1001])
def test_alias_table_reproduces_weights_exactly(m):
    w = np.random.default_rng(m).pareto(1.5, m) + 1e-3
    prob, alias = _sampling.build_alias(w)
    np.testing.assert_allclose(alias_distribution(prob, alias), w / w.sum(), rtol=1e-12,
                               atol=1e-15)


def test_alias_draw_frequencies():
    w = np.array([1.0, 2.0, 3.0, 4.0, 0.0, 10.0])
    prob, alias = _sampling.build_alias(w)
    draws = _sampling.draw(_sampling.seed_state(5), prob, alias, 200_000)
    freq = np.bincount(draws, minlength=w.size) / draws.size
    np.testing.assert_allclose(freq, w / w.sum(), atol=4e-3)
    assert freq[4] == 0.0


def test_uniform_draws_cover_range_and_are_seeded():
    a = _sampling.uniform_ints(_sampling.seed_state(7), 13, 50_000)
    b = _sampling.uniform_ints(_sampling.seed_state(7), 13, 50_000)
    c = _sampling.uniform_ints(_sampling.seed_state(8), 13, 50_000)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.min() == 0 and a.max() == 12
    np.testing.assert_allclose(np.bincount(a) / a.size, 1 / 13, atol=5e-3)
    u = _sampling.uniform_doubles(_sampling.seed_state(1), 10_000)
    assert 0.0 <= u.min() and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.01


def test_bad_weights_rejected():
    for w in ([], [0.0, 0.0], [1.0, -1.0], [np.nan]):
        with pytest.raises(ValueError):
            _sampling.build_alias(np.array(w, dtype=float))


def test_permutation_order_visits_every_coordinate_once_per_epoch():
    m = 17
    draws = _sampling.permutation_draws(_sampling.seed_state(3), m, 5 * m)
    epochs = draws.reshape(5, m)
    for e in epochs:
        assert sorted(e) == list(range(m))
    assert len({tuple(e) for e in epochs}) == 5  # a fresh order every epoch
    again = _sampling.permutation_draws(_sampling.seed_state(3), m, 5 * m)
    assert np.array_equal(draws, again)


# ---- the kernels' Sampler (``_sampling.pxd``): the same draws, and a lookahead in step ----

def sampler_args(mode, m, seed=0):
    weights = np.random.default_rng(seed).pareto(1.0, m) + 0.01
    return list(_sampling.sampler_arrays(mode, weights))


def plain_draws(mode, args, seed, m, count):
    st = _sampling.seed_state(seed)
    if mode == "uniform":
        return _sampling.uniform_ints(st, m, count), st
    if mode == "importance":
        return _sampling.draw(st, args[1], args[2], count), st
    return _sampling.permutation_draws(st, m, count), st


@pytest.mark.parametrize("m", [1, 3, 29])
@pytest.mark.parametrize("mode", ["uniform", "importance", "permutation"])
def test_sampler_draws_are_the_plain_draws_and_lookahead_sees_them(mode, m):
    L, count = _sampling.LOOKAHEAD_ITERATIONS, 40 * m + 7
    indptr = np.cumsum(np.r_[0, np.arange(m) % 3 + 1]).astype(np.int32)
    args = sampler_args(mode, m)
    st = _sampling.seed_state(42)
    coords, ahead = _sampling.sampler_draws(*args, st, indptr, count)
    ref, ref_st = plain_draws(mode, args, 42, m, count)
    assert np.array_equal(coords, ref) and np.array_equal(st, ref_st)
    # the lookahead names the coordinate of iteration t + L, whenever it names one
    known = np.flatnonzero(ahead[: count - L] >= 0)
    assert np.array_equal(ahead[known], coords[known + L])
    if mode == "permutation":
        # unknown exactly when iteration t + L falls in the next epoch (pos before a draw:
        # m at the start, then 1..m; a draw at pos = m reshuffles)
        pos = np.where(np.arange(count) == 0, m, (np.arange(count) - 1) % m + 1)
        assert np.array_equal(ahead == -1, pos + L >= m)
    else:
        assert np.all(ahead >= 0)


@pytest.mark.parametrize("mode", ["uniform", "importance", "permutation"])
def test_sampler_chunked_calls_continue_one_call(mode):
    m = 11
    indptr = np.arange(m + 1, dtype=np.int32)
    one, _ = _sampling.sampler_draws(*sampler_args(mode, m), _sampling.seed_state(1), indptr, 100)
    args, st = sampler_args(mode, m), _sampling.seed_state(1)
    parts = [_sampling.sampler_draws(*args, st, indptr, c)[0] for c in (1, 0, 13, 40, 46)]
    assert np.array_equal(np.concatenate(parts), one)


def test_sampler_rejects_inconsistent_arrays():
    m = 5
    indptr = np.arange(m + 1, dtype=np.int32)
    st = _sampling.seed_state(0)
    bad = [
        (sampler_args("uniform", m), dict(mode=7)),
        (sampler_args("importance", m), dict(prob=np.ones(m - 1))),
        (sampler_args("importance", m), dict(alias=np.zeros(m + 1, dtype=np.int32))),
        (sampler_args("permutation", m), dict(perm=np.arange(m - 1, dtype=np.int32))),
        (sampler_args("permutation", m), dict(pos=np.array([-1]))),
    ]
    names = ["mode", "prob", "alias", "perm", "pos"]
    for args, change in bad:
        for k, v in change.items():
            args[names.index(k)] = v
        with pytest.raises(ValueError):
            _sampling.sampler_draws(*args, st, indptr, 3)
    with pytest.raises(ValueError):
        _sampling.sampler_draws(*sampler_args("uniform", m), np.zeros(3, dtype=np.uint64),
                                indptr, 3)
    with pytest.raises(ValueError):  # no coordinates
        _sampling.sampler_draws(*sampler_args("uniform", m), st, np.zeros(1, dtype=np.int32), 3)


def test_sampler_arrays_content():
    """The kernels' sampling arguments (what solvers passes them): the mode, an alias table
    that reproduces the probabilities, a permutation that shuffles at its first draw."""
    q = np.array([0.1, 0.2, 0.3, 0.4])
    mode, prob, alias, perm, pos = _sampling.sampler_arrays("uniform", q)
    assert mode == _sampling.MODES["uniform"] and prob.shape == alias.shape == (1,)
    mode, prob, alias, perm, pos = _sampling.sampler_arrays("importance", q)
    assert mode == _sampling.MODES["importance"] and alias.dtype == np.int32
    # the alias table's implied distribution is q: P(k) = (prob_k + sum_{j: alias_j = k}
    # (1 - prob_j)) / m
    implied = prob.copy()
    np.add.at(implied, alias, 1.0 - prob)
    np.testing.assert_allclose(implied / len(q), q, rtol=1e-12)
    mode, prob, alias, perm, pos = _sampling.sampler_arrays("permutation", q)
    assert mode == _sampling.MODES["permutation"]
    assert perm.tolist() == [0, 1, 2, 3] and pos.tolist() == [4]  # pos = m: shuffle first
    with pytest.raises(ValueError):
        _sampling.sampler_arrays("greedy", q)
