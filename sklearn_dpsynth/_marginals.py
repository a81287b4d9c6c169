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

#: Rows per block of :func:`contingency_counts`: the int64 cell index is
#: built one block at a time, whatever the dtype of the codes.
COUNT_CHUNK_ROWS = 1 << 18


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
        Any integer dtype (e.g. the compact ``uint8`` codes of
        :class:`~sklearn_dpsynth.backends.NumpyTable`): the int64 cell
        index is built in blocks of ``COUNT_CHUNK_ROWS`` rows.
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
    strides = np.cumprod((1,) + shape[:0:-1], dtype=np.int64)[::-1]
    counts = np.zeros(n_cells)
    for start in range(0, len(codes), COUNT_CHUNK_ROWS):
        block = codes[start:start + COUNT_CHUNK_ROWS]
        flat = _cell_index(block, columns, shape, strides)
        block_weights = None if weights is None else weights[start:start + COUNT_CHUNK_ROWS]
        counts += np.bincount(flat, weights=block_weights, minlength=n_cells)
    return counts.reshape(shape)


def _cell_index(block: np.ndarray, columns: list, shape: tuple, strides: np.ndarray
                ) -> np.ndarray:
    """Row-major cell of every row of ``block`` (int64, one block's rows only);
    ValueError for a code outside its column's size."""
    flat = np.zeros(len(block), dtype=np.int64)
    for c, size, stride in zip(columns, shape, strides):
        column = block[:, c]
        if len(column) and (column.min() < 0 or column.max() >= size):
            raise ValueError("invalid entry in coordinates array")
        flat += column.astype(np.int64) * stride if stride != 1 else column
    return flat


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
