"""Validation, alignment and discretisation shared by the evaluation metrics.

Every metric compares a *reference* table (the real data) with one or more
other tables (synthetic data, a holdout set).  The helpers here

* turn DataFrames or 2-D arrays into aligned DataFrames with the same columns
  in the same order (:func:`prepare_tables`),
* decide for every column whether it is categorical or numeric, from the
  ``domain`` when it describes the column and from the dtype otherwise
  (:func:`column_kinds`),
* encode every column as integer codes (:func:`encode_tables`):
  categorical columns by category, numeric columns by equal-width bins whose
  edges come from the *reference* table's range (or from the public bounds
  of the domain); the same codes/edges are applied to the other tables.

The range of the real data is treated as public for evaluation purposes.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..domain import ColumnSpec, Domain, datetimes_as_seconds, spec_from_declaration

CATEGORICAL = "categorical"
NUMERIC = "numeric"


@dataclass(frozen=True)
class Encoded:
    """Integer-coded versions of aligned tables.

    Attributes
    ----------
    columns : list
        Column names, in the order of the code matrices' columns.
    codes : list of ndarray of shape (n_rows_i, n_columns)
        One code matrix per table, the reference table first.
    sizes : list of int
        Number of codes of every column.
    labels : list of list
        Human-readable label of every code of every column (categories or
        bin intervals).
    """

    columns: list
    codes: list
    sizes: list
    labels: list


def as_frame(X: Any, name: str, columns: Sequence | None = None) -> pd.DataFrame:
    """Return ``X`` as a DataFrame, validating that it is a non-empty table.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_samples, n_features)
        The table.
    name : str
        Name of the parameter, used in error messages.
    columns : sequence, default=None
        Column names to give a 2-D array (ignored for DataFrames).

    Returns
    -------
    frame : DataFrame
    """
    if isinstance(X, pd.DataFrame):
        frame = X
    else:
        array = np.asarray(X)
        if array.ndim != 2:
            raise ValueError(
                f"{name} must be a DataFrame or a 2-D array, got an array "
                f"with {array.ndim} dimension(s)."
            )
        if columns is not None and len(columns) != array.shape[1]:
            raise ValueError(
                f"{name} has {array.shape[1]} columns, expected {len(columns)}."
            )
        frame = pd.DataFrame(array, columns=columns).infer_objects()
    if frame.columns.has_duplicates:
        dupes = list(frame.columns[frame.columns.duplicated()])
        raise ValueError(f"{name} has duplicated column names: {dupes}.")
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {frame.shape}).")
    return frame.reset_index(drop=True)


def align_columns(reference: pd.DataFrame, other: pd.DataFrame, name: str) -> pd.DataFrame:
    """Reorder ``other``'s columns like ``reference``'s, checking they match.

    Parameters
    ----------
    reference, other : DataFrame
        Tables that must have the same set of columns.
    name : str
        Name of ``other`` in error messages.

    Returns
    -------
    other : DataFrame
        With the columns in ``reference``'s order.
    """
    missing = [c for c in reference.columns if c not in other.columns]
    extra = [c for c in other.columns if c not in reference.columns]
    if missing or extra:
        raise ValueError(
            f"{name} does not have the real table's columns: "
            f"missing {missing}, unexpected {extra}."
        )
    return other[list(reference.columns)]


def prepare_tables(reference: Any, *others: tuple[str, Any]) -> list[pd.DataFrame]:
    """Validate a reference table and align other tables on its columns.

    Parameters
    ----------
    reference : DataFrame or 2-D array
        The real table.
    *others : (str, DataFrame or 2-D array)
        ``(parameter name, table)`` pairs; arrays get the reference's column
        names.

    Returns
    -------
    frames : list of DataFrame
        The reference first, then the others in order, all with the same
        columns in the same order.
    """
    ref = as_frame(reference, "real")
    frames = [ref]
    for name, table in others:
        frame = as_frame(table, name, columns=list(ref.columns))
        frames.append(align_columns(ref, frame, name))
    return frames


def _column_spec(column: Any, entry: Any, bins: int) -> ColumnSpec:
    """The synthesizers' reading of one domain entry; ValueError naming it."""
    try:
        return spec_from_declaration(column, entry, n_bins=bins)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"domain[{column!r}] is not a readable domain entry: {exc}") from None


def check_domain(domain: Any, columns: Sequence, bins: int = 1) -> dict:
    """Read a domain declaration like the synthesizers do, for a table's columns.

    Parameters
    ----------
    domain : mapping, Domain or None
        ``{column: entry}`` with the entries the synthesizers accept (see
        :func:`~sklearn_dpsynth.domain.spec_from_declaration`), or a
        :class:`~sklearn_dpsynth.Domain`.
    columns : sequence
        Columns of the table.
    bins : int, default=1
        Bins of a numeric entry that does not fix its own (a ``(low, high)``
        tuple, or a dict with ``bounds`` but no ``n_bins``): the metric's
        ``bins``.  Entries with ``edges``, with ``bounds`` and ``n_bins``,
        or given as a :class:`~sklearn_dpsynth.ColumnSpec` keep their bins.

    Returns
    -------
    specs : dict
        ``{column: ColumnSpec}`` for the described columns (possibly empty).
    """
    if domain is None:
        return {}
    if isinstance(domain, Domain):
        domain = {spec.name: spec for spec in domain}
    if not isinstance(domain, Mapping):
        raise ValueError(f"domain must be a mapping {{column: entry}}, got {type(domain).__name__}.")
    known = set(columns)
    unknown = [c for c in domain if c not in known]
    if unknown:
        raise ValueError(f"domain names columns that are not in the table: {unknown}.")
    return {column: _column_spec(column, entry, bins) for column, entry in domain.items()}


def column_kinds(frame: pd.DataFrame, domain: Mapping | None = None) -> dict:
    """Whether every column is ``"categorical"`` or ``"numeric"``.

    Columns described by ``domain`` follow it (codes or categories ->
    categorical, bounds or edges -> numeric); the other columns are numeric
    when their dtype is numeric (booleans excluded) or datetime (compared
    as seconds since the epoch, see :func:`numeric_values`) and categorical
    otherwise.

    Parameters
    ----------
    frame : DataFrame
        The table.
    domain : mapping, default=None
        Domain of the columns (see :func:`check_domain`).

    Returns
    -------
    kinds : dict
        ``{column: "categorical" | "numeric"}``, in column order.
    """
    domain = check_domain(domain, list(frame.columns))
    kinds = {}
    for column in frame.columns:
        if column in domain:
            numeric = domain[column].kind == NUMERIC
        else:
            dtype = frame[column].dtype
            numeric = pd.api.types.is_datetime64_any_dtype(dtype) or (
                pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype))
        kinds[column] = NUMERIC if numeric else CATEGORICAL
    return kinds


def numeric_values(series: pd.Series, column: Any) -> np.ndarray:
    """Float values of a column, with a ValueError naming it if not numeric.

    Date-times are seconds since 1970-01-01 UTC (naive ones read as UTC),
    the unit of the domain's date-time edges; missing values are NaN.
    """
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        values = np.full(len(series), np.nan)
        present = series.notna().to_numpy()
        values[present] = datetimes_as_seconds(series[present])
        return values
    try:
        return pd.to_numeric(series, errors="raise").to_numpy(dtype=float, na_value=np.nan)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"Column {column!r} is numeric in the real data but has non-numeric values: {exc}"
        ) from exc


def _encode_int_codes(series_list: list, column: Any, k: int) -> tuple[list, int, list]:
    """Check and return integer codes ``0..k-1`` declared by the domain."""
    codes = []
    for series in series_list:
        values = numeric_values(series, column)
        bad = np.isnan(values) | (values != np.round(values)) | (values < 0) | (values >= k)
        if bad.any():
            example = series[bad].iloc[0]
            raise ValueError(
                f"Column {column!r} must hold integer codes in 0..{k - 1} (domain), got {example!r}."
            )
        codes.append(values.astype(np.int64))
    return codes, k, list(range(k))


def _encode_listed(series_list: list, column: Any, spec: ColumnSpec) -> tuple[list, int, list]:
    """Codes of values among the categories a domain lists.

    Missing values take the spec's missing-value code (after the categories)
    when it has one.
    """
    index = pd.Index(spec.categories, dtype=object)
    codes = []
    for series in series_list:
        found = index.get_indexer(series.astype(object))
        if spec.missing:
            found[series.isna().to_numpy()] = spec.missing_code
        if (found < 0).any():
            example = series[found < 0].iloc[0]
            raise ValueError(f"Column {column!r} has value {example!r} that is not in its domain.")
        codes.append(found.astype(np.int64))
    return codes, spec.size, list(spec.categories) + ([None] if spec.missing else [])


def sorted_if_possible(values: list) -> list:
    """Sort values when they are mutually comparable, keep order otherwise."""
    try:
        return sorted(values)
    except TypeError:
        return values


def _encode_observed(series_list: list) -> tuple[list, int, list]:
    """Codes of categories observed in the tables (reference's first, sorted)."""
    ref_values = pd.unique(series_list[0].astype(object).dropna())
    categories = sorted_if_possible(list(ref_values))
    for series in series_list[1:]:
        seen = set(categories)
        new = [v for v in pd.unique(series.astype(object).dropna()) if v not in seen]
        categories.extend(sorted_if_possible(new))
    index = pd.Index(categories, dtype=object)
    has_nan = any(series.isna().any() for series in series_list)
    size = len(categories) + int(has_nan)
    codes = []
    for series in series_list:
        found = index.get_indexer(series.astype(object))
        found[series.isna().to_numpy()] = len(categories)
        codes.append(found.astype(np.int64))
    labels = categories + (["<NA>"] if has_nan else [])
    return codes, max(size, 1), labels


def bin_edges(reference: np.ndarray, bins: int, column: Any) -> np.ndarray:
    """Equal-width bin edges over the reference's finite range."""
    finite = reference[np.isfinite(reference)]
    if finite.size == 0:
        raise ValueError(f"Column {column!r} has no finite value in the real data to bin.")
    low, high = float(finite.min()), float(finite.max())
    if high == low:
        return np.array([low, high])
    return np.linspace(low, high, bins + 1)


def digitize(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin index of every value; values outside the edges go to the end bins.

    Missing values get the code ``len(edges) - 1`` (one past the last bin).
    """
    n_bins = len(edges) - 1
    codes = np.searchsorted(edges, values, side="right") - 1
    codes = np.clip(codes, 0, n_bins - 1)
    codes[np.isnan(values)] = n_bins
    return codes.astype(np.int64)


def _encode_numeric(
    series_list: list, column: Any, bins: int, edges: np.ndarray | None
) -> tuple[list, int, list]:
    """Binning of a numeric column: the domain's edges, or equal-width over the reference's range."""
    values = [numeric_values(series, column) for series in series_list]
    if edges is None:
        edges = bin_edges(values[0], bins, column)
    codes = [digitize(v, edges) for v in values]
    n_bins = len(edges) - 1
    has_nan = any(np.isnan(v).any() for v in values)
    labels = [f"[{edges[i]:.4g}, {edges[i + 1]:.4g}]" for i in range(n_bins)]
    labels += ["<NA>"] if has_nan else []
    return codes, n_bins + int(has_nan), labels


def check_bins(bins: Any, name: str = "bins") -> int:
    """Validate a number of bins (an int >= 1)."""
    if not isinstance(bins, numbers.Integral) or isinstance(bins, bool) or bins < 1:
        raise ValueError(f"{name} must be a positive integer, got {bins!r}.")
    return int(bins)


def encode_column(
    series_list: list, column: Any, kind: str, spec: ColumnSpec | None, bins: int
) -> tuple[list, int, list]:
    """Integer codes of one column in every table.

    Parameters
    ----------
    series_list : list of Series
        The column in every table, reference first.
    column : hashable
        Column name (for error messages).
    kind : {"categorical", "numeric"}
        Kind of the column.
    spec : ColumnSpec or None
        The column's domain (see :func:`check_domain`), if any: its codes,
        its categories (read from the tables when the list has an
        ``other`` code) or its bin edges.
    bins : int
        Number of equal-width bins of a numeric column without a domain.

    Returns
    -------
    codes : list of ndarray of int
        Codes in every table.
    size : int
        Number of codes.
    labels : list
        Label of every code.
    """
    if spec is not None and spec.kind == "codes":
        return _encode_int_codes(series_list, column, spec.n_codes)
    if spec is not None and spec.kind == CATEGORICAL and not spec.other:
        return _encode_listed(series_list, column, spec)
    if kind == NUMERIC:
        edges = spec.edges if spec is not None and spec.kind == NUMERIC else None
        return _encode_numeric(series_list, column, bins, edges)
    return _encode_observed(series_list)


def encode_tables(
    frames: list[pd.DataFrame],
    domain: Mapping | None = None,
    bins: int = 20,
    columns: Sequence | None = None,
) -> Encoded:
    """Encode aligned tables as integer codes, the first being the reference.

    Parameters
    ----------
    frames : list of DataFrame
        Aligned tables (see :func:`prepare_tables`), reference first.
    domain : mapping or Domain, default=None
        Domain of the columns (see :func:`check_domain`); codes and category
        lists are used as is.
    bins : int, default=20
        Number of equal-width bins of numeric columns (over the domain
        bounds if given, else over the reference's range).
    columns : sequence, default=None
        Subset of columns to encode (all by default).

    Returns
    -------
    encoded : Encoded
    """
    bins = check_bins(bins)
    domain = check_domain(domain, list(frames[0].columns), bins)
    columns = list(frames[0].columns) if columns is None else list(columns)
    kinds = column_kinds(frames[0], domain)
    per_table = [[] for _ in frames]
    sizes, labels = [], []
    for column in columns:
        series_list = [frame[column] for frame in frames]
        codes, size, column_labels = encode_column(
            series_list, column, kinds[column], domain.get(column), bins
        )
        for store, code in zip(per_table, codes, strict=True):
            store.append(code)
        sizes.append(size)
        labels.append(column_labels)
    matrices = [np.column_stack(store) if store else np.empty((len(f), 0), dtype=np.int64)
                for store, f in zip(per_table, frames, strict=True)]
    return Encoded(columns=columns, codes=matrices, sizes=sizes, labels=labels)


def check_choice(value: Any, name: str, choices: Sequence) -> Any:
    """Raise a ValueError naming ``name`` unless ``value`` is in ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


def reduce_values(values: pd.Series, reduce: str) -> float | pd.Series:
    """Reduce per-item values by ``"mean"``, ``"max"`` or not at all (``"none"``)."""
    check_choice(reduce, "reduce", ("mean", "max", "none"))
    if reduce == "none":
        return values
    if len(values) == 0:
        return float("nan")
    return float(values.mean() if reduce == "mean" else values.max())


def bins_tuple(bins: Any) -> tuple[int, ...]:
    """Normalise ``bins`` given as an int or a tuple of ints to a tuple."""
    if isinstance(bins, (tuple, list)):
        if len(bins) == 0:
            raise ValueError("bins must be an int or a non-empty tuple of ints.")
        return tuple(check_bins(b) for b in bins)
    return (check_bins(bins),)


@dataclass(frozen=True)
class Features:
    """Model-ready matrices of aligned tables.

    Attributes
    ----------
    matrices : list of ndarray of float, shape (n_rows_i, n_columns)
        Categorical columns as integer codes, numeric columns as raw values
        (missing values as NaN), one matrix per table.
    categorical : ndarray of bool of shape (n_columns,)
        Which columns are categorical codes.
    sizes : list of int
        Number of codes of every categorical column (0 for numeric ones).
    columns : list
        Column names.
    """

    matrices: list
    categorical: np.ndarray
    sizes: list
    columns: list


def mixed_features(
    frames: list[pd.DataFrame], domain: Mapping | None = None, columns: Sequence | None = None
) -> Features:
    """Codes for categorical columns and raw values for numeric ones.

    Parameters
    ----------
    frames : list of DataFrame
        Aligned tables, reference first (its categories come first).
    domain : mapping, default=None
        Column domain.
    columns : sequence, default=None
        Columns to use (all by default).

    Returns
    -------
    features : Features
    """
    domain = check_domain(domain, list(frames[0].columns))
    columns = list(frames[0].columns) if columns is None else list(columns)
    kinds = column_kinds(frames[0], domain)
    per_table = [[] for _ in frames]
    sizes = []
    for column in columns:
        series_list = [frame[column] for frame in frames]
        if kinds[column] == NUMERIC:
            values = [numeric_values(s, column) for s in series_list]
            sizes.append(0)
        else:
            values, size, _ = encode_column(series_list, column, CATEGORICAL, domain.get(column), 1)
            sizes.append(size)
        for store, value in zip(per_table, values, strict=True):
            store.append(np.asarray(value, dtype=float))
    matrices = [np.column_stack(store) for store in per_table]
    categorical = np.array([kinds[c] == CATEGORICAL for c in columns], dtype=bool)
    return Features(matrices=matrices, categorical=categorical, sizes=sizes, columns=columns)
