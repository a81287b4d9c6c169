"""The workload-aware distance of Swanberg et al. and nearest-neighbour search.

For linear queries ``q_i(x) = sum_j psi_i(x_j)`` the distance between two
records is ``Wdist(x, c) = sum_i |psi_i(x) - psi_i(c)|``.  For a workload of
marginals (the counting queries of every cell) this is twice the number of
marginals on which ``x`` and ``c`` fall in different cells; we use the count
itself (the factor does not change nearest neighbours), weighted by the
workload's weights:

    Wdist(x, c) = sum_M w_M [x_M != c_M].

**Scaled-L1 variant** (the paper's treatment of numeric columns): a column
with ordered codes (a binned numeric column) gets a *position* in
``[0, 1]`` per code (bin ``b`` of ``B`` at ``b / (B - 1)``; a point code at
its bin's position; the missing code ``nan``).  On such columns two codes
are ``delta_j(x, c) = |pos(x_j) - pos(c_j)|`` apart (1 when exactly one is
missing, 0 when both are).  A marginal ``M`` with unordered columns ``U``
and ordered columns ``O`` then contributes

    d_M(x, c) = 1                              if x_U != c_U,
    d_M(x, c) = mean_{j in O} delta_j(x, c)    otherwise,

the scaled L1 distance of the numeric coordinates *within* the cell of the
categorical ones (0 when ``O`` is empty and the cells agree).  It is 0 iff
the records share the cell of ``M``, lies in ``[0, 1]``, never exceeds the
mismatch indicator, and equals it when no column of ``M`` is ordered: on
all-categorical tables the variant is the plain workload distance.

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
  a weighted agreement, computed the same way.  With ordered columns the
  agreement of an ordered column is the similarity ``1 - delta_j``; the
  complete 2-way workload's closeness is then a function of the summed
  categorical agreement ``A`` and the summed numeric similarity ``S`` (two
  matrix products per block, see :class:`_AgreementScorer`); complete
  ``k``-way workloads with ``k > 2`` and ordered columns use the definition.
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

__all__ = ["workload_distance", "nearest_candidates", "agreement_weights",
           "column_similarity"]

Marginal = tuple[int, ...]

#: Rows of the private table compared at once with every candidate.
ROW_BLOCK = 256


def workload_distance(rows: np.ndarray, candidates: np.ndarray,
                      workload: Sequence[tuple[Marginal, float]],
                      positions: Sequence[np.ndarray | None] | None = None) -> np.ndarray:
    """``Wdist`` between every row and every candidate (the definition).

    Parameters
    ----------
    rows : ndarray of int, shape (n_rows, n_columns)
    candidates : ndarray of int, shape (n_candidates, n_columns)
    workload : sequence of (tuple of int, float)
        Marginals (column positions) and weights.
    positions : sequence of (ndarray or None), optional
        Per column, the position in ``[0, 1]`` of every code of an ordered
        (numeric) column (``nan`` for the missing code), or None for an
        unordered one.  None everywhere (the default) is the plain mismatch
        count; otherwise ordered columns use the scaled-L1 variant.

    Returns
    -------
    ndarray of float, shape (n_rows, n_candidates)
        ``sum_M w_M d_M(rows, candidates)``.
    """
    ordered = _ordered_columns(positions, rows.shape[1])
    out = np.zeros((rows.shape[0], candidates.shape[0]))
    for marginal, weight in workload:
        differs = np.zeros(out.shape, dtype=bool)
        for j in marginal:
            if j not in ordered:
                differs |= rows[:, j][:, None] != candidates[:, j][None, :]
        numeric = [j for j in marginal if j in ordered]
        if not numeric:
            out += weight * differs
            continue
        spread = sum(1.0 - column_similarity(positions[j])[rows[:, j][:, None],
                                                            candidates[:, j][None, :]]
                     for j in numeric) / len(numeric)
        out += weight * np.where(differs, 1.0, spread)
    return out


def column_similarity(positions: np.ndarray) -> np.ndarray:
    """``1 - delta`` between every pair of codes of an ordered column.

    Parameters
    ----------
    positions : ndarray of float, shape (n_codes,)
        Positions in ``[0, 1]``; ``nan`` for the missing code.

    Returns
    -------
    ndarray of float, shape (n_codes, n_codes)
        ``1 - |pos_a - pos_b|``; a missing code is similar (1) to itself
        only.
    """
    positions = np.asarray(positions, dtype=float)
    similarity = 1.0 - np.abs(positions[:, None] - positions[None, :])
    missing = np.isnan(positions)
    similarity[missing, :] = 0.0
    similarity[:, missing] = 0.0
    similarity[np.ix_(missing, missing)] = np.eye(int(missing.sum()))
    return similarity


def _ordered_columns(positions, n_columns: int) -> set[int]:
    """Positions of the columns compared by scaled L1."""
    if positions is None:
        return set()
    if len(positions) != n_columns:
        raise ValueError(f"positions: need one entry per column ({n_columns}), got "
                         f"{len(positions)}.")
    return {j for j, p in enumerate(positions) if p is not None}


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
    positions: Sequence[np.ndarray | None] | None = None,
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
    positions : sequence of (ndarray or None), optional
        Code positions of ordered columns for the scaled-L1 variant (see
        :func:`workload_distance`); None is the plain mismatch distance.

    Returns
    -------
    ndarray of int64
        One candidate index per row, in row order.
    """
    distinct, best_member, best_priority = _distinct_candidates(candidates, priority)
    scorer = _scorer(distinct, sizes, workload, best_priority, positions)
    out = []
    for chunk in chunks:
        for start in range(0, chunk.shape[0], ROW_BLOCK):
            block = chunk[start:start + ROW_BLOCK]
            if scorer is not None:
                nearest = scorer.nearest(block)
            else:
                nearest = _pick(-workload_distance(block, distinct, workload, positions),
                                best_priority)
            out.append(best_member[nearest])
    return np.concatenate(out) if out else np.empty(0, dtype=np.int64)


def _scorer(candidates: np.ndarray, sizes: Sequence[int],
            workload: Sequence[tuple[Marginal, float]], priority: np.ndarray,
            positions) -> "_AgreementScorer | None":
    """The matrix-product scorer of a workload, or None (use the definition)."""
    symmetric = agreement_weights(workload, len(sizes))
    if symmetric is None:
        return None
    column_weights, k = symmetric
    ordered = _ordered_columns(positions, len(sizes))
    if not ordered:
        return _AgreementScorer(candidates, sizes, column_weights, priority)
    if k > 2:
        return None
    return _OrderedScorer(candidates, sizes, column_weights, priority, positions, k)


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


class _OrderedScorer(_AgreementScorer):
    """Closeness under the scaled-L1 variant, for 1-way and complete 2-way workloads.

    Per row and candidate, ``A`` is the (weighted) number of agreeing
    unordered columns and ``S`` the (weighted) sum of ``1 - delta_j`` over
    the ordered ones, both one matrix product: a row's encoding holds, for
    an ordered column, the similarity of its code to every code
    (:func:`column_similarity`) instead of a one-hot.  A 1-way workload's
    closeness is ``A + S``.  For the complete 2-way workload (unit weights,
    ``m`` ordered columns) the similarities of the pairs sum to

        A (A - 1) / 2  +  A S  +  (m - 1) S / 2

    (unordered pairs agree on both columns; a mixed pair contributes
    ``a_j (1 - delta_l)``; an ordered pair the mean of its similarities),
    which is ``C(d, 2) - Wdist``: the largest closeness is the nearest
    candidate.
    """

    def __init__(self, candidates: np.ndarray, sizes: Sequence[int],
                 column_weights: np.ndarray, priority: np.ndarray,
                 positions: Sequence[np.ndarray | None], order: int) -> None:
        super().__init__(candidates, sizes, column_weights, priority)
        self.order = order
        self.kernels = [None if p is None else column_similarity(p).astype(np.float32)
                        for p in positions]
        self.n_ordered = sum(k is not None for k in self.kernels)
        # Each side's product only spans its own columns' slots.
        self.slots = {side: np.concatenate(
            [np.arange(self.offsets[j], self.offsets[j] + sizes[j], dtype=np.int64)
             for j, kernel in enumerate(self.kernels) if (kernel is not None) == side]
            or [np.empty(0, dtype=np.int64)]) for side in (False, True)}
        self.candidate_side = {side: np.ascontiguousarray(self.candidate_hot[slots])
                               for side, slots in self.slots.items()}
        del self.candidate_hot

    def encode(self, codes: np.ndarray, ordered: bool) -> np.ndarray:
        """Weighted one-hot (unordered) or similarity rows (ordered) of one side's slots."""
        out = np.zeros((codes.shape[0], self.width), dtype=np.float32)
        rows = np.arange(codes.shape[0])
        for j, kernel in enumerate(self.kernels):
            if (kernel is not None) != ordered:
                continue
            if kernel is None:
                out[rows, self.offsets[j] + codes[:, j]] = self.weights[j]
            else:
                stop = self.offsets[j] + kernel.shape[0]
                out[:, self.offsets[j]:stop] = self.weights[j] * kernel[codes[:, j]]
        return out[:, self.slots[ordered]]

    def closeness(self, block: np.ndarray, ordered: bool) -> np.ndarray:
        """``S`` (ordered) or ``A`` (unordered) of every row and candidate."""
        return self.encode(block, ordered) @ self.candidate_side[ordered]

    def nearest(self, block: np.ndarray) -> np.ndarray:
        similarity = self.closeness(block, ordered=True)
        agreement = self.closeness(block, ordered=False)
        if self.order == 1:
            similarity += agreement
            return _pick(similarity, self.priority)
        pairs = agreement - 1.0
        pairs *= agreement
        pairs *= 0.5
        agreement += 0.5 * (self.n_ordered - 1)
        similarity *= agreement
        similarity += pairs
        return _pick(similarity, self.priority)
