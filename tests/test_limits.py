"""Sizes beyond memory and malformed conditions: clear errors naming the parameter.

Each refused call would otherwise die deep in numpy (a MemoryError while
allocating the codes or candidates) or with an AttributeError; the checks run
before anything is allocated and, in ``fit``, before any budget is spent.
"""

import pandas as pd
import pytest

from sklearn_dpsynth import (IndependentSynthesizer, MSTSynthesizer, PMWPubSynthesizer,
                             PrivateEvolutionSynthesizer)
from sklearn_dpsynth.datasets import make_bayesnet

DATA = make_bayesnet(n_samples=500, n_features=4, random_state=0)


@pytest.fixture(scope="module")
def mst():
    return MSTSynthesizer(domain=DATA.domain, max_iter=50, random_state=0).fit(
        DATA.frame, epsilon=1.0)


@pytest.fixture(scope="module")
def pmw():
    return PMWPubSynthesizer(domain=DATA.domain, n_uniform=500, random_state=0).fit(
        DATA.frame, epsilon=1.0)


@pytest.mark.parametrize("n_samples", [10**12, 10**10])
def test_sample_refuses_more_cells_than_the_limit_naming_n_samples(mst, pmw, n_samples):
    for model in (mst, pmw):
        with pytest.raises(ValueError, match=rf"n_samples={n_samples}.*sample_to"):
            model.sample(n_samples)


def test_the_limit_is_exact_in_cells(mst, monkeypatch):
    """At the limit the rows are drawn; one row more is refused."""
    n_columns = DATA.frame.shape[1]
    monkeypatch.setattr(type(mst), "max_sample_cells", 7 * n_columns)
    assert len(mst.sample(7, random_state=0)) == 7
    with pytest.raises(ValueError, match=r"at most 7 rows"):
        mst.sample(8, random_state=0)


def test_sample_to_writes_past_the_limit_in_chunks_and_checks_chunk_size(mst, tmp_path,
                                                                         monkeypatch):
    n_columns = DATA.frame.shape[1]
    monkeypatch.setattr(type(mst), "max_sample_cells", 10 * n_columns)
    path = tmp_path / "rows.csv"
    assert mst.sample_to(path, 35, chunk_size=10, random_state=0) == 4
    assert len(pd.read_csv(path)) == 35
    with pytest.raises(ValueError, match=r"chunk_size=11 .*smaller chunk_size"):
        mst.sample_to(path, 35, chunk_size=11)


@pytest.mark.parametrize("conditions", [[("c0", 0)], ("c0", 0), "c0=0"])
def test_conditions_that_are_not_a_mapping_raise_a_type_error(mst, conditions):
    with pytest.raises(TypeError, match=r"^conditions must be a dict"):
        mst.sample(5, conditions=conditions)


def test_conditions_check_applies_to_methods_without_conditioning():
    model = IndependentSynthesizer(domain=DATA.domain, random_state=0).fit(
        DATA.frame, epsilon=1.0)
    with pytest.raises(TypeError, match=r"conditions"):
        model.sample(5, conditions=[("c0", 0)])


def _fit_spending_nothing(model, monkeypatch):
    """Fit ``model``; fail the test if the private rows are counted."""
    from sklearn_dpsynth.backends import NumpyTable

    def counted(self, *args, **kwargs):
        raise AssertionError("the private table was read before the size check")

    monkeypatch.setattr(NumpyTable, "counts", counted)
    return model.fit(DATA.frame, epsilon=1.0)


def test_private_evolution_refuses_a_huge_candidate_ratio_before_spending(monkeypatch):
    model = PrivateEvolutionSynthesizer(domain=DATA.domain, candidate_ratio=1e9,
                                        random_state=0)
    with pytest.raises(ValueError, match=r"candidate_ratio=1e\+09.*lower candidate_ratio"):
        _fit_spending_nothing(model, monkeypatch)


def test_private_evolution_checks_the_ratio_times_a_given_n_synthetic(monkeypatch):
    model = PrivateEvolutionSynthesizer(domain=DATA.domain, candidate_ratio=1e3,
                                        n_synthetic=10**6, random_state=0)
    with pytest.raises(ValueError, match=r"n_synthetic=1000000"):
        _fit_spending_nothing(model, monkeypatch)


def test_private_evolution_under_the_limit_still_fits():
    model = PrivateEvolutionSynthesizer(domain=DATA.domain, candidate_ratio=3.0,
                                        n_synthetic=100, random_state=0)
    model.fit(DATA.frame, epsilon=1.0)
    assert model.records_.codes.shape == (300, DATA.frame.shape[1])


def test_pmw_refuses_a_huge_n_uniform_before_spending(monkeypatch):
    model = PMWPubSynthesizer(domain=DATA.domain, n_uniform=10**9, random_state=0)
    with pytest.raises(ValueError, match=r"n_uniform=1000000000.*lower n_uniform"):
        _fit_spending_nothing(model, monkeypatch)

