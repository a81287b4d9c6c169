"""``benchmarks.model_tvd``: exact model TVDs, and the variants it switches."""

import itertools

import numpy as np
import pandas as pd
import pytest

import sklearn_dpsynth.marginal.mst as mst_module
from benchmarks import model_tvd
from benchmarks.reference import TABLES


class _Uniform:
    """A model whose every marginal is uniform."""

    def __init__(self, domain):
        self.domain = domain

    def marginal(self, names):
        shape = [self.domain[c] for c in names]
        return np.full(shape, 1.0 / np.prod(shape))


def test_exact_tvd_against_a_direct_count():
    rng = np.random.default_rng(0)
    domain = {"a": 2, "b": 3, "c": 2}
    train = pd.DataFrame({c: rng.integers(0, n, 200) for c, n in domain.items()})
    expected = []
    for x, y in itertools.combinations(domain, 2):
        table = pd.crosstab(train[x], train[y], normalize=True).to_numpy()
        expected.append(0.5 * np.abs(table - 1.0 / (domain[x] * domain[y])).sum())
    assert model_tvd.exact_tvd(_Uniform(domain), train, domain, 2) == pytest.approx(
        np.mean(expected), rel=1e-12)


def test_selection_weight_sets_the_split_for_the_block_only():
    table = TABLES["bayesnet"](None)
    default = mst_module.SELECTION_WEIGHT
    with model_tvd.selection_weight(1.0):
        assert mst_module.SELECTION_WEIGHT == 1.0
        model = model_tvd.fit("mst", table, 1.0, 0, 2, "default")
    assert mst_module.SELECTION_WEIGHT == default
    ledger = model.privacy_ledger_
    selection = sum(e.rho for e in ledger.entries if e.mechanism == "exponential")
    assert selection == pytest.approx(ledger.rho_budget / 3, rel=1e-9)  # thirds
    model = model_tvd.fit("mst", table, 1.0, 0, 2, "0.5")
    selection = sum(e.rho for e in model.privacy_ledger_.entries
                    if e.mechanism == "exponential")
    assert selection == pytest.approx(model.privacy_ledger_.rho_budget / 5, rel=1e-9)
    assert mst_module.SELECTION_WEIGHT == default
