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
  sampling noise of unmeasured marginals).  The systematic order only
  balances the last few attributes generated (a lexicographic order keeps
  strata of a handful of keys contiguous), so the values dealt to each
  parent group are then permuted among its rows, chunk by chunk, to balance
  the new attribute against *every* attribute generated before
  (``_balance``, a herding-style greedy): every 2-way marginal of the
  sample, not only those of the model's cliques, lies close to the model's.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import scipy.sparse as sp

from .inference import CalibratedBeliefs
from .junction_tree import JunctionTree

__all__ = ["sample_iid", "sample_lowvar", "lowvar_counts"]

_CHUNK_CELLS = 1 << 22
# Fewest rows per balancing step (a group's rows are permuted chunk by chunk),
# the most chunks a group is cut into (a larger group gets larger chunks, so
# the balancing takes a bounded number of steps per group) and the standard
# deviation of the noise added to the balancing costs, in units of the chunk.
_BALANCE_CHUNK = 512
_BALANCE_STEPS = 64
_BALANCE_NOISE = 0.125
# Rounds of proposals in ``_assign_cheapest`` before the value-by-value greedy.
_ASSIGN_ROUNDS = 4
# Smallest mean stratum (rows) of the last generated attributes kept intact.
_BALANCE_STRATUM = 64


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
    cells: "_Cells",
) -> np.ndarray:
    """Values of one attribute for all rows, grouped by parent values.

    Within a group the values are dealt out *evenly* over the rows sorted by
    the attributes generated earlier (``context``; the parents are constant
    within a group, so this is the order of the non-parents): the model makes
    the attribute independent of them given its parents, and spreading each
    value evenly across them reproduces that independence with less sampling
    noise than a random shuffle.  ``_balance`` then permutes each large
    group's values to extend that balance to every earlier attribute
    (``cells``).  Rows equal on every generated attribute are interchangeable,
    so they are ordered arbitrarily here and :func:`sample_lowvar` shuffles
    the finished rows.
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
    rows = context.sorted_rows(inverse, len(groups))
    values = _balance(values, rows, inverse[rows], cells, n_values, rng)
    out = np.empty(parents.shape[0], dtype=np.int64)
    out[rows] = values
    return out


class _Cells:
    """Every generated attribute's value of every row as one cell number.

    The ``j``-th generated attribute's cells are its values plus
    ``offsets[j]``, the number of values of the attributes generated before
    it, so that the cells of all attributes are numbered
    ``0 .. n_cells - 1`` without overlap.  ``values`` holds the generated
    columns themselves (views of the sample being built, not copies).
    ``parents`` lists the generation positions of the parents of the
    attribute being generated: constant within each of its groups.
    """

    def __init__(self) -> None:
        self.values: list[np.ndarray] = []
        self.offsets: list[int] = []
        self.sizes: list[int] = []
        self.n_cells = 0
        self.parents: tuple[int, ...] = ()
        #: Every row's history: the number of its cell of the joint of every
        #: generated attribute (None once every row's history is its own).
        self.history: np.ndarray | None = None
        #: Number of rows sharing each row's history (None: all alone).
        self.history_rows: np.ndarray | None = None

    @property
    def n_known(self) -> int:
        """Number of attributes generated so far."""
        return len(self.values)

    def append(self, values: np.ndarray, size: int) -> None:
        if not self.values:
            self.history = np.asarray(values, dtype=np.int64).copy()
        elif self.history is not None:
            self.history = _joint_cells(self.history, values, size)
        if self.history is not None:
            rows_per_cell = np.bincount(self.history)
            # (the first attribute's history is its values, not renumbered:
            # count the rows of each cell rather than the cells)
            if np.all(rows_per_cell <= 1):  # every history alone
                self.history = self.history_rows = None
            else:
                self.history_rows = rows_per_cell[self.history]
        self.values.append(values)
        self.offsets.append(self.n_cells)
        self.n_cells += size
        self.sizes.append(size)

    def shared_history(self, rows: np.ndarray) -> np.ndarray:
        """Whether each of ``rows`` shares its history with another row."""
        if self.history_rows is None:
            return np.zeros(rows.size, dtype=bool)
        return self.history_rows[rows] > 1

    def of(self, rows: np.ndarray, columns: list[int]) -> np.ndarray:
        """The cells of ``rows`` in ``columns``, shape (len(rows), len(columns))."""
        out = np.empty((rows.size, len(columns)), dtype=np.int64)
        for k, column in enumerate(columns):
            np.add(self.values[column][rows], self.offsets[column], out=out[:, k])
        return out

    def depth(self, n_rows: int) -> int:
        """How many of the last generated attributes leave a mean stratum of
        at least ``_BALANCE_STRATUM`` of ``n_rows`` rows (0 for a small group)."""
        depth, cells = 0, 1
        while depth < self.n_known and (
                cells * self.sizes[-1 - depth] * _BALANCE_STRATUM <= n_rows):
            cells *= self.sizes[-1 - depth]
            depth += 1
        return depth

    def strata(self, rows: np.ndarray, depth: int) -> np.ndarray:
        """Run numbers of ``rows`` (in the context order) over the values of
        the last ``depth`` generated attributes."""
        if depth == 0:
            return np.zeros(rows.size, dtype=np.intp)
        key = np.zeros(rows.size, dtype=np.intp)
        for column in range(self.n_known - depth, self.n_known):  # mixed radix
            key = key * self.sizes[column] + self.values[column][rows]
        return np.concatenate([[0], np.cumsum(key[1:] != key[:-1])])


def _joint_cells(history: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Numbers ``0..k-1`` of the cells of the pairs ``(history, values)``."""
    key = history * size + values
    n_keys = (int(history.max()) + 1) * size
    if n_keys <= 8 * key.size:
        present = np.zeros(n_keys, dtype=bool)
        present[key] = True
        return (np.cumsum(present) - 1)[key]
    return np.unique(key, return_inverse=True)[1].reshape(-1)


def _balance(
    values: np.ndarray,
    rows: np.ndarray,
    group: np.ndarray,
    cells: _Cells,
    n_values: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Permute the values within every parent group to balance them against
    every attribute generated before.

    ``values[i]`` is the value dealt to row ``rows[i]``; ``group`` (sorted)
    is that position's parent group.  Each group's counts are kept, so the
    model's clique marginals are matched exactly as before; what changes is
    which rows get which value, so that for every earlier attribute ``x``
    and value ``a`` the rows with ``x = a`` receive the group's values in
    close to the group's proportions, as the model's conditional
    independence asks.  Groups no longer than one chunk keep the dealt
    order (already systematic), and so do rows that share their whole
    history (every generated attribute) with another row: the context
    order keeps such a cell's rows together, so the dealt values already
    spread over it in the group's proportions, and exchanging them would
    only add sampling noise to the full joint (``_Cells.shared_history``).
    """
    if cells.n_known == 0 or n_values < 2 or values.size == 0:
        return values
    out = values.copy()
    bounds = np.flatnonzero(np.diff(group)) + 1
    starts = np.concatenate([[0], bounds])
    stops = np.concatenate([bounds, [group.size]])
    for start, stop in zip(starts, stops):
        if stop - start > _BALANCE_CHUNK:
            out[start:stop] = _balance_group(out[start:stop], rows[start:stop], cells,
                                             n_values, rng)
    return out


def _balance_group(
    values: np.ndarray, rows: np.ndarray, cells: _Cells, n_values: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """One group's values, permuted chunk by chunk (herding).

    The group is cut into chunks of ``_BALANCE_CHUNK`` rows, or into
    ``_BALANCE_STEPS`` chunks when it is larger.  ``excess[f, b]`` is, over
    the rows of the chunks done so far that lie in cell ``f``, the number
    that got value ``b`` minus the group's share of ``b`` times their number
    (the excesses of a cell sum to zero over the values).  A row's cost for
    value ``b`` is the sum of ``excess[f, b]`` over the row's cells (one
    sparse product per chunk), leaving out the cells of the parents and of
    the strata's attributes, which are the same for every row that may
    exchange values; a group with no other earlier attribute is left as
    dealt.  Every chunk's values are given to its rows by
    ``_assign_cheapest`` on these costs plus uniform noise (of standard
    deviation an eighth of the chunk size), which softens the step so that
    rows sharing a cell do not all swing one way and overshoot.  The first
    chunk keeps its dealt values, and values are only exchanged between rows equal on
    the last few attributes generated (``_Cells.strata``), whose strata
    the dealt order already balances exactly.
    """
    depth = cells.depth(values.size)
    # Attributes constant in a block (the strata's) or in the group (its
    # parents) add the same cost to every row that may swap: left out.
    columns = [c for c in range(cells.n_known - depth) if c not in cells.parents]
    if not columns:
        return values
    strata = cells.strata(rows, depth)
    counts = np.bincount(values, minlength=n_values)
    share = (counts / values.size).astype(np.float32)
    rarest_first = np.argsort(counts, kind="stable")
    excess = np.zeros((cells.n_cells, n_values), dtype=np.float32)
    chunk_size = max(_BALANCE_CHUNK, -(-values.size // _BALANCE_STEPS))
    width = np.float32(np.sqrt(12.0) * _BALANCE_NOISE * chunk_size)  # uniform noise's
    out = values.copy()
    free = ~cells.shared_history(rows)
    for start in range(0, values.size, chunk_size):
        stop = min(values.size, start + chunk_size)
        chunk = cells.of(rows[start:stop], columns)
        movable = np.flatnonzero(free[start:stop])
        if start > 0 and movable.size:
            cost = np.ascontiguousarray(
                (_one_hot(chunk[movable], cells.n_cells) @ excess).T)
            noise = rng.random(cost.shape, dtype=np.float32)
            noise -= np.float32(0.5)
            noise *= width
            cost += noise
            block = strata[start:stop][movable]
            out[start + movable] = _assign_cheapest(cost, out[start + movable], rarest_first,
                                                    block - block[0])
        flat = chunk * n_values + out[start:stop, None]
        tally = np.bincount(flat.ravel(), minlength=excess.size).reshape(excess.shape)
        excess += tally - tally.sum(axis=1, keepdims=True) * share
    return out


def _one_hot(cells: np.ndarray, n_cells: int) -> sp.csr_matrix:
    """The rows' cells (shape (n_rows, n_columns)) as a sparse 0/1 matrix of
    shape (n_rows, n_cells): its product with a (n_cells, k) table sums the
    table's rows over each row's cells."""
    n_rows, n_columns = cells.shape
    return sp.csr_matrix((np.ones(cells.size, dtype=np.float32), cells.ravel(),
                          np.arange(0, cells.size + 1, n_columns)), shape=(n_rows, n_cells))


def _assign_cheapest(
    cost: np.ndarray, values: np.ndarray, order: np.ndarray, block: np.ndarray
) -> np.ndarray:
    """A permutation of ``values`` within each block that keeps costs low (greedy).

    ``block`` (non-decreasing, from 0) numbers the runs of rows whose values
    may be exchanged; every block keeps its own counts.  ``cost`` has shape
    (n_values, n_rows).  In rounds, every unplaced row asks for its cheapest
    value among those its block still has copies of; a value asked for by
    more rows than its block has copies goes to those that lose most by
    taking their next cheapest instead, the others ask again (a round either
    places every row or uses up some block's value).  After
    ``_ASSIGN_ROUNDS`` rounds, the rows left are placed value by value in
    ``order`` (``_assign_by_value``).  For two values this is the optimum.
    """
    n_values = cost.shape[0]
    quota = np.bincount(block * n_values + values,
                        minlength=(block[-1] + 1) * n_values).reshape(-1, n_values)
    out = np.empty_like(values)
    free = np.arange(values.size)
    for _ in range(_ASSIGN_ROUNDS):
        if free.size == 0:
            return out
        free_block = block[free]
        open_cost = cost[:, free] if free.size < values.size else cost
        closed = (quota.T == 0)[:, free_block]  # (n_values, n_free)
        open_cost = np.where(closed, np.float32(np.inf), open_cost)
        choice = open_cost.argmin(axis=0)
        columns = np.arange(free.size)
        best = open_cost[choice, columns]
        open_cost[choice, columns] = np.inf
        loss = best - open_cost.min(axis=0)  # <= 0; -inf: only one value left
        wanted = free_block * n_values + choice
        ranked = np.argsort(_block_key(loss, wanted), kind="stable")
        ranked_want = wanted[ranked]
        first = np.searchsorted(ranked_want, ranked_want)
        taken = np.arange(ranked.size) - first < quota.ravel()[ranked_want]
        out[free[ranked[taken]]] = choice[ranked[taken]]
        quota -= np.bincount(ranked_want[taken], minlength=quota.size).reshape(quota.shape)
        free = free[ranked[~taken]]
    if free.size:
        out[free] = _assign_by_value(cost[:, free], quota, order, block[free])
    return out


def _assign_by_value(
    cost: np.ndarray, quota: np.ndarray, order: np.ndarray, block: np.ndarray
) -> np.ndarray:
    """Values for rows with ``quota[block, value]`` copies per block, placed in
    ``order``: value ``b`` goes, in every block, to the free rows where it is
    cheapest relative to the cheapest value still to place."""
    # cheapest[i]: every row's lowest cost over the values order[i:]
    cheapest = np.minimum.accumulate(cost[order[::-1]], axis=0)[::-1]
    out = np.empty(cost.shape[1], dtype=np.int64)
    free = np.arange(cost.shape[1])
    for i in np.flatnonzero(quota[:, order[:-1]].any(axis=0)):
        b = order[i]
        gain = (cost[b, free] - cheapest[i + 1, free]).astype(np.float64)
        ranked = np.argsort(_block_key(gain, block[free]), kind="stable")
        ranked_block = block[free[ranked]]
        first = np.searchsorted(ranked_block, ranked_block)
        taken = np.arange(ranked.size) - first < quota[ranked_block, b]
        out[free[ranked[taken]]] = b
        free = free[ranked[~taken]]
    out[free] = order[-1]
    return out


def _block_key(gain: np.ndarray, block: np.ndarray) -> np.ndarray:
    """One float key ordering rows by (block, gain): ``gain`` shifted into
    ``[0, span)`` plus ``block * span`` (one sort instead of a lexsort)."""
    finite = gain[np.isfinite(gain)]
    low = finite.min() if finite.size else 0.0
    span = (finite.max() - low if finite.size else 0.0) + 2.0
    gain = np.maximum(gain, low - 1.0)
    return (gain - low) + block * span


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
        earlier new attributes), with ``lowvar_counts`` rounding, and
        balanced against every attribute generated before it
        (``_balance``).
    """
    column = {a: k for k, a in enumerate(tree.domain)}
    data = np.zeros((n, len(column)), dtype=np.int64, order="F")  # columns contiguous
    context = _Context(n)
    cells = _Cells()
    position: dict[str, int] = {}  # generation order of every generated attribute
    for _, known, new in _walk(tree):
        parents = known
        for attr in new:
            table = _conditional_table(beliefs, parents, (attr,))
            index = _parent_index(data, [column[a] for a in parents],
                                  tuple(tree.domain[a] for a in parents))
            cells.parents = tuple(position[a] for a in parents)
            data[:, column[attr]] = _lowvar_column(table, index, rng, context, cells)
            position[attr] = cells.n_known
            context.append(data[:, column[attr]], tree.domain[attr])
            cells.append(data[:, column[attr]], tree.domain[attr])
            parents = parents + (attr,)
    return _permuted_rows(data, rng.permutation(n))


def _permuted_rows(data: np.ndarray, permutation: np.ndarray) -> np.ndarray:
    """``data[permutation]`` built column by column, kept column-major (Fortran
    order) so that the per-column decoding downstream reads contiguous memory."""
    out = np.empty_like(data, order="F")
    for j in range(data.shape[1]):
        np.take(data[:, j], permutation, out=out[:, j])
    return out
