"""The workload-aware distance of Swanberg et al. and nearest-neighbour search.

For linear queries ``q_i(x) = sum_j psi_i(x_j)`` the distance between two
records is ``Wdist(x, c) = sum_i |psi_i(x) - psi_i(c)|``.  For a workload of
marginals (the counting queries of every cell) this is twice the number of
marginals on which ``x`` and ``c`` fall in different cells; we use the count
itself (the factor does not change nearest neighbours), weighted by the
workload's weights:

    Wdist(x, c) = sum_M w_M [x_M != c_M].

Two computations:

* :func:`workload_distance` -- the definition, vectorised marginal by
  marginal (any workload);
* :func:`nearest_candidates` -- the index of the nearest candidate of every
  row, in chunks.  When the workload is *column-symmetric* (every
  ``k``-subset of the columns, equal weights, e.g. all 2-way marginals) the
  distance is ``C(d, k) - C(a, k)`` with ``a`` the number of columns on
  which the records agree, a decreasing function of ``a``: the nearest
  candidate maximises the agreement, computed as a product of one-hot
  matrices (one BLAS call per chunk).  1-way workloads with any weights are
  a weighted agreement, computed the same way.
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

__all__ = ["workload_distance", "nearest_candidates", "agreement_weights"]

Marginal = tuple[int, ...]

#: Rows of the private table compared at once with every candidate.
ROW_BLOCK = 256


def workload_distance(rows: np.ndarray, candidates: np.ndarray,
                      workload: Sequence[tuple[Marginal, float]]) -> np.ndarray:
    """``Wdist`` between every row and every candidate (the definition).

    Parameters
    ----------
    rows : ndarray of int, shape (n_rows, n_columns)
    candidates : ndarray of int, shape (n_candidates, n_columns)
    workload : sequence of (tuple of int, float)
        Marginals (column positions) and weights.

    Returns
    -------
    ndarray of float, shape (n_rows, n_candidates)
        ``sum_M w_M [rows_M != candidates_M]``.
    """
    out = np.zeros((rows.shape[0], candidates.shape[0]))
    for marginal, weight in workload:
        differs = np.zeros(out.shape, dtype=bool)
        for j in marginal:
            differs |= rows[:, j][:, None] != candidates[:, j][None, :]
        out += weight * differs
    return out


def agreement_weights(workload: Sequence[tuple[Marginal, float]],
                      n_columns: int) -> tuple[np.ndarray, int] | None:
    """Column weights and order ``k`` when the distance is a function of the agreement.

    Returns ``(column_weights, k)`` for a 1-way workload (any weights; the
    distance is ``sum w - sum_j w_j [x_j = c_j]``) or for the complete
    ``k``-way workload over all columns with equal weights; None otherwise.
    """
    sizes = {len(m) for m, _ in workload}
    if len(sizes) != 1:
        return None
    k = sizes.pop()
    if k == 1:
        weights = np.zeros(n_columns)
        for (j,), w in workload:
            weights[j] += w
        return weights, 1
    keys = {tuple(sorted(m)) for m, _ in workload}
    equal = len({w for _, w in workload}) == 1
    if equal and len(keys) == len(workload) == math.comb(n_columns, k):
        if keys == set(itertools.combinations(range(n_columns), k)):
            return np.ones(n_columns), k
    return None


def nearest_candidates(
    chunks,
    candidates: np.ndarray,
    sizes: Sequence[int],
    workload: Sequence[tuple[Marginal, float]],
    priority: np.ndarray,
) -> np.ndarray:
    """Index of the nearest candidate (under ``Wdist``) of every row.

    Ties are broken by ``priority`` (higher wins), a public random order of
    the candidates, so that tied rows do not all vote for the first one.

    Parameters
    ----------
    chunks : iterable of ndarray of int
        Blocks of rows (e.g. ``table.iter_chunks()``).
    candidates : ndarray of int, shape (n_candidates, n_columns)
    sizes : sequence of int
        Number of codes of every column.
    workload : sequence of (tuple of int, float)
        Marginals and weights of the distance.
    priority : ndarray of shape (n_candidates,)
        Tie-breaking order in ``[0, 1)``: among equally near candidates the
        largest wins.

    Returns
    -------
    ndarray of int64
        One candidate index per row, in row order.
    """
    distinct, best_member, best_priority = _distinct_candidates(candidates, priority)
    symmetric = agreement_weights(workload, len(sizes))
    if symmetric is not None:
        scorer = _AgreementScorer(distinct, sizes, symmetric[0], best_priority)
    out = []
    for chunk in chunks:
        for start in range(0, chunk.shape[0], ROW_BLOCK):
            block = chunk[start:start + ROW_BLOCK]
            if symmetric is not None:
                nearest = scorer.nearest(block)
            else:
                nearest = _pick(-workload_distance(block, distinct, workload), best_priority)
            out.append(best_member[nearest])
    return np.concatenate(out) if out else np.empty(0, dtype=np.int64)


def _distinct_candidates(candidates: np.ndarray, priority: np.ndarray):
    """Distinct candidate rows, each with its member of highest priority.

    Equal candidates are equally near every row, so the nearest candidate of
    highest priority is the top-priority member of the nearest distinct row
    of highest (member) priority: searching the distinct rows gives the same
    answer for less work (e.g. bootstraps of a small public table).
    """
    distinct, group = np.unique(candidates, axis=0, return_inverse=True)
    group = group.ravel()
    order = np.lexsort((priority, group))  # by group, then priority ascending
    last = np.r_[group[order][1:] != group[order][:-1], True]
    best_member = order[last]
    return distinct, best_member, priority[best_member]


class _AgreementScorer:
    """Weighted column agreements with every candidate, as one matrix product.

    With equal column weights ``w`` agreements are multiples of ``w``, so the
    tie-breaking ``priority`` (in ``[0, 1)``) enters the product itself as an
    extra column worth ``0.45 w * priority``: one ``argmax`` then finds the
    nearest candidate of highest priority.  Other weights use :func:`_pick`.
    """

    def __init__(self, candidates: np.ndarray, sizes: Sequence[int],
                 column_weights: np.ndarray, priority: np.ndarray) -> None:
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.width = int(np.sum(sizes)) + 1
        self.weights = np.asarray(column_weights, dtype=float)
        self.priority = priority
        self.exact = bool(np.all(self.weights == self.weights[0]) and self.weights[0] > 0)
        hot = self.one_hot(candidates, np.ones(len(sizes)))
        hot[:, -1] = 0.45 * self.weights[0] * priority if self.exact else 0.0
        self.candidate_hot = np.ascontiguousarray(hot.T)

    def one_hot(self, codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Float32 rows: ``weights[j]`` at column ``j``'s code, 1 in the last slot."""
        out = np.zeros((codes.shape[0], self.width), dtype=np.float32)
        rows = np.arange(codes.shape[0])
        for j in range(codes.shape[1]):
            out[rows, self.offsets[j] + codes[:, j]] = weights[j]
        out[:, -1] = 1.0
        return out

    def nearest(self, block: np.ndarray) -> np.ndarray:
        closeness = self.one_hot(block, self.weights) @ self.candidate_hot
        if self.exact:
            return np.argmax(closeness, axis=1)
        return _pick(closeness, self.priority)


def _pick(closeness: np.ndarray, priority: np.ndarray) -> np.ndarray:
    """Per row, the candidate of highest priority among the closest ones.

    Closeness values within ``1e-5`` (relative) of the row's best count as
    ties (float32 sums of weights are exact for integer weights).
    """
    best = closeness.max(axis=1, keepdims=True)
    tied = closeness >= best - 1e-5 * (1.0 + np.abs(best))
    return np.argmax(np.where(tied, priority.astype(np.float32)[None, :], np.float32(-1.0)),
                     axis=1)
