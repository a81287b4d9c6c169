"""Tests of the marginal, per-column, correlation and conjunction metrics."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from threadpoolctl import threadpool_limits

from sklearn_dpsynth.metrics import (
    chi_square_score,
    conjunction_error,
    correlation_accuracy,
    correlation_ratio,
    cramers_v,
    histogram_intersection,
    ks_score,
    pair_similarity,
    workload_error,
)
from sklearn_dpsynth.domain import ColumnSpec, Domain
from sklearn_dpsynth.metrics import marginals as marginals_module
from sklearn_dpsynth.metrics.conjunctions import conjunction_answers, random_conjunctions
from sklearn_dpsynth.metrics.correlation import association_level


@pytest.fixture(autouse=True)
def _single_thread():
    """OpenMP models oversubscribe a busy shared machine; one thread is fastest here."""
    with threadpool_limits(limits=1):
        yield

def _mixed(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({
        "x": x,
        "y": 2 * x + rng.normal(scale=0.1, size=n),
        "c": np.where(x > 0, "hi", "lo"),
        "d": pd.Series(rng.choice(["u", "v", "w"], size=n), dtype="string"),
    })


# ---------------------------------------------------------------- workload error
def test_workload_error_one_way_hand_computed():
    real = pd.DataFrame({"a": ["x", "x", "y", "y"]})
    synth = pd.DataFrame({"a": ["x", "x", "x", "y"]})
    # p = (1/2, 1/2), q = (3/4, 1/4): TVD = (1/4 + 1/4) / 2
    assert workload_error(real, synth, k=1) == pytest.approx(0.25)


def test_workload_error_two_way_hand_computed_with_domain():
    real = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1]})
    synth = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 0, 1, 1]})
    # p = 1/4 on every cell, q = (1/2, 0, 0, 1/2): TVD = 4 * 1/4 / 2
    assert workload_error(real, synth, 2, {"a": 2, "b": 2}) == pytest.approx(0.5)
    # the 1-way marginals are identical
    assert workload_error(real, synth, 1, {"a": 2, "b": 2}) == pytest.approx(0.0)


def test_workload_error_three_way_hand_computed():
    real = pd.DataFrame({"a": [0, 1], "b": [0, 1], "c": [0, 1]})
    synth = pd.DataFrame({"a": [0, 1], "b": [0, 1], "c": [1, 0]})
    # the two rows of synth are cells the real data never visits
    assert workload_error(real, synth, 3) == pytest.approx(1.0)


def test_workload_error_unseen_synthetic_category_counts_fully():
    real = pd.DataFrame({"a": ["p", "q"]})
    synth = pd.DataFrame({"a": ["r", "r"]})
    assert workload_error(real, synth, k=1) == pytest.approx(1.0)


def test_workload_error_numeric_bins_use_real_range():
    real = pd.DataFrame({"v": [0.0, 1.0, 6.0, 10.0]})
    # edges [0, 5, 10]; -5 and 4 fall into the first bin, 5 and 20 into the second
    assert workload_error(real, pd.DataFrame({"v": [-5.0, 20.0, 4.0, 5.0]}), k=1, bins=2) == 0.0
    # three of four synthetic rows in the first bin: TVD 1/4
    assert workload_error(real, pd.DataFrame({"v": [1.0, 2.0, 3.0, 7.0]}), k=1, bins=2) == pytest.approx(0.25)


def test_workload_error_bounds_domain_sets_bin_edges():
    real = pd.DataFrame({"v": [1.0, 2.0]})
    synth = pd.DataFrame({"v": [1.0, 9.0]})
    # with public bounds (0, 10) and 2 bins, 1, 2 are in bin 0 and 9 in bin 1
    assert workload_error(real, synth, 1, {"v": (0.0, 10.0)}, bins=2) == pytest.approx(0.5)


def test_workload_error_reduce_options_agree():
    real, synth = _mixed(300, 0), _mixed(300, 1)
    per = workload_error(real, synth, k=2, reduce="none")
    assert isinstance(per, pd.Series) and len(per) == 6
    assert per.index[0] == ("x", "y")
    assert workload_error(real, synth, k=2) == pytest.approx(per.mean())
    assert workload_error(real, synth, k=2, reduce="max") == pytest.approx(per.max())
    assert ((per >= 0) & (per <= 1)).all()


def test_workload_error_random_subset_of_marginals():
    real, synth = _mixed(200, 0), _mixed(200, 1)
    every = workload_error(real, synth, k=3, reduce="none")
    some = workload_error(real, synth, k=3, n_marginals=2, random_state=3, reduce="none")
    again = workload_error(real, synth, k=3, n_marginals=2, random_state=3, reduce="none")
    assert len(some) == 2 and set(some.index) <= set(every.index)
    pd.testing.assert_series_equal(some, again)
    np.testing.assert_allclose(some.to_numpy(), every.loc[list(some.index)].to_numpy())


def test_workload_error_accepts_arrays_like_frames():
    real, synth = _mixed(100, 0), _mixed(100, 1)
    from_frames = workload_error(real, synth, k=2)
    from_arrays = workload_error(real.to_numpy(dtype=object), synth.to_numpy(dtype=object), k=2)
    assert from_arrays == pytest.approx(from_frames)
    assert workload_error(real, synth.to_numpy(dtype=object), k=2) == pytest.approx(from_frames)


def test_workload_error_synthetic_columns_reordered():
    real, synth = _mixed(100, 0), _mixed(100, 1)
    assert workload_error(real, synth[["d", "c", "y", "x"]]) == pytest.approx(workload_error(real, synth))


def test_huge_marginals_use_observed_cells(monkeypatch):
    real, synth = _mixed(200, 0), _mixed(200, 1)
    dense = workload_error(real, synth, k=3, reduce="none", bins=7)
    monkeypatch.setattr(marginals_module, "_DENSE_CELL_LIMIT", 1)
    sparse = workload_error(real, synth, k=3, reduce="none", bins=7)
    np.testing.assert_allclose(sparse.to_numpy(), dense.to_numpy())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"k": 4}, "k must be"),
        ({"reduce": "median"}, "reduce"),
        ({"bins": 0}, "bins"),
        ({"domain": {"a": 2}}, "'a'"),
        ({"domain": {"z": 2}}, "not in the table"),
        ({"domain": {"a": "abc"}}, "domain\\['a'\\]"),
        ({"n_marginals": 0}, "n_marginals"),
    ],
)
def test_workload_error_bad_parameters(kwargs, message):
    real = pd.DataFrame({"a": [0, 1, 2], "b": [0, 1, 1]})
    synth = pd.DataFrame({"a": [0, 1, 2], "b": [1, 1, 0]})
    with pytest.raises(ValueError, match=message):
        workload_error(real, synth, **kwargs)


def test_mismatched_columns_are_named():
    real = pd.DataFrame({"a": [0, 1], "b": [0, 1]})
    with pytest.raises(ValueError, match=r"missing \['b'\], unexpected \['z'\]"):
        workload_error(real, pd.DataFrame({"a": [0], "z": [1]}))
    with pytest.raises(ValueError, match="synth has 3 columns"):
        workload_error(real, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="2-D"):
        workload_error(np.zeros(3), np.zeros(3))


def test_non_numeric_value_in_numeric_column_is_named():
    real = pd.DataFrame({"age": [1.0, 2.0]})
    with pytest.raises(ValueError, match="'age'"):
        workload_error(real, pd.DataFrame({"age": ["old", "young"]}), k=1)


# ------------------------------------------------------------------ HIST / Pair
def test_histogram_intersection_is_one_minus_mean_one_way_tvd():
    real, synth = _mixed(400, 0), _mixed(400, 5)
    for bins in (20, 50):
        expected = 1 - workload_error(real, synth, k=1, bins=bins)
        assert histogram_intersection(real, synth, bins=bins) == pytest.approx(expected)
    both = histogram_intersection(real, synth)  # default (20, 50)
    assert both == pytest.approx(
        (histogram_intersection(real, synth, bins=20) + histogram_intersection(real, synth, bins=50)) / 2
    )


def test_histogram_intersection_hand_computed():
    real = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u"] * 4})
    synth = pd.DataFrame({"a": ["x", "x", "x", "y"], "b": ["u"] * 4})
    # a: min(1/2, 3/4) + min(1/2, 1/4) = 3/4; b: 1
    assert histogram_intersection(real, synth) == pytest.approx((0.75 + 1.0) / 2)


def test_pair_similarity_is_one_minus_mean_two_way_tvd():
    real, synth = _mixed(400, 0), _mixed(400, 5)
    assert pair_similarity(real, synth, bins=20) == pytest.approx(1 - workload_error(real, synth, k=2))
    assert pair_similarity(real, real) == pytest.approx(1.0)


# ----------------------------------------------------------------- KS / chi-square
def test_ks_score_matches_scipy_ks_2samp_with_ties():
    rng = np.random.default_rng(0)
    real = pd.DataFrame({"v": rng.integers(0, 10, 200).astype(float), "w": rng.normal(size=200),
                         "c": ["a"] * 200})
    synth = pd.DataFrame({"v": rng.integers(2, 12, 150).astype(float), "w": rng.normal(0.3, size=150),
                          "c": ["a"] * 150})
    per = ks_score(real, synth, reduce="none")
    assert list(per.index) == ["v", "w"]  # the categorical column is skipped
    for column in ("v", "w"):
        expected = 1 - stats.ks_2samp(real[column], synth[column]).statistic
        assert per[column] == pytest.approx(expected)
    assert ks_score(real, synth) == pytest.approx(per.mean())


def test_ks_score_ignores_missing_values_and_needs_numeric_columns():
    real = pd.DataFrame({"v": [1.0, 2.0, np.nan, 3.0]})
    synth = pd.DataFrame({"v": [1.0, np.nan, 2.0, 3.0]})
    assert ks_score(real, synth) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="numeric column"):
        ks_score(pd.DataFrame({"c": ["a"]}), pd.DataFrame({"c": ["b"]}))


def test_chi_square_score_count_scale_hand_computed():
    real = pd.DataFrame({"c": ["a"] * 50 + ["b"] * 50})
    synth = pd.DataFrame({"c": ["a"] * 60 + ["b"] * 40})
    # expected 50/50, observed 60/40: statistic (10^2 + 10^2) / 50 = 4, 1 dof
    assert chi_square_score(real, synth, scale="count") == pytest.approx(stats.chi2.sf(4.0, 1))


def test_chi_square_score_matches_scipy_chisquare():
    rng = np.random.default_rng(1)
    real = pd.DataFrame({"c": rng.choice(list("abcd"), 300, p=[0.4, 0.3, 0.2, 0.1])})
    synth = pd.DataFrame({"c": rng.choice(list("abcd"), 200, p=[0.3, 0.3, 0.3, 0.1])})
    p = real["c"].value_counts().sort_index().to_numpy(dtype=float)
    q = synth["c"].value_counts().sort_index().to_numpy(dtype=float)
    freq = stats.chisquare(q / q.sum(), p / p.sum()).pvalue
    count = stats.chisquare(q, p / p.sum() * q.sum()).pvalue
    assert chi_square_score(real, synth) == pytest.approx(freq)
    assert chi_square_score(real, synth, scale="count") == pytest.approx(count)


def test_chi_square_score_edge_cases():
    real = pd.DataFrame({"c": ["a", "a", "b"], "n": [1.0, 2.0, 3.0]})
    assert chi_square_score(real, real) == pytest.approx(1.0)
    # a category the real data never has gets (almost) zero p-value
    unseen = pd.DataFrame({"c": ["a", "z", "z"], "n": [1.0, 2.0, 3.0]})
    assert chi_square_score(real, unseen) < 1e-6
    # one category only: nothing to test
    single = pd.DataFrame({"c": ["a"] * 3, "n": [1.0, 2.0, 3.0]})
    assert chi_square_score(single, single) == 1.0
    with pytest.raises(ValueError, match="scale"):
        chi_square_score(real, real, scale="percent")


# -------------------------------------------------------------------- CorAcc
def test_cramers_v_bias_corrected_hand_computed():
    assert cramers_v([[10, 0], [0, 10]]) == pytest.approx(1.0)
    # n = 60, chi2 = 4 * 5^2 / 15, phi2 = chi2 / 60; corrections with n - 1 = 59
    phi2 = (4 * 25 / 15) / 60
    phi2_corr = phi2 - 1 / 59
    r_corr = 2 - 1 / 59
    assert cramers_v([[20, 10], [10, 20]]) == pytest.approx(np.sqrt(phi2_corr / (r_corr - 1)))
    assert cramers_v([[10, 10], [10, 10]]) == 0.0
    assert cramers_v([[5, 7]]) == 0.0  # a single row: no association


def test_cramers_v_against_scipy_chi2_and_uncorrected_v():
    table = np.array([[400, 250, 350], [200, 450, 350]])
    n, r, c = table.sum(), 2, 3
    chi2 = stats.chi2_contingency(table, correction=False).statistic
    phi2_corr = chi2 / n - (r - 1) * (c - 1) / (n - 1)
    denominator = min(r - (r - 1) ** 2 / (n - 1), c - (c - 1) ** 2 / (n - 1)) - 1
    assert cramers_v(table) == pytest.approx(np.sqrt(phi2_corr / denominator))
    uncorrected = stats.contingency.association(table, method="cramer")
    assert cramers_v(table) < uncorrected
    assert cramers_v(table) == pytest.approx(uncorrected, abs=0.01)


def test_correlation_ratio_hand_computed():
    # group means 2 and 6, grand mean 4: SS_between 16, SS_total 20
    assert correlation_ratio([0, 0, 1, 1], [1.0, 3.0, 5.0, 7.0]) == pytest.approx(np.sqrt(0.8))
    assert correlation_ratio([0, 1, 2], [3.0, 3.0, 3.0]) == 0.0


def test_association_levels_boundaries():
    assert [association_level(v) for v in (0.0, 0.0999, 0.1, 0.3, 0.4999, 0.5, 1.0)] == [
        "low", "low", "weak", "medium", "medium", "strong", "strong"]


def test_correlation_accuracy_pairs_match_scipy_primitives():
    real, synth = _mixed(300, 0), _mixed(300, 2)
    pairs = correlation_accuracy(real, synth, return_pairs=True)
    assert len(pairs) == 6
    row = pairs[(pairs.column_1 == "x") & (pairs.column_2 == "y")].iloc[0]
    assert row.real == pytest.approx(abs(stats.pearsonr(real.x, real.y).statistic))
    assert correlation_accuracy(real, synth) == pytest.approx(pairs["match"].mean())


def test_correlation_accuracy_detects_broken_dependence():
    real = _mixed(500, 0)
    rng = np.random.default_rng(9)
    shuffled = real.apply(lambda col: col.to_numpy()[rng.permutation(len(col))])
    pairs = correlation_accuracy(real, shuffled, return_pairs=True)
    strong = pairs[pairs.real_level == "strong"]
    assert len(strong) == 3  # x-y, x-c, y-c
    assert not strong["match"].any()
    assert correlation_accuracy(real, real) == 1.0
    # at most the three weak pairs can keep their (low) level
    assert correlation_accuracy(real, shuffled) <= 3 / 6


# --------------------------------------------------------------- conjunctions
def test_conjunction_answers_hand_computed():
    codes = np.array([[0, 0], [0, 1], [1, 1], [2, 1]])
    query = {0: np.array([0, 2]), 1: np.array([1])}
    # rows (0, 1) and (2, 1) satisfy x0 in {0, 2} and x1 in {1}
    assert conjunction_answers(codes, [3, 2], [query])[0] == pytest.approx(0.5)


def test_random_conjunctions_shape():
    queries = random_conjunctions([5, 2, 1, 7] * 5, n_queries=50, column_fraction=0.1, random_state=0)
    sizes = [5, 2, 1, 7] * 5
    assert len(queries) == 50
    for query in queries:
        assert len(query) == 2  # round(0.1 * 20)
        for column, allowed in query.items():
            assert 1 <= len(allowed) <= max(1, sizes[column] - 1)
            assert len(np.unique(allowed)) == len(allowed)


def test_conjunction_error_properties():
    real = _mixed(300, 0)
    assert conjunction_error(real, real, random_state=0) == 0.0
    # one column per query (10% of 4 columns, at least 1): shuffling the rows
    # of every column independently keeps every 1-way answer
    rng = np.random.default_rng(1)
    shuffled = real.apply(lambda col: col.to_numpy()[rng.permutation(len(col))])
    assert conjunction_error(real, shuffled, random_state=0) == pytest.approx(0.0, abs=1e-12)
    # with all columns in every query, the broken dependence shows up
    errors = conjunction_error(real, shuffled, column_fraction=1.0, n_queries=30,
                               random_state=0, reduce="none")
    assert len(errors) == 30 and errors.max() > 0.05
    with pytest.raises(ValueError, match="column_fraction"):
        conjunction_error(real, real, column_fraction=0)
    with pytest.raises(ValueError, match="n_queries"):
        conjunction_error(real, real, n_queries=0)


# -------------------------------------------------------------- domain forms
def test_domain_dict_entries_with_fixed_bins():
    real = pd.DataFrame({"v": [1.0, 4.0, 6.0, 9.0]})
    synth = pd.DataFrame({"v": [1.0, 2.0, 3.0, 9.0]})
    # 2 bins over (0, 10): 3/4 of synth in [0, 5) vs 1/2 of real -> 0.25,
    # whatever the metric's own ``bins``
    for entry in ({"bounds": (0.0, 10.0), "n_bins": 2}, {"kind": "numeric", "edges": [0.0, 5.0, 10.0]}):
        assert workload_error(real, synth, 1, {"v": entry}, bins=50) == pytest.approx(0.25)
    # bounds alone: the metric's bins apply (10 bins of width 1)
    assert workload_error(real, synth, 1, {"v": {"bounds": (0.0, 10.0)}}, bins=10) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="increasing"):
        workload_error(real, synth, 1, {"v": {"edges": [0.0, 0.0, 1.0]}})


def test_domain_category_list_with_missing_entry_and_codes_dict():
    real = pd.DataFrame({"c": ["a", None, "b", "b"], "k": [0, 1, 2, 2]})
    synth = pd.DataFrame({"c": ["a", "b", None, None], "k": [0, 0, 2, 2]})
    domain = {"c": ["a", "b", None], "k": {"n_codes": 3}}
    per = workload_error(real, synth, 1, domain, reduce="none")
    # c: p = (1/4, 1/2, 1/4), q = (1/4, 1/4, 1/2); k: p = (1/4, 1/4, 1/2), q = (1/2, 0, 1/2)
    assert per[("c",)] == pytest.approx(0.25)
    assert per[("k",)] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="'k'"):
        workload_error(real, synth.assign(k=[0, 0, 3, 2]), 1, domain)
    with pytest.raises(ValueError, match="not in its domain"):
        workload_error(real, synth.assign(c=["a", "z", "b", "b"]), 1, domain)


def test_domain_object_with_specs_is_read():
    specs = [ColumnSpec("k", "codes", n_codes=3),
             ColumnSpec("v", "numeric", edges=np.array([0.0, 5.0, 10.0]))]
    real = pd.DataFrame({"k": [0, 1, 2, 2], "v": [1.0, 4.0, 6.0, 9.0]})
    synth = pd.DataFrame({"k": [0, 0, 2, 2], "v": [1.0, 2.0, 3.0, 9.0]})
    plain = {"k": 3, "v": {"edges": [0.0, 5.0, 10.0]}}
    expected = workload_error(real, synth, 2, plain)
    assert workload_error(real, synth, 2, Domain(specs)) == pytest.approx(expected)
    assert workload_error(real, synth, 2, dict(zip("kv", specs))) == pytest.approx(expected)


def test_a_domain_and_its_declaration_give_the_same_metrics():
    real = pd.DataFrame({"c": ["a", None, "b", "b"], "v": [1.0, 4.0, 6.0, 9.0]})
    synth = pd.DataFrame({"c": ["a", "b", None, None], "v": [1.0, 2.0, 3.0, 9.0]})
    declaration = {"c": ["a", "b", None], "v": (0.0, 10.0)}
    fitted = Domain.from_declaration(declaration, n_bins=4)   # what a synthesizer holds
    per = workload_error(real, synth, 1, fitted, reduce="none", bins=4)
    pd.testing.assert_series_equal(per, workload_error(real, synth, 1, declaration,
                                                       reduce="none", bins=4))
    # c: p = (1/4, 1/2, 1/4), q = (1/4, 1/4, 1/2); v in 4 bins of width 2.5:
    # p = (1/4, 1/4, 1/4, 1/4), q = (1/2, 1/4, 0, 1/4)
    assert per[("c",)] == pytest.approx(0.25) and per[("v",)] == pytest.approx(0.25)
