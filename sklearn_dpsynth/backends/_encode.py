"""Where a table becomes codes: the single entry point of every backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..domain import ColumnSpec, Domain, code_dtype
from ._duckdb import DuckDBSource
from ._numpy import NumpyTable
from ._spark import SparkSource
from ._table import EncodedTable

__all__ = ["encode_table", "encode_public_table", "encode_in_blocks"]

#: Rows per block when a DataFrame is encoded (its temporaries: a few MB per column).
ENCODE_BLOCK_ROWS = 1 << 18


def encode_table(frame: Any, domain: Domain) -> EncodedTable:
    """Encode a table on a domain, in the backend that suits its container.

    Parameters
    ----------
    frame : pandas.DataFrame, DuckDBSource or SparkSource
        The table, with the domain's columns in the domain's order (as
        prepared by the estimator's input checks), or a table held by
        DuckDB (encoded lazily in SQL) or Spark (encoded in Spark
        expressions).
    domain : Domain
        The complete (public) domain.

    Returns
    -------
    EncodedTable
        A :class:`~sklearn_dpsynth.backends.NumpyTable` for a DataFrame, a
        :class:`~sklearn_dpsynth.backends.DuckDBTable` for a DuckDB source,
        a :class:`~sklearn_dpsynth.backends.SparkTable` for a Spark source.

    Raises
    ------
    TypeError
        For a container no backend handles.
    """
    if isinstance(frame, pd.DataFrame):
        return NumpyTable(encode_in_blocks(frame, domain), domain.columns, domain.sizes)
    if isinstance(frame, (DuckDBSource, SparkSource)):
        return frame.encode(domain)
    raise TypeError(f"no backend encodes a {type(frame).__name__}; pass a pandas DataFrame.")


def encode_in_blocks(frame: pd.DataFrame, domain: Domain,
                     block_rows: int = ENCODE_BLOCK_ROWS) -> np.ndarray:
    """A DataFrame's codes in the smallest dtype, one column and one block of rows
    at a time (:meth:`Domain.encode` with ``block_rows``).

    The same codes and errors as ``domain.encode(frame)``, but the int64 and
    float temporaries of the encoding span at most ``block_rows`` rows, so
    that encoding a table adds its compact codes and a few MB to the memory
    the frame already takes, whatever its number of rows.

    Parameters
    ----------
    frame : pandas.DataFrame
        With the domain's columns.
    domain : Domain
    block_rows : int, default=ENCODE_BLOCK_ROWS
        Rows encoded at once, ``>= 1``.

    Returns
    -------
    ndarray of shape (n_rows, n_columns)
        In ``code_dtype(max(domain.sizes))`` (``uint8`` when every column
        has at most 256 codes).
    """
    dtype = code_dtype(max(domain.sizes)) if len(domain) else np.dtype(np.uint8)
    return domain.encode(frame, dtype=dtype, block_rows=block_rows)


def encode_public_table(frame: pd.DataFrame, domain: Domain,
                        parameter: str = "public_data") -> NumpyTable:
    """Encode a public table on a fitted domain, in memory.

    Public rows cost no budget and are encoded exactly as the private ones
    (learned numeric columns clip into their bounds, learned categorical
    columns send unknown categories to their "other" code).  A value that
    the domain cannot encode is an error naming the column and how many
    rows hold such values, never the values.

    Parameters
    ----------
    frame : pandas.DataFrame
        The public table, with the domain's columns in the domain's order.
    domain : Domain
        The fitted domain.
    parameter : str, default="public_data"
        Name of the argument, for error messages.

    Returns
    -------
    NumpyTable

    Raises
    ------
    ValueError
        Naming ``parameter``, the column and the number of rows outside
        the domain.
    """
    codes = np.empty((len(frame), len(domain)), dtype=np.int64)
    for j, spec in enumerate(domain.specs):
        try:
            codes[:, j] = spec.encode_series(frame[spec.name])
        except (TypeError, ValueError):
            values = frame[spec.name].to_numpy()
            n_bad = _count_unencodable(spec, values)
            raise ValueError(
                f"{parameter}: column {spec.name!r} has {n_bad} of {len(values)} rows that "
                f"its fitted {spec.kind} domain cannot encode (missing values where it allows "
                "none, unknown categories, numbers outside declared bounds or non-integer "
                "codes).") from None
    return NumpyTable(codes, domain.columns, domain.sizes)


def _count_unencodable(spec: ColumnSpec, values: np.ndarray) -> int:
    """Number of values that ``spec`` cannot encode (bisection on the failing blocks)."""
    try:
        spec.encode(values)
        return 0
    except (TypeError, ValueError):
        if len(values) <= 1:
            return len(values)
        half = len(values) // 2
        return _count_unencodable(spec, values[:half]) + _count_unencodable(spec, values[half:])
