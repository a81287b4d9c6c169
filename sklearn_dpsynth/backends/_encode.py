"""Where a table becomes codes: the single entry point of every backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..domain import ColumnSpec, Domain
from ._memory import encode_in_blocks
from ._numpy import NumpyTable
from ._registry import open_source
from ._source import TableSource
from ._table import EncodedTable

__all__ = ["encode_table", "encode_public_table", "encode_in_blocks"]


def encode_table(frame: Any, domain: Domain) -> EncodedTable:
    """Encode a table on a domain, in the backend that holds it.

    Parameters
    ----------
    frame : pandas.DataFrame or TableSource
        The table, with the domain's columns in the domain's order (as
        prepared by the estimator's input checks), or a source
        (:func:`~sklearn_dpsynth.backends.open_source`: a table held by
        DuckDB is encoded lazily in SQL, one held by Spark in Spark
        expressions).
    domain : Domain
        The complete (public) domain.

    Returns
    -------
    EncodedTable
        :meth:`~sklearn_dpsynth.backends.TableSource.encode` of the source: a
        :class:`~sklearn_dpsynth.backends.NumpyTable` for a DataFrame, a
        :class:`~sklearn_dpsynth.backends.DuckDBTable` for a DuckDB source,
        a :class:`~sklearn_dpsynth.backends.SparkTable` for a Spark source.

    Raises
    ------
    TypeError
        For any other container.
    """
    if not isinstance(frame, (pd.DataFrame, TableSource)):
        raise TypeError(f"no backend encodes a {type(frame).__name__}; pass a pandas DataFrame "
                        "or a TableSource.")
    return open_source(frame).encode(domain)


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
