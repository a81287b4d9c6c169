"""The Spark backend: identical counts, domains, models, ledgers and samples as
in memory (local mode, one SparkSession for the whole test session)."""

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth.backends import encode_table, open_spark
from sklearn_dpsynth.domain import Domain, spec_from_declaration
from sklearn_dpsynth.marginal import AIMSynthesizer as AIM
from sklearn_dpsynth.marginal import MSTSynthesizer as MST

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("Spark needs Java (java is not on PATH)", allow_module_level=True)


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("dpsynth-tests")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.ui.enabled", "false")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


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
    flag = pd.array(rng.random(n) < 0.3, dtype="boolean")
    return pd.DataFrame({"city": city, "income": income, "age": age, "when": stamps,
                         "score": rng.normal(0, 5, size=n), "flag": flag})


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
        spec_from_declaration("score", {"bounds": (-8, 8), "clip": True,
                                        "points": [0.0]}, 5),
        spec_from_declaration("flag", {"categories": [False, True], "missing": True}, 2),
    ])


@pytest.fixture(scope="module")
def data(spark):
    frame = _frame()
    frame.loc[:9, "score"] = 0.0  # a point mass
    return frame, spark.createDataFrame(frame)


def test_schema_is_modelled_like_the_pandas_frame(data):
    frame, sdf = data
    schema = open_spark(sdf).schema_frame()
    assert list(schema.columns) == list(frame.columns)
    assert list(schema.dtypes) == list(frame.dtypes)


def test_counts_identical_to_numpy(data):
    frame, sdf = data
    domain = _domain()
    memory, engine = encode_table(frame, domain), encode_table(open_spark(sdf), domain)
    assert engine.sizes == memory.sizes
    for columns in [(), (0,), (1,), (2,), (3,), (4,), (5,), (0, 3), (3, 1, 2), (4, 2, 0, 1, 5)]:
        assert np.array_equal(engine.counts(columns), memory.counts(columns)), columns
    assert np.array_equal(engine.to_numpy(), memory.to_numpy())
    mapping = [np.arange(k) // 2 for k in domain.sizes]
    assert np.array_equal(engine.remap(mapping).counts((0, 1, 4)),
                          memory.remap(mapping).counts((0, 1, 4)))
    sets = [(0,), (2, 0), (0, 2), (3, 1, 2), (), (5, 4), (0,)]
    passes = engine.n_passes
    for columns, table in zip(sets, engine.counts_many(sets)):
        assert np.array_equal(table, memory.counts(columns)), columns
    assert engine.n_passes == passes + 1  # one grouping-sets job for them all
    blocks = list(engine.iter_chunks(1000))
    assert np.array_equal(np.concatenate(blocks), memory.to_numpy())
    assert all(len(b) <= 1000 for b in blocks)
    with pytest.raises(ValueError, match="weights"):
        engine.counts((0,), weights=np.ones(len(frame)))


def test_domain_learning_histograms_identical_to_numpy(data):
    from sklearn_dpsynth._domain_learning import (_category_counts, _datetime_grid,
                                                  _numeric_grid, _range_counts)

    frame, sdf = data
    source = open_spark(sdf)
    for name, grid in [("score", _numeric_grid()), ("income", _numeric_grid()),
                       ("age", _numeric_grid()), ("when", _datetime_grid())]:
        assert np.array_equal(_range_counts(source, name, grid),
                              _range_counts(frame, name, grid)), name
    values, counts = _category_counts(source, "city")
    expected_values, expected_counts = _category_counts(frame, "city")
    assert values == expected_values and np.array_equal(counts, expected_counts)


def test_domain_learning_histograms_batched_in_one_job_per_kind(data):
    """All range histograms in one job, all category counts in another, each
    identical to its own per-column count in memory."""
    from sklearn_dpsynth._domain_learning import (_category_counts, _category_counts_many,
                                                  _datetime_grid, _numeric_grid, _range_counts,
                                                  _range_counts_many)

    frame, sdf = data
    source = open_spark(sdf)
    requests = [("score", _numeric_grid()), ("when", _datetime_grid()),
                ("income", _numeric_grid()), ("age", _numeric_grid())]
    before = source.n_passes
    batched = _range_counts_many(source, requests)
    assert source.n_passes == before + 1
    for (name, grid), counts in zip(requests, batched):
        assert np.array_equal(counts, _range_counts(frame, name, grid)), name
    observed = _category_counts_many(source, ["city", "city"])
    assert source.n_passes == before + 2
    assert all(values == _category_counts(frame, "city")[0] for values, _ in observed)
    assert all(np.array_equal(c, _category_counts(frame, "city")[1]) for _, c in observed)


def _fit(X, method=MST, seed=3, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return method(random_state=seed, **params).fit(X, epsilon=2.0)


def test_encoding_errors_name_the_column_not_values(data, spark):
    frame, _ = data
    sdf = spark.createDataFrame(frame.assign(city=frame["city"].fillna("a")))
    strict = Domain([spec_from_declaration("city", {"categories": ["a", "b"]}, 8)]
                    + list(_domain().specs[1:]))
    with pytest.raises(ValueError, match="'city'") as error:
        encode_table(open_spark(sdf), strict)
    assert "rare1" not in str(error.value) and "c'" not in str(error.value)
    unclipped = Domain(list(_domain().specs[:4])
                       + [spec_from_declaration("score", {"bounds": (-8, 8)}, 5)]
                       + list(_domain().specs[5:]))
    with pytest.raises(ValueError, match="'score'.*bounds"):
        encode_table(open_spark(sdf), unclipped)


def test_neighbouring_tables_differ_only_in_counts(data, spark):
    """D and D' one row apart: same schema, sizes and domain-learning reads;
    every count off by one in one cell."""
    from sklearn_dpsynth._domain_learning import _numeric_grid

    frame, _ = data
    a = open_spark(spark.createDataFrame(frame))
    b = open_spark(spark.createDataFrame(frame.drop(index=5)))
    pd.testing.assert_frame_equal(a.schema_frame(), b.schema_frame())
    cuts = _numeric_grid().cuts
    assert np.abs(a.range_counts("score", cuts) - b.range_counts("score", cuts)).sum() == 1
    values_a, counts_a = a.category_counts("city")
    values_b, counts_b = b.category_counts("city")
    diff = dict(zip(values_a, counts_a))
    for value, count in zip(values_b, counts_b):
        diff[value] -= count
    assert sorted(diff.values()) == [0.0] * (len(diff) - 1) + [1.0]
    ea, eb = encode_table(a, _domain()), encode_table(b, _domain())
    assert ea.sizes == eb.sizes and ea.columns == eb.columns
    assert np.abs(ea.counts((0, 1, 3)) - eb.counts((0, 1, 3))).sum() == 1


def test_wall_clock_timestamps_and_dates_read_as_utc(spark):
    """TimestampNTZ and Date columns count like the same naive pandas values,
    whatever the session's time zone."""
    stamps = pd.Series(pd.to_datetime(["2001-03-04 05:06:07", "1999-12-31 23:59:59",
                                       "2010-07-01 00:00:00", None]))
    frame = pd.DataFrame({"when": stamps})
    domain = Domain([spec_from_declaration("when", {"bounds": ("1999-01-01", "2011-01-01"),
                                                    "missing": True}, 24)])
    expected = encode_table(frame, domain).counts((0,))
    sdf = spark.createDataFrame(frame).selectExpr("CAST(`when` AS TIMESTAMP_NTZ) AS `when`")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        assert np.array_equal(encode_table(open_spark(sdf), domain).counts((0,)), expected)
        dates = sdf.selectExpr("CAST(`when` AS DATE) AS `when`")
        expected_dates = encode_table(frame.assign(when=stamps.dt.normalize()),
                                      domain).counts((0,))
        assert np.array_equal(encode_table(open_spark(dates), domain).counts((0,)),
                              expected_dates)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


@pytest.mark.parametrize("method", [MST, AIM])
def test_same_seed_same_model_ledger_samples_and_counted_passes(data, method, monkeypatch):
    """Domain learned privately on both paths (noisy histograms, thresholded
    categories with '<other>'), then the method: identical domain, ledger,
    model and samples.

    Every Spark job over the private table is counted: one grouping-sets job
    per kind of privately learned column (the range histograms, the category
    counts) and one for the sub-cells of the ranges' ends, one encodability check (the boolean column has
    no '<other>' code), one job persisting the codes (and one per remapped
    copy, e.g. MST's compressed domain), then exactly one groupBy per
    contingency table, or batch of tables, that the same fit counts in memory
    (and nothing else: no rows reach the driver).
    """
    from sklearn_dpsynth.backends import NumpyTable, _spark

    frame, sdf = data
    params = {"rounds": 3, "max_iter": 20, "final_max_iter": 50} if method is AIM else {}
    memory_counts, remaps, sources, in_batch = [], [], [], []
    original_count, original_remap = NumpyTable._count, NumpyTable.remap
    original_many = NumpyTable._count_many

    def count_many(self, column_sets):  # a batch is one job on Spark
        memory_counts.append(column_sets)
        in_batch.append(1)
        try:
            return original_many(self, column_sets)
        finally:
            in_batch.pop()
    monkeypatch.setattr(NumpyTable, "_count_many", count_many)
    monkeypatch.setattr(NumpyTable, "_count", lambda self, columns, weights: (
        in_batch or memory_counts.append(columns), original_count(self, columns, weights))[1])
    monkeypatch.setattr(NumpyTable, "remap", lambda self, mappings: (
        remaps.append(1), original_remap(self, mappings))[1])
    monkeypatch.setattr(_spark, "open_spark", lambda X: sources.append(open_spark(X))
                        or sources[-1])
    memory, engine = _fit(frame, method, **params), _fit(sdf, method, **params)
    assert engine.domain_.to_dict() == memory.domain_.to_dict()
    assert engine.domain_["city"].other and len(engine.domain_["city"].categories) < 5
    pd.testing.assert_frame_equal(engine.privacy_ledger_.summary(),
                                  memory.privacy_ledger_.summary())
    assert engine.privacy_ledger_.spent() == memory.privacy_ledger_.spent()
    pd.testing.assert_frame_equal(engine.sample(500), memory.sample(500))
    # the unit of the datetime column, the ranges of 4 numeric/datetime columns, the
    # categories of 1, the sub-cells of the ranges' ends
    n_learning_passes = 4
    assert sources[0].n_passes == n_learning_passes + 1 + 1 + len(remaps) + len(memory_counts)


def test_bad_input_is_a_clear_error(spark):
    sdf = spark.createDataFrame(pd.DataFrame({"a": [1.0, 2.0]})).selectExpr("a", "a AS a")
    with pytest.raises(ValueError, match="duplicate column names"):
        open_spark(sdf)


def test_code_columns_and_non_private_learning(spark):
    """Columns declared as codes 0..k-1 encode like numpy, and reject other
    values naming the column; preprocessing='non-private' is refused for Spark."""
    frame = pd.DataFrame({"c": pd.array([0, 2, 1, 1, None, 2], dtype="Int64"),
                          "x": [0.5, 1.5, 2.5, 3.5, 4.5, np.nan]})
    domain = Domain([spec_from_declaration("c", 3, 4),
                     spec_from_declaration("x", {"bounds": (0, 5), "missing": True}, 4)])
    sdf = spark.createDataFrame(frame)
    with pytest.raises(ValueError, match="'c'.*missing"):
        encode_table(open_spark(sdf), domain)
    present = frame.dropna(subset=["c"]).reset_index(drop=True)
    engine = encode_table(open_spark(spark.createDataFrame(present)), domain)
    assert np.array_equal(engine.counts((0, 1)), encode_table(present, domain).counts((0, 1)))
    bad = spark.createDataFrame(present.assign(c=pd.array([0, 2, 1, 3, 2], dtype="Int64")))
    with pytest.raises(ValueError, match="'c'.*integer codes") as error:
        encode_table(open_spark(bad), domain)
    assert "3" not in str(error.value).replace("0..2", "")
    with pytest.raises(ValueError, match="non-private"):
        MST(preprocessing="non-private").fit(sdf, epsilon=1.0)


def test_cached_codes_are_released_with_their_tables(data, spark, monkeypatch):
    """Every persisted codes DataFrame (the encoded table, MST's compressed
    copy) is unpersisted once its table is collected: a fitted model keeps
    none, so a long-lived session does not accumulate private codes."""
    import gc

    from pyspark import StorageLevel

    from sklearn_dpsynth.backends._spark import SparkTable
    frame, sdf = data
    cached = []
    persisted = SparkTable.persisted.__func__

    def recording(cls, *args, **kwargs):
        table = persisted(cls, *args, **kwargs)
        cached.append(table._codes)
        return table

    monkeypatch.setattr(SparkTable, "persisted", classmethod(recording))
    table = encode_table(open_spark(sdf), _domain())
    assert cached[0].storageLevel == StorageLevel.MEMORY_AND_DISK
    remapped = table.remap([np.arange(k) for k in table.sizes])
    del table
    gc.collect()
    assert cached[0].storageLevel == StorageLevel.NONE
    assert cached[1].storageLevel == StorageLevel.MEMORY_AND_DISK
    assert remapped.counts((0,)).sum() == len(frame)
    del remapped
    model = _fit(sdf)
    gc.collect()
    assert len(cached) >= 4  # two per fit: the codes and their compressed copy
    assert all(codes.storageLevel == StorageLevel.NONE for codes in cached)
    assert len(model.sample(5)) == 5


def test_declared_numeric_text_neighbours_share_one_error_without_values(spark):
    """D: a text column declared numeric whose cells all read as numbers; D' and
    D'': one more row of text ("CANARY..."): Spark's own cast error would quote
    it; the library's names the column only, the same for both neighbours."""
    base = pd.DataFrame({"x": [str(i % 10) for i in range(200)], "c": ["a", "b"] * 100})
    domain = {"x": {"kind": "numeric", "bounds": [0, 10]}}
    MST(domain=domain, random_state=0).fit(spark.createDataFrame(base), epsilon=2.0)
    messages = []
    for canary in ("CANARY_7f3k", "CANARY_q9"):
        bad = pd.concat([base, pd.DataFrame({"x": [canary], "c": ["a"]})], ignore_index=True)
        with pytest.raises(ValueError) as error:
            MST(domain=domain, random_state=0).fit(spark.createDataFrame(bad), epsilon=2.0)
        assert error.value.__cause__ is None and error.value.__context__ is None
        messages.append((type(error.value), str(error.value)))
    assert messages[0] == messages[1]
    assert "CANARY" not in messages[0][1] and "column 'x'" in messages[0][1]
    # an engine error itself (text counted as numbers) is withheld, naming the table
    source = open_spark(spark.createDataFrame(pd.DataFrame({"x": ["1", "CANARY_7f3k"]})))
    with pytest.raises(ValueError, match="Spark DataFrame.*withheld") as error:
        source.range_counts("x", np.array([0.0, 1.0]))
    assert "CANARY" not in str(error.value) and error.value.__context__ is None


def test_numeric_categories_of_a_text_column_encode_as_in_memory(spark):
    """Numeric categories of a string column: no number literal equalled the
    text, so every row was refused (or "<other>") where memory reads '1.5' as
    the category 1.5.  Now the same model from Spark as from the frame, and a
    neighbour with one row of text that is no number fits on both alike."""
    from sklearn_dpsynth import IndependentSynthesizer

    base = pd.DataFrame({"x": ["1.5"] * 150 + ["2"] * 40 + ["0.6"] * 10, "c": ["a", "b"] * 100})
    domain = {"x": {"categories": [2, 1.5], "other": True}, "c": {"categories": ["a", "b"]}}
    samples = []
    for frame in (base, pd.concat([base, pd.DataFrame({"x": ["CANARY"], "c": ["a"]})],
                                  ignore_index=True)):
        for table in (frame.astype(object), spark.createDataFrame(frame)):
            model = IndependentSynthesizer(domain=domain, random_state=0).fit(table, epsilon=50.0)
            samples.append(model.sample(2000, random_state=0)["x"].astype(str).tolist())
    assert samples[0] == samples[1] and samples[2] == samples[3]
    assert pd.Series(samples[1]).value_counts().idxmax() == "1.5"


def test_a_date_past_the_nanosecond_range_is_not_a_date_on_spark(spark):
    """A string column declared as hourly dates, and its neighbour with one row
    '9999-12-31': that date is not a date (as in memory and on DuckDB), so the
    neighbour gets the library's error naming the column (a declared kind the
    text does not read as), never an engine overflow or the value."""
    from sklearn_dpsynth import IndependentSynthesizer

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "d": pd.date_range("2013-01-01", periods=2000, freq="h").strftime("%Y-%m-%d %H:%M"),
        "c": rng.choice(["a", "b"], 2000)}).astype(object)
    neighbour = frame.copy()
    neighbour.loc[5, "d"] = "9999-12-31"
    domain = {"d": {"kind": "datetime", "unit": "hour"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        IndependentSynthesizer(domain=domain, random_state=0).fit(
            spark.createDataFrame(frame), epsilon=1.0)
        messages = []
        for data in (spark.createDataFrame(neighbour), neighbour):
            with pytest.raises(ValueError) as error:
                IndependentSynthesizer(domain=domain, random_state=0).fit(data, epsilon=1.0)
            messages.append(str(error.value))
    assert all("'d'" in m and "9999" not in m for m in messages), messages


def _text_kinds_frame(n=3000, seed=4, offsets=40):
    """Text as a CSV read by pandas gives it: ISO dates (``offsets`` of them with
    an offset, one outside the nanosecond range), decimals, whole numbers, words."""
    rng = np.random.default_rng(seed)
    days = np.asarray(pd.date_range("2019-01-01", periods=500, freq="D").strftime("%Y-%m-%d"),
                      dtype=object)
    when = days[rng.integers(0, 500, n)]
    when[:offsets] = [f"{d}T10:00:00+02:00" for d in when[:offsets]]
    when[offsets] = "9999-12-31"
    amount = rng.gamma(2.0, 40.0, n).round(2).astype(str).astype(object)
    amount[rng.random(n) < 0.05] = None
    return pd.DataFrame({"when": when, "amount": amount,
                         "count": rng.integers(0, 30, n).astype(str).astype(object),
                         "word": rng.choice(["x", "y", " z "], n).astype(object)},
                        dtype=object)


@pytest.mark.parametrize("dtype, offsets", [(object, 40), (pd.StringDtype(), 2000)],
                         ids=["object", "string-UTC"])
def test_string_columns_get_the_in_memory_kinds_and_model(spark, dtype, offsets):
    """Undeclared Spark string columns are text, as a pandas text column: the same
    kind histograms (counted by the public parsing rules in Spark), kinds (dates
    in UTC when most carry an offset), domain, ledger and samples as the same
    table in memory."""
    frame = _text_kinds_frame(offsets=offsets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = MST(random_state=1).fit(frame.astype(dtype), epsilon=2.0)
        engine = MST(random_state=1).fit(spark.createDataFrame(frame), epsilon=2.0)
    assert memory.domain_["when"].value_type == "datetime" and memory.domain_["count"].integer
    assert memory.domain_["when"].tz == ("UTC" if offsets > 1500 else None)
    assert engine.domain_.to_dict() == memory.domain_.to_dict()
    pd.testing.assert_frame_equal(engine.privacy_ledger_.summary(),
                                  memory.privacy_ledger_.summary())
    words = lambda rows: rows.assign(word=rows["word"].astype(object).where(  # noqa: E731
        rows["word"].notna(), None))
    pd.testing.assert_frame_equal(words(engine.sample(300)), words(memory.sample(300)))


def test_a_wall_clock_column_declared_in_a_zone_is_refused_as_in_memory(spark):
    stamps = pd.Series(pd.date_range("2021-01-01", periods=200, freq="h"))
    frame = pd.DataFrame({"when": stamps})
    declared = {"when": {"kind": "datetime", "tz": "Europe/Paris"}}
    sdf = spark.createDataFrame(frame).selectExpr("CAST(`when` AS TIMESTAMP_NTZ) AS `when`")
    messages = []
    for table in (frame, sdf):
        with pytest.raises(ValueError, match="column 'when' holds datetimes without") as error:
            MST(random_state=0, domain=declared).fit(table, epsilon=1.0)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    # a TimestampType is an instant: declared in a zone, it fits
    instants = spark.createDataFrame(frame).selectExpr("CAST(`when` AS TIMESTAMP) AS `when`")
    fitted = MST(random_state=0, domain={"when": {**declared["when"], "unit": "hour"}}).fit(
        instants, epsilon=5.0)
    assert fitted.domain_["when"].tz == "Europe/Paris"


def test_iso_dates_with_an_offset_to_the_minute_count_and_read_as_in_memory(spark):
    """A date written to the minute with an offset (``2020-06-01 10:00+01:00``,
    ``...00:00Z``), which Spark's cast reads only with seconds, lands in the same
    kind cell as in memory and reads as the same instant."""
    from sklearn_dpsynth._column_kinds import ColumnKind, kind_counts

    values = ["2020-06-01 00:00Z", "2020-06-01 10:00+01:00", "2020-06-01 10:30+0100",
              "2020-06-01T10:00:00Z", "2020-06-01 10:00", "2020-06-01Z", "12", None]
    source = open_spark(spark.createDataFrame([(v,) for v in values], "a string"))
    engine = source.kind_counts_many({"a": None})["a"]
    np.testing.assert_array_equal(engine, kind_counts(pd.Series(values, dtype=object)))
    read = [row[0] for row in source.frame.select(
        source._read_text("a", ColumnKind("datetime"), False)).collect()]
    expected = pd.to_datetime(pd.Series(values[:4]), format="ISO8601", utc=True)
    assert read[:4] == [s.timestamp() for s in expected]


def test_nanoseconds_past_the_microsecond_count_as_finer_as_in_memory(spark):
    """Spark reads text dates to the microsecond; a fraction past it (``.000000500``)
    is finer than a second in memory, and lands in the finer cell here too."""
    from sklearn_dpsynth._column_kinds import kind_counts

    values = ["2020-06-01 10:00:00.000000500", "2020-06-01T10:00:00.0000005Z",
              "2020-06-01 10:00:00.000000000", "2020-06-01 24:00", "2020-06-01 10:00:00"]
    source = open_spark(spark.createDataFrame([(v,) for v in values], "a string"))
    engine = source.kind_counts_many({"a": None})["a"]
    np.testing.assert_array_equal(engine, kind_counts(pd.Series(values, dtype=object)))


@pytest.mark.parametrize("tz", ["UTC", "Etc/UTC", "GMT", "Z"])
def test_text_dates_may_be_declared_in_any_name_of_utc_on_spark(tz):
    # the same names memory accepts for a zone-less reading (check_wall_clock_zones)
    from sklearn_dpsynth.backends._spark import _refuse_zones

    _refuse_zones({"when": tz})


def test_text_dates_in_another_zone_are_refused_on_spark_naming_the_column():
    from sklearn_dpsynth.backends._spark import _refuse_zones

    with pytest.raises(ValueError, match="column 'when'"):
        _refuse_zones({"when": "Europe/Paris"})
