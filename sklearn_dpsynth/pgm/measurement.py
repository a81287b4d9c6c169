"""Noisy marginal measurements and the Private-PGM loss they define.

A :class:`Measurement` is ``y = Q mu_C + noise`` for the marginal counts
``mu_C`` of a clique.  :class:`Objective` compiles a list of them against a
junction tree into the loss

    L(mu) = sum_C weight_C * ||Q_C mu_C - y_C||^2 / sigma_C^2

and its gradient with respect to the counts, pushed into the maximal
cliques.  :func:`estimate_total` estimates the number of records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import lsqr

from .domain import ModelDomain, require_model_domain
from .factor import group_marginals, sum_axes, widened, work_dtype
from .junction_tree import JunctionTree, validate_cliques

__all__ = ["MeasuredCounts", "Measurement", "Objective", "estimate_total", "plus_terms"]


@dataclass
class Measurement:
    """A noisy linear measurement of the counts of one marginal.

    Parameters
    ----------
    clique : tuple of str
        Attributes of the measured marginal.
    noisy : ndarray of shape (m,)
        Measured vector ``Q mu + noise``.
    sigma : float
        Standard deviation of the noise of every entry of ``noisy``.
    query : None, ndarray or scipy sparse matrix of shape (m, n_cells), default=None
        Linear map from the C-order flattened marginal counts (axes in
        ``clique`` order) to the measured vector; ``None`` is the identity.
    weight : float, default=1.0
        Multiplier of the measurement's term in the loss.
    """

    clique: tuple[str, ...]
    noisy: np.ndarray
    sigma: float
    query: None | np.ndarray | sp.spmatrix = None
    weight: float = field(default=1.0)

    def __post_init__(self) -> None:
        if isinstance(self.clique, str):
            raise ValueError("clique must be a tuple of attribute names, not a str")
        self.clique = tuple(self.clique)
        if len(self.clique) == 0 or len(set(self.clique)) != len(self.clique):
            raise ValueError(f"clique must hold distinct attributes, got {self.clique}")
        self.noisy = np.asarray(self.noisy, dtype=float)
        if self.noisy.ndim != 1 or not np.all(np.isfinite(self.noisy)):
            raise ValueError("noisy must be a finite 1-D array")
        if not np.isfinite(self.sigma) or self.sigma <= 0:
            raise ValueError(f"sigma must be positive and finite, got {self.sigma!r}")
        if not np.isfinite(self.weight) or self.weight <= 0:
            raise ValueError(f"weight must be positive and finite, got {self.weight!r}")
        if self.query is not None:
            self.query = _as_query(self.query)
            if self.query.shape[0] != self.noisy.shape[0]:
                raise ValueError("query must have one row per entry of noisy")

    def check(self, domain: ModelDomain) -> None:
        """Check the clique and the shapes against a domain.

        Parameters
        ----------
        domain : ModelDomain
            Attribute sizes.
        """
        validate_cliques(domain, [self.clique], "measurements")
        cells = domain.size(self.clique)
        if self.query is None and self.noisy.shape[0] != cells:
            raise ValueError(f"measurements: noisy of clique {self.clique} has "
                             f"{self.noisy.shape[0]} entries, expected {cells}")
        if self.query is not None and self.query.shape[1] != cells:
            raise ValueError(f"measurements: query of clique {self.clique} has "
                             f"{self.query.shape[1]} columns, expected {cells}")


def _as_query(query) -> np.ndarray | sp.csr_matrix:
    """A dense 2-D float array or a CSR matrix."""
    if sp.issparse(query):
        return sp.csr_matrix(query, dtype=float)
    query = np.asarray(query, dtype=float)
    if query.ndim != 2 or not np.all(np.isfinite(query)):
        raise ValueError("query must be a finite 2-D matrix")
    return query


# ------------------------------------------------------------------ total
def _sum_estimator(m: Measurement, cells: int) -> tuple[float, float] | None:
    """Unbiased ``c @ y`` with ``Q^T c = 1`` (estimate, variance), or None."""
    ones = np.ones(cells)
    if sp.issparse(m.query):
        coef = lsqr(m.query.T, ones, atol=1e-12, btol=1e-12)[0]
    else:
        coef = np.linalg.lstsq(m.query.T, ones, rcond=None)[0]
    if np.linalg.norm(m.query.T @ coef - ones) > 1e-6 * np.sqrt(cells):
        return None
    return float(coef @ m.noisy), m.sigma**2 * float(coef @ coef) / m.weight


def _uniform_fit(m: Measurement, cells: int) -> tuple[float, float] | None:
    """Least-squares ``N`` in ``y ~ Q (N * uniform)`` (estimate, variance)."""
    q = np.asarray(m.query @ np.full(cells, 1.0 / cells)).ravel()
    qq = float(q @ q)
    if qq <= 0:
        return None
    return float(q @ m.noisy) / qq, m.sigma**2 / qq / m.weight


def _total_term(m: Measurement, domain: ModelDomain) -> tuple[float, float] | None:
    """Estimate of the total from one measurement and its variance."""
    cells = domain.size(m.clique)
    if m.query is None:
        return float(m.noisy.sum()), m.sigma**2 * cells / m.weight
    return _sum_estimator(m, cells) or _uniform_fit(m, cells)


def estimate_total(domain: ModelDomain, measurements: Sequence[Measurement]) -> float:
    """Inverse-variance weighted estimate of the number of records.

    Every measurement gives an estimate of the total: ``sum(y)`` for an
    identity query (variance ``sigma^2 * n_cells / weight``); ``c @ y`` with
    the minimum-norm ``c`` solving ``Q^T c = 1`` when the all-ones vector
    lies in the row space of ``Q`` (unbiased, variance
    ``sigma^2 ||c||^2 / weight``); otherwise the least-squares fit of
    ``y ~ Q (N * uniform)``, i.e. ``N = (q @ y) / (q @ q)`` with
    ``q = Q @ uniform`` (variance ``sigma^2 / (q @ q) / weight``; biased
    unless the data are uniform, hence only a fallback).

    Parameters
    ----------
    domain : ModelDomain
        Attribute sizes.
    measurements : sequence of Measurement
        The measurements.

    Returns
    -------
    total : float
        The combined estimate, floored at 1.
    """
    domain = require_model_domain(domain)
    for m in measurements:
        m.check(domain)
    terms = [t for t in (_total_term(m, domain) for m in measurements) if t is not None]
    if not terms:
        raise ValueError("measurements carry no information on the total; pass total")
    values = np.array([t[0] for t in terms])
    precision = 1.0 / np.array([t[1] for t in terms])
    return max(1.0, float(values @ precision / precision.sum()))


# ------------------------------------------------------------- objective
#: Vectors up to this length use ``ndarray.dot`` (BLAS ``ddot`` runs on one
#: thread at these lengths and costs a fraction of einsum's call overhead).
_SHORT_DOT = 4096


def _dot(u: np.ndarray, v: np.ndarray) -> float:
    """Inner product of two vectors, never through a multi-threaded BLAS call.

    A multi-threaded BLAS ``ddot`` can be orders of magnitude slower than a
    single pass of einsum on a busy machine; short vectors (most
    measurements) take ``ndarray.dot``, whose call costs a fifth of einsum's.
    """
    if u.shape[0] <= _SHORT_DOT:
        return float(u.dot(v))
    return float(np.einsum("i,i->", u, v))


@dataclass
class _Compiled:
    """A measurement rewritten in the canonical axis order of its clique.

    The measured vector (identity query) or the query's columns are
    permuted once so that marginals never need transposing.
    """

    index: int
    axes: tuple[int, ...]
    bshape: tuple[int, ...]
    query: None | np.ndarray | sp.csr_matrix
    query_t: None | np.ndarray | sp.csr_matrix
    noisy: np.ndarray
    scale: float


def _canonical_cells(tree: JunctionTree, clique: tuple[str, ...]) -> np.ndarray | None:
    """Flat index in ``clique`` order of every cell in canonical order."""
    ordered = tree.sort(clique)
    if ordered == clique:
        return None
    shape = tuple(tree.domain[a] for a in clique)
    cells = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)
    return cells.transpose([clique.index(a) for a in ordered]).ravel()


def _compile(tree: JunctionTree, m: Measurement) -> _Compiled:
    """Bookkeeping to evaluate a measurement from the clique beliefs."""
    index = tree.index_containing(m.clique)
    if index is None:
        raise ValueError(f"measurements clique {m.clique} is inside no maximal clique")
    clique = tree.cliques[index]
    cells = _canonical_cells(tree, m.clique)
    noisy, query, query_t = m.noisy, m.query, None
    if cells is not None and query is None:
        noisy = noisy[cells]
    elif cells is not None:
        query = query.tocsc()[:, cells].tocsr() if sp.issparse(query) else query[:, cells]
    if query is not None:
        query_t = query.T.tocsr() if sp.issparse(query) else np.ascontiguousarray(query.T)
    return _Compiled(
        index=index,
        axes=tuple(k for k, a in enumerate(clique) if a not in m.clique),
        bshape=tuple(tree.domain[a] if a in m.clique else 1 for a in clique),
        query=query,
        query_t=query_t,
        noisy=noisy,
        scale=m.weight / m.sigma**2,
    )


@dataclass(frozen=True)
class _Nesting:
    """Where a measured marginal is computed from: its clique or a larger measurement.

    A measurement whose attributes lie inside another measurement of the
    same maximal clique (its *host*) gets its counts by summing the host's
    counts, and sends its gradient through the host's gradient, instead of
    touching the whole clique table: with many nested measurements per
    clique, every estimation step then reads and writes each clique table
    once per host-free measurement only.

    Attributes
    ----------
    host : int
        Index of the host measurement, ``-1`` for one read from its clique.
    host_shape : tuple of int
        Shape of the host's counts (its attributes in canonical order).
    axes : tuple of int
        Axes of ``host_shape`` summed out to get this measurement's counts.
    bshape : tuple of int
        This measurement's counts reshaped to broadcast against the host's.
    """

    host: int
    host_shape: tuple[int, ...]
    axes: tuple[int, ...]
    bshape: tuple[int, ...]


def _nestings(tree: JunctionTree, measurements: Sequence[Measurement],
              items: Sequence[_Compiled]) -> tuple[list[_Nesting], list[int]]:
    """Host of every measurement, and an order in which hosts come first.

    The host is the smallest other measurement of the same maximal clique
    whose attributes strictly contain this one's (or, for equal attribute
    sets, the earliest one).
    """
    attrs = [tree.sort(m.clique) for m in measurements]
    order = sorted(range(len(items)), key=lambda k: (-len(attrs[k]), k))
    by_clique: dict[int, list[int]] = {}
    for k, c in enumerate(items):
        by_clique.setdefault(c.index, []).append(k)
    sets = [set(a) for a in attrs]
    nestings = []
    for k, c in enumerate(items):
        mine = sets[k]
        best, best_cells = -1, np.inf
        for j in by_clique[c.index]:
            if j == k or not mine <= sets[j]:
                continue
            if len(attrs[j]) == len(attrs[k]) and j > k:
                continue
            cells = tree.domain.size(attrs[j])
            if cells < best_cells:
                best, best_cells = j, cells
        if best < 0:
            nestings.append(_Nesting(-1, (), (), ()))
            continue
        host = attrs[best]
        shape = tuple(tree.domain[a] for a in host)
        nestings.append(_Nesting(
            best, shape, tuple(i for i, a in enumerate(host) if a not in mine),
            tuple(tree.domain[a] if a in mine else 1 for a in host)))
    return nestings, order


@dataclass(frozen=True)
class _Group:
    """Host-free measurements of one clique that share one smaller table.

    The counts of every member are sums of the group's marginal (one pass
    over the clique table for the whole group), and the members' gradients
    are added together in that marginal's space before one broadcast write
    into the clique table.

    Attributes
    ----------
    index : int
        Maximal clique.
    members : tuple of int
        Measurement indices, smallest first.
    axes : tuple of int
        Clique axes summed out to get the group's marginal.
    member_axes : tuple of tuple of int
        For every member, the axes of the group's marginal summed out to get
        its counts.
    """

    index: int
    members: tuple[int, ...]
    axes: tuple[int, ...]
    member_axes: tuple[tuple[int, ...], ...]


def _groups(shapes: list[tuple[int, ...]], items: Sequence[_Compiled],
            nestings: Sequence[_Nesting]) -> list[_Group]:
    """The measurement groups of every clique (host-free measurements only)."""
    by_clique: dict[int, list[int]] = {}
    for k, c in enumerate(items):
        if nestings[k].host < 0:
            by_clique.setdefault(c.index, []).append(k)
    out = []
    for index, members in by_clique.items():
        shape = shapes[index]
        kept = [frozenset(range(len(shape))) - set(items[k].axes) for k in members]
        for group in group_marginals(shape, kept):
            group.sort(key=lambda g: math.prod(shape[i] for i in kept[g]))
            union = sorted(frozenset().union(*(kept[g] for g in group)))
            out.append(_Group(
                index, tuple(members[g] for g in group),
                tuple(i for i in range(len(shape)) if i not in union),
                tuple(tuple(p for p, i in enumerate(union) if i not in kept[g])
                      for g in group)))
    return out


def plus_terms(table: np.ndarray, terms: Sequence[np.ndarray]) -> np.ndarray:
    """``table + terms[0] + terms[1] + ...`` in a new array of ``table``'s work dtype.

    Each term is small and broadcast against the table; the sum is written
    once per term into one fresh array (no other clique-sized temporary).
    """
    out = np.add(table, terms[0], dtype=work_dtype(table))
    for term in terms[1:]:
        out += term
    return out


class MeasuredCounts(list):
    """Measured counts, one vector per measurement, all views of one buffer.

    Mixing two of them (as accelerated mirror descent does every step)
    then costs three vector operations on :attr:`flat` instead of three
    per measurement.

    Parameters
    ----------
    flat : ndarray
        The buffer.
    sizes : sequence of int
        Length of every measurement's vector, in order.
    """

    def __init__(self, flat: np.ndarray, sizes: Sequence[int]) -> None:
        stops = np.cumsum(sizes, dtype=np.int64)
        super().__init__(flat[stop - size:stop] for stop, size in zip(stops, sizes))
        self.flat = flat
        self.sizes = sizes


class Objective:
    """The Private-PGM loss of some measurements on a junction tree.

    Internally every measured marginal is handled in the canonical axis
    order of the tree (see :meth:`JunctionTree.sort`).  A measurement nested
    in a larger measurement of the same clique is evaluated from that
    measurement's counts (same values up to rounding, a fraction of the
    cost); the other measurements of a clique are grouped so that each
    group's counts come from one pass over the clique's belief (to the
    group's union marginal, when it is small).

    Parameters
    ----------
    tree : JunctionTree
        Junction tree whose maximal cliques cover every measured clique.
    measurements : sequence of Measurement
        The measurements.
    total : float
        Number of records: marginal counts are ``total`` times the beliefs.
    """

    def __init__(self, tree: JunctionTree, measurements: Sequence[Measurement],
                 total: float) -> None:
        self.tree = tree
        self.total = float(total)
        self.items = [_compile(tree, m) for m in measurements]
        self.shapes = [tuple(tree.domain[a] for a in c) for c in tree.cliques]
        self._nesting, self._order = _nestings(tree, measurements, self.items)
        self._groups = _groups(self.shapes, self.items, self._nesting)
        # position of every group's shared marginal among its clique's requests
        # (None: the group reads the whole table)
        self._slots: list[int | None] = []
        taken = [0] * len(self.shapes)
        for group in self._groups:
            self._slots.append(taken[group.index] if group.axes else None)
            taken[group.index] += bool(group.axes)
        self._sizes = [tree.domain.size(m.clique) for m in measurements]

    def __len__(self) -> int:
        return len(self.items)

    def marginal_requests(self) -> list[list[tuple[int, ...]]]:
        """The marginals :meth:`counts` reads off every clique's belief.

        Returns
        -------
        requests : list of list of tuple of int
            For every maximal clique, the axes kept by the shared marginal of
            each of its measurement groups that does not read the whole
            table, in the order :meth:`counts` takes them as ``shared``
            (``pgm.inference.reduction_plan`` groups them with the
            separators of belief propagation).
        """
        requests: list[list[tuple[int, ...]]] = [[] for _ in self.shapes]
        for group, slot in zip(self._groups, self._slots):
            if slot is not None:
                ndim = len(self.shapes[group.index])
                requests[group.index].append(
                    tuple(a for a in range(ndim) if a not in group.axes))
        return requests

    def counts(self, beliefs: Sequence[np.ndarray],
               shared: Sequence[Sequence[np.ndarray]] | None = None) -> list[np.ndarray]:
        """Flattened measured marginal counts of a set of clique beliefs.

        Parameters
        ----------
        beliefs : sequence of ndarray
            Probabilities of the maximal cliques.
        shared : sequence of sequence of ndarray, optional
            The marginals of :meth:`marginal_requests`, already summed from
            ``beliefs`` (e.g. by ``pgm.inference.calibrate``); by default
            they are summed here.

        Returns
        -------
        counts : MeasuredCounts
            One C-order vector per measurement, axes in canonical order.
        """
        out = MeasuredCounts(np.empty(sum(self._sizes)), self._sizes)
        for group, slot in zip(self._groups, self._slots):
            belief = beliefs[group.index]
            if slot is None:
                union = belief
            elif shared is not None:
                union = shared[group.index][slot]
            else:
                union = sum_axes(belief, group.axes)
            for k, axes in zip(group.members, group.member_axes):
                marg = sum_axes(union, axes) if axes else union
                np.multiply(marg.ravel(), self.total, out=out[k])
        for k in self._order:
            nest = self._nesting[k]
            if nest.host >= 0:
                host = out[nest.host]
                out[k][...] = sum_axes(host.reshape(nest.host_shape), nest.axes).ravel() \
                    if nest.axes else host
        return out

    def _residual(self, c: _Compiled, mu: np.ndarray) -> np.ndarray:
        """``Q mu - y`` of one measurement."""
        return (mu if c.query is None else c.query @ mu) - c.noisy

    def loss(self, counts: Sequence[np.ndarray]) -> float:
        """Value of the loss.

        Parameters
        ----------
        counts : sequence of ndarray
            Output of :meth:`counts`.

        Returns
        -------
        loss : float
        """
        total = 0.0
        for c, mu in zip(self.items, counts):
            residual = self._residual(c, mu)
            total += c.scale * _dot(residual, residual)
        return total

    def loss_and_gradient(
        self, counts: Sequence[np.ndarray]
    ) -> tuple[float, list[np.ndarray]]:
        """Loss and its gradient with respect to the measured counts.

        Parameters
        ----------
        counts : sequence of ndarray
            Output of :meth:`counts`.

        Returns
        -------
        loss : float
        gradient : list of ndarray
            One vector per measurement, aligned with ``counts``.
        """
        loss, grads = 0.0, []
        for c, mu in zip(self.items, counts):
            residual = self._residual(c, mu)
            loss += c.scale * _dot(residual, residual)
            back = residual if c.query is None else c.query_t @ residual
            back *= 2.0 * c.scale
            grads.append(back)
        return loss, grads

    @staticmethod
    def inner(gradient: Sequence[np.ndarray], counts: Sequence[np.ndarray]) -> float:
        """Inner product of a gradient and measured counts.

        Parameters
        ----------
        gradient, counts : sequence of ndarray
            Aligned per-measurement vectors.

        Returns
        -------
        value : float
        """
        return float(sum(_dot(g, mu) for g, mu in zip(gradient, counts)))

    def clique_gradient(self, gradient: Sequence[np.ndarray]) -> dict[int, np.ndarray]:
        """Push per-measurement gradients into their maximal cliques.

        Parameters
        ----------
        gradient : sequence of ndarray
            Output of :meth:`loss_and_gradient`.

        Returns
        -------
        gradient : dict of int to ndarray
            Maximal-clique index -> gradient table (broadcast over the
            attributes the measurements lack; possibly a read-only view).
        """
        folded = self._fold(gradient)
        out: dict[int, np.ndarray] = {}
        owned: set[int] = set()
        for k, (c, grad) in enumerate(zip(self.items, folded)):
            if self._nesting[k].host >= 0:
                continue
            grad = grad.reshape(c.bshape)
            if c.index in owned:
                out[c.index] += grad
            elif c.index in out:
                out[c.index] = out[c.index] + grad
                owned.add(c.index)
            else:
                out[c.index] = np.broadcast_to(grad, self.shapes[c.index])
        return out

    def _fold(self, gradient: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Gradients with every nested measurement's folded into its host's."""
        folded = list(gradient)
        for k in reversed(self._order):
            host = self._nesting[k].host
            if host >= 0:
                nest = self._nesting[k]
                folded[host] = (folded[host].reshape(nest.host_shape)
                                + folded[k].reshape(nest.bshape)).ravel()
        return folded

    def step_tables(self, tables: Sequence[np.ndarray], gradient: Sequence[np.ndarray],
                    coef: float) -> list[np.ndarray]:
        """Log-potentials moved along a count gradient: ``tables + coef * gradient``.

        Same result as adding ``coef`` times :meth:`clique_gradient` to every
        table (up to rounding), but every measurement's (small) gradient is
        scaled before it is broadcast, and the gradients of a group of
        measurements of one clique whose union marginal is small
        (``pgm.factor.group_marginals``) are summed in
        that marginal's space first: each touched clique table is written
        into a fresh array once per group, with no clique-sized
        temporaries.

        Parameters
        ----------
        tables : sequence of ndarray
            Log-potentials of the maximal cliques (not modified).
        gradient : sequence of ndarray
            Output of :meth:`loss_and_gradient`.
        coef : float
            Step coefficient.

        Returns
        -------
        tables : list of ndarray
            New arrays for the cliques that carry a measurement; the input
            arrays themselves for the others.
        """
        out = list(tables)
        for index, terms in self.step_terms(gradient, coef).items():
            out[index] = plus_terms(tables[index], terms)
        return out

    def step_terms(self, gradient: Sequence[np.ndarray], coef: float,
                   dtype: type = np.float64) -> dict[int, list[np.ndarray]]:
        """The terms :meth:`step_tables` adds to each table, unadded.

        Adding them in order to a clique's table (``table + terms[0] +
        terms[1] + ...``) gives :meth:`step_tables`'s table bit for bit;
        each term is small (a group's union marginal, shaped to broadcast
        against the clique; ``pgm.factor.widened`` along trailing axes when
        that makes adding it faster).

        Parameters
        ----------
        gradient : sequence of ndarray
            Output of :meth:`loss_and_gradient`.
        coef : float
            Step coefficient.
        dtype : {numpy.float64, numpy.float32}, default=numpy.float64
            Type of the terms (that of the tables they are added to).

        Returns
        -------
        terms : dict of int to list of ndarray
            Maximal-clique index -> its terms, for the cliques that carry a
            measurement.
        """
        out: dict[int, list[np.ndarray]] = {}
        folded = self._fold(gradient)
        for group in self._groups:
            shared = None
            for k in group.members:
                scaled = np.multiply(folded[k], coef, dtype=dtype)
                scaled = scaled.reshape(self.items[k].bshape)
                shared = scaled if shared is None else shared + scaled
            out.setdefault(group.index, []).append(widened(shared, self.shapes[group.index]))
        return out

    def smoothness(self) -> float:
        """Smoothness bound of the loss in the L1 norm of the probabilities.

        Returns
        -------
        bound : float
            ``2 total^2 sum_C scale_C max_j ||Q_C[:, j]||^2``; ``total`` over
            it is a safe mirror-descent step on the count gradient.
        """
        bound = 0.0
        for c in self.items:
            if c.query is None:
                col = 1.0
            elif sp.issparse(c.query):
                col = float(np.max(np.asarray(c.query.multiply(c.query).sum(axis=0))))
            else:
                col = float(np.max(np.sum(c.query**2, axis=0)))
            bound += 2.0 * c.scale * col
        return max(bound * self.total**2, 1e-300)
