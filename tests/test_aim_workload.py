"""AIM's default workload on binary tables: public rule, and the budget it spends."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq

from sklearn_dpsynth.marginal.aim import AIMSynthesizer
from sklearn_dpsynth.marginal.workload import default_aim_workload, default_workload

FAST = {"max_iter": 20, "final_max_iter": 60, "rounds": 12}


def _binary_table(n_rows: int, n_columns: int, seed: int) -> pd.DataFrame:
    """Rows with an even number of ones among the first three columns (an XOR), rest random."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, size=(n_rows, n_columns))
    bits[:, 2] = bits[:, 0] ^ bits[:, 1]
    return pd.DataFrame(bits, columns=[f"b{j}" for j in range(n_columns)])


def test_binary_tables_up_to_twenty_columns_get_every_three_way_marginal():
    for d in (3, 8, 20):
        workload = default_aim_workload([2] * d, max_cells=10_000)
        pairs = list(itertools.combinations(range(d), 2))
        triples = list(itertools.combinations(range(d), 3))
        assert [m for m, _ in workload] == pairs + triples
        assert all(w == 1.0 for _, w in workload)
    # 21 binary columns: 8 * C(21, 3) = 10,640 cells > 10,000, the 2-way workload alone
    assert default_aim_workload([2] * 21, 10_000) == default_workload([2] * 21, 10_000)
    # a smaller cell cap moves the limit: 8 * C(10, 3) = 960 <= 1,000 < 8 * C(11, 3)
    assert len(default_aim_workload([2] * 10, 1_000)) == 45 + 120
    assert default_aim_workload([2] * 11, 1_000) == default_workload([2] * 11, 1_000)


@pytest.mark.parametrize("sizes", [[2, 2, 3], [5, 4, 4, 3, 3, 2, 2, 2, 2, 5], [2, 2], [2]])
def test_other_tables_keep_the_two_way_workload(sizes):
    assert default_aim_workload(sizes, 10_000) == default_workload(sizes, 10_000)


def test_the_workload_is_a_function_of_the_domain_only():
    """Neighbouring tables (one row removed), and any other rows, give the same workload."""
    table = _binary_table(600, 6, seed=0)
    domain = {c: 2 for c in table.columns}
    others = [table.iloc[1:], _binary_table(600, 6, seed=1), table.iloc[:5].copy() * 0]
    fitted = [AIMSynthesizer(domain=domain, **FAST, random_state=0).fit(t, epsilon=1.0)
              for t in [table, *others]]
    expected = [(tuple(f"b{j}" for j in m), w) for m, w in default_aim_workload([2] * 6, 10_000)]
    for synth in fitted:
        assert synth.workload_ == expected
    assert any(len(m) == 3 for m, _ in fitted[0].workload_)


def _cks_epsilon(rho: float, delta: float) -> float:
    """Canonne-Kamath-Steinke zCDP -> (epsilon, delta), minimised on a fine grid of orders."""
    alpha = 1.0 + np.geomspace(1e-4, 1e4, 200_000)
    bound = alpha * rho + (np.log(1 / delta) + (alpha - 1) * np.log(1 - 1 / alpha)
                           - np.log(alpha)) / (alpha - 1)
    return float(bound.min())


@pytest.mark.parametrize("epsilon", [0.3, 2.0])
def test_ledger_total_equals_the_budget_with_the_three_way_layer(epsilon):
    """Costs recomputed from each entry's noise (1/(2 sigma^2), eps^2/8) add up to the budget."""
    delta = 1e-7
    table = _binary_table(800, 7, seed=2)
    synth = AIMSynthesizer(domain={c: 2 for c in table.columns}, **FAST, random_state=0)
    synth.fit(table, epsilon=epsilon, delta=delta)
    assert any(len(m) == 3 for m, _ in synth.workload_)
    rows = synth.privacy_ledger_.summary()
    gaussian = rows["mechanism"] == "gaussian"
    exponential = rows["mechanism"] == "exponential"
    assert (gaussian | exponential).all()
    total = (float((1.0 / (2.0 * rows.loc[gaussian, "noise_scale"] ** 2)).sum())
             + float((rows.loc[exponential, "noise_scale"] ** 2 / 8.0).sum()))
    budget = brentq(lambda r: _cks_epsilon(r, delta) - epsilon, 1e-8, epsilon)
    assert total == pytest.approx(budget, rel=1e-5)
    assert math.isclose(synth.privacy_ledger_.spent()[0], epsilon, rel_tol=1e-9)


def test_largest_model_size_bounds_every_junction_tree():
    """The size bound that lets AIM skip triangulations is above every tree's size."""
    from sklearn_dpsynth.marginal.candidates import largest_model_size_mb
    from sklearn_dpsynth.pgm import ModelDomain
    from sklearn_dpsynth.pgm.junction_tree import model_size_mb

    rng = np.random.default_rng(0)
    for trial in range(200):
        d = int(rng.integers(2, 9))
        sizes = [int(s) for s in rng.integers(1, 5, size=d)]
        domain = ModelDomain([f"a{j}" for j in range(d)], sizes)
        cliques = [tuple(f"a{j}" for j in sorted(rng.choice(d, size=int(rng.integers(1, d + 1)),
                                                              replace=False)))
                   for _ in range(int(rng.integers(1, 6)))]
        assert model_size_mb(domain, cliques) <= largest_model_size_mb(sizes) * (1 + 1e-12)
    # the complete graph attains P (one clique); binary columns: below 2 P
    assert largest_model_size_mb([2] * 20) == pytest.approx((2**21 - 1) * 8 / 2**20)


def test_sum_over_many_axes_matches_numpy():
    """Large binary cliques are reduced through a transposed copy: the sums are numpy's."""
    from sklearn_dpsynth.pgm.factor import sum_axes

    rng = np.random.default_rng(1)
    for _ in range(200):
        ndim = int(rng.integers(9, 14))
        values = rng.random(tuple(int(s) for s in rng.integers(1, 4, size=ndim)))
        if rng.random() < 0.3:
            values = np.moveaxis(values, 0, -1)  # not C-contiguous
        axes = tuple(sorted(int(a) for a in rng.choice(ndim, size=int(rng.integers(1, ndim)),
                                                         replace=False)))
        expected = np.add.reduce(values, axis=axes)
        got = sum_axes(values, axes)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


def test_high_order_benchmark_tables_satisfy_their_constraints():
    """The benchmark's tables: every real row is valid; random rows are valid at the stated rates."""
    from benchmarks.aim_highorder import fixed_sum_share, make_fixed_sum, make_xor, xor_share

    rows = make_fixed_sum(n_samples=2000, seed=3)
    assert rows.shape == (2000, 20) and fixed_sum_share(rows) == 1.0
    assert rows.mean().iloc[-1] > rows.mean().iloc[0]  # the propensities rise across columns
    chain = make_xor(n_samples=2000, seed=3)
    assert xor_share(chain) == 1.0
    noise = pd.DataFrame(np.random.default_rng(0).integers(0, 2, size=(40_000, 20)))
    assert fixed_sum_share(noise) == pytest.approx(math.comb(20, 10) / 2**20, abs=0.01)
    assert xor_share(noise) == pytest.approx(0.5, abs=0.01)
