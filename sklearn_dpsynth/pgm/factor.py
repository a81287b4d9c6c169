"""Log-space factors over named discrete attributes.

A :class:`Factor` is a dense table indexed by the codes of a tuple of
attributes.  In the graphical-model engine its values are *log*-potentials,
so ``+`` is the product of two potentials and ``-`` their quotient; the
operators broadcast automatically over the union of the two attribute sets.
"""

from __future__ import annotations

import math
import string
from typing import Callable, Sequence

import numpy as np

from .domain import ModelDomain, require_model_domain

__all__ = ["Factor", "group_marginals", "logsumexp_axes", "logsumexp_axes_consuming",
           "log_sum_shifted", "sum_axes"]


#: Rows up to this long are summed column by column (one vectorised pass per
#: column); longer ones with einsum.  numpy's own ``add.reduce(axis=1)``
#: reduces one row at a time and is 3-4x slower than einsum for rows of 17
#: to 10^5 entries (float32 and float64, 2e6 cells).
_SHORT_AXIS = 8
_LETTERS = string.ascii_letters
_UNDERFLOW = 1e-290
#: The same threshold for float32 tables (normal float32 numbers reach 1.2e-38).
_UNDERFLOW_32 = 1e-30
#: Arrays up to this many cells are reduced by ``np.add.reduce`` directly:
#: for them the call overhead, not the memory layout, dominates.
_SMALL = 1024


def sum_axes(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Sum over some axes, avoiding numpy's slow reduction layouts.

    numpy reduces a short contiguous block one output element at a time,
    which can be tens of times slower than the alternatives: summed axes
    that form a trailing block are reduced on a 2-D view (column by column
    when the block is short), a leading block on a 2-D view over rows, and
    any other pattern with einsum.

    Parameters
    ----------
    values : ndarray
        Array to reduce.
    axes : tuple of int
        Non-negative axes summed out; the remaining axes keep their order.

    Returns
    -------
    out : ndarray
        A new array (also when ``axes`` is empty).
    """
    if not axes:
        return values.copy()
    axes = sorted(set(axes))
    ndim = values.ndim
    n_axes = len(axes)
    shape = values.shape
    kept_shape = tuple(s for k, s in enumerate(shape) if k not in axes)
    if axes[0] == ndim - n_axes and axes[-1] == ndim - 1:
        flat = values.reshape(-1, math.prod(shape[ndim - n_axes:]))
        return _sum_columns(flat).reshape(kept_shape)
    if axes[-1] == n_axes - 1:
        flat = values.reshape(math.prod(shape[:n_axes]), -1)
        return np.add.reduce(flat, axis=0).reshape(kept_shape)
    if values.size <= _SMALL:
        return np.add.reduce(values, axis=tuple(axes))
    return _einsum_reduce(values, set(axes))


#: A group's shared marginal may hold at most this share of its table's cells.
_GROUP_SHARE = 0.25


def group_marginals(shape: tuple[int, ...], kept: Sequence[frozenset[int]],
                    share: float = _GROUP_SHARE) -> list[list[int]]:
    """Greedy grouping of several marginals of one table into small shared ones.

    Several marginals of (or broadcast terms added to) one large table each
    cost a pass over it; marginals grouped together cost one pass for the
    group (to or from their union marginal) plus passes over that union,
    which is small.  The two groups whose union is smallest are joined while
    the union has at most ``share`` of the table's cells.

    Parameters
    ----------
    shape : tuple of int
        Shape of the table.
    kept : sequence of frozenset of int
        Axes kept by every marginal.
    share : float, default=0.25
        Largest union, as a share of the table's cells.

    Returns
    -------
    groups : list of list of int
        Indices into ``kept``; every index appears in exactly one group.
    """
    groups = [[k] for k in range(len(kept))]
    axes = [frozenset(a) for a in kept]
    limit = share * math.prod(shape)
    while len(groups) > 1:
        best, best_cells = (0, 1), math.inf
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                cells = math.prod(shape[a] for a in axes[i] | axes[j])
                if cells < best_cells:
                    best, best_cells = (i, j), cells
        if best_cells > limit:
            break
        i, j = best
        groups[i] += groups.pop(j)
        axes[i] = axes[i] | axes.pop(j)
    return groups


#: A broadcast operand is widened until numpy's innermost loop runs over at
#: least this many contiguous cells ...
_MIN_INNER_RUN = 256
#: ... as long as it holds at most this share of the table's cells.
_WIDEN_SHARE = 0.25
#: Tables below this many cells are left alone: there numpy's call overhead,
#: not its inner loop, is the cost, and widening would only add to it.
_WIDEN_MIN_CELLS = 1 << 16


def _inner_run(shape: tuple[int, ...], target: tuple[int, ...]) -> int:
    """Cells of the trailing run of axes that are all broadcast or all full."""
    run, kind = 1, None
    for size, full in zip(reversed(shape), reversed(target)):
        this = size == full
        if full == 1:
            continue  # a length-1 axis of the table belongs to either run
        if kind is not None and this != kind:
            break
        kind, run = this, run * full
    return run


def widened(term: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A small broadcast operand, repeated along trailing axes when that is cheap.

    numpy pays a fixed cost for each pass of its innermost loop, which runs
    over the trailing axes where the operand is uniformly broadcast or
    uniformly full; an operand such as ``(2, 1, 1, 6, 7, 9, 1, 16)`` against
    a ``(2, 2, 5, 6, 7, 9, 15, 16)`` table runs it over 16 cells at a time,
    several times slower than a same-shape operation.  The operand is
    materialised along its trailing broadcast axes until that run has at
    least ``_MIN_INNER_RUN`` cells, unless it would then exceed
    ``_WIDEN_SHARE`` of the table or the table is small
    (``_WIDEN_MIN_CELLS``); the values are unchanged.

    Parameters
    ----------
    term : ndarray
        Operand of the same number of axes as ``shape``, each of length 1 or
        of the table's length.
    shape : tuple of int
        Shape of the table it is combined with.

    Returns
    -------
    ndarray
        ``term`` itself, or a contiguous repetition of it.
    """
    cells = math.prod(shape)
    if cells < _WIDEN_MIN_CELLS or _inner_run(term.shape, shape) >= _MIN_INNER_RUN:
        return term
    target = list(term.shape)
    limit = _WIDEN_SHARE * cells
    for axis in range(len(shape) - 1, -1, -1):
        if _inner_run(tuple(target), shape) >= _MIN_INNER_RUN:
            break
        if target[axis] == shape[axis]:
            continue
        target[axis] = shape[axis]
        if math.prod(target) > limit:
            return term
    return np.ascontiguousarray(np.broadcast_to(term, tuple(target)))


def work_dtype(values: np.ndarray) -> type:
    """Floating type in which log-space arithmetic on ``values`` runs.

    float32 tables stay float32 (half the memory and bandwidth); every
    other dtype is computed in float64.
    """
    return np.float32 if values.dtype == np.float32 else np.float64


def _underflow(values: np.ndarray) -> float:
    """Below this, an exponential of ``values``' dtype may have lost precision."""
    return _UNDERFLOW_32 if values.dtype == np.float32 else _UNDERFLOW


def _sum_columns(flat: np.ndarray) -> np.ndarray:
    """Row sums of a 2-D array (by columns when the rows are short)."""
    if flat.shape[1] > _SHORT_AXIS:
        return np.einsum("ij->i", flat)
    acc = flat[:, 0].copy()
    for k in range(1, flat.shape[1]):
        acc += flat[:, k]
    return acc


#: Arrays with more axes than this are reduced through a transposed copy.
_MANY_AXES = 8


def _einsum_reduce(values: np.ndarray, axes: set[int]) -> np.ndarray:
    """Sum over ``axes`` with einsum.

    An array of more than ``_MANY_AXES`` axes (say the 15 binary attributes
    of a large clique), whose kept axes are short and scattered, is first
    copied with the kept axes in front: the sum then runs over one long
    contiguous row per output cell, several times faster than einsum's
    loops over many axes of length 2 (same sums, up to rounding order).
    """
    if values.ndim > _MANY_AXES:
        kept = [k for k in range(values.ndim) if k not in axes]
        kept_shape = tuple(values.shape[k] for k in kept)
        moved = np.ascontiguousarray(np.moveaxis(values, kept, range(len(kept))))
        return _sum_columns(moved.reshape(math.prod(kept_shape), -1)).reshape(kept_shape)
    letters = _LETTERS[:values.ndim]  # at most _MANY_AXES: fewer than _LETTERS
    kept = "".join(c for k, c in enumerate(letters) if k not in axes)
    return np.einsum(f"{letters}->{kept}", values)


def logsumexp_axes(values: np.ndarray, axes: tuple[int, ...],
                   dtype: type | None = None) -> np.ndarray:
    """Log of the sum of exponentials over some axes, stably.

    The exponentials are shifted by the global maximum; only if a finite
    entry underflows under that shift is every slice recomputed with its
    own maximum, so the result is exact to floating-point precision
    (``-inf`` entries are exact zeros and need no care).

    Parameters
    ----------
    values : ndarray
        Log-space values (``-inf`` allowed).
    axes : tuple of int
        Non-negative axes summed out; the remaining axes keep their order.
    dtype : {numpy.float64, numpy.float32}, default=None
        Type of the exponentials and the result; by default
        :func:`work_dtype` of ``values``.

    Returns
    -------
    out : ndarray
        ``log(sum(exp(values), axis=axes))``; ``-inf`` where every summed
        entry is ``-inf``.
    """
    dtype = work_dtype(values) if dtype is None else dtype
    if not axes:
        return np.array(values, dtype=dtype, copy=True)
    shift = float(values.max()) if values.size else 0.0
    if not math.isfinite(shift):
        shift = 0.0
    exped = np.subtract(values, shift, dtype=dtype)
    np.exp(exped, out=exped)  # one temporary, not two
    return log_sum_shifted(exped, values, axes, shift)


def logsumexp_axes_consuming(
    values: np.ndarray, axes: tuple[int, ...], recompute: Callable[[], np.ndarray]
) -> np.ndarray:
    """:func:`logsumexp_axes` that overwrites ``values`` instead of copying it.

    Same result as :func:`logsumexp_axes` bit for bit; the exponentials are
    written into ``values`` (a float array the caller owns and no longer
    needs), and ``recompute()`` gives the values again in the rare case
    where the underflow check needs them.

    Parameters
    ----------
    values : ndarray
        Log-space values, overwritten.
    axes : tuple of int
        Non-negative axes summed out.
    recompute : callable
        Returns a fresh copy of the original ``values``.

    Returns
    -------
    out : ndarray
    """
    if not axes:
        return logsumexp_axes(values, axes)
    shift = float(values.max()) if values.size else 0.0
    if not math.isfinite(shift):
        shift = 0.0
    np.subtract(values, shift, out=values)
    np.exp(values, out=values)
    return log_sum_shifted(values, recompute, axes, shift)


def log_sum_shifted(
    exped: np.ndarray, values: np.ndarray | Callable[[], np.ndarray],
    axes: tuple[int, ...], shift: float
) -> np.ndarray:
    """``log(sum(exp(values)))`` over ``axes`` given ``exped = exp(values - shift)``.

    Parameters
    ----------
    exped : ndarray
        ``exp(values - shift)``.
    values : ndarray or callable
        The log-space values (used only when ``exped`` has underflowed), or
        a function returning them.
    axes : tuple of int
        Non-negative axes summed out.
    shift : float
        The shift used for ``exped``.

    Returns
    -------
    out : ndarray
        Exact log-sums; slices of ``-inf`` give ``-inf``.
    """
    total = sum_axes(exped, axes)
    tiny = _underflow(exped)
    if total.min(initial=np.inf) > tiny:  # no zero: no errstate needed
        return np.log(total) + shift
    if callable(values):
        values = values()
    if not np.any((exped < tiny) & (values > -np.inf)):
        with np.errstate(divide="ignore"):
            return np.log(total) + shift
    return _logsumexp_sliced(values, axes)


def _logsumexp_sliced(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Log-sum-exp with one max shift per reduced slice."""
    shift = np.max(values, axis=axes, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    with np.errstate(divide="ignore"):
        total = np.log(sum_axes(np.exp(values - shift), axes))
    return total + np.squeeze(shift, axis=axes)


def _as_attributes(attributes: Sequence[str], name: str) -> tuple[str, ...]:
    """Validate a sequence of distinct attribute names."""
    if isinstance(attributes, str):
        raise ValueError(f"{name} must be a sequence of attribute names, not a str")
    attrs = tuple(attributes)
    if not all(isinstance(a, str) for a in attrs):
        raise ValueError(f"{name} must contain attribute names (str)")
    if len(set(attrs)) != len(attrs):
        raise ValueError(f"{name} has repeated attributes: {attrs}")
    return attrs


def _shape_in(attributes: tuple[str, ...], domain: ModelDomain) -> tuple[int, ...]:
    """Sizes of ``attributes`` in ``domain``; ValueError naming unknown ones."""
    domain = require_model_domain(domain)
    missing = [a for a in attributes if a not in domain]
    if missing:
        raise ValueError(f"domain has no size for attributes {missing}")
    return tuple(domain[a] for a in attributes)


class Factor:
    """Dense table over a tuple of named discrete attributes.

    Parameters
    ----------
    attributes : tuple of str
        Names of the axes of ``values``, in axis order.
    values : array_like
        Table of shape ``(size(attributes[0]), size(attributes[1]), ...)``;
        a scalar for the empty attribute tuple.  Log-space potentials in the
        engine, but the class itself is agnostic.

    Notes
    -----
    ``f + g`` and ``f - g`` are log-space product and division: the result
    lives on ``f.attributes`` followed by the attributes of ``g`` absent
    from ``f``, and both operands are broadcast to it.
    """

    __slots__ = ("attributes", "values")

    def __init__(self, attributes: Sequence[str], values: np.ndarray) -> None:
        attrs = _as_attributes(attributes, "attributes")
        vals = np.asarray(values, dtype=float)
        if vals.ndim != len(attrs):
            raise ValueError(
                f"values has {vals.ndim} axes but attributes names {len(attrs)}"
            )
        self.attributes: tuple[str, ...] = attrs
        self.values: np.ndarray = vals

    # ------------------------------------------------------------------ build
    @classmethod
    def zeros(cls, attributes: Sequence[str], domain: ModelDomain) -> "Factor":
        """All-zero factor (the constant-one potential in log space).

        Parameters
        ----------
        attributes : sequence of str
            Attributes of the factor.
        domain : ModelDomain
            Number of codes of every attribute.

        Returns
        -------
        factor : Factor
        """
        attrs = _as_attributes(attributes, "attributes")
        return cls(attrs, np.zeros(_shape_in(attrs, domain)))

    @classmethod
    def uniform(cls, attributes: Sequence[str], domain: ModelDomain) -> "Factor":
        """Log of the uniform distribution over the attributes' cells.

        Parameters
        ----------
        attributes : sequence of str
            Attributes of the factor.
        domain : ModelDomain
            Number of codes of every attribute.

        Returns
        -------
        factor : Factor
            Constant ``-log(n_cells)``, so that ``exp()`` sums to one.
        """
        attrs = _as_attributes(attributes, "attributes")
        shape = _shape_in(attrs, domain)
        n_cells = float(np.prod(shape, dtype=float))
        return cls(attrs, np.full(shape, -np.log(n_cells)))

    # ------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the table (sizes of the attributes)."""
        return self.values.shape

    @property
    def size(self) -> int:
        """Number of cells of the table."""
        return int(self.values.size)

    def __repr__(self) -> str:
        return f"Factor(attributes={self.attributes}, shape={self.shape})"

    def copy(self) -> "Factor":
        """Deep copy of the factor.

        Returns
        -------
        factor : Factor
        """
        return Factor(self.attributes, self.values.copy())

    # ---------------------------------------------------------- rearranging
    def transpose(self, attributes: Sequence[str]) -> "Factor":
        """Reorder the axes.

        Parameters
        ----------
        attributes : sequence of str
            A permutation of ``self.attributes``.

        Returns
        -------
        factor : Factor
        """
        attrs = _as_attributes(attributes, "attributes")
        if set(attrs) != set(self.attributes) or len(attrs) != len(self.attributes):
            raise ValueError(
                f"attributes {attrs} is not a permutation of {self.attributes}"
            )
        perm = [self.attributes.index(a) for a in attrs]
        return Factor(attrs, np.transpose(self.values, perm))

    def broadcast_view(self, attributes: Sequence[str]) -> np.ndarray:
        """Values arranged to broadcast against a table over ``attributes``.

        Parameters
        ----------
        attributes : sequence of str
            A superset of ``self.attributes`` in the target axis order.

        Returns
        -------
        view : ndarray
            ``len(attributes)`` axes; size 1 on the axes the factor lacks.
        """
        attrs = tuple(attributes)
        missing = [a for a in self.attributes if a not in attrs]
        if missing:
            raise ValueError(f"attributes lacks {missing} of the factor")
        present = [a for a in attrs if a in self.attributes]
        perm = [self.attributes.index(a) for a in present]
        vals = np.transpose(self.values, perm)
        shape = [self.values.shape[self.attributes.index(a)] if a in self.attributes
                 else 1 for a in attrs]
        return vals.reshape(shape)

    def expand(self, attributes: Sequence[str], domain: ModelDomain) -> "Factor":
        """Broadcast to a superset of attributes in a target order.

        Parameters
        ----------
        attributes : sequence of str
            Target attributes; must contain ``self.attributes``.
        domain : ModelDomain
            Sizes of the target attributes.

        Returns
        -------
        factor : Factor
            Constant along the new axes.
        """
        attrs = _as_attributes(attributes, "attributes")
        shape = _shape_in(attrs, domain)
        for a, s in zip(attrs, shape):
            if a in self.attributes and self.values.shape[self.attributes.index(a)] != s:
                raise ValueError(f"domain disagrees with the factor on attribute {a!r}")
        view = self.broadcast_view(attrs)
        return Factor(attrs, np.array(np.broadcast_to(view, shape)))

    # ------------------------------------------------------------ arithmetic
    def _aligned(self, other: "Factor") -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
        """Both operands as arrays broadcastable over the union of attributes."""
        union = self.attributes + tuple(
            a for a in other.attributes if a not in self.attributes
        )
        for a in other.attributes:
            if a in self.attributes:
                if self.values.shape[self.attributes.index(a)] != \
                        other.values.shape[other.attributes.index(a)]:
                    raise ValueError(f"factors disagree on the size of {a!r}")
        return union, self.broadcast_view(union), other.broadcast_view(union)

    def _binary(self, other: "Factor | float", op) -> "Factor":
        """Apply a broadcasting binary operation."""
        if isinstance(other, Factor):
            union, left, right = self._aligned(other)
            return Factor(union, op(left, right))
        if np.ndim(other) != 0:
            raise ValueError("other must be a Factor or a scalar")
        return Factor(self.attributes, op(self.values, float(other)))

    def __add__(self, other: "Factor | float") -> "Factor":
        """Log-space product (sum of log-potentials)."""
        return self._binary(other, np.add)

    __radd__ = __add__

    def __sub__(self, other: "Factor | float") -> "Factor":
        """Log-space division (difference of log-potentials)."""
        def sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            with np.errstate(invalid="ignore"):
                out = np.subtract(a, b)
            # -inf - -inf: a zero divided by a zero is taken as zero.
            return np.where(np.isnan(out) & np.isneginf(a), -np.inf, out)
        return self._binary(other, sub)

    def __mul__(self, scalar: float) -> "Factor":
        """Scale the values (a power of the potential in log space)."""
        if isinstance(scalar, Factor) or np.ndim(scalar) != 0:
            raise ValueError("scalar must be a real number")
        return Factor(self.attributes, self.values * float(scalar))

    __rmul__ = __mul__

    def __neg__(self) -> "Factor":
        """Negated values (the reciprocal potential in log space)."""
        return Factor(self.attributes, -self.values)

    # ----------------------------------------------------------- reductions
    def _reduce_axes(self, keep: Sequence[str]) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """Validated ``keep`` tuple and the axes summed out."""
        keep_t = _as_attributes(keep, "keep")
        extra = [a for a in keep_t if a not in self.attributes]
        if extra:
            raise ValueError(f"keep has attributes {extra} not in the factor")
        axes = tuple(i for i, a in enumerate(self.attributes) if a not in keep_t)
        return keep_t, axes

    def _reordered(self, keep: tuple[str, ...], values: np.ndarray) -> "Factor":
        """Wrap reduced values (remaining axes in factor order) in keep order."""
        kept = tuple(a for a in self.attributes if a in keep)
        return Factor(kept, values).transpose(keep)

    def logsumexp(self, keep: Sequence[str] = ()) -> "Factor":
        """Marginalise in log space.

        Parameters
        ----------
        keep : sequence of str, default=()
            Attributes kept, in the order of the result's axes.

        Returns
        -------
        factor : Factor
            ``log(sum(exp(values)))`` over the other attributes.
        """
        keep_t, axes = self._reduce_axes(keep)
        return self._reordered(keep_t, logsumexp_axes(self.values, axes))

    def sum(self, keep: Sequence[str] = ()) -> "Factor":
        """Marginalise in linear space.

        Parameters
        ----------
        keep : sequence of str, default=()
            Attributes kept, in the order of the result's axes.

        Returns
        -------
        factor : Factor
            Sum of the values over the other attributes.
        """
        keep_t, axes = self._reduce_axes(keep)
        return self._reordered(keep_t, sum_axes(self.values, axes))

    def exp(self) -> "Factor":
        """Elementwise exponential.

        Returns
        -------
        factor : Factor
        """
        return Factor(self.attributes, np.exp(self.values))

    def log(self) -> "Factor":
        """Elementwise natural log (``-inf`` at zeros).

        Returns
        -------
        factor : Factor
        """
        if np.any(self.values < 0):
            raise ValueError("log of a factor with negative values")
        with np.errstate(divide="ignore"):
            return Factor(self.attributes, np.log(self.values))

    def normalize(self) -> "Factor":
        """Log-normalise so that ``exp()`` sums to one.

        Returns
        -------
        factor : Factor
        """
        total = float(logsumexp_axes(self.values, tuple(range(self.values.ndim))))
        if not np.isfinite(total):
            raise ValueError("cannot normalize a factor whose exp() sums to 0 or inf")
        return Factor(self.attributes, self.values - total)
