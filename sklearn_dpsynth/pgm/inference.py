"""Exact sum-product inference on a junction tree, in log space.

:func:`belief_propagation` runs Hugin-style message passing (leaves to root,
then root to leaves) on log-potentials attached to the maximal cliques of a
:class:`~sklearn_dpsynth.pgm.junction_tree.JunctionTree`; the per-edge axis
bookkeeping is computed once per tree (:func:`message_plan`) and reused.
:class:`CalibratedBeliefs` answers marginal queries over any attribute
subset: from a covering clique when there is one, otherwise by variable
elimination over the smallest subtree whose cliques cover the query.
"""

from __future__ import annotations

import math
import string
from collections import OrderedDict
from dataclasses import dataclass
from functools import partial
from typing import Callable, Mapping, Sequence

import numpy as np

from .domain import ModelDomain
from .factor import (group_marginals, log_sum_shifted, logsumexp_axes,
                     logsumexp_axes_consuming, sum_axes, widened, work_dtype)
from .junction_tree import JunctionTree

__all__ = ["MessagePlan", "message_plan", "ReductionPlan", "reduction_plan",
           "belief_propagation", "calibrate", "CalibratedBeliefs", "potentials_from_marginals",
           "ShiftGuesses", "subset_marginals"]

#: Most cells the marginal cache of :class:`CalibratedBeliefs` holds (32 MiB in float64).
_CACHE_CELLS = 1 << 22
#: Largest joint table (cells) that :meth:`CalibratedBeliefs.marginals` multiplies
#: out for the queries no clique covers (else it eliminates them one by one).
_JOINT_CELLS = 1 << 22
#: The fixed cost of one variable elimination (Python and numpy calls), in
#: cell operations: :meth:`CalibratedBeliefs.marginals` multiplies out a
#: joint table for its uncovered queries only when that is expected to be
#: cheaper than eliminating them one by one.
_ELIMINATION_OVERHEAD = 3e5


@dataclass(frozen=True)
class MessagePlan:
    """Axis bookkeeping of the tree edges, computed once per junction tree.

    Attributes
    ----------
    shapes : list of tuple of int
        Shape of every maximal clique's table.
    child_axes : list of tuple of int
        For clique ``i`` (non-root), the axes of ``i`` summed out to get its
        separator with its parent.
    parent_axes : list of tuple of int
        Axes of the parent of ``i`` summed out to get the same separator.
    child_shape : list of tuple of int
        Separator table reshaped to broadcast against clique ``i``.
    parent_shape : list of tuple of int
        Separator table reshaped to broadcast against the parent of ``i``.
    children : list of list of int
        Children of every clique in the rooted tree.
    upward_groups : list of list of list of int
        For clique ``i``, its children's messages (positions in
        ``children[i]``) grouped to be summed together before they are
        added to its table (``pgm.factor.group_marginals``).
    downward_groups : list of list of list of int
        The same for all of ``i``'s incoming messages: its children's, then
        its parent's (position ``len(children[i])``).
    """

    shapes: list
    child_axes: list
    parent_axes: list
    child_shape: list
    parent_shape: list
    children: list
    upward_groups: list
    downward_groups: list


def _sep_axes(clique: tuple[str, ...], sep: set[str]) -> tuple[int, ...]:
    """Axes of ``clique`` that are not in ``sep``."""
    return tuple(k for k, a in enumerate(clique) if a not in sep)


def _sep_shape(clique: tuple[str, ...], shape: tuple[int, ...], sep: set[str]) -> tuple[int, ...]:
    """Broadcast shape of a separator table against ``clique``."""
    return tuple(s if a in sep else 1 for a, s in zip(clique, shape))


def message_plan(tree: JunctionTree) -> MessagePlan:
    """Axis bookkeeping of a junction tree (cached on the tree).

    Parameters
    ----------
    tree : JunctionTree
        The tree.

    Returns
    -------
    plan : MessagePlan
    """
    if tree._message_plan is not None:
        return tree._message_plan
    shapes = [tuple(tree.domain[a] for a in c) for c in tree.cliques]
    n = len(tree.cliques)
    child_axes, parent_axes = [()] * n, [()] * n
    child_shape, parent_shape = [()] * n, [()] * n
    for i in tree.order[1:]:
        p = tree.parent[i]
        sep = set(tree.cliques[i]) & set(tree.cliques[p])
        child_axes[i] = _sep_axes(tree.cliques[i], sep)
        parent_axes[i] = _sep_axes(tree.cliques[p], sep)
        child_shape[i] = _sep_shape(tree.cliques[i], shapes[i], sep)
        parent_shape[i] = _sep_shape(tree.cliques[p], shapes[p], sep)
    children = _children(tree)
    upward_groups, downward_groups = [], []
    for i, clique_children in enumerate(children):
        everything = frozenset(range(len(shapes[i])))
        kept = [everything - set(parent_axes[j]) for j in clique_children]
        upward_groups.append(group_marginals(shapes[i], kept))
        if i != tree.order[0]:
            kept.append(everything - set(child_axes[i]))
        downward_groups.append(group_marginals(shapes[i], kept))
    plan = MessagePlan(shapes, child_axes, parent_axes, child_shape, parent_shape,
                       children, upward_groups, downward_groups)
    tree._message_plan = plan
    return plan


@dataclass(frozen=True)
class _Reduction:
    """One pass over a calibrated clique: its marginal on ``union``, then each member's.

    Attributes
    ----------
    summed : tuple of int
        Clique axes summed out to get the shared marginal (empty: the
        belief itself is shared).
    members : tuple of tuple
        ``(kind, position, axes)``: ``kind`` is ``"child"`` (``position``
        a child clique) or ``"request"`` (``position`` in the clique's
        requests), ``axes`` the shared marginal's axes summed out to get it.
    """

    summed: tuple[int, ...]
    members: tuple[tuple[str, int, tuple[int, ...]], ...]


@dataclass(frozen=True)
class ReductionPlan:
    """The small marginals read off every calibrated clique, and how they are grouped.

    The probability-space pass of :func:`calibrate` needs each clique's
    marginal on the separator of every child; a caller may ask for more
    marginals of the same clique (e.g. the measured marginals of an
    estimation).  All of them are grouped (``pgm.factor.group_marginals``)
    so that one pass over the clique reads a whole group's union marginal,
    from which the members are summed: a clique with several children and
    measurements is read a few times instead of once per marginal.

    Attributes
    ----------
    requests : list of list of tuple of int
        For every clique, the axes kept by each requested marginal.
    reductions : list of list of _Reduction
        For every clique, its grouped passes.
    """

    requests: list
    reductions: list


def reduction_plan(tree: JunctionTree,
                   requests: Sequence[Sequence[Sequence[int]]] | None = None) -> ReductionPlan:
    """Group the separators and the requested marginals of every clique.

    Parameters
    ----------
    tree : JunctionTree
        The tree.
    requests : sequence of sequence of sequence of int, optional
        For every maximal clique, the axes (of its table) kept by each extra
        marginal wanted from its calibrated belief; none by default.  A
        request must leave out at least one axis.

    Returns
    -------
    plan : ReductionPlan
    """
    plan = message_plan(tree)
    requests = [[tuple(sorted(set(kept))) for kept in clique_requests]
                for clique_requests in (requests or [[] for _ in tree.cliques])]
    if len(requests) != len(tree.cliques):
        raise ValueError("requests must have one list per maximal clique")
    reductions = []
    for i, shape in enumerate(plan.shapes):
        everything = frozenset(range(len(shape)))
        targets = [("child", j, everything - set(plan.parent_axes[j]))
                   for j in plan.children[i]]
        targets += [("request", k, frozenset(kept)) for k, kept in enumerate(requests[i])]
        if any(kept == everything for _, _, kept in targets):
            raise ValueError("a requested marginal must sum out at least one axis")
        passes = []
        for group in group_marginals(shape, [kept for _, _, kept in targets]):
            union = sorted(frozenset().union(*(targets[g][2] for g in group)))
            members = tuple((targets[g][0], targets[g][1],
                             tuple(p for p, a in enumerate(union) if a not in targets[g][2]))
                            for g in group)
            passes.append(_Reduction(tuple(a for a in everything if a not in union), members))
        reductions.append(passes)
    return ReductionPlan(requests, reductions)


def _separators_only(tree: JunctionTree) -> ReductionPlan:
    """The reduction plan without requests (cached on the tree)."""
    if tree._separator_plan is None:
        tree._separator_plan = reduction_plan(tree)
    return tree._separator_plan


def _reduce(belief: np.ndarray, passes: list[_Reduction]) -> dict[tuple[str, int], np.ndarray]:
    """The marginals of one clique's plan, keyed by ``(kind, position)``."""
    out = {}
    for reduction in passes:
        shared = sum_axes(belief, reduction.summed) if reduction.summed else belief
        for kind, position, axes in reduction.members:
            out[kind, position] = sum_axes(shared, axes) if axes else shared
    return out


def _log_divide(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """``new - old`` in log space with ``0 / 0 = 0``."""
    with np.errstate(invalid="ignore"):
        out = new - old
    if old.size and old.min() == -np.inf:
        out[np.isnan(out)] = -np.inf
    return out


def _separator_log(prob: np.ndarray, log_belief: np.ndarray,
                   axes: tuple[int, ...]) -> np.ndarray:
    """Log of a separator marginal of a normalised belief (``prob = exp(log_belief)``).

    ``log_belief`` is read only when some separator entry is tiny enough for
    underflow to matter.
    """
    return log_sum_shifted(prob, log_belief, axes, 0.0)


def _children(tree: JunctionTree) -> list[list[int]]:
    """Children of every clique in the rooted tree (``tree.parent``)."""
    children: list[list[int]] = [[] for _ in tree.cliques]
    for i in tree.order[1:]:
        children[tree.parent[i]].append(i)
    return children


def _gathered(table: np.ndarray, messages: list[tuple[np.ndarray, tuple[int, ...]]],
              groups: list[list[int]], dtype: type | None = None,
              offset: float | None = None) -> np.ndarray:
    """``table`` plus log-space messages (minus ``offset``), in a new array.

    ``table`` is not modified.  The messages of one group (see
    ``MessagePlan``) are summed in their small union space first, so the
    table is passed over once per group; ``offset`` is taken off the first
    group's small sum (no pass of its own).  The result has type ``dtype``
    (by default the table's ``pgm.factor.work_dtype``): float64 tables and
    messages are rounded into a float32 result.
    """
    out = None
    dtype = work_dtype(table) if dtype is None else dtype
    for group in groups:
        shared = None
        for k in group:
            message, shape = messages[k]
            term = message.reshape(shape)
            shared = term if shared is None else shared + term
        if out is None and offset is not None:
            shared = shared - offset
        shared = widened(shared, table.shape)
        out = np.add(table, shared, dtype=dtype) if out is None else out.__iadd__(shared)
    if out is None:
        out = (np.array(table, dtype=dtype, copy=True) if offset is None
               else np.subtract(table, offset, dtype=dtype))
    return out


def _check_partition(log_z: float) -> None:
    """Raise when the log-partition (or the root's maximum) is not finite."""
    if not np.isfinite(log_z):
        raise ValueError("log_potentials give a zero or infinite partition function")


def _normalised_root(log_belief: np.ndarray, keep_log: bool, scale: float = 1.0
                     ) -> tuple[np.ndarray, float]:
    """The root's probabilities and the log-partition, from its unnormalised log-belief.

    One shift by the maximum, one exponential and one scaling (the
    exponentials are summed in float64), instead of a log-sum-exp followed
    by a second exponential.  With ``keep_log=False`` the probabilities are
    written into ``log_belief``; otherwise it is left as it is.  The
    probabilities are multiplied by ``scale`` (in the same pass).
    """
    shift = float(log_belief.max()) if log_belief.size else -np.inf
    _check_partition(shift)
    probs = np.subtract(log_belief, shift, out=None if keep_log else log_belief)
    np.exp(probs, out=probs)
    total = float(np.sum(probs, dtype=np.float64))
    _check_partition(total)
    probs *= probs.dtype.type(scale / total)
    return probs, math.log(total) + shift


#: Smallest slice sum, after the global shift, for which that shift is kept
#: (else every slice gets its own): a slice summing to at least this has its
#: largest entry within ``-log(floor) + log(cells)`` of the global maximum,
#: so an entry that underflows is below about 1e-288 (float64) or 1e-22
#: (float32) times its slice's largest.
_SLICE_FLOOR = {np.dtype(np.float64): math.exp(-30.0), np.dtype(np.float32): math.exp(-20.0)}


def _slice_exponentials(values: np.ndarray, axes: tuple[int, ...], owned: bool,
                        dtype: type, recompute: Callable[[], np.ndarray] | None = None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exponentials of ``values`` shifted per slice over ``axes``, their sums and log-sums.

    Returns ``exped = exp(values - m)``, the slice sums of ``exped`` and the
    log-sums ``log(sum) + m`` (``-inf`` for a slice of ``-inf``).  The shift
    ``m`` is the global maximum when every slice then sums to at least
    :data:`_SLICE_FLOOR` (one cheap maximum instead of one per slice), and
    each slice's own maximum otherwise; either way an entry underflows
    only when it is negligible next to its slice's largest.  ``exped`` is
    written into ``values`` when ``owned`` (``recompute()`` then gives the
    values again, should the per-slice shift be needed).
    """
    shift = float(values.max()) if values.size else 0.0
    if not math.isfinite(shift):
        shift = 0.0
    exped = np.subtract(values, shift, out=values if owned else None,
                        dtype=None if owned else dtype)
    np.exp(exped, out=exped)
    sums = sum_axes(exped, axes)
    if sums.size and sums.min() < _SLICE_FLOOR[np.dtype(exped.dtype)]:
        if owned:
            values = recompute()
        slice_max = np.max(values, axis=axes, keepdims=True)
        slice_max[~np.isfinite(slice_max)] = 0.0
        exped = np.subtract(values, slice_max, out=values if owned else exped)
        np.exp(exped, out=exped)
        sums = sum_axes(exped, axes)
        shift = slice_max.reshape(sums.shape)
    with np.errstate(divide="ignore"):
        log_sums = np.log(sums) + shift
    return exped, sums, log_sums


#: Largest slice sum (and root total) for which a guessed shift is kept
#: (:class:`ShiftGuesses`): far from float32's overflow at about 3e38.
_GUESS_CEILING = math.exp(30.0)
#: Smallest root total for which a guessed shift is kept: the root's
#: largest probability is then at least ``exp(-5)`` of the total over its
#: cells' number, as good as the exact maximum's shift for float rounding.
_ROOT_GUESS_FLOOR = math.exp(-5.0)
#: A clique whose guessed shift failed this many times is no longer guessed.
_GUESS_FAILURES = 3


class ShiftGuesses:
    """Exponential shifts remembered between belief propagations of similar tables.

    Every exponential of the probability-space pass is shifted so that it
    cannot overflow: by default by the table's maximum, one read of the
    whole table before the exponentials.  An optimisation calibrates
    tables that change little from one call to the next, so the previous
    call's largest upward message (an upper bound of the clique's
    maximum then) and log-partition are as good a shift, and they cost no
    pass: the shift is folded into the small sum of incoming messages.
    A guess is kept only when every slice sum lands where the exact
    maximum's shift would be accepted (at least ``_SLICE_FLOOR``, at most
    ``_GUESS_CEILING``; for the root, between ``_ROOT_GUESS_FLOOR`` and the
    ceiling); otherwise that clique is redone with its exact maximum (and
    after ``_GUESS_FAILURES`` failures, e.g. a separator slice of
    structural zeros, no longer guessed).  Results then agree with
    unguessed inference up to float rounding.
    """

    def __init__(self) -> None:
        self.shifts: dict = {}
        self.failures: dict = {}

    def get(self, key) -> float | None:
        """The guessed shift of ``key`` (a clique index or ``"root"``), or None."""
        if self.failures.get(key, 0) >= _GUESS_FAILURES:
            return None
        return self.shifts.get(key)

    def record(self, key, shift: float) -> None:
        """Remember ``shift`` for the next call (ignored when not finite)."""
        if math.isfinite(shift):
            self.shifts[key] = shift
        else:
            self.shifts.pop(key, None)

    def failed(self, key) -> None:
        """A guess of ``key`` was rejected."""
        self.failures[key] = self.failures.get(key, 0) + 1


def _guessed_exponentials(shifted: np.ndarray, axes: tuple[int, ...], guess: float
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`_slice_exponentials` of values already shifted by ``guess`` (consumed).

    None when some slice sum falls outside ``[_SLICE_FLOOR, _GUESS_CEILING]``.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is rejected below
        exped = np.exp(shifted, out=shifted)
        sums = sum_axes(exped, axes)
    if sums.size and not (sums.min() >= _SLICE_FLOOR[np.dtype(exped.dtype)]
                          and sums.max() <= _GUESS_CEILING):
        return None
    with np.errstate(divide="ignore"):
        log_sums = np.log(sums) + guess
    return exped, sums, log_sums


def _upward_exponentials(table: np.ndarray, messages: list, groups: list,
                         axes: tuple[int, ...], dtype: type | None, guess: float | None
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Exponentials of a non-root clique shifted by ``guess``, or None if rejected."""
    if guess is None:
        return None
    if messages:
        shifted = _gathered(table, messages, groups, dtype, offset=guess)
    else:
        shifted = np.subtract(table, guess, dtype=work_dtype(table) if dtype is None else dtype)
    return _guessed_exponentials(shifted, axes, guess)


def _guessed_root(table: np.ndarray, messages: list, groups: list, dtype: type | None,
                  guess: float | None, scale: float) -> tuple[np.ndarray, float] | None:
    """:func:`_normalised_root` shifted by ``guess``, or None if rejected."""
    if guess is None:
        return None
    probs = _gathered(table, messages, groups, dtype, offset=guess)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is rejected below
        np.exp(probs, out=probs)
        total = float(np.sum(probs, dtype=np.float64))
    if not _ROOT_GUESS_FLOOR <= total <= _GUESS_CEILING:
        return None
    probs *= probs.dtype.type(scale / total)
    return probs, math.log(total) + guess


def _calibrated_probabilities(tree: JunctionTree, plan: MessagePlan,
                              log_potentials: Sequence[np.ndarray], dtype: type | None,
                              reductions: ReductionPlan, guesses: ShiftGuesses | None = None,
                              scale: float = 1.0) -> tuple[list, float, list]:
    """:func:`belief_propagation` with ``keep_log=False``, downward in probability space.

    Upward, every non-root clique's table plus its children's messages is
    exponentiated (:func:`_slice_exponentials`: shifted by its maximum, or
    by each separator slice's own maximum when a slice would lose
    precision) and kept; its message is the log of the slice sums.
    Downward, a clique's belief is that array times the parent's separator
    marginal over the slice sums (a small broadcast factor): no second pass
    of messages and exponentials over the clique.  A belief underflows only
    when it is below about 1e-288 (float64; 1e-22 in float32) times its
    separator slice's largest, so below that absolutely, much as in log space.
    The separators a calibrated clique sends down and the marginals
    ``reductions`` requests of it are read in grouped passes
    (:class:`ReductionPlan`).  Returns the beliefs, the log-partition and,
    for every clique, its requested marginals.
    """
    children = plan.children
    n = len(tree.cliques)
    exped: list = [None] * n
    sums: list = [None] * n
    upward: list = [None] * n
    for i in reversed(tree.order[1:]):
        work = work_dtype(log_potentials[i]) if dtype is None else dtype
        messages = [(upward[j], plan.parent_shape[j]) for j in children[i]]
        guessed = _upward_exponentials(log_potentials[i], messages, plan.upward_groups[i],
                                       plan.child_axes[i], dtype,
                                       None if guesses is None else guesses.get(i))
        if guessed is not None:
            exped[i], sums[i], upward[i] = guessed
        elif children[i]:
            redo = partial(_gathered, log_potentials[i], messages, plan.upward_groups[i], dtype)
            exped[i], sums[i], upward[i] = _slice_exponentials(
                redo(), plan.child_axes[i], True, work, redo)
        else:
            exped[i], sums[i], upward[i] = _slice_exponentials(
                log_potentials[i], plan.child_axes[i], False, work)
        if guesses is not None:
            if guessed is None and guesses.get(i) is not None:
                guesses.failed(i)
            guesses.record(i, float(upward[i].max()) if upward[i].size else -np.inf)
    root = tree.order[0]
    messages = [(upward[j], plan.parent_shape[j]) for j in children[root]]
    probs: list = [None] * n
    guess = None if guesses is None else guesses.get("root")
    guessed = _guessed_root(log_potentials[root], messages, plan.upward_groups[root], dtype,
                            guess, scale)
    if guessed is None:
        probs[root], log_z = _normalised_root(
            _gathered(log_potentials[root], messages, plan.upward_groups[root], dtype), False,
            scale)
        if guess is not None:
            guesses.failed("root")
    else:
        probs[root], log_z = guessed
    if guesses is not None:
        guesses.record("root", log_z)
    requested: list = [None] * n
    for p in tree.order:
        marginals = _reduce(probs[p], reductions.reductions[p])
        requested[p] = [marginals["request", k] for k in range(len(reductions.requests[p]))]
        for i in children[p]:
            separator = marginals["child", i].reshape(plan.child_shape[i])
            slice_sums = sums[i].reshape(plan.child_shape[i])
            with np.errstate(divide="ignore", invalid="ignore"):
                factor = separator / slice_sums
            factor[slice_sums == 0] = 0.0
            probs[i] = exped[i]
            probs[i] *= widened(factor, probs[i].shape)
            exped[i] = sums[i] = None
    return probs, log_z, requested


def calibrate(tree: JunctionTree, log_potentials: Sequence[np.ndarray],
              reductions: ReductionPlan, dtype: type | None = None,
              guesses: ShiftGuesses | None = None, scale: float = 1.0
              ) -> tuple[list[np.ndarray], float, list[list[np.ndarray]]]:
    """Calibrated probabilities and some of their small marginals, in one sweep.

    :func:`belief_propagation` with ``keep_log=False``, which also returns
    the marginals that ``reductions`` requests of each clique; they are
    read in the same grouped passes as the separators of the downward pass
    (an estimation's measured marginals thus cost no pass of their own
    over a clique that has children).

    Parameters
    ----------
    tree : JunctionTree
        The junction tree.
    log_potentials : sequence of ndarray
        One log-potential table per maximal clique; not modified.
    reductions : ReductionPlan
        From :func:`reduction_plan` on ``tree``.
    dtype : {numpy.float64, numpy.float32}, default=None
        As in :func:`belief_propagation`.
    guesses : sklearn_dpsynth.pgm.ShiftGuesses, optional
        Shifts remembered from the previous call on similar tables (and
        updated): the exponentials then skip the reads of each table's
        maximum; the results agree up to float rounding.
    scale : float, default=1.0
        Factor of every returned probability and marginal (one multiplication
        of the root's probabilities carries it down the whole tree: a caller
        that wants scaled beliefs spares a pass over them).

    Returns
    -------
    beliefs : list of ndarray
        Probabilities of the maximal cliques, times ``scale``.
    log_partition : float
    marginals : list of list of ndarray
        For every clique, its requested marginals (kept axes in the
        clique's order), in the order of the requests, times ``scale``.
    """
    plan = message_plan(tree)
    _check_tables(plan, log_potentials)
    return _calibrated_probabilities(tree, plan, log_potentials, dtype, reductions, guesses,
                                     scale)


def _check_tables(plan: MessagePlan, log_potentials: Sequence[np.ndarray]) -> None:
    """One table per maximal clique, each of its clique's shape."""
    if len(log_potentials) != len(plan.shapes):
        raise ValueError("log_potentials must have one table per maximal clique")
    for table, shape in zip(log_potentials, plan.shapes):
        if np.shape(table) != shape:
            raise ValueError(f"log_potentials table has shape {np.shape(table)}, "
                             f"expected {shape}")


def belief_propagation(
    tree: JunctionTree, log_potentials: Sequence[np.ndarray], keep_log: bool = True,
    dtype: type | None = None,
) -> tuple[list[np.ndarray | None], list[np.ndarray], float]:
    """Calibrate a junction tree by two-pass sum-product in log space.

    Shafer-Shenoy scheduling on a rooted tree: the upward pass sends each
    clique's separator message to its parent, the downward pass builds each
    clique's log-belief (its potential plus all incoming messages) once its
    parent is calibrated.  A clique's log-belief is only materialised while
    its messages are computed, so besides the output at most a few
    clique-sized temporaries are alive (the input tables are never copied
    as a whole).

    Parameters
    ----------
    tree : JunctionTree
        The junction tree.
    log_potentials : sequence of ndarray
        One log-potential table per maximal clique (``tree.cliques`` order,
        axes in the clique's attribute order); not modified.
    keep_log : bool, default=True
        Return the log-marginals, exact even below double precision.  With
        False only the probabilities are returned, and the downward pass
        runs in probability space: each clique's upward exponentials times a
        small separator factor (one model-sized array fewer and no second
        pass of exponentials).
    dtype : {numpy.float64, numpy.float32}, default=None
        Type of the messages, beliefs and clique-sized temporaries; by
        default float32 for float32 tables and float64 otherwise.  The
        log-partition is accumulated in float64 either way.

    Returns
    -------
    log_beliefs : list of ndarray (of None when ``keep_log=False``)
        Normalised log-marginals of the maximal cliques.
    beliefs : list of ndarray
        The same marginals as probabilities.
    log_partition : float
        Log of the sum over all cells of the product of the potentials.
    """
    plan = message_plan(tree)
    _check_tables(plan, log_potentials)
    if not keep_log:
        probs, log_z, _ = _calibrated_probabilities(tree, plan, log_potentials, dtype,
                                                    _separators_only(tree))
        return [None] * len(tree.cliques), probs, log_z
    children = plan.children
    upward: list = [None] * len(tree.cliques)
    for i in reversed(tree.order[1:]):
        if children[i]:
            messages = [(upward[j], plan.parent_shape[j]) for j in children[i]]
            redo = partial(_gathered, log_potentials[i], messages, plan.upward_groups[i],
                           dtype)
            upward[i] = logsumexp_axes_consuming(redo(), plan.child_axes[i], redo)
        else:  # a leaf: logsumexp_axes reads its table without writing
            upward[i] = logsumexp_axes(log_potentials[i], plan.child_axes[i], dtype)
    downward: list = [None] * len(tree.cliques)
    logs: list = [None] * len(tree.cliques)
    probs: list = [None] * len(tree.cliques)
    log_z = 0.0
    for p in tree.order:
        incoming = [(upward[j], plan.parent_shape[j]) for j in children[p]]
        if downward[p] is not None:
            incoming.append((downward[p], plan.child_shape[p]))
        belief = _gathered(log_potentials[p], incoming, plan.downward_groups[p], dtype)
        if p == tree.order[0]:
            probs[p], log_z = _normalised_root(belief, keep_log=True)
            belief -= log_z
        else:
            probs[p] = np.exp(belief)
        logs[p] = belief
        for i in children[p]:
            new = _separator_log(probs[p], belief, plan.parent_axes[i])
            downward[i] = _log_divide(new, upward[i])
    return logs, probs, log_z


def _einsum_product(
    factors: list[tuple[tuple[str, ...], np.ndarray]], keep: tuple[str, ...]
) -> np.ndarray:
    """Sum of the product of factors over every attribute outside ``keep``."""
    names = sorted({a for attrs, _ in factors for a in attrs} | set(keep))
    if len(names) > len(string.ascii_letters):
        raise ValueError("too many attributes in one elimination step")
    letter = {a: string.ascii_letters[k] for k, a in enumerate(names)}
    spec = ",".join("".join(letter[a] for a in attrs) for attrs, _ in factors)
    spec += "->" + "".join(letter[a] for a in keep)
    # plain C einsum: one sum-of-products loop, no BLAS (whose threads can
    # stall on a busy machine); each call only spans one elimination scope
    return np.einsum(spec, *[values for _, values in factors])


def _scope_cells(
    factors: list[tuple[tuple[str, ...], np.ndarray]], v: str, sizes: Mapping[str, int]
) -> float:
    """Cells of the product of the factors that mention ``v`` (a float product:
    ``inf`` past float's range, never an ``OverflowError``)."""
    scope: set[str] = set()
    for attrs, _ in factors:
        if v in attrs:
            scope.update(attrs)
    return math.prod(float(sizes[a]) for a in scope)


def _eliminate(
    factors: list[tuple[tuple[str, ...], np.ndarray]],
    keep: tuple[str, ...],
    sizes: ModelDomain,
) -> np.ndarray:
    """Variable elimination (greedy smallest intermediate) down to ``keep``.

    Eliminating ``v`` only changes the factors of the attributes in its
    scope, so only their intermediate sizes are recomputed.
    """
    factors = list(factors)
    sizes = {a: sizes[a] for attrs, _ in factors for a in attrs}
    hidden = sorted(set(sizes) - set(keep))
    cells = {u: _scope_cells(factors, u, sizes) for u in hidden}
    while hidden:
        v = min(hidden, key=lambda u: (cells[u], u))
        touching = [f for f in factors if v in f[0]]
        factors = [f for f in factors if v not in f[0]]
        scope = tuple(sorted({a for attrs, _ in touching for a in attrs} - {v}))
        factors.append((scope, _einsum_product(touching, scope)))
        hidden.remove(v)
        del cells[v]
        for u in scope:
            if u in cells:
                cells[u] = _scope_cells(factors, u, sizes)
    return _einsum_product(factors, keep)


def subset_marginals(values: np.ndarray, wanted: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Marginals of one table on several axis subsets, sharing their partial sums.

    The axes are visited from the first to the last.  At each axis the
    subsets that keep it carry it along as a leading "batch" axis (a
    reshape, no pass over the data) and those that drop it share one sum
    over it; runs of axes that no subset keeps are summed out in one go.
    Every array read or written stays C-contiguous, and a partial sum is
    computed once for all the subsets that agree on the axes visited so
    far: the triples of an 18-column binary table cost a few dozen passes
    over its cells instead of one pass (and one transposed copy) each.
    The results equal ``sum_axes`` of every subset up to float rounding.

    Parameters
    ----------
    values : ndarray
        The table (C-contiguous, or it is copied so).
    wanted : sequence of sequence of int
        Axes kept by each marginal, each strictly increasing (possibly
        empty: the grand total).

    Returns
    -------
    marginals : list of ndarray
        One per entry of ``wanted``, axes in the table's order (new arrays).
    """
    values = np.ascontiguousarray(values)
    shape = values.shape
    requests = []
    for k, kept in enumerate(wanted):
        kept = tuple(int(a) for a in kept)
        if any(b <= a for a, b in zip(kept, kept[1:])) or any(
                not 0 <= a < values.ndim for a in kept):
            raise ValueError(f"wanted axes must be increasing table axes, got {kept}")
        requests.append((k, kept))
    out: list = [None] * len(requests)
    _visit(values.reshape(1, -1), 0, shape, requests, out)
    return [np.reshape(m, tuple(shape[a] for a in kept)) for m, (_, kept) in zip(out, requests)]


def _visit(values: np.ndarray, position: int, shape: tuple[int, ...],
           requests: list[tuple[int, tuple[int, ...]]], out: list) -> None:
    """One node of :func:`subset_marginals`: ``values`` is ``(batch, rest)``.

    ``batch`` runs over the codes of the kept axes visited so far, ``rest``
    over the axes ``position:`` of the table; ``requests`` are
    ``(index, kept)`` with every kept axis before ``position`` already in
    the batch.
    """
    pending = []
    for index, kept in requests:
        remaining = tuple(a for a in kept if a >= position)
        if remaining:
            pending.append((index, kept, remaining))
        else:
            out[index] = _sum_middle(values.reshape(values.shape[0], -1, 1))
    if not pending:
        return
    nxt = min(remaining[0] for _, _, remaining in pending)
    if nxt > position:  # axes position..nxt-1: nobody keeps them
        skipped = math.prod(shape[position:nxt])
        values = _sum_middle(values.reshape(values.shape[0], skipped, -1))
    size = shape[nxt]
    keep = [(i, k) for i, k, r in pending if r[0] == nxt]
    drop = [(i, k) for i, k, r in pending if r[0] != nxt]
    if drop:
        _visit(_sum_middle(values.reshape(values.shape[0], size, -1)), nxt + 1, shape, drop,
               out)
    if keep:
        _visit(values.reshape(values.shape[0] * size, -1), nxt + 1, shape, keep, out)


def _sum_middle(values: np.ndarray) -> np.ndarray:
    """Sum of a ``(batch, n, rest)`` array over its middle axis: ``(batch, rest)``."""
    batch, n, rest = values.shape
    if rest == 1:
        flat = values.reshape(batch, n)
        return sum_axes(flat, (1,)).reshape(batch, 1) if n > 1 else flat.copy()
    if n <= 8:
        acc = values[:, 0, :].copy()
        for k in range(1, n):
            acc += values[:, k, :]
        return acc
    if batch == 1:
        return np.add.reduce(values[0], axis=0)[np.newaxis]
    return np.add.reduce(values, axis=1)


def _check_query(attrs: Sequence[str]) -> tuple[str, ...]:
    """``attrs`` as a tuple, checked to be distinct attribute names (not a str)."""
    if isinstance(attrs, str):
        raise ValueError("attrs must be a sequence of attribute names, not a str")
    attrs = tuple(attrs)
    if len(set(attrs)) != len(attrs):
        raise ValueError(f"attrs has repeated attributes: {attrs}")
    return attrs


class CalibratedBeliefs:
    """Calibrated clique marginals of a junction-tree model.

    Parameters
    ----------
    tree : JunctionTree
        The junction tree.
    log_potentials : sequence of ndarray
        One log-potential table per maximal clique of ``tree`` (float32
        tables are calibrated in float64).

    Attributes
    ----------
    tree : JunctionTree
    log_beliefs : list of ndarray
        Normalised log-marginals of the maximal cliques (computed from
        ``beliefs`` on each access: they are not kept, to hold one
        model-sized array instead of two).
    beliefs : list of ndarray
        Marginal probabilities of the maximal cliques.
    log_partition : float
        Log-partition function of the potentials.
    """

    def __init__(self, tree: JunctionTree, log_potentials: Sequence[np.ndarray]) -> None:
        self.tree = tree
        # float64 whatever the tables' dtype: answers, likelihoods and
        # samples are then exact for the stored tables (a float32 model's
        # queries cost one float64 inference)
        _, self.beliefs, self.log_partition = belief_propagation(
            tree, log_potentials, keep_log=False, dtype=np.float64
        )
        self._cache: OrderedDict[tuple[str, ...], np.ndarray] = OrderedDict()
        self._cache_cells = 0
        self._conditionals: dict[int, np.ndarray] = {}

    @property
    def log_beliefs(self) -> list[np.ndarray]:
        """Log of ``beliefs`` (new arrays on each access)."""
        with np.errstate(divide="ignore"):
            return [np.log(b) for b in self.beliefs]

    def marginal(self, attrs: Sequence[str]) -> np.ndarray:
        """Exact marginal probabilities of any attribute subset.

        Parameters
        ----------
        attrs : sequence of str
            Distinct attributes of the domain, in the output axis order.

        Returns
        -------
        marginal : ndarray
            Probabilities of shape ``(size(attrs[0]), ...)``; sums to one.
        """
        return np.array(self.marginal_view(attrs), order="C")

    def marginal_view(self, attrs: Sequence[str]) -> np.ndarray:
        """Like :meth:`marginal` but possibly a read-only view of the cache.

        Parameters
        ----------
        attrs : sequence of str
            Distinct attributes of the domain, in the output axis order.

        Returns
        -------
        marginal : ndarray
            Do not modify it.
        """
        attrs = _check_query(attrs)
        key = self.tree.sort(attrs)
        values = self._cached(key)
        return np.transpose(values, [key.index(a) for a in attrs])

    def marginals(self, queries: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Marginal probabilities of many attribute subsets at once.

        The same answers as :meth:`marginal` on each query, up to float
        rounding, at a fraction of the cost when there are many: the
        queries covered by a maximal clique are read off the clique that
        :meth:`marginal` would use, all of that clique's in one shared pass
        (``pgm.inference.subset_marginals``); the others, when the joint table over
        the attributes of the subtree covering all of them has at most
        ``2**22`` cells and multiplying it out is expected to cost less than
        their eliminations (a cost model counting cells and a fixed cost per
        elimination), from that joint table (the subtree's factorisation
        multiplied out once), and otherwise one by one by variable
        elimination, as :meth:`marginal` does.  Nothing is cached.

        Parameters
        ----------
        queries : sequence of sequence of str
            Each a sequence of distinct attributes, in its output axis order.

        Returns
        -------
        marginals : list of ndarray
            One new C-ordered array per query.
        """
        queries = [_check_query(attrs) for attrs in queries]
        keys = [self.tree.sort(attrs) for attrs in queries]
        by_clique: dict[int, list[int]] = {}
        uncovered: list[int] = []
        for k, key in enumerate(keys):
            if not key:
                continue
            index = self.tree.index_containing(key)
            if index is None:
                uncovered.append(k)
            else:
                by_clique.setdefault(index, []).append(k)
        found: list = [np.array(1.0) if not key else None for key in keys]
        for index, members in by_clique.items():
            self._read_clique(self.tree.cliques[index], self.beliefs[index], keys, members,
                              found)
        if uncovered:
            self._read_uncovered(keys, uncovered, found)
        return [np.array(np.transpose(values, [key.index(a) for a in attrs]), order="C")
                for values, key, attrs in zip(found, keys, queries)]

    @staticmethod
    def _read_clique(clique: tuple[str, ...], table: np.ndarray,
                     keys: list[tuple[str, ...]], members: list[int], found: list) -> None:
        """Fill ``found[k]`` for the ``members`` keys, all inside one table over ``clique``.

        ``clique`` and the keys are in the tree's canonical order, so the
        kept axes of each key come out in the key's own order.
        """
        axis = {a: i for i, a in enumerate(clique)}
        wanted = [tuple(axis[a] for a in keys[k]) for k in members]
        for k, values in zip(members, subset_marginals(table, wanted)):
            found[k] = values

    def _read_uncovered(self, keys: list[tuple[str, ...]], uncovered: list[int],
                        found: list) -> None:
        """Fill ``found[k]`` for keys no maximal clique covers."""
        wanted = set().union(*(keys[k] for k in uncovered))
        nodes = self._covering_subtree(wanted)
        attrs = self.tree.sort(set().union(*(self.tree.cliques[i] for i in nodes)))
        joint_cells = math.prod(float(self.tree.domain[a]) for a in attrs)
        clique_cells = np.mean([self.beliefs[i].size for i in nodes])
        one_by_one = len(uncovered) * (2.0 * clique_cells + _ELIMINATION_OVERHEAD)
        if joint_cells > _JOINT_CELLS or joint_cells * (len(nodes) + 4) > one_by_one:
            for k in uncovered:
                found[k] = self._eliminated_marginal(keys[k])
            return
        joint = self._subtree_joint(nodes, attrs)
        self._read_clique(attrs, joint, keys, uncovered, found)

    def _subtree_joint(self, nodes: list[int], attrs: tuple[str, ...]) -> np.ndarray:
        """Joint probabilities over ``attrs``: a covering subtree's factorisation multiplied out."""
        shape = tuple(self.tree.domain[a] for a in attrs)
        joint = None
        for clique, table in self._subtree_factors(nodes):
            # clique and attrs are both in the canonical order: no transpose
            aligned = table.reshape([self.tree.domain[a] if a in clique else 1 for a in attrs])
            joint = (np.broadcast_to(aligned, shape).copy() if joint is None
                     else np.multiply(joint, aligned, out=joint))
        return joint

    def _cached(self, key: tuple[str, ...]) -> np.ndarray:
        """Canonical-order marginal through a bounded LRU cache."""
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        values = self._sorted_marginal(key)
        values.flags.writeable = False
        if values.size <= _CACHE_CELLS:
            self._cache[key] = values
            self._cache_cells += values.size
            while self._cache_cells > _CACHE_CELLS:
                _, old = self._cache.popitem(last=False)
                self._cache_cells -= old.size
        return values

    def _sorted_marginal(self, key: tuple[str, ...]) -> np.ndarray:
        """Marginal with axes in the tree's canonical order."""
        if not key:
            return np.array(1.0)
        index = self.tree.index_containing(key)
        if index is not None:
            clique = self.tree.cliques[index]
            axes = tuple(k for k, a in enumerate(clique) if a not in key)
            return sum_axes(self.beliefs[index], axes)
        return self._eliminated_marginal(key)

    def _covering_subtree(self, wanted: set[str]) -> list[int]:
        """Smallest subtree covering ``wanted``, by pruning useless leaves."""
        tree = self.tree
        alive = set(range(len(tree.cliques)))
        changed = True
        while changed and len(alive) > 1:
            changed = False
            for i in sorted(alive):
                nbrs = [j for j in tree.neighbor_indices(i) if j in alive]
                if len(nbrs) != 1 or len(alive) == 1:
                    continue
                if (wanted & set(tree.cliques[i])) <= set(tree.cliques[nbrs[0]]):
                    alive.discard(i)
                    changed = True
        return [i for i in tree.order if i in alive]

    def _conditional(self, i: int) -> np.ndarray:
        """Probabilities of clique ``i`` given its separator with its parent."""
        if i not in self._conditionals:
            self._conditionals[i] = self._compute_conditional(i)
        return self._conditionals[i]

    def _compute_conditional(self, i: int) -> np.ndarray:
        """Divide the belief of clique ``i`` by its parent separator's."""
        plan = message_plan(self.tree)
        belief = self.beliefs[i]
        sep = sum_axes(belief, plan.child_axes[i]).reshape(plan.child_shape[i])
        with np.errstate(invalid="ignore", divide="ignore"):
            cond = np.where(sep > 0, belief / np.where(sep > 0, sep, 1.0), 0.0)
        return cond

    def _eliminated_marginal(self, key: tuple[str, ...]) -> np.ndarray:
        """Variable elimination over the covering subtree's factorisation."""
        factors = self._subtree_factors(self._covering_subtree(set(key)))
        return _eliminate(factors, key, self.tree.domain)

    def _subtree_factors(self, nodes: list[int]) -> list[tuple[tuple[str, ...], np.ndarray]]:
        """A subtree's factorisation: its root's belief, then each other clique's conditional."""
        top = nodes[0]
        return [(self.tree.cliques[top], self.beliefs[top])] + [
            (self.tree.cliques[i], self._conditional(i)) for i in nodes[1:]]


def potentials_from_marginals(
    tree: JunctionTree, marginals: Sequence[np.ndarray], dtype: type | None = None
) -> list[np.ndarray]:
    """Log-potentials whose calibrated beliefs are given clique marginals.

    For consistent marginals ``mu_C`` of the maximal cliques, the
    distribution ``prod_C mu_C / prod_S mu_S`` has exactly these marginals;
    each separator is divided out of the child clique of its tree edge.

    Parameters
    ----------
    tree : JunctionTree
        The junction tree.
    marginals : sequence of ndarray
        Consistent probability tables, one per maximal clique.
    dtype : {numpy.float64, numpy.float32}, default=None
        Type of the tables; by default that of the marginals.

    Returns
    -------
    tables : list of ndarray
        Log-potentials with log-partition 0; zero probabilities stay exact
        zeros (``-inf``).
    """
    plan = message_plan(tree)
    with np.errstate(divide="ignore"):
        tables = [np.log(m, dtype=dtype or work_dtype(m)) for m in marginals]
        for i in tree.order[1:]:
            sep = sum_axes(marginals[i], plan.child_axes[i]).reshape(plan.child_shape[i])
            tables[i] = _log_divide(tables[i], np.broadcast_to(np.log(sep), tables[i].shape))
    return tables
