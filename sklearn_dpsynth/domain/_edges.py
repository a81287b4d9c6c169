"""Bin edges of numeric columns with public bounds: uniform, log-spaced or one
per integer (:func:`~sklearn_dpsynth.domain.numeric_edges`)."""

from __future__ import annotations

import math

import numpy as np

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
    if not is_per_integer(low, high, integer, resolution):
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


def is_per_integer(low: float, high: float, integer: bool, resolution: str) -> bool:
    """Whether :func:`~sklearn_dpsynth.domain.numeric_edges` gives every integer its own bin.

    Parameters
    ----------
    low, high, integer : float, float, bool
        The column's public bounds, and whether its values are integers.
    resolution : {"auto", "integer", "bins"}
        As for :func:`~sklearn_dpsynth.domain.numeric_edges`: ``"auto"``
        gives one bin per integer to an integer column whose bounds hold
        from 1 to ``INTEGER_RESOLUTION_MAX`` (100) integers.

    Returns
    -------
    bool
    """
    if resolution != "auto":
        return resolution == "integer"
    n_integers = math.floor(high) - math.ceil(low) + 1
    return integer and 1 <= n_integers <= INTEGER_RESOLUTION_MAX
