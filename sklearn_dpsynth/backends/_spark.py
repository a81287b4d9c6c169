"""The Spark backend: a pyspark DataFrame counted where it lives.

The private table stays in Spark.  Encoding to codes is a Spark column
expression per column (the domain's public bin edges as a binary search of
``when`` tests, category maps, missing and ``<other>`` codes, clipping,
point masses, datetimes as seconds since 1970-01-01 UTC) and
:meth:`SparkTable.counts` is a ``groupBy(...).count()`` on those codes:
only contingency tables (at most one row per non-empty cell) reach the
driver.  The codes are computed once and persisted by Spark (memory, then
disk); domain learning reads engine-side histograms over the same public
grids as the in-memory path (:meth:`SparkSource.range_counts`,
:meth:`SparkSource.category_counts`).  The counts are exact integers,
identical to the in-memory backend's, and the noise is drawn in the
library, so a seeded fit gives the same model.

Timestamps are read as instants: ``TimestampType`` values are taken in
UTC (Spark stores them so), ``TimestampNTZType`` and ``DateType`` values
as if they were UTC, and synthetic values come back as naive UTC
datetimes.

Privacy: every function here returns exact counts (sensitivity 1 under
add/remove-one-row neighbours) that the callers release only through a
mechanism of the ledger; the schema (column names and Spark types) is
public; error messages name columns, never values or row counts.  Spark's
own errors (which quote values, e.g. a text cell a cast cannot read) are
replaced by one that names the table only (:func:`withheld`); string
columns are text, as in memory: declared as numbers or dates, or chosen
so from a noisy kind histogram (counted here by the same public rules of
``sklearn_dpsynth._column_kinds``), they are read by those rules (a
declared column's cell that does not read so is an encoding error naming
the column), never by a failing cast.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any, Hashable, Iterator, Sequence

import numpy as np
import pandas as pd

from .._column_kinds import (DATE_PATTERN, INTEGER_PATTERN, KIND_CELLS, NS_RANGE_US,
                             NUMBER_PATTERN, OFFSET_PATTERN, SUB_MICROSECOND_PATTERN,
                             is_utc_name)
from ..domain import ColumnSpec, Domain
from ._engine import (BOUNDS, CATEGORIES, MISSING, NOT_READ, categories_in_order, codes_reason,
                      counts_from_cells, encoding_path, family, histogram_from_cells,
                      kind_dtype, kind_family, modelled_dtype, raise_unencodable, row_blocks,
                      text_kinds, with_implied_kinds)
from ._registry import register_source
from ._source import TableSource
from ._table import DEFAULT_CHUNK_ROWS, EncodedTable, in_passes

__all__ = ["SparkSource", "SparkTable", "open_spark", "is_spark_input"]

_INTEGER_TYPES = ("ByteType", "ShortType", "IntegerType", "LongType")
_FLOAT_TYPES = ("FloatType", "DoubleType", "DecimalType")
_TIME_TYPES = ("TimestampType", "TimestampNTZType", "DateType")


def _functions():
    try:
        from pyspark.sql import functions
    except ImportError:  # pragma: no cover - exercised without the extra
        raise ImportError("fitting a Spark DataFrame needs pyspark (and Java 17+): "
                          "pip install 'sklearn-dpsynth[spark]'.") from None
    return functions


#: An ISO date-time to the minute followed by its offset (groups: the two parts).
_MINUTE_OFFSET = (r"^([0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2})"
                  r"(Z|[+-][0-9]{2}:?[0-9]{2})$")


def _micros_unit_cell(micros: Any) -> Any:
    """The date cell of ``KIND_CELLS`` (3 to 9) of microseconds since the epoch:
    the coarsest unit their UTC wall clock starts; null when null."""
    F = _functions()
    day = F.lit(86_400_000_000)
    date = F.date_add(F.lit("1970-01-01").cast("date"), F.floor(micros / day).cast("int"))
    midnight = F.pmod(micros, day) == 0
    cell = F.when(midnight & (F.dayofmonth(date) == 1) & (F.month(date) == 1), 3)
    cell = cell.when(midnight & (F.dayofmonth(date) == 1), 4).when(midnight, 5)
    for index, size in enumerate((3_600_000_000, 60_000_000, 1_000_000)):
        cell = cell.when(F.pmod(micros, F.lit(size)) == 0, 6 + index)
    return F.when(micros.isNull(), F.lit(None)).otherwise(cell.otherwise(9))


def _refuse_zones(zones: dict) -> None:
    """ValueError naming the first text column to be read as dates in a time zone
    other than UTC: Spark reads text dates as naive (taken as UTC) or with an offset."""
    for name, tz in zones.items():
        if tz is not None and not is_utc_name(tz):
            raise ValueError(f"column {name!r}: a Spark text column is read as naive or "
                             "UTC dates; declare it without 'tz', or give it a "
                             "timestamp type.")


def is_spark_input(X: Any) -> bool:
    """Whether ``X`` is a pyspark DataFrame (classic or Spark Connect)."""
    kind = type(X)
    return kind.__name__ == "DataFrame" and kind.__module__.startswith("pyspark.")


def _type_name(data_type: Any) -> str:
    return type(data_type).__name__


def _kind(data_type: Any) -> str:
    """The kind of a Spark type, for :func:`~._engine.modelled_dtype` (schema
    only); timestamps are modelled as naive datetimes in UTC."""
    name = _type_name(data_type)
    if name == "BooleanType":
        return "boolean"
    if name in _INTEGER_TYPES:
        return "integer"
    if name in _FLOAT_TYPES:
        return "float"
    if name in _TIME_TYPES:
        return "datetime"
    if name in ("StringType", "VarcharType", "CharType"):
        return "text"
    return "other"


def _count_at_most(value: Any, cuts: Sequence[float], low: int, high: int) -> Any:
    """Spark expression for the largest ``k`` in ``low..high`` with
    ``value >= cuts[k - 1]`` (``low`` when none): a binary search of ``when``."""
    F = _functions()
    if low == high:
        return F.lit(low)
    mid = (low + high + 1) // 2
    return F.when(value >= F.lit(float(cuts[mid - 1])),
                  _count_at_most(value, cuts, mid, high)).otherwise(
        _count_at_most(value, cuts, low, mid - 1))


class SparkSource(TableSource):
    """A private table held by Spark, before encoding.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
        The private table; it is read only through aggregations.

    Attributes
    ----------
    n_passes : int
        Spark jobs that read the table so far (domain learning, the
        encodability check, the persisted codes and every count): what
        a cluster would scan.
    """

    def __init__(self, frame: Any) -> None:
        self.frame = frame
        self._columns = list(frame.columns)
        self.types = {field.name: field.dataType for field in frame.schema.fields}
        self.n_passes = 0
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
                                          if c in self.kinds
                                          else modelled_dtype(_kind(self.types[c])))
                             for c in self.columns})

    def text_columns(self) -> list:
        """The columns of a Spark string type (public: the schema)."""
        return [c for c in self.columns if _kind(self.types[c]) == "text"]

    def wall_clock_columns(self) -> list:
        """The ``TimestampNTZType`` and ``DateType`` columns (a ``TimestampType``
        is an instant, though modelled as a naive UTC datetime)."""
        return [c for c in self.columns
                if _type_name(self.types[c]) in ("TimestampNTZType", "DateType")]

    def read_by_kinds(self, kinds: dict) -> None:
        """Read text columns as numbers or dates: ``{column: (ColumnKind, strict)}``;
        a strict (declared) column's text that does not read so is an error
        at encoding (naming the column, never a value), any other becomes
        missing.  Dates with a declared time zone are read in memory or
        DuckDB only."""
        kinds = text_kinds(kinds, self.text_columns())
        _refuse_zones({name: kind.tz for name, (kind, _) in kinds.items()})
        self.kinds = kinds

    def _family(self, name: Hashable) -> str:
        if name in self.kinds:
            return kind_family(self.kinds[name][0])
        return family(_kind(self.types[name]))

    def _text(self, name: Hashable) -> Any:
        return _functions().trim(_column(name))

    def _read_text(self, name: Hashable, kind: Any, strict: bool) -> Any:
        """A text column read as ``kind``: a double (dates in seconds since the
        epoch), null when it does not read so (the rules of
        ``sklearn_dpsynth._column_kinds``)."""
        F = _functions()
        text = self._text(name)
        if kind.kind != "datetime":
            whole = kind.kind in ("integer", "codes")
            pattern = INTEGER_PATTERN if strict and whole else NUMBER_PATTERN
            number = F.when(text.rlike(f"^(?:{pattern})$"), text.try_cast("double"))
            return F.bround(number, 0) if whole else number
        micros = self._date_micros(text)
        return F.when(micros.isNotNull(), (micros * F.lit(1000)).cast("double") / F.lit(1e9))

    @staticmethod
    def _date_micros(text: Any) -> Any:
        """Microseconds since the epoch of trimmed ISO dates (an offset read as
        written, a wall-clock time as UTC); null for any other text, as in
        memory (``sklearn_dpsynth._column_kinds``)."""
        F = _functions()
        is_date = text.rlike(f"^(?:{DATE_PATTERN})$")
        # an offset read as written; Spark reads one only after the seconds, so a
        # time written to the minute gets ":00" first
        instant = F.regexp_replace(text, _MINUTE_OFFSET, "$1:00$2").try_cast("timestamp")
        wall = F.from_utc_timestamp(text.try_cast("timestamp_ntz").cast("timestamp"),
                                    F.current_timezone())  # a wall-clock time read as UTC
        micros = F.unix_micros(F.when(text.rlike(f"^(?:{OFFSET_PATTERN})$"), instant)
                               .otherwise(wall))
        # a date outside the nanosecond range is not a date, as in memory
        # (``_column_kinds.in_ns_range``): one such row never overflows the query
        return F.when(is_date & micros.between(*NS_RANGE_US), micros)

    def number(self, name: Hashable) -> Any:
        """The column as a double (datetimes in seconds since the epoch, UTC);
        null when missing (null or NaN)."""
        F = _functions()
        if name in self.kinds:
            return self._read_text(name, *self.kinds[name])
        column = F.col(_quote(name))
        if self._family(name) == "datetime":
            if _type_name(self.types[name]) != "TimestampType":
                # a wall-clock value (no zone): the cast reads it in the session's
                # zone; shifting back by that zone's offset reads it as UTC
                column = F.from_utc_timestamp(column.cast("timestamp"),
                                              F.current_timezone())
            nanoseconds = (F.unix_micros(column) * F.lit(1000)).cast("double")
            return nanoseconds / F.lit(1e9)
        value = column.cast("double")
        return F.when(F.isnan(value), F.lit(None).cast("double")).otherwise(value)

    def _aggregate(self, frame: Any) -> list:
        """Collect an aggregation, counting it as one pass over the table."""
        self.n_passes += 1
        return withheld(frame.collect)

    # ---------------------------------------------------- domain learning
    def range_counts_many(self, requests: Sequence[tuple[Hashable, np.ndarray]]
                          ) -> list[np.ndarray]:
        """:meth:`range_counts` of several ``(name, cuts)`` in one
        grouping-sets job per batch of ``GROUPING_SETS_PER_PASS`` columns."""
        F = _functions()
        out: list[np.ndarray] = []
        for batch in in_passes(requests):
            cells = []
            for j, (name, cuts) in enumerate(batch):
                value = self.number(name)
                cells.append(F.when(value.isNull(), F.lit(None)).otherwise(
                    _count_at_most(value, cuts, 0, len(cuts))).alias(f"g{j}"))
            groups = self._grouped(self.frame.select(*cells), len(batch), with_first=False)
            out.extend(histogram_from_cells(rows, len(cuts) + 1)
                       for (_, cuts), rows in zip(batch, groups))
        return out

    def kind_counts_many(self, zones: dict) -> dict:
        """Exact kind histograms ``{column: tz}`` in one grouping-sets job per batch:
        of text columns (``sklearn_dpsynth._column_kinds.kind_counts``: whole
        numbers, other numbers, other text, ISO dates by the coarsest unit they
        start on their UTC wall clock, with an offset or not) and of typed
        datetime columns (``datetime_counts``, on their UTC -- naive: their own
        -- wall clock).  A text column read in a time zone is refused (see
        :meth:`read_by_kinds`) before anything is counted."""
        out: dict = {}
        names = list(zones)
        text = set(self.text_columns())
        _refuse_zones({name: tz for name, tz in zones.items() if name in text})
        for batch in in_passes(names):
            frame = self.frame.select(*[self._unit_cell(name).alias(f"g{j}")
                                        for j, name in enumerate(batch)])
            groups = self._grouped(frame, len(batch), with_first=False)
            out.update((name, histogram_from_cells(rows, len(KIND_CELLS)))
                       for name, rows in zip(batch, groups))
        return out

    def _unit_cell(self, name: Hashable) -> Any:
        """The cell of ``KIND_CELLS`` of a datetime, or of a text value."""
        F = _functions()
        if name in self.text_columns():
            return self._text_kind_cell(name)
        column = F.col(_quote(name))
        if _type_name(self.types[name]) != "TimestampType":  # wall clock read as UTC
            column = F.from_utc_timestamp(column.cast("timestamp"), F.current_timezone())
        return _micros_unit_cell(F.unix_micros(column))

    def _text_kind_cell(self, name: Hashable) -> Any:
        """The cell of ``KIND_CELLS`` of a trimmed text value (null when missing):
        the public parsing rules of ``sklearn_dpsynth._column_kinds``."""
        F = _functions()
        text = self._text(name)
        micros = self._date_micros(text)
        n_dates = (len(KIND_CELLS) - 3) // 2  # naive dates, then dates with an offset
        offset = F.when(text.rlike(f"^(?:{OFFSET_PATTERN})$"), F.lit(n_dates)).otherwise(0)
        return (F.when(text.isNull(), F.lit(None))
                .when(text.rlike(f"^(?:{INTEGER_PATTERN})$"), 0)
                .when(text.rlike(f"^(?:{NUMBER_PATTERN})$"), 1)
                .when(micros.isNotNull(), offset + F.when(  # nanoseconds past a microsecond
                    text.rlike(f"^(?:{SUB_MICROSECOND_PATTERN})$"), F.lit(2 + n_dates))
                      .otherwise(_micros_unit_cell(micros)))
                .otherwise(2))

    def category_counts_many(self, names: Sequence[Hashable]) -> list[tuple[list, np.ndarray]]:
        """:meth:`category_counts` of several columns in one grouping-sets job
        per batch of ``GROUPING_SETS_PER_PASS`` columns (first appearance:
        Spark's ``monotonically_increasing_id`` follows the partitions' row
        order)."""
        F = _functions()
        out: list[tuple[list, np.ndarray]] = []
        for batch in in_passes(names):
            frame = self.frame.select(*[F.col(_quote(n)).alias(f"g{j}")
                                        for j, n in enumerate(batch)],
                                      F.monotonically_increasing_id().alias("position"))
            for rows in self._grouped(frame, len(batch), with_first=True):
                out.append(categories_in_order(rows))
        return out

    def _grouped(self, frame: Any, n_keys: int, with_first: bool) -> list[list[tuple]]:
        """``(value, count[, first position])`` of every non-null value of each
        column ``g_j`` of ``frame``: one job, one grouping set per column;
        ``grouping(g_j) = 0`` names the rows of column ``j``'s set."""
        F = _functions()
        keys = [f"g{j}" for j in range(n_keys)]
        aggregates = [F.count(F.lit(1)).alias("n")]
        if with_first:
            aggregates.append(F.min("position").alias("first"))
        aggregates += [F.grouping(k).alias(f"q{j}") for j, k in enumerate(keys)]
        rows = self._aggregate(frame.groupingSets([[k] for k in keys], *keys).agg(*aggregates))
        n_stats = len(aggregates) - n_keys
        out: list[list[tuple]] = [[] for _ in keys]
        for row in rows:
            flags = list(row[n_keys + n_stats:])
            j = flags.index(0)
            if row[j] is not None:
                out[j].append((row[j],) + tuple(row[n_keys:n_keys + n_stats]))
        return out

    # ------------------------------------------------------------ encoding
    def code_expression(self, spec: ColumnSpec) -> tuple[Any, list[tuple[Any, str]]]:
        """The codes of one column as a Spark expression, and ``(condition,
        reason)`` pairs whose truth on any row makes the table unencodable."""
        F = _functions()
        name = spec.name
        checks: list[tuple[Any, str]] = []
        if encoding_path(spec, self._family(name)) == "categorical":
            column = F.col(_quote(name))
            present = column.isNotNull()
            family = self._family(name)
            if family == "other" and spec.text_reads_as_numbers:
                # text matched to the numbers it reads as, as in memory (no number
                # literal equals text: every row was refused or "<other>")
                column, family = self._text(name).try_cast("double"), "number"
            code = self._categorical_code(spec, column, family)
        else:
            value = self.number(name)
            if name in self.kinds and self.kinds[name][1]:
                checks.append((self._text(name).isNotNull() & value.isNull(), NOT_READ))
            present = value.isNotNull()
            code = (self._numeric_code(spec, value, checks) if spec.kind == "numeric"
                    else self._codes_code(spec, value, checks))
        if spec.kind == "categorical" and spec.other_code is None:
            checks.append((present & (code < 0), CATEGORIES))
        if spec.missing:
            code = F.when(present, code).otherwise(F.lit(spec.missing_code))
        else:
            checks.append((~present, MISSING))
        return code, checks

    @staticmethod
    def _categorical_code(spec: ColumnSpec, column: Any, family: str) -> Any:
        F = _functions()
        fallback = F.lit(-1 if spec.other_code is None else spec.other_code)
        code = None
        for index, category in enumerate(spec.categories):
            literal = _comparable_literal(category, family)
            if literal is None:
                continue
            test = column == F.lit(literal)
            code = F.when(test, F.lit(index)) if code is None else code.when(test, F.lit(index))
        return fallback if code is None else code.otherwise(fallback)

    @staticmethod
    def _numeric_code(spec: ColumnSpec, value: Any, checks: list) -> Any:
        F = _functions()
        low, high = float(spec.edges[0]), float(spec.edges[-1])
        if not spec.clip:
            checks.append(((value < F.lit(low)) | (value > F.lit(high)), BOUNDS))
        clipped = F.least(F.greatest(value, F.lit(low)), F.lit(high))
        code = _count_at_most(clipped, spec.edges[1:], 0, spec.n_bins - 1)
        for i, point in reversed(list(enumerate(spec.points))):
            code = F.when(clipped == F.lit(float(point)), F.lit(spec.n_bins + i)).otherwise(code)
        return code

    @staticmethod
    def _codes_code(spec: ColumnSpec, value: Any, checks: list) -> Any:
        F = _functions()
        checks.append(((F.bround(value, 0) != value) | (value < 0)
                       | (value >= F.lit(float(spec.n_codes))),
                       codes_reason(spec)))
        return F.when((F.bround(value, 0) == value) & (value >= 0)
                      & (value < F.lit(float(spec.n_codes))), value.cast("long")).otherwise(-1)

    def encode(self, domain: Domain) -> "SparkTable":
        """The encoded table: codes computed once and persisted by Spark.

        Raises
        ------
        ValueError
            Naming a column whose values the domain cannot encode (never
            the values, nor how many).
        """
        self.read_by_kinds(with_implied_kinds(self.kinds, domain, self.text_columns()))
        expressions, failures = [], []
        for spec in domain.specs:
            code, checks = self.code_expression(spec)
            expressions.append(code)
            failures.extend((spec.name, condition, reason) for condition, reason in checks)
        self._check(failures)
        codes = self.frame.select(*[e.cast("int").alias(f"k{j}")
                                    for j, e in enumerate(expressions)])
        return SparkTable.persisted(self, codes, domain.columns, domain.sizes)

    def _check(self, failures: list[tuple[Hashable, Any, str]]) -> None:
        """One pass testing every ``(column, condition, reason)``; ValueError on the first."""
        if not failures:
            return
        F = _functions()
        flags = self._aggregate(self.frame.agg(*[
            F.max(F.when(condition, F.lit(1)).otherwise(F.lit(0))).alias(f"f{i}")
            for i, (_, condition, _) in enumerate(failures)]))[0]
        raise_unencodable(failures, flags, "a Spark DataFrame")


def _column(name: Hashable) -> Any:
    """``F.col`` of a column name, quoted."""
    return _functions().col(_quote(name))


def _withheld_rows(action: Any) -> Iterator:
    """The rows ``action()`` streams, with Spark errors withheld as in :func:`withheld`."""
    rows = withheld(action)
    while True:
        try:
            yield withheld(lambda: next(rows))
        except StopIteration:
            return


#: pyspark's Python loggers that print a failed query's message (with its values).
_QUERY_LOGGERS = ("DataFrameQueryContextLogger", "SQLQueryContextLogger")


def withheld(action: Any) -> Any:
    """``action()``; a Spark error becomes one that says only that the Spark
    DataFrame failed: Spark's messages quote private values (e.g. a text
    cell that a cast cannot read) and are not chained.  pyspark's own
    loggers of failed queries are silenced meanwhile (Spark's JVM logging
    is the session's to configure)."""
    loggers = [logging.getLogger(name) for name in _QUERY_LOGGERS]
    disabled = [logger.disabled for logger in loggers]
    try:
        for logger in loggers:
            logger.disabled = True
        return action()
    except Exception as error:  # noqa: BLE001  (pyspark, py4j and Java errors)
        if not type(error).__module__.startswith(("pyspark", "py4j")):
            raise
    finally:
        for logger, was in zip(loggers, disabled):
            logger.disabled = was
    raise ValueError("X: Spark failed to read a Spark DataFrame; its message is withheld "
                     "because it may quote private rows.")


def _quote(name: Hashable) -> str:
    """A column reference for ``F.col`` (backquoted: dots and spaces are literal)."""
    return "`" + str(name).replace("`", "``") + "`"


def _comparable_literal(value: Any, family: str) -> Any:
    """A category as a Python literal of the column's family (None when a value
    of the column can never equal it, so that no cast is attempted)."""
    if isinstance(value, np.generic):
        value = value.item()
    if family == "boolean":
        return value if isinstance(value, bool) else None
    if family == "number":
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if family == "other":
        return value if isinstance(value, str) else None
    return None


class SparkTable(EncodedTable):
    """An encoded table held by Spark.

    The codes are one Spark DataFrame of integer columns ``k0, k1, ...``,
    persisted (memory, spilling to disk) when the table is built; every
    :meth:`counts` is one ``groupBy(...).count()`` over it whose result
    (the non-empty cells) is all that reaches the driver.

    Parameters
    ----------
    source : SparkSource
        The source the codes come from (its pass counter is shared).
    codes : pyspark.sql.DataFrame
        Columns ``k0..k{d-1}`` of integer codes.
    columns, sizes : sequences
        As for :class:`EncodedTable`.
    """

    def __init__(self, source: SparkSource, codes: Any, columns: Sequence[Hashable],
                 sizes: Sequence[int]) -> None:
        super().__init__(columns, sizes)
        self._source = source
        self._codes = codes

    @classmethod
    def persisted(cls, source: SparkSource, codes: Any, columns: Sequence[Hashable],
                  sizes: Sequence[int]) -> "SparkTable":
        """A table on ``codes`` persisted by Spark (one pass computes them)."""
        from pyspark import StorageLevel
        codes = codes.persist(StorageLevel.MEMORY_AND_DISK)
        source.n_passes += 1
        withheld(codes.count)  # materialise once; the count itself is not kept
        table = cls(source, codes, columns, sizes)
        # release the cached codes with the table: a long-lived session would
        # otherwise keep every fit's codes in its executors' memory and disk
        weakref.finalize(table, _unpersist, codes).atexit = False
        return table

    @property
    def n_passes(self) -> int:
        """Spark jobs that read the private table or its codes so far."""
        return self._source.n_passes

    @property
    def n_rows(self) -> int:
        """Exact number of rows: private for the table passed to ``fit``."""
        self._source.n_passes += 1
        return int(withheld(self._codes.count))

    def _count(self, columns: tuple[int, ...], weights: np.ndarray | None) -> np.ndarray:
        if weights is not None:
            raise ValueError("weights: a Spark table is counted in the engine, without "
                             "per-row weights; load it with to_numpy() to weight it.")
        shape = tuple(self._sizes[c] for c in columns)
        if not columns:
            return np.full(shape, float(self.n_rows))
        keys = [f"k{c}" for c in columns]
        return counts_from_cells(self._source._aggregate(self._codes.groupBy(*keys).count()),
                                 shape)

    def _count_batch(self, column_sets: list[tuple[int, ...]]) -> list[np.ndarray]:
        """The tables of one pass: one grouping-sets aggregation, one job over the codes.

        Each executor pre-aggregates its partition for every set; only the
        non-empty cells reach the driver.  The codes are never NULL, so the
        NULL pattern of a result row names its grouping set.
        """
        used = sorted(set().union(*column_sets))
        if not used:
            return [self._count(c, None) for c in column_sets]
        keys = [f"k{c}" for c in used]
        rows = self._source._aggregate(self._codes.groupingSets(
            [[f"k{c}" for c in cols] for cols in column_sets], *keys).count())
        cells = np.array([[-1 if v is None else v for v in r] for r in rows],
                         dtype=np.int64).reshape(len(rows), len(used) + 1)
        present = cells[:, :-1] >= 0
        tables = []
        for cols in column_sets:
            wanted = np.isin(used, cols)
            rows_of_set = np.all(present == wanted, axis=1)
            table = np.zeros(tuple(self._sizes[c] for c in cols))
            if cols:
                table[tuple(cells[rows_of_set, used.index(c)] for c in cols)] = \
                    cells[rows_of_set, -1]
            else:  # the grouping set (): the number of rows
                table[...] = cells[rows_of_set, -1].sum()
            tables.append(table)
        return tables

    def iter_chunks(self, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[np.ndarray]:
        """Consecutive blocks of at most ``chunk_rows`` rows of codes, streamed
        to the driver one partition at a time."""
        chunk_rows = self._check_chunk_rows(chunk_rows)
        self._source.n_passes += 1
        yield from row_blocks(_withheld_rows(self._codes.toLocalIterator), chunk_rows,
                              self.n_columns)

    def to_numpy(self) -> np.ndarray:
        """All codes on the driver (int64, read-only): for small tables only."""
        self._source.n_passes += 1
        rows = [tuple(r) for r in withheld(self._codes.collect)]
        codes = np.array(rows, dtype=np.int64).reshape(len(rows), self.n_columns)
        codes.flags.writeable = False
        return codes

    def remap(self, mappings: Sequence[np.ndarray]) -> "SparkTable":
        """A new persisted table of ``mappings[j][codes[:, j]]`` (array lookups)."""
        F = _functions()
        mappings = self._check_mappings(mappings)
        remapped = self._codes.select(*[
            F.element_at(F.array(*[F.lit(int(v)) for v in mapping]),
                         F.col(f"k{j}") + F.lit(1)).cast("int").alias(f"k{j}")
            for j, mapping in enumerate(mappings)])
        return SparkTable.persisted(self._source, remapped, self._columns,
                                    [int(m.max()) + 1 for m in mappings])


def _unpersist(codes: Any) -> None:
    """Drop Spark's cached codes once no encoded table refers to them."""
    try:
        codes.unpersist(blocking=False)
    except Exception:  # the session may already be stopped  # noqa: BLE001
        pass


def open_spark(X: Any) -> SparkSource:
    """A :class:`~sklearn_dpsynth.backends.SparkSource` for a pyspark DataFrame.

    Parameters
    ----------
    X : pyspark.sql.DataFrame
        Its schema (column names and Spark types) is public; its rows are
        read only through aggregations.

    Returns
    -------
    SparkSource

    Raises
    ------
    ValueError
        For a DataFrame without columns or with duplicate column names.
    """
    _functions()
    columns = list(X.columns)
    if not columns:
        raise ValueError("X is empty: need at least one column.")
    if len(set(columns)) != len(columns):
        raise ValueError("X has duplicate column names: "
                         f"{sorted({c for c in columns if columns.count(c) > 1})}.")
    return SparkSource(X)


# the opener is looked up when called, so that a wrapped open_spark (a test
# counting the jobs of the source it opens) is the one used
register_source(is_spark_input, lambda X: open_spark(X))
