"""One column's public description: :class:`~sklearn_dpsynth.ColumnSpec`, its
codes, encoding, decoding and density widths."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable

import numpy as np
import pandas as pd

from ._datetimes import (DATETIME_UNITS, _all_datetimes, _all_timedeltas, _check_zone, _iso,
                         _on_unit_starts, _timedeltas_as_seconds, _unit_starts, _wall_units,
                         datetimes_as_seconds, snap_seconds)

#: Label that a merged "other" category decodes to.
OTHER = "<other>"

#: Ways of placing a decoded numeric value in its bin (``bin_value``).
BIN_VALUES = ("midpoint", "uniform")

_KINDS = ("codes", "categorical", "numeric")

#: What a numeric spec's numbers stand for (datetimes and durations in seconds).
_VALUE_TYPES = ("number", "datetime", "timedelta")

#: Where an error says the faulty values are: never how many rows nor which
#: values (the rows may be private; the engines say the same).
_SOME_ROWS = "in some rows"


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


def _is_number(value: Any) -> bool:
    """Whether a category is a real number (not a bool)."""
    return isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, (bool, np.bool_))


def _text_number_key(value: Any) -> Any:
    """A category lookup key that reads text as a number where it is one
    (whole-number text as an exact ``int``: ``float`` would merge integers
    past 2**53, which DuckDB compares exactly)."""
    if isinstance(value, str):  # numpy's str_ too, before its item() leaves it text
        for number in (int, float):
            try:
                return number(value)
            except ValueError:
                continue
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


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
            if isinstance(series.dtype, pd.DatetimeTZDtype):
                # its instants as naive UTC (read as UTC): not one Timestamp per row,
                # whose wall clock in the zone may overflow and quote the value
                series = series.dt.tz_convert("UTC").dt.tz_localize(None)
            return self.encode(series.to_numpy())
        row_codes, distinct = pd.factorize(series, use_na_sentinel=True)
        lookup, key = self._category_lookup(), self._value_key()
        fallback = -1 if self.other_code is None else self.other_code
        missing = self.missing_code if self.missing else -1
        table = np.array([lookup.get(key(v), fallback) for v in distinct]
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
                f"found other values {_SOME_ROWS}."
            )
        return rounded.astype(np.int64)

    def _encode_categorical(self, values: np.ndarray) -> np.ndarray:
        lookup, key = self._category_lookup(), self._value_key()
        fallback = -1 if self.other_code is None else self.other_code
        codes = np.fromiter((lookup.get(key(v), fallback) for v in values),
                            dtype=np.int64, count=len(values))
        if (codes < 0).any():
            raise ValueError(
                f"column {self.name!r}: values outside the declared categories "
                f"{_SOME_ROWS}; declare them, or allow other=True."
            )
        return codes

    def _category_lookup(self) -> dict:
        """``{category: code}`` (cached), keyed by :meth:`_key`."""
        if self._lookup is None:
            self._lookup = {self._key(c): i for i, c in enumerate(self.categories)}
        return self._lookup

    @property
    def text_reads_as_numbers(self) -> bool:
        """Whether text values match the categories as the numbers they read
        as: every category is a number (not a bool), so ``"1"``, ``"1.0"``
        and ``1`` match the category 1 and a column read from a CSV file as
        text matches its declared numeric categories."""
        return bool(self.categories) and all(_is_number(c) for c in self.categories)

    def _value_key(self) -> Any:
        """The lookup key of a value: :meth:`_key`, or where
        :attr:`text_reads_as_numbers`, one that reads text as a number."""
        return _text_number_key if self.text_reads_as_numbers else self._key

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
                f"{self._shown_bounds(values)} {_SOME_ROWS}; declare wider bounds "
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
                return datetimes_as_seconds(values)
            except (TypeError, ValueError):
                raise TypeError(f"column {self.name!r}: its datetimes mix time zones and "
                                "naive values; make them all tz-aware or all naive.") from None
        try:
            return np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(
                f"column {self.name!r} is declared {self.kind!r} but holds non-numeric "
                f"values {_SOME_ROWS}."
            ) from None

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
