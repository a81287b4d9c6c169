"""Domain declarations from tables that are not private, or from what users know.

* :func:`domain_from_public_data` builds a declaration from a *public*
  table (an older release, a public split) at no privacy cost;
* :func:`describe_domain` describes any table into an editable,
  JSON-serialisable declaration for a person to review: it reads the table,
  so it raises a :class:`~sklearn_dpsynth.exceptions.PrivacyWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from ._domain_learning import as_numbers, can_hold_missing, column_kind, is_integer
from ._input import check_table
from .domain import _per_integer
from .exceptions import PrivacyWarning

__all__ = ["domain_from_public_data", "describe_domain"]


def domain_from_public_data(
    public: pd.DataFrame,
    *,
    n_bins: int = 32,
    strategy: str = "uniform",
    max_categories: int = 99,
) -> dict:
    """Build a domain declaration from a *public* table (costs no budget).

    Bin edges come from scikit-learn's ``KBinsDiscretizer`` fitted on the
    public table, so every strategy it offers can be used; category lists
    are the public table's most frequent values.  Pass the result as
    ``domain=`` to a synthesizer or :class:`TableDiscretizer`.

    Parameters
    ----------
    public : pandas.DataFrame
        A table that is not private (e.g. an older release, or a public
        split); its columns should be those of the private table.
    n_bins : int, default=32
        Bins per numeric column (fewer when the public column has fewer
        distinct values).
    strategy : {"uniform", "quantile", "kmeans"}, default="uniform"
        Binning strategy of ``KBinsDiscretizer``.
    max_categories : int, default=99
        Categories kept per column; rarer public values and values unseen
        in the public table map to "other".

    Returns
    -------
    declaration : dict
        ``{column: entry}`` with ``{"edges": ..., "clip": True}`` for numeric
        columns (private values outside the public range are clipped; the
        edges of a datetime column are in seconds since 1970-01-01 UTC) and
        ``{"categories": ..., "other": True}`` for the others.
    """
    from sklearn.preprocessing import KBinsDiscretizer

    if strategy not in ("uniform", "quantile", "kmeans"):
        raise ValueError(f"strategy must be 'uniform', 'quantile' or 'kmeans', got {strategy!r}.")
    frame, _ = check_table(public)
    declaration: dict = {}
    for name in frame.columns:
        series = frame[name]
        missing = can_hold_missing(series)
        if column_kind(series) != "categorical":
            present = pd.Series(as_numbers(series)).dropna()
            if present.empty:
                raise ValueError(f"public table: column {name!r} has no values to bin.")
            bins = max(1, min(n_bins, present.nunique()))
            edges = np.unique(_public_edges(present, bins, strategy, KBinsDiscretizer))
            if edges.size < 2:
                edges = np.array([edges[0], edges[0] + 1.0])
            declaration[name] = {"kind": "numeric", "edges": edges, "clip": True,
                                 "integer": is_integer(series), "missing": missing}
        else:
            present = series.astype(object).dropna()
            categories = list(present.value_counts().index[:max_categories])
            declaration[name] = {"categories": sorted(categories, key=str), "other": True,
                                 "missing": missing}
    return declaration


def _public_edges(values: pd.Series, bins: int, strategy: str, kbins) -> np.ndarray:
    if bins < 2:
        return np.array([values.min(), values.max()], dtype=float)
    options = {"quantile_method": "averaged_inverted_cdf"} if strategy == "quantile" else {}
    model = kbins(n_bins=bins, encode="ordinal", strategy=strategy, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # merged near-duplicate edges
        model.fit(values.to_numpy(dtype=float).reshape(-1, 1))
    return np.asarray(model.bin_edges_[0], dtype=float)


def describe_domain(X: Any, *, n_bins: int | None = None, max_categories: int = 99) -> dict:
    """Describe a table as an editable, JSON-serialisable domain declaration.

    Every column gets an entry that ``domain=`` accepts back: numeric
    columns ``{"kind": "numeric", "bounds": [min, max], "integer": ...,
    "missing": ...}`` (datetime bounds as ISO 8601 strings; values that
    hold at least ``POINT_MASS_SHARE`` (10%) of the rows, such as the zeros
    of a money column, are proposed as exact ``"points"``), booleans and
    other columns ``{"categories": [...], "other": ..., "missing": ...}``
    with at most ``max_categories`` of the most frequent values.  The
    ``missing`` flag follows the dtype (whether the column *can* hold a
    missing value), so a later table with a missing value still fits.

    **This reads the table: it is not differentially private**, and it
    raises a :class:`~sklearn_dpsynth.exceptions.PrivacyWarning`.  A domain
    declared with ``domain=`` is treated as public knowledge, so what it
    holds must be public: use this helper on a public table (a public
    sample, an older release), or on the private table only to *draft* a
    declaration that you then edit to what is documented publicly (a
    schema, a codebook, a questionnaire's answer options, legal ranges such
    as ages 0-120), removing anything that exists only in the private data.
    Passing the output for a private table unedited copies its exact
    minima, maxima and category lists -- rare categories included -- into
    every model and release: that is a privacy leak, not a declaration.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        The table to describe.
    n_bins : int, optional
        Bins for every numeric entry; by default entries leave it out, so
        the estimator's ``n_bins`` applies.
    max_categories : int, default=99
        Most frequent values listed per categorical column; ``"other"`` is
        set when there are more.

    Returns
    -------
    declaration : dict
        ``{column: entry}`` of plain Python values (``json.dumps`` works).

    Warns
    -----
    PrivacyWarning
        Always: the values were read from ``X`` without privacy protection.

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> from sklearn_dpsynth import describe_domain
    >>> public = pd.DataFrame({"age": [23, 45, 67], "sex": ["F", "M", "F"]})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     declaration = describe_domain(public)
    >>> declaration["age"]
    {'kind': 'numeric', 'bounds': [23, 67], 'integer': True, 'missing': False}
    >>> declaration["age"]["bounds"] = [0, 120]  # edit to the documented range
    """
    frame, _ = check_table(X)
    if isinstance(max_categories, bool) or not isinstance(max_categories, (int, np.integer)) \
            or max_categories < 1:
        raise ValueError(f"max_categories must be an int >= 1, got {max_categories!r}.")
    if n_bins is not None and (isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer))
                               or n_bins < 2):
        raise ValueError(f"n_bins must be None or an int >= 2, got {n_bins!r}.")
    warnings.warn(
        "describe_domain read the bounds and category lists of every column from X "
        "without privacy protection. Declare them only if they are public (a public "
        "table, a codebook, documented ranges); edit out anything known only from "
        "private data.", PrivacyWarning, stacklevel=2)
    return {name: _describe_column(frame[name], n_bins, max_categories)
            for name in frame.columns}


def _describe_column(series: pd.Series, n_bins: int | None, max_categories: int) -> dict:
    kind = column_kind(series)
    missing = can_hold_missing(series)
    if kind == "categorical":
        counts = series.astype(object).value_counts(dropna=True)
        top = sorted((_plain(v) for v in counts.index[:max_categories]), key=str)
        if pd.api.types.is_bool_dtype(series.dtype):
            top = [False, True]
        return {"categories": top, "other": len(counts) > len(top), "missing": missing}
    present = series.dropna()
    if present.empty:  # nothing to describe: only a missing code (and "other")
        return {"categories": [], "other": True, "missing": True}
    entry: dict[str, Any] = {"kind": "numeric"}
    if kind == "datetime":
        entry["bounds"] = [present.min().isoformat(), present.max().isoformat()]
        entry["integer"] = False
    else:
        values = as_numbers(present)
        integer = is_integer(series) or bool(np.all(values == np.rint(values)))
        cast = int if integer else float
        entry["bounds"] = [cast(values.min()), cast(values.max())]
        entry["integer"] = integer
        # a per-integer column gives every integer an exact code already; an
        # entry with its own n_bins is binned (resolution "bins")
        per_integer = n_bins is None and _per_integer(*entry["bounds"], integer, "auto")
        points = [] if per_integer else _point_masses(values)
        if points:
            entry["points"] = [cast(v) for v in points]
    if entry["bounds"][0] == entry["bounds"][1]:
        low = entry["bounds"][0]
        entry["bounds"] = [low, low + 1] if kind != "datetime" else \
            [low, (pd.Timestamp(low) + pd.Timedelta(days=1)).isoformat()]
    entry["missing"] = missing
    if n_bins is not None:
        entry["n_bins"] = int(n_bins)
    return entry


#: A numeric value holding at least this share of a column's present rows is
#: proposed as a point mass (``"points"``), e.g. the zeros of money columns.
POINT_MASS_SHARE = 0.1

#: At most this many point masses are proposed per column.
MAX_POINT_MASSES = 3


def _point_masses(values: np.ndarray) -> list:
    """Values that hold a large share of the rows (zero-inflated columns), sorted."""
    distinct, counts = np.unique(values, return_counts=True)
    if distinct.size <= 2:  # a binary or constant column needs no point masses
        return []
    heavy = np.flatnonzero(counts >= POINT_MASS_SHARE * values.size)
    heavy = heavy[np.argsort(-counts[heavy], kind="stable")][:MAX_POINT_MASSES]
    return sorted(float(distinct[i]) for i in heavy)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python scalar that ``json`` writes."""
    return value.item() if isinstance(value, np.generic) else value
