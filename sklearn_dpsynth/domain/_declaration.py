"""Reading a user's declaration of a column (an int, a list, a ``(low, high)``
tuple or a dict) into a :class:`~sklearn_dpsynth.ColumnSpec`."""

from __future__ import annotations

from typing import Any, Hashable, Mapping

import numpy as np
import pandas as pd

from ._datetimes import DATETIME_UNITS, _check_zone, _iso, datetimes_as_seconds, unit_edges
from ._edges import is_per_integer, numeric_edges, zero_point
from ._specs import ColumnSpec

#: What a declaration's ``"kind"`` may say about a column's values: the spec
#: kinds (``"categorical"``, ``"codes"``, ``"numeric"``), and the value kinds
#: that tell how text is read (``"numeric"``, ``"integer"``, ``"datetime"``,
#: ``"timedelta"``, ``"category"``).
DECLARED_KINDS = ("numeric", "integer", "datetime", "timedelta", "category", "categorical",
                  "codes")

#: Keys of a declaration that say nothing about the values' range (notes,
#: and what the value kind alone decides).
_KIND_ONLY_KEYS = frozenset({"kind", "unit", "tz", "note", "missing", "integer", "n_bins",
                             "resolution", "clip", "scale"})


def _check_date_bounds(name: Hashable, bounds: Any, tz: str | None) -> None:
    """ValueError naming the column (bounds as ISO dates) unless ``low < high``."""
    if bounds is None or len(bounds) != 2:
        return
    low, high = (_bound_as_float(name, v, tz, "datetime") for v in bounds)
    if not high > low:
        raise ValueError(f"column {name!r}: datetime bounds must have low < high, got "
                         f"[{_iso(low, tz)}, {_iso(high, tz)}].")


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
            return float(datetimes_as_seconds([stamp])[0])
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


def spec_from_declaration(
    name: Hashable, declared: Any, n_bins: int, integer: bool = False
) -> ColumnSpec | None:
    """Build a :class:`~sklearn_dpsynth.ColumnSpec` from a user's declaration of one column.

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
        (see :class:`~sklearn_dpsynth.ColumnSpec`); on a per-integer column, integer points
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
    if not is_per_integer(low, high, spec["integer"], resolution):
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
