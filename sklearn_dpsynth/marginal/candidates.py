"""AIM's candidate selection (AIM and JAM): size filter and workload-aware scores.

:class:`CandidateScorer` holds the candidates, their weights and a lazy
cache of the private table's marginals (each counted once, the first time
a candidate is scored).  Scores are private; they must only be released
through ``ledger.select``.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from ..backends import EncodedTable
from ..pgm import GraphicalModel, JunctionTree, model_size_mb
from .workload import n_cells

__all__ = ["CandidateScorer", "largest_model_size_mb"]

Marginal = tuple[int, ...]

#: ``E|N(0, s^2)| = s * sqrt(2 / pi)``: expected L1 noise per cell.
_ABS_NOISE = math.sqrt(2.0 / math.pi)


class CandidateScorer:
    """Candidates of an AIM run and their scores against a model.

    Parameters
    ----------
    table : EncodedTable
        The private encoded table.
    weights : dict of tuple of int to float
        Candidate marginals (sorted positions) and their weights.
    names : sequence of str
        Model attribute name of every column position.
    """

    def __init__(self, table: EncodedTable, weights: Mapping[Marginal, float],
                 names: Sequence[str]) -> None:
        self._table = table
        self.sizes = table.sizes
        self.weights = dict(weights)
        self.names = list(names)
        self._true: dict[Marginal, np.ndarray] = {}
        self._sizes_cache: tuple[tuple, dict[Marginal, float]] = ((), {})

    def clique(self, marginal: Marginal) -> tuple[str, ...]:
        """Model attribute names of a marginal."""
        return tuple(self.names[j] for j in marginal)

    def true_counts(self, marginal: Marginal) -> np.ndarray:
        """Flattened counts of a marginal of the private table (cached)."""
        if marginal not in self._true:
            self._true[marginal] = self._table.counts(marginal).ravel()
        return self._true[marginal]

    def grown_size_mb(self, tree: JunctionTree, marginal: Marginal) -> float:
        """Model size (MiB) if ``marginal`` were added to ``tree``.

        Cached for as long as the tree's maximal cliques stay the same (a
        covered selection leaves them unchanged).
        """
        key, cache = self._sizes_cache
        if key != tuple(tree.cliques):
            cache = {}
            self._sizes_cache = (tuple(tree.cliques), cache)
        if marginal not in cache:
            clique = self.clique(marginal)
            if tree.index_containing(clique) is not None:
                cache[marginal] = tree.size_mb
            else:
                cache[marginal] = model_size_mb(tree.domain, list(tree.cliques) + [clique])
        return cache[marginal]

    def eligible(self, tree: JunctionTree, limit_mb: float) -> list[Marginal]:
        """Candidates covered by ``tree`` or whose addition stays within ``limit_mb``.

        Parameters
        ----------
        tree : JunctionTree
            The current model's tree.
        limit_mb : float
            Size cap of the grown model in MiB.

        Returns
        -------
        list of tuple of int
            Never empty: every 1-way marginal is covered by any model.
            Once ``limit_mb`` is at least :func:`largest_model_size_mb` of the
            tree's domain, every candidate, without triangulating the grown
            trees (the same list, in the same order).
        """
        if limit_mb >= largest_model_size_mb(tree.domain.shape):
            return list(self.weights)
        out = []
        for marginal in self.weights:
            covered = tree.index_containing(self.clique(marginal)) is not None
            if covered or self.grown_size_mb(tree, marginal) <= limit_mb:
                out.append(marginal)
        return out

    def model_counts(self, model: GraphicalModel, marginal: Marginal) -> np.ndarray:
        """Flattened counts of a marginal under the model."""
        return model.marginal(self.clique(marginal)).ravel()

    def scores(self, model: GraphicalModel, candidates: Sequence[Marginal],
               sigma: float) -> tuple[np.ndarray, float, dict[Marginal, np.ndarray]]:
        """AIM's quality scores of the candidates (private).

        ``w_C * (||M_C(D) - M_C(model)||_1 - sqrt(2/pi) * sigma * n_cells(C))``:
        the error of the model on ``C`` minus the error that measuring ``C``
        at ``sigma`` would itself leave, weighted by the workload.

        Parameters
        ----------
        model : GraphicalModel
            The current model (post-processing of earlier releases).
        candidates : sequence of tuple of int
            Candidates to score.
        sigma : float
            Noise scale of the coming measurement.

        Returns
        -------
        scores : ndarray
            One score per candidate.
        sensitivity : float
            ``max w_C`` over the candidates: adding or removing a row moves
            ``||M_C(D) - M_C(model)||_1`` by at most 1, so score ``C`` by at
            most ``w_C``.
        answers : dict
            The model's counts of every candidate (for annealing): those of
            :meth:`model_counts`, up to float rounding, read in shared passes
            over the model's beliefs
            (:meth:`sklearn_dpsynth.pgm.GraphicalModel.marginals`).
        """
        scores = np.empty(len(candidates))
        counts = model.marginals([self.clique(marginal) for marginal in candidates])
        answers = {}
        for k, marginal in enumerate(candidates):
            answers[marginal] = counts[k].ravel()
            error = np.abs(self.true_counts(marginal) - answers[marginal]).sum()
            penalty = _ABS_NOISE * sigma * n_cells(self.sizes, marginal)
            scores[k] = self.weights[marginal] * (error - penalty)
        sensitivity = max(self.weights[m] for m in candidates)
        return scores, sensitivity, answers


def largest_model_size_mb(sizes: Sequence[int]) -> float:
    """An upper bound (MiB, 8 bytes a cell) on the size of any junction tree over ``sizes``.

    The engine's trees come from an elimination order ``v_1, ..., v_d``:
    the clique created when ``v_i`` is eliminated holds only ``v_i`` and
    vertices not yet eliminated, so it has at most ``P / prod_{j<i} s(v_j)``
    cells, ``P`` being the product of all sizes; the maximal cliques are
    among the created ones.  The denominators are smallest when the
    smallest columns are eliminated first, hence the bound
    ``sum_i P / (product of the i smallest sizes)`` (about ``2 P`` when
    every column has two codes or more), whatever the cliques.

    Parameters
    ----------
    sizes : sequence of int
        Number of codes of every attribute.

    Returns
    -------
    float
    """
    ascending = sorted(int(s) for s in sizes)
    remaining, cells = math.prod(ascending), 0
    for size in ascending:
        cells += remaining
        remaining //= size
    return cells * 8 / 2**20 if cells.bit_length() < 1000 else math.inf
