"""Factor operations against explicit numpy computations."""

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_dpsynth.pgm import Factor, ModelDomain

DOMAIN = ModelDomain.from_mapping({"a": 2, "b": 3, "c": 4, "d": 5})


def _random(attrs, seed=0):
    rng = np.random.default_rng(seed)
    return Factor(attrs, rng.normal(size=[DOMAIN[a] for a in attrs]))


def test_add_broadcasts_over_union():
    f, g = _random(("a", "b"), 1), _random(("c", "b"), 2)
    h = f + g
    assert h.attributes == ("a", "b", "c")
    expected = f.values[:, :, None] + g.values.T[None, :, :]
    np.testing.assert_allclose(h.values, expected)


def test_sub_is_log_division():
    f, g = _random(("a", "b", "c"), 1), _random(("c", "a"), 2)
    h = f - g
    assert h.attributes == ("a", "b", "c")
    np.testing.assert_allclose(h.values, f.values - g.values.T[:, None, :])


def test_sub_zero_over_zero_is_zero():
    f = Factor(("a",), np.array([-np.inf, 0.0]))
    g = Factor(("a",), np.array([-np.inf, 1.0]))
    np.testing.assert_array_equal((f - g).values, [-np.inf, -1.0])


def test_scalar_arithmetic():
    f = _random(("a", "b"))
    np.testing.assert_allclose((f + 2.0).values, f.values + 2)
    np.testing.assert_allclose((3.0 * f).values, 3 * f.values)
    np.testing.assert_allclose((-f).values, -f.values)


def test_logsumexp_and_sum_keep_order():
    f = _random(("a", "b", "c", "d"), 3)
    m = f.logsumexp(("c", "a"))
    assert m.attributes == ("c", "a")
    np.testing.assert_allclose(m.values, logsumexp(f.values, axis=(1, 3)).T)
    s = f.sum(("d", "b"))
    np.testing.assert_allclose(s.values, f.values.sum(axis=(0, 2)).T)
    np.testing.assert_allclose(f.logsumexp().values, logsumexp(f.values))


def test_logsumexp_handles_minus_infinity():
    f = Factor(("a", "b"), np.array([[-np.inf, -np.inf, -np.inf], [0.0, -1000.0, 1.0]]))
    out = f.logsumexp(("a",)).values
    assert out[0] == -np.inf
    np.testing.assert_allclose(out[1], logsumexp([0.0, -1000.0, 1.0]))


def test_transpose_and_expand():
    f = _random(("a", "c"), 4)
    t = f.transpose(("c", "a"))
    np.testing.assert_array_equal(t.values, f.values.T)
    e = f.expand(("b", "c", "a"), DOMAIN)
    assert e.shape == (3, 4, 2)
    for b in range(3):
        np.testing.assert_array_equal(e.values[b], f.values.T)
    e2 = f.expand(("c", "d", "a"), ModelDomain(("c", "d", "a"), (4, 5, 2)))
    np.testing.assert_array_equal(e2.values[:, 3, :], f.values.T)


def test_exp_log_normalize():
    f = _random(("b", "d"), 5)
    np.testing.assert_allclose(f.exp().values, np.exp(f.values))
    np.testing.assert_allclose(f.exp().log().values, f.values)
    n = f.normalize()
    np.testing.assert_allclose(np.exp(n.values).sum(), 1.0)
    np.testing.assert_allclose(n.values - f.values, -logsumexp(f.values))


def test_constructors():
    z = Factor.zeros(("b", "a"), DOMAIN)
    assert z.shape == (3, 2) and np.all(z.values == 0)
    u = Factor.uniform(("b", "c"), DOMAIN)
    np.testing.assert_allclose(np.exp(u.values), np.full((3, 4), 1 / 12))


@pytest.mark.parametrize(
    "call",
    [
        lambda: Factor(("a", "b"), np.zeros(2)),
        lambda: Factor(("a", "a"), np.zeros((2, 2))),
        lambda: Factor("ab", np.zeros((2, 2))),
        lambda: _random(("a",)).transpose(("b",)),
        lambda: _random(("a", "b")).logsumexp(("c",)),
        lambda: _random(("a", "b")).expand(("a",), DOMAIN),
        lambda: _random(("a",)).expand(("a", "b"), ModelDomain(("a", "b"), (3, 3))),
        lambda: _random(("a",)) + Factor(("a",), np.zeros(3)),
        lambda: Factor.zeros(("a", "z"), DOMAIN),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("shape", [(85, 16, 15, 2), (2, 5, 1, 3), (20, 30), (4,)])
def test_sum_axes_and_logsumexp_axes_match_numpy(shape):
    import itertools

    from sklearn_dpsynth.pgm.factor import logsumexp_axes, sum_axes

    rng = np.random.default_rng(0)
    values = rng.normal(size=shape)
    for r in range(len(shape) + 1):
        for axes in itertools.combinations(range(len(shape)), r):
            np.testing.assert_allclose(sum_axes(values, axes), values.sum(axis=axes))
            np.testing.assert_allclose(logsumexp_axes(values, axes),
                                       logsumexp(values, axis=axes) if axes else values)


def test_logsumexp_axes_exact_under_huge_ranges():
    from sklearn_dpsynth.pgm.factor import logsumexp_axes

    # the second row is 5000 nats below the first: a global shift would
    # underflow it, the per-slice fallback keeps it exact
    values = np.array([[0.0, 1.0, -2.0], [-5000.0, -5001.0, -4999.0]])
    np.testing.assert_allclose(logsumexp_axes(values, (1,)), logsumexp(values, axis=1))


def test_widened_operands_broadcast_to_the_same_values():
    """Widening repeats an operand along trailing axes only when cheap; values never change."""
    from sklearn_dpsynth.pgm.factor import sum_axes, widened

    rng = np.random.default_rng(0)
    shape = (2, 2, 5, 6, 7, 9, 15, 16)
    cases = {
        (2, 1, 1, 6, 7, 9, 1, 16): (2, 1, 1, 6, 7, 9, 15, 16),  # 16-cell runs: widened
        (1, 2, 5, 6, 1, 1, 1, 16): (1, 2, 5, 6, 1, 9, 15, 16),  # twice, within the share
        (2, 2, 5, 6, 7, 9, 15, 1): (2, 2, 5, 6, 7, 9, 15, 1),  # would be the whole table
        (2, 2, 1, 1, 7, 9, 15, 16): (2, 2, 1, 1, 7, 9, 15, 16),  # long run already
        (2, 2, 5, 6, 1, 1, 1, 1): (2, 2, 5, 6, 1, 1, 1, 1),  # long broadcast run
    }
    table = rng.normal(size=shape)
    for term_shape, expected in cases.items():
        term = rng.normal(size=term_shape)
        out = widened(term, shape)
        assert out.shape == expected
        assert (out is term) == (expected == term_shape)
        np.testing.assert_array_equal(table + out, table + term)
    # a small table is left alone: there widening would only add a copy
    small = rng.normal(size=(2, 1, 16))
    assert widened(small, (2, 5, 16)) is small
    # rows longer than the column-by-column limit are summed exactly as numpy does
    flat = rng.normal(size=(300, 85))
    np.testing.assert_allclose(sum_axes(flat, (1,)), flat.sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sum_axes_of_many_axes_matches_numpy(dtype):
    """Arrays of more than eight axes (and more than ``_SMALL`` cells) with scattered
    summed axes go through a transposed copy: same sums as numpy."""
    import itertools

    from sklearn_dpsynth.pgm.factor import sum_axes

    rng = np.random.default_rng(5)
    shape = (2, 3, 2, 2, 3, 2, 1, 2, 2, 3, 2)  # 3,456 cells
    values = rng.normal(size=shape).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for r in range(len(shape) + 1):
        for axes in itertools.islice(itertools.combinations(range(len(shape)), r), 12):
            got = sum_axes(values, axes)
            want = values.sum(axis=axes) if axes else values
            assert got.shape == want.shape and got.dtype == values.dtype
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
