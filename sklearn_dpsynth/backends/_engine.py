"""What the engine backends (DuckDB, Spark) share.

Both model an engine column as a pandas dtype from its schema only, take
the same encoding path for a column of a domain, reject the same
unencodable tables with the same messages, and turn the engine's
``GROUP BY`` rows into the same count arrays.  Only the expression syntax
(SQL text or Spark columns) is theirs.

Privacy: everything here reads the public schema and domain; the flags
and cell rows passed in are released only as an error naming a column
(never values, nor how many) or as exact counts for a mechanism.
"""

from __future__ import annotations

import itertools
from typing import Any, Hashable, Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from .._column_kinds import ColumnKind
from ..domain import ColumnSpec, Domain, declared_kind

__all__ = ["modelled_dtype", "family", "encoding_path", "raise_unencodable", "counts_from_cells",
           "row_blocks", "MISSING", "CATEGORIES", "BOUNDS", "codes_reason", "NOT_READ",
           "kind_dtype", "kind_family", "text_kinds", "with_implied_kinds"]

#: Why a table is unencodable (completing "column 'c' (...) contains ...").
MISSING = "missing values but its domain does not allow them; declare it with missing=True"
CATEGORIES = "values outside the declared categories; declare them, or allow other=True"
BOUNDS = "values outside the declared bounds; declare wider bounds or clip=True"
NOT_READ = ("text that does not read as its declared kind; fix those values or declare the "
            "column {'kind': 'category'}")

#: Kinds an engine reads text columns as (durations are read in memory only).
_READ_KINDS = ("numeric", "integer", "codes", "datetime")

_FAMILIES = {"boolean": "boolean", "integer": "number", "float": "number",
             "datetime": "datetime", "datetime_utc": "datetime"}


def modelled_dtype(kind: str) -> Any:
    """The pandas dtype an engine column of this kind is modelled as (schema only).

    ``kind`` is one of ``"boolean"``, ``"integer"``, ``"float"``,
    ``"datetime"`` (naive), ``"datetime_utc"``, ``"text"`` or anything else
    (object).  Every engine column may hold NULL, so integers and booleans
    map to the nullable pandas dtypes (a learned domain reserves a missing
    code); text maps to pandas' default text dtype.
    """
    if kind == "boolean":
        return pd.BooleanDtype()
    if kind == "integer":
        return pd.Int64Dtype()
    if kind == "float":
        return np.dtype("float64")
    if kind == "datetime_utc":
        return pd.DatetimeTZDtype("ns", "UTC")
    if kind == "datetime":
        return np.dtype("datetime64[ns]")
    if kind == "text":
        return pd.Series([], dtype=str).dtype
    return np.dtype("object")


def family(kind: str) -> str:
    """``"number"``, ``"datetime"``, ``"boolean"`` or ``"other"`` for a column kind."""
    return _FAMILIES.get(kind, "other")


def encoding_path(spec: ColumnSpec, column_family: str) -> str:
    """How a column is encoded: ``"categorical"`` (its raw values compared
    with the categories), else ``spec.kind`` (``"numeric"`` or ``"codes"``)
    on the column read as a number."""
    if spec.kind == "categorical" or (spec.kind != "numeric"
                                      and column_family in ("other", "boolean")):
        return "categorical"
    return spec.kind


def codes_reason(spec: ColumnSpec) -> str:
    """Why a ``codes`` column is unencodable (public: the declared size)."""
    return f"values must be integer codes in 0..{spec.n_codes - 1}"


def raise_unencodable(failures: Sequence[tuple[Hashable, Any, str]], flags: Iterable[Any],
                      where: str) -> None:
    """ValueError naming the first ``(column, condition, reason)`` whose flag is set."""
    for (name, _, reason), bad in zip(failures, flags):
        if bad:
            raise ValueError(f"column {name!r} ({where}) contains {reason}.")


def counts_from_cells(rows: Sequence[Sequence[int]], shape: tuple[int, ...]) -> np.ndarray:
    """Dense counts from engine rows ``(code_0, ..., code_{d-1}, count)``."""
    out = np.zeros(shape)
    if rows:
        index = np.array([tuple(r)[:-1] for r in rows], dtype=np.int64)
        out[tuple(index.T)] = np.array([r[-1] for r in rows], dtype=float)
    return out


def row_blocks(rows: Iterable[Sequence[int]], chunk_rows: int,
               n_columns: int) -> Iterator[np.ndarray]:
    """Read-only int64 blocks of at most ``chunk_rows`` streamed rows of codes."""
    rows = iter(rows)
    while True:
        block = [tuple(r) for r in itertools.islice(rows, chunk_rows)]
        if not block:
            return
        out = np.array(block, dtype=np.int64).reshape(len(block), n_columns)
        out.flags.writeable = False
        yield out


def histogram_from_cells(rows: Iterable, n_cells: int) -> np.ndarray:
    """A histogram of ``n_cells`` from ``(cell index, count)`` result rows."""
    counts = np.zeros(n_cells)
    for cell_index, count in rows:
        counts[cell_index] = count
    return counts


def categories_in_order(rows: Iterable) -> tuple[list, np.ndarray]:
    """Values and counts from ``(value, count, first position)`` result rows,
    in order of first appearance."""
    rows = sorted(rows, key=lambda row: row[2])
    return [r[0] for r in rows], np.array([r[1] for r in rows], dtype=float)


def text_kinds(kinds: dict, text_columns: Sequence[Hashable]) -> dict:
    """The ``{column: (ColumnKind, strict)}`` entries an engine reads its text
    columns by (numbers and dates; categories stay text).

    Raises
    ------
    ValueError
        For a text column declared as durations (read in memory only).
    """
    out = {}
    for name, (kind, strict) in kinds.items():
        if name not in text_columns:
            continue
        if kind.kind == "timedelta":
            raise ValueError(f"column {name!r}: durations held as text are read in memory only; "
                             "pass the table as a pandas DataFrame, or a duration type.")
        if kind.kind in _READ_KINDS:
            out[name] = (kind, strict)
    return out


def kind_dtype(kind: Any) -> Any:
    """The pandas dtype a text column read as ``kind`` (a ColumnKind) is modelled as."""
    if kind.kind == "numeric":
        return np.dtype("float64")
    if kind.kind in ("integer", "codes"):
        return pd.Int64Dtype()
    if kind.tz is not None:
        return pd.DatetimeTZDtype("ns", kind.tz)
    return np.dtype("datetime64[ns]")


def kind_family(kind: Any) -> str:
    """The family (see :func:`family`) of a text column read as ``kind``."""
    return "datetime" if kind.kind == "datetime" else "number"


def with_implied_kinds(kinds: dict, domain: Domain, text_columns: Sequence[Hashable]) -> dict:
    """``kinds`` and, for every text column that a numeric or codes spec encodes
    without a kind of its own, the kind its spec declares (strict: text that
    does not read so is an error naming the column, never an engine cast error)."""
    out = dict(kinds)
    for spec in domain.specs:
        if spec.name in text_columns and spec.name not in out and spec.kind != "categorical":
            out[spec.name] = (ColumnKind(*declared_kind(spec)), True)
    return out
