"""The wide-table MST benchmark's diagnostics (benchmarks/mst_wide.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import sklearn_dpsynth.marginal.mst as mst_module
import sklearn_dpsynth.pgm.sampling as sampling_module
from benchmarks import mst_wide
from sklearn_dpsynth.marginal.mst import MSTSynthesizer


@pytest.fixture
def small():
    frame, domain = mst_wide.load_wide(n_samples=3000, n_features=6)
    return frame, domain


def _brute_tvd(a: pd.DataFrame, b: pd.DataFrame, pair: tuple, domain: dict) -> float:
    total = 0.0
    for u, v in itertools.product(range(domain[pair[0]]), range(domain[pair[1]])):
        in_a = np.mean((a[pair[0]] == u) & (a[pair[1]] == v))
        in_b = np.mean((b[pair[0]] == u) & (b[pair[1]] == v))
        total += abs(in_a - in_b)
    return 0.5 * total


def test_histogram_tvd_matches_cell_enumeration(small):
    frame, domain = small
    other = frame.sample(frac=1.0, random_state=1).reset_index(drop=True)
    other["v0"] = np.random.default_rng(0).integers(0, domain["v0"], len(other))
    pairs = mst_wide.random_pairs(list(frame.columns), 5)
    truth = {p: mst_wide.histogram(frame, p, domain) for p in pairs}
    expected = np.mean([_brute_tvd(frame, other, p, domain) for p in pairs])
    got = mst_wide.mean_tvd(truth, lambda p: mst_wide.histogram(other, p, domain), pairs)
    assert got == pytest.approx(expected, abs=1e-12)


def test_random_pairs_are_distinct_public_and_all_when_asked_for_more(small):
    columns = list(small[0].columns)
    pairs = mst_wide.random_pairs(columns, 7)
    assert len(set(pairs)) == 7 and pairs == mst_wide.random_pairs(columns, 7)
    assert mst_wide.random_pairs(columns, 100) == list(itertools.combinations(columns, 2))


def test_subset_spread_is_the_exact_sd_over_every_subset(small, monkeypatch):
    frame, domain = small
    columns = ["v0", "v1", "v2", "v3"]
    real, fake = frame[columns], frame[columns].sample(frac=0.5, random_state=2)
    pairs = list(itertools.combinations(columns, 2))
    per_pair = np.array([_brute_tvd(real, fake, p, domain) for p in pairs])
    means = [per_pair[list(s)].mean() for s in itertools.combinations(range(len(pairs)), 2)]
    assert mst_wide.subset_spread(real, fake, domain, 2) == pytest.approx(np.std(means),
                                                                          rel=1e-9)


def _spanning(edges, n_nodes: int) -> bool:
    parent = list(range(n_nodes))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in edges:
        parent[find(a)] = find(b)
    return len({find(x) for x in range(n_nodes)}) == 1


def test_oracle_tree_spends_what_the_private_tree_spends_and_is_the_exact_mst(small, monkeypatch):
    frame, domain = small
    scored = {}
    score_pairs = mst_module.l1_pair_scores

    def recording(table, pairs, estimate):
        scored["scores"] = dict(zip(pairs, score_pairs(table, pairs, estimate)))
        return np.array(list(scored["scores"].values()))

    monkeypatch.setattr(mst_module, "l1_pair_scores", recording)
    fits, weights = {}, {}
    position = {c: j for j, c in enumerate(domain)}
    for tree in ("private", "oracle"):
        synth = MSTSynthesizer(domain=domain, random_state=0)
        with mst_wide.diagnostics(tree, "ours"):
            fits[tree] = synth.fit(frame, epsilon=1.0, delta=1e-9)
        edges = [tuple(sorted((position[a], position[b]))) for a, b in synth.tree_edges_]
        weights[tree] = sum(scored["scores"][e] for e in edges)
    private, oracle = (fits[k].privacy_ledger_ for k in ("private", "oracle"))
    assert oracle.rho_spent == pytest.approx(private.rho_spent, rel=1e-12)
    assert oracle.rho_spent == pytest.approx(private.rho_budget, rel=1e-12)
    # the measurements after the selection get the same noise as in a private fit
    scales = [[e.noise_scale for e in ledger.entries if "marginal" in e.target]
              for ledger in (private, oracle)]
    assert scales[0] == pytest.approx(scales[1], rel=1e-12)
    # the oracle tree is a maximum spanning tree of the exact scores (brute force;
    # the same seed gives both fits the same 1-way noise, hence the same scores)
    scores = scored["scores"]
    best = max(sum(scores[e] for e in edges)
               for edges in itertools.combinations(scores, len(domain) - 1)
               if _spanning(edges, len(domain)))
    assert weights["oracle"] == pytest.approx(best, rel=1e-12)
    assert weights["private"] <= best * (1 + 1e-12)
    assert mst_module.private_kruskal is not mst_wide._oracle_kruskal  # restored


def test_shuffled_generator_keeps_every_groups_counts():
    counts = np.array([[2, 0, 3], [0, 4, 1], [1, 1, 1]])
    values = mst_wide._shuffled_groups(counts, np.random.default_rng(0))
    sizes = counts.sum(axis=1)
    for g, (start, stop) in enumerate(zip(np.cumsum(sizes) - sizes, np.cumsum(sizes))):
        assert np.bincount(values[start:stop], minlength=3).tolist() == counts[g].tolist()
    with mst_wide.diagnostics("private", "shuffled"):
        assert sampling_module._interleave is mst_wide._shuffled_groups
        assert sampling_module._balance is mst_wide._unbalanced
    assert sampling_module._interleave is not mst_wide._shuffled_groups
    assert sampling_module._balance is not mst_wide._unbalanced
    with mst_wide.diagnostics("private", "systematic"):
        assert sampling_module._balance is mst_wide._unbalanced
        assert sampling_module._interleave is not mst_wide._shuffled_groups


def test_shares_diagnostic_splits_the_budget_in_the_given_proportions(small):
    frame, domain = small
    synth = MSTSynthesizer(domain=domain, random_state=0)
    with mst_wide.diagnostics("private", "ours", (1.0, 0.5, 1.5)):
        synth.fit(frame, epsilon=1.0, delta=1e-9)
    ledger = synth.privacy_ledger_
    phases = {"1-way": 0.0, "spanning-tree": 0.0, "2-way": 0.0}
    for entry in ledger.entries:
        phase = next(k for k in phases if entry.target.startswith(k))
        phases[phase] += entry.rho
    assert list(phases.values()) == pytest.approx(
        [ledger.rho_budget / 3, ledger.rho_budget / 6, ledger.rho_budget / 2], rel=1e-9)
    assert mst_module.budget_shares(True, True) == pytest.approx((1 / 3,) * 3)
