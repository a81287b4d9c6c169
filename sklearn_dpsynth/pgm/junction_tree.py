"""Junction trees of a set of cliques over a discrete domain.

The model graph joins every pair of attributes that share a clique (every
domain attribute is a node, so isolated attributes become singleton
cliques).  It is triangulated by greedy elimination (fewest fill-in edges,
ties broken by the smallest product of sizes, then by domain order), the
maximal elimination cliques become the nodes of the tree, and a maximum
spanning tree on the number of shared attributes (Kruskal, deterministic
tie-breaking) links them.  Everything is keyed by the attributes' positions
in the domain, never by string hashes, so the tree is reproducible.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Sequence

from .domain import ModelDomain, require_model_domain

if TYPE_CHECKING:  # inference imports this module
    from .inference import MessagePlan, ReductionPlan

__all__ = ["JunctionTree", "model_size", "model_size_mb", "validate_cliques"]


def validate_cliques(
    domain: ModelDomain, cliques: Iterable[Sequence[str]], name: str = "cliques"
) -> list[tuple[str, ...]]:
    """Check cliques against a domain.

    Parameters
    ----------
    domain : ModelDomain
        The domain.
    cliques : iterable of sequence of str
        Cliques (tuples of distinct attribute names of the domain).
    name : str, default="cliques"
        Parameter name used in error messages.

    Returns
    -------
    cliques : list of tuple of str
        The cliques as tuples, in their original order.
    """
    if isinstance(cliques, (str, bytes)):
        raise ValueError(f"{name} must be an iterable of attribute tuples")
    out = []
    for clique in cliques:
        if isinstance(clique, str):
            raise ValueError(f"{name} must contain tuples of attributes, got {clique!r}")
        clique = tuple(clique)
        unknown = [a for a in clique if a not in domain]
        if unknown:
            raise ValueError(f"{name} has attributes {unknown} not in the domain")
        if len(set(clique)) != len(clique):
            raise ValueError(f"{name} has a clique with repeated attributes: {clique}")
        out.append(clique)
    return out


def _adjacency(n_nodes: int, cliques: list[tuple[int, ...]]) -> list[set[int]]:
    """Neighbour sets of the model graph."""
    adjacency: list[set[int]] = [set() for _ in range(n_nodes)]
    for clique in cliques:
        for u in clique:
            adjacency[u].update(clique)
            adjacency[u].discard(u)
    return adjacency


def _fill_in(adjacency: list[set[int]], v: int) -> int:
    """Number of missing edges among the neighbours of ``v``.

    Each neighbour ``u`` misses ``deg - 1 - |N(u) & N(v)|`` of the others;
    the adjacency is symmetric, so the sum counts every missing edge twice.
    """
    nbrs = adjacency[v]
    others = len(nbrs) - 1
    return sum(others - len(adjacency[u] & nbrs) for u in nbrs) // 2


def _elimination_score(adjacency: list[set[int]], sizes: Sequence[int], v: int) -> tuple:
    """Greedy key of ``v``: fill-in edges, then clique weight, then index."""
    return _fill_in(adjacency, v), math.prod(sizes[u] for u in adjacency[v]) * sizes[v], v


def _elimination_cliques(sizes: Sequence[int], cliques: list[tuple[int, ...]]) -> list[frozenset]:
    """Cliques created by greedy min-fill / min-weight elimination.

    Scores are recomputed only for the vertices whose neighbourhood changed
    (the eliminated vertex's neighbours and their neighbours).
    """
    adjacency = _adjacency(len(sizes), cliques)
    scores = {v: _elimination_score(adjacency, sizes, v) for v in range(len(sizes))}
    created: list[frozenset] = []
    while scores:
        best = min(scores.values())[2]
        nbrs = adjacency[best]
        created.append(frozenset(nbrs | {best}))
        for u in nbrs:
            adjacency[u].update(nbrs)
            adjacency[u].discard(u)
            adjacency[u].discard(best)
        del scores[best]
        adjacency[best] = set()
        affected = set(nbrs).union(*(adjacency[u] for u in nbrs)) if nbrs else set()
        for w in affected:
            scores[w] = _elimination_score(adjacency, sizes, w)
    return created


def _maximal(created: list[frozenset]) -> list[tuple[int, ...]]:
    """Maximal sets among the elimination cliques, as sorted tuples, sorted."""
    unique = sorted(set(created), key=lambda c: (-len(c), sorted(c)))
    kept: list[frozenset] = []
    for clique in unique:
        if not any(clique <= other for other in kept):
            kept.append(clique)
    return sorted(tuple(sorted(c)) for c in kept)


def _canonical_rank(domain: ModelDomain) -> dict[str, tuple[int, int]]:
    """Sort key of the canonical attribute order: by size, then domain order.

    Clique tables put their largest attributes last, so that most
    reductions run over long contiguous blocks.
    """
    return {a: (size, k) for k, (a, size) in enumerate(zip(domain.attributes, domain.shape))}


def _triangulate(domain: ModelDomain, cliques: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Maximal cliques (attributes in canonical order) of the triangulation."""
    names = domain.attributes
    rank = _canonical_rank(domain)
    coded = [domain.axes(c) for c in cliques]
    maximal = _maximal(_elimination_cliques(domain.shape, coded))
    return [tuple(sorted((names[i] for i in c), key=rank.__getitem__)) for c in maximal]


def model_size(domain: ModelDomain, cliques: Iterable[Sequence[str]]) -> int:
    """Number of cells of the junction tree a set of cliques would produce.

    Parameters
    ----------
    domain : ModelDomain
        Attribute sizes.
    cliques : iterable of sequence of str
        Cliques of the model.

    Returns
    -------
    cells : int
        Sum over the maximal cliques of the product of their sizes.
    """
    domain = require_model_domain(domain)
    maximal = _triangulate(domain, validate_cliques(domain, cliques))
    return sum(domain.size(c) for c in maximal)


def model_size_mb(domain: ModelDomain, cliques: Iterable[Sequence[str]]) -> float:
    """Memory of the potentials of a model in MiB (8 bytes per cell).

    Parameters
    ----------
    domain : ModelDomain
        Attribute sizes.
    cliques : iterable of sequence of str
        Cliques of the model.

    Returns
    -------
    size : float
        ``model_size(domain, cliques) * 8 / 2**20``.
    """
    return model_size(domain, cliques) * 8 / 2**20


def _spanning_tree(maximal: list[tuple[str, ...]]) -> list[tuple[int, int]]:
    """Kruskal maximum spanning tree on the number of shared attributes."""
    candidates = []
    for i in range(len(maximal)):
        for j in range(i + 1, len(maximal)):
            shared = len(set(maximal[i]) & set(maximal[j]))
            candidates.append((-shared, i, j))
    candidates.sort()
    parent = list(range(len(maximal)))

    def root(u: int) -> int:
        while parent[u] != u:
            parent[u] = parent[parent[u]]
            u = parent[u]
        return u

    edges = []
    for _, i, j in candidates:
        ri, rj = root(i), root(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
            edges.append((i, j))
    return edges


class JunctionTree:
    """Junction tree of the triangulated model graph of a clique set.

    Parameters
    ----------
    domain : ModelDomain
        Attribute sizes; every attribute is part of the tree.
    cliques : iterable of sequence of str
        Cliques of the model (e.g. measured marginals).

    Attributes
    ----------
    domain : ModelDomain
        The domain.
    cliques : list of tuple of str
        Maximal cliques, attributes in the canonical order (by size, then
        domain order; see :meth:`sort`); index ``0`` is the root.
    edges : list of tuple of (tuple of str, tuple of str)
        Tree edges ``(parent, child)``.
    order : list of int
        Clique indices in breadth-first order from the root (belief
        propagation sends messages up in reverse order, then down).
    parent : list of int
        Parent index of every clique (``-1`` for the root).
    """

    #: Caches of :mod:`sklearn_dpsynth.pgm.inference`, built on first use
    #: (None until then): the message-passing plan and the separators'
    #: reduction plan of this tree.
    _message_plan: MessagePlan | None = None
    _separator_plan: ReductionPlan | None = None

    def __init__(self, domain: ModelDomain, cliques: Iterable[Sequence[str]]) -> None:
        self.domain = require_model_domain(domain)
        self.input_cliques = validate_cliques(self.domain, cliques)
        self.cliques: list[tuple[str, ...]] = _triangulate(self.domain, self.input_cliques)
        self._cells = [self.domain.size(c) for c in self.cliques]
        self._rank = _canonical_rank(self.domain)
        tree_edges = _spanning_tree(self.cliques)
        self._neighbors: list[list[int]] = [[] for _ in self.cliques]
        for i, j in tree_edges:
            self._neighbors[i].append(j)
            self._neighbors[j].append(i)
        for nbrs in self._neighbors:
            nbrs.sort()
        self.order, self.parent = self._breadth_first()
        self.edges = [(self.cliques[self.parent[i]], self.cliques[i])
                      for i in self.order[1:]]

    def _breadth_first(self) -> tuple[list[int], list[int]]:
        """Breadth-first order and parents from clique 0."""
        parent = [-1] * len(self.cliques)
        order = [0]
        seen = {0}
        for i in order:
            for j in self._neighbors[i]:
                if j not in seen:
                    seen.add(j)
                    parent[j] = i
                    order.append(j)
        return order, parent

    def __repr__(self) -> str:
        return f"JunctionTree(n_cliques={len(self.cliques)}, size={self.size})"

    @property
    def size(self) -> int:
        """Number of cells of all maximal cliques."""
        return sum(self._cells)

    @property
    def size_mb(self) -> float:
        """Memory of the potentials in MiB (8 bytes per cell)."""
        return self.size * 8 / 2**20

    def sort(self, attrs: Iterable[str]) -> tuple[str, ...]:
        """Attributes in the canonical order of the clique tables.

        Parameters
        ----------
        attrs : iterable of str
            Attributes of the domain.

        Returns
        -------
        attrs : tuple of str
        """
        try:
            return tuple(sorted(set(attrs), key=self._rank.__getitem__))
        except KeyError as unknown:
            raise ValueError(f"attrs has attribute {unknown} not in the domain") from None

    def neighbor_indices(self, i: int) -> list[int]:
        """Indices of the cliques adjacent to clique ``i``.

        Parameters
        ----------
        i : int
            Clique index.

        Returns
        -------
        indices : list of int
        """
        return list(self._neighbors[i])

    def index_containing(self, attrs: Iterable[str]) -> int | None:
        """Index of the smallest maximal clique that covers some attributes.

        Parameters
        ----------
        attrs : iterable of str
            Attributes of the domain.

        Returns
        -------
        index : int or None
            The covering maximal clique with the fewest cells (first in
            ``cliques`` on ties), or ``None`` when none covers ``attrs``.
        """
        wanted = set(self.sort(attrs))
        best, best_cells = None, None
        for i, clique in enumerate(self.cliques):
            if wanted.issubset(clique):
                cells = self._cells[i]
                if best is None or cells < best_cells:
                    best, best_cells = i, cells
        return best
