"""Reading columns by kind: declared, or chosen privately, never guessed from rows.

A column of untyped *text* (a DataFrame's ``object`` column or pandas
string column -- ``str``, ``string``, python or pyarrow storage, or an
``ArrowDtype`` string, see :func:`is_text` --, a numpy array of strings, a
CSV file read as text by ``dpsynth`` or by ``fit`` on a path) says nothing
public about what its values are.  Its kind decides how it is modelled (a numeric range, dates,
or categories), so choosing it by looking at the rows -- as
``pandas.read_csv`` does -- would let one row change the released model
(one text cell turns a numeric column into categories; one missing value
turns integers into floats).  Here the kind is

* **declared** (``domain={"col": {"kind": ...}}`` or any entry whose form
  implies it, see :func:`~sklearn_dpsynth.domain.declared_kind`): the text
  is cast to that kind, and a value that does not read as it is an error
  naming the column and how many rows are at fault (never the values), as
  for any value outside a declared domain;
* **chosen privately** for an undeclared text column: one Gaussian-noised
  histogram per column (L2 sensitivity 1 under add/remove-one-row: each
  row lands in exactly one cell) over the public cells of
  :data:`KIND_CELLS` -- integers, other numbers, other text, and dates by
  the coarsest unit they are aligned to -- spent from a small ledger share
  labelled ``"column kinds"``.  A public rule on the noisy counts picks
  the kind (:func:`choose_kind`): numbers when at least 95% of the present
  values read as numbers (integers when at most 5% of those have a
  fraction), dates when 95% read as ISO dates (with the coarsest unit that
  95% of them are aligned to, see :func:`choose_unit`; tz-aware in UTC
  when at least half of them are written with a UTC offset, which have
  cells of their own), categories otherwise.  Values that do not read as
  the chosen kind become missing (a learned column reserves a missing code
  whatever its rows), and fractions in a column chosen whole are rounded:
  a :class:`~sklearn_dpsynth.exceptions.DomainInferenceWarning` names the
  columns where the noisy counts show such values above the noise.

Columns with real typed dtypes (numbers, datetimes, durations, booleans,
pandas categoricals) keep their dtype: it is schema.  A
text column read as dates has its unit (the coarsest of year, month, day,
hour, minute, second that the dates start) chosen from the same histogram
(its date cells), so that synthetic dates keep the resolution of the real
ones.  A typed datetime column keeps the unit it is declared with; an
undeclared one (or one declared ``{"kind": "datetime"}`` alone) learns it
the same way, from a histogram of its values in the date cells
(:func:`datetime_counts`), measured in the same share; without signal
above the noise (:func:`learned_unit`) it gets none.
Which columns are measured depends on the schema and the declaration
only, and each is charged whether or not its kind turns out ambiguous,
so the ledger's lines are the same for neighbouring tables.  Everything
after the noisy counts is post-processing.  A text column read as numbers
or dates holds them from then on, and ``sample`` gives them back so
(``float64``, nullable ``Int64``, ``datetime64``), whether the input held
them as ``object`` or as pandas strings; one read as categories keeps the
input's dtype (``object`` stays ``object``, ``str`` stays ``str``).  An
engine's text columns (DuckDB ``VARCHAR`` of CSV or Parquet files or
relations, Spark strings) are text as well, read by the same rules.  Engines
(DuckDB, Spark) read text by the same rules in their own expressions
(:func:`read_engine_kinds`), with the same histogram for their text
and for typed datetime columns (on their UTC wall clock: an engine keeps
instants, not the zone of a tz-aware pandas column).

The parsing rules are public and the same on every backend: a number is
``[+-]digits[.digits][e[+-]digits]`` (:data:`NUMBER_PATTERN`), a date is
ISO 8601 (``YYYY-MM-DD`` with an optional time and offset,
:data:`DATE_PATTERN`); surrounding spaces are ignored.  Dates with an
offset are converted to UTC (to the declared ``tz`` when there is one);
dates without one are wall-clock times (in the declared ``tz``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from .domain import ColumnSpec, Domain, declared_kind, is_kind_only, unit_edges
from .exceptions import DomainInferenceWarning, PrivacyWarning
from .privacy import LedgerShare, gaussian_sigma

__all__ = ["ColumnKind", "KIND_SHARE", "KIND_CELLS", "NS_RANGE_US", "NUMBER_PATTERN",
           "DATE_PATTERN", "INTEGER_PATTERN", "OFFSET_PATTERN", "SUB_MICROSECOND_PATTERN",
           "is_text", "columns_to_measure", "read_kinds", "choose_kind", "choose_unit",
           "annotate_domain", "kind_counts", "unhashable_check", "read_like",
           "read_engine_kinds",
           "datetime_counts", "learned_unit", "engine_dtypes", "dates_by_unit", "in_ns_range",
           "check_wall_clock_zones", "naive_datetime_columns"]

#: Share of the preprocessing budget spent choosing the kinds (and learning
#: the datetime units) of undeclared columns, when there are any.
KIND_SHARE = 0.1

#: A whole number (after stripping spaces; trailing zero decimals such as ``12.0``, as
#: pandas writes integer columns with missing values, still read as whole).
#: Digits are ASCII ``[0-9]`` in every pattern: Python's ``\d`` also matches other
#: scripts' digits (``"١٢"``), which DuckDB's and Spark's regular expressions do not,
#: and which no number parser reads.
INTEGER_PATTERN = r"[+-]?[0-9]+(?:\.0*)?"
#: A decimal number, with an optional exponent.
NUMBER_PATTERN = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
#: An ISO 8601 date, with an optional time (hours 00 to 23: DuckDB would read
#: ``24:00`` as the next midnight, pandas and Spark as no date) and UTC offset.
DATE_PATTERN = (r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
                r"(?:[T ](?:[01][0-9]|2[0-3]):[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?)?"
                r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?")
#: A date with a UTC offset.
OFFSET_PATTERN = r".*(?:Z|[+-][0-9]{2}:?[0-9]{2})"
#: A date whose seconds fraction goes past the microsecond (a digit other than 0
#: after the sixth): finer than a second in memory, which reads nanoseconds,
#: while the engines read microseconds; they find it by this rule instead.
SUB_MICROSECOND_PATTERN = r".*\.[0-9]{6}0*[1-9].*"

_UNITS = ("year", "month", "day", "hour", "minute", "second")
#: Cells of a column's kind histogram: every present value lands in one.
#: Dates land in the coarsest unit they start (a first of January at
#: midnight is a "year"; a date with fractional seconds is "finer"), apart
#: for dates written with a UTC offset (``"... with offset"`` cells).
KIND_CELLS = ("integer", "decimal", "text", *_UNITS, "finer",
              *(f"{unit} with offset" for unit in (*_UNITS, "finer")))
#: Number of date cells of each kind (naive, with an offset): the units and "finer".
_N_DATE_CELLS = len(_UNITS) + 1

#: A kind is chosen when this share of the present values reads as it.
KIND_FRACTION = 0.95
#: ... and its noisy count exceeds this many noise standard deviations.
_SIGNAL = 4.0

#: The cells outside a chosen kind (or finer than a chosen unit) may exceed
#: their allowed share by this many standard deviations of their noisy sum:
#: the noise on empty cells must not decide (a pure number column is then
#: read as numbers but for a ~1e-3 chance).
_MARGIN = 3.0


@dataclass(frozen=True)
class ColumnKind:
    """How a column is read: its kind, and for datetimes their unit and zone.

    Attributes
    ----------
    kind : {"numeric", "integer", "datetime", "timedelta", "category", "codes", "typed"}
        ``"typed"``: a column whose dtype is kept as it is.
    unit : str or None
    tz : str or None
    """

    kind: str
    unit: str | None = None
    tz: str | None = None


# ------------------------------------------------------------------ schema
#: The pyarrow types of pandas' ``ArrowDtype`` that hold text.
_ARROW_TEXT = frozenset({"string", "large_string", "string_view"})


def is_text(dtype: Any) -> bool:
    """Whether a dtype holds text, whose kind is declared or chosen privately.

    ``object``, a pandas string dtype (``str``, ``string``, with either
    storage, python or pyarrow) and pandas' ``ArrowDtype`` of a pyarrow
    string type: text carries no public kind, whatever pandas called it
    (``pandas.read_csv`` gives ``str`` columns from pandas 3 on, ``object``
    before), so every such column is read by the same rules.  A pandas
    categorical is not text (its categories are the values).
    """
    if isinstance(dtype, pd.StringDtype):
        return True
    if isinstance(dtype, np.dtype):
        return dtype == np.dtype(object)
    return str(getattr(dtype, "pyarrow_dtype", "")) in _ARROW_TEXT


def _is_datetime(dtype: Any) -> bool:
    return pd.api.types.is_datetime64_any_dtype(dtype) and not isinstance(dtype, pd.PeriodDtype)


def _dtype_tz(dtype: Any) -> str | None:
    tz = getattr(dtype, "tz", None)
    return None if tz is None else str(tz)


#: Zone names a naive datetime column may be declared in: its values are read as UTC.
_UTC_NAMES = frozenset({"UTC", "ETC/UTC", "GMT", "ETC/GMT", "Z", "ZULU", "UNIVERSAL"})


def is_utc_name(tz: Any) -> bool:
    """Whether a declared zone name means UTC (``"UTC"``, ``"Etc/UTC"``, ``"GMT"``, ...)."""
    return str(tz).upper() in _UTC_NAMES


def check_wall_clock_zones(wall_clock: Sequence[Hashable],
                           declared: Mapping[Hashable, Any]) -> None:
    """ValueError naming the first column of naive datetimes declared with a time zone.

    A naive datetime (pandas ``datetime64`` without a zone, DuckDB
    ``TIMESTAMP``/``DATE``, Spark ``TimestampNTZType``/``DateType``) is a wall
    clock of no zone; read as UTC, it would silently disagree with a
    declared ``tz`` (bounds, units and samples are in that zone), and
    localizing it must decide how to read the wall-clock times that a
    daylight-saving change skips or repeats -- a choice about the rows,
    which the caller makes (``Series.dt.tz_localize(tz, ambiguous=...,
    nonexistent=...)``).  Schema and declaration only: the same for
    neighbouring tables.  Declaring ``"tz": "UTC"`` (the reading of naive
    values) is allowed.  Text columns are not concerned: a date written
    without an offset is read in the declared zone.

    Parameters
    ----------
    wall_clock : sequence
        The naive datetime columns (of the schema).
    declared : mapping
        The declaration.
    """
    for name in wall_clock:
        if name not in declared:
            continue
        tz = declared_kind(declared[name])[2]
        if tz is not None and not is_utc_name(tz):
            raise ValueError(
                f"column {name!r} holds datetimes without a time zone (naive) but is declared "
                f"with tz={str(tz)!r}: localize it to that zone first (pandas: "
                f"Series.dt.tz_localize({str(tz)!r}); DuckDB: TIMESTAMPTZ; Spark: "
                "TimestampType), or declare it without 'tz' (naive values are read as UTC).")


def naive_datetime_columns(dtypes: Mapping[Hashable, Any]) -> list:
    """The columns of a naive ``datetime64`` dtype (no time zone)."""
    return [name for name, dtype in dtypes.items()
            if _is_datetime(dtype) and _dtype_tz(dtype) is None]


def columns_to_measure(dtypes: Mapping[Hashable, Any],
                       declared: Mapping[Hashable, Any]) -> list:
    """Columns whose kind or datetime unit is learned privately (public facts only).

    Undeclared text columns (kind, and unit when they hold dates), undeclared
    datetime columns (unit), and text or datetime columns declared
    ``{"kind": "datetime"}`` without a unit (their unit).

    Parameters
    ----------
    dtypes : mapping
        Column name -> dtype.
    declared : mapping
        The declaration.

    Returns
    -------
    list
    """
    out = []
    for name, dtype in dtypes.items():
        entry = declared.get(name)
        if not (is_text(dtype) or _is_datetime(dtype)):
            continue
        if entry is None:
            out.append(name)
        elif is_kind_only(entry):
            kind, unit, _ = declared_kind(entry)
            if kind == "datetime" and unit is None:
                out.append(name)
    return out


def engine_dtypes(source: Any) -> dict:
    """Column name -> dtype of an engine source as :func:`columns_to_measure` sees
    it: ``object`` for its untyped text columns (``untyped_columns``), the
    modelled dtype of its datetime columns, None for the others."""
    untyped = set(source.untyped_columns())
    schema = source.schema_frame()
    return {name: np.dtype(object) if name in untyped else
            schema[name].dtype if _is_datetime(schema[name].dtype) else None
            for name in source.columns}


# ----------------------------------------------------------------- parsing
#: What ``pandas.api.types.infer_dtype`` calls columns of scalars only.
_SCALARS = frozenset({"string", "empty", "integer", "floating", "mixed-integer-float",
                      "decimal", "boolean", "datetime", "datetime64", "date", "timedelta",
                      "timedelta64", "time", "bytes", "complex", "period"})


def unhashable_check(series: pd.Series) -> None:
    """TypeError naming the column when an object column holds lists, dicts,
    sets or arrays (cells that cannot be a category or a number)."""
    if series.dtype != object or pd.api.types.infer_dtype(series, skipna=True) in _SCALARS:
        return
    if any(isinstance(v, (list, dict, set, np.ndarray)) for v in series.to_numpy()):
        raise TypeError(f"column {series.name!r} holds lists, dicts, sets or arrays in its "
                        "cells; give every cell one value (a number, a date or a text).")


def _as_text(series: pd.Series) -> pd.Series:
    """The present cells of a text column as stripped strings (missing as NA):
    numbers as their ``repr``, datetimes in ISO form, other objects as ``str``."""
    if pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty"):
        # strings only (a CSV read as text): one vectorised pass
        stripped = series.astype("string").str.strip()
        return stripped.astype(object).where(stripped.notna(), None)
    values = series.to_numpy(dtype=object)
    missing = np.asarray(pd.isna(series), dtype=bool)
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        if missing[i]:
            out[i] = None
        elif isinstance(value, str):
            out[i] = value.strip()
        elif hasattr(value, "isoformat") and not isinstance(value, pd.Timedelta):
            out[i] = value.isoformat()
        elif isinstance(value, (float, np.floating)):
            out[i] = repr(float(value))
        else:
            out[i] = str(value)
    return pd.Series(out, index=series.index, dtype=object)


@dataclass
class _Parsed:
    """A text column read every way: as numbers, as dates, and which is which."""

    text: pd.Series  # stripped strings, None when missing
    is_integer: np.ndarray
    is_number: np.ndarray
    numbers: np.ndarray  # float, NaN where not a number
    dates: pd.Series  # tz-aware UTC datetimes, NaT where not a date
    has_offset: np.ndarray


def _parse(series: pd.Series, tz: str | None = None) -> _Parsed:
    text = _as_text(series)
    strings = text.astype("string")
    is_integer = strings.str.fullmatch(INTEGER_PATTERN).fillna(False).to_numpy(dtype=bool)
    is_number = strings.str.fullmatch(NUMBER_PATTERN).fillna(False).to_numpy(dtype=bool)
    numbers = np.full(len(text), np.nan)
    if is_number.any():
        # parsed as floats directly: a whole number past 1e308 is inf, not an
        # OverflowError quoting it
        numbers[is_number] = strings[is_number].astype("float64").to_numpy(dtype=float)
    is_date = strings.str.fullmatch(DATE_PATTERN).fillna(False).to_numpy(dtype=bool)
    has_offset = is_date & strings.str.fullmatch(OFFSET_PATTERN).fillna(False).to_numpy(
        dtype=bool)
    dates = pd.Series(pd.NaT, index=text.index, dtype="datetime64[ns, UTC]")
    if is_date.any():
        dates[has_offset] = in_ns_range(pd.to_datetime(
            strings[has_offset].astype(object), format="ISO8601", errors="coerce", utc=True))
        naive = is_date & ~has_offset
        wall = pd.to_datetime(strings[naive].astype(object), format="ISO8601",
                              errors="coerce")
        # the range is the instant's, as in the engines: a wall clock near either
        # end may leave it in UTC, so which do is found in microseconds (no overflow)
        fits = in_ns_range(_wall_in_utc(wall.dt.as_unit("us"), tz)).notna()
        dates[naive] = in_ns_range(_wall_in_utc(wall.where(fits), tz))
    return _Parsed(text, is_integer, is_number, numbers, dates, has_offset)


def _wall_in_utc(wall: pd.Series, tz: str | None) -> pd.Series:
    """Naive datetimes read as wall clocks of ``tz`` (UTC when None), in UTC;
    a time the zone skips or repeats is NaT."""
    if tz is None:
        return wall.dt.tz_localize("UTC")
    return wall.dt.tz_localize(tz, ambiguous="NaT", nonexistent="NaT").dt.tz_convert("UTC")


#: Microseconds since the epoch of the first and last ``datetime64[ns]`` instants
#: (years 1677 to 2262): the engines' form of :func:`in_ns_range`.
NS_RANGE_US = (pd.Timestamp.min.value // 1000 + 1, pd.Timestamp.max.value // 1000)


def in_ns_range(stamps: pd.Series) -> pd.Series:
    """``stamps`` as ``datetime64[ns]``, those outside its range (years before 1677 or
    after 2262, which pandas parses at a coarser unit) as NaT: such a date does not
    read as a date (a text cell), so that one row's value never raises (an exception
    would depend on that row, and would name its value)."""
    low, high = pd.Timestamp.min, pd.Timestamp.max
    if stamps.dt.tz is not None:
        low, high = low.tz_localize("UTC"), high.tz_localize("UTC")
    return stamps.where(stamps.between(low, high)).dt.as_unit("ns")


def _unit_cells(stamps: pd.Series) -> np.ndarray:
    """Cell index (into the date cells of :data:`KIND_CELLS`) of every wall-clock
    datetime: the coarsest unit it starts.  Read in microseconds, so that a wall
    clock past either end of ``datetime64[ns]`` (an instant inside it, in a zone
    ahead of or behind UTC) does not overflow and quote the value; a time with
    nanoseconds past its microsecond stays finer than a second."""
    finer = stamps.array.asi8 % 1000 != 0 if stamps.dt.unit == "ns" else False
    stamps = stamps.dt.as_unit("us")
    stamps = stamps.dt.tz_localize(None) if stamps.dt.tz is not None else stamps
    starts = [
        (stamps.dt.month == 1) & (stamps.dt.day == 1) & (stamps == stamps.dt.normalize()),
        (stamps.dt.day == 1) & (stamps == stamps.dt.normalize()),
        stamps == stamps.dt.normalize(),
        stamps == stamps.dt.floor("h"),
        stamps == stamps.dt.floor("min"),
        stamps == stamps.dt.floor("s"),
    ]
    cells = np.full(len(stamps), len(_UNITS))
    for index in reversed(range(len(_UNITS))):
        cells[starts[index].to_numpy(dtype=bool)] = index
    cells[finer] = len(_UNITS)
    return cells


def kind_counts(series: pd.Series, tz: str | None = None,
                parsed: _Parsed | None = None) -> np.ndarray:
    """Exact counts of a column's present values in the cells of :data:`KIND_CELLS`.

    Each present value lands in exactly one cell, so the histogram has L2
    sensitivity 1 under add/remove-one-row neighbours: release it only
    through a mechanism.

    Parameters
    ----------
    series : pandas.Series
        A text column.
    tz : str, optional
        Time zone whose wall clock decides the units of dates.
    parsed : optional
        The column already parsed (in ``tz``).

    Returns
    -------
    ndarray of float, shape (len(KIND_CELLS),)
    """
    counts = np.zeros(len(KIND_CELLS))
    parsed = _parse(series, tz) if parsed is None else parsed
    present = parsed.text.notna().to_numpy(dtype=bool)
    dates = parsed.dates.notna().to_numpy(dtype=bool) & ~parsed.is_number
    counts[0] = np.count_nonzero(parsed.is_integer)
    counts[1] = np.count_nonzero(parsed.is_number & ~parsed.is_integer)
    counts[2] = np.count_nonzero(present & ~parsed.is_number & ~dates)
    wall = parsed.dates[dates]
    wall = wall.dt.tz_convert(tz) if tz is not None else wall
    cells = _unit_cells(wall) + _N_DATE_CELLS * parsed.has_offset[dates]
    counts[3:] = np.bincount(cells, minlength=2 * _N_DATE_CELLS)
    return counts


def dates_by_unit(counts: np.ndarray) -> np.ndarray:
    """The date counts of a kind histogram by unit (naive and offset dates together).

    Parameters
    ----------
    counts : ndarray of float, shape (len(KIND_CELLS),)

    Returns
    -------
    ndarray of float, shape (7,)
        Counts of year .. second and finer, as :func:`choose_unit` takes them.
    """
    counts = np.asarray(counts, dtype=float)
    return counts[3:3 + _N_DATE_CELLS] + counts[3 + _N_DATE_CELLS:]


# ---------------------------------------------------------------- the rule
def datetime_counts(series: pd.Series, tz: str | None = None) -> np.ndarray:
    """:func:`kind_counts` of a typed datetime column: its present values in the
    date cells of :data:`KIND_CELLS` by the coarsest unit they start, on the
    wall clock of ``tz`` (a tz-aware column's own zone when None).

    Parameters
    ----------
    series : pandas.Series
        A ``datetime64`` column.
    tz : str, optional

    Returns
    -------
    ndarray of float, shape (len(KIND_CELLS),)
    """
    counts = np.zeros(len(KIND_CELLS))
    stamps = series[series.notna()]
    if stamps.dt.tz is not None and tz is not None:
        stamps = stamps.dt.tz_convert(tz)
    counts[3:3 + _N_DATE_CELLS] = np.bincount(_unit_cells(stamps), minlength=_N_DATE_CELLS)
    return counts


def learned_unit(counts: np.ndarray, sigma: float) -> str | None:
    """:func:`choose_unit` of a noisy kind histogram's dates, or None (no flooring)
    when their total is within four noise standard deviations of nothing.

    Parameters
    ----------
    counts : ndarray of float, shape (len(KIND_CELLS),)
    sigma : float
        The noise standard deviation of each count.

    Returns
    -------
    str or None
    """
    dates = np.asarray(counts, dtype=float)[3:]
    if dates.sum() <= _SIGNAL * sigma * np.sqrt(len(dates)):
        return None
    return choose_unit(dates_by_unit(counts), sigma * np.sqrt(2))  # two cells per unit


def choose_unit(date_counts: np.ndarray, sigma: float = 0.0) -> str | None:
    """The coarsest unit that :data:`KIND_FRACTION` of the (noisy) dates start.

    Parameters
    ----------
    date_counts : ndarray of float, shape (7,)
        Counts of dates by the coarsest unit they start (year .. finer), as
        :func:`dates_by_unit` sums the date cells of :data:`KIND_CELLS`.
    sigma : float, default=0.0
        Their noise standard deviation: the dates finer than a unit may exceed
        their allowed share by :data:`_MARGIN` standard deviations of their
        (unclipped) sum, so that noise on empty cells does not push the
        choice to a finer unit.

    Returns
    -------
    str or None
        None when more than 5% of the dates are finer than a second.
    """
    counts = np.asarray(date_counts, dtype=float)
    for index, unit in enumerate(_UNITS):
        finer = counts[index + 1:]
        if _within_share(finer.sum(), counts[:index + 1].sum(), sigma, finer.size):
            return unit
    return None


def _within_share(rest: float, part: float, sigma: float, n_rest: int) -> bool:
    """Whether ``rest`` (an unclipped noisy sum of ``n_rest`` cells) is, within
    :data:`_MARGIN` of its noise, at most the share ``1 - KIND_FRACTION`` of
    ``rest + part``."""
    allowed = (1.0 - KIND_FRACTION) / KIND_FRACTION * max(part, 0.0)
    return rest - _MARGIN * sigma * np.sqrt(n_rest) <= allowed


def choose_kind(counts: np.ndarray, sigma: float) -> tuple[ColumnKind, bool]:
    """The kind a public rule gives a text column's (noisy) kind histogram.

    Parameters
    ----------
    counts : ndarray of float, shape (len(KIND_CELLS),)
        Noisy (or exact, with ``sigma=0``) counts.
    sigma : float
        Their noise standard deviation.

    Returns
    -------
    kind : ColumnKind
        ``"numeric"``/``"integer"`` when :data:`KIND_FRACTION` of the present
        values are numbers (integers when 95% of those are whole on noisy
        counts, all of them on exact counts), ``"datetime"`` (with :func:`choose_unit`; in
        ``"UTC"`` when half of the dates carry an offset) when that share
        are dates, ``"category"`` otherwise; a number kind also needs its
        count above four noise standard deviations of that count, a date kind
        one of its date cells above four noise standard deviations (dates
        fill one or two cells, and the sum of all 14 date cells carries
        sqrt(14) times a cell's noise: a 1,500-row date column was read as
        categories in about one fit in five under the sum's bar).
    mixed : bool
        Whether the column was left as categories though at least half of
        its values read as numbers or as dates (worth declaring).
    """
    counts = np.asarray(counts, dtype=float)
    integers, decimals, text = counts[:3]
    numbers, dates = integers + decimals, counts[3:].sum()
    n_dates = counts.size - 3
    if numbers > _SIGNAL * sigma * np.sqrt(2) and _within_share(
            text + dates, numbers, sigma, 1 + n_dates):
        # exact counts (``sigma=0``) round nothing: a single fraction makes numbers
        integer = decimals <= 0 if sigma == 0 else _within_share(decimals, integers, sigma, 1)
        return ColumnKind("integer" if integer else "numeric"), False
    # dates fill one or two of the 14 date cells: the sum's noise (sqrt(14) sigma)
    # would hide a table of a thousand dates, the largest cell's does not
    if counts[3:].max() > _SIGNAL * sigma and _within_share(numbers + text, dates, sigma, 3):
        with_offset = counts[3 + _N_DATE_CELLS:].sum()
        return ColumnKind("datetime", choose_unit(dates_by_unit(counts), sigma * np.sqrt(2)),
                          "UTC" if with_offset >= 0.5 * dates else None), False
    present = counts.sum()
    signal = present > _SIGNAL * sigma * np.sqrt(counts.size)
    return ColumnKind("category"), bool(signal and max(numbers, dates) >= 0.5 * present)


# ----------------------------------------------------------------- casting
def _cast(series: pd.Series, kind: ColumnKind, declared: bool,
          parsed: _Parsed | None = None) -> pd.Series:
    """A text column read as ``kind``; a value that does not read so is an error
    (declared kinds) or missing (chosen kinds).  ``parsed``: the column already
    parsed in ``kind.tz``."""
    if kind.kind == "category":
        return series
    parsed = _parse(series, kind.tz) if parsed is None else parsed
    present = parsed.text.notna().to_numpy(dtype=bool)
    if kind.kind in ("numeric", "integer", "codes"):
        whole = kind.kind in ("integer", "codes")
        ok = parsed.is_integer if whole and declared else parsed.is_number
        values = np.where(ok, parsed.numbers, np.nan)
        _check_read(series.name, kind.kind, declared, present & ~ok)
        if whole:
            return pd.Series(pd.array(np.rint(values), dtype="Float64").astype("Int64"),
                             index=series.index, name=series.name)
        return pd.Series(values, index=series.index, name=series.name)
    if kind.kind == "timedelta":
        deltas = pd.to_timedelta(parsed.text.astype(object), errors="coerce")
        _check_read(series.name, kind.kind, declared, present & deltas.isna().to_numpy())
        return deltas.astype("timedelta64[ns]").rename(series.name)
    stamps = parsed.dates.where(~pd.Series(parsed.is_number, index=series.index))
    _check_read(series.name, kind.kind, declared, present & stamps.isna().to_numpy())
    stamps = stamps.dt.tz_convert(kind.tz) if kind.tz is not None else \
        stamps.dt.tz_localize(None)
    return stamps.astype(f"datetime64[ns, {kind.tz}]" if kind.tz else "datetime64[ns]")


def _check_read(name: Hashable, kind: str, declared: bool, bad: np.ndarray) -> None:
    if declared and bad.any():
        what = {"numeric": "numbers", "integer": "whole numbers", "codes": "integer codes",
                "datetime": "ISO dates (YYYY-MM-DD[ HH:MM[:SS]][+HH:MM])",
                "timedelta": "durations"}[kind]
        raise ValueError(f"column {name!r} is declared {kind!r} but holds text that does not "
                         f"read as {what} in some rows; fix those "
                         "values or declare the column {\"kind\": \"category\"}.")


def _declared_text_kind(entry: Any) -> ColumnKind:
    kind, unit, tz = declared_kind(entry)
    return ColumnKind(kind, unit, tz)


# -------------------------------------------------------------------- entry
def read_kinds(
    frame: pd.DataFrame,
    declared: Mapping[Hashable, Any],
    *,
    budget: LedgerShare | None,
    rng: np.random.Generator | None,
    preprocessing: str = "private",
) -> tuple[pd.DataFrame, dict]:
    """Cast a table's text columns by their declared or privately chosen kinds.

    Parameters
    ----------
    frame : pandas.DataFrame
        The private table.
    declared : mapping
        The domain declaration.
    budget : LedgerShare or None
        The ``"column kinds"`` share: spent evenly over
        :func:`columns_to_measure`.  Required when there are such columns
        and ``preprocessing="private"``.
    rng : numpy.random.Generator or None
        Noise source.
    preprocessing : {"private", "non-private"}, default="private"
        ``"non-private"`` reads the kinds from the exact counts, with a
        :class:`~sklearn_dpsynth.exceptions.PrivacyWarning`.

    Returns
    -------
    frame : pandas.DataFrame
        The table with its text columns cast (a new frame; the input is not
        modified).
    kinds : dict
        Column name -> :class:`ColumnKind` of every column.

    Raises
    ------
    TypeError
        Naming a column whose cells hold lists, dicts, sets or arrays.
    ValueError
        Naming a column declared of a kind that some of its text does not
        read as, or when kinds must be chosen and there is no budget.
    """
    for name in frame.columns:
        unhashable_check(frame[name])
    check_wall_clock_zones(naive_datetime_columns(dict(frame.dtypes.items())), declared)
    measured = columns_to_measure(dict(frame.dtypes.items()), declared)
    zones = _zones(measured, declared)
    parsed = {}  # each measured column is parsed once, for its counts and its cast

    def counter(zones: Mapping) -> dict:
        typed = {name for name in zones if _is_datetime(frame[name].dtype)}
        parsed.update((name, _parse(frame[name], tz)) for name, tz in zones.items()
                      if name not in typed)
        return {name: datetime_counts(frame[name], tz) if name in typed
                else kind_counts(frame[name], tz, parsed[name]) for name, tz in zones.items()}

    noisy, sigma = _measure(counter, zones, budget, rng, preprocessing)
    kinds, columns, mixed, dropped = {}, {}, [], []
    for name in frame.columns:
        series = frame[name]
        kind, is_mixed = _kind_of(series, declared.get(name), noisy.get(name), sigma)
        if is_mixed:
            mixed.append(name)
        if is_text(series.dtype) and name not in declared and _drops_values(
                noisy.get(name), kind, sigma):
            dropped.append(name)
        kinds[name] = kind
        declared_text = name in declared and is_text(series.dtype)
        same_zone = (kind.tz or "UTC") == (zones.get(name) or "UTC")  # naive dates read as UTC
        reuse = parsed.get(name) if same_zone else None
        columns[name] = _cast(series, kind, declared_text, reuse) if (
            declared_text or is_text(series.dtype)) else series
    _warn_mixed(mixed, dropped)
    out = pd.DataFrame(columns, index=frame.index)
    out.columns = frame.columns
    return out, kinds


def _zones(measured: Sequence[Hashable], declared: Mapping[Hashable, Any]) -> dict:
    """``{column: declared time zone or None}`` of the measured columns."""
    return {name: declared_kind(declared[name])[2] if name in declared else None
            for name in measured}


def _drops_values(counts: np.ndarray | None, kind: ColumnKind, sigma: float) -> bool:
    """Whether a column's (noisy) kind histogram shows values, above the noise, that
    do not read as the number or date kind chosen for it (they are read as missing).
    Decided on the released counts only: post-processing."""
    if counts is None or kind.kind not in ("numeric", "integer", "datetime"):
        return False
    start = {"integer": 1, "numeric": 2}.get(kind.kind)  # fractions are rounded in integers
    outside = counts[:3] if start is None else counts[start:]
    return bool(outside.sum() > _SIGNAL * sigma * np.sqrt(outside.size))


def _warn_mixed(mixed: list, dropped: list) -> None:
    if mixed:
        warnings.warn(
            f"columns {mixed} hold text of which between half and 95% reads as numbers or "
            "as dates: they are modelled as categories (values outside the kept ones map to "
            "'<other>'). Declare their kind, e.g. domain={col: {'kind': 'numeric'}}.",
            DomainInferenceWarning, stacklevel=4)
    if dropped:
        warnings.warn(
            f"columns {dropped} were read as numbers or dates, but some of their values "
            "(up to 5%; on noisy counts, more than the noise) do not read so and are "
            "modelled as missing "
            "(fractions in a whole-number column: rounded). "
            "Declare their kind to have such values refused instead, or clean them.",
            DomainInferenceWarning, stacklevel=4)


def read_engine_kinds(source: Any, declared: Mapping[Hashable, Any], *,
                      budget: LedgerShare | None, rng: np.random.Generator | None,
                      preprocessing: str = "private") -> dict:
    """:func:`read_kinds` for a table held by an engine (DuckDB, Spark).

    The engine's text columns declared as numbers or dates are read so
    (:meth:`read_by_kinds` of the source); its undeclared text columns
    (``untyped_columns``: every text column of DuckDB and Spark) get their
    kinds chosen privately from the engine's exact kind histograms
    (``kind_counts_many``), as in memory.

    Returns
    -------
    dict
        Column name -> :class:`ColumnKind` of the columns read by kind.
    """
    check_wall_clock_zones(source.wall_clock_columns(), declared)
    text = set(source.text_columns())
    measured = columns_to_measure(engine_dtypes(source), declared)
    if measured and preprocessing == "non-private":
        raise ValueError(f"preprocessing='non-private' reads a table in memory; for "
                         f"{type(source).__name__} input declare columns {measured} with "
                         "domain= or learn them privately.")
    noisy, sigma = _measure(source.kind_counts_many, _zones(measured, declared), budget, rng,
                            preprocessing) if measured else ({}, 0.0)
    read, kinds, mixed, dropped = {}, {}, [], []
    schema = source.schema_frame()
    for name in source.columns:
        entry = declared.get(name)
        if name not in text or (entry is None and name not in noisy):
            kinds[name], _ = _kind_of(schema[name], entry, noisy.get(name), sigma)
            continue
        if entry is not None:
            kind, _ = _kind_of(pd.Series([], dtype=object), entry, noisy.get(name), sigma)
        else:
            kind, is_mixed = choose_kind(noisy[name], sigma)
            if is_mixed:
                mixed.append(name)
            if _drops_values(noisy[name], kind, sigma):
                dropped.append(name)
        read[name] = (kind, entry is not None)
        kinds[name] = kind
    source.read_by_kinds(read)
    _warn_mixed(mixed, dropped)
    return kinds


def _kind_of(series: pd.Series, entry: Any, counts: np.ndarray | None,
             sigma: float) -> tuple[ColumnKind, bool]:
    """The column's kind (declared, chosen from its noisy histogram ``counts``, or
    its dtype's) and whether it is a mixed text column left as categories."""
    if entry is not None:
        kind = _declared_text_kind(entry)
        if counts is not None and kind.kind == "datetime":
            kind = ColumnKind("datetime", learned_unit(counts, sigma), kind.tz)
        if not is_text(series.dtype) and kind.kind not in ("datetime", "timedelta"):
            return ColumnKind("typed"), False
        return kind, False
    if _is_datetime(series.dtype):
        unit = None if counts is None else learned_unit(counts, sigma)
        return ColumnKind("datetime", unit, _dtype_tz(series.dtype)), False
    if counts is not None:
        return choose_kind(counts, sigma)
    if pd.api.types.is_timedelta64_dtype(series.dtype):
        return ColumnKind("timedelta"), False
    return ColumnKind("typed"), False


def _measure(counter: Any, measured: Mapping[Hashable, str | None],
             budget: LedgerShare | None, rng: np.random.Generator | None,
             preprocessing: str) -> tuple[dict, float]:
    """Every measured column's kind histogram (noisy; dates in the column's declared
    zone ``measured[name]``) and the noise's standard deviation.

    ``counter(measured)`` gives the exact histograms (one engine pass)."""
    if not measured:
        return {}, 0.0
    if preprocessing == "non-private":
        warnings.warn(
            f"preprocessing='non-private': the kinds (and datetime units) of columns "
            f"{list(measured)} were read from the exact counts of the private data; the "
            "result is not differentially private. Declare them with domain=.",
            PrivacyWarning, stacklevel=4)
        return counter(measured), 0.0
    if budget is None or rng is None or budget.rho <= 0:
        raise ValueError(
            f"columns {list(measured)} hold text (or datetimes) of no declared kind: declare "
            "them with domain= (e.g. {'kind': 'numeric'}, {'kind': 'datetime', 'unit': "
            "'day'}), or give a privacy budget to choose their kinds privately.")
    sigma = gaussian_sigma(budget.rho / len(measured))
    exact = counter(measured)
    out = {name: budget.gaussian(exact[name], sigma=sigma, rng=rng, target=f"kind of {name!r}",
                                 n_cells=len(KIND_CELLS))
           for name in measured}
    return out, sigma


def annotate_domain(domain: Domain, kinds: Mapping[Hashable, ColumnKind]) -> Domain:
    """Give the numeric specs of datetime and duration columns their value type,
    unit and time zone (declared entries keep theirs).

    Parameters
    ----------
    domain : Domain
    kinds : mapping
        Column name -> :class:`ColumnKind` (from :func:`read_kinds`).

    Returns
    -------
    Domain
        The same object.
    """
    for spec in domain.specs:
        kind = kinds.get(spec.name)
        if kind is None or spec.kind != "numeric":
            continue
        if kind.kind == "datetime":
            spec.value_type = "datetime"
            spec.tz = spec.tz if spec.tz is not None else kind.tz
            if spec.unit is None and kind.unit is not None:
                _give_unit(spec, kind.unit)
        elif kind.kind == "timedelta":
            spec.value_type = "timedelta"
    return domain


def _give_unit(spec: ColumnSpec, unit: str) -> None:
    """Give a datetime spec a unit learned or declared without bounds, with bins
    whose edges are starts of the unit (see :func:`~sklearn_dpsynth.domain.unit_edges`)
    over its (public or privately learned) range, at most as many as it had.
    Explicit edges of a declaration are kept (``unit`` then only floors)."""
    spec.unit = unit
    if spec.points is not None and len(spec.points):
        return
    low, high = spec.edges[0], spec.edges[-1]
    spec.edges = unit_edges(low, high, unit, spec.tz, n_bins=spec.n_bins,
                            high_closed=False)


def read_like(frame: pd.DataFrame, kinds: Mapping[Hashable, ColumnKind]) -> pd.DataFrame:
    """Another table's text columns read by the kinds fitted on the private one.

    For public data, rows to score and conditions: what does not read as
    its column's kind becomes missing, as in a learned column.  Costs
    nothing (the kinds are already released).

    Parameters
    ----------
    frame : pandas.DataFrame
        With (some of) the fitted columns.
    kinds : mapping
        Column name -> :class:`ColumnKind`, as :func:`read_kinds` returned.

    Returns
    -------
    pandas.DataFrame
    """
    cast = {}
    for name in frame.columns:
        series, kind = frame[name], kinds.get(name)
        unhashable_check(series)
        if kind is not None and is_text(series.dtype) and \
                kind.kind not in ("typed", "category"):
            series = _cast(series, kind, declared=False)
        cast[name] = series
    out = pd.DataFrame(cast, index=frame.index)
    out.columns = frame.columns
    return out
