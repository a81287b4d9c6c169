"""Dates keep their unit and zone: bins on unit starts, offsets read, typed units learned."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth import IndependentSynthesizer
from sklearn_dpsynth._column_kinds import KIND_CELLS, choose_kind, kind_counts
from sklearn_dpsynth.cli import main, read_table
from sklearn_dpsynth.domain import INTEGER_RESOLUTION_MAX, spec_from_declaration
from sklearn_dpsynth.exceptions import DomainInferenceWarning

MONTHLY = {"kind": "datetime", "bounds": ["2013-01-01", "2013-12-01"], "unit": "month"}
MONTHS = pd.date_range("2013-01-01", periods=12, freq="MS")


def _monthly(n=12_000, seed=0):
    """Every month of 2013 equally often (exactly n / 12 rows each)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"when": np.repeat(MONTHS, n // 12)[rng.permutation(n)],
                         "flag": rng.choice(["a", "b"], n)})


def _month_shares(values) -> pd.Series:
    stamps = pd.Series(pd.to_datetime(pd.Series(values)))
    assert stamps.notna().all()
    assert (stamps == stamps.dt.to_period("M").dt.to_timestamp()).all()  # first of a month
    assert stamps.min() >= MONTHS[0] and stamps.max() <= MONTHS[-1]  # inside the bounds
    return stamps.value_counts(normalize=True).reindex(MONTHS, fill_value=0.0)


# ------------------------------------------------------------------ bins
def _starts(spec):
    return pd.to_datetime(spec.edges, unit="s")


def test_month_unit_gives_one_bin_per_month_last_one_included():
    spec = spec_from_declaration("when", MONTHLY, n_bins=32)
    assert spec.n_bins == 12
    assert list(_starts(spec)) == list(pd.date_range("2013-01-01", periods=13, freq="MS"))
    # every bin's uniform draw is its own month start; "midpoint" too
    rng = np.random.default_rng(0)
    for bin_value in ("uniform", "midpoint"):
        decoded = spec.decode(np.arange(12), rng, bin_value)
        assert list(pd.to_datetime(decoded, unit="s")) == list(MONTHS)


def test_month_starts_are_local_in_the_declared_zone_across_dst():
    spec = spec_from_declaration("when", {**MONTHLY, "tz": "America/New_York"}, n_bins=32)
    local = pd.to_datetime(spec.edges, unit="s", utc=True).tz_convert("America/New_York")
    assert spec.n_bins == 12
    assert (local == local.normalize()).all() and (local.day == 1).all()
    assert len(set(np.diff(spec.edges) % 86400)) > 1  # DST months are not whole UTC days


def test_daily_unit_over_three_years_groups_whole_days_below_the_cap():
    spec = spec_from_declaration(
        "when", {"kind": "datetime", "bounds": ["2013-01-01", "2015-12-31"], "unit": "day"},
        n_bins=32)
    n_days = (pd.Timestamp("2016-01-01") - pd.Timestamp("2013-01-01")).days
    assert n_days > INTEGER_RESOLUTION_MAX and spec.n_bins <= 32
    edges = _starts(spec)
    assert (edges == edges.normalize()).all()  # no bin straddles a day
    assert edges[0] == pd.Timestamp("2013-01-01") and edges[-1] == pd.Timestamp("2016-01-01")
    rng = np.random.default_rng(1)
    codes = rng.integers(0, spec.n_bins, 5000)
    for bin_value in ("uniform", "midpoint"):
        decoded = spec.decode(codes, rng, bin_value)
        stamps = pd.to_datetime(decoded, unit="s")
        assert (stamps == stamps.normalize()).all()
        assert stamps.min() >= pd.Timestamp("2013-01-01")
        assert stamps.max() <= pd.Timestamp("2015-12-31")
        np.testing.assert_array_equal(spec.encode(decoded), codes)  # flooring moves no mass
    # uniform draws reach every day of a bin, and only those
    one_bin = spec.decode(np.zeros(20_000, dtype=int), rng, "uniform")
    days = np.unique(pd.to_datetime(one_bin, unit="s"))
    assert len(days) == (edges[1] - edges[0]).days


# ------------------------------------------------- fidelity, CLI and frame
def _check_uniform_months(rows):
    shares = _month_shares(rows["when"])
    assert len(shares) == 12
    np.testing.assert_allclose(shares.to_numpy(), 1 / 12, atol=0.02)


def test_monthly_dates_through_a_dataframe_fit_keep_every_month():
    model = IndependentSynthesizer(domain={"when": MONTHLY}, random_state=0)
    model.fit(_monthly(), epsilon=50.0, delta=1e-6)
    assert model.domain_["when"].n_bins == 12
    _check_uniform_months(model.sample(24_000, random_state=1))


def test_monthly_dates_through_the_cli_keep_every_month(tmp_path):
    data, domain = tmp_path / "data.csv", tmp_path / "domain.json"
    frame = _monthly()
    frame.assign(when=frame["when"].dt.strftime("%Y-%m-%d")).to_csv(data, index=False)
    domain.write_text(json.dumps({"when": MONTHLY}))
    model, rows = tmp_path / "model.dpsynth", tmp_path / "rows.csv"
    assert main(["fit", str(data), "--method", "independent", "--epsilon", "50", "--delta",
                 "1e-6", "--domain", str(domain), "--random-state", "0", "-o", str(model)]) == 0
    assert main(["sample", str(model), "-n", "24000", "-o", str(rows)]) == 0
    _check_uniform_months(pd.read_csv(rows))


def test_a_learned_unit_rebuilds_the_bins_on_its_starts():
    """Undeclared monthly text: the unit is learned privately, and the privately
    learned range gets one bin per month (no sub-month values, no empty month)."""
    frame = _monthly()
    frame["when"] = frame["when"].dt.strftime("%Y-%m-%d").astype(object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        model = IndependentSynthesizer(random_state=0).fit(frame, epsilon=50.0, delta=1e-6)
    spec = model.domain_["when"]
    assert spec.unit == "month" and spec.n_bins == 12
    _check_uniform_months(model.sample(24_000, random_state=1))


# ----------------------------------------------------------------- offsets
def _offset_csv(tmp_path, n=600):
    stamps = pd.Series(pd.date_range("2013-01-01 05:00", periods=n, freq="7h", tz="UTC"))
    path = tmp_path / "offsets.csv"
    pd.DataFrame({"at": stamps.astype(str), "x": np.arange(n) % 3}).to_csv(path, index=False)
    assert pd.read_csv(path)["at"].iloc[0] == "2013-01-01 05:00:00+00:00"
    return path


def test_read_table_keeps_utc_offsets_and_describe_drafts_the_zone(tmp_path, capsys):
    path = _offset_csv(tmp_path)
    frame = read_table(str(path))
    assert str(frame["at"].dt.tz) == "UTC"
    assert frame["at"].iloc[0] == pd.Timestamp("2013-01-01 05:00", tz="UTC")
    assert main(["describe", str(path)]) == 0
    entry = json.loads(capsys.readouterr().out)["at"]
    assert entry["kind"] == "datetime" and entry["tz"] == "UTC"


def test_offset_cells_and_the_rule():
    series = pd.Series(["2013-01-01 05:00:00+00:00", "2013-02-01T00:00Z", "2013-03-01",
                        "2013-03-02 01:00:00+01:00"], dtype=object)
    counts = dict(zip(KIND_CELLS, kind_counts(series)))
    assert counts["hour with offset"] == 1 and counts["month with offset"] == 1
    assert counts["month"] == 1 and counts["day with offset"] == 1
    kind, _ = choose_kind(kind_counts(series), 0.0)
    assert (kind.kind, kind.unit, kind.tz) == ("datetime", "hour", "UTC")
    kind, _ = choose_kind(kind_counts(series.iloc[2:3]), 0.0)
    assert kind.tz is None  # naive dates stay naive


def test_fit_reads_offset_dates_as_utc_and_a_declared_zone_converts(tmp_path):
    frame = read_table(str(_offset_csv(tmp_path)), as_text=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        learned = IndependentSynthesizer(random_state=0).fit(frame, epsilon=20.0)
        declared = IndependentSynthesizer(
            domain={"at": {"kind": "datetime", "tz": "Europe/Paris"}},
            random_state=0).fit(frame, epsilon=20.0)
    assert learned.domain_["at"].tz == "UTC" and learned.domain_["at"].unit == "hour"
    assert str(learned.sample(50, random_state=0)["at"].dt.tz) == "UTC"
    assert declared.domain_["at"].tz == "Europe/Paris"
    assert str(declared.sample(50, random_state=0)["at"].dt.tz) == "Europe/Paris"


# ------------------------------------------------------------- typed units
def test_typed_monthly_datetime64_learns_its_unit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        model = IndependentSynthesizer(random_state=0).fit(_monthly(), epsilon=50.0,
                                                           delta=1e-6)
    spec = model.domain_["when"]
    assert spec.unit == "month" and spec.n_bins == 12
    assert "kind of 'when'" in list(model.privacy_ledger_.summary()["target"])
    _check_uniform_months(model.sample(24_000, random_state=1))


def test_typed_datetime_neighbours_share_the_ledger_labels():
    """D and D' (one added row off the month grid): the same ledger lines and
    domain sizes; only noisy values may differ."""
    frame = _monthly(n=1200)
    neighbour = pd.concat([frame, pd.DataFrame({"when": [pd.Timestamp("2013-05-17 13:45:12.5")],
                                                "flag": ["a"]})], ignore_index=True)

    def view(table):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DomainInferenceWarning)
            model = IndependentSynthesizer(random_state=3).fit(table, epsilon=5.0)
        summary = model.privacy_ledger_.summary()
        return list(zip(summary["share"], summary["target"], summary["mechanism"]))

    lines = view(frame)
    assert ("column kinds", "kind of 'when'", "gaussian") in lines  # measured on both
    assert lines == view(neighbour)


@pytest.mark.parametrize("extra", ["9999-12-31", "0001-01-01"])
def test_a_date_outside_nanoseconds_in_a_microsecond_column_changes_nothing_public(extra):
    """D and D' (one added row of a year pandas holds only in microseconds): the
    fit does not raise (an exception would name that row's date), and the
    ledger lines, domain sizes and learned bounds are those of D (the row falls
    in the outermost year cell, below the noise)."""
    frame = _monthly(n=1200).astype({"when": "datetime64[us]"})
    row = pd.DataFrame({"when": pd.Series([pd.Timestamp(extra)]).astype("datetime64[us]"),
                        "flag": ["a"]})
    neighbour = pd.concat([frame, row], ignore_index=True)

    def view(table):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DomainInferenceWarning)
            model = IndependentSynthesizer(random_state=3).fit(table, epsilon=5.0)
        summary = model.privacy_ledger_.summary()
        return (list(zip(summary["share"], summary["target"], summary["mechanism"])),
                model.domain_.sizes, str(model.sample(20, random_state=0)["when"].dtype))

    assert view(frame) == view(neighbour)


def test_typed_datetime_unit_needs_signal():
    """A handful of rows at a small budget: the unit's counts are noise, so no
    unit is claimed (values are not floored to a noise-chosen unit)."""
    frame = _monthly(n=24)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        model = IndependentSynthesizer(preprocessing="private-lenient",
                                       random_state=0).fit(frame, epsilon=0.1)
    assert model.domain_["when"].unit is None


@pytest.mark.parametrize("seed, tz", [(0, None), (1, "UTC")])
def test_typed_datetime_unit_same_on_duckdb(tmp_path, seed, tz):
    duckdb = pytest.importorskip("duckdb")
    frame = _monthly(n=2400, seed=seed)
    if tz is not None:  # a TIMESTAMP WITH TIME ZONE column
        frame["when"] = frame["when"].dt.tz_localize(tz)
    path = tmp_path / "t.parquet"
    con = duckdb.connect()
    con.register("frame_view", frame)
    con.execute(f"COPY (SELECT * FROM frame_view) TO '{path}' (FORMAT parquet)")
    con.close()
    # 'flag' is a Parquet VARCHAR (typed text) but an untyped str/object column in memory
    declared = {"flag": {"kind": "category"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        memory = IndependentSynthesizer(random_state=seed, domain=declared).fit(frame, epsilon=5.0)
        engine = IndependentSynthesizer(random_state=seed, domain=declared).fit(str(path),
                                                                                epsilon=5.0)
    assert memory.domain_["when"].unit == "month"
    assert engine.domain_.to_dict() == memory.domain_.to_dict()
    pd.testing.assert_frame_equal(engine.privacy_ledger_.summary(),
                                  memory.privacy_ledger_.summary())


def test_a_declared_zone_of_a_typed_datetime_column_same_on_duckdb(tmp_path):
    """A typed datetime column declared ``{"kind": "datetime", "tz": ...}`` without
    a unit: the engine reads the zone from the declaration, as the DataFrame
    path does.  Naive values (a wall clock of no zone) declared in a zone are
    refused on both, naming the column (read as UTC they would silently sit
    hours off the declared zone's bounds and units); localized, both agree."""
    pytest.importorskip("duckdb")
    frame = _monthly(n=2400)
    declared = {"when": {"kind": "datetime", "tz": "Europe/Paris"},
                "flag": {"kind": "category"}}
    messages = []
    for table in (frame, _parquet(tmp_path / "naive.parquet", frame)):
        with pytest.raises(ValueError, match=r"column 'when' holds datetimes without a time "
                                             r"zone .*tz='Europe/Paris'") as error:
            IndependentSynthesizer(random_state=0, domain=declared).fit(table, epsilon=5.0)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    # in microseconds: DuckDB reads pandas 2's nanosecond zoned Parquet as TIMESTAMPTZ_NS
    frame["when"] = frame["when"].dt.tz_localize("Europe/Paris").dt.as_unit("us")
    path = _parquet(tmp_path / "t.parquet", frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        memory = IndependentSynthesizer(random_state=0, domain=declared).fit(frame, epsilon=5.0)
        engine = IndependentSynthesizer(random_state=0, domain=declared).fit(path, epsilon=5.0)
    assert memory.domain_["when"].tz == "Europe/Paris"
    assert engine.domain_["when"].tz == memory.domain_["when"].tz
    assert engine.domain_["when"].unit == memory.domain_["when"].unit == "month"
    np.testing.assert_array_equal(engine.domain_["when"].edges, memory.domain_["when"].edges)


def _parquet(path, frame) -> str:
    frame.to_parquet(path)
    return str(path)


def test_offset_csv_reads_the_same_on_duckdb(tmp_path):
    pytest.importorskip("duckdb")
    path = _offset_csv(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        memory = IndependentSynthesizer(random_state=0).fit(read_table(str(path), as_text=True),
                                                            epsilon=20.0)
        engine = IndependentSynthesizer(random_state=0).fit(str(path), epsilon=20.0)
    assert engine.domain_["at"].tz == "UTC"
    assert engine.domain_.to_dict() == memory.domain_.to_dict()
    pd.testing.assert_frame_equal(engine.privacy_ledger_.summary(),
                                  memory.privacy_ledger_.summary())
    pd.testing.assert_frame_equal(engine.sample(200, random_state=0),
                                  memory.sample(200, random_state=0))


def test_a_saved_model_keeps_its_unit_bins(tmp_path):
    from sklearn_dpsynth import load, save

    frame = _monthly(n=2400)
    frame["when"] = frame["when"].dt.tz_localize("Europe/Paris")
    model = IndependentSynthesizer(domain={"when": {**MONTHLY, "tz": "Europe/Paris"}},
                                   random_state=0).fit(frame, epsilon=20.0)
    save(model, tmp_path / "model.dpsynth")
    loaded = load(tmp_path / "model.dpsynth")
    np.testing.assert_array_equal(loaded.domain_["when"].edges, model.domain_["when"].edges)
    rows = loaded.sample(500, random_state=0)
    local = rows["when"].dt.tz_convert("Europe/Paris")
    assert str(rows["when"].dt.tz) == "Europe/Paris"
    assert (local == local.dt.normalize()).all() and (local.dt.day == 1).all()
    pd.testing.assert_frame_equal(rows, model.sample(500, random_state=0))
