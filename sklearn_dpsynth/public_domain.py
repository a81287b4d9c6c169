"""Domain declarations from tables that are not private, or from what users know.

* :func:`domain_from_public_data` builds a declaration from a *public*
  table (an older release, a public split) at no privacy cost;
* :func:`describe_domain` describes any table into an editable,
  JSON-serialisable declaration for a person to review: it reads the table,
  so it raises a :class:`~sklearn_dpsynth.exceptions.PrivacyWarning`.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ._column_kinds import DATE_PATTERN, NUMBER_PATTERN, in_ns_range
from ._domain_learning import can_hold_missing, column_kind, is_integer
from ._input import as_numbers, check_table
from .domain import is_per_integer, numeric_edges
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
    """Draft an editable, JSON-serialisable domain declaration of a table.

    The draft is meant to be *edited* (to what is documented publicly) and
    then given back as ``domain=``.  Every column gets one entry:

    * numeric columns ``{"kind": "numeric", "bounds": [low, high],
      "integer": ..., "note": ...}``: the bounds are the data's range
      rounded *outward* to round values (to two significant digits of the
      range's width, so ``[17, 90]`` stays and ``[12285, 1484705]`` becomes
      ``[0, 1500000]``), and the note says they came from the data.  Values
      holding at least ``POINT_MASS_SHARE`` (10%) of the rows, such as the
      zeros of a money column, are proposed as exact ``"points"``; a
      non-integer column of at most ``DRAFT_BINS`` (32, the default number
      of bins; ``n_bins`` when given) values, each held by at least
      ``RARE_CATEGORY_ROWS`` (5) rows (rates coded as 0, 0.25, 0.5, ...),
      is drafted as ``{"categories": [...], "other": false,
      "note": ...}`` of its values instead, so that they stay exact;
      heavy-tailed columns (non-negative, and spanning at least
      ``LOG_SCALE_DECADES`` orders of magnitude or zero-inflated) get
      ``"scale": "log"`` where log bins spread their values (other than the
      points) over more bins than linear ones, else ``"scale": "linear"``;
    * date-time columns ``{"kind": "datetime", "bounds": [first, last],
      "unit": ..., "tz": ...}``: ``unit`` is the coarsest of year, month,
      day, hour, minute, second on whose grid every value lies (monthly
      data gives ``"month"``), the bounds are written at that unit, and
      ``tz`` names the time zone of time-zone-aware values;
    * categorical columns ``{"categories": [...], "other": ...}`` with at
      most ``max_categories`` of the most frequent values, except
      identifier-like columns (at least ``IDENTIFIER_MIN_DISTINCT`` values,
      nearly all distinct), free-text columns (long values, many distinct)
      and long tails (more than ``max_categories`` values, the listed ones
      holding less than half the rows): those list **no value**, as
      ``{"kind": "category", "categories": [], "other": True, "note": ...}``
      (every value ``"<other>"``), since listing them would copy identifiers,
      sentences or rare values into every synthetic table, and learning
      them privately from a large table would still release its most
      frequent identifiers.  Drop such a column, or declare its public
      categories.

    Text columns (as read from a CSV file) are read as numbers when every
    present value is a number, and as date-times when every present value
    is an ISO 8601 date (the forms ``fit`` reads); codes with a
    leading zero (``"02139"``) stay text.  ``"missing": true`` is set only
    on columns that hold a missing value.

    **This reads the table: it is not differentially private**, and it
    raises a :class:`~sklearn_dpsynth.exceptions.PrivacyWarning`.  A domain
    declared with ``domain=`` is treated as public knowledge, so what it
    holds must be public: use this helper on a public table (a public
    sample, an older release), or on the private table only to *draft* a
    declaration that you then edit to what is documented publicly (a
    schema, a codebook, a questionnaire's answer options, legal ranges such
    as ages 0-120), removing anything that exists only in the private data.
    Passing the output for a private table unedited copies its (rounded)
    ranges and category lists -- rare categories included -- into every
    model and release: that is a privacy leak, not a declaration.

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
    >>> public = pd.DataFrame({"age": [23, 45, 67], "sex": ["F", "M", "F"],
    ...                        "month": ["2013-01-01", "2013-03-01", None]})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     declaration = describe_domain(public)
    >>> declaration["age"]["bounds"], declaration["sex"]
    ([23, 67], {'categories': ['F', 'M'], 'other': False})
    >>> declaration["month"]
    {'kind': 'datetime', 'bounds': ['2013-01-01', '2013-03-01'], 'unit': 'month', 'missing': True}
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


#: A numeric value holding at least this share of a column's present rows is
#: proposed as a point mass (``"points"``), e.g. the zeros of money columns.
POINT_MASS_SHARE = 0.1

#: At most this many point masses are proposed per column.
MAX_POINT_MASSES = 3

#: The bins a draft is judged with when ``n_bins`` is not given (the estimators'
#: default): a non-integer column with at most this many distinct values, each
#: held by at least ``RARE_CATEGORY_ROWS`` rows, is drafted as categories (its
#: exact values), and a heavy-tailed column's scale is chosen on this many bins.
DRAFT_BINS = 32

#: In a table of at least ``RARE_TABLE_ROWS`` rows, a category value held by fewer
#: than ``RARE_CATEGORY_ROWS`` rows is not listed in the draft (it maps to
#: ``"<other>"``): listing it would copy a fact about those few rows into every
#: synthetic table fitted with the unedited draft.
RARE_CATEGORY_ROWS = 5
RARE_TABLE_ROWS = 1000

#: A text column with at least this many distinct values, making up at least
#: ``IDENTIFIER_SHARE`` of its present values, is identifier-like.
IDENTIFIER_MIN_DISTINCT = 20
IDENTIFIER_SHARE = 0.9

#: A column with more than ``max_categories`` values is not listed when its
#: ``max_categories`` most frequent values hold less than this share of its rows.
MIN_LISTED_SHARE = 0.5

#: A text column with at least ``IDENTIFIER_MIN_DISTINCT`` distinct values
#: whose median value has this many words (or characters) is free text.
FREE_TEXT_WORDS = 4
FREE_TEXT_CHARACTERS = 40

#: A non-negative column whose largest value is at least ``10**LOG_SCALE_DECADES``
#: times its smallest positive one is proposed on a log scale.
LOG_SCALE_DECADES = 3

#: Units of a date-time draft, coarsest first, with the ISO format of its bounds.
DATETIME_UNITS = {"year": "%Y-%m-%d", "month": "%Y-%m-%d", "day": "%Y-%m-%d",
                  "hour": "%Y-%m-%dT%H:%M", "minute": "%Y-%m-%dT%H:%M",
                  "second": "%Y-%m-%dT%H:%M:%S"}


def _describe_column(series: pd.Series, n_bins: int | None, max_categories: int) -> dict:
    series = typed_text(series)
    present = series.dropna()
    if present.empty:  # nothing to describe: only a missing code (and "other")
        return {"categories": [], "other": True, "missing": True}
    kind = column_kind(series)
    if kind == "datetime":
        entry = _describe_datetime(present)
    elif kind == "numeric":
        entry = _describe_numeric(series, present, n_bins)
    else:
        entry = _describe_categories(series, present, max_categories)
    if series.isna().any():
        entry["missing"] = True
    if n_bins is not None and entry.get("kind") in ("numeric", "datetime"):
        entry["n_bins"] = int(n_bins)
    return entry


# ------------------------------------------------------------ text columns
def typed_text(series: pd.Series) -> pd.Series:
    """A text column as numbers or date-times when every present value is one.

    Columns that are not text, and text columns of anything else, are
    returned as they are.  Numbers win over dates (``"2013"`` is a number);
    codes with a leading zero (``"02139"``) stay text.

    Parameters
    ----------
    series : pandas.Series
        A column.

    Returns
    -------
    pandas.Series
        Float values, date-times (time-zone-aware when the text carries an
        offset), or ``series`` itself.
    """
    if not (pd.api.types.is_object_dtype(series.dtype)
            or pd.api.types.is_string_dtype(series.dtype)):
        return series
    present = series.dropna()
    if present.empty or not all(isinstance(v, str) for v in present):
        return series
    text = present.str.strip()
    numbers = _text_as_numbers(text)
    if numbers is not None:
        out = pd.Series(np.nan, index=series.index, name=series.name)
        out[present.index] = numbers
        return out
    dates = _text_as_dates(text)
    if dates is not None:
        return dates.reindex(series.index).rename(series.name)
    return series


def _text_as_numbers(text: pd.Series) -> pd.Series | None:
    if text.str.match(r"^[+-]?0\d").any():  # a code such as a postcode
        return None
    if not text.str.fullmatch(NUMBER_PATTERN).all():  # what fit reads as a number
        return None
    numbers = text.astype(float)  # past the largest float: inf, not an OverflowError
    return numbers if np.isfinite(numbers.to_numpy()).all() else None


def _text_as_dates(text: pd.Series) -> pd.Series | None:
    # ISO 8601 only, as fit reads dates: a draft of another format would be
    # refused by the fit it is given to
    if not text.str.fullmatch(DATE_PATTERN).all():
        return None
    for utc in (False, True):  # mixed offsets are read in UTC
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                stamps = pd.to_datetime(text, format="ISO8601", utc=utc)
        except (ValueError, TypeError, OverflowError):
            continue
        # a date fit cannot hold (outside datetime64[ns]) would be refused there
        return stamps if in_ns_range(stamps).notna().all() else None
    return None


# ------------------------------------------------------------ categories
def _describe_categories(series: pd.Series, present: pd.Series, max_categories: int) -> dict:
    if pd.api.types.is_bool_dtype(series.dtype):
        return {"categories": [False, True], "other": False}
    counts = present.astype(object).value_counts()
    note = _unlisted_note(present, counts, max_categories)
    if note is not None:  # "<other>" only: no value listed, none learned from the data
        return {"kind": "category", "categories": [], "other": True, "note": note}
    listed = counts.iloc[:max_categories]
    rare = listed < RARE_CATEGORY_ROWS
    if rare.any() and len(present) >= RARE_TABLE_ROWS:
        # a value of a few rows in a large table is a fact about those rows: the
        # draft leaves it to "<other>" instead of copying it into every fit
        listed = listed[~rare]
    top = sorted((_plain(v) for v in listed.index), key=str)
    entry = {"categories": top, "other": len(counts) > len(top)}
    if len(listed) < min(len(counts), max_categories):
        entry["note"] = (f"{int(rare.sum())} values of fewer than {RARE_CATEGORY_ROWS} rows "
                         "each are left to '<other>'; list them only if they are public")
    return entry


def _unlisted_note(present: pd.Series, counts: pd.Series, max_categories: int) -> str | None:
    """Why a column's values must not be listed (free text, identifiers, a long
    tail of rare values), or None."""
    n_distinct, n_rows = len(counts), len(present)
    if n_distinct < IDENTIFIER_MIN_DISTINCT:
        return None
    advice = ("drafted as '<other>' only (no value listed, none learned): drop this column, "
              "or declare its public categories to model them")
    text = present.astype(str)
    words = float(text.str.split().str.len().median())
    characters = float(text.str.len().median())
    if words >= FREE_TEXT_WORDS or characters >= FREE_TEXT_CHARACTERS:
        return (f"free text: {n_distinct} distinct values in {n_rows} rows, a median "
                f"of {words:.0f} words; {advice}")
    if n_distinct >= IDENTIFIER_SHARE * n_rows:
        return f"identifier-like: {n_distinct} distinct values in {n_rows} rows; {advice}"
    covered = float(counts.iloc[:max_categories].sum()) / n_rows
    if n_distinct > max_categories and covered < MIN_LISTED_SHARE:
        return (f"high-cardinality: {n_distinct} distinct values in {n_rows} rows, the "
                f"{max_categories} most frequent hold {covered:.0%} of them; {advice}")
    return None


# ------------------------------------------------------------ date-times
def _describe_datetime(present: pd.Series) -> dict:
    tz = present.dt.tz
    unit = datetime_unit(present)
    stamps = [present.min(), present.max()]
    if stamps[0] == stamps[1]:
        stamps[1] = stamps[0] + (pd.DateOffset(**{f"{unit}s": 1}) if unit is not None
                                 else pd.Timedelta(seconds=1))
    if tz is not None:
        stamps = [s.tz_localize(None) for s in stamps]
    date_format = DATETIME_UNITS.get(unit)
    entry: dict[str, Any] = {"kind": "datetime", "bounds": [
        s.strftime(date_format) if date_format else s.isoformat() for s in stamps]}
    if unit is not None:
        entry["unit"] = unit
    if tz is not None:
        entry["tz"] = str(tz)
    return entry


def datetime_unit(stamps: pd.Series) -> str | None:
    """The coarsest unit on whose grid every date-time lies, in local time.

    Parameters
    ----------
    stamps : pandas.Series
        Present date-times (naive or time-zone-aware).

    Returns
    -------
    str or None
        One of ``DATETIME_UNITS`` (``"year"`` ... ``"second"``), or None for
        values finer than a second.
    """
    parts = stamps.dt
    off_grid = {
        "second": (parts.microsecond != 0) | (parts.nanosecond != 0),
        "minute": parts.second != 0,
        "hour": parts.minute != 0,
        "day": parts.hour != 0,
        "month": parts.day != 1,
        "year": parts.month != 1,
    }
    unit = None
    for name, outside in off_grid.items():  # finest first
        if outside.any():
            return unit
        unit = name
    return unit


# ------------------------------------------------------------ numbers
def _describe_numeric(series: pd.Series, present: pd.Series, n_bins: int | None) -> dict:
    values = as_numbers(present)
    infinite = ~np.isfinite(values)
    if infinite.all():
        raise ValueError(f"column {series.name!r} holds only infinite values: declare its "
                         "bounds, or drop it.")
    if infinite.any():  # bounds of the finite values; the note says why the rest clip
        entry = _describe_numeric(series, present[~infinite], n_bins)
        advice = ("are no category (allow other=True" if "categories" in entry
                  else "lie outside the bounds (declare clip=True")
        entry["note"] = (entry.get("note", "") + f"; infinite values {advice}, or replace "
                         "them)").lstrip("; ")
        return entry
    integer = is_integer(series) or bool(np.all(values == np.rint(values)))
    if values.min() == values.max():
        return _constant_numeric(float(values.min()), integer)
    bins = n_bins or DRAFT_BINS
    discrete = None if integer else _discrete_values(values, bins)
    if discrete is not None:
        return {"categories": discrete, "other": False,
                "note": (f"few values: {len(discrete)} distinct, each in at least "
                         f"{RARE_CATEGORY_ROWS} rows, drafted as categories (exact values); "
                         "declare numeric bounds instead if other values can occur")}
    low, high = outward_round(float(values.min()), float(values.max()), integer)
    cast = int if integer else float
    entry: dict[str, Any] = {"kind": "numeric", "bounds": [cast(low), cast(high)],
                             "integer": integer}
    # a per-integer column gives every integer an exact code already; an
    # entry with its own n_bins is binned (resolution "bins")
    per_integer = n_bins is None and is_per_integer(low, high, integer, "auto")
    if not per_integer:
        points = _point_masses(values)
        if points:
            entry["points"] = [cast(v) for v in points]
        if _heavy_tailed(values):
            entry["scale"] = _spreading_scale(values, points, low, high, integer, bins)
    entry["note"] = ("bounds: the data's range rounded outward; replace them with the "
                     "documented range")
    return entry


def _constant_numeric(value: float, integer: bool) -> dict:
    """The draft of a column whose present values are all ``value``: its one
    integer (bounds half a unit either side, so the column has one code and
    samples only ``value``), or for a float a point mass at ``value`` inside
    bounds rounded outward (the rest of the range holds only noise)."""
    note = ("constant: every present value is the same; a synthetic column tells nothing "
            "about it: drop the column, or replace the bounds with the documented range")
    if integer:
        return {"kind": "numeric", "bounds": [value - 0.5, value + 0.5], "integer": True,
                "note": note}
    low, high = outward_round(value, value)
    return {"kind": "numeric", "bounds": [low, high], "integer": False, "points": [value],
            "note": note}


def outward_round(low: float, high: float, integer: bool = False) -> tuple[float, float]:
    """Round a range outward to two significant digits of its width.

    Parameters
    ----------
    low, high : float
        The range (``low <= high``).
    integer : bool, default=False
        Whether the values are integers (the rounding step is then at
        least 1).

    Returns
    -------
    (float, float)
        ``(low', high')`` with ``low' <= low``, ``high' >= high``, both
        multiples of the step ``10**(floor(log10(high - low)) - 1)``; a
        constant range becomes ``(low, low + 1)``.
    """
    if high == low:
        return low, low + 1.0
    exponent = math.floor(math.log10(high - low)) - 1
    if integer:
        exponent = max(exponent, 0)
    step = 10.0 ** exponent
    digits = max(0, -exponent)
    rounded_low = round(math.floor(low / step) * step, digits)
    rounded_high = round(math.ceil(high / step) * step, digits)
    if rounded_low > low:  # float error in the division
        rounded_low = round(rounded_low - step, digits)
    if rounded_high < high:
        rounded_high = round(rounded_high + step, digits)
    return rounded_low, rounded_high


def _heavy_tailed(values: np.ndarray) -> bool:
    """Non-negative and spanning many decades, or zero-inflated."""
    if values.min() < 0 or np.unique(values).size <= 2:
        return False
    positive = values[values > 0]
    if positive.size == 0:
        return False
    zero_share = 1.0 - positive.size / values.size
    return bool(zero_share >= POINT_MASS_SHARE
                or positive.max() >= 10.0 ** LOG_SCALE_DECADES * positive.min())


def _discrete_values(values: np.ndarray, max_values: int) -> list | None:
    """The sorted values of a non-integer column that takes only a few values
    (at most ``max_values``, each held by at least ``RARE_CATEGORY_ROWS``
    rows, such as rates coded as 0, 0.25, 0.5), or None.

    Binned, such a column would spread the values that are not point masses
    over their bins; as categories it keeps every value exact, in no more
    codes than the bins.  A value of few rows would be a fact about those
    rows, so a column holding one is left binned.
    """
    distinct, counts = np.unique(values, return_counts=True)
    if distinct.size > max_values or counts.min() < RARE_CATEGORY_ROWS:
        return None
    return [float(v) for v in distinct]


def _spreading_scale(values: np.ndarray, points: list, low: float, high: float,
                     integer: bool, n_bins: int) -> str:
    """``"log"`` or ``"linear"``: the bin spacing under which the values that are
    no point mass spread over more of the bins (the higher entropy of their
    histogram; ``"linear"`` on a tie).

    A zero-inflated column is not heavy-tailed when its positive values span
    less than a decade: log bins over ``[0, 7.2]`` (from 0.0072 up) left 5
    of 32 bins to the values of ``randhie``'s ``lpi`` (2.5 to 7.2, logs
    already), linear bins give them 21; the point mass at 0 holds the zeros
    either way.
    """
    rest = values[~np.isin(values, points)]
    if rest.size == 0:
        return "linear"
    spread = {}
    for scale in ("linear", "log"):
        edges = numeric_edges(low, high, n_bins, integer=integer, resolution="bins",
                              scale=scale)
        counts = np.histogram(np.clip(rest, edges[0], edges[-1]), bins=edges)[0]
        shares = counts[counts > 0] / rest.size
        spread[scale] = float(-(shares * np.log(shares)).sum())
    return "log" if spread["log"] > spread["linear"] else "linear"


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
