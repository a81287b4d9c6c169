"""benchmarks/mst_ordered.py: the tree ceiling against the engine and brute force."""

import itertools

import numpy as np
import pytest

from benchmarks.mst_ordered import (DiagnosticMST, Selection, _exact_score, minority_scores,
                                    non_adjacent, tree_ceiling, valid_rows)
from benchmarks.reference import make_ordered
from sklearn_dpsynth.pgm import Measurement, ModelDomain, estimate


def _brute_force(frame, edges):
    """Valid rows' probability under the tree model, every row enumerated."""
    codes = frame.to_numpy()
    where = {c: k for k, c in enumerate(frame.columns)}
    n, width = codes.shape
    degree = np.zeros(width, dtype=int)
    for a, b in edges:
        degree[[where[a], where[b]]] += 1
    total, on_valid = 0.0, 0.0
    for row in itertools.product([0, 1], repeat=width):
        p = 1.0
        for a, b in edges:
            i, j = where[a], where[b]
            p *= np.mean((codes[:, i] == row[i]) & (codes[:, j] == row[j]))
        for k in range(width):
            p /= np.mean(codes[:, k] == row[k]) ** (degree[k] - 1) if degree[k] > 1 else 1.0
        total += p
        on_valid += p if all(x >= y for x, y in zip(row, row[1:])) else 0.0
    return total, on_valid


@pytest.mark.parametrize("edges", [
    [("b00", "b01"), ("b01", "b02"), ("b02", "b03"), ("b03", "b04")],   # the chain
    [("b00", "b01"), ("b01", "b02"), ("b02", "b04"), ("b02", "b03")],   # b02 - b04 skips one
    [("b00", "b02"), ("b00", "b01"), ("b01", "b03"), ("b03", "b04")],
])
def test_tree_ceiling_matches_brute_force_and_the_engine(edges):
    frame = make_ordered(n_samples=3000, n_columns=5, seed=1)
    total, brute = _brute_force(frame, edges)
    assert total == pytest.approx(1.0, abs=1e-9)
    ceiling = tree_ceiling(frame, edges)
    assert ceiling == pytest.approx(brute, rel=1e-9)
    chain = all(int(b[1:]) - int(a[1:]) == 1 for a, b in edges)
    assert (ceiling == pytest.approx(1.0)) == chain
    # the engine fitted to the exact marginals of the edges gives the same probability
    domain = ModelDomain.from_mapping({c: 2 for c in frame.columns})
    codes = frame.to_numpy()
    where = {c: k for k, c in enumerate(frame.columns)}
    measured = [Measurement((a, b), np.bincount(2 * codes[:, where[a]] + codes[:, where[b]],
                                                minlength=4).astype(float), 1.0)
                for a, b in edges]
    model, _ = estimate(domain, measured, total=len(frame), max_iter=5000, tol=0.0)
    valid = valid_rows(list(frame.columns)).to_numpy()
    probability = sum(model.marginal(tuple(frame.columns))[tuple(row)] for row in valid)
    assert probability / len(frame) == pytest.approx(ceiling, abs=2e-3)


def _small_ordered(n_columns=8):
    frame = make_ordered(n_samples=4000, n_columns=n_columns, seed=2)
    return frame, {c: 2 for c in frame.columns}


def _fit(selection, epsilon=1.0, seed=0, n_columns=8):
    frame, domain = _small_ordered(n_columns)
    synth = DiagnosticMST(domain=domain, random_state=seed, max_iter=1)
    synth.selection = selection
    return synth.fit(frame, epsilon=epsilon, delta=1e-9), frame


def _ledger_rows(synth):
    return [(e.target, e.mechanism, e.rho) for e in synth.privacy_ledger_.entries]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_diagnostic_selection_reproduces_mst_draw_for_draw(seed):
    # power 1e-300 makes every round's share 1/r (t ** 1e-300 == 1) but takes the
    # benchmark's own selection loop: it must draw MST's tree and ledger exactly
    ours, _ = _fit(Selection(power=1e-300), seed=seed)
    mst, _ = _fit(Selection(), seed=seed)
    assert not Selection(power=1e-300).default and Selection().default
    assert ours.tree_edges_ == mst.tree_edges_
    rows, expected = _ledger_rows(ours), _ledger_rows(mst)
    assert [row[:2] for row in rows] == [row[:2] for row in expected]
    assert np.allclose([row[2] for row in rows], [row[2] for row in expected], rtol=1e-12)


def test_round_power_spends_the_same_selection_budget_growing_by_round():
    synth, _ = _fit(Selection(power=2.0))
    default, _ = _fit(Selection())
    rounds = [e.rho for e in synth.privacy_ledger_.entries if "spanning-tree" in e.target]
    nominal = [e.rho for e in default.privacy_ledger_.entries if "spanning-tree" in e.target]
    assert sum(rounds) == pytest.approx(sum(nominal), rel=1e-12)
    weights = np.arange(1, len(rounds) + 1, dtype=float) ** 2
    assert np.allclose(rounds, sum(nominal) * weights / weights.sum(), rtol=1e-12)
    assert synth.privacy_ledger_.spent() == pytest.approx(default.privacy_ledger_.spent())


def test_selection_scale_keeps_the_measurements_budget():
    synth, _ = _fit(Selection(scale=50.0))
    default, _ = _fit(Selection())
    assert synth.privacy_ledger_.spent() == pytest.approx(default.privacy_ledger_.spent())
    measured = [e.rho for e in synth.privacy_ledger_.entries if "spanning" not in e.target]
    nominal = [e.rho for e in default.privacy_ledger_.entries if "spanning" not in e.target]
    assert np.allclose(measured, nominal, rtol=1e-12)


def test_exact_margins_and_a_large_selection_budget_find_the_chain():
    # with exact margins the pair scores are 4 n_j (1 - p_i) for i < j, whose maximum
    # spanning tree is the chain; a large enough selection budget then draws it
    for seed in range(3):
        synth, frame = _fit(Selection(exact_margins=True, scale=1e6), seed=seed)
        assert non_adjacent(frame, synth.tree_edges_) == []
        assert tree_ceiling(frame, synth.tree_edges_) == pytest.approx(1.0)


def test_exact_score_is_the_nested_pairs_closed_form():
    frame, _ = _small_ordered()
    codes = frame.to_numpy()
    n, ones = len(codes), codes.sum(axis=0)
    for i, j in [(0, 1), (1, 3), (2, 7), (5, 6)]:
        expected = 4 * ones[j] * (1 - ones[i] / n)   # b_j = 1 implies b_i = 1
        assert _exact_score(codes, i, j) == pytest.approx(expected, rel=1e-12)


def test_non_adjacent_lists_exactly_the_skipping_edges():
    frame, _ = _small_ordered(5)
    edges = [("b00", "b01"), ("b03", "b01"), ("b01", "b02"), ("b02", "b04")]
    listed = non_adjacent(frame, edges)
    assert [text.split()[0] for text in listed] == ["b01-b03", "b02-b04"]


def test_minority_scores_have_sensitivity_one_on_neighbouring_tables():
    # every pair score moves by at most 1 when one row is added or removed
    frame, domain = _small_ordered(6)
    codes = frame.to_numpy()
    rng = np.random.default_rng(0)
    margins = [np.bincount(codes[:, j], minlength=2) + rng.normal(0, 20, 2) for j in range(6)]
    total = float(margins[0].sum())
    pairs = [(i, j) for i in range(6) for j in range(i + 1, 6)]

    class Counts:
        def __init__(self, rows):
            self.rows = rows

        def counts(self, pair):
            out = np.zeros((2, 2))
            np.add.at(out, (self.rows[:, pair[0]], self.rows[:, pair[1]]), 1.0)
            return out

    def outer(pair):
        return np.outer(margins[pair[0]], margins[pair[1]]) / total

    base = minority_scores(Counts(codes), pairs, outer)
    for row in itertools.product([0, 1], repeat=6):
        added = minority_scores(Counts(np.vstack([codes, row])), pairs, outer)
        assert np.abs(added - base).max() <= 1.0 + 1e-9
    for k in rng.choice(len(codes), 20, replace=False):
        removed = minority_scores(Counts(np.delete(codes, k, axis=0)), pairs, outer)
        assert np.abs(removed - base).max() <= 1.0 + 1e-9
    # the weights are at most 1: never above the plain L1 score
    plain = np.array([np.abs(Counts(codes).counts(p) - outer(p)).sum() for p in pairs])
    assert np.all(base <= plain + 1e-9)
