"""Public domains: how each column maps to integer codes and back.

A :class:`Domain` is an ordered collection of :class:`ColumnSpec`, one per
column.  It is the *public* description of the table that every synthesizer
models: a column is either

* ``"codes"`` -- already-encoded integers ``0..k-1`` (the format of the
  ``adult-domain.json`` files), declared as an ``int`` ``k``;
* ``"categorical"`` -- a list of categories, declared as a ``list``;
* ``"numeric"`` -- a number with public bounds, declared as a ``(low, high)``
  tuple and cut into bins (uniform by default, or explicit ``edges``); an
  integer column whose range holds at most ``INTEGER_RESOLUTION_MAX`` (100)
  integers gets one code per integer instead, and declared ``points`` (such
  as 0 in a zero-inflated amount) get codes of their own.

Every spec may also reserve a code for missing values (``missing=True``) and
a categorical spec may reserve an ``"other"`` code for values outside its
list (used when categories are learned privately and rare ones merged).

Nothing here looks at data: a domain is either declared by the user, learned
under differential privacy, or read from data with a
:class:`~sklearn_dpsynth.exceptions.PrivacyWarning` (see
:mod:`sklearn_dpsynth.preprocessing`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["ColumnSpec", "Domain", "OTHER", "BIN_VALUES", "INTEGER_RESOLUTION_MAX",
           "LOG_SCALE_SPAN", "numeric_edges", "numeric_scale", "zero_point", "unit_edges",
           "DECLARED_KINDS", "DATETIME_UNITS", "declared_kind"]

#: Label that a merged "other" category decodes to.
OTHER = "<other>"

#: Ways of placing a decoded numeric value in its bin (``bin_value``).
BIN_VALUES = ("midpoint", "uniform")

#: An integer column whose bounds hold at most this many integers gets one
#: code per integer (``resolution="auto"``, the default); wider ranges get
#: ``n_bins`` uniform bins.  On Adult with MST at epsilon=1
#: (``benchmarks/decoding.py``) per-integer codes for ``hr_per_week`` (99
#: values) halve the 2-way TVD on the original values, while per-integer
#: ``capital_loss`` (4,501 values) gains nothing; 100 keeps a pair of two
#: such columns within AIM's default ``max_cells`` (10,000) and the
#: transformers' vocabularies small.  Wider ranges can opt in with
#: ``"resolution": "integer"`` (on Texas, per-day ``LENGTH_OF_STAY`` over its
#: public bounds 1..9999 lowers MST's 2-way TVD from 0.32 to 0.24).
INTEGER_RESOLUTION_MAX = 100

_RESOLUTIONS = ("auto", "integer", "bins")

#: Spacing of the bins of a numeric column (``"scale"`` of a declaration).
_SCALES = ("auto", "linear", "log")

#: ``scale="auto"`` spaces the bins of a range ``[low, high]`` geometrically
#: when ``low >= 0`` and ``high >= 10**LOG_SCALE_SPAN * max(low, 1)``.  On
#: Texas' money and length-of-stay columns with MST at epsilon=1
#: (``benchmarks/domain_learning.py heavy-tails``) uniform bins over their
#: public bounds put nearly every row in the first bin.
LOG_SCALE_SPAN = 3

_KINDS = ("codes", "categorical", "numeric")

#: What a declaration's ``"kind"`` may say about a column's values: the spec
#: kinds above, and the value kinds that tell how text is read (``"numeric"``,
#: ``"integer"``, ``"datetime"``, ``"timedelta"``, ``"category"``).
DECLARED_KINDS = ("numeric", "integer", "datetime", "timedelta", "category", "categorical",
                  "codes")

#: Resolutions of a datetime column: decoded values are floored to the unit.
DATETIME_UNITS = ("year", "month", "day", "hour", "minute", "second")

#: What a numeric spec's numbers stand for (datetimes and durations in seconds).
_VALUE_TYPES = ("number", "datetime", "timedelta")

#: Keys of a declaration that say nothing about the values' range (notes,
#: and what the value kind alone decides).
_KIND_ONLY_KEYS = frozenset({"kind", "unit", "tz", "note", "missing", "integer", "n_bins",
                             "resolution", "clip", "scale"})


def code_dtype(size: int) -> np.dtype:
    """The smallest unsigned integer dtype that holds the codes ``0..size-1``.

    Parameters
    ----------
    size : int
        Number of codes (``>= 1``).

    Returns
    -------
    numpy.dtype
        ``uint8``, ``uint16``, ``uint32`` or ``uint64``.
    """
    for dtype in (np.uint8, np.uint16, np.uint32):
        if size - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


def _is_missing_scalar(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _is_missing(values: np.ndarray) -> np.ndarray:
    return np.asarray(pd.isna(values), dtype=bool)


@dataclass
class ColumnSpec:
    """Public description of one column.

    Parameters
    ----------
    name : hashable
        Column name (an ``int`` position for array input).
    kind : {"codes", "categorical", "numeric"}
        How values map to codes.
    n_codes : int, optional
        Number of codes of a ``"codes"`` column.
    categories : list, optional
        Categories of a ``"categorical"`` column, in code order.
    edges : ndarray, optional
        Increasing bin edges of a ``"numeric"`` column (``n_bins + 1``).
    integer : bool, default=False
        Whether decoded numeric values are rounded to integers.
    missing : bool, default=False
        Whether the last code stands for a missing value.
    other : bool, default=False
        Whether a categorical column has a code for values outside
        ``categories`` (it follows the categories, before ``missing``).
    clip : bool, default=False
        Whether numeric values outside the edges are clipped into range
        (used for privately learned bounds); otherwise they are an error.
    points : array-like of float, optional
        Values of a ``"numeric"`` column that get a code of their own (point
        masses, e.g. the 0 of a zero-inflated amount): a value equal to a
        point encodes to the point's code and that code decodes to the
        point exactly.  Point codes follow the bin codes (code
        ``n_bins + i`` for ``points[i]``), before ``missing``.  Points must
        be distinct and lie within the edges.
    value_type : {"number", "datetime", "timedelta"}, default="number"
        What the numbers of a ``"numeric"`` column stand for: datetimes are
        seconds since 1970-01-01 UTC, durations are seconds.  Messages show
        datetime bounds as ISO dates.
    unit : {"year", "month", "day", "hour", "minute", "second"}, optional
        Resolution of a datetime column: decoded values are starts of the
        unit (in ``tz``), e.g. a ``"month"`` column decodes to
        first-of-month midnights.  When every edge is a unit start (see
        :func:`~sklearn_dpsynth.domain.unit_edges`) a bin decodes to one of
        its unit starts (drawn uniformly, or the middle one for
        ``"midpoint"``); otherwise values placed in their bin are floored
        to the start of their unit.
    tz : str, optional
        IANA time zone of a datetime column (its units are local to it);
        None for naive datetimes.
    """

    name: Hashable
    kind: str
    n_codes: int | None = None
    categories: list | None = None
    edges: np.ndarray | None = None
    integer: bool = False
    missing: bool = False
    other: bool = False
    clip: bool = False
    points: np.ndarray | None = None
    value_type: str = "number"
    unit: str | None = None
    tz: str | None = None
    _lookup: dict = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"column {self.name!r}: kind must be one of {_KINDS}.")
        if self.kind == "codes":
            if self.n_codes is None or int(self.n_codes) < 1:
                raise ValueError(f"column {self.name!r}: n_codes must be a positive int.")
            self.n_codes = int(self.n_codes)
        elif self.kind == "categorical":
            self._check_categories()
        else:
            self._check_edges()
        self._check_value_type()

    def _check_value_type(self) -> None:
        if self.value_type not in _VALUE_TYPES:
            raise ValueError(f"column {self.name!r}: value_type must be one of {_VALUE_TYPES}.")
        if self.value_type != "datetime" and (self.unit is not None or self.tz is not None):
            raise ValueError(f"column {self.name!r}: 'unit' and 'tz' apply to datetime columns "
                             "only.")
        if self.unit is not None and self.unit not in DATETIME_UNITS:
            raise ValueError(f"column {self.name!r}: unit must be one of {DATETIME_UNITS}, got "
                             f"{self.unit!r}.")
        if self.tz is not None:
            _check_zone(self.name, self.tz)

    def _check_categories(self) -> None:
        if self.categories is None:
            raise ValueError(f"column {self.name!r}: categories are required.")
        cats = [c for c in self.categories if not _is_missing_scalar(c)]
        if len(cats) < len(self.categories):
            self.missing = True
        if not cats and not self.missing and not self.other:
            raise ValueError(f"column {self.name!r}: the category list is empty.")
        if len(set(cats)) != len(cats):
            raise ValueError(f"column {self.name!r}: categories contain duplicates.")
        self.categories = list(cats)

    def _check_edges(self) -> None:
        if self.edges is None:
            raise ValueError(f"column {self.name!r}: numeric columns need bin edges.")
        edges = np.asarray(self.edges, dtype=float)
        if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)):
            raise ValueError(f"column {self.name!r}: edges must be >= 2 finite numbers.")
        if np.any(np.diff(edges) <= 0):
            raise ValueError(f"column {self.name!r}: edges must be strictly increasing.")
        self.edges = edges
        self.points = self._checked_points(edges)

    def _checked_points(self, edges: np.ndarray) -> np.ndarray:
        if self.points is None:
            return np.empty(0)
        try:
            points = np.asarray(self.points, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError(f"column {self.name!r}: points must be numbers.") from None
        if not np.all(np.isfinite(points)):
            raise ValueError(f"column {self.name!r}: points must be finite.")
        if np.unique(points).size != points.size:
            raise ValueError(f"column {self.name!r}: points contain duplicates.")
        if np.any((points < edges[0]) | (points > edges[-1])):
            raise ValueError(f"column {self.name!r}: points must lie within the bounds "
                             f"[{edges[0]:g}, {edges[-1]:g}].")
        return points

    # ------------------------------------------------------------------ sizes
    @property
    def n_values(self) -> int:
        """Number of codes for present (non-missing) values."""
        if self.kind == "codes":
            return self.n_codes
        if self.kind == "categorical":
            return len(self.categories) + int(self.other)
        return self.n_bins + len(self.points)

    @property
    def n_bins(self) -> int:
        """Number of bins of a numeric column (0 for other kinds)."""
        return len(self.edges) - 1 if self.kind == "numeric" else 0

    @property
    def size(self) -> int:
        """Total number of codes, including the missing-value code."""
        return self.n_values + int(self.missing)

    @property
    def missing_code(self) -> int | None:
        """Code of a missing value, or None."""
        return self.n_values if self.missing else None

    @property
    def other_code(self) -> int | None:
        """Code of values outside the category list, or None."""
        return len(self.categories) if self.kind == "categorical" and self.other else None

    # --------------------------------------------------------------- encoding
    def encode(self, values: Any) -> np.ndarray:
        """Map raw values of this column to integer codes.

        Parameters
        ----------
        values : array-like of shape (n_samples,)

        Returns
        -------
        codes : ndarray of int64

        Raises
        ------
        ValueError
            If a value lies outside the declared domain (and the spec has no
            ``other`` code or clipping), naming the column.
        """
        values = np.asarray(values, dtype=object if self.kind == "categorical" else None)
        missing = _is_missing(values)
        if missing.any() and not self.missing:
            raise ValueError(
                f"column {self.name!r} contains missing values but its domain does not "
                "allow them; declare it with missing=True (or include None among the "
                "categories)."
            )
        codes = np.empty(values.shape[0], dtype=np.int64)
        present = ~missing
        codes[present] = getattr(self, f"_encode_{self.kind}")(values[present])
        if self.missing:
            codes[missing] = self.missing_code
        return codes

    def encode_series(self, series: pd.Series) -> np.ndarray:
        """:meth:`encode` of a pandas Series, without a Python object per row.

        A categorical column is factorized (its distinct values found in
        the Series' own storage) and only the distinct values go through
        the category lookup of :meth:`encode`, so the codes are the same;
        any value that :meth:`encode` would reject is rejected by it, with
        its message.  Other kinds are encoded by :meth:`encode`.

        Parameters
        ----------
        series : pandas.Series

        Returns
        -------
        codes : ndarray of int64
        """
        if self.kind != "categorical":
            return self.encode(series.to_numpy())
        row_codes, distinct = pd.factorize(series, use_na_sentinel=True)
        if self._lookup is None:
            self._lookup = {self._key(c): i for i, c in enumerate(self.categories)}
        fallback = -1 if self.other_code is None else self.other_code
        missing = self.missing_code if self.missing else -1
        table = np.array([self._lookup.get(self._key(v), fallback) for v in distinct]
                         + [missing], dtype=np.int64)
        codes = table[row_codes]  # the sentinel -1 reads the last entry: missing
        if (codes < 0).any():
            return self.encode(series.to_numpy())  # raises encode's own error
        return codes

    def _encode_codes(self, values: np.ndarray) -> np.ndarray:
        numeric = self._as_float(values)
        rounded = np.rint(numeric)
        bad = (rounded != numeric) | (rounded < 0) | (rounded >= self.n_codes)
        if bad.any():
            raise ValueError(
                f"column {self.name!r}: values must be integer codes in 0..{self.n_codes - 1}; "
                f"found other values {self._examples(bad)}."
            )
        return rounded.astype(np.int64)

    def _encode_categorical(self, values: np.ndarray) -> np.ndarray:
        if self._lookup is None:
            self._lookup = {self._key(c): i for i, c in enumerate(self.categories)}
        lookup = self._lookup
        fallback = -1 if self.other_code is None else self.other_code
        codes = np.fromiter((lookup.get(self._key(v), fallback) for v in values),
                            dtype=np.int64, count=len(values))
        if (codes < 0).any():
            raise ValueError(
                f"column {self.name!r}: values outside the declared categories "
                f"{self._examples(codes < 0)}; declare them, or allow other=True."
            )
        return codes

    @staticmethod
    def _key(value: Any) -> Any:
        """Normalise numpy scalars so that 1, 1.0 and np.int64(1) match."""
        if isinstance(value, np.generic):
            return value.item()
        return value

    def _encode_numeric(self, values: np.ndarray) -> np.ndarray:
        numeric = self._as_float(values)
        low, high = self.edges[0], self.edges[-1]
        outside = (numeric < low) | (numeric > high)
        if outside.any() and not self.clip:
            raise ValueError(
                f"column {self.name!r}: values outside the declared bounds "
                f"{self._shown_bounds(values)} {self._examples(outside)}; declare wider bounds "
                "or clip=True."
            )
        numeric = np.clip(numeric, low, high)
        codes = np.searchsorted(self.edges, numeric, side="right") - 1
        codes = np.clip(codes, 0, self.n_bins - 1).astype(np.int64)
        for i, point in enumerate(self.points):
            codes[numeric == point] = self.n_bins + i
        return codes

    def _shown_bounds(self, values: np.ndarray | None = None) -> str:
        """The bounds for a message: ISO dates for a datetime column, seconds as
        durations for a timedelta one, numbers otherwise (all public)."""
        low, high = self.edges[0], self.edges[-1]
        is_datetime = self.value_type == "datetime" or (
            values is not None and (values.dtype.kind == "M" or (
                values.dtype == object and _all_datetimes(values))))
        if is_datetime:
            return f"[{_iso(low, self.tz)}, {_iso(high, self.tz)}]"
        if self.value_type == "timedelta" or (values is not None and values.dtype.kind == "m"):
            return f"[{pd.Timedelta(seconds=low)}, {pd.Timedelta(seconds=high)}]"
        return f"[{low:g}, {high:g}]"

    def _as_float(self, values: np.ndarray) -> np.ndarray:
        """Present values as floats; datetimes as seconds since 1970-01-01 UTC,
        durations in seconds."""
        if values.dtype.kind == "m" or (values.dtype == object and _all_timedeltas(values)):
            return _timedeltas_as_seconds(values)
        if values.dtype.kind == "M" or (values.dtype == object and _all_datetimes(values)):
            try:
                return _datetimes_as_seconds(values)
            except (TypeError, ValueError):
                raise TypeError(f"column {self.name!r}: its datetimes mix time zones and "
                                "naive values; make them all tz-aware or all naive.") from None
        try:
            return np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
            raise TypeError(
                f"column {self.name!r} is declared {self.kind!r} but holds non-numeric "
                f"values {self._examples(numbers.isna().to_numpy())}."
            ) from None

    @staticmethod
    def _examples(bad: np.ndarray) -> str:
        """How many rows are at fault (never their values: they are private)."""
        count = int(np.count_nonzero(bad))
        return f"in {count} row{'s' if count != 1 else ''}"

    # --------------------------------------------------------------- decoding
    def decode(
        self,
        codes: np.ndarray,
        rng: np.random.Generator | None = None,
        bin_value: str = "midpoint",
    ) -> np.ndarray:
        """Map integer codes back to values of this column.

        Parameters
        ----------
        codes : ndarray of int
        rng : numpy.random.Generator, optional
            Needed when ``bin_value="uniform"``.
        bin_value : {"midpoint", "uniform"}, default="midpoint"
            Where in its bin a numeric code is placed: the bin's midpoint,
            or a uniform draw within the bin (among the bin's integers for
            an integer column).  Point codes decode to their point either
            way.

        Returns
        -------
        values : ndarray
            float for numeric columns (rounded when ``integer``), int64 for
            codes, object for categories; missing codes become NaN/None.
        """
        if bin_value not in BIN_VALUES:
            raise ValueError(f"bin_value must be one of {BIN_VALUES}, got {bin_value!r}.")
        if bin_value == "uniform" and rng is None and self.kind == "numeric":
            raise ValueError("bin_value='uniform' needs a random generator.")
        codes = np.asarray(codes, dtype=np.int64)
        if codes.size and (codes.min() < 0 or codes.max() >= self.size):
            raise ValueError(f"column {self.name!r}: codes outside 0..{self.size - 1}.")
        missing = codes == self.missing_code if self.missing else np.zeros(len(codes), bool)
        present = codes[~missing]
        if self.kind == "codes":
            out = np.full(len(codes), np.nan) if missing.any() else np.empty(len(codes), np.int64)
            out[~missing] = present
            return out
        if self.kind == "categorical":
            labels = np.array(list(self.categories) + ([OTHER] if self.other else []) + [None],
                              dtype=object)
            return labels[np.where(missing, len(labels) - 1, codes)]
        out = np.full(len(codes), np.nan)
        if self.unit is not None and _on_unit_starts(self.edges, self.unit, self.tz):
            out[~missing] = self._unit_values(present, rng, bin_value)
            return out
        out[~missing] = self._numeric_values(present, rng, bin_value)
        if self.unit is not None:
            out[~missing] = snap_seconds(out[~missing], self.unit, self.tz, self.edges[0])
        return out

    def _unit_values(self, codes: np.ndarray, rng, bin_value: str) -> np.ndarray:
        """Values of present codes of a datetime column whose edges are starts of its
        unit: a start of the unit among those of the bin, uniformly drawn
        (``"uniform"``) or the middle one (``"midpoint"``); points exactly."""
        is_point = codes >= self.n_bins
        values = np.empty(len(codes))
        values[is_point] = self.points[codes[is_point] - self.n_bins]
        bins = codes[~is_point]
        index = _wall_units(self.edges, self.unit, self.tz)
        first, count = index[bins], np.maximum(index[bins + 1] - index[bins], 1)
        if bin_value == "uniform":
            if rng is None:
                raise ValueError("bin_value='uniform' needs a random generator.")
            step = np.floor(rng.random(len(bins)) * count).astype(np.int64)
        else:
            step = (count - 1) // 2
        values[~is_point] = _unit_starts(first + np.minimum(step, count - 1), self.unit, self.tz)
        return values

    def _numeric_values(self, codes: np.ndarray, rng, bin_value: str) -> np.ndarray:
        """Values of present numeric codes: points exactly, bins by ``bin_value``."""
        is_point = codes >= self.n_bins
        values = np.empty(len(codes))
        values[is_point] = self.points[codes[is_point] - self.n_bins]
        values[~is_point] = self._bin_values(codes[~is_point], rng, bin_value)
        return values

    def _bin_values(self, codes: np.ndarray, rng, bin_value: str) -> np.ndarray:
        left, right = self.edges[codes], self.edges[codes + 1]
        midpoints = 0.5 * (left + right)
        if not self.integer:
            if bin_value == "midpoint":
                return midpoints
            return left + (right - left) * rng.random(len(codes))
        lo, hi = np.ceil(self.edges[0]), np.floor(self.edges[-1])
        rounded = np.clip(np.rint(midpoints), lo, max(lo, hi))
        if bin_value == "midpoint":
            return rounded
        return self._uniform_integers(codes, rounded, rng)

    def _integer_span(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """First and last integer of each bin (bins are ``[left, right)``, the last closed)."""
        left, right = self.edges[codes], self.edges[codes + 1]
        first = np.ceil(left)
        last = np.where(codes == self.n_bins - 1, np.floor(right), np.ceil(right) - 1)
        return first, last

    def _uniform_integers(self, codes, fallback, rng) -> np.ndarray:
        """A uniform draw among the integers of each bin (its rounded midpoint if none)."""
        first, last = self._integer_span(codes)
        has_integer = last >= first
        draws = first + np.floor(rng.random(len(codes)) * np.maximum(last - first + 1, 1))
        return np.where(has_integer, draws, fallback)

    # ---------------------------------------------------------------- density
    @property
    def log_widths(self) -> np.ndarray:
        """Log of the measure of every code: what turns code probabilities into densities.

        A bin of a float column has the log of its width; a bin of an
        integer column the log of the number of integers it holds (at
        least one); point, category, code, ``other`` and missing codes
        have 0 (they are probabilities).  ``log P(code) - log_widths[code]``
        is the log-density of a value of the code when the model spreads a
        bin's probability uniformly over it.

        Returns
        -------
        ndarray of float, shape (size,)
        """
        widths = np.zeros(self.size)
        if self.kind == "numeric":
            bins = np.arange(self.n_bins)
            if self.integer:
                first, last = self._integer_span(bins)
                widths[bins] = np.log(np.maximum(last - first + 1, 1))
            else:
                widths[bins] = np.log(np.diff(self.edges))
        return widths

    # ------------------------------------------------------------- describing
    def to_dict(self) -> dict:
        """A JSON-friendly declaration that :meth:`Domain.from_declaration` reads."""
        spec: dict[str, Any] = {"kind": self.kind, "missing": self.missing}
        if self.kind == "codes":
            spec["n_codes"] = self.n_codes
        elif self.kind == "categorical":
            spec.update(categories=list(self.categories), other=self.other)
        else:
            spec.update(edges=self.edges.tolist(), integer=self.integer, clip=self.clip)
            if len(self.points):
                spec["points"] = self.points.tolist()
            if self.value_type != "number":
                spec["value_type"] = self.value_type
            if self.unit is not None:
                spec["unit"] = self.unit
            if self.tz is not None:
                spec["tz"] = self.tz
        return spec


_EPOCH = pd.Timestamp(0, tz="UTC")


def _all_datetimes(values: np.ndarray) -> bool:
    return values.size > 0 and all(
        isinstance(v, (pd.Timestamp, np.datetime64)) for v in values)


def _all_timedeltas(values: np.ndarray) -> bool:
    return values.size > 0 and all(
        isinstance(v, (pd.Timedelta, np.timedelta64)) for v in values)


def _datetimes_as_seconds(values: Any) -> np.ndarray:
    """Seconds since 1970-01-01 UTC; naive datetimes are read as UTC."""
    stamps = pd.Series(pd.to_datetime(pd.Series(values), utc=True))
    return ((stamps - _EPOCH) / pd.Timedelta(seconds=1)).to_numpy(dtype=float)


def _timedeltas_as_seconds(values: Any) -> np.ndarray:
    """Durations in seconds (float)."""
    deltas = pd.to_timedelta(pd.Series(values, dtype=object if np.asarray(values).dtype == object
                                       else None))
    return (deltas / pd.Timedelta(seconds=1)).to_numpy(dtype=float)


def _check_zone(name: Hashable, tz: Any) -> None:
    """ValueError naming the column unless ``tz`` is a time zone pandas knows."""
    try:
        pd.Timestamp(0, tz=tz)
    except Exception:  # noqa: BLE001  (zoneinfo, pytz and dateutil raise differently)
        raise ValueError(f"column {name!r}: unknown time zone {tz!r}.") from None


def _check_date_bounds(name: Hashable, bounds: Any, tz: str | None) -> None:
    """ValueError naming the column (bounds as ISO dates) unless ``low < high``."""
    if bounds is None or len(bounds) != 2:
        return
    low, high = (_bound_as_float(name, v, tz, "datetime") for v in bounds)
    if not high > low:
        raise ValueError(f"column {name!r}: datetime bounds must have low < high, got "
                         f"[{_iso(low, tz)}, {_iso(high, tz)}].")


def _iso(seconds: float, tz: str | None = None) -> str:
    """Seconds since the epoch as an ISO date (with the time when it is not
    midnight), in ``tz`` when given."""
    stamp = pd.Timestamp(round(float(seconds) * 1e6), unit="us", tz="UTC")
    stamp = stamp.tz_convert(tz) if tz is not None else stamp.tz_localize(None)
    if stamp == stamp.normalize():
        return stamp.date().isoformat()
    return stamp.isoformat()


def _unit_start(naive: pd.DatetimeIndex, unit: str) -> pd.DatetimeIndex:
    """Wall-clock datetimes floored to the start of their ``unit``."""
    if unit in ("year", "month"):
        return naive.to_period("Y" if unit == "year" else "M").to_timestamp()
    return naive.floor({"day": "D", "hour": "h", "minute": "min", "second": "s"}[unit])


def _next_unit(naive: pd.DatetimeIndex, unit: str) -> pd.DatetimeIndex:
    """The start of the unit after the one of every (floored) wall-clock datetime."""
    step = {"year": pd.DateOffset(years=1), "month": pd.DateOffset(months=1),
            "day": pd.Timedelta(days=1), "hour": pd.Timedelta(hours=1),
            "minute": pd.Timedelta(minutes=1), "second": pd.Timedelta(seconds=1)}[unit]
    return naive + step


def snap_seconds(seconds: np.ndarray, unit: str, tz: str | None = None,
                 low: float | None = None) -> np.ndarray:
    """Datetimes (seconds since the epoch) floored to the start of their ``unit``.

    The unit is taken in ``tz`` (a month starts at local midnight of its
    first day) or, for naive datetimes, in UTC.  A value whose unit starts
    before ``low`` moves to the next unit's start, so that values stay
    within the bounds.

    Parameters
    ----------
    seconds : ndarray of float
        Present values (no NaN).
    unit : {"year", "month", "day", "hour", "minute", "second"}
    tz : str, optional
        IANA time zone.
    low : float, optional
        Lower bound (seconds).

    Returns
    -------
    ndarray of float
    """
    seconds = np.asarray(seconds, dtype=float)
    if not seconds.size:
        return seconds
    stamps = pd.to_datetime(np.rint(seconds * 1e6).astype(np.int64), unit="us", utc=True)
    local = stamps.tz_convert(tz) if tz is not None else stamps
    naive = _unit_start(local.tz_localize(None), unit)
    if low is not None:
        below = _wall_to_seconds(naive, tz) < low
        if below.any():
            naive = naive.where(~below, _next_unit(naive, unit))
    return _wall_to_seconds(naive, tz)


#: Most bins of one unit each that ``resolution="integer"`` gives a datetime column.
MAX_UNIT_BINS = 100_000

#: numpy's calendar units of the datetime units.
_NUMPY_UNITS = {"year": "Y", "month": "M", "day": "D", "hour": "h", "minute": "m",
                "second": "s"}


def _wall_units(seconds: np.ndarray, unit: str, tz: str | None) -> np.ndarray:
    """Index (since 1970 on the wall clock of ``tz``, or UTC) of the ``unit`` that
    holds each datetime (seconds since the epoch)."""
    seconds = np.asarray(seconds, dtype=float)
    stamps = pd.to_datetime(np.rint(seconds * 1e6).astype(np.int64), unit="us", utc=True)
    local = stamps.tz_convert(tz) if tz is not None else stamps
    wall = local.tz_localize(None).to_numpy(dtype="datetime64[ns]")
    return wall.astype(f"datetime64[{_NUMPY_UNITS[unit]}]").astype(np.int64)


def _unit_starts(index: np.ndarray, unit: str, tz: str | None) -> np.ndarray:
    """Starts (seconds since the epoch) of the units of :func:`_wall_units`
    ``index``, local midnights of ``tz`` included (DST-safe).  Many values over
    few units (decoding a table) convert each unit of their span once."""
    index = np.asarray(index, dtype=np.int64)
    if index.size > 1:
        first = int(index.min())
        span = int(index.max()) - first + 1
        if span < index.size:
            return _unit_starts(np.arange(first, first + span), unit, tz)[index - first]
    wall = index.astype(f"datetime64[{_NUMPY_UNITS[unit]}]")
    return _wall_to_seconds(pd.DatetimeIndex(wall.astype("datetime64[ns]")), tz)


def _on_unit_starts(edges: np.ndarray, unit: str, tz: str | None) -> bool:
    """Whether every edge is the start of a ``unit`` (in ``tz``)."""
    edges = np.asarray(edges, dtype=float)
    return bool(np.array_equal(_unit_starts(_wall_units(edges, unit, tz), unit, tz), edges))


def unit_edges(low: float, high: float, unit: str, tz: str | None = None, *,
               n_bins: int, resolution: str = "auto", high_closed: bool = True) -> np.ndarray:
    """Bin edges of a datetime column with a unit: starts of its units.

    The units run from the one holding ``low`` to the one holding ``high``
    (with ``high_closed=False``, the one just before ``high``), on the wall
    clock of ``tz`` (calendar months and years; local midnights).  With
    ``resolution="auto"`` every unit has its own bin when there are at most
    ``INTEGER_RESOLUTION_MAX`` of them (the rule of integer columns);
    otherwise (or with ``resolution="bins"``) every bin holds ``k`` whole
    units, ``k`` the smallest that makes at most ``n_bins`` bins (the last
    bin may hold fewer).  Every edge is a start of a unit, so flooring a
    value to its unit never moves it to another bin.  The edges depend on
    the public bounds, unit, zone and ``n_bins`` only.

    Parameters
    ----------
    low, high : float
        Bounds, seconds since 1970-01-01 UTC (``low < high``).
    unit : {"year", "month", "day", "hour", "minute", "second"}
    tz : str, optional
        IANA time zone; None for naive (UTC wall clock) datetimes.
    n_bins : int
        Most bins when units are grouped.
    resolution : {"auto", "integer", "bins"}, default="auto"
        ``"integer"``: one bin per unit whatever their number.
    high_closed : bool, default=True
        Whether the unit holding ``high`` is in the domain.

    Returns
    -------
    edges : ndarray of float

    Raises
    ------
    ValueError
        For ``resolution="integer"`` over more than ``MAX_UNIT_BINS`` units.
    """
    first, last = _wall_units(np.array([low, high]), unit, tz)
    if not high_closed and _on_unit_starts(np.array([high]), unit, tz):
        last -= 1
    last = max(int(last), int(first))
    n_units = last - first + 1
    per_unit = resolution == "integer" or (
        resolution == "auto" and n_units <= INTEGER_RESOLUTION_MAX)
    if per_unit and n_units > MAX_UNIT_BINS:
        raise ValueError(f"resolution='integer' would make {n_units} bins of one {unit} "
                         f"(at most {MAX_UNIT_BINS}); use a coarser unit or 'n_bins'.")
    width = 1 if per_unit else max(1, math.ceil(n_units / max(int(n_bins), 1)))
    index = np.arange(first, last + 2, width, dtype=np.int64)
    if index[-1] != last + 1:
        index = np.append(index, last + 1)
    return np.unique(_unit_starts(index, unit, tz))


def _wall_to_seconds(naive: pd.DatetimeIndex, tz: str | None) -> np.ndarray:
    """Wall-clock datetimes (in ``tz``, or UTC) as seconds since the epoch."""
    aware = naive.tz_localize(tz if tz is not None else "UTC", ambiguous="NaT",
                              nonexistent="shift_forward")
    if aware.isna().any():  # an ambiguous wall time (a DST fall-back): its first instant
        aware = aware.where(~aware.isna(), naive.tz_localize(
            tz if tz is not None else "UTC", ambiguous=True, nonexistent="shift_forward"))
    return ((aware - _EPOCH) / pd.Timedelta(seconds=1)).to_numpy(dtype=float)


def _bound_as_float(name: Hashable, value: Any, tz: str | None = None,
                    value_type: str = "number") -> Any:
    """A declared bound as a number: a Timestamp, datetime or ISO string as
    seconds since 1970-01-01 UTC (a naive one read in ``tz``, or as UTC); a
    duration (or its text) in seconds for a timedelta column; numbers as they are."""
    if value_type == "timedelta" and not isinstance(value, (int, float, np.number)):
        try:
            return pd.Timedelta(value) / pd.Timedelta(seconds=1)
        except (TypeError, ValueError):
            raise ValueError(f"column {name!r}: cannot read the bound {value!r} as a "
                             "duration.") from None
    if isinstance(value, (pd.Timestamp, np.datetime64, str)) or hasattr(value, "isoformat"):
        try:
            stamp = pd.Timestamp(value)
            if tz is not None:
                stamp = stamp.tz_localize(tz) if stamp.tzinfo is None else stamp.tz_convert(tz)
            return float(_datetimes_as_seconds([stamp])[0])
        except (TypeError, ValueError):
            raise ValueError(f"column {name!r}: cannot read the bound {value!r} as a "
                             "date-time.") from None
    return value


def _is_date_bound(value: Any) -> bool:
    """Whether a declared bound is a date-time (a Timestamp, datetime or ISO text)."""
    return isinstance(value, (pd.Timestamp, np.datetime64, str)) or (
        hasattr(value, "isoformat") and not isinstance(value, pd.Timedelta))


def _is_bound(value: Any) -> bool:
    return (isinstance(value, (int, float, np.number, pd.Timestamp, np.datetime64))
            and not isinstance(value, (bool, np.bool_)))


def _uniform_edges(low: float, high: float, n_bins: int) -> np.ndarray:
    if not (np.isfinite(low) and np.isfinite(high)) or high <= low:
        raise ValueError(f"bounds must be finite with low < high, got ({low}, {high}).")
    return np.linspace(float(low), float(high), int(n_bins) + 1)


def numeric_edges(
    low: float,
    high: float,
    n_bins: int,
    *,
    integer: bool = False,
    resolution: str = "auto",
    scale: str = "auto",
) -> np.ndarray:
    """Bin edges of a numeric column with public bounds ``[low, high]``.

    Parameters
    ----------
    low, high : float
        Public bounds (finite, ``low < high``).
    n_bins : int
        Number of bins when the column is binned.
    integer : bool, default=False
        Whether the column holds integers.
    resolution : {"auto", "integer", "bins"}, default="auto"
        ``"integer"``: one bin ``[k - 1/2, k + 1/2)`` per integer ``k`` in
        the bounds (so every integer has its own code and decodes exactly);
        ``"bins"``: ``n_bins`` bins spaced as ``scale`` says; ``"auto"``:
        ``"integer"`` for an integer column whose bounds hold at most
        ``INTEGER_RESOLUTION_MAX`` (100) integers, ``"bins"`` otherwise.
        The choice depends on public bounds only.
    scale : {"auto", "linear", "log"}, default="auto"
        Spacing of the bins: ``"linear"``, uniform; ``"log"``, geometric
        (``n_bins`` per three orders of magnitude, at least ``n_bins`` in
        all, so that wide public bounds keep the resolution where the data
        lie) up to ``high``, from ``low`` when ``low > 0``, else from 1 (from
        ``high / 1000`` if ``high < 1000``) after a bin ``[0, 1)`` and,
        when ``low < 0``, one bin ``[low, 0)`` for all negative values;
        ``"auto"``, ``"log"`` when the range reaches at least
        ``LOG_SCALE_SPAN`` (3) orders of magnitude above its lower bound,
        ``high >= 1000 * max(low, 1)``, with a negative part of at most 1%
        of ``high`` (``-low <= high / 100``), else ``"linear"`` (see
        :func:`~sklearn_dpsynth.domain.numeric_scale`).  The bins of an integer
        column are cut at half-integers (duplicates merged, so it may get
        fewer than ``n_bins``): every bin holds whole integers, and a first
        bin ``[-1/2, 1/2)`` gives 0 a code of its own.

    Returns
    -------
    edges : ndarray of float
    """
    if resolution not in _RESOLUTIONS:
        raise ValueError(f"resolution must be one of {_RESOLUTIONS}, got {resolution!r}.")
    if scale not in _SCALES:
        raise ValueError(f"scale must be one of {_SCALES}, got {scale!r}.")
    if not (np.isfinite(low) and np.isfinite(high)) or high <= low:
        raise ValueError(f"bounds must be finite with low < high, got ({low}, {high}).")
    if not _per_integer(low, high, integer, resolution):
        if numeric_scale(low, high, scale) == "linear":
            return _uniform_edges(low, high, n_bins)
        edges = _log_edges(low, high, _log_bins(low, high, n_bins))
        return _half_integer_edges(low, high, edges) if integer else edges
    first, last = math.ceil(low), math.floor(high)
    if last < first:
        raise ValueError(f"resolution='integer' but the bounds ({low}, {high}) hold no integer.")
    return np.arange(first, last + 2, dtype=float) - 0.5


def numeric_scale(low: float, high: float, scale: str = "auto") -> str:
    """``"linear"`` or ``"log"``: how :func:`~sklearn_dpsynth.domain.numeric_edges` spaces the bins of ``[low, high]``.

    Parameters
    ----------
    low, high : float
        Public bounds.
    scale : {"auto", "linear", "log"}, default="auto"
        ``"auto"`` is ``"log"`` when ``high >= 10**LOG_SCALE_SPAN *
        max(low, 1)`` and ``-low <= high / 100``: the range reaches at least
        three orders of magnitude above its lower bound (and above 1), and
        any negative part is small beside it (money amounts, counts,
        durations, possibly with a few negative corrections), else
        ``"linear"``.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``scale`` is unknown, or ``"log"`` with ``high <= 0``.
    """
    if scale not in _SCALES:
        raise ValueError(f"scale must be one of {_SCALES}, got {scale!r}.")
    if scale == "auto":
        wide = high >= 10.0 ** LOG_SCALE_SPAN * max(low, 1.0) and -low <= high / 100
        return "log" if wide else "linear"
    if scale == "log" and high <= 0:
        raise ValueError(f"scale='log' needs a positive upper bound, got ({low}, {high}).")
    return scale


def _log_bins(low: float, high: float, n_bins: int) -> int:
    """``n_bins`` per ``LOG_SCALE_SPAN`` orders of magnitude of a log-spaced range
    (at least ``n_bins``): wide public bounds keep the resolution where the data lie."""
    start = low if low > 0 else min(1.0, high / 10.0 ** LOG_SCALE_SPAN)
    decades = math.log10(high / start)
    return max(int(n_bins), math.ceil(int(n_bins) * decades / LOG_SCALE_SPAN))


def _log_edges(low: float, high: float, n_bins: int) -> np.ndarray:
    """Geometric edges up to ``high``: from ``low > 0``; else after a bin ``[0, 1)``
    (``[0, high / 1000)`` when ``high < 1000``) and, when ``low < 0``, a bin ``[low, 0)``."""
    if low > 0:
        return np.geomspace(low, high, int(n_bins) + 1)
    prefix = [float(low)] if low == 0 else [float(low), 0.0]
    n_geometric = int(n_bins) - len(prefix)
    if n_geometric < 1:
        return np.array([low, high], dtype=float) if low == 0 or n_bins < 2 else \
            np.array([low, 0.0, high])
    start = min(1.0, high / 10.0 ** LOG_SCALE_SPAN)
    return np.concatenate([prefix, np.geomspace(start, high, n_geometric + 1)])


def _half_integer_edges(low: float, high: float, edges: np.ndarray) -> np.ndarray:
    """``edges`` moved to the half-integers below the integers they start, deduplicated.

    An integer ``k`` falls in the bin of the moved edges that held it
    before (``e <= k`` iff ``ceil(e) - 1/2 <= k``); the outer edges are
    ``ceil(low) - 1/2`` and ``floor(high) + 1/2``.
    """
    first, last = math.ceil(low) - 0.5, math.floor(high) + 0.5
    inner = np.ceil(edges[1:-1]) - 0.5
    inner = inner[(inner > first) & (inner < last)]
    return np.unique(np.concatenate([[first], inner, [last]]))


def zero_point(low: float, high: float, integer: bool, scale: str) -> list[float]:
    """``[0.0]`` when a float column's log-spaced bins start at or below 0, else ``[]``.

    The log bin ``[0, 1)`` of a zero-inflated amount would mix its spike at
    0 with the small amounts; a point gives 0 a code of its own (an integer
    column's bin ``[-1/2, 1/2)`` already does).

    Parameters
    ----------
    low, high : float
        Public bounds.
    integer : bool
        Whether the column holds integers.
    scale : {"auto", "linear", "log"}
        As for :func:`~sklearn_dpsynth.domain.numeric_edges`.

    Returns
    -------
    list of float
    """
    log = low <= 0 <= high and numeric_scale(low, high, scale) == "log"
    return [0.0] if log and not integer else []


def _per_integer(low: float, high: float, integer: bool, resolution: str) -> bool:
    """Whether ``numeric_edges`` gives every integer of ``[low, high]`` its own bin."""
    if resolution != "auto":
        return resolution == "integer"
    n_integers = math.floor(high) - math.ceil(low) + 1
    return integer and 1 <= n_integers <= INTEGER_RESOLUTION_MAX


def spec_from_declaration(
    name: Hashable, declared: Any, n_bins: int, integer: bool = False
) -> ColumnSpec | None:
    """Build a :class:`ColumnSpec` from a user's declaration of one column.

    Parameters
    ----------
    name : hashable
        Column name.
    declared : int, list, tuple, dict or ColumnSpec
        ``k`` (codes ``0..k-1``), a list of categories, a ``(low, high)``
        tuple (numeric, see :func:`~sklearn_dpsynth.domain.numeric_edges` for its bins; datetimes
        make a datetime column), or a dict with keys ``kind``/``n_codes``/
        ``categories``/``bounds``/``edges``/``n_bins``/``resolution``/
        ``scale``/``points``/``integer``/``missing``/``other``/``clip``/
        ``unit``/``tz``/``note``.  ``kind`` is one of
        ``"numeric"``, ``"integer"`` (numeric with ``integer=True``),
        ``"datetime"`` (bounds as ISO strings or Timestamps, read in ``tz``
        when given; ``unit`` (``"year"``, ``"month"``, ``"day"``, ``"hour"``,
        ``"minute"`` or ``"second"``) makes bins of whole units (see
        :func:`~sklearn_dpsynth.domain.unit_edges`) that decode to unit
        starts; ``tz`` an IANA name, omitted for naive datetimes),
        ``"timedelta"`` (bounds as durations or seconds), ``"category"``
        (or ``"categorical"``) and ``"codes"``.  ``note`` is free text,
        ignored.  ``resolution`` (``"auto"``, ``"integer"`` or ``"bins"``)
        and ``scale`` (``"auto"``, ``"linear"`` or ``"log"``, see
        :func:`~sklearn_dpsynth.domain.numeric_edges`) apply to ``bounds``; a dict with its own
        ``n_bins`` defaults to ``"bins"``, and ``"integer"`` implies
        ``integer=True``.  ``points`` lists values with codes of their own
        (see :class:`ColumnSpec`); on a per-integer column, integer points
        already have one and are dropped.  Binned float bounds
        ``(0, high)`` that ``scale`` spaces logarithmically get the point 0
        unless the entry lists its own ``points`` (:func:`~sklearn_dpsynth.domain.zero_point`).
    n_bins : int
        Default number of uniform bins for numeric columns.
    integer : bool, default=False
        Default for ``integer`` (from the column's dtype).

    Returns
    -------
    ColumnSpec or None
        None for a dict that declares only the kind of the values (no
        ``bounds``, ``edges``, ``categories`` or ``n_codes``): the column's
        range is then learned like an undeclared column's, from values
        read as that kind (see ``declared_kind``).
    """
    if isinstance(declared, ColumnSpec):
        return declared
    if isinstance(declared, (bool, np.bool_)):
        raise TypeError(f"column {name!r}: a domain entry cannot be a bool.")
    if isinstance(declared, (int, np.integer)):
        return ColumnSpec(name, "codes", n_codes=int(declared))
    if isinstance(declared, tuple) and len(declared) == 2 and all(
            _is_bound(v) for v in declared):
        scale = _default_scale(declared)
        low, high = (_bound_as_float(name, v) for v in declared)
        try:
            edges = numeric_edges(low, high, n_bins, integer=integer, scale=scale)
        except ValueError as exc:
            raise ValueError(f"column {name!r}: {exc}") from None
        value_type = "datetime" if any(_is_date_bound(v) for v in declared) else "number"
        return ColumnSpec(name, "numeric", edges=edges, integer=integer, value_type=value_type,
                          points=zero_point(low, high, integer, scale) or None)
    if isinstance(declared, (list, np.ndarray, pd.Index)):
        return ColumnSpec(name, "categorical", categories=list(declared))
    if isinstance(declared, Mapping):
        return _spec_from_mapping(name, dict(declared), n_bins, integer)
    raise TypeError(
        f"column {name!r}: cannot read domain entry {declared!r}; use an int (codes), "
        "a list (categories), a (low, high) tuple (numeric) or a dict."
    )


def is_kind_only(declared: Any) -> bool:
    """Whether a declaration entry names only the kind of its values (a dict
    without ``bounds``, ``edges``, ``categories`` or ``n_codes``)."""
    return (isinstance(declared, Mapping) and "kind" in declared
            and set(declared) <= _KIND_ONLY_KEYS)


def declared_kind(declared: Any) -> tuple[str, str | None, str | None]:
    """The kind of values a declaration entry says a column holds: how its text is read.

    Parameters
    ----------
    declared : int, list, tuple, dict or ColumnSpec
        A domain entry (see :func:`spec_from_declaration`).

    Returns
    -------
    kind : {"numeric", "integer", "datetime", "timedelta", "category", "codes"}
    unit : str or None
        The declared unit of a datetime column.
    tz : str or None
        The declared time zone of a datetime column.
    """
    if isinstance(declared, ColumnSpec):
        if declared.kind != "numeric":
            return ("codes" if declared.kind == "codes" else "category"), None, None
        kind = {"datetime": "datetime", "timedelta": "timedelta"}.get(
            declared.value_type, "integer" if declared.integer else "numeric")
        return kind, declared.unit, declared.tz
    if isinstance(declared, (int, np.integer)) and not isinstance(declared, (bool, np.bool_)):
        return "codes", None, None
    if isinstance(declared, tuple):
        return ("datetime" if any(_is_date_bound(v) for v in declared) else "numeric"), None, None
    if isinstance(declared, Mapping):
        return _mapping_kind(declared), declared.get("unit"), declared.get("tz")
    return "category", None, None


def _mapping_kind(spec: Mapping) -> str:
    """The value kind of a dict entry (its ``kind``, or what its keys imply)."""
    kind = spec.get("kind")
    if kind is None:
        if "n_codes" in spec:
            return "codes"
        if "categories" in spec:
            return "category"
        bounds = spec.get("bounds")
        if bounds is not None and any(_is_date_bound(v) for v in bounds):
            return "datetime"
        return "integer" if spec.get("integer") else "numeric"
    if kind not in DECLARED_KINDS:
        raise ValueError(f"kind must be one of {DECLARED_KINDS}, got {kind!r}.")
    if kind == "categorical":
        return "category"
    if kind == "numeric" and spec.get("value_type") in ("datetime", "timedelta"):
        return spec["value_type"]
    if kind == "numeric" and spec.get("bounds") is not None and any(
            _is_date_bound(v) for v in spec["bounds"]):
        return "datetime"  # e.g. {"kind": "numeric", "bounds": ["2013-01-01", ...]}
    if kind == "numeric" and (spec.get("integer") or spec.get("resolution") == "integer"):
        return "integer"
    return kind


def _spec_from_mapping(name: Hashable, spec: dict, n_bins: int,
                       integer: bool) -> ColumnSpec | None:
    spec.pop("note", None)
    try:
        kind = _mapping_kind(spec)
    except ValueError as exc:
        raise ValueError(f"column {name!r}: {exc}") from None
    if is_kind_only(spec):
        return None
    spec.pop("kind", None)
    spec.pop("value_type", None)
    unit, tz = spec.pop("unit", None), spec.pop("tz", None)
    if kind in ("numeric", "integer", "datetime", "timedelta"):
        spec["value_type"] = {"datetime": "datetime", "timedelta": "timedelta"}.get(
            kind, "number")
        spec.setdefault("integer", integer or kind == "integer")
        if kind == "datetime":
            if tz is not None:
                _check_zone(name, tz)
            spec.update(unit=unit, tz=tz)
            _check_date_bounds(name, spec.get("bounds"), tz)
        elif unit is not None or tz is not None:
            raise ValueError(f"column {name!r}: 'unit' and 'tz' apply to datetime columns only.")
        _numeric_edges_from_mapping(name, spec, n_bins)
        kind = "numeric"
    elif kind == "category":
        kind = "categorical"
    spec.pop("bounds", None)
    spec.pop("n_bins", None)
    spec.pop("scale", None)  # read by the numeric edges when they use it
    try:
        return ColumnSpec(name, kind, **spec)
    except TypeError as exc:
        raise ValueError(f"column {name!r}: invalid domain entry ({exc}).") from None


def _numeric_edges_from_mapping(name: Hashable, spec: dict, n_bins: int) -> None:
    """Turn ``bounds``/``n_bins``/``resolution`` of a numeric dict entry into ``edges``."""
    resolution = spec.pop("resolution", None)
    scale = spec.pop("scale", None)
    if "edges" in spec:
        if resolution is not None or scale is not None:
            raise ValueError(f"column {name!r}: 'resolution' and 'scale' apply to 'bounds', "
                             "not to explicit 'edges'.")
        return
    if "bounds" not in spec:
        raise ValueError(f"column {name!r}: a numeric entry needs 'bounds' or 'edges'.")
    if resolution is None:
        resolution = "bins" if "n_bins" in spec else "auto"
    bounds = spec.pop("bounds")
    scale = _default_scale(bounds) if scale is None else scale
    low, high = (_bound_as_float(name, v, spec.get("tz"), spec.get("value_type", "number"))
                 for v in bounds)
    if spec.get("unit") is not None:  # a datetime column: starts of its units
        if spec["unit"] not in DATETIME_UNITS:
            raise ValueError(f"column {name!r}: unit must be one of {DATETIME_UNITS}, got "
                             f"{spec['unit']!r}.")
        try:
            spec["edges"] = unit_edges(low, high, spec["unit"], spec.get("tz"),
                                       n_bins=spec.pop("n_bins", n_bins), resolution=resolution)
        except ValueError as exc:
            raise ValueError(f"column {name!r}: {exc}") from None
        return
    if resolution == "integer":
        spec["integer"] = True
    try:
        spec["edges"] = numeric_edges(low, high, spec.pop("n_bins", n_bins),
                                      integer=spec["integer"], resolution=resolution,
                                      scale=scale)
    except ValueError as exc:
        raise ValueError(f"column {name!r}: {exc}") from None
    if not _per_integer(low, high, spec["integer"], resolution):
        spec["points"] = _with_zero_point(spec.get("points"),
                                          zero_point(low, high, spec["integer"], scale))
    elif spec.get("points") is not None:
        try:
            points = np.asarray(spec["points"], dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError(f"column {name!r}: points must be numbers.") from None
        spec["points"] = points[points != np.rint(points)]


def _default_scale(bounds: Any) -> str:
    """``"auto"``, or ``"linear"`` for date-time bounds (seconds since 1970 span no
    orders of magnitude that mean anything)."""
    try:
        dated = any(isinstance(v, (pd.Timestamp, np.datetime64, str)) or hasattr(v, "isoformat")
                    for v in bounds)
    except TypeError:
        return "auto"  # not a pair: the bounds' own error follows
    return "linear" if dated else "auto"


def _with_zero_point(points: Any, zero: list[float]) -> Any:
    """The automatic point at 0 unless the entry declares its own ``points``."""
    return zero if points is None and zero else points


def _decoded_column(spec: ColumnSpec, codes: np.ndarray, rng: np.random.Generator | None,
                    bin_value: str) -> Any:
    """:meth:`ColumnSpec.decode` of one column, for a DataFrame.

    A categorical column whose labels are all strings is built directly as
    pandas' string array by one ``take`` of its labels (what the DataFrame
    would infer from the object array, without a pass over a million
    Python strings); anything else is :meth:`ColumnSpec.decode`.
    """
    labels = list(spec.categories) + ([OTHER] if spec.other else []) \
        if spec.kind == "categorical" else []
    if not labels or not all(isinstance(v, str) for v in labels) or not _infers_strings():
        return spec.decode(codes, rng, bin_value)
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size and (codes.min() < 0 or codes.max() >= spec.size):
        raise ValueError(f"column {spec.name!r}: codes outside 0..{spec.size - 1}.")
    if spec.missing:
        is_missing = codes == spec.missing_code
        if is_missing.all():  # pandas infers object for an all-missing column
            return spec.decode(codes, rng, bin_value)
        codes = np.where(is_missing, -1, codes)
    return pd.array(labels, dtype="str").take(codes, allow_fill=True)


def _infers_strings() -> bool:
    """Whether pandas makes a column of Python strings its string dtype."""
    if int(pd.__version__.split(".")[0]) >= 3:  # the default; the option is deprecated
        return True
    try:
        return bool(pd.get_option("future.infer_string"))
    except (KeyError, pd.errors.OptionError):
        return False


def _encode_into(spec: ColumnSpec, series: pd.Series, out: np.ndarray,
                 block_rows: int | None) -> None:
    """Write ``spec.encode_series(series)`` into ``out``, by blocks of ``block_rows``
    rows when given (see :meth:`Domain.encode`)."""
    if block_rows is None or (series.dtype == object and spec.kind != "categorical"):
        out[:] = spec.encode_series(series)
        return
    try:
        for start in range(0, len(series), block_rows):
            out[start:start + block_rows] = spec.encode_series(
                series.iloc[start:start + block_rows])
    except (TypeError, ValueError):
        spec.encode_series(series)  # raises the column's own error
        raise


class Domain:
    """Ordered public domain of a table: one :class:`ColumnSpec` per column.

    Parameters
    ----------
    specs : sequence of ColumnSpec
        In column order.

    Examples
    --------
    >>> dom = Domain.from_declaration({"age": (0, 100), "sex": ["F", "M"], "x": 3},
    ...                               n_bins=10)
    >>> dom.sizes
    [10, 2, 3]
    """

    def __init__(self, specs: Sequence[ColumnSpec]) -> None:
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ValueError("column names in a domain must be unique.")
        self.specs = list(specs)

    @classmethod
    def from_declaration(
        cls,
        declaration: Mapping[Hashable, Any],
        n_bins: int = 32,
        integer_columns: Sequence[Hashable] = (),
    ) -> "Domain":
        """Build a domain from ``{column: entry}`` (see ``spec_from_declaration``).

        Parameters
        ----------
        declaration : mapping
            Column name -> domain entry, in column order.
        n_bins : int, default=32
            Uniform bins for ``(low, high)`` entries.
        integer_columns : sequence, default=()
            Numeric columns whose decoded values are rounded.

        Returns
        -------
        Domain
        """
        integer = set(integer_columns)
        specs = []
        for name, entry in declaration.items():
            spec = spec_from_declaration(name, entry, n_bins, name in integer)
            if spec is None:
                raise ValueError(f"column {name!r}: the entry declares only the kind of its "
                                 "values; a complete domain needs its bounds or categories "
                                 "(fit learns them privately).")
            specs.append(spec)
        return cls(specs)

    @property
    def columns(self) -> list:
        """Column names, in order."""
        return [s.name for s in self.specs]

    @property
    def sizes(self) -> list[int]:
        """Number of codes of every column, in order."""
        return [s.size for s in self.specs]

    @property
    def shape(self) -> tuple[int, ...]:
        """``tuple(sizes)``: the shape of the full contingency table."""
        return tuple(self.sizes)

    def model_domain(
        self, sizes: Sequence[int] | None = None
    ) -> "sklearn_dpsynth.pgm.ModelDomain":
        """The domain in the graphical-model engine's form.

        Attribute names are derived from the column names alone (public):
        ``str(name)`` of every column when these are distinct, otherwise
        ``"c0", "c1", ...`` by position (e.g. for the columns ``1`` and
        ``"1"``).

        Parameters
        ----------
        sizes : sequence of int, default=None
            Number of codes the model gives every column (e.g. after a
            domain compression); :attr:`sizes` when None.

        Returns
        -------
        sklearn_dpsynth.pgm.ModelDomain
        """
        from .pgm import ModelDomain

        names = [str(c) for c in self.columns]
        if len(set(names)) != len(names):
            names = [f"c{j}" for j in range(len(names))]
        return ModelDomain(tuple(names), tuple(self.sizes if sizes is None else sizes))

    def index(self, column: Hashable) -> int:
        """Position of ``column``; ValueError naming it when unknown."""
        for i, spec in enumerate(self.specs):
            if spec.name == column:
                return i
        raise ValueError(f"unknown column {column!r}; the domain has {self.columns}.")

    def __getitem__(self, column: Hashable) -> ColumnSpec:
        return self.specs[self.index(column)]

    def __iter__(self) -> Iterator[ColumnSpec]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)

    def __repr__(self) -> str:
        parts = ", ".join(f"{s.name!r}: {s.kind}[{s.size}]" for s in self.specs)
        return f"Domain({parts})"

    def encode(self, frame: pd.DataFrame, dtype: Any = np.int64,
               block_rows: int | None = None) -> np.ndarray:
        """Encode a DataFrame whose columns are this domain's, in order.

        Column by column (:meth:`ColumnSpec.encode_series`), so that only
        one column's temporaries are alive at a time; with ``block_rows``,
        one block of rows of a column at a time as well.

        Parameters
        ----------
        frame : pandas.DataFrame
        dtype : numpy integer dtype, default=np.int64
            Dtype of the result; ``code_dtype(max(self.sizes))``
            is the smallest that holds every code.
        block_rows : int, default=None
            Rows encoded at once (None: whole columns).  The codes and the
            errors are the same: an object column of a numeric or datetime
            spec is encoded whole (whether its values are all datetimes is
            decided over the column), and a block that fails re-encodes its
            whole column, so the error counts faulty rows over every row.

        Returns
        -------
        codes : ndarray of ``dtype``, shape (n_samples, n_columns)
        """
        dtype = np.dtype(dtype)
        if self.specs and max(self.sizes) - 1 > np.iinfo(dtype).max:
            raise ValueError(f"dtype: {dtype} cannot hold codes up to {max(self.sizes) - 1}.")
        codes = np.empty((len(frame), len(self.specs)), dtype=dtype)
        for j, spec in enumerate(self.specs):
            _encode_into(spec, frame[spec.name], codes[:, j], block_rows)
        return codes

    def decode(
        self,
        codes: np.ndarray,
        rng: np.random.Generator | None = None,
        bin_value: str = "midpoint",
    ) -> pd.DataFrame:
        """Decode integer codes into a DataFrame of values (object/float columns).

        Parameters
        ----------
        codes : ndarray of int, shape (n_samples, n_columns)
        rng : numpy.random.Generator, optional
            For ``bin_value="uniform"``.
        bin_value : {"midpoint", "uniform"}, default="midpoint"
            See :meth:`ColumnSpec.decode`.

        Returns
        -------
        pandas.DataFrame
        """
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(self.specs):
            raise ValueError(f"codes must have shape (n, {len(self.specs)}).")
        return pd.DataFrame({spec.name: _decoded_column(spec, codes[:, j], rng, bin_value)
                             for j, spec in enumerate(self.specs)},
                            columns=pd.Index(self.columns, dtype=object))

    def log_widths(self, codes: np.ndarray) -> np.ndarray:
        """Log of the measure of every encoded row: the sum of its codes' log-widths.

        ``log P(row's codes) - log_widths(codes)`` is the row's log-density
        in the input's units (see :attr:`ColumnSpec.log_widths`).

        Parameters
        ----------
        codes : ndarray of int, shape (n_samples, n_columns)

        Returns
        -------
        ndarray of float, shape (n_samples,)
        """
        codes = np.asarray(codes, dtype=np.int64)
        total = np.zeros(codes.shape[0])
        for j, spec in enumerate(self.specs):
            total += spec.log_widths[codes[:, j]]
        return total

    def to_dict(self) -> dict:
        """JSON-friendly declaration of every column."""
        return {s.name: s.to_dict() for s in self.specs}
