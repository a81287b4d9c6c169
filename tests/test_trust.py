"""Trust on the tables users bring: neighbouring-table leaks, honest small-table
inference, datetimes and nullable dtypes, seeds and budgets."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth import (DomainInferenceError, DomainInferenceWarning,
                             IndependentSynthesizer, TableDiscretizer)
from sklearn_dpsynth.privacy import check_budget
from sklearn_dpsynth.preprocessing import learn_domain
from sklearn_dpsynth.privacy import PrivacyLedger

from .conftest import make_synthesizer

SECRET = "SECRET-7f3a"


def _neighbours(n=2000, seed=0):
    """D and D' = D plus one row holding a category seen nowhere else."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"city": rng.choice(["Lyon", "Nice", "Paris"], n),
                          "age": rng.integers(18, 80, n)})
    frame["city"] = frame["city"].astype("category")
    extra = pd.DataFrame({"city": [SECRET], "age": [41]})
    neighbour = pd.concat([frame.astype({"city": object}), extra], ignore_index=True)
    neighbour["city"] = neighbour["city"].astype("category")  # categories from the data
    return frame, neighbour


def _quiet_fit(estimator, X, **budget):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        return estimator.fit(X, **budget)


@pytest.mark.parametrize("name", ["independent", "mst"])
def test_categorical_dtype_does_not_leak_a_category_seen_once(name):
    frame, neighbour = _neighbours()
    assert SECRET in neighbour["city"].cat.categories
    fits = [_quiet_fit(make_synthesizer(name, random_state=0), X, epsilon=1.0)
            for X in (frame, neighbour)]
    dtypes = [fit.sample(50)["city"].dtype for fit in fits]
    assert dtypes[0] == dtypes[1]  # same noise: the sample's dtype ignores the extra row
    assert SECRET not in list(dtypes[1].categories)
    assert list(dtypes[1].categories) == ["Lyon", "Nice", "Paris", "<other>"]
    assert SECRET.encode() not in pickle.dumps(fits[1])


def test_declared_categories_restore_the_categorical_dtype():
    frame, _ = _neighbours()
    synth = IndependentSynthesizer(domain={"city": ["Lyon", "Nice", "Paris", "Rome"],
                                           "age": (18, 80)}, random_state=0)
    out = synth.fit(frame, epsilon=1.0).sample(20)
    assert list(out["city"].dtype.categories) == ["Lyon", "Nice", "Paris", "Rome"]
    disc = TableDiscretizer(domain={"city": ["Lyon", "Nice", "Paris"], "age": (18, 80)})
    back = disc.fit(frame).inverse_transform(disc.transform(frame))
    pd.testing.assert_series_equal(back["city"], frame["city"].reset_index(drop=True))


def _raised(fit):
    try:
        fit()
    except Exception as error:  # noqa: BLE001 - the type and message are compared
        return type(error), str(error)
    return None


@pytest.mark.parametrize("extra", [
    {"a": 1.0, "b": 2.5},      # D has an all-missing column; D' does not
    {"a": np.nan, "b": np.nan},
])
def test_no_exception_depends_on_the_neighbour(extra):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.normal(size=300), "b": np.full(300, np.nan)})
    neighbour = pd.concat([frame, pd.DataFrame([extra])], ignore_index=True)
    outcomes = []
    for X in (frame, neighbour):
        synth = IndependentSynthesizer(random_state=0)
        outcomes.append(_raised(lambda: _quiet_fit(synth, X, epsilon=1.0)))
        disc = TableDiscretizer(random_state=0)
        outcomes.append(_raised(lambda: _quiet_fit(disc, X, epsilon=1.0)))
        lenient = IndependentSynthesizer(random_state=0, preprocessing="private-lenient")
        outcomes.append(_raised(lambda: _quiet_fit(lenient, X, epsilon=1.0)))
    # the same noise gives the same decision: the same refusal (its class and
    # message) on D and D', or none under the opt-in
    assert outcomes[:3] == outcomes[3:] and outcomes[2] is None
    assert outcomes[0][0] is DomainInferenceError


def test_all_missing_undeclared_column_gets_its_missing_code():
    frame = pd.DataFrame({"a": np.arange(3000.0) % 50, "b": [None] * 3000})
    with pytest.raises(DomainInferenceError, match=r"\['b'\]"):
        IndependentSynthesizer(random_state=0).fit(frame, epsilon=1.0)
    with pytest.warns(DomainInferenceWarning, match=r"\['b'\]"):
        synth = IndependentSynthesizer(random_state=0, preprocessing="private-lenient").fit(
            frame, epsilon=1.0)
    spec = synth.domain_["b"]
    assert spec.categories == [] and spec.missing
    assert synth.sample(200)["b"].isna().mean() > 0.9


@pytest.mark.parametrize("bad, column", [
    (pd.DataFrame({"x": [2975.0, 4000.0, 4000.0], "c": ["a", "b", "a"]}), "x"),
    (pd.DataFrame({"x": [3500.0, 4000.0, 4100.0], "c": ["a", "zz-private", "a"]}), "c"),
    (pd.DataFrame({"x": ["3500-private", 4000.0, 4100.0], "c": ["a", "b", "a"]}), "x"),
])
def test_domain_violations_name_the_column_never_the_values_nor_their_count(bad, column):
    domain = {"x": (3000, 5000), "c": ["a", "b"]}
    good = pd.DataFrame({"x": [3500.0, 4000.0], "c": ["a", "b"]})
    private_values = {"2975", "zz-private", "3500-private"}
    disc = TableDiscretizer(domain=domain).fit(good)
    synth = IndependentSynthesizer(domain=domain, random_state=0).fit(good, epsilon=1.0)
    for call in (lambda: IndependentSynthesizer(domain=domain).fit(bad, epsilon=1.0),
                 lambda: synth.score(bad), lambda: disc.transform(bad),
                 lambda: TableDiscretizer(domain=domain).fit_transform(bad)):
        with pytest.raises((ValueError, TypeError)) as info:
            call()
        message = str(info.value)
        assert f"column {column!r}" in message and "in some rows" in message
        assert not any(value in message for value in private_values), message
    # tables with one and with two faulty rows get the very same message
    messages = []
    for table in (bad, pd.concat([bad, bad], ignore_index=True)):
        with pytest.raises((ValueError, TypeError)) as info:
            IndependentSynthesizer(domain=domain).fit(table, epsilon=1.0)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_random_state_none_draws_fresh_noise():
    frame, _ = _neighbours(n=3000)  # enough rows that no fresh noise refuses the fit
    fits = [_quiet_fit(IndependentSynthesizer(), frame, epsilon=1.0) for _ in range(2)]
    samples = [fit.sample(200)["age"].to_numpy() for fit in fits]
    assert not np.array_equal(samples[0], samples[1])
    ledgers = [fit.privacy_ledger_ for fit in fits]
    assert ledgers[0].spent() == ledgers[1].spent()
    discs = [_quiet_fit(TableDiscretizer(), frame, epsilon=1.0) for _ in range(2)]
    draws = [d._rng.random(4) for d in discs]
    assert not np.array_equal(draws[0], draws[1])
    noise = [d.privacy_ledger_ for d in discs]
    assert noise[0].spent() == noise[1].spent()
    seeded = [_quiet_fit(IndependentSynthesizer(random_state=3), frame, epsilon=1.0)
              for _ in range(2)]
    pd.testing.assert_frame_equal(seeded[0].sample(50), seeded[1].sample(50))


def test_discretizer_pickle_does_not_hold_the_noise_generator():
    frame, _ = _neighbours(n=500)
    disc = _quiet_fit(TableDiscretizer(random_state=0), frame, epsilon=1.0)
    replay = np.random.default_rng(0)
    assert disc._rng.bit_generator.state != replay.bit_generator.state
    again = _quiet_fit(TableDiscretizer(random_state=0), frame, epsilon=1.0)
    assert disc.domain_.to_dict() == again.domain_.to_dict()


# ----------------------------------------------------------- small tables
def _small_table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(32, 61, n),
                         "income": rng.lognormal(10, 0.5, n),
                         "job": rng.choice(["a", "b", "c", "d", "e", "f"], n)})


def test_small_table_warns_once_naming_the_columns_and_never_invents_bounds():
    frame = _small_table()
    with pytest.raises(DomainInferenceError, match="preprocessing='private-lenient'"):
        IndependentSynthesizer(random_state=0).fit(frame, epsilon=0.3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        synth = IndependentSynthesizer(random_state=0, preprocessing="private-lenient").fit(
            frame, epsilon=0.3)
    inference = [w for w in caught if issubclass(w.category, DomainInferenceWarning)]
    assert len(inference) == 1
    message = str(inference[0].message)
    assert "domain=" in message and "rho=" in message
    named = [c for c in frame.columns if repr(c) in message]
    assert named  # at epsilon=0.3 and 300 rows, some column has no signal
    for column in ("age", "income"):
        low, high = synth.domain_[column].edges[[0, -1]]
        values = frame[column]
        assert low <= values.max() and high >= values.min(), column  # never excludes all
        if column in named:  # fallback: the whole grid, not a guess from noise
            assert low <= -1e10 and high >= 1e10


def test_learned_bounds_overlap_the_truth_over_many_noise_draws():
    frame = _small_table(n=1000)
    ledger_budget = PrivacyLedger(1.0, 1e-9).rho_budget * 0.1
    for seed in range(20):
        ledger = PrivacyLedger(1.0, 1e-9)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DomainInferenceWarning)
            domain = learn_domain(frame[["age"]], None, rng=np.random.default_rng(seed),
                                  budget=ledger.share(ledger_budget, 1e-10))
        low, high = domain["age"].edges[[0, -1]]
        # the decade block [10, 100), or cells of it when they hold the mass; an
        # edge age below the noise (about 35 rows) may be clipped
        inside = frame["age"].between(low, high).mean()
        assert low <= 33 and high >= 59 and inside >= 0.95, (seed, low, high)


def test_bounds_from_a_block_when_no_single_cell_has_signal():
    # 1,000 ages spread over 10..100: each grid cell alone is below 4 sigma,
    # the decade block [10, 100) is far above it.
    frame = pd.DataFrame({"age": np.linspace(10, 99, 1000)})
    ledger = PrivacyLedger(1.0, 1e-9)
    rho = 0.5 / 60.0**2  # noise standard deviation 60 per count
    domain = learn_domain(frame, None, rng=np.random.default_rng(0),
                          budget=ledger.share(rho, 1e-10))
    np.testing.assert_allclose(domain["age"].edges[[0, -1]], [10, 100])
    # blocks (half of the column's rho), cells and the sub-cells of the cells
    # the bounds end in (a quarter each)
    assert [e.target for e in ledger.entries] == [f"range of 'age': {level}" for level in
                                                  ("blocks", "cells", "sub-cells")]
    assert [e.rho for e in ledger.entries] == pytest.approx([rho / 2, rho / 4, rho / 4])


# ------------------------------------------------------- types users have
def _typed_table(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    times = pd.Series(pd.Timestamp("2021-03-01") + pd.to_timedelta(rng.integers(0, 200 * 24, n),
                                                                   unit="h"))
    times[rng.random(n) < 0.1] = pd.NaT
    return pd.DataFrame({
        "naive": times.astype("datetime64[s]"),
        "aware": times.dt.tz_localize("UTC").dt.tz_convert("America/New_York"),
        "flag": pd.array(np.where(rng.random(n) < 0.2, None, rng.random(n) < 0.4),
                         dtype="boolean"),
        "count": pd.array(np.where(rng.random(n) < 0.1, None, rng.integers(0, 9, n)),
                          dtype="Int64"),
        "ratio": pd.array(np.where(rng.random(n) < 0.1, None, rng.random(n)), dtype="Float64"),
        "label": pd.array(rng.choice(["u", "v", None], n), dtype="string"),
        "kind": pd.Categorical(rng.choice(["p", "q", None], n)),
        "obj": pd.Series(rng.choice(["m", "n", None], n), dtype=object),
    })


def test_datetimes_and_nullable_dtypes_round_trip_with_their_dtype():
    frame = _typed_table()
    declared = {"naive": (pd.Timestamp("2021-01-01"), pd.Timestamp("2022-01-01")),
                "aware": {"bounds": ("2021-01-01T00:00:00-05:00", "2022-01-01T00:00:00-05:00"),
                          "missing": True},
                "count": {"bounds": (0, 9), "missing": True},
                "ratio": {"bounds": (0, 1), "missing": True},
                "label": ["u", "v", None], "kind": ["p", "q", None], "obj": ["m", "n", None]}
    declared["naive"] = {"bounds": declared["naive"], "missing": True}
    disc = TableDiscretizer(domain=declared, n_bins=200, bin_value="midpoint")
    back = disc.fit(frame).inverse_transform(disc.transform(frame))
    for column in frame.columns:
        assert back[column].dtype == frame[column].dtype, column
        assert back[column].isna().sum() == frame[column].isna().sum(), column
    assert str(back["aware"].dt.tz) == "America/New_York"
    width = pd.Timedelta(days=365) / 200
    for column in ("naive", "aware"):
        gap = (back[column] - frame[column]).abs().dropna()
        assert gap.max() <= width / 2 + pd.Timedelta(seconds=1), column
    pd.testing.assert_series_equal(back["flag"], frame["flag"])


def test_undeclared_datetimes_are_learned_on_a_year_grid_and_sampled_in_their_dtype():
    frame = _typed_table(n=20_000)
    synth = _quiet_fit(IndependentSynthesizer(random_state=0), frame, epsilon=2.0)
    for column in ("naive", "aware"):
        spec = synth.domain_[column]
        low, high = (pd.Timestamp(v, unit="s", tz="UTC") for v in spec.edges[[0, -1]])
        # the year 2021, narrowed to about a month on each side (200 days from March)
        values = frame[column].dropna().dt.tz_localize(None) if column == "naive" else \
            frame[column].dropna().dt.tz_convert("UTC").dt.tz_localize(None)
        low, high = low.tz_localize(None), high.tz_localize(None)
        assert low.year == 2021 and high.year in (2021, 2022), column
        assert values.between(low, high).mean() >= 0.98, column
        assert values.min() - low <= pd.Timedelta(days=62), column
        assert high - values.max() <= pd.Timedelta(days=62), column
    out = synth.sample(500)
    for column in frame.columns.drop("kind"):
        assert out[column].dtype == frame[column].dtype, column
    assert list(out["kind"].dtype.categories) == ["p", "q", "<other>"]  # learned: an other code
    assert out["aware"].min() >= pd.Timestamp("2021-01-01", tz="UTC")


def test_numpy_bool_columns_need_no_missing_code():
    frame = pd.DataFrame({"b": np.array([True, False] * 50)})
    disc = TableDiscretizer().fit(frame)
    assert not disc.domain_["b"].missing and disc.privacy_ledger_ is None
    assert disc.inverse_transform(disc.transform(frame))["b"].dtype == bool


# ------------------------------------------------------ budget and params
def test_large_delta_warns_and_small_does_not():
    with pytest.warns(UserWarning, match="delta=0.5 is large"):
        check_budget(1.0, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_budget(1.0, 1e-3) == (1.0, 1e-3)


@pytest.mark.parametrize("params, name", [
    ({"preprocessing": "nonprivate"}, "preprocessing"),
    ({"bin_value": "middle"}, "bin_value"),
    ({"n_bins": 1}, "n_bins"),
    ({"max_categories": 0}, "max_categories"),
])
def test_discretizer_rejects_bad_parameters_by_name(params, name):
    frame, _ = _neighbours(n=100)
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        TableDiscretizer(**params).fit(frame, epsilon=1.0)


def test_zero_inflated_column_learned_as_one_cell_is_named_in_the_warning():
    # 90% zeros, the rest spread over decades: at this budget only the cell
    # [0, 0.001) clears the noise (narrowed to its first sub-cell), so every
    # non-zero amount is clipped into it.
    rng = np.random.default_rng(0)
    amount = np.where(rng.random(1000) < 0.9, 0.0, rng.lognormal(7, 1.5, 1000))
    frame = pd.DataFrame({"amount": amount, "age": np.linspace(10, 99, 1000)})
    ledger = PrivacyLedger(1.0, 1e-9)
    with pytest.warns(DomainInferenceWarning, match=r"signal at 0 only.*\['amount'\]"):
        domain = learn_domain(frame, None, rng=np.random.default_rng(1),
                              budget=ledger.share(0.1 * ledger.rho_budget, 1e-10))
    low, high = domain["amount"].edges[[0, -1]]
    assert low == 0 and 0 < high <= 0.001
    assert domain["age"].edges[-1] - domain["age"].edges[0] >= 90
