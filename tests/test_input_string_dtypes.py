"""Text columns in every pandas text dtype read alike, and time zones of naive datetimes.

``pandas.read_csv`` gives ``str`` columns from pandas 3 on (``object`` before):
a column of text is untyped whatever pandas called it, so ``object``, ``str``,
``string`` (python or pyarrow storage) and an ``ArrowDtype`` string get the
same private kind choice, casting, domain, ledger and seeded samples.  The
tests build their tables so that they hold under pandas 2 and 3.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth import MSTSynthesizer, TableDiscretizer, describe_domain
from sklearn_dpsynth._column_kinds import KIND_SHARE, annotate_domain, is_text, read_kinds
from sklearn_dpsynth._domain_learning import learn_domain
from sklearn_dpsynth.exceptions import DomainInferenceWarning, PrivacyWarning
from sklearn_dpsynth.privacy import PrivacyLedger, epsilon_to_rho


#: pandas' ``str`` dtype (pandas 3's text default); before pandas 3, ``astype("str")``
#: gives objects and writes missing values as the text "None" or "nan".
STR = "str" if isinstance(pd.api.types.pandas_dtype("str"), pd.StringDtype) else None


def _text_dtypes() -> list:
    """Every text dtype this pandas has: object, ``str`` (pandas 3), the nullable
    ``string`` in both storages, and pyarrow's string."""
    dtypes = [np.dtype(object), *([STR] if STR else []), pd.StringDtype("python")]
    try:
        import pyarrow as pa
    except ImportError:
        return dtypes
    return dtypes + [pd.StringDtype("pyarrow"), pd.ArrowDtype(pa.string()),
                     pd.ArrowDtype(pa.large_string())]


TEXT_DTYPES = _text_dtypes()


def _dtype_id(dtype) -> str:
    return repr(dtype) if isinstance(dtype, pd.StringDtype) else str(dtype)


def _text_table(n: int = 5000, seed: int = 0) -> pd.DataFrame:
    """ISO dates, decimal numbers and whole numbers written as text (a few missing),
    and a two-value text column: a CSV read by pandas without parse_dates."""
    rng = np.random.default_rng(seed)
    days = pd.date_range("2020-01-01", periods=400, freq="D").strftime("%Y-%m-%d")
    when = np.asarray(days, dtype=object)[rng.integers(0, 400, n)]
    x = rng.normal(50, 10, n).round(2).astype(str).astype(object)
    x[rng.random(n) < 0.05] = None
    count = rng.integers(0, 40, n).astype(str).astype(object)
    return pd.DataFrame({"when": when, "x": x, "count": count,
                         "c": rng.choice(["a", "b"], n).astype(object)}, dtype=object)


def _as(frame: pd.DataFrame, dtype) -> pd.DataFrame:
    return frame.astype(dtype)


def _objects(column: pd.Series) -> pd.Series:
    """Text as objects, every kind of missing value (NaN, NA) as None."""
    return column.astype(object).where(column.notna(), None)


def _fit(frame: pd.DataFrame, **params) -> MSTSynthesizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)
        return MSTSynthesizer(random_state=0, **params).fit(frame, epsilon=1.0)


@pytest.mark.parametrize("dtype", TEXT_DTYPES[1:], ids=_dtype_id)
def test_every_text_dtype_reads_like_object(dtype):
    """The issue's table: dates and numbers held as text are read as dates and
    numbers (not '<other>' categories) in every text dtype, with the object
    table's domain, ledger, samples and scores; a column read as categories
    keeps the input's dtype."""
    table = _text_table()
    text, reference = _as(table, dtype), _fit(table)
    assert all(is_text(t) for t in text.dtypes)
    model = _fit(text)
    when = model.domain_["when"]
    assert (when.value_type, when.unit) == ("datetime", "day")
    assert model.domain_["x"].kind == "numeric" and model.domain_["count"].integer
    assert model.domain_.to_dict() == reference.domain_.to_dict()
    pd.testing.assert_frame_equal(model.privacy_ledger_.summary(),
                                  reference.privacy_ledger_.summary())
    rows, want = model.sample(500, random_state=1), reference.sample(500, random_state=1)
    assert [str(t) for t in rows.dtypes[:3]] == ["datetime64[ns]", "float64", "Int64"]
    assert rows["c"].dtype == text["c"].dtype and want["c"].dtype == object
    pd.testing.assert_frame_equal(rows.assign(c=_objects(rows["c"])), want.assign(c=_objects(want["c"])))
    np.testing.assert_allclose(model.score(text.iloc[:200]), reference.score(table.iloc[:200]))


@pytest.mark.parametrize("dtype", [pd.StringDtype("python"), *([STR] if STR else [])],
                         ids=_dtype_id)
@pytest.mark.parametrize("extra", [
    {"when": "2020-03-01", "x": None, "count": "3", "c": "a"},  # a missing value
    {"when": "2020-03-01", "x": "forty", "count": "3.5", "c": "a"},  # text, a fraction
    {"when": "March 2020", "x": "1", "count": "3", "c": None},  # text in dates
])
def test_string_dtype_neighbours_share_schema_and_costs(dtype, extra):
    """D and D' one row apart, as pandas strings: the same output dtypes and the same
    costs, line by line (share, mechanism, sensitivity, rho, delta). What the noisy
    releases decide (domain sizes, the marginals MST selects) may differ between
    neighbours and is not compared; the kinds are chosen on noisy counts only."""
    table = _text_table(2000, seed=3)
    neighbour = pd.concat([table, pd.DataFrame([extra], dtype=object)], ignore_index=True)
    views, kinds = [], None
    for frame in (table, neighbour):
        model = _fit(_as(frame, dtype))
        summary = model.privacy_ledger_.summary()
        costs = summary[["share", "mechanism", "sensitivity", "rho", "delta"]]
        views.append((list(map(str, model.sample(50, random_state=0).dtypes)),
                      costs.to_csv(index=False)))
        kinds = list(zip(summary["share"], summary["target"]))
    assert views[0] == views[1]
    assert ("column kinds", "kind of 'x'") in kinds


def test_declared_string_columns_are_cast_and_refused_like_object():
    """A declaration reads a pandas string column by its kind as it reads an
    object one, and refuses text that does not read so, naming the column."""
    table = _text_table(600)
    declared = {"when": {"kind": "datetime", "bounds": ["2020-01-01", "2021-02-04"],
                         "unit": "day"},
                "x": {"kind": "numeric", "bounds": [0, 100], "missing": True}}
    for dtype in TEXT_DTYPES:
        frame, kinds = _read_declared(_as(table, dtype), declared)
        assert str(frame["when"].dtype) == "datetime64[ns]" and frame["x"].dtype == float
        assert kinds["when"].kind == "datetime"
    bad = _as(table.assign(x=table["x"].where(table.index != 5, "n/a")), pd.StringDtype())
    with pytest.raises(ValueError, match=r"column 'x' is declared 'numeric' but holds text"):
        _read_declared(bad, declared)


def _read_declared(frame: pd.DataFrame, declared: dict):
    undeclared = {name: {"kind": "category"} for name in frame.columns if name not in declared}
    return read_kinds(frame, {**declared, **undeclared}, budget=None, rng=None)


def test_describe_drafts_string_columns_like_object_ones():
    table = _text_table(800)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        drafts = [describe_domain(_as(table, dtype)) for dtype in TEXT_DTYPES]
    assert all(draft == drafts[0] for draft in drafts)
    assert drafts[0]["when"]["kind"] == "datetime" and drafts[0]["x"]["kind"] == "numeric"


# ------------------------------------------------------------ TableDiscretizer
@pytest.mark.parametrize("dtype", [pd.StringDtype("python"), *([STR] if STR else [])],
                         ids=_dtype_id)
def test_table_discretizer_reads_string_columns_like_object_ones(dtype):
    table = _text_table(3000)
    fitted = [TableDiscretizer(random_state=4).fit(frame, epsilon=3.0)
              for frame in (table, _as(table, dtype))]
    assert fitted[0].domain_.to_dict() == fitted[1].domain_.to_dict()
    pd.testing.assert_frame_equal(fitted[0].privacy_ledger_.summary(),
                                  fitted[1].privacy_ledger_.summary())
    np.testing.assert_array_equal(fitted[0].transform(table),
                                  fitted[1].transform(_as(table, dtype)))


def _mixed_table(n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "income": np.where(rng.random(n) < 0.1, np.nan, rng.lognormal(10, 1, n)),
        "city": pd.Series(rng.choice(["a", "b", "c", None], n), dtype=object),
        "tier": pd.Series(rng.choice(["u", "v"], n), dtype="string"),
        "count": pd.Series(rng.integers(0, 50, n).astype(str), dtype=object),
        "when": pd.Series(pd.Timestamp("2020-01-01")
                          + pd.to_timedelta(rng.integers(0, 700, n), unit="D")),
        "flag": rng.random(n) < 0.4})


def test_table_discretizer_gives_what_its_pieces_give():
    """``fit`` now goes through ``backends.open_source``; its domain and ledger are
    those of the pieces it was written as before (``read_kinds`` on the frame,
    then ``learn_domain``), with the same budget split and noise."""
    table = _mixed_table()
    disc = TableDiscretizer(random_state=5).fit(table, epsilon=3.0)
    ledger = PrivacyLedger(3.0, 1e-9)
    budget = ledger.share(epsilon_to_rho(3.0, 0.5e-9), 0.5e-9, label="domain learning")
    kinds_budget = budget.share(KIND_SHARE * budget.rho, label="column kinds")
    spend = budget.share(budget.rho - kinds_budget.rho, budget.delta)
    rng = np.random.default_rng(5)
    frame, kinds = read_kinds(table, {}, budget=kinds_budget, rng=rng)
    domain = annotate_domain(learn_domain(frame, None, n_bins=32, rng=rng, budget=spend), kinds)
    assert disc.domain_.to_dict() == domain.to_dict()
    assert disc.domain_["count"].integer and disc.domain_["when"].unit == "day"
    np.testing.assert_array_equal(disc.transform(table), domain.encode(frame))
    pd.testing.assert_frame_equal(disc.privacy_ledger_.summary(), ledger.summary())


def test_table_discretizer_fits_a_csv_path_as_the_text_frame(tmp_path):
    """Through ``open_source`` a path is counted by DuckDB, read as text: the same
    domain and ledger as the same file read by pandas as strings."""
    pytest.importorskip("duckdb")
    table = _text_table(2000)
    table.to_csv(tmp_path / "t.csv", index=False)
    from_path = TableDiscretizer(random_state=2).fit(str(tmp_path / "t.csv"), epsilon=2.0)
    text = pd.read_csv(tmp_path / "t.csv", dtype=str, keep_default_na=False,
                       na_values=[""])
    from_frame = TableDiscretizer(random_state=2).fit(text, epsilon=2.0)
    assert from_path.domain_.to_dict() == from_frame.domain_.to_dict()
    pd.testing.assert_frame_equal(from_path.privacy_ledger_.summary(),
                                  from_frame.privacy_ledger_.summary())


# ------------------------------------------------ naive datetimes declared in a zone
def _hourly(n: int = 600) -> pd.DataFrame:
    return pd.DataFrame({"t": pd.Series(pd.date_range("2021-03-20", periods=n, freq="h")),
                         "k": np.arange(n) % 3})


ZONED = {"t": {"kind": "datetime", "tz": "America/New_York",
               "bounds": ["2021-03-20", "2021-05-01"], "unit": "hour"}, "k": 3}


def test_a_naive_column_declared_in_a_zone_is_refused_naming_it():
    """Schema and declaration only: the same error for D and D' (one row apart,
    with a missing value), before any budget is spent."""
    frame = _hourly()
    neighbour = pd.concat([frame, pd.DataFrame({"t": [pd.NaT], "k": [0]})], ignore_index=True)
    messages = set()
    for table in (frame, neighbour):
        with pytest.raises(ValueError, match=r"column 't' holds datetimes without a time zone "
                                             r"\(naive\) but is declared with "
                                             r"tz='America/New_York'.*tz_localize") as error:
            MSTSynthesizer(random_state=0, domain=ZONED).fit(table, epsilon=1.0)
        messages.add(str(error.value))
    assert len(messages) == 1
    with pytest.raises(ValueError, match="column 't' holds datetimes without a time zone"):
        TableDiscretizer(domain=ZONED).fit(frame)


def test_a_localized_column_or_a_utc_declaration_fits():
    """The fix the error names works, and ``"tz": "UTC"`` (how naive values are
    read) is no error; text without an offset is read in the declared zone and
    gives the same model as the localized column."""
    frame = _hourly()
    local = frame.assign(t=frame["t"].dt.tz_localize("America/New_York"))
    text = frame.assign(t=frame["t"].dt.strftime("%Y-%m-%d %H:%M").astype(object))
    models = [MSTSynthesizer(random_state=0, domain=ZONED).fit(table, epsilon=5.0)
              for table in (local, text)]
    assert models[0].domain_.to_dict() == models[1].domain_.to_dict()
    rows = models[0].sample(200, random_state=0)["t"]
    assert str(rows.dt.tz) == "America/New_York" and rows.min() >= local["t"].min()
    pd.testing.assert_series_equal(rows, models[1].sample(200, random_state=0)["t"],
                                   check_dtype=False)  # datetime64[us] from pandas 3 on
    utc = {**ZONED, "t": {**ZONED["t"], "tz": "UTC"}}
    assert MSTSynthesizer(random_state=0, domain=utc).fit(frame, epsilon=5.0).domain_["t"].tz \
        == "UTC"


def test_duckdb_refuses_a_naive_timestamp_declared_in_a_zone_as_memory_does(tmp_path):
    pytest.importorskip("duckdb")
    frame = _hourly()
    frame.to_parquet(tmp_path / "t.parquet")
    messages = []
    for table in (frame, str(tmp_path / "t.parquet")):
        with pytest.raises(ValueError, match="column 't' holds datetimes without") as error:
            MSTSynthesizer(random_state=0, domain=ZONED).fit(table, epsilon=1.0)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_parquet_text_reads_like_the_pandas_text_it_was_written_from(tmp_path):
    """A Parquet file's VARCHAR columns are text too: DuckDB chooses their kinds
    from the same noisy histograms, so the file and the pandas frame it was
    written from give the same domain, ledger and samples."""
    pytest.importorskip("duckdb")
    table = _as(_text_table(3000), pd.StringDtype())
    table.to_parquet(tmp_path / "t.parquet")
    memory, engine = _fit(table), _fit(str(tmp_path / "t.parquet"))
    assert engine.domain_["when"].value_type == "datetime"
    assert engine.domain_.to_dict() == memory.domain_.to_dict()
    pd.testing.assert_frame_equal(engine.privacy_ledger_.summary(),
                                  memory.privacy_ledger_.summary())
    rows, want = engine.sample(300, random_state=2), memory.sample(300, random_state=2)
    pd.testing.assert_frame_equal(rows.assign(c=_objects(rows["c"])),
                                  want.assign(c=_objects(want["c"])))


def test_duckdb_reads_a_nanosecond_zoned_parquet_column_as_instants(tmp_path):
    """pandas 2 writes zoned datetimes in nanoseconds, which DuckDB reads as
    TIMESTAMPTZ_NS: instants, as in memory (not naive values), in any zone."""
    duckdb = pytest.importorskip("duckdb")
    stamps = pd.Series(pd.date_range("2013-01-01", periods=12, freq="MS", tz="Europe/Paris"))
    frame = pd.DataFrame({"when": stamps.dt.as_unit("ns").repeat(150).reset_index(drop=True),
                          "k": np.arange(1800) % 3})
    path = str(tmp_path / "t.parquet")
    frame.to_parquet(path)
    assert duckdb.sql(f"SELECT * FROM read_parquet('{path}') LIMIT 0").types[0] \
        in ("TIMESTAMPTZ_NS", "TIMESTAMP WITH TIME ZONE")
    declared = {"when": {"kind": "datetime", "tz": "Europe/Paris"}, "k": 3}
    memory = MSTSynthesizer(random_state=0, domain=declared).fit(frame, epsilon=5.0)
    engine = MSTSynthesizer(random_state=0, domain=declared).fit(path, epsilon=5.0)
    assert engine.domain_.to_dict() == memory.domain_.to_dict()
    assert memory.domain_["when"].unit == "month"
    pd.testing.assert_series_equal(engine.sample(100, random_state=0)["when"].dt.tz_convert(
        "Europe/Paris"), memory.sample(100, random_state=0)["when"], check_dtype=False)
