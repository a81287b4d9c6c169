"""Encoded tables: exact counts against brute force, the contract, public encoding."""

import itertools

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth.backends import (EncodedTable, NumpyTable, encode_public_table,
                                      encode_table)
from sklearn_dpsynth.backends._encode import encode_in_blocks
from sklearn_dpsynth.domain import ColumnSpec, Domain

SIZES = [3, 2, 4, 1]
COLUMNS = ["a", "b", "c", "d"]


@pytest.fixture
def codes():
    rng = np.random.default_rng(0)
    return np.column_stack([rng.integers(0, k, 257) for k in SIZES])


def _brute_force(codes, columns, weights=None):
    """Contingency table by looping over every row."""
    out = np.zeros(tuple(SIZES[c] for c in columns))
    for i, row in enumerate(codes):
        out[tuple(row[c] for c in columns)] += 1.0 if weights is None else weights[i]
    return out


# ------------------------------------------------------------------ counts
@pytest.mark.parametrize("columns", [(0,), (2, 0), (1, 2, 3), (3, 2, 1, 0), ()])
def test_counts_equal_brute_force(codes, columns):
    table = NumpyTable(codes, COLUMNS, SIZES)
    counts = table.counts(columns)
    assert counts.shape == tuple(SIZES[c] for c in columns)
    np.testing.assert_array_equal(counts, _brute_force(codes, columns))
    weights = np.random.default_rng(1).random(len(codes))
    np.testing.assert_allclose(table.counts(columns, weights=weights),
                               _brute_force(codes, columns, weights))


def test_neighbouring_tables_differ_in_one_cell_by_one(codes):
    table = NumpyTable(codes, COLUMNS, SIZES)
    for row in (0, 100, 256):
        neighbour = NumpyTable(np.delete(codes, row, axis=0), COLUMNS, SIZES)
        for columns in itertools.combinations(range(4), 2):
            diff = table.counts(columns) - neighbour.counts(columns)
            assert np.abs(diff).sum() == 1.0
            assert diff[tuple(codes[row, c] for c in columns)] == 1.0


def test_remap_counts_the_mapped_codes(codes):
    mappings = [np.array([0, 1, 1]), np.array([0, 0]), np.array([2, 0, 1, 2]), np.array([0])]
    table = NumpyTable(codes, COLUMNS, SIZES).remap(mappings)
    mapped = np.column_stack([m[codes[:, j]] for j, m in enumerate(mappings)])
    assert table.sizes == [2, 1, 3, 1] and table.columns == COLUMNS
    np.testing.assert_array_equal(table.to_numpy(), mapped)
    expected = np.zeros((2, 3))
    np.add.at(expected, (mapped[:, 0], mapped[:, 2]), 1.0)
    np.testing.assert_array_equal(table.counts([0, 2]), expected)
    with pytest.raises(ValueError, match=r"mappings\[2\]"):
        NumpyTable(codes, COLUMNS, SIZES).remap(mappings[:2] + [np.array([0, 1])] + mappings[3:])
    with pytest.raises(ValueError, match="one array per column"):
        NumpyTable(codes, COLUMNS, SIZES).remap(mappings[:3])


def test_chunks_and_to_numpy_hold_every_row_read_only(codes):
    table = NumpyTable(codes, COLUMNS, SIZES)
    assert table.n_rows == len(codes)
    chunks = list(table.iter_chunks(chunk_rows=100))
    assert [len(c) for c in chunks] == [100, 100, 57]
    np.testing.assert_array_equal(np.concatenate(chunks), codes)
    np.testing.assert_array_equal(table.to_numpy(), codes)
    with pytest.raises(ValueError):
        table.to_numpy()[0, 0] = 1
    with pytest.raises(ValueError):
        chunks[0][0, 0] = 1
    with pytest.raises(ValueError, match="chunk_rows"):
        next(table.iter_chunks(chunk_rows=0))


def test_bad_arguments_get_clear_errors_that_do_not_reveal_the_rows(codes):
    table = NumpyTable(codes, COLUMNS, SIZES)
    with pytest.raises(ValueError, match="columns: position 4"):
        table.counts([4])
    with pytest.raises(ValueError, match="columns: repeated"):
        table.counts([1, 1])
    with pytest.raises(TypeError, match="columns"):
        table.counts(["a"])
    with pytest.raises(ValueError, match="weights") as error:
        table.counts([0], weights=np.ones(len(codes) + 1))
    assert str(len(codes)) not in str(error.value)
    with pytest.raises(ValueError, match="weights"):
        table.counts([0], weights=np.full(len(codes), np.nan))
    assert str(len(codes)) not in repr(table)
    with pytest.raises(ValueError, match="0..sizes"):
        NumpyTable(codes + 5, COLUMNS, SIZES)
    with pytest.raises(ValueError, match="4 columns"):
        NumpyTable(codes[:, :2], COLUMNS, SIZES)
    with pytest.raises(ValueError, match="same length"):
        NumpyTable(codes, COLUMNS[:2], SIZES)


def test_a_backend_missing_a_method_cannot_be_instantiated():
    class CountsOnly(EncodedTable):
        def _count(self, columns, weights):
            return np.zeros(())

    with pytest.raises(TypeError, match="abstract"):
        CountsOnly(["a"], [2])


# ----------------------------------------------------------------- encoding
@pytest.fixture
def frame():
    return pd.DataFrame({"age": [20.0, 35.0, 50.0, np.nan], "city": ["x", "y", "x", None],
                         "code": [0, 1, 2, 1]})


@pytest.fixture
def domain():
    return Domain.from_declaration({
        "age": {"bounds": (18, 60), "n_bins": 4, "missing": True},
        "city": ["x", "y", None], "code": 3})


def test_encode_table_is_the_domain_encoding(frame, domain):
    table = encode_table(frame, domain)
    assert isinstance(table, NumpyTable)
    np.testing.assert_array_equal(table.to_numpy(), domain.encode(frame))
    assert table.columns == domain.columns and table.sizes == domain.sizes
    with pytest.raises(TypeError, match="DataFrame"):
        encode_table(frame.to_numpy(), domain)


def test_public_values_outside_a_declared_domain_name_the_column_and_count(frame, domain):
    public = frame.copy()
    public["code"] = [0, 7, 9, 1]
    public.loc[1, "age"] = 123.0
    with pytest.raises(ValueError, match=r"public_data: column 'age' has 1 of 4 rows") as error:
        encode_public_table(public, domain)
    assert "123" not in str(error.value)
    public["age"] = frame["age"]
    with pytest.raises(ValueError, match=r"column 'code' has 2 of 4 rows") as error:
        encode_public_table(public, domain)
    assert "7" not in str(error.value) and "9" not in str(error.value)
    public["code"] = [0, "zz", 1, 1]
    with pytest.raises(ValueError, match=r"column 'code' has 1 of 4 rows") as error:
        encode_public_table(public, domain)
    assert "zz" not in str(error.value)


def test_public_values_in_learned_columns_clip_or_go_to_other():
    # what private domain learning produces: clipped bounds, an "other" category
    learned = Domain([ColumnSpec("x", "numeric", edges=np.linspace(40, 60, 9), clip=True),
                      ColumnSpec("c", "categorical", categories=["u", "w"], other=True)])
    public = pd.DataFrame({"x": [-1e9, 50.0, 1e9], "c": ["u", "never-seen", "w"]})
    codes = encode_public_table(public, learned).to_numpy()
    assert codes.tolist() == [[0, 0], [4, 2], [7, 1]]
    np.testing.assert_array_equal(codes, learned.encode(public))


@pytest.mark.parametrize("sizes, dtype", [([3, 256], np.uint8), ([3, 257], np.uint16),
                                          ([70000, 2], np.uint32)])
def test_codes_held_in_the_smallest_dtype_count_like_brute_force(sizes, dtype, monkeypatch):
    """Compact codes (uint8/16/32 from the largest size), counted in blocks of
    rows (a block boundary inside the table), remapped and handed out as
    int64: every table equals the loop over the rows, weighted or not."""
    from sklearn_dpsynth import _marginals

    rng = np.random.default_rng(1)
    codes = np.column_stack([rng.integers(0, k, 301) for k in sizes])
    codes[0] = [k - 1 for k in sizes]  # the largest codes survive the cast
    table = NumpyTable(codes, ["x", "y"], sizes)
    assert table.codes_dtype == np.dtype(dtype).name
    monkeypatch.setattr(_marginals, "COUNT_CHUNK_ROWS", 64)
    weights = rng.random(301)
    for columns in [(0,), (1,), (0, 1), (1, 0)]:
        expected = np.zeros(tuple(sizes[c] for c in columns))
        weighted = np.zeros_like(expected)
        np.add.at(expected, tuple(codes[:, c] for c in columns), 1.0)
        np.add.at(weighted, tuple(codes[:, c] for c in columns), weights)
        assert np.array_equal(table.counts(columns), expected), columns
        assert np.allclose(table.counts(columns, weights), weighted), columns
    assert table.to_numpy().dtype == np.int64 and np.array_equal(table.to_numpy(), codes)
    assert np.array_equal(np.concatenate(list(table.iter_chunks(50))), codes)
    halved = table.remap([np.arange(k) // 2 for k in sizes])
    assert np.array_equal(halved.to_numpy(), codes // 2)


def test_encode_series_matches_encode_without_object_rows():
    """Factorized categorical encoding gives encode's codes (1 == 1.0 == True
    merge, None/NaN/NA are missing, unknown values go to <other>) and, where
    encode rejects a value, encode's own error."""
    spec = ColumnSpec("c", "categorical", categories=["a", 1, "z"], other=True, missing=True)
    series = [pd.Series(["a", None, "b", "z", np.nan, "a"], dtype=object),
              pd.Series(["a", None, "b", "z"], dtype="string[pyarrow]"),
              pd.Series(pd.Categorical(["z", "a", None, "q"], categories=["q", "z", "a", "w"])),
              pd.Series([1, 1.0, "1", None, True], dtype=object)]
    for values in series:
        assert np.array_equal(spec.encode_series(values), spec.encode(values.to_numpy()))
    strict = ColumnSpec("c", "categorical", categories=["a", "b"])
    for bad in [pd.Series(["a", "c"]), pd.Series(["a", None])]:
        with pytest.raises(ValueError) as expected:
            strict.encode(bad.to_numpy())
        with pytest.raises(ValueError, match="column 'c'") as got:
            strict.encode_series(bad)
        assert str(got.value) == str(expected.value)
    domain = Domain([spec, ColumnSpec("n", "numeric", edges=np.array([0.0, 1.0, 2.0]))])
    frame = pd.DataFrame({"c": series[0], "n": [0.5, 1.5, 0.2, 2.0, 1.0, 0.0]})
    assert np.array_equal(domain.encode(frame, dtype=np.uint8), domain.encode(frame))
    with pytest.raises(ValueError, match="dtype"):
        Domain([ColumnSpec("k", "codes", n_codes=300)]).encode(
            pd.DataFrame({"k": [0]}), dtype=np.uint8)


def _mixed_frame(n=23):
    """NaN, values to clip, unknown categories (<other>), pyarrow strings, a pandas
    Categorical, nullable integers, booleans and datetimes with NaT."""
    rng = np.random.default_rng(3)
    stamps = pd.Series(pd.to_datetime("2000-01-01") + pd.to_timedelta(
        rng.integers(0, 3650, n), unit="D"))
    stamps[rng.random(n) < 0.2] = pd.NaT
    frame = pd.DataFrame({
        "x": np.where(rng.random(n) < 0.2, np.nan, rng.normal(50, 30, n)),
        "city": pd.Series(rng.choice(["a", "b", "rare", None], n), dtype=object),
        "s": pd.Series(rng.choice(["u", "v", "w"], n), dtype="string[pyarrow]"),
        "cat": pd.Series(pd.Categorical(rng.choice(["p", "q"], n), categories=["q", "p", "r"])),
        "k": pd.array(np.where(rng.random(n) < 0.2, None, rng.integers(0, 4, n)), dtype="Int64"),
        "flag": rng.random(n) < 0.5,
        "when": stamps})
    domain = Domain.from_declaration({
        "x": {"bounds": (20, 60), "n_bins": 5, "missing": True, "clip": True},
        "city": {"categories": ["a", "b"], "other": True, "missing": True},
        "s": ["u", "v", "w"], "cat": ["p", "q", "r"],
        "k": {"categories": [0, 1, 2, 3], "missing": True}, "flag": [False, True],
        "when": {"bounds": ("2001-01-01", "2008-01-01"), "n_bins": 4, "missing": True,
                 "clip": True}})
    return frame, domain


@pytest.mark.parametrize("block_rows", [1, 2, 7, 22, 23, 1000])
def test_blocked_encoding_is_the_domain_encoding(block_rows):
    """Encoding a DataFrame a block of rows at a time (how the numpy backend keeps
    its temporaries small) gives domain.encode's codes, in the compact dtype."""
    frame, domain = _mixed_frame()
    codes = encode_in_blocks(frame, domain, block_rows=block_rows)
    assert codes.dtype == np.uint8
    np.testing.assert_array_equal(codes, domain.encode(frame))
    assert encode_in_blocks(frame.iloc[:0], domain, block_rows).shape == (0, 7)


def test_blocked_encoding_raises_the_whole_columns_error():
    """A value outside a declared domain in a later block raises domain.encode's
    error for the column (the same message as the whole column's), and an
    object column that mixes datetimes (first block) with numbers (second) is
    judged as a whole, as domain.encode judges it."""
    frame = pd.DataFrame({"c": ["a", "z", "a", "z", "b", "a"], "n": [1.0] * 6})
    domain = Domain.from_declaration({"c": ["a", "b"], "n": {"bounds": (0, 2), "n_bins": 2}})
    with pytest.raises(ValueError) as expected:
        domain.encode(frame)
    with pytest.raises(ValueError) as got:
        encode_in_blocks(frame, domain, block_rows=2)
    assert str(got.value) == str(expected.value) and "column 'c'" in str(got.value)
    wide = Domain.from_declaration({"c": ["a"], "n": {"bounds": (0, 2e9), "n_bins": 2}})
    mixed = pd.DataFrame({"c": ["a"] * 4, "n": pd.Series(
        [pd.Timestamp("2001-01-01"), pd.Timestamp("2002-01-01"), 5.0, 6.0], dtype=object)})
    for block in (mixed.iloc[:2], mixed.iloc[2:]):  # each block alone is encodable
        wide.encode(block)
    with pytest.raises(TypeError) as expected:
        wide.encode(mixed)
    with pytest.raises(TypeError) as got:
        encode_in_blocks(mixed, wide, block_rows=2)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("block_rows", [1, 2, 3, 1 << 18])
def test_category_counts_of_a_dataframe_in_blocks_are_the_whole_columns(block_rows,
                                                                          monkeypatch):
    """Private domain learning counts a DataFrame's categories a block of rows at a
    time: the same values, in the same first-appearance order (1 == 1.0 == True
    merge under the first one seen; missing values are not counted), and the same
    counts as one factorization of the whole column."""
    from sklearn_dpsynth import _domain_learning
    from sklearn_dpsynth.backends import _memory

    frame, _ = _mixed_frame(29)
    frame["mixed"] = pd.Series([True, "a", 1, None, 1.0, "b", np.nan] * 4 + [2], dtype=object)

    def whole_column(series):
        row_codes, distinct = pd.factorize(series, use_na_sentinel=True)
        counts = np.bincount(row_codes[row_codes >= 0], minlength=len(distinct))
        return list(pd.Series(distinct).astype(object)), counts.astype(float)

    monkeypatch.setattr(_memory, "CATEGORY_BLOCK_ROWS", block_rows)
    names = ["city", "s", "cat", "k", "mixed"]
    got = _domain_learning._category_counts_many(frame, names)
    for name, (values, counts) in zip(names, got):
        expected_values, expected_counts = whole_column(frame[name])
        assert values == expected_values and [type(v) for v in values] == \
            [type(v) for v in expected_values], name
        np.testing.assert_array_equal(counts, expected_counts)
    assert got[-1][0] == [True, "a", "b", 2] and got[-1][1].tolist() == [12, 4, 4, 1]
    empty = _domain_learning._category_counts_many(frame.iloc[:0], names)
    assert all(values == [] and counts.shape == (0,) for values, counts in empty)


def test_open_source_holds_dataframes_and_arrays_in_memory_and_passes_sources_through():
    """One dispatch: a DataFrame is held as it is (not copied), an array as a frame
    with positional columns whose input form says so, a source is itself."""
    from sklearn_dpsynth.backends import InMemorySource, open_source, register_source

    frame = pd.DataFrame({"a": [1.5, 2.5], "b": ["x", "y"]})
    source = open_source(frame)
    assert isinstance(source, InMemorySource) and source.rows_in_memory() is frame
    assert open_source(source) is source
    form = source.input_form()
    assert form.is_frame and form.columns == ["a", "b"]
    array = open_source(np.array([[1, 2], [3, 4]]))
    form = array.input_form()
    assert not form.is_frame and form.columns == [0, 1] and array.columns == [0, 1]
    assert array.range_counts(1, np.array([3.0])).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="X is empty"):
        open_source(frame.iloc[:0]).input_form()
    with pytest.raises(ValueError, match="2-D"):
        open_source(np.arange(3))
    with pytest.raises(TypeError, match="two callables"):
        register_source(InMemorySource, None)


def test_in_memory_source_reads_kinds_into_its_own_table_not_the_callers():
    """Text declared numeric is read as numbers by the source from then on (its
    schema, counts and encoding); the caller's frame is left as it was."""
    from sklearn_dpsynth.backends import open_source

    frame = pd.DataFrame({"a": pd.Series(["1", "2.5", None, "4"], dtype=object)})
    source = open_source(frame)
    kinds = source.read_column_kinds({"a": {"kind": "numeric"}}, budget=None, rng=None)
    assert kinds["a"].kind == "numeric"
    assert source.schema_frame()["a"].dtype == np.float64 and len(source.schema_frame()) == 0
    assert frame["a"].dtype == object
    assert source.range_counts("a", np.array([2.0, 3.0])).tolist() == [1.0, 1.0, 1.0]
    domain = Domain.from_declaration({"a": {"bounds": (0, 4), "n_bins": 4, "missing": True}})
    assert source.encode(domain).to_numpy()[:, 0].tolist() == [1, 2, 4, 3]


def test_a_second_fit_on_the_same_in_memory_source_reads_and_pays_for_the_kinds_again():
    """Fitting twice on one source reads its text columns' kinds from the input
    each time (a "kind of" ledger entry in both fits, as a DuckDB source does):
    the second fit neither inherits the first fit's private choice unpaid nor
    changes its seeded output."""
    from sklearn_dpsynth import IndependentSynthesizer
    from sklearn_dpsynth.backends import InMemorySource

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": pd.Series([str(v) for v in rng.integers(0, 50, 2000)],
                                         dtype=object),
                          "b": pd.Series(rng.choice(["x", "y"], 2000), dtype=object)})
    source = InMemorySource(frame)
    fits = [IndependentSynthesizer(random_state=1).fit(table, epsilon=1.0)
            for table in (source, source, frame)]
    for fit in fits:
        assert "kind of 'a'" in [entry.target for entry in fit.privacy_ledger_.entries]
        assert fit.feature_dtypes_in_ == fits[-1].feature_dtypes_in_
    samples = [fit.sample(50, random_state=0) for fit in fits]
    assert all(sample.equals(samples[-1]) for sample in samples)
