"""Reading by kind: declared, or chosen privately -- never guessed from the rows.

The kind histogram against a brute-force count, the public rule on known
fractions, neighbouring tables through the CLI reader, DataFrames and
DuckDB, the ledger's "column kinds" share, dates (units, time zones),
durations, unhashable cells and numpy string arrays.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth import IndependentSynthesizer, MSTSynthesizer
from sklearn_dpsynth._column_kinds import (DATE_PATTERN, KIND_CELLS, NUMBER_PATTERN,
                                           ColumnKind, choose_kind, choose_unit, kind_counts,
                                           read_kinds)
from sklearn_dpsynth.cli import main, read_table
from sklearn_dpsynth.domain import spec_from_declaration
from sklearn_dpsynth.exceptions import DomainInferenceWarning, PrivacyWarning


# ------------------------------------------------------------ histogram
def _brute_force_cell(text):
    """The cell of one value by the documented rules, written independently."""
    if text is None:
        return None
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return "integer"
    if re.fullmatch(NUMBER_PATTERN, text):
        return "decimal"
    if not re.fullmatch(DATE_PATTERN, text):
        return "text"
    try:
        stamp = pd.Timestamp(text)
    except ValueError:
        return "text"
    suffix = ""
    if stamp.tzinfo is not None:  # written with an offset: cells of their own
        stamp = stamp.tz_convert("UTC").tz_localize(None)
        suffix = " with offset"
    for unit, start in (("year", stamp.replace(month=1, day=1).normalize()),
                        ("month", stamp.replace(day=1).normalize()),
                        ("day", stamp.normalize()), ("hour", stamp.floor("h")),
                        ("minute", stamp.floor("min")), ("second", stamp.floor("s"))):
        if stamp == start:
            return unit + suffix
    return "finer" + suffix


def test_kind_histogram_counts_every_present_value_in_one_cell():
    values = ["1", " -22 ", "+3", "1.5", "2e3", ".5", "abc", "1,5", "2013-01-01",
              "2013-06-01", "2013-06-07", "2013-06-07 10:00", "2013-06-07T10:30",
              "2013-06-07 10:30:05", "2013-06-07 10:30:05.25", "2013-02-30",
              "2013-01-01T01:00:00+01:00", "2013-06-07Z", None, "NaN-text", 7, 2.5,
              pd.Timestamp("2014-03-01")]
    series = pd.Series(values, dtype=object)
    expected = pd.Series([_brute_force_cell(None if v is None else
                                            v.isoformat() if hasattr(v, "isoformat") else
                                            repr(v) if isinstance(v, float) else str(v))
                          for v in values]).value_counts()
    counts = kind_counts(series)
    assert counts.sum() == len(values) - 1  # the missing value lands nowhere
    for cell, count in zip(KIND_CELLS, counts):
        assert count == expected.get(cell, 0), cell


def test_rule_on_known_fractions():
    def cells(**counts):
        return np.array([counts.get(c, 0.0) for c in KIND_CELLS])

    assert choose_kind(cells(integer=960, text=40), 0.0) == (ColumnKind("integer"), False)
    assert choose_kind(cells(integer=900, decimal=60, text=40), 0.0)[0].kind == "numeric"
    assert choose_kind(cells(integer=940, text=60), 0.0) == (ColumnKind("category"), True)
    assert choose_kind(cells(text=1000), 0.0) == (ColumnKind("category"), False)
    assert choose_kind(cells(month=990, day=10), 0.0)[0] == ColumnKind("datetime", "month")
    assert choose_kind(cells(year=10, month=20, day=970), 0.0)[0].unit == "day"
    assert choose_unit(np.array([0, 0, 0, 0, 0, 0, 100.0])) is None
    # a number kind needs its count above four noise standard deviations
    assert choose_kind(cells(integer=50), 20.0)[0].kind == "category"


def test_a_thousand_dates_are_dates_under_the_kind_noise():
    """A date column fills one of the 14 date cells: the rule reads that cell's
    signal, not the sum of all 14 noisy cells (whose noise, sqrt(14) sigma, hid
    1,461 daily dates at the noise a 6-column CSV of that size gets: about one
    fit in five read them as categories, which then kept nothing)."""
    sigma, rng = 81.7, np.random.default_rng(0)
    exact = np.array([1461.0 if cell == "day" else 0.0 for cell in KIND_CELLS])
    draws = exact + rng.normal(0.0, sigma, (2000, exact.size))
    chosen = [choose_kind(counts, sigma)[0].kind for counts in draws]
    assert chosen.count("datetime") >= 0.99 * len(chosen)
    # pure text of the same noise is almost never read as dates
    text = np.array([300.0 if cell == "text" else 0.0 for cell in KIND_CELLS])
    draws = text + rng.normal(0.0, sigma, (5000, text.size))
    assert sum(choose_kind(c, sigma)[0].kind == "datetime" for c in draws) <= 5


def test_exact_counts_round_no_fraction():
    """On exact counts one fraction makes a column numeric (nothing read is rounded);
    on noisy counts up to 5% of fractions still read as integers."""
    def cells(**counts):
        return np.array([counts.get(c, 0.0) for c in KIND_CELLS])

    assert choose_kind(cells(integer=999, decimal=1), 0.0)[0].kind == "numeric"
    assert choose_kind(cells(integer=970, decimal=30), 1.0)[0].kind == "integer"
    frame = pd.DataFrame({"x": [str(v) for v in range(99)] + ["2.5"]}, dtype=object)
    with pytest.warns(PrivacyWarning):
        read, kinds = read_kinds(frame, {}, budget=None, rng=None,
                                 preprocessing="non-private")
    assert kinds["x"].kind == "numeric"
    assert read["x"].iloc[-1] == 2.5


# ------------------------------------------------------ neighbouring tables
def _csv_table(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    months = pd.date_range("2013-01-01", periods=12, freq="MS").strftime("%Y-%m-%d")
    return pd.DataFrame({"sex": rng.choice(["F", "M", "X"], n),
                         "age": rng.integers(18, 100, n).astype(str),
                         "when": np.asarray(months)[rng.integers(0, 12, n)],
                         "amount": rng.gamma(2.0, 50.0, n).round(2).astype(str)})


def _fit_csv(tmp_path, frame, name, separator=","):
    path = tmp_path / name
    frame.to_csv(path, index=False, sep=separator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        return MSTSynthesizer(random_state=5).fit(read_table(str(path), as_text=True),
                                                  epsilon=20.0)


def _public_view(model):
    """What a release shows about the reading: dtypes, domain sizes, ledger labels."""
    summary = model.privacy_ledger_.summary()
    return (list(map(str, model.sample(50, random_state=0).dtypes)), model.domain_.sizes,
            list(zip(summary["share"], summary["target"])))


@pytest.mark.parametrize("extra", [
    {"sex": "F", "age": "", "when": "2013-05-01", "amount": "10.5"},  # a missing value
    {"sex": "F", "age": "forty", "when": "2013-05-01", "amount": "10.5"},  # text in numbers
    {"sex": "F", "age": "40", "when": "May 2013", "amount": "n/a"},  # text in dates, numbers
    # ISO dates outside datetime64[ns] (pandas parses them at a coarser unit): text
    {"sex": "F", "age": "40", "when": "9999-12-31", "amount": "10.5"},
    {"sex": "F", "age": "40", "when": "0001-01-01T00:00Z", "amount": "10.5"},
    # digits of another script (Python's \\d matches them, no parser reads them): text
    {"sex": "F", "age": "\u0664\u0660", "when": "2013-05-01", "amount": "10.5"},
    # a whole number past the largest float: inf, not an OverflowError quoting it
    {"sex": "F", "age": "9" * 400, "when": "2013-05-01", "amount": "10.5"},
])
def test_csv_neighbours_share_schema_domain_sizes_and_ledger(tmp_path, extra):
    frame = _csv_table()
    neighbour = pd.concat([frame, pd.DataFrame([extra])], ignore_index=True)
    base, other = _fit_csv(tmp_path, frame, "d.csv"), _fit_csv(tmp_path, neighbour, "e.csv")
    assert _public_view(base) == _public_view(other)
    dtypes, sizes, ledger = _public_view(base)
    assert dtypes == ["object", "Int64", "datetime64[ns]", "float64"]
    assert ("column kinds", "kind of 'when'") in ledger
    assert ("domain learning", "range of 'age': blocks") in ledger


@pytest.mark.parametrize("extra", [
    {"sex": "F", "age": "", "when": "2013-05-01", "amount": "10.5"},
    {"sex": "F", "age": "forty", "when": "2013-05-01", "amount": "10.5"},
])
def test_duckdb_path_neighbours_share_schema_domain_sizes_and_ledger(tmp_path, extra):
    frame = _csv_table()
    neighbour = pd.concat([frame, pd.DataFrame([extra])], ignore_index=True)
    views = []
    for name, table in (("d.csv", frame), ("e.csv", neighbour)):
        table.to_csv(tmp_path / name, index=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DomainInferenceWarning)
            model = MSTSynthesizer(random_state=5).fit(str(tmp_path / name), epsilon=20.0)
        views.append(_public_view(model))
    assert views[0] == views[1]


def test_describe_drafts_dates_as_dates(tmp_path, capsys):
    path = tmp_path / "d.csv"
    _csv_table(300).to_csv(path, index=False)
    assert main(["describe", str(path)]) == 0
    entry = json.loads(capsys.readouterr().out)["when"]
    assert entry["bounds"][0].startswith("2013-01-01") and entry["bounds"][1].startswith("2013-12")
    assert spec_from_declaration("when", entry, 8).value_type == "datetime"


def test_dataframe_object_columns_neighbours(tmp_path):
    frame = _csv_table().astype(object)
    neighbour = pd.concat([frame, pd.DataFrame([{"sex": None, "age": "??", "when": None,
                                                 "amount": "3"}])], ignore_index=True)
    views = []
    for table in (frame, neighbour):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DomainInferenceWarning)
            views.append(_public_view(MSTSynthesizer(random_state=2).fit(table, epsilon=20.0)))
    assert views[0] == views[1]


def test_the_kinds_share_is_charged_for_undeclared_text_columns_only():
    frame = _csv_table(400).astype(object)
    typed = pd.DataFrame({"sex": frame["sex"].astype("category"),
                          "age": frame["age"].astype(int)})
    declared = {"sex": ["F", "M", "X"], "age": {"kind": "integer", "bounds": [0, 120]},
                "when": {"kind": "datetime", "bounds": ["2013-01-01", "2013-12-31"],
                         "unit": "month"},
                "amount": {"kind": "numeric", "bounds": [0, 2000]}}
    shares = lambda m: set(m.privacy_ledger_.summary()["share"])  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        # 400 rows at epsilon 1 hold too little to learn domains from: the lenient
        # mode fits anyway, which is what this test needs to see the shares
        mixed = IndependentSynthesizer(random_state=0, preprocessing="private-lenient").fit(
            frame, epsilon=1.0)
        assert "column kinds" in shares(mixed)
        # charged whatever the outcome: a column of text is measured like the others
        assert sum(e.target.startswith("kind of") for e in mixed.privacy_ledger_.entries) == 4
        assert "column kinds" not in shares(IndependentSynthesizer(
            random_state=0, preprocessing="private-lenient").fit(typed, epsilon=1.0))
    assert "column kinds" not in shares(
        IndependentSynthesizer(domain=declared, random_state=0).fit(frame, epsilon=1.0))
    total = mixed.privacy_ledger_.spent()[0]
    assert total == pytest.approx(1.0)


def test_without_budget_the_kinds_must_be_declared():
    frame = pd.DataFrame({"x": ["1", "2"]}, dtype=object)
    with pytest.raises(ValueError, match=r"columns \['x'\] hold text .* declare"):
        read_kinds(frame, {}, budget=None, rng=None)


# ----------------------------------------------------------- file formats
def test_semicolon_csv_with_a_bom_and_tab_separated_files(tmp_path):
    frame = _csv_table(50)
    semicolon, tab = tmp_path / "semi.csv", tmp_path / "tab.tsv"
    semicolon.write_bytes(b"\xef\xbb\xbf" + frame.to_csv(index=False, sep=";").encode())
    tab.write_text(frame.to_csv(index=False, sep="\t"))
    for path in (semicolon, tab):
        read = read_table(str(path), as_text=True)
        assert list(read.columns) == list(frame.columns)
        assert (read.dtypes == object).all()
        pd.testing.assert_frame_equal(read, frame.astype(object), check_dtype=False)


@pytest.mark.parametrize("header, message", [
    ("a,b,a", r"repeats column names \('a' at positions \[1, 3\]\)"),
    ("a,,c", r"empty column name at position\(s\) \[2\]"),
])
def test_repeated_or_empty_header_names_are_errors(tmp_path, capsys, header, message):
    path = tmp_path / "bad.csv"
    path.write_text(header + "\n1,2,3\n4,5,6\n")
    assert main(["fit", str(path), "--epsilon", "1", "-o", str(tmp_path / "m.dpsynth")]) == 1
    assert re.search(message, capsys.readouterr().err)
    with pytest.raises(ValueError, match=message):
        IndependentSynthesizer().fit(str(path), epsilon=1.0)  # the DuckDB path


# ----------------------------------------------------------------- dates
def test_dates_from_the_cli_come_back_as_dates_in_the_real_span(tmp_path, capsys):
    frame = _csv_table(3000)
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    domain = tmp_path / "domain.json"
    domain.write_text('{"when": {"kind": "datetime", "bounds": ["2013-01-01", "2013-12-31"], '
                      '"unit": "month"}}')
    for extra in ([], ["--domain", str(domain)]):
        model = tmp_path / "m.dpsynth"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DomainInferenceWarning)
            assert main(["fit", str(data), "--method", "independent", "--epsilon", "20",
                         "--random-state", "0", "--quiet", "-o", str(model), *extra]) == 0
        out = tmp_path / "out.csv"
        assert main(["sample", str(model), "-n", "400", "-o", str(out)]) == 0
        when = pd.to_datetime(pd.read_csv(out)["when"].dropna(), format="ISO8601")
        assert when.between(pd.Timestamp("2013-01-01"), pd.Timestamp("2013-12-31")).all()
        assert (when == when.dt.to_period("M").dt.to_timestamp()).all()  # first of a month
    capsys.readouterr()


def test_units_floor_decoded_dates_and_the_time_zone_is_kept():
    rng = np.random.default_rng(1)
    days = pd.date_range("2020-01-01", "2020-12-31", freq="D")
    text = pd.Series(np.asarray(days.strftime("%Y-%m-%d"))[rng.integers(0, 366, 2000)],
                     dtype=object)
    for unit, tz in (("day", None), ("month", "Europe/Paris"), ("hour", "America/New_York")):
        domain = {"d": {"kind": "datetime", "bounds": ["2020-01-01", "2020-12-31"],
                        "unit": unit, **({"tz": tz} if tz else {})}}
        model = IndependentSynthesizer(domain=domain, random_state=0).fit(
            pd.DataFrame({"d": text}), epsilon=5.0)
        out = model.sample(500, random_state=0)["d"]
        assert str(out.dt.tz) == str(tz) if tz else out.dt.tz is None
        wall = out.dt.tz_localize(None) if tz else out
        start = {"day": wall.dt.normalize(), "hour": wall.dt.floor("h"),
                 "month": wall.dt.to_period("M").dt.to_timestamp()}[unit]
        assert (wall == start).all()
        assert wall.min() >= pd.Timestamp("2020-01-01")


def test_learned_daily_dates_decode_to_midnight():
    rng = np.random.default_rng(3)
    days = pd.date_range("2019-01-01", periods=400, freq="D").strftime("%Y-%m-%d")
    frame = pd.DataFrame({"d": np.asarray(days)[rng.integers(0, 400, 4000)]}, dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        model = IndependentSynthesizer(random_state=0).fit(frame, epsilon=10.0)
    assert model.domain_["d"].unit == "day" and model.domain_["d"].value_type == "datetime"
    out = model.sample(300, random_state=0)["d"]
    assert out.dtype == np.dtype("datetime64[ns]") and (out == out.dt.normalize()).all()


def test_datetime_bounds_in_messages_are_iso_dates():
    model = IndependentSynthesizer(
        domain={"d": (pd.Timestamp("2013-01-01"), pd.Timestamp("2013-12-31"))},
        random_state=0).fit(pd.DataFrame({"d": pd.to_datetime(["2013-02-01", "2013-03-01"])}),
                            epsilon=1.0)
    with pytest.raises(ValueError, match=r"\[2013-01-01, 2013-12-31\]"):
        model.score(pd.DataFrame({"d": pd.to_datetime(["2015-01-01"])}))


# ------------------------------------------------------------ other types
def test_timedelta_round_trips_as_a_duration():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"wait": pd.to_timedelta(rng.integers(0, 48, 2000), unit="h")})
    model = IndependentSynthesizer(domain={"wait": {"kind": "timedelta",
                                                    "bounds": ["0h", "48h"]}},
                                   random_state=0).fit(frame, epsilon=5.0)
    out = model.sample(300, random_state=0)["wait"]
    assert out.dtype == frame["wait"].dtype and out.dtype.kind == "m"
    assert out.between(pd.Timedelta(0), pd.Timedelta(hours=48)).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        learned = IndependentSynthesizer(random_state=0).fit(frame, epsilon=5.0)
    assert learned.sample(5)["wait"].dtype == frame["wait"].dtype
    text = pd.DataFrame({"wait": frame["wait"].astype(str).astype(object)})
    from_text = IndependentSynthesizer(domain={"wait": {"kind": "timedelta",
                                                        "bounds": ["0h", "48h"]}},
                                       random_state=0).fit(text, epsilon=5.0)
    assert from_text.sample(5)["wait"].dtype.kind == "m"


def test_list_cells_are_an_error_naming_the_column_not_the_value():
    frame = pd.DataFrame({"ok": ["a", "b"], "tags": [["secret-tag"], ["x"]]})
    with pytest.raises(TypeError, match="column 'tags' holds lists") as error:
        IndependentSynthesizer(random_state=0).fit(frame, epsilon=1.0)
    assert "secret" not in str(error.value)


@pytest.mark.parametrize("width", [1, 11])
def test_numpy_strings_come_back_as_objects_with_other_intact(width):
    rng = np.random.default_rng(0)
    values = np.array(["a", "b", "c"] * 300 + ["rare-value"[:width]], dtype=f"<U{width}")
    array = np.stack([values, rng.permutation(values)], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        model = IndependentSynthesizer(max_categories=2, random_state=0).fit(array,
                                                                             epsilon=5.0)
    out = model.sample(2000, random_state=0)
    assert out.dtype == np.dtype(object)
    assert "<other>" in set(out[:, 0])


def test_duckdb_path_reads_like_the_cli(tmp_path):
    frame = _csv_table(800)
    path = tmp_path / "t.csv"
    path.write_text(frame.to_csv(index=False, sep=";"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        engine = MSTSynthesizer(random_state=1).fit(str(path), epsilon=10.0)
        memory = MSTSynthesizer(random_state=1).fit(read_table(str(path), as_text=True),
                                                    epsilon=10.0)
    assert engine.domain_.to_dict() == memory.domain_.to_dict()
    pd.testing.assert_frame_equal(engine.privacy_ledger_.summary(),
                                  memory.privacy_ledger_.summary())
    pd.testing.assert_frame_equal(engine.sample(200, random_state=0),
                                  memory.sample(200, random_state=0))


def test_numpy_string_neighbours_share_dtype_sizes_and_ledger():
    """D holds one-letter strings (``<U1``); D' one more row of eleven letters
    (``<U11``) and one of a number: what the release shows is the same."""
    rng = np.random.default_rng(4)
    base = np.stack([rng.choice(list("abc"), 3000), rng.integers(0, 9, 3000).astype("<U1")],
                    axis=1)
    neighbour = np.concatenate([base, np.array([["abcdefghijk", "x"]])])
    assert base.dtype != neighbour.dtype
    views = []
    for array in (base, neighbour):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DomainInferenceWarning)
            model = IndependentSynthesizer(random_state=0).fit(array, epsilon=10.0)
        summary = model.privacy_ledger_.summary()
        views.append((model.sample(20, random_state=0).dtype, model.domain_.sizes,
                      list(summary["target"])))
    assert views[0] == views[1] and views[0][0] == np.dtype(object)


def test_whole_numbers_written_with_a_decimal_point_read_as_integers(tmp_path):
    """pandas writes an integer column with missing values as ``12.0``: a
    declared integer column (and the kind histogram) reads those as whole
    numbers, while ``12.5`` is still refused."""
    assert kind_counts(pd.Series(["12.0", "-3.", "7", "1.50", None], dtype=object))[:2].tolist() \
        == [3, 1]
    frame = pd.DataFrame({"n": ["12.0", "-3.", "7", None] * 50}, dtype=object)
    declared = {"n": {"kind": "integer", "bounds": [-10, 20], "missing": True}}
    model = IndependentSynthesizer(domain=declared, random_state=0).fit(frame, epsilon=5.0)
    values = model.sample(100, random_state=0)["n"].dropna()
    assert set(values.astype(int)) <= {-3, 7, 12} | set(range(-10, 21))
    bad = pd.DataFrame({"n": ["12.5", "7"] * 50}, dtype=object)
    with pytest.raises(ValueError, match=r"'n' is declared 'integer'.*1 row|'n' is declared 'integer'"):
        IndependentSynthesizer(domain=declared, random_state=0).fit(bad, epsilon=5.0)


def test_values_dropped_by_a_chosen_kind_are_named():
    """Text in a column chosen numeric becomes missing: the column is named in a
    DomainInferenceWarning (from the released counts); a clean column is not."""
    frame = pd.DataFrame({"x": [str(v) for v in range(99)] + ["unknown"],
                          "y": [str(v) for v in range(100)]}, dtype=object)
    with pytest.warns(PrivacyWarning), pytest.warns(DomainInferenceWarning) as caught:
        read, kinds = read_kinds(frame, {}, budget=None, rng=None,
                                 preprocessing="non-private")
    assert kinds["x"].kind == "integer" and pd.isna(read["x"].iloc[-1])
    named = [str(w.message) for w in caught if w.category is DomainInferenceWarning]
    assert len(named) == 1 and "['x']" in named[0] and "'y'" not in named[0]


def test_a_declared_date_outside_the_datetime_range_is_an_error_without_its_value():
    frame = pd.DataFrame({"when": pd.Series(["2013-05-01"] * 20 + ["9999-12-31"], dtype=object)})
    with pytest.raises(ValueError, match="'when' is declared 'datetime'") as caught:
        read_kinds(frame, {"when": {"kind": "datetime", "unit": "day"}}, budget=None, rng=None,
                   preprocessing="non-private")
    assert "9999" not in str(caught.value)


@pytest.mark.parametrize("value, tz", [("2262-04-11 23:00", "America/New_York"),
                                       ("1677-09-21 00:30", "Asia/Tokyo")])
def test_a_wall_clock_near_the_ends_of_the_range_in_a_zone_never_raises_its_value(value, tz):
    """A text date whose wall clock in the declared zone is an instant outside
    ``datetime64[ns]`` is not a date, as in DuckDB: one such row gives the
    declared-kind error naming the column, never pandas' overflow quoting it,
    and the table without it fits."""
    days = pd.date_range("2020-01-01", periods=300, freq="D").strftime("%Y-%m-%d %H:%M")
    frame = pd.DataFrame({"when": list(days)}, dtype=object)
    declared = {"when": {"kind": "datetime", "tz": tz, "unit": "day"}}
    IndependentSynthesizer(random_state=0, domain=declared).fit(frame, epsilon=1.0)
    neighbour = pd.concat([frame, pd.DataFrame({"when": [value]}, dtype=object)],
                          ignore_index=True)
    with pytest.raises(ValueError, match="column 'when' is declared 'datetime'") as error:
        IndependentSynthesizer(random_state=0, domain=declared).fit(neighbour, epsilon=1.0)
    assert value[:4] not in str(error.value)


@pytest.mark.parametrize("value", ["2262-04-12", "2262-04-11 23:00Z"])
def test_a_date_whose_wall_clock_in_the_zone_leaves_the_range_counts_as_in_duckdb(value):
    """An instant inside ``datetime64[ns]`` whose wall clock in the zone is past its
    end is counted (by that wall clock's unit, as DuckDB does), never an overflow
    quoting it."""
    duckdb = pytest.importorskip("duckdb")
    from sklearn_dpsynth.backends import open_source

    frame = pd.DataFrame({"when": ["2020-01-01", value, "x"]}, dtype=object)
    memory = kind_counts(frame["when"], "Europe/Paris")
    engine = open_source(duckdb.connect().from_df(frame)).kind_counts_many(
        {"when": "Europe/Paris"})["when"]
    np.testing.assert_array_equal(memory, engine)
    assert memory[3:].sum() == 2


def test_an_instant_whose_zone_wall_clock_passes_2262_encodes_without_its_value():
    """A tz-aware column is encoded from its UTC instants: an instant inside
    ``datetime64[ns]`` whose wall clock in the column's zone is past its end
    (one row of D') fits like D, never pandas' overflow quoting the value."""
    days = list(pd.date_range("2020-01-01", periods=300, freq="D").strftime("%Y-%m-%d %H:%M"))
    declared = {"when": {"kind": "datetime", "tz": "Europe/Paris"}}
    for rows in (days, days + ["2262-04-11 23:00Z"]):
        frame = pd.DataFrame({"when": rows}, dtype=object)
        model = IndependentSynthesizer(random_state=0, domain=declared).fit(frame, epsilon=1.0)
        assert str(model.sample(20)["when"].dtype) == "datetime64[ns, Europe/Paris]"


def test_a_typed_instant_whose_zone_wall_clock_passes_2262_counts_by_its_unit():
    """The unit histogram of a tz-aware ``datetime64[ns]`` column is read on its
    zone's wall clock without overflowing at 2262 (no exception quoting the
    value); nanoseconds past the microsecond still count as finer than a second."""
    from sklearn_dpsynth._column_kinds import datetime_counts

    stamps = pd.Series(pd.to_datetime(["2020-01-01 00:00", "2262-04-11 23:00",
                                       "2020-01-01 00:00:00.000000500"], utc=True,
                                     format="ISO8601"))
    stamps = stamps.dt.as_unit("ns").dt.tz_convert("Europe/Paris")
    counts = datetime_counts(stamps, "Europe/Paris")
    assert counts[3 + 3] == 2 and counts[3 + 6] == 1  # Paris: 01:00 twice (hours), then finer


@pytest.mark.parametrize("value", ["2020-06-01 24:00", "2020-06-01T24:00:00Z"])
def test_hour_24_is_text_on_duckdb_as_in_memory(value):
    """``24:00`` is no date in memory (pandas) or Spark; DuckDB's cast reads it as the
    next midnight, so the public date rule refuses the hour before any engine
    parses: one such row lands in the same kind cell (text) everywhere."""
    duckdb = pytest.importorskip("duckdb")
    from sklearn_dpsynth.backends import open_source

    frame = pd.DataFrame({"when": ["2020-01-01", value]}, dtype=object)
    memory = kind_counts(frame["when"])
    engine = open_source(duckdb.connect().from_df(frame)).kind_counts_many(
        {"when": None})["when"]
    np.testing.assert_array_equal(memory, engine)
    assert memory[KIND_CELLS.index("text")] == 1


@pytest.mark.parametrize("tz", [None, "Europe/Paris"])
def test_nanoseconds_past_the_microsecond_are_finer_on_duckdb_as_in_memory(tz):
    """Memory reads text dates to the nanosecond (``.000000500`` past 10:00 is finer
    than a second); DuckDB's cast keeps microseconds, so it would count the hour.
    The public rule puts such a date in the finer cell on both, with or without
    an offset; six digits (or trailing zeros) keep their unit."""
    duckdb = pytest.importorskip("duckdb")
    from sklearn_dpsynth.backends import open_source

    values = ["2020-06-01 10:00:00.000000500", "2020-06-01T10:00:00.0000005Z",
              "2020-06-01 10:00:00.000000000", "2020-06-01 10:00:00.123456",
              "2020-06-01 10:00:00.1234560", "2020-06-01 10:00:00.000000"]
    frame = pd.DataFrame({"when": values}, dtype=object)
    memory = kind_counts(frame["when"], tz)
    engine = open_source(duckdb.connect().from_df(frame)).kind_counts_many(
        {"when": tz})["when"]
    np.testing.assert_array_equal(memory, engine)
    assert memory[KIND_CELLS.index("finer")] == 3
    assert memory[KIND_CELLS.index("finer with offset")] == 1
