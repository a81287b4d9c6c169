"""Contingency tables (marginals) of integer-coded data.

:func:`contingency_counts` is the numpy counting kernel: the in-memory
backend :class:`~sklearn_dpsynth.backends.NumpyTable` counts the private
table with it (mechanisms reach the private rows only through
:meth:`~sklearn_dpsynth.backends.EncodedTable.counts` and add noise through
:mod:`sklearn_dpsynth.privacy`), and code that counts non-private arrays
(synthetic rows, metrics) calls it directly.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["contingency_counts", "project_to_simplex"]


def contingency_counts(
    codes: np.ndarray,
    sizes: Sequence[int],
    columns: Sequence[int],
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Count the joint occurrences of the codes of some columns.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_features), integer
        Encoded table; column ``j`` takes values in ``0..sizes[j]-1``.
    sizes : sequence of int
        Number of codes of every column of ``codes``.
    columns : sequence of int
        Indices of the columns whose joint histogram is counted, in the
        order of the output axes.
    weights : ndarray of shape (n_samples,), default=None
        Optional per-row weights (counts of 1 when omitted).

    Returns
    -------
    counts : ndarray of float, shape ``tuple(sizes[c] for c in columns)``
        ``counts[a, b, ...]`` is the (weighted) number of rows with
        ``codes[:, columns[0]] == a``, ``codes[:, columns[1]] == b``, ...
    """
    columns = list(columns)
    shape = tuple(int(sizes[c]) for c in columns)
    n_cells = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if not columns:
        total = float(len(codes)) if weights is None else float(np.sum(weights))
        return np.array(total)
    flat = np.ravel_multi_index(tuple(codes[:, c] for c in columns), shape)
    counts = np.bincount(flat, weights=weights, minlength=n_cells)
    return counts.astype(float).reshape(shape)


def project_to_simplex(values: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of a vector onto ``{x >= 0, sum(x) = total}``.

    Used to turn a noisy histogram into valid counts: the closest (in L2)
    non-negative vector with the given total.  Sort-based algorithm
    (Held, Wolfe & Crowder 1974; Duchi et al. 2008), O(k log k).

    Parameters
    ----------
    values : array-like of float
        The noisy vector (any shape; projected as a flat vector).
    total : float, default=1.0
        Required sum, ``> 0``.

    Returns
    -------
    ndarray of float, same shape as ``values``
    """
    if not total > 0:
        raise ValueError(f"total must be > 0, got {total!r}.")
    values = np.asarray(values, dtype=float)
    flat = values.ravel()
    ordered = np.sort(flat)[::-1]
    cumulative = np.cumsum(ordered) - total
    ranks = np.arange(1, flat.size + 1)
    positive = ordered - cumulative / ranks > 0
    last = np.flatnonzero(positive)[-1]
    shift = cumulative[last] / (last + 1.0)
    return np.maximum(flat - shift, 0.0).reshape(values.shape)
