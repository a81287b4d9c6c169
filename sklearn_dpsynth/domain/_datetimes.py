"""Datetime and duration columns: values as seconds since the epoch, time zones,
and the calendar units whose starts are bin edges and decoded values."""

from __future__ import annotations

import math
from typing import Any, Hashable

import numpy as np
import pandas as pd

from ._edges import INTEGER_RESOLUTION_MAX

#: Resolutions of a datetime column: decoded values are floored to the unit.
DATETIME_UNITS = ("year", "month", "day", "hour", "minute", "second")

_EPOCH = pd.Timestamp(0, tz="UTC")


def _all_datetimes(values: np.ndarray) -> bool:
    return values.size > 0 and all(
        isinstance(v, (pd.Timestamp, np.datetime64)) for v in values)


def _all_timedeltas(values: np.ndarray) -> bool:
    return values.size > 0 and all(
        isinstance(v, (pd.Timedelta, np.timedelta64)) for v in values)


def datetimes_as_seconds(values: Any) -> np.ndarray:
    """Datetimes as seconds since 1970-01-01 UTC, the numbers a datetime column holds.

    Parameters
    ----------
    values : array-like of datetimes
        Timestamps, ``datetime64`` values or datetimes; naive ones are read
        as UTC.  Mixing tz-aware and naive values raises (pandas' error).

    Returns
    -------
    ndarray of float
    """
    stamps = pd.Series(pd.to_datetime(pd.Series(values), utc=True))
    # the epoch in the values' own unit: a year past 2262 held in microseconds
    # (pandas' unit for such dates) would overflow nanoseconds and raise
    epoch = _EPOCH.as_unit(stamps.dt.unit)
    return ((stamps - epoch) / pd.Timedelta(seconds=1)).to_numpy(dtype=float)


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
