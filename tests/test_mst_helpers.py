"""Helpers of the marginal-based synthesizers: compression, measurement, selection."""

import numpy as np
import pytest
from scipy.optimize import minimize

from sklearn_dpsynth._marginals import contingency_counts, project_to_simplex
from sklearn_dpsynth.backends import NumpyTable
from sklearn_dpsynth.marginal.budget import budget_shares
from sklearn_dpsynth.marginal.compression import DomainCompression, weighted_simplex_projection
from sklearn_dpsynth.marginal.measure import measure_marginals, weighted_sigmas
from sklearn_dpsynth.marginal.selection import (Components, all_pairs, l1_pair_scores,
                                                maximum_spanning_tree, mutual_information,
                                                private_kruskal)
from sklearn_dpsynth.privacy import PrivacyLedger


# ------------------------------------------------------------- compression
@pytest.mark.parametrize("noisy, mapping, size", [
    ([50.0, 2.0, 40.0, 1.0], [0, 2, 1, 2], 3),      # two rare codes share the last code
    ([50.0, 2.0, 40.0, 11.0], [0, 1, 2, 3], 4),     # a single rare code is left alone
    ([50.0, 20.0, 40.0], [0, 1, 2], 3),             # nothing rare
    ([1.0, -3.0, 2.0], [0, 0, 0], 1),               # everything rare: one code
    ([-5.0], [0], 1),
])
def test_rare_codes_merge_only_in_groups_of_two_or_more(noisy, mapping, size):
    comp = DomainCompression.from_noisy_counts([np.array(noisy)], [10.0])
    assert comp.mappings[0].tolist() == mapping
    assert comp.sizes == [size]


def _example():
    comp = DomainCompression([np.array([0, 2, 1, 2, 2]), np.array([0, 1])])
    codes = np.array([[0, 0], [1, 1], [2, 0], [3, 1], [4, 1]] * 200)
    return comp, codes


def test_compress_then_expand_returns_codes_of_the_same_group():
    comp, codes = _example()
    compressed = comp.compress(codes)
    assert compressed[:5].tolist() == [[0, 0], [2, 1], [1, 0], [2, 1], [2, 1]]
    expanded = comp.expand(compressed, np.random.default_rng(0))
    np.testing.assert_array_equal(comp.compress(expanded), compressed)
    # unmerged codes come back exactly; merged ones spread over their group
    kept = np.isin(codes[:, 0], [0, 2])
    np.testing.assert_array_equal(expanded[kept], codes[kept])
    merged = expanded[~kept, 0]
    assert set(np.unique(merged)) == {1, 3, 4}
    counts = np.bincount(merged)[[1, 3, 4]]
    assert counts.min() > 0.8 * counts.mean()


def test_log_expansion_and_expand_marginal_divide_by_group_sizes():
    comp, codes = _example()
    compressed = comp.compress(codes[:5])
    np.testing.assert_allclose(comp.log_expansion(compressed),
                               [0, -np.log(3), 0, -np.log(3), -np.log(3)])
    probs = np.array([[0.1, 0.2], [0.3, 0.1], [0.15, 0.15]])
    out = comp.expand_marginal(probs, [0, 1])
    assert out.shape == (5, 2)
    assert out.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(out[[1, 3, 4]], np.tile(probs[2] / 3, (3, 1)))
    np.testing.assert_allclose(out[2], probs[1])
    np.testing.assert_allclose(comp.expand_marginal(probs.T, [1, 0]), out.T)


def test_compressed_measurement_is_whitened():
    comp, _ = _example()
    noisy = np.array([5.0, 1.0, 7.0, 2.0, 3.0])
    values, scale = comp.compress_measurement(0, noisy)
    np.testing.assert_allclose(values, [5.0, 7.0, 6.0 / np.sqrt(3)])
    np.testing.assert_allclose(scale, [1.0, 1.0, 1 / np.sqrt(3)])
    # under i.i.d. noise the whitened entries all have the original variance
    rng = np.random.default_rng(0)
    draws = np.array([comp.compress_measurement(0, rng.normal(0, 2.0, 5))[0]
                      for _ in range(20_000)])
    np.testing.assert_allclose(draws.std(axis=0), 2.0, rtol=0.03)
    assert comp.compress_measurement(1, np.array([1.0, 2.0]))[1] is None
    with pytest.raises(ValueError, match="noisy must have shape"):
        comp.compress_measurement(0, np.ones(3))


def test_project_counts_is_the_constrained_least_squares_fit():
    comp, _ = _example()
    noisy = np.array([40.0, -4.0, 25.0, 2.0, -1.0])
    counts = comp.project_counts(0, noisy, total=60.0)
    assert counts.sum() == pytest.approx(60.0) and np.all(counts >= 0)
    values, scale = comp.compress_measurement(0, noisy)

    def loss(x):
        return np.sum((scale * x - values) ** 2)

    best = minimize(loss, np.full(3, 20.0), method="SLSQP", bounds=[(0, None)] * 3,
                    constraints=[{"type": "eq", "fun": lambda x: x.sum() - 60.0}],
                    options={"ftol": 1e-12})
    assert loss(counts) <= best.fun + 1e-6


def test_weighted_simplex_projection_matches_the_euclidean_one():
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.normal(0, 3, rng.integers(1, 9))
        total = rng.uniform(0.5, 10)
        np.testing.assert_allclose(weighted_simplex_projection(v, np.ones(v.size), total),
                                   project_to_simplex(v, total), atol=1e-12)
    with pytest.raises(ValueError, match="total"):
        weighted_simplex_projection(np.ones(2), np.ones(2), 0.0)


def test_bad_mappings_are_rejected():
    with pytest.raises(ValueError, match="mappings\\[0\\]"):
        DomainCompression([np.array([0, 2])])
    assert DomainCompression.identity([2, 3]).is_identity


# ------------------------------------------------------------- measurement
def test_weighted_sigmas_spend_exactly_rho():
    sigmas = weighted_sigmas(0.5, [1.0, 2.0, 0.5])
    assert np.sum(1 / (2 * sigmas**2)) == pytest.approx(0.5)
    assert sigmas[0] / sigmas[1] == pytest.approx(2.0)
    np.testing.assert_allclose(weighted_sigmas(0.5, [3.0, 3.0]), np.sqrt(2 / (2 * 0.5)))
    with pytest.raises(ValueError, match="weights"):
        weighted_sigmas(0.5, [1.0, -1.0])


def test_measure_marginals_goes_through_the_ledger():
    codes = np.random.default_rng(0).integers(0, 3, size=(500, 3))
    ledger = PrivacyLedger(1.0, 1e-9)
    rho = ledger.rho_remaining()
    sigmas = weighted_sigmas(rho, [1.0, 1.0])
    noisy = measure_marginals(NumpyTable(codes, ["a", "b", "c"], [3, 3, 3]), [(0,), (1, 2)],
                              sigmas, ledger, np.random.default_rng(0))
    assert [e.target for e in ledger.entries] == ["1-way marginal 'a'",
                                                  "2-way marginal ('b', 'c')"]
    assert ledger.spent()[0] == pytest.approx(1.0, rel=1e-9)
    assert noisy[1].shape == (9,)
    truth = contingency_counts(codes, [3, 3, 3], (1, 2)).ravel()
    assert np.abs(noisy[1] - truth).max() < 6 * sigmas[1]


# --------------------------------------------------------------- selection
def test_components_track_connectivity():
    comp = Components(5)
    comp.connect((0, 2, 4))
    assert comp.n_components == 3
    assert comp.apart([(0, 4), (0, 1), (1, 3)]).tolist() == [False, True, True]
    assert not comp.union(2, 4)


def test_l1_scores_have_sensitivity_one():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(300, 3))
    pairs = all_pairs(3)

    def estimate(pair):
        return np.full((3, 3), 100.0 / 3)

    scores = l1_pair_scores(NumpyTable(codes, list("abc"), [3, 3, 3]), pairs, estimate)
    for row in range(0, 300, 37):
        neighbour = NumpyTable(np.delete(codes, row, axis=0), list("abc"), [3, 3, 3])
        other = l1_pair_scores(neighbour, pairs, estimate)
        assert np.abs(scores - other).max() <= 1.0 + 1e-12


def test_private_kruskal_picks_the_best_tree_at_large_budget():
    pairs = all_pairs(4)
    scores = np.array([100.0, 0.0, 0.0, 90.0, 0.0, 80.0])  # (0,1) (1,2) (2,3)
    ledger = PrivacyLedger(1e4, 1e-9)
    comps = Components(4)
    edges = private_kruskal(pairs, scores, comps, 10.0, ledger, np.random.default_rng(0),
                            list("abcd"))
    assert edges == [(0, 1), (1, 2), (2, 3)]
    assert [e.mechanism for e in ledger.entries] == ["exponential"] * 3
    assert comps.n_components == 1


def test_maximum_spanning_tree_and_mutual_information():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 5000)
    b = np.where(rng.random(5000) < 0.9, a, rng.integers(0, 3, 5000))
    c = rng.integers(0, 3, 5000)
    d = np.where(rng.random(5000) < 0.7, c, rng.integers(0, 3, 5000))
    codes = np.column_stack([a, b, c, d])
    pairs = all_pairs(4)
    table = NumpyTable(codes, list("abcd"), [3] * 4)
    mi = np.array([mutual_information(table, p) for p in pairs])
    assert mi[pairs.index((0, 2))] < 1e-2 < mi[pairs.index((2, 3))] < mi[pairs.index((0, 1))]
    edges = maximum_spanning_tree(pairs, mi, Components(4))
    assert edges[:2] == [(0, 1), (2, 3)] and len(edges) == 3


@pytest.mark.parametrize("private_selection, measure_cliques, expected", [
    (True, True, (1 / 3, 1 / 3, 1 / 3)),
    (False, True, (0.5, 0.0, 0.5)),
    (True, False, (0.5, 0.5, 0.0)),
    (False, False, (1.0, 0.0, 0.0)),
])
def test_budget_shares_split_equally_among_the_phases_that_run(private_selection,
                                                               measure_cliques, expected):
    shares = budget_shares(private_selection, measure_cliques)
    assert shares == pytest.approx(expected, abs=1e-15)
    assert sum(shares) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("private_selection, measure_cliques, expected", [
    (True, True, (3 / 8, 1 / 4, 3 / 8)),
    (False, True, (0.5, 0.0, 0.5)),
    (True, False, (0.6, 0.4, 0.0)),
    (False, False, (1.0, 0.0, 0.0)),
])
def test_budget_shares_weigh_the_selection(private_selection, measure_cliques, expected):
    shares = budget_shares(private_selection, measure_cliques, selection_weight=2 / 3)
    assert shares == pytest.approx(expected, abs=1e-15)
    assert sum(shares) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("weight", [0.0, -1.0, float("nan"), float("inf")])
def test_budget_shares_refuse_a_selection_weight_that_is_not_positive(weight):
    with pytest.raises(ValueError, match="selection_weight"):
        budget_shares(True, True, selection_weight=weight)
