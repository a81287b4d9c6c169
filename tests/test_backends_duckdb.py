"""The DuckDB backend: identical counts, models and ledgers as in memory."""

import os
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth.backends import encode_table, open_duckdb
from sklearn_dpsynth.domain import Domain, spec_from_declaration
from sklearn_dpsynth.exceptions import PrivacyWarning
from sklearn_dpsynth.marginal import MSTSynthesizer as MST

duckdb = pytest.importorskip("duckdb")


def _frame(n=3000, seed=0):
    """NaN, rare categories (<other>), numbers to clip, datetimes with NaT."""
    rng = np.random.default_rng(seed)
    cats = np.array(["a", "b", "c", "rare1", "rare2"], dtype=object)
    city = cats[rng.choice(5, size=n, p=[0.5, 0.3, 0.198, 0.001, 0.001])]
    city[rng.random(n) < 0.05] = None
    income = rng.lognormal(10, 1, size=n)
    income[rng.random(n) < 0.1] = np.nan
    age = pd.array(rng.integers(18, 90, size=n), dtype="Int64")
    age[rng.random(n) < 0.02] = pd.NA
    stamps = pd.Series(pd.to_datetime("2000-01-01") + pd.to_timedelta(
        rng.integers(0, 20 * 365, size=n), unit="D")).astype("datetime64[ns]")
    stamps[rng.random(n) < 0.03] = pd.NaT
    return pd.DataFrame({"city": city, "income": income, "age": age, "when": stamps,
                         "score": rng.normal(0, 5, size=n)})


def _write(frame, path):
    con = duckdb.connect()
    con.register("frame_view", frame)
    con.execute(f"COPY (SELECT * FROM frame_view) TO '{path}' (FORMAT parquet)")
    con.close()
    return str(path)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    frame = _frame()
    return frame, _write(frame, tmp_path_factory.mktemp("duck") / "table.parquet")


def _domain():
    return Domain([
        spec_from_declaration("city", {"categories": ["a", "b"], "other": True,
                                       "missing": True}, 8),
        spec_from_declaration("income", {"bounds": (0, 60000), "clip": True,
                                         "missing": True}, 8),
        spec_from_declaration("age", {"bounds": (20, 80), "integer": True, "clip": True,
                                      "missing": True}, 8),
        spec_from_declaration("when", {"bounds": ("2003-01-01", "2015-06-01"), "clip": True,
                                       "missing": True}, 8),
        spec_from_declaration("score", {"bounds": (-8, 8), "clip": True}, 5),
    ])


def test_counts_identical_to_numpy(data):
    frame, path = data
    domain = _domain()
    memory = encode_table(frame, domain)
    engine = encode_table(open_duckdb(path), domain)
    assert engine.sizes == memory.sizes
    for columns in [(), (0,), (1,), (2,), (3,), (4,), (0, 3), (3, 1, 2), (4, 2, 0, 1)]:
        assert np.array_equal(engine.counts(columns), memory.counts(columns)), columns
    assert np.array_equal(np.sort(engine.to_numpy(), axis=0), np.sort(memory.to_numpy(), axis=0))
    mapping = [np.arange(k) // 2 for k in domain.sizes]
    assert np.array_equal(engine.remap(mapping).counts((0, 1)),
                          memory.remap(mapping).counts((0, 1)))
    blocks = list(engine.iter_chunks(1000))
    assert sum(len(b) for b in blocks) == len(frame) and all(len(b) <= 1000 for b in blocks)


def test_counts_many_is_one_query_per_batch_with_identical_tables(data, monkeypatch):
    """GROUPING SETS: every table equals its own GROUP BY (and memory's), in
    the order and axis order asked, with repeats and the empty set, in one
    query per batch of sets."""
    from sklearn_dpsynth.backends import _duckdb, _table

    frame, path = data
    domain = _domain()
    memory = encode_table(frame, domain)
    engine = encode_table(open_duckdb(path), domain)
    sets = [(0,), (1,), (2, 0), (0, 2), (3, 1, 2), (4,), (), (1, 4), (0,)]
    queries = []
    original = _duckdb.DuckDBSource.query
    monkeypatch.setattr(_duckdb.DuckDBSource, "query", lambda self, sql, fetch="fetchall": (
        queries.append(sql), original(self, sql, fetch))[1])
    tables = engine.counts_many(sets)
    assert len(queries) == 1 and "GROUPING SETS" in queries[0]
    for columns, table in zip(sets, tables):
        assert np.array_equal(table, memory.counts(columns)), columns
    monkeypatch.setattr(_table, "GROUPING_SETS_PER_PASS", 3)
    queries.clear()
    assert all(np.array_equal(a, b) for a, b in zip(engine.counts_many(sets), tables))
    assert len(queries) == 3  # 7 distinct sets, 3 per query
    cached = engine.with_counts([(1, 4), (0, 3)])
    queries.clear()
    assert np.array_equal(cached.counts((4, 1)), memory.counts((4, 1)))
    assert np.array_equal(cached.counts((0, 3)), memory.counts((0, 3))) and not queries


def test_relation_input_counts_identical(data):
    frame, path = data
    con = duckdb.connect()
    relation = con.read_parquet(path)
    domain = _domain()
    engine = encode_table(open_duckdb(relation), domain)
    assert np.array_equal(engine.counts((0, 2)), encode_table(frame, domain).counts((0, 2)))


def _fit(X, seed=3):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MST(random_state=seed).fit(X, epsilon=2.0)


def test_same_seed_same_model_samples_and_ledger(data):
    """Domain learned privately on both paths (noisy histograms, thresholded
    categories), then MST: identical domain, ledger, model and samples."""
    frame, path = data
    memory, engine = _fit(frame), _fit(path)
    assert engine.domain_.to_dict() == memory.domain_.to_dict()
    pd.testing.assert_frame_equal(engine.privacy_ledger_.summary(),
                                  memory.privacy_ledger_.summary())
    assert engine.privacy_ledger_.spent() == memory.privacy_ledger_.spent()
    # the container dtype follows the input schema (SQL VARCHAR -> object)
    pd.testing.assert_frame_equal(engine.sample(500), memory.sample(500), check_dtype=False)


def test_encoding_errors_name_the_column_not_values(data, tmp_path):
    frame, _ = data
    path = _write(frame.assign(city=frame["city"].fillna("a")), tmp_path / "t.parquet")
    strict = Domain([spec_from_declaration("city", {"categories": ["a", "b"]}, 8)] +
                    list(_domain().specs[1:]))
    with pytest.raises(ValueError, match="'city'") as error:
        encode_table(open_duckdb(path), strict)
    assert "rare1" not in str(error.value) and "c'" not in str(error.value)


def test_neighbouring_tables_differ_only_in_counts(data, tmp_path):
    """D and D' one row apart: same schema, encodings and sizes; counts off by one."""
    frame, _ = data
    d = _write(frame, tmp_path / "d.parquet")
    d_prime = _write(frame.iloc[1:], tmp_path / "dp.parquet")
    a, b = encode_table(open_duckdb(d), _domain()), encode_table(open_duckdb(d_prime), _domain())
    assert a.sizes == b.sizes and a.columns == b.columns
    assert np.abs(a.counts((0, 1)) - b.counts((0, 1))).sum() == 1


def test_file_larger_than_memory_limit_fits(tmp_path):
    """A Parquet file larger than DuckDB's memory limit is encoded and counted."""
    con = duckdb.connect()
    path = str(tmp_path / "big.parquet")
    con.execute(f"""COPY (SELECT (i % 7)::VARCHAR AS a, (i * 7919 % 1000) / 10.0 AS b,
                    random() AS c, (i % 13)::BIGINT AS d
                    FROM range(4000000) t(i)) TO '{path}' (FORMAT parquet)""")
    assert os.path.getsize(path) > 30 * 2**20
    source = open_duckdb(path, memory_limit="20MB")
    (limit,), = source.query("SELECT current_setting('memory_limit')")
    domain = Domain([
        spec_from_declaration("a", {"categories": [str(i) for i in range(7)]}, 8),
        spec_from_declaration("b", {"bounds": (0, 100)}, 16),
        spec_from_declaration("c", {"bounds": (0, 1)}, 16),
        spec_from_declaration("d", {"bounds": (0, 12), "integer": True, "missing": True}, 16),
    ])
    table = encode_table(source, domain)
    counts = table.counts((0, 1, 2, 3))
    assert counts.sum() == 4_000_000
    assert np.array_equal(counts.sum(axis=(1, 2, 3)),
                          np.bincount(np.arange(4_000_000) % 7).astype(float))
    assert "MiB" in limit or "MB" in limit


def test_glob_and_csv_inputs_count_like_memory(data, tmp_path):
    frame, _ = data
    half = len(frame) // 2
    _write(frame.iloc[:half], tmp_path / "part-0.parquet")
    _write(frame.iloc[half:], tmp_path / "part-1.parquet")
    con = duckdb.connect()
    con.register("frame_view", frame[["city", "score"]])
    csv = str(tmp_path / "table.csv")
    con.execute(f"COPY (SELECT * FROM frame_view) TO '{csv}' (HEADER, DELIMITER ',')")
    domain = Domain([_domain()["city"], _domain()["score"]])
    memory = encode_table(frame[["city", "score"]], domain).counts((0, 1))
    glob = encode_table(open_duckdb(str(tmp_path / "part-*.parquet")), _domain())
    assert np.array_equal(glob.counts((0, 4)), memory)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # read as text: no type is guessed from the rows
        source = open_duckdb(csv)
    assert set(source.sql_types.values()) == {"VARCHAR"}
    assert np.array_equal(encode_table(source, domain).counts((0, 1)), memory)


def test_bad_paths_and_weights_are_clear_errors(data, tmp_path):
    _, path = data
    with pytest.raises(ValueError, match="Parquet"):
        open_duckdb(str(tmp_path / "table.json"))
    with pytest.raises(ValueError, match="could not read"):
        open_duckdb(str(tmp_path / "missing.parquet"))
    table = encode_table(open_duckdb(path), _domain())
    with pytest.raises(ValueError, match="weights"):
        table.counts((0,), weights=np.ones(3))
    with pytest.raises(ValueError, match="non-private"):
        MST(preprocessing="non-private").fit(path, epsilon=1.0)


def test_codes_table_is_dropped_with_the_encoded_table(data):
    frame, path = data
    con = duckdb.connect()
    relation = con.read_parquet(path)
    table = encode_table(open_duckdb(relation), _domain())
    listed = "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '__dpsynth_codes_%'"
    assert con.execute(listed).fetchall() == [(1,)]
    del table
    import gc
    gc.collect()
    assert con.execute(listed).fetchall() == [(0,)]


def test_files_leave_no_spill_directory_behind(data, tmp_path, monkeypatch):
    """A fit from files spills to a directory of its own, removed (and the
    connection closed) once the fit no longer needs the source, also when
    the path cannot be read."""
    import gc
    import tempfile
    _, path = data
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill_root))

    def spill_directories():
        return sorted(p.name for p in spill_root.iterdir() if p.name.startswith("dpsynth_duckdb_"))

    source = open_duckdb(path, memory_limit="50MB")
    (directory,), = source.query("SELECT current_setting('temp_directory')")
    assert spill_directories() == [os.path.basename(directory)]
    connection = source.connection
    table = encode_table(source, _domain())
    del source
    gc.collect()
    assert table.counts((0,)).sum() == 3000  # the encoded table keeps it alive
    del table
    gc.collect()
    assert spill_directories() == []
    with pytest.raises(duckdb.ConnectionException):
        connection.execute("SELECT 1")
    model = MST(random_state=0).fit(path, epsilon=1.0)  # keeps no handle on the files
    with pytest.raises(ValueError, match="could not read"):
        open_duckdb(str(tmp_path / "missing.parquet"))
    gc.collect()
    assert spill_directories() == []
    assert len(model.sample(5)) == 5


def test_domain_learning_histograms_of_neighbours_differ_by_one_row(data, tmp_path):
    """What domain learning reads from D and D' (one row apart): the same schema,
    range histograms and category counts that differ by one in one cell."""
    from sklearn_dpsynth._domain_learning import _numeric_grid

    frame, _ = data
    a = open_duckdb(_write(frame, tmp_path / "d.parquet"))
    b = open_duckdb(_write(frame.drop(index=5), tmp_path / "dp.parquet"))
    pd.testing.assert_frame_equal(a.schema_frame(), b.schema_frame())
    cuts = _numeric_grid().cuts
    assert np.abs(a.range_counts("score", cuts) - b.range_counts("score", cuts)).sum() == 1
    expected = np.bincount(np.searchsorted(cuts, frame["score"], side="right"),
                           minlength=cuts.size + 1)
    assert np.array_equal(a.range_counts("score", cuts), expected)
    values_a, counts_a = a.category_counts("city")
    values_b, counts_b = b.category_counts("city")
    assert sorted(values_a) == sorted(values_b)
    diff = dict(zip(values_a, counts_a))
    for value, count in zip(values_b, counts_b):
        diff[value] -= count
    assert sorted(diff.values()) == [0.0] * (len(diff) - 1) + [1.0]


def test_engine_errors_never_quote_private_rows(tmp_path):
    """D and D' differ in one CSV row: a text column cast to numbers without a
    declared kind fails in DuckDB, whose own error quotes that row; the
    library's names only the table."""
    n = 25000
    values = [str(i % 7) for i in range(n)]
    messages = []
    for secret in (None, "SECRETVALUE"):
        rows = values if secret is None else values[:-3] + [secret] + values[-2:]
        path = tmp_path / f"table_{secret}.csv"
        path.write_text("a,b\n" + "".join(f"{v},{i % 3}\n" for i, v in enumerate(rows)))
        source = open_duckdb(str(path))
        if secret is None:
            assert source.range_counts("a", np.array([1.0, 3.0])).sum() == n
            continue
        with pytest.raises(ValueError, match="withheld") as error:
            source.range_counts("a", np.array([1.0, 3.0]))
        assert error.value.__cause__ is None and error.value.__context__ is None
        messages.append(str(error.value))
    assert "SECRET" not in messages[0] and str(n) not in messages[0]


def test_domain_learning_batched_one_query_per_kind_identical_and_neighbours(
        data, tmp_path, monkeypatch):
    """Private domain learning reads all range histograms in one query and all
    category counts in another; each equals its per-column count in memory,
    and on D' (one row fewer) the batch differs by one in one cell."""
    from sklearn_dpsynth._domain_learning import (_category_counts, _category_counts_many,
                                                  _datetime_grid, _numeric_grid,
                                                  _range_counts, _range_counts_many)
    from sklearn_dpsynth.backends import _duckdb, _table

    frame, _ = data
    requests = [("score", _numeric_grid()), ("when", _datetime_grid()),
                ("income", _numeric_grid()), ("age", _numeric_grid())]
    a = open_duckdb(_write(frame, tmp_path / "d.parquet"))
    b = open_duckdb(_write(frame.drop(index=7), tmp_path / "dp.parquet"))
    queries = []
    original = _duckdb.DuckDBSource.query
    monkeypatch.setattr(_duckdb.DuckDBSource, "query", lambda self, sql, fetch="fetchall": (
        queries.append(sql), original(self, sql, fetch))[1])
    ranges_a = _range_counts_many(a, requests)
    categories_a = _category_counts_many(a, ["city", "age"])
    assert len(queries) == 2
    for (name, grid), counts in zip(requests, ranges_a):
        assert np.array_equal(counts, _range_counts(frame, name, grid)), name
    for name, (values, counts) in zip(["city", "age"], categories_a):
        expected_values, expected_counts = _category_counts(frame, name)
        assert [str(v) for v in values] == [str(v) for v in expected_values], name
        assert np.array_equal(counts, expected_counts), name
    ranges_b = _range_counts_many(b, requests)
    assert sum(np.abs(x - y).sum() for x, y in zip(ranges_a, ranges_b)) == \
        sum(frame.loc[7, [n for n, _ in requests]].notna())
    monkeypatch.setattr(_table, "GROUPING_SETS_PER_PASS", 3)
    queries.clear()
    again = _range_counts_many(a, requests)
    assert len(queries) == 2 and all(np.array_equal(x, y) for x, y in zip(again, ranges_a))


def test_aim_batched_candidate_counts_same_model_fewer_passes(data, monkeypatch):
    """AIM's candidate tables counted in one GROUPING SETS batch: the same
    cliques, ledger and samples as one query per table, in fewer queries
    (the datetime unit 1 + domain learning 3 -- ranges, categories, sub-cells of the
    ranges' ends -- + codes 1 + 1 batch, against one per table)."""
    from sklearn_dpsynth.backends import EncodedTable, _duckdb
    from sklearn_dpsynth.marginal import AIMSynthesizer

    _, path = data
    queries = []
    original = _duckdb.DuckDBSource.query
    monkeypatch.setattr(_duckdb.DuckDBSource, "query", lambda self, sql, fetch="fetchall": (
        queries.append(sql), original(self, sql, fetch))[1])

    def fit_aim():
        queries.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = AIMSynthesizer(rounds=3, max_iter=20, final_max_iter=50,
                                   random_state=5).fit(path, epsilon=2.0)
        return model, len(queries)

    batched, batched_queries = fit_aim()
    monkeypatch.setattr(EncodedTable, "with_counts", lambda self, column_sets: self)
    monkeypatch.setattr(EncodedTable, "_count_many",
                        lambda self, sets: [self._count(c, None) for c in sets])
    unbatched, unbatched_queries = fit_aim()
    assert batched.cliques_ == unbatched.cliques_
    pd.testing.assert_frame_equal(batched.privacy_ledger_.summary(),
                                  unbatched.privacy_ledger_.summary())
    pd.testing.assert_frame_equal(batched.sample(300), unbatched.sample(300))
    n_candidates = 5 + 10  # the 1- and 2-way marginals of the 5 columns
    assert (batched_queries, unbatched_queries) == (1 + 3 + 1 + 1, 1 + 3 + 1 + n_candidates)


def test_non_nullable_dtypes_are_schema_information_not_data():
    """A pandas int64/bool column cannot hold a missing value, a SQL column can.

    Undeclared, the DataFrame fit keeps no missing code for such columns and
    the engine fit keeps one, so the models differ; with nullable dtypes
    (the same schema as SQL) the two fits are identical.
    """
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(0, 5, 2000), "b": rng.random(2000) < 0.3,
                      "c": rng.choice(["x", "y"], 2000)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame_fit = MST(random_state=0).fit(X, epsilon=1.0)
        engine_fit = MST(random_state=0).fit(duckdb.connect().from_df(X), epsilon=1.0)
        nullable_fit = MST(random_state=0).fit(X.astype({"a": "Int64", "b": "boolean"}),
                                               epsilon=1.0)
    assert [frame_fit.domain_[c].missing for c in "abc"] == [False, False, True]
    assert [engine_fit.domain_[c].missing for c in "abc"] == [True, True, True]
    assert repr(nullable_fit.domain_) == repr(engine_fit.domain_)
    assert nullable_fit.privacy_ledger_.spent() == engine_fit.privacy_ledger_.spent()
    assert nullable_fit._estimated_n_records() == engine_fit._estimated_n_records()


def test_declared_numeric_text_neighbours_share_one_error_without_values(tmp_path):
    """D: a text column declared numeric whose cells all read as numbers; D' and
    D'': one more row of text ("CANARY..."), as a relation and as a CSV path:
    DuckDB never casts the text (its error would quote it); the library's
    error names the column only, the same for both neighbours."""
    base = pd.DataFrame({"x": [str(i % 10) for i in range(200)], "c": ["a", "b"] * 100})
    domain = {"x": {"kind": "numeric", "bounds": [0, 10]}}
    con = duckdb.connect()
    MST(domain=domain, random_state=0).fit(con.from_df(base), epsilon=2.0)
    messages = []
    for canary in ("CANARY_7f3k", "CANARY_q9"):
        bad = pd.concat([base, pd.DataFrame({"x": [canary], "c": ["a"]})], ignore_index=True)
        path = tmp_path / f"{canary}.csv"
        bad.to_csv(path, index=False)
        for table in (con.from_df(bad), str(path)):
            with pytest.raises(ValueError) as error:
                MST(domain=domain, random_state=0).fit(table, epsilon=2.0)
            assert error.value.__cause__ is None and error.value.__context__ is None
            messages.append(str(error.value).replace("files read_csv", "a DuckDB relation"))
    assert len(set(messages)) == 1
    assert "CANARY" not in messages[0] and "column 'x'" in messages[0]


def test_a_date_past_the_nanosecond_range_is_not_a_date_on_duckdb(tmp_path):
    """One CSV row holding '9999-12-31' in a column of ISO dates made DuckDB's
    epoch_ns overflow, so fit failed where its neighbour fitted (the failure
    depended on that row).  Now such a date is not a date, as in memory: the
    neighbours fit with the same ledger and domain sizes."""
    from sklearn_dpsynth import IndependentSynthesizer

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "d": pd.date_range("2013-01-01", periods=3000, freq="h").strftime("%Y-%m-%d %H:%M"),
        "c": rng.choice(["a", "b"], 3000)})
    neighbour = frame.copy()
    neighbour.loc[5, "d"] = "9999-12-31"
    fits = []
    for name, table in (("d0.csv", frame), ("d1.csv", neighbour)):
        path = tmp_path / name
        table.to_csv(path, index=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(IndependentSynthesizer(random_state=0).fit(str(path), epsilon=1.0))
    summaries = [list(f.privacy_ledger_.summary()["target"]) for f in fits]
    assert summaries[0] == summaries[1]
    assert fits[0].domain_.sizes == fits[1].domain_.sizes


def test_a_zoned_timestamp_near_2262_counts_by_its_unit_as_in_memory():
    """A ``TIMESTAMPTZ`` value is a date whatever zone its units are read in: its
    UTC wall clock is read as UTC (not in the zone, where 23:00 in New York would
    leave the nanosecond range), so its unit cell is the one memory gives."""
    import duckdb

    from sklearn_dpsynth._column_kinds import datetime_counts
    from sklearn_dpsynth.backends import open_source

    stamps = pd.Series(pd.to_datetime(["2020-01-01 00:00", "2262-04-11 23:00"], utc=True,
                                      format="ISO8601")).dt.tz_convert("America/New_York")
    frame = pd.DataFrame({"when": stamps})
    relation = duckdb.connect().sql(
        "SELECT CAST(x AS TIMESTAMPTZ) AS \"when\" FROM (VALUES "
        "('2020-01-01 00:00:00+00'), ('2262-04-11 23:00:00+00')) t(x)")
    engine = open_source(relation).kind_counts_many({"when": "America/New_York"})["when"]
    np.testing.assert_array_equal(engine, datetime_counts(frame["when"], "America/New_York"))


@pytest.mark.parametrize("value, tz", [("2020-10-25 02:30", "Europe/Paris"),   # repeated
                                       ("2020-03-29 02:30", "Europe/Paris"),   # skipped
                                       ("2020-04-05 01:45", "Australia/Lord_Howe")])  # 30 min
def test_a_wall_clock_the_zone_skips_or_repeats_is_no_date_on_duckdb_as_in_memory(value, tz):
    """A text time that the declared zone skips or repeats (a daylight-saving change)
    is no date in memory (``tz_localize`` gives NaT); DuckDB's ``timezone`` would
    shift or pick an instant.  Both count it as text, and a declared column
    holding it is refused on both (naming the column, never the value), where
    DuckDB fitted it before."""
    import duckdb

    from sklearn_dpsynth import IndependentSynthesizer
    from sklearn_dpsynth._column_kinds import kind_counts
    from sklearn_dpsynth.backends import open_source

    days = list(pd.date_range("2020-01-01", periods=300, freq="D").strftime("%Y-%m-%d %H:%M"))
    frame = pd.DataFrame({"when": days + [value], "c": ["a"] * 301}, dtype=object)
    engine = open_source(duckdb.connect().from_df(frame)).kind_counts_many({"when": tz})["when"]
    np.testing.assert_array_equal(engine, kind_counts(frame["when"], tz))
    declared = {"when": {"kind": "datetime", "tz": tz, "unit": "day"}, "c": {"kind": "category"}}
    for table in (frame, duckdb.connect().from_df(frame)):
        with pytest.raises(ValueError, match="column 'when'") as error:
            IndependentSynthesizer(random_state=0, domain=declared).fit(table, epsilon=1.0)
        assert value[:10] not in str(error.value)


def test_numeric_categories_of_a_csv_column_encode_as_in_memory(tmp_path):
    """Numeric categories compared with CSV text: DuckDB cast the text to the
    category's type, so '1.5' was the category 2 (rounded) and a row of text
    that is no number failed the fit where memory sends it to "<other>" (D fitted,
    its neighbour D' with one such row did not).  Now the text is read as a
    number as in memory: the same model from the file and from the frame, and
    the neighbours both fit, with the same ledger."""
    from sklearn_dpsynth import IndependentSynthesizer
    from sklearn_dpsynth.cli import read_table

    base = pd.DataFrame({"x": ["1.5"] * 150 + ["2"] * 40 + ["0.6"] * 10, "c": ["a", "b"] * 100})
    domain = {"x": {"categories": [2, 1.5], "other": True}, "c": {"categories": ["a", "b"]}}
    fits = []
    for name, frame in (("d", base), ("d2", pd.concat(
            [base, pd.DataFrame({"x": ["CANARY"], "c": ["a"]})], ignore_index=True))):
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        for table in (read_table(str(path), as_text=True), str(path)):
            model = IndependentSynthesizer(domain=domain, random_state=0).fit(table, epsilon=50.0)
            fits.append(model)
    samples = [m.sample(2000, random_state=0)["x"].astype(str).tolist() for m in fits]
    assert samples[0] == samples[1] and samples[2] == samples[3]
    assert pd.Series(samples[1]).value_counts().idxmax() == "1.5"
    assert len({m.privacy_ledger_.spent() for m in fits}) == 1
