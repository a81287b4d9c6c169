"""The DuckDB backend: Parquet/CSV files, globs or relations, counted out of core.

The private table stays in DuckDB.  Encoding to codes is a SQL expression
per column (the domain's public bin edges as a binary search of ``CASE``
tests, category maps, missing and ``<other>`` codes, clipping, datetimes
as seconds since 1970-01-01 UTC) and :meth:`DuckDBTable.counts` is a
``GROUP BY`` on those expressions: only contingency tables reach Python.
The codes are written once into a temporary DuckDB table of small
integers (spilled to disk beyond DuckDB's memory limit), never into Python.
Domain learning reads the same engine-side histograms over the public
grids (``DuckDBSource.range_counts``, ``DuckDBSource.category_counts``).
The counts are exact integers, identical to the in-memory backend's, and
the noise is drawn in the library, so a seeded fit gives the same model.

Privacy: every function here returns exact counts (sensitivity 1 under
add/remove-one-row neighbours) that the callers release only through a
mechanism of the ledger; the schema (column names and SQL types) is
public; error messages name columns, never values or row counts.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import tempfile
import weakref
from typing import Any, Hashable, Iterator, Sequence

import numpy as np
import pandas as pd

from ..domain import ColumnSpec, Domain
from .._column_kinds import (DATE_PATTERN, INTEGER_PATTERN, KIND_CELLS, NS_RANGE_US,
                             NUMBER_PATTERN, OFFSET_PATTERN, SUB_MICROSECOND_PATTERN)
from .._tableio import CSV_NA_STRINGS, csv_header
from ._engine import (BOUNDS, CATEGORIES, MISSING, NOT_READ, categories_in_order, codes_reason,
                      counts_from_cells, encoding_path, family, histogram_from_cells,
                      kind_dtype, kind_family, modelled_dtype, raise_unencodable, row_blocks,
                      text_kinds, with_implied_kinds)
from ._registry import register_source
from ._source import TableSource
from ._table import DEFAULT_CHUNK_ROWS, EncodedTable, in_passes

__all__ = ["DuckDBSource", "DuckDBTable", "open_duckdb", "is_duckdb_input"]

_VIEW_IDS = itertools.count()
_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
                  "USMALLINT", "UINTEGER", "UBIGINT")
_FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL")


#: A day in microseconds.
_DAY_US = 86_400_000_000


def _wall_clock_instant(wall: str, tz: str) -> str:
    """SQL for the instant (``TIMESTAMPTZ``) of the naive ``TIMESTAMP`` ``wall`` read
    as a wall clock of ``tz``; NULL for a time the zone skips or repeats, as in
    memory (``tz_localize(tz, ambiguous="NaT", nonexistent="NaT")``), where
    DuckDB's ``timezone`` would shift a skipped time and pick one of a repeated
    time's instants.  A time is skipped when its instant's wall clock differs;
    repeated when the instant shifted by the change of offset across the day
    around it (the zone's one transition near it) has the same wall clock."""
    zone = _string(tz)
    instant = f"timezone({zone}, {wall})"

    def wall_at(shift: str) -> str:  # the wall clock of the instant shifted by microseconds
        return f"timezone({zone}, {instant} + to_microseconds({shift}))"

    def offset_us(shift: str) -> str:  # the zone's offset at the shifted instant
        return f"(epoch_us({wall_at(shift)}) - epoch_us({instant}) - ({shift}))"

    change = f"abs({offset_us(str(_DAY_US))} - {offset_us(str(-_DAY_US))})"
    return (f"(CASE WHEN {wall_at('0')} <> {wall} THEN NULL "
            f"WHEN {change} <> 0 AND ({wall_at(change)} = {wall} "
            f"OR {wall_at(f'-({change})')} = {wall}) THEN NULL ELSE {instant} END)")


def _epoch_ns(timestamp: str) -> str:
    """SQL for the nanoseconds since the epoch of ``timestamp``, NULL outside the
    nanosecond range: such a date does not read as a date, as in memory
    (``sklearn_dpsynth._column_kinds.in_ns_range``), so that one row's value never
    makes the query fail (a failure would depend on that row)."""
    low, high = NS_RANGE_US
    return (f"(CASE WHEN epoch_us({timestamp}) BETWEEN {low} AND {high} "
            f"THEN epoch_ns({timestamp}) END)")


def _duckdb():
    try:
        import duckdb
    except ImportError:  # pragma: no cover - exercised without the extra
        raise ImportError("reading a path or a DuckDB relation needs duckdb: "
                          "pip install 'sklearn-dpsynth[duckdb]'.") from None
    return duckdb


def is_duckdb_input(X: Any) -> bool:
    """Whether ``X`` is a path/glob (str or PathLike) or a DuckDB relation."""
    if isinstance(X, (str, os.PathLike)):
        return True
    return type(X).__name__ == "DuckDBPyRelation"


def _quote(name: Hashable) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def _double(value: float) -> str:
    """A DOUBLE literal that round-trips ``value`` exactly."""
    return f"CAST('{float(value)!r}' AS DOUBLE)"


def _literal(value: Any) -> str | None:
    """A SQL literal for a category value (None for values SQL cannot compare)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _double(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return None


def _kind(sql_type: str) -> str:
    """The kind of a SQL type, for :func:`~._engine.modelled_dtype` (schema only)."""
    sql_type = sql_type.upper()
    if sql_type == "BOOLEAN":
        return "boolean"
    if sql_type in _INTEGER_TYPES:
        return "integer"
    if sql_type in _FLOAT_TYPES or sql_type.startswith("DECIMAL"):
        return "float"
    if _is_instant(sql_type):
        return "datetime_utc"
    if sql_type.startswith("TIMESTAMP") or sql_type == "DATE":
        return "datetime"
    return "other"


def _is_instant(sql_type: str) -> bool:
    """Whether a SQL type holds instants: ``TIMESTAMP WITH TIME ZONE`` in any
    precision (``TIMESTAMPTZ_NS`` is how DuckDB reads a nanosecond zoned
    Parquet column, such as pandas 2 writes)."""
    sql_type = sql_type.upper()
    return sql_type.startswith("TIMESTAMP WITH TIME ZONE") or sql_type.startswith("TIMESTAMPTZ")


def _string(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _count_at_most(value: str, cuts: Sequence[float], low: int, high: int) -> str:
    """SQL for the largest ``k`` in ``low..high`` with ``value >= cuts[k - 1]``
    (``low`` when none): a binary search of nested CASE tests."""
    if low == high:
        return str(low)
    mid = (low + high + 1) // 2
    return (f"CASE WHEN {value} >= {_double(cuts[mid - 1])} THEN "
            f"{_count_at_most(value, cuts, mid, high)} ELSE "
            f"{_count_at_most(value, cuts, low, mid - 1)} END")


class DuckDBSource(TableSource):
    """A private table held by DuckDB, before encoding.

    Parameters
    ----------
    relation_sql : str
        A SQL table expression (``read_parquet(...)``, a view name).
    connection : duckdb.DuckDBPyConnection or duckdb.DuckDBPyRelation
        Where queries run: a connection, or the relation itself (queried
        as ``relation_sql`` through ``relation.query``).
    label : str
        What the caller passed, for messages (never the data).
    """

    def __init__(self, relation_sql: str, connection: Any, label: str) -> None:
        self.connection = connection
        self.label = label
        self.relation_sql = relation_sql
        self.view = relation_sql
        described = self.run(f"SELECT * FROM {relation_sql} LIMIT 0")
        self._columns = list(described.columns)
        self.sql_types = {c: str(t) for c, t in zip(described.columns, described.types)}
        self.kinds: dict = {}  # text columns read as numbers or dates: (ColumnKind, strict)

    # ------------------------------------------------------------- schema
    @property
    def columns(self) -> list:
        """Column names (public: the schema)."""
        return list(self._columns)

    def schema_frame(self) -> pd.DataFrame:
        """An empty DataFrame with the columns' modelled pandas dtypes (text
        columns read by kind as that kind's, see ``read_by_kinds``)."""
        return pd.DataFrame({c: pd.Series([], dtype=kind_dtype(self.kinds[c][0])
                                          if c in self.kinds else modelled_dtype(_kind(t)))
                             for c, t in self.sql_types.items()})

    def text_columns(self) -> list:
        """The columns of a text SQL type (public: the schema)."""
        return [c for c, t in self.sql_types.items() if t.upper() == "VARCHAR"]

    def read_by_kinds(self, kinds: dict) -> None:
        """Read text columns as numbers or dates: ``{column: (ColumnKind, strict)}``;
        a strict (declared) column's text that does not read so is an error
        at encoding, any other becomes missing."""
        self.kinds = text_kinds(kinds, self.text_columns())

    def _family(self, name: Hashable) -> str:
        if name in self.kinds:
            return kind_family(self.kinds[name][0])
        return family(_kind(self.sql_types[name]))

    def _text(self, name: Hashable) -> str:
        return f"trim(CAST({_quote(name)} AS VARCHAR))"

    def _read_text(self, name: Hashable, kind: Any, strict: bool) -> str:
        """SQL for a text column read as ``kind``: a DOUBLE (dates in seconds since
        the epoch), NULL when it does not read so (the rules of
        ``sklearn_dpsynth._column_kinds``; a declared integer column reads
        whole numbers only)."""
        text = self._text(name)
        if kind.kind != "datetime":
            whole = kind.kind in ("integer", "codes")
            pattern = INTEGER_PATTERN if strict and whole else NUMBER_PATTERN
            number = (f"(CASE WHEN regexp_full_match({text}, {_string(pattern)}) "
                      f"THEN TRY_CAST({text} AS DOUBLE) END)")
            return f"round_even({number}, 0)" if whole else number
        return (f"(CAST({self._instant_ns(text, kind.tz)} AS DOUBLE) "
                "/ CAST(1000000000 AS DOUBLE))")

    @staticmethod
    def _instant_ns(text: str, tz: str | None) -> str:
        """Nanoseconds since the epoch of ISO dates (an offset read as written,
        a wall-clock time in ``tz`` or UTC); NULL for any other text."""
        naive = f"TRY_CAST({text} AS TIMESTAMP)"
        if tz is not None:
            naive = _wall_clock_instant(naive, tz)
        aware = f"TRY_CAST({text} AS TIMESTAMPTZ)"
        return (f"(CASE WHEN NOT regexp_full_match({text}, {_string(DATE_PATTERN)}) THEN NULL "
                f"WHEN regexp_full_match({text}, {_string(OFFSET_PATTERN)}) THEN "
                f"{_epoch_ns(aware)} ELSE {_epoch_ns(naive)} END)")

    def _kind_cell(self, name: Hashable, tz: str | None) -> str:
        """SQL for the cell of ``KIND_CELLS`` (``sklearn_dpsynth._column_kinds``) of
        each present value of a text column, or of a typed datetime column by its
        UTC wall clock (NULL when missing)."""
        text, read_in = self._text(name), tz
        if _is_instant(self.sql_types[name]):
            # an instant written as its UTC wall clock: read in UTC, whatever tz is
            text, read_in = (f"trim(CAST(timezone('UTC', CAST({_quote(name)} AS TIMESTAMPTZ)) "
                             "AS VARCHAR))"), None
        wall = f"make_timestamp({self._instant_ns(text, None)} // 1000)"
        if tz is not None:  # the wall clock in tz of the instant
            wall = (f"timezone({_string(tz)}, to_timestamp("
                    f"{self._instant_ns(text, read_in)} // 1000 / 1000000.0))")
        n_dates = (len(KIND_CELLS) - 3) // 2  # naive dates, then dates with an offset
        # nanoseconds past the microsecond (which the cast drops) are finer, as in memory
        units = (f"WHEN regexp_full_match({text}, {_string(SUB_MICROSECOND_PATTERN)}) "
                 f"THEN {2 + n_dates} " + " ".join(
                     f"WHEN {wall} = date_trunc('{unit}', {wall}) THEN {3 + i}"
                     for i, unit in enumerate(("year", "month", "day", "hour", "minute",
                                               "second"))))
        offset = (f"CASE WHEN regexp_full_match({text}, {_string(OFFSET_PATTERN)}) "
                  f"THEN {n_dates} ELSE 0 END")
        dates = f"(CASE {units} ELSE {2 + n_dates} END) + {offset}"
        return (f"CASE WHEN {text} IS NULL THEN NULL "
                f"WHEN regexp_full_match({text}, {_string(INTEGER_PATTERN)}) THEN 0 "
                f"WHEN regexp_full_match({text}, {_string(NUMBER_PATTERN)}) THEN 1 "
                f"WHEN {self._instant_ns(text, read_in)} IS NOT NULL THEN {dates} ELSE 2 END")

    def kind_counts_many(self, zones: dict) -> dict:
        """Exact kind histograms (``sklearn_dpsynth._column_kinds.kind_counts``)
        of text columns ``{column: tz}``, in one ``GROUPING SETS`` query per batch."""
        out: dict = {}
        names = list(zones)
        for batch in in_passes(names):
            cells = [self._kind_cell(name, zones[name]) for name in batch]
            groups = self._grouped(cells, "SELECT * FROM {src}", with_first=False)
            out.update((name, histogram_from_cells(rows, len(KIND_CELLS)))
                       for name, rows in zip(batch, groups))
        return out

    def number(self, name: Hashable) -> str:
        """SQL for the column as a DOUBLE (datetimes in seconds since the
        epoch, UTC); NULL when missing (NULL or NaN)."""
        if name in self.kinds:
            return self._read_text(name, *self.kinds[name])
        column = _quote(name)
        if self._family(name) == "datetime":
            if self.sql_types[name].upper() == "DATE":
                column = f"CAST({column} AS TIMESTAMP)"
            elif _is_instant(self.sql_types[name]):  # TIMESTAMPTZ_NS has no epoch_ns
                column = f"CAST({column} AS TIMESTAMPTZ)"
            return f"(CAST(epoch_ns({column}) AS DOUBLE) / CAST(1000000000 AS DOUBLE))"
        value = f"CAST({column} AS DOUBLE)"
        return f"(CASE WHEN isnan({value}) THEN NULL ELSE {value} END)"

    def run(self, sql: str) -> Any:
        """A DuckDB relation for ``sql`` (``{src}`` is replaced by the source)."""
        sql = sql.replace("{src}", self.relation_sql)
        if type(self.connection).__name__ == "DuckDBPyRelation":
            return self.connection.query(self.view, sql)
        return self.connection.sql(sql)

    def query(self, sql: str, fetch: str = "fetchall") -> Any:
        """The result of ``run(sql)``, fetched with its method ``fetch``.

        An engine error is replaced by one that says only which table
        failed: DuckDB's messages may quote the private rows (e.g. a CSV
        line its sniffed types cannot convert) and their line numbers.
        """
        duckdb = _duckdb()
        try:
            return getattr(self.run(sql), fetch)()
        except duckdb.Error:
            pass  # raised below, outside the handler: the engine's error is not chained
        raise self.engine_error()

    def rows(self, sql: str) -> Iterator[tuple]:
        """The rows of ``run(sql)``, streamed; engine errors as in :meth:`query`."""
        duckdb = _duckdb()
        try:
            yield from self.run(sql).iter_rows()
            return
        except duckdb.Error:
            pass
        raise self.engine_error()

    def engine_error(self) -> ValueError:
        """The error for a failed query (public: the source's label only)."""
        return ValueError(f"X: DuckDB failed to read {self.label}; its message is "
                          "withheld because it may quote private rows.")

    # ---------------------------------------------------- domain learning
    def range_counts_many(self, requests: Sequence[tuple[Hashable, np.ndarray]]
                          ) -> list[np.ndarray]:
        """:meth:`range_counts` of several ``(name, cuts)``, in one
        ``GROUPING SETS`` query per batch of ``GROUPING_SETS_PER_PASS``
        columns (one scan of the table each)."""
        out: list[np.ndarray] = []
        for batch in in_passes(requests):
            values = ", ".join(f"{self.number(name)} AS v{j}" for j, (name, _) in
                               enumerate(batch))
            cells = [f"CASE WHEN v{j} IS NULL THEN NULL ELSE "
                     f"{_count_at_most(f'v{j}', cuts, 0, len(cuts))} END"
                     for j, (_, cuts) in enumerate(batch)]
            groups = self._grouped(cells, f"SELECT {values} FROM {{src}}", with_first=False)
            out.extend(histogram_from_cells(rows, len(cuts) + 1)
                       for (_, cuts), rows in zip(batch, groups))
        return out

    def category_counts_many(self, names: Sequence[Hashable]) -> list[tuple[list, np.ndarray]]:
        """:meth:`category_counts` of several columns, in one ``GROUPING SETS``
        query per batch of ``GROUPING_SETS_PER_PASS`` columns."""
        out: list[tuple[list, np.ndarray]] = []
        for batch in in_passes(names):
            values = ", ".join(f"{_quote(name)} AS v{j}" for j, name in enumerate(batch))
            inner = f"SELECT {values}, row_number() OVER () AS position FROM {{src}}"
            groups = self._grouped([f"v{j}" for j in range(len(batch))], inner,
                                   with_first=True)
            for rows in groups:
                out.append(categories_in_order(rows))
        return out

    def _grouped(self, keys: list[str], inner: str, with_first: bool) -> list[list[tuple]]:
        """``(value, count[, first position])`` of every non-NULL value of each
        key over ``inner``'s rows: one query, one grouping set per key.
        ``GROUPING(g_j) = 0`` names the rows of key ``j``'s set."""
        named = ", ".join(f"{key} AS g{j}" for j, key in enumerate(keys))
        flags = ", ".join(f"GROUPING(g{j})" for j in range(len(keys)))
        groups = ", ".join(f"g{j}" for j in range(len(keys)))
        sets = ", ".join(f"(g{j})" for j in range(len(keys)))
        first = ", min(position)" if with_first else ""
        position = ", position" if with_first else ""
        rows = self.query(f"SELECT {flags}, {groups}, count(*){first} FROM (SELECT {named}"
                          f"{position} FROM ({inner})) GROUP BY GROUPING SETS ({sets})")
        d = len(keys)
        out: list[list[tuple]] = [[] for _ in keys]
        for row in rows:
            j = list(row[:d]).index(0)
            if row[d + j] is not None:
                out[j].append((row[d + j],) + tuple(row[2 * d:]))
        return out

    # ------------------------------------------------------------ encoding
    def code_expression(self, spec: ColumnSpec) -> tuple[str, list[tuple[str, str]]]:
        """SQL for the codes of one column, and ``(condition, reason)`` pairs
        whose truth on any row makes the table unencodable."""
        name = spec.name
        column = _quote(name)
        checks = []
        if encoding_path(spec, self._family(name)) == "categorical":
            present = f"{column} IS NOT NULL"
            text_numbers = self._family(name) == "other" and spec.text_reads_as_numbers
            # text matched to numbers as memory reads it: an implicit cast rounded '1.5'
            # to the category 2 and failed on text that is no number (so does a TRY_CAST
            # of the bare column, which DuckDB pushes into its CSV reader)
            code = self._categorical_code(
                spec, f"TRY_CAST({self._text(name)} AS DOUBLE)" if text_numbers else column)
        else:
            value = _quote(f"__v{self.columns.index(name)}")
            present = f"{value} IS NOT NULL"
            code = (self._numeric_code(spec, value, checks) if spec.kind == "numeric"
                    else self._codes_code(spec, value, checks))
            if name in self.kinds and self.kinds[name][1]:
                checks.append((f"{self._text(name)} IS NOT NULL AND {value} IS NULL", NOT_READ))
        if spec.kind == "categorical" and spec.other_code is None:
            checks.append((f"({present}) AND ({code}) < 0", CATEGORIES))
        if spec.missing:
            code = f"(CASE WHEN {present} THEN {code} ELSE {spec.missing_code} END)"
        else:
            checks.append((f"NOT ({present})", MISSING))
        return code, checks

    @staticmethod
    def _categorical_code(spec: ColumnSpec, column: str) -> str:
        fallback = -1 if spec.other_code is None else spec.other_code
        cases = [f"WHEN {column} = {lit} THEN {i}"
                 for i, lit in enumerate(_literal(c) for c in spec.categories) if lit is not None]
        if not cases:
            return str(fallback)
        return f"(CASE {' '.join(cases)} ELSE {fallback} END)"

    @staticmethod
    def _numeric_code(spec: ColumnSpec, value: str, checks: list) -> str:
        low, high = _double(spec.edges[0]), _double(spec.edges[-1])
        if not spec.clip:
            checks.append((f"{value} < {low} OR {value} > {high}", BOUNDS))
        clipped = f"least(greatest({value}, {low}), {high})"
        code = _count_at_most(clipped, spec.edges[1:], 0, spec.n_bins - 1)
        points = " ".join(f"WHEN {clipped} = {_double(p)} THEN {spec.n_bins + i}"
                          for i, p in enumerate(spec.points))
        return f"(CASE {points} ELSE {code} END)" if points else code

    @staticmethod
    def _codes_code(spec: ColumnSpec, value: str, checks: list) -> str:
        checks.append((f"round_even({value}, 0) <> {value} OR {value} < 0 OR "
                       f"{value} >= {spec.n_codes}", codes_reason(spec)))
        return f"CAST({value} AS BIGINT)"

    def encode(self, domain: Domain) -> "DuckDBTable":
        """The encoded table, materialised as compact integer codes in a
        temporary DuckDB table (spilled to disk beyond the memory limit).

        Raises
        ------
        ValueError
            Naming a column whose values the domain cannot encode (never
            the values, nor how many).
        """
        self.read_by_kinds(with_implied_kinds(self.kinds, domain, self.text_columns()))
        numbers = ", ".join(f"{self.number(c)} AS {_quote(f'__v{j}')}"
                            for j, c in enumerate(self.columns)
                            if self._family(c) in ("number", "datetime"))
        prepared = self.derived(f"(SELECT *, {numbers} FROM {self.relation_sql})"
                                if numbers else self.relation_sql)
        expressions, failures = [], []
        for spec in domain.specs:
            code, checks = prepared.code_expression(spec)
            expressions.append(code)
            failures.extend((spec.name, condition, reason) for condition, reason in checks)
        prepared._check(failures)
        return DuckDBTable.materialise(prepared, expressions, domain.columns, domain.sizes)

    def derived(self, relation_sql: str) -> "DuckDBSource":
        """The same connection and view, reading ``relation_sql`` instead."""
        out = DuckDBSource.__new__(DuckDBSource)
        out.__dict__.update(self.__dict__)
        out.relation_sql = relation_sql
        return out

    def _check(self, failures: list[tuple[Hashable, str, str]]) -> None:
        """One pass testing every ``(column, condition, reason)``; ValueError on the first."""
        if not failures:
            return
        tests = ", ".join(f"bool_or({condition})" for _, condition, _ in failures)
        (flags,) = self.query(f"SELECT {tests} FROM {{src}}")
        raise_unencodable(failures, flags, self.label)


class DuckDBTable(EncodedTable):
    """An encoded table held by DuckDB.

    :meth:`materialise` writes the codes once into a temporary table of
    the source's connection (one byte or two per code; DuckDB spills it
    to disk beyond its ``memory_limit``); every :meth:`counts` is then one
    ``GROUP BY`` over it.  Only contingency tables reach Python.

    Parameters
    ----------
    source : DuckDBSource
        Where the codes are read (``{src}`` in its queries).
    expressions : sequence of str
        SQL for the codes of every column.
    columns, sizes : sequences
        As for :class:`EncodedTable`.
    """

    def __init__(self, source: Any, expressions: Sequence[str],
                 columns: Sequence[Hashable], sizes: Sequence[int]) -> None:
        super().__init__(columns, sizes)
        self._source = source
        self._expressions = list(expressions)

    @classmethod
    def materialise(cls, source: DuckDBSource, expressions: Sequence[str],
                    columns: Sequence[Hashable], sizes: Sequence[int]) -> "DuckDBTable":
        """Write the codes of ``expressions`` into a temporary table; the table on it."""
        name = f"__dpsynth_codes_{next(_VIEW_IDS)}"
        codes = ", ".join(f"CAST({e} AS {_code_type(k)}) AS k{j}"
                          for j, (e, k) in enumerate(zip(expressions, sizes)))
        source.query(f"CREATE TEMP TABLE {name} AS SELECT {codes} FROM {{src}}")
        table = cls(source.derived(name), [f"k{j}" for j in range(len(expressions))],
                    columns, sizes)
        weakref.finalize(table, _drop_table, source, name)
        return table

    @property
    def n_rows(self) -> int:
        """Exact number of rows: private for the table passed to ``fit``."""
        (count,), = self._source.query("SELECT count(*) FROM {src}")
        return int(count)

    def _count(self, columns: tuple[int, ...], weights: np.ndarray | None) -> np.ndarray:
        if weights is not None:
            raise ValueError("weights: a DuckDB table is counted in the engine, without "
                             "per-row weights; load it with to_numpy() to weight it.")
        shape = tuple(self._sizes[c] for c in columns)
        if not columns:
            return np.full(shape, float(self.n_rows))
        keys = ", ".join(f"{self._expressions[c]} AS k{i}" for i, c in enumerate(columns))
        groups = ", ".join(f"k{i}" for i in range(len(columns)))
        rows = self._source.query(f"SELECT {groups}, count(*) FROM "
                                  f"(SELECT {keys} FROM {{src}}) GROUP BY {groups}")
        return counts_from_cells(rows, shape)

    def _count_batch(self, column_sets: list[tuple[int, ...]]) -> list[np.ndarray]:
        """The tables of one pass: one ``GROUPING SETS`` query, one scan of the codes.

        The codes are never NULL, so the NULL pattern of a result row names
        its grouping set.
        """
        used = sorted(set().union(*column_sets))
        if not used:
            return [self._count(c, None) for c in column_sets]
        keys = ", ".join(f"{self._expressions[c]} AS g{c}" for c in used)
        sets = ", ".join("(" + ", ".join(f"g{c}" for c in cols) + ")" for cols in column_sets)
        groups = ", ".join(f"g{c}" for c in used)
        result = self._source.query(f"SELECT {groups}, count(*) AS n FROM (SELECT {keys} FROM "
                                    f"{{src}}) GROUP BY GROUPING SETS ({sets})", "fetchnumpy")
        present = {c: ~np.ma.getmaskarray(result[f"g{c}"]) for c in used}
        n = np.asarray(result["n"], dtype=float)
        tables = []
        for cols in column_sets:
            rows = np.ones(n.shape[0], dtype=bool)
            for c in used:
                rows &= present[c] if c in cols else ~present[c]
            shape = tuple(self._sizes[c] for c in cols)
            table = np.zeros(shape)
            index = tuple(np.ma.getdata(result[f"g{c}"])[rows].astype(np.int64) for c in cols)
            if cols:
                table[index] = n[rows]
            else:  # the grouping set (): the number of rows
                table[...] = n[rows].sum()
            tables.append(table)
        return tables

    def _select(self) -> str:
        codes = ", ".join(f"{e} AS k{j}" for j, e in enumerate(self._expressions))
        return f"SELECT {codes} FROM {self._source.relation_sql}"

    def iter_chunks(self, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[np.ndarray]:
        """Consecutive blocks of at most ``chunk_rows`` rows of codes, streamed."""
        chunk_rows = self._check_chunk_rows(chunk_rows)
        yield from row_blocks(self._source.rows(self._select()), chunk_rows, self.n_columns)

    def to_numpy(self) -> np.ndarray:
        """All codes in memory (int64, read-only): for small tables only."""
        arrays = self._source.query(self._select(), "fetchnumpy")
        codes = np.column_stack([np.asarray(arrays[f"k{j}"], dtype=np.int64)
                                 for j in range(self.n_columns)]) if self.n_columns else \
            np.zeros((0, 0), dtype=np.int64)
        codes.flags.writeable = False
        return codes

    def remap(self, mappings: Sequence[np.ndarray]) -> "DuckDBTable":
        """A new materialised table of ``mappings[j][codes[:, j]]`` (SQL list lookups)."""
        mappings = self._check_mappings(mappings)
        expressions = [f"([{', '.join(str(int(v)) for v in m)}])[{e} + 1]"
                       for e, m in zip(self._expressions, mappings)]
        return DuckDBTable.materialise(self._source, expressions, self._columns,
                                       [int(m.max()) + 1 for m in mappings])


def _drop_table(source: DuckDBSource, name: str) -> None:
    """Drop a temporary codes table once no encoded table refers to it."""
    try:
        source.run(f"DROP TABLE IF EXISTS {name}").fetchall()
    except Exception:  # the connection may already be closed  # noqa: BLE001
        pass


class _SpillDirectory:
    """The temporary directory a connection of :func:`open_duckdb` spills to.

    The connection is closed and the directory removed once the last
    source sharing them is garbage-collected, so repeated fits from files
    leave nothing behind in the system's temporary folder.
    """

    def __init__(self, connection: Any) -> None:
        self.path = tempfile.mkdtemp(prefix="dpsynth_duckdb_")
        weakref.finalize(self, _release, connection, self.path)


def _release(connection: Any, path: str) -> None:
    try:
        connection.close()
    except Exception:  # already closed  # noqa: BLE001
        pass
    shutil.rmtree(path, ignore_errors=True)


def _code_type(size: int) -> str:
    """The smallest unsigned SQL integer type holding codes ``0..size-1``."""
    if size <= 1 << 8:
        return "UTINYINT"
    if size <= 1 << 16:
        return "USMALLINT"
    return "UINTEGER"


def _first_file(path: str) -> str | None:
    """The first file (in name order) that a path or glob names, or None."""
    if os.path.isfile(path):
        return path
    matches = sorted(glob.glob(path, recursive=True))
    return matches[0] if matches else None


def _csv_options(path: str) -> str:
    """``read_csv`` options that read every column as text, with the separator of
    the first file's header line and the same missing-value cells as ``dpsynth``."""
    first = _first_file(path)
    if first is None:
        raise ValueError("X: DuckDB could not read the path given (no such file, or not a "
                         "readable table).")
    separator, _ = csv_header(first, "X: the CSV header")
    nulls = ", ".join(_string(v) for v in CSV_NA_STRINGS)
    return (f", all_varchar = true, header = true, delim = {_string(separator)}, "
            f"quote = '\"', escape = '\"', nullstr = [{nulls}]")


def open_duckdb(X: Any, memory_limit: str | None = None) -> DuckDBSource:
    """A :class:`~sklearn_dpsynth.backends.DuckDBSource` for a path/glob of Parquet or CSV files, or a relation.

    Parameters
    ----------
    X : str, os.PathLike or duckdb.DuckDBPyRelation
        Files ending in ``.parquet``/``.pq`` are read with ``read_parquet``,
        ``.csv``/``.tsv`` (optionally compressed) with ``read_csv``; a
        relation is queried on its own connection.  The schema of Parquet
        files is their metadata.  CSV files are read as text (their
        separator -- comma, semicolon or tab -- and UTF-8 encoding from the
        first file's header line alone, never their rows); their columns
        are read by their declared kinds, or kinds chosen privately in
        ``fit`` (see ``sklearn_dpsynth._column_kinds``).
    memory_limit : str, optional
        DuckDB's ``memory_limit`` for a new connection (e.g. ``"200MB"``).

    Returns
    -------
    DuckDBSource

    Raises
    ------
    ValueError
        For a path DuckDB cannot read, or a CSV header with empty or
        repeated column names.
    """
    duckdb = _duckdb()
    if isinstance(X, (str, os.PathLike)):
        path = os.fspath(X)
        lowered = path.lower()
        if lowered.endswith((".parquet", ".pq")):
            reader = "read_parquet"
        elif any(lowered.endswith(s) for s in (".csv", ".tsv", ".csv.gz", ".tsv.gz")):
            reader = "read_csv"
        else:
            raise ValueError("X: a path must name Parquet (.parquet, .pq) or CSV (.csv, .tsv) "
                             "files, or a glob of them.")
        connection = duckdb.connect()
        spill = _SpillDirectory(connection)
        connection.execute("SET temp_directory = '" + spill.path.replace("'", "''") + "'")
        if memory_limit is not None:
            connection.execute(f"SET memory_limit = '{memory_limit}'")
        literal = "'" + path.replace("'", "''") + "'"
        if reader == "read_csv":
            literal += _csv_options(path)
        try:
            source = DuckDBSource(f"{reader}({literal})", connection, f"files {reader}")
        except duckdb.Error:
            pass  # raised below, outside the handler: the engine's error may quote rows
        else:
            source.spill = spill  # copied by derived(): lives as long as any view of it
            return source
        raise ValueError("X: DuckDB could not read the path given (no such file, or "
                         "not a readable table).")
    if type(X).__name__ == "DuckDBPyRelation":
        view = f"__dpsynth_source_{next(_VIEW_IDS)}"
        return DuckDBSource(view, X, "a DuckDB relation")
    raise TypeError(f"no DuckDB reader for a {type(X).__name__}.")


# the opener is looked up when called, so that a wrapped open_duckdb (the scale
# benchmark's memory limit) is the one used
register_source(is_duckdb_input, lambda X: open_duckdb(X))
