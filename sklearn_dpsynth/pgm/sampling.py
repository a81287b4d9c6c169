"""Generating rows from a calibrated junction-tree model.

Two generators walk the tree from the root clique in breadth-first order,
so that when a clique is reached the attributes it shares with its parent
are already generated and separate its new attributes from everything
generated before:

* :func:`sample_iid` draws every row independently (exact ancestral
  sampling): the root clique from its belief, then each clique's new
  attributes from their conditional given the separator.
* :func:`sample_lowvar` is the low-variance generator of the NIST-contest
  paper (McKenna, Miklau, Sheldon, appendix Algorithms 7 and 8): one
  attribute at a time, the rows sharing the values of the attribute's
  already generated clique-mates receive ``floor(group_size * p)`` copies of
  each value plus the fractional remainders drawn without replacement,
  dealt out evenly over the group's rows sorted by the other attributes
  generated so far (systematic rather than random order, which lowers the
  sampling noise of unmeasured marginals).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from .inference import CalibratedBeliefs
from .junction_tree import JunctionTree

__all__ = ["sample_iid", "sample_lowvar", "lowvar_counts"]

_CHUNK_CELLS = 1 << 22


def _conditional_table(
    beliefs: CalibratedBeliefs, parents: tuple[str, ...], children: tuple[str, ...]
) -> np.ndarray:
    """Rows ``P(children | parents)`` as a (parent cells, child cells) array.

    Parent configurations of zero probability get a uniform row.
    """
    joint = beliefs.marginal(parents + children)
    n_children = int(np.prod(joint.shape[len(parents):], dtype=np.int64))
    table = joint.reshape(-1, n_children)
    norm = table.sum(axis=1, keepdims=True)
    uniform = np.full_like(table, 1.0 / n_children)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, table / np.where(norm > 0, norm, 1.0), uniform)


def _parent_index(
    data: np.ndarray, columns: list[int], shape: tuple[int, ...]
) -> np.ndarray:
    """Flat index of the already generated parent values of every row."""
    if not columns:
        return np.zeros(data.shape[0], dtype=np.int64)
    return np.ravel_multi_index(tuple(data[:, c] for c in columns), shape)


def _draw_conditional(
    table: np.ndarray, index: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """One inverse-CDF draw per row from row ``index`` of ``table``."""
    n_rows, n_values = table.shape
    cdf = np.cumsum(table, axis=1)
    cdf[:, -1] = 1.0
    cdf += np.arange(n_rows)[:, None]
    target = index + rng.random(index.shape[0])
    pos = np.searchsorted(cdf.ravel(), target, side="right")
    return np.minimum(pos - index * n_values, n_values - 1)


def _walk(tree: JunctionTree) -> Iterator[tuple[int, tuple[str, ...], tuple[str, ...]]]:
    """Yield ``(clique index, already generated attrs, new attrs)`` from the root."""
    for i in tree.order:
        clique = tree.cliques[i]
        parent = tree.parent[i]
        known = set(tree.cliques[parent]) if parent >= 0 else set()
        yield (i, tuple(a for a in clique if a in known),
               tuple(a for a in clique if a not in known))


def sample_iid(
    tree: JunctionTree, beliefs: CalibratedBeliefs, n: int, rng: np.random.Generator
) -> np.ndarray:
    """Independent rows by ancestral sampling along the junction tree.

    Parameters
    ----------
    tree : JunctionTree
        The junction tree of the model.
    beliefs : CalibratedBeliefs
        Calibrated marginals of the model.
    n : int
        Number of rows.
    rng : numpy.random.Generator
        Randomness source.

    Returns
    -------
    data : ndarray of shape (n, n_attributes), int64
    """
    column = {a: k for k, a in enumerate(tree.domain)}
    data = np.zeros((n, len(column)), dtype=np.int64)
    for _, known, new in _walk(tree):
        if not new:
            continue
        table = _conditional_table(beliefs, known, new)
        parents = _parent_index(data, [column[a] for a in known],
                                tuple(tree.domain[a] for a in known))
        draws = _draw_conditional(table, parents, rng)
        values = np.unravel_index(draws, tuple(tree.domain[a] for a in new))
        for a, v in zip(new, values):
            data[:, column[a]] = v
    return data


def lowvar_counts(
    sizes: np.ndarray, probs: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Integer counts per group with low-variance rounding.

    Parameters
    ----------
    sizes : ndarray of shape (n_groups,), int
        Number of rows of every group.
    probs : ndarray of shape (n_groups, n_values)
        Distribution of the values in every group (rows sum to one).
    rng : numpy.random.Generator
        Randomness source.

    Returns
    -------
    counts : ndarray of shape (n_groups, n_values), int64
        ``floor(size * p)`` plus one for ``size - sum(floor)`` values per
        group drawn without replacement with probability proportional to
        the fractional parts (Efraimidis-Spirakis keys); rows sum to
        ``sizes``.
    """
    expected = sizes[:, None] * probs
    counts = np.floor(expected).astype(np.int64)
    frac = expected - counts
    _trim_excess(counts, sizes)
    missing = sizes - counts.sum(axis=1)
    with np.errstate(divide="ignore"):
        keys = np.where(frac > 0, np.log(rng.random(frac.shape)) / np.where(frac > 0, frac, 1.0),
                        -np.inf)
    order = np.argsort(-keys, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(order.shape[1])[None, :], axis=1)
    counts += rank < missing[:, None]
    return counts


def _trim_excess(counts: np.ndarray, sizes: np.ndarray) -> None:
    """Remove counts above a group's size (floating-point excess), in place."""
    excess = counts.sum(axis=1) - sizes
    for g in np.flatnonzero(excess > 0):
        while counts[g].sum() > sizes[g]:
            counts[g, np.argmax(counts[g])] -= 1


def _parent_groups(parents: np.ndarray,
                   n_cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(parents, return_inverse=True, return_counts=True)``, by counting
    when the parents' flat index is small (no sort)."""
    if n_cells <= max(4 * parents.shape[0], 1 << 16):
        sizes = np.bincount(parents, minlength=n_cells)
        groups = np.flatnonzero(sizes)
        lookup = np.zeros(n_cells, dtype=np.int64)
        lookup[groups] = np.arange(groups.size)
        return groups, lookup[parents], sizes[groups]
    groups, inverse, sizes = np.unique(parents, return_inverse=True, return_counts=True)
    return groups, inverse.ravel(), sizes


def _lowvar_column(
    table: np.ndarray,
    parents: np.ndarray,
    rng: np.random.Generator,
    context: "_Context",
) -> np.ndarray:
    """Values of one attribute for all rows, grouped by parent values.

    Within a group the values are dealt out *evenly* over the rows sorted by
    the attributes generated earlier (``context``; the parents are constant
    within a group, so this is the order of the non-parents): the model makes the attribute independent of them given
    its parents, and spreading each value evenly across them reproduces
    that independence with less sampling noise than a random shuffle.
    Rows equal on every generated attribute are interchangeable, so they
    are ordered arbitrarily here and :func:`sample_lowvar` shuffles the
    finished rows.
    """
    n_values = table.shape[1]
    groups, inverse, sizes = _parent_groups(parents, table.shape[0])
    step = max(1, _CHUNK_CELLS // n_values)
    pieces = []
    for start in range(0, len(groups), step):
        stop = start + step
        counts = lowvar_counts(sizes[start:stop], table[groups[start:stop]], rng)
        pieces.append(_interleave(counts, rng))
    values = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    out = np.empty(parents.shape[0], dtype=np.int64)
    out[context.sorted_rows(inverse, len(groups))] = values
    return out


class _Context:
    """The rows in order of every attribute generated so far.

    ``order`` lists the rows sorted lexicographically by the generated
    attributes, the most recently generated one most significant: appending
    an attribute is one stable sort of ``order`` by the new values, and
    sorting by (parent group, order) is one stable sort by the group, both
    radix sorts of 16-bit keys (linear time) whenever the number of values
    fits, instead of a comparison sort over a key of every earlier
    attribute.
    """

    def __init__(self, n_rows: int) -> None:
        self.order = np.arange(n_rows)

    def append(self, values: np.ndarray, size: int) -> None:
        self.order = self.order[_stable_argsort(values[self.order], size)]

    def sorted_rows(self, group: np.ndarray, n_groups: int) -> np.ndarray:
        """Rows sorted by (group, order); tied rows are equal on every generated
        attribute, so their order is immaterial (the caller shuffles the rows)."""
        if n_groups == 1:
            return self.order
        return self.order[_stable_argsort(group[self.order], n_groups)]


def _stable_argsort(keys: np.ndarray, bound: int) -> np.ndarray:
    """``argsort(keys, kind="stable")`` of keys in ``0..bound-1`` (radix for 16 bits)."""
    if bound <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    return np.argsort(keys, kind="stable")


def _interleave(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each group's values in an evenly interleaved order.

    The ``k``-th copy of a value with ``c`` copies gets the key
    ``(k + u) / c`` (``u`` uniform, one per group and value); sorting a
    group's copies by key spreads every value evenly along the group
    (systematic sampling).  Groups follow each other in order.  The keys
    are sorted as 32-bit fixed-point fractions, least significant digit
    first: two stable 16-bit radix passes over the fraction, then one over
    the group (the copies are laid out group by group, so a stable sort by
    fraction followed by a stable sort by group orders both at once).
    """
    n_groups, n_values = counts.shape
    flat = counts.ravel()
    values = np.repeat(np.tile(np.arange(n_values), n_groups), flat)
    starts = np.cumsum(flat) - flat
    copy = np.arange(values.size) - np.repeat(starts, flat)
    offset = np.repeat(rng.random(flat.size), flat)
    fraction = (copy + offset) / np.repeat(np.maximum(flat, 1), flat)
    fixed = np.minimum(fraction * 2.0 ** 32, 2.0 ** 32 - 1).astype(np.uint64)
    order = np.argsort((fixed & 0xFFFF).astype(np.uint16), kind="stable")
    order = order[np.argsort((fixed[order] >> 16).astype(np.uint16), kind="stable")]
    if n_groups > 1:
        group = np.repeat(np.repeat(np.arange(n_groups), n_values), flat)
        order = order[_stable_argsort(group[order], n_groups)]
    return values[order]


def sample_lowvar(
    tree: JunctionTree, beliefs: CalibratedBeliefs, n: int, rng: np.random.Generator
) -> np.ndarray:
    """Rows whose marginals match the model's up to rounding.

    Parameters
    ----------
    tree : JunctionTree
        The junction tree of the model.
    beliefs : CalibratedBeliefs
        Calibrated marginals of the model.
    n : int
        Number of rows.
    rng : numpy.random.Generator
        Randomness source.

    Returns
    -------
    data : ndarray of shape (n, n_attributes), int64
        Every attribute is generated conditionally on its already generated
        clique-mates (the separator with the parent clique and the clique's
        earlier new attributes), with ``lowvar_counts`` rounding.
    """
    column = {a: k for k, a in enumerate(tree.domain)}
    data = np.zeros((n, len(column)), dtype=np.int64, order="F")  # columns contiguous
    context = _Context(n)
    for _, known, new in _walk(tree):
        parents = known
        for attr in new:
            table = _conditional_table(beliefs, parents, (attr,))
            index = _parent_index(data, [column[a] for a in parents],
                                  tuple(tree.domain[a] for a in parents))
            data[:, column[attr]] = _lowvar_column(table, index, rng, context)
            context.append(data[:, column[attr]], tree.domain[attr])
            parents = parents + (attr,)
    return _permuted_rows(data, rng.permutation(n))


def _permuted_rows(data: np.ndarray, permutation: np.ndarray) -> np.ndarray:
    """``data[permutation]`` built column by column, kept column-major (Fortran
    order) so that the per-column decoding downstream reads contiguous memory."""
    out = np.empty_like(data, order="F")
    for j in range(data.shape[1]):
        np.take(data[:, j], permutation, out=out[:, j])
    return out
