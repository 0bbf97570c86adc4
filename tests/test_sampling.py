"""Alias tables, seeding and draws."""

import numpy as np
import pytest

from pdsparse import _sampling


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
