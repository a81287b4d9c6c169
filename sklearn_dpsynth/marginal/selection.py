"""Choosing which marginals to measure: spanning trees over the columns.

* :func:`l1_pair_scores` -- the quality of every attribute pair used by MST
  and AIM: the L1 distance between the pair's true 2-way counts and a
  model's estimate of them (sensitivity 1 under add/remove-one-row).
* :func:`private_kruskal` -- Kruskal's maximum spanning tree where each
  edge is chosen with the exponential mechanism through the ledger.
* :func:`mutual_information` and :func:`maximum_spanning_tree` -- the
  non-private Chow-Liu tree, for public data only.
"""

from __future__ import annotations

from typing import Callable, Hashable, Sequence

import numpy as np

from ..backends import EncodedTable
from ..privacy import PrivacyLedger

__all__ = ["Components", "all_pairs", "l1_pair_scores", "private_kruskal",
           "mutual_information", "maximum_spanning_tree"]


class Components:
    """Connected components of a growing graph (union-find).

    Parameters
    ----------
    n_nodes : int
        Number of nodes ``0..n_nodes-1``; initially each is alone.
    """

    def __init__(self, n_nodes: int) -> None:
        self._parent = list(range(n_nodes))
        self.n_components = n_nodes

    def find(self, node: int) -> int:
        """Representative of the component of ``node``."""
        parent = self._parent
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def union(self, a: int, b: int) -> bool:
        """Join the components of ``a`` and ``b``; whether they were apart."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self._parent[max(ra, rb)] = min(ra, rb)
        self.n_components -= 1
        return True

    def connect(self, clique: Sequence[int]) -> None:
        """Join all the nodes of ``clique``."""
        for node in clique[1:]:
            self.union(clique[0], node)

    def apart(self, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
        """Boolean mask of the pairs whose ends lie in different components."""
        return np.array([self.find(a) != self.find(b) for a, b in pairs], dtype=bool)


def all_pairs(n_columns: int) -> list[tuple[int, int]]:
    """Every pair ``(i, j)`` with ``i < j`` in lexicographic order."""
    return [(i, j) for i in range(n_columns) for j in range(i + 1, n_columns)]


def l1_pair_scores(
    table: EncodedTable,
    pairs: Sequence[tuple[int, int]],
    estimate: Callable[[tuple[int, int]], np.ndarray],
) -> np.ndarray:
    """L1 distance between each pair's true 2-way counts and an estimate.

    Adding or removing one row changes one cell of a true 2-way table by 1
    and leaves the (data-independent) estimate alone, so each score has
    sensitivity 1.  The scores are private: release them only through a
    private selection.

    Parameters
    ----------
    table : EncodedTable
        The private encoded table.
    pairs : sequence of (int, int)
        Column pairs to score.
    estimate : callable
        ``estimate((i, j))`` returns the estimated counts, shaped
        ``(table.sizes[i], table.sizes[j])``; it must not depend on the
        table.

    Returns
    -------
    ndarray of shape (len(pairs),)
    """
    scores = np.empty(len(pairs))
    for k, pair in enumerate(pairs):
        true = table.counts(pair)
        scores[k] = np.abs(true - estimate(pair)).sum()
    return scores


def private_kruskal(
    pairs: Sequence[tuple[int, int]],
    scores: np.ndarray,
    components: Components,
    rho_per_round: float,
    ledger: PrivacyLedger,
    rng: np.random.Generator,
    labels: Sequence[Hashable],
) -> list[tuple[int, int]]:
    """Grow a spanning tree with one exponential-mechanism selection per edge.

    While the graph has more than one component, the candidates are the
    pairs joining two different components; one is selected through
    ``ledger.select`` (exponential mechanism, sensitivity 1, zCDP cost
    ``rho_per_round``) and its components are merged.  This is Kruskal's
    algorithm for the maximum spanning tree with every greedy choice made
    privately.  A round with a single candidate takes it without spending
    anything: which pairs are candidates depends only on earlier (private)
    selections.

    Parameters
    ----------
    pairs : sequence of (int, int)
        Candidate edges.
    scores : ndarray of shape (len(pairs),)
        Private quality of every candidate (sensitivity 1).
    components : Components
        The graph to connect (modified in place); e.g. with the columns of
        initial cliques already joined.
    rho_per_round : float
        zCDP cost of each selection.
    ledger : PrivacyLedger
        Records every selection.
    rng : numpy.random.Generator
        Randomness of the selections.
    labels : sequence of hashable
        Column names, for the ledger targets.

    Returns
    -------
    list of (int, int)
        Selected edges, in selection order.
    """
    scores = np.asarray(scores, dtype=float)
    n_rounds = components.n_components - 1
    chosen = []
    for round_ in range(n_rounds):
        candidates = np.flatnonzero(components.apart(pairs))
        if candidates.size == 0:
            raise ValueError("pairs cannot connect every component.")
        pick = 0 if candidates.size == 1 else ledger.select(
            scores[candidates], rho=rho_per_round, rng=rng,
            target=f"spanning-tree edge {round_ + 1}/{n_rounds}")
        edge = tuple(pairs[candidates[pick]])
        components.union(*edge)
        chosen.append(edge)
    return chosen


def mutual_information(table: EncodedTable, pair: tuple[int, int]) -> float:
    """Empirical mutual information (nats) of two columns.

    Parameters
    ----------
    table : EncodedTable
        An encoded table (never the private one: this is not private).
    pair : (int, int)
        The two columns.

    Returns
    -------
    float
    """
    joint = table.counts(pair)
    total = joint.sum()
    if total <= 0:
        return 0.0
    joint = joint / total
    outer = joint.sum(axis=1, keepdims=True) * joint.sum(axis=0, keepdims=True)
    present = joint > 0
    return float(np.sum(joint[present] * np.log(joint[present] / outer[present])))


def maximum_spanning_tree(
    pairs: Sequence[tuple[int, int]], scores: np.ndarray, components: Components
) -> list[tuple[int, int]]:
    """Kruskal's maximum spanning tree (deterministic: ties by pair order).

    Parameters
    ----------
    pairs : sequence of (int, int)
        Candidate edges.
    scores : ndarray of shape (len(pairs),)
        Edge weights (public).
    components : Components
        The graph to connect (modified in place).

    Returns
    -------
    list of (int, int)
        Edges added, in decreasing weight.
    """
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    chosen = []
    for k in order:
        if components.union(*pairs[k]):
            chosen.append(tuple(pairs[k]))
    return chosen
