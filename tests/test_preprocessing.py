"""TableDiscretizer and private/non-private domain learning."""

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import Pipeline

from sklearn_dpsynth import IndependentSynthesizer, PrivacyWarning, TableDiscretizer
from sklearn_dpsynth.preprocessing import candidate_grid, check_table, learn_domain
from sklearn_dpsynth.privacy import PrivacyLedger
from sklearn_dpsynth.privacy._exact import discrete_gaussian_tail

from .conftest import MIXED_DOMAIN


def test_round_trip_keeps_columns_dtypes_and_bins(mixed_frame):
    disc = TableDiscretizer(domain={**MIXED_DOMAIN, "member": [False, True]}, n_bins=8,
                            bin_value="midpoint")
    codes = disc.fit_transform(mixed_frame)
    assert codes.shape == mixed_frame.shape and codes.dtype == np.int64
    back = disc.inverse_transform(codes)
    assert list(back.columns) == list(mixed_frame.columns)
    for column in mixed_frame.columns:
        assert back[column].dtype == mixed_frame[column].dtype, column
    pd.testing.assert_series_equal(back["city"], mixed_frame["city"])
    pd.testing.assert_series_equal(back["member"], mixed_frame["member"])
    assert back["score"].isna().sum() == mixed_frame["score"].isna().sum()
    # numeric values come back inside their bin: re-encoding gives the same codes
    np.testing.assert_array_equal(disc.transform(back), codes)
    # (0, 100_000) spans five orders of magnitude: log-spaced bins and a point at 0
    income = disc.domain_["income"]
    assert income.edges[1] == 1.0 and list(income.points) == [0.0]
    code = codes[:, list(mixed_frame.columns).index("income")]
    width = np.append(np.diff(income.edges), 0.0)[np.minimum(code, income.n_bins)]
    assert np.all(np.abs(back["income"] - mixed_frame["income"]) <= width / 2 + 1e-6)


def test_uniform_bin_values_stay_in_bin(mixed_frame):
    disc = TableDiscretizer(domain=MIXED_DOMAIN, bin_value="uniform", random_state=0)
    codes = disc.fit_transform(mixed_frame)  # all declared (bool is schema): no budget
    assert disc.privacy_ledger_ is None
    back = disc.inverse_transform(codes)
    assert (back["age"] == np.rint(back["age"])).all()
    np.testing.assert_array_equal(disc.transform(back), codes)


def test_undeclared_columns_need_a_budget_or_an_opt_out(mixed_frame):
    # 'city' is text (object, or str from pandas 3): its kind is asked for first
    with pytest.raises(ValueError, match=r"\['city'\] hold text .* of no declared kind"):
        TableDiscretizer().fit(mixed_frame)
    with pytest.raises(ValueError, match="no declared domain"):
        TableDiscretizer(domain={"city": {"kind": "category"}}).fit(mixed_frame)
    with pytest.warns(PrivacyWarning) as warned:
        TableDiscretizer(preprocessing="non-private").fit(mixed_frame)
    messages = " ".join(str(w.message) for w in warned)
    assert "kinds (and datetime units) of columns ['city']" in messages
    assert "exact minimum and maximum of ['age', 'income'" in messages
    disc = TableDiscretizer(random_state=0).fit(mixed_frame, epsilon=5.0, delta=1e-6)
    assert disc.privacy_ledger_.spent()[0] <= 5.0
    assert {"range of 'age': blocks", "range of 'age': cells", "range of 'age': sub-cells",
            "kind of 'city'", "categories of 'city'"} <= set(
                disc.privacy_ledger_.summary()["target"])


def test_private_bounds_cover_the_bulk_of_the_data():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(1000, 100, 20_000)})
    ledger = PrivacyLedger(1.0, 1e-9)
    domain = learn_domain(frame, None, rng=rng, budget=ledger.share(ledger.rho_budget / 2, 1e-10))
    low, high = domain["x"].edges[[0, -1]]
    assert low <= np.quantile(frame["x"], 0.01) and high >= np.quantile(frame["x"], 0.99)
    assert low >= 100 and high <= 5000
    # on the public grid or its sub-cells (50 equal parts of a grid cell)
    for bound in (low, high):
        cell = np.searchsorted(candidate_grid(), bound, side="right") - 1
        left, right = candidate_grid()[cell:cell + 2]
        assert np.isclose((bound - left) / (right - left) * 50, round((bound - left)
                                                                      / (right - left) * 50))
    assert ledger.spent()[0] < 1.0


def test_private_categories_drop_rare_values_into_other():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.choice(["a", "b"], 20_000), ["rare"] * 3])
    frame = pd.DataFrame({"c": values})
    ledger = PrivacyLedger(1.0, 1e-9)
    domain = learn_domain(frame, None, rng=rng, budget=ledger.share(ledger.rho_budget / 2, 5e-10))
    spec = domain["c"]
    assert spec.categories == ["a", "b"] and spec.other
    assert spec.encode(np.array(["rare"], dtype=object))[0] == spec.other_code
    # the delta is the discrete Gaussian's tail at the threshold, within the allowance
    entry = ledger.entries[0]
    k = entry.details["threshold"] - 1
    assert entry.delta == discrete_gaussian_tail(entry.noise_scale, k) <= 5e-10
    assert discrete_gaussian_tail(entry.noise_scale, k - 1) > 5e-10


def test_non_private_keeps_top_categories():
    frame = pd.DataFrame({"c": list("aaaabbbcd")})
    with pytest.warns(PrivacyWarning):
        domain = learn_domain(frame, None, preprocessing="non-private", max_categories=2)
    assert domain["c"].categories == ["a", "b"] and domain["c"].other


def test_learned_columns_reserve_missing_codes_by_dtype():
    frame = pd.DataFrame({"i": np.arange(100), "f": np.arange(100.0)})
    ledger = PrivacyLedger(1.0, 1e-9)
    domain = learn_domain(frame, None, rng=np.random.default_rng(0),
                          budget=ledger.share(ledger.rho_budget / 2, 1e-10))
    assert not domain["i"].missing and domain["f"].missing


def test_check_table_errors():
    with pytest.raises(ValueError, match="2-D"):
        check_table(np.arange(3))
    with pytest.raises(ValueError, match="duplicate"):
        check_table(pd.DataFrame([[1, 2]], columns=["a", "a"]))
    with pytest.raises(ValueError, match="domain names columns not in X"):
        learn_domain(pd.DataFrame({"a": [1]}), {"b": 2})


def test_discretizer_in_a_pipeline_with_a_synthesizer(mixed_frame):
    from sklearn_dpsynth import Domain
    declared = {**MIXED_DOMAIN, "member": [False, True]}
    domain = Domain.from_declaration(declared, n_bins=8, integer_columns=["age"])
    sizes = [domain[column].size for column in mixed_frame.columns]
    pipe = Pipeline([("disc", TableDiscretizer(domain=declared, n_bins=8)),
                     ("synth", IndependentSynthesizer(domain=sizes, random_state=0))])
    pipe.fit(mixed_frame, synth__epsilon=1.0)
    codes = pipe.named_steps["synth"].sample(20)
    rows = pipe.named_steps["disc"].inverse_transform(codes)
    assert list(rows.columns) == list(mixed_frame.columns) and len(rows) == 20


def test_domain_from_public_data_costs_nothing_and_uses_public_edges(mixed_frame):
    from sklearn_dpsynth.preprocessing import domain_from_public_data
    public, private = mixed_frame.iloc[:200], mixed_frame.iloc[200:]
    declaration = domain_from_public_data(public, n_bins=4, strategy="quantile")
    edges = declaration["income"]["edges"]
    np.testing.assert_allclose(edges[[0, -1]], [public["income"].min(), public["income"].max()])
    assert np.sum(public["income"] < edges[2]) == pytest.approx(100, abs=2)  # quantile median
    synth = IndependentSynthesizer(domain=declaration, random_state=0).fit(private, epsilon=1.0)
    assert all(t.startswith("1-way") for t in synth.privacy_ledger_.summary()["target"])
    assert len(synth.sample(10)) == 10
    with pytest.raises(ValueError, match="strategy"):
        domain_from_public_data(public, strategy="magic")
