"""The form of the table a caller passes in, and giving rows back in that form.

What is kept of the input is its *schema* only: column names, the dtypes
and whether it was a DataFrame.  A pandas ``CategoricalDtype`` is kept
without its category list (the categories of ``astype("category")`` come
from the data); a restored categorical column gets the categories of the
fitted domain (declared or learned privately) instead.

Datetime columns are modelled as numbers: seconds since 1970-01-01 UTC (a
tz-aware value is taken in UTC; a naive one as if it were UTC, and a naive
column declared in another time zone is refused, see
``sklearn_dpsynth._column_kinds.check_wall_clock_zones``), the
convention of :meth:`sklearn_dpsynth.domain.ColumnSpec.encode`; they are
restored to the input's unit and time zone.  Text columns (``object`` or
pandas strings) read as numbers or dates are restored as those (the dtype
of the table as read); read as categories, in the input's text dtype.  Duration (timedelta) columns
are modelled as seconds and restored as durations.  A numpy array of
strings is held as objects (its ``<U...`` width is the longest private
string, so it is never kept) and given back as an object array.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from .domain import OTHER, ColumnSpec, Domain, datetimes_as_seconds

__all__ = ["InputForm", "check_table", "as_frame", "check_frame", "align_columns",
           "is_datetime", "as_numbers"]

#: Seconds representable as datetime64[ns] (pandas' default resolution).
_SECONDS_RANGE = (pd.Timestamp.min.value / 1e9 + 1.0, pd.Timestamp.max.value / 1e9 - 1.0)


def is_datetime(dtype: Any) -> bool:
    """Whether ``dtype`` is a datetime64 dtype, naive or tz-aware."""
    return (pd.api.types.is_datetime64_any_dtype(dtype)
            and not isinstance(dtype, pd.PeriodDtype))


def as_numbers(series: pd.Series) -> np.ndarray:
    """Values as floats (datetimes in seconds since the epoch, durations in
    seconds); NaN when missing."""
    if pd.api.types.is_timedelta64_dtype(series.dtype):
        return (series / pd.Timedelta(seconds=1)).to_numpy(dtype=float, na_value=np.nan)
    if is_datetime(series.dtype):
        out = np.full(len(series), np.nan)
        present = series.notna().to_numpy()
        out[present] = datetimes_as_seconds(series[present])
        return out
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _schema_dtype(dtype: Any) -> Any:
    """``dtype`` without anything read from the data (a Categorical's list)."""
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.CategoricalDtype(ordered=bool(dtype.ordered))
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):
        # kept by name ("Int64", "datetime64[ns, Europe/Paris]", ...): the dtype
        # objects carry caches and time-zone objects that sklearn_dpsynth.load
        # cannot unpickle without running code
        name = str(dtype)
        if pd.api.types.pandas_dtype(name) == dtype:
            return name
    return dtype


@dataclass
class InputForm:
    """What the caller passed to ``fit``: enough to give rows back in kind.

    Attributes
    ----------
    columns : list
        Column names (positions for arrays).
    dtypes : list
        Column dtypes (for a DataFrame) or the array dtype repeated; a
        ``CategoricalDtype`` is stored without its categories.
    is_frame : bool
        Whether ``fit`` received a DataFrame.
    """

    columns: list
    dtypes: list
    is_frame: bool

    def __post_init__(self) -> None:
        self.dtypes = [_schema_dtype(dtype) for dtype in self.dtypes]

    def restore(self, decoded: pd.DataFrame,
                domain: Domain | None = None) -> pd.DataFrame | np.ndarray:
        """Cast decoded columns back to the input's dtypes and container.

        Parameters
        ----------
        decoded : pandas.DataFrame
            Output of :meth:`~sklearn_dpsynth.Domain.decode`.
        domain : Domain, optional
            The fitted domain; a categorical column takes its categories
            from it (without it, from the decoded values).

        Returns
        -------
        DataFrame or ndarray
        """
        out = {}
        for name, dtype in zip(self.columns, self.dtypes):
            spec = domain[name] if domain is not None else None
            out[name] = _cast(decoded[name], dtype, spec)
        frame = pd.DataFrame(out, columns=pd.Index(self.columns, dtype=object))
        if self.is_frame:
            frame.columns = pd.Index(self.columns)
            return frame
        same = self.dtypes and all(d == self.dtypes[0] for d in self.dtypes)
        dtype = self.dtypes[0] if same else np.dtype(object)
        if isinstance(dtype, str) or not isinstance(dtype, np.dtype):
            dtype = np.dtype(object)
        return frame.to_numpy(dtype=dtype)


def _cast(values: pd.Series, dtype: Any, spec: ColumnSpec | None = None) -> pd.Series:
    """Give one decoded column the input's dtype (as far as it can hold it)."""
    if isinstance(dtype, str):
        dtype = pd.api.types.pandas_dtype(dtype)
    values = pd.Series(values).reset_index(drop=True)
    if isinstance(dtype, pd.CategoricalDtype):
        return _as_categorical(values, dtype, spec)
    if is_datetime(dtype):
        return _seconds_to_datetime(values, dtype)
    if pd.api.types.is_timedelta64_dtype(dtype):
        seconds = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
        nanoseconds = np.rint(np.nan_to_num(seconds) * 1e9).astype(np.int64)
        deltas = pd.Series(pd.to_timedelta(nanoseconds, unit="ns"))
        deltas[np.isnan(seconds)] = pd.NaT
        return deltas.astype(dtype)
    if pd.api.types.is_bool_dtype(dtype) and isinstance(dtype, np.dtype):
        return values.astype(bool) if not values.isna().any() else values.astype("boolean")
    if pd.api.types.is_integer_dtype(dtype) and values.isna().any():
        return values.astype("Int64" if isinstance(dtype, np.dtype) else dtype)
    try:
        return values.astype(dtype)
    except (TypeError, ValueError):
        return values


def _domain_categories(spec: ColumnSpec | None) -> list | None:
    """The categories a restored Categorical may carry: the domain's only."""
    if spec is None:
        return None
    if spec.kind == "categorical":
        return list(spec.categories) + ([OTHER] if spec.other else [])
    if spec.kind == "codes":
        return list(range(spec.n_codes))
    return None


def _as_categorical(values: pd.Series, dtype: pd.CategoricalDtype,
                    spec: ColumnSpec | None) -> pd.Series:
    categories = _domain_categories(spec)
    if categories is None:
        present = [v for v in pd.unique(values) if not pd.isna(v)]
        categories = sorted(present, key=str)
    return pd.Series(pd.Categorical(values, categories=categories, ordered=dtype.ordered))


def _seconds_to_datetime(values: pd.Series, dtype: Any) -> pd.Series:
    """Seconds since the epoch (UTC) back to the input's datetime dtype."""
    seconds = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    seconds = np.clip(seconds, *_SECONDS_RANGE)
    # float seconds carry ~1e-7 s of rounding: snap to whole microseconds
    nanoseconds = np.where(np.isnan(seconds), 0, np.rint(seconds * 1e6) * 1000).astype(np.int64)
    stamps = pd.Series(pd.to_datetime(nanoseconds, unit="ns", utc=True))
    stamps[np.isnan(seconds)] = pd.NaT
    tz = getattr(dtype, "tz", None)
    stamps = stamps.dt.tz_convert(tz) if tz is not None else stamps.dt.tz_localize(None)
    try:
        return stamps.astype(dtype)
    except (TypeError, ValueError):
        return stamps


def check_table(X: Any) -> tuple[pd.DataFrame, InputForm]:
    """Validate a table and return it as a DataFrame with its input form.

    Only the table's *shape and schema* are checked, never its values: a
    check on values (say, "this column is all missing") would raise on a
    table and not on its neighbour, telling the two apart.  The one
    exception is an empty table, which cannot be fitted.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n_samples, n_features)

    Returns
    -------
    frame : pandas.DataFrame
    form : InputForm

    Raises
    ------
    ValueError
        On an empty table, duplicate column names or a non-2-D array.
    """
    frame, form = as_frame(X)
    check_frame(frame)
    return frame, form


def as_frame(X: Any) -> tuple[pd.DataFrame, InputForm]:
    """The conversion half of :func:`check_table`, without :func:`check_frame`'s checks.

    A DataFrame is returned itself; an array's columns are named by
    position.  Raises TypeError on sparse input, ValueError on a non-2-D
    array.
    """
    if isinstance(X, pd.DataFrame):
        return X, InputForm(list(X.columns), list(X.dtypes), True)
    if hasattr(X, "toarray"):
        raise TypeError("sparse input is not supported; pass a dense table.")
    array = np.asarray(X)
    if array.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got an array with "
                         f"{array.ndim} dimension(s).")
    # an array of strings is text: its "<U..." width is the longest private
    # string, so it is held (and given back) as objects
    dtype = np.dtype(object) if array.dtype.kind in "USO" else array.dtype
    frame = pd.DataFrame(array.astype(dtype, copy=False),
                         columns=list(range(array.shape[1])), dtype=dtype)
    return frame, InputForm(list(range(array.shape[1])), [dtype] * array.shape[1], False)


def check_frame(frame: pd.DataFrame) -> None:
    """ValueError on an empty table (no row or no column) or duplicate column names.

    Parameters
    ----------
    frame : pandas.DataFrame
    """
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError("X is empty: need at least one row and one column.")
    if frame.columns.duplicated().any():
        dup = list(frame.columns[frame.columns.duplicated()])
        raise ValueError(f"X has duplicate column names: {dup}.")


def set_feature_info(estimator: BaseEstimator, form: InputForm) -> None:
    """Set ``n_features_in_`` (and ``feature_names_in_`` for string names)."""
    estimator.n_features_in_ = len(form.columns)
    if form.is_frame and all(isinstance(c, str) for c in form.columns):
        estimator.feature_names_in_ = np.asarray(form.columns, dtype=object)


def align_columns(X: Any, form: InputForm) -> pd.DataFrame:
    """Check that ``X`` has the fitted columns and return them in fitted order.

    Parameters
    ----------
    X : DataFrame or array-like
    form : InputForm
        The fitted input's form.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        Naming missing or unexpected columns, or a wrong column count.
    """
    if isinstance(X, pd.DataFrame) and form.is_frame:
        missing = [c for c in form.columns if c not in set(X.columns)]
        extra = [c for c in X.columns if c not in set(form.columns)]
        if missing or extra:
            raise ValueError(f"X's columns do not match those seen in fit: missing {missing}, "
                             f"unexpected {extra}.")
        frame = X[form.columns]
    else:
        array = X.to_numpy() if isinstance(X, pd.DataFrame) else np.asarray(X)
        if array.ndim != 2 or array.shape[1] != len(form.columns):
            n_columns = array.shape[1] if array.ndim == 2 else "no"
            raise ValueError(f"X must be 2-D with {len(form.columns)} columns as in fit, got "
                             f"{n_columns} columns.")
        frame = pd.DataFrame(array, columns=form.columns)
    if len(frame) == 0:
        raise ValueError("X is empty: need at least one row.")
    return frame
