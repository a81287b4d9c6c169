"""Mirror descent on the log-potentials of a junction-tree model.

The mirror map is the (negative) entropy of the model's joint
distribution, so a step ``theta <- theta - s * grad`` on the log-potentials
is exactly the entropic mirror step on the marginal polytope (McKenna,
Sheldon, Miklau, ICML 2019).  Two schemes share one loop:

* plain mirror descent (``accelerated=False``);
* the accelerated Bregman gradient method of Auslender-Teboulle / Tseng
  (``accelerated=True``): ``y = (1-a) x + a z``, a mirror step of length
  ``s / a`` from ``z`` with the gradient at ``y``, ``x <- (1-a) x + a z'``,
  with ``a`` following the FISTA recursion adapted to changing steps.
  Mixtures of consistent marginals stay consistent, so ``x`` and ``y``
  need no inference of their own.  Whenever the loss of ``x`` would rise,
  the momentum is dropped (``z <- x``, ``a = 1``), which keeps the loss
  history non-increasing.

The step ``s`` is adapted by backtracking on the sufficient-decrease test

    L(x') <= L(y) + <g, x' - y> + (a^2 N / s) KL(z' || z),

that holds for any step below the inverse smoothness constant (entropy is
1-strongly convex in the L1 norm).  For this update
``KL(z'||z) = -(s / (a N)) <g, mu(z')> - (A(z') - A(z))``, so the test
costs nothing beyond the belief propagation of ``z'``.  The first trial
step is the safe ``N / L`` (:meth:`Objective.smoothness`); accepted steps
grow ``s`` (x4 until the first rejection, x1.2 afterwards) and rejected ones
halve it, so an iteration costs about 1.3 belief propagations.  (x1.1 takes
about 1.2 but changed AIM's selections: 2-way TVD 0.0404 -> 0.0409 on Adult
at epsilon 1 over 5 seeds, within noise; x1.2 was kept.)

A trial step is written into the iterate's tables in place (one pass per
measurement group over the touched tables) and inference reads them
directly; a rejected trial's terms are replaced by the next trial's, or
taken back out (:class:`_SteppedTables`).  Besides its tables, an
iteration holds two model-sized sets of beliefs (``x``'s and the trial's).
Consecutive trials' tables differ by one step, so each inference takes its
exponentials' shifts from the previous one
(:class:`~sklearn_dpsynth.pgm.ShiftGuesses`: no read of each
table's maximum), and a trial's beliefs come out of inference already
multiplied by the coefficient with which they enter ``x``'s running
average (no pass to scale them).  Both change results only by float
rounding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .inference import (ReductionPlan, ShiftGuesses, calibrate, potentials_from_marginals,
                        reduction_plan)
from .junction_tree import JunctionTree
from .measurement import MeasuredCounts, Objective, plus_terms

__all__ = ["mirror_descent"]

_GROWTH = 1.2
_FAST_GROWTH = 4.0  # until the first backtrack: the safe initial step is tiny
_SHRINK = 0.5
_SLACK = 1e-12
#: Rounding error of a float32 log-partition (float32 messages and beliefs):
#: the sufficient-decrease test cannot resolve a KL term below it.
_LOG_Z_NOISE = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 0.0}
#: Backtracking gives up below this multiple of the safe step ``N / L``.  In
#: exact arithmetic every step up to ``N / L`` passes the test, so a
#: float32 rejection there can only be rounding (the loss is too flat for
#: float32 counts): the estimation is then "stalled", and
#: :func:`~sklearn_dpsynth.pgm.estimate` finishes it in float64.  float64
#: keeps halving (to 1e-12 of it) before it calls the optimum reached.
_STALL_FLOOR = {np.dtype(np.float32): 1.0, np.dtype(np.float64): 1e-12}


@dataclass
class _Point:
    """A model on the tree: its beliefs, counts and log-partition.

    Its log tables are those of the :class:`_SteppedTables` it was computed
    from: a trial's step is written into them in place, and taken back when
    the trial is rejected for good.
    """

    beliefs: list
    counts: list
    log_z: float


@dataclass
class _Sweep:
    """What every inference of one optimisation shares.

    Attributes
    ----------
    plan : ReductionPlan
        The separators and measured marginals read off each clique.
    guesses : ShiftGuesses
        The exponentials' shifts of the previous inference (consecutive
        iterates differ by one step, so they spare each table's maximum).
    """

    plan: ReductionPlan
    guesses: ShiftGuesses


def _calibrated(tree: JunctionTree, tables: list, objective: Objective,
                reductions: "_Sweep", dtype: type, scale: float = 1.0
                ) -> tuple[list, list, float]:
    """Beliefs (times ``scale``), measured counts and log-partition of ``tables``.

    The measured marginals are read in the same grouped passes over the
    clique beliefs as the downward pass's separators.
    """
    beliefs, log_z, shared = calibrate(tree, tables, reductions.plan, dtype,
                                       reductions.guesses, scale)
    counts = objective.counts(beliefs, shared)
    if scale != 1.0:
        counts.flat *= 1.0 / scale
    return beliefs, counts, log_z


def _start(tree: JunctionTree, tables: list, objective: Objective, reductions: "_Sweep",
           dtype: type, owned: set[int]) -> tuple[_Point, "_SteppedTables"]:
    """A starting point: inference on ``tables``, whose log-partition becomes the lag.

    ``owned`` are the indices of the tables that may be written in place.
    """
    beliefs, counts, log_z = _calibrated(tree, tables, objective, reductions, dtype)
    stepped = _SteppedTables(list(tables), owned, lag=log_z)
    return _Point(beliefs, counts, 0.0), stepped


class _SteppedTables:
    """The mirror iterate's log-potentials, stepped in place.

    A trial adds its step's terms (one small array per measurement group,
    :meth:`Objective.step_terms`) to the tables and runs inference on them
    directly, so a step costs one pass per group over the touched tables,
    however many times inference reads them.  The terms of a rejected trial
    stay pending: the next trial adds the difference of its terms and
    theirs (computed in the groups' small spaces), and :meth:`withdraw`
    subtracts them when no trial follows.  Tables that this optimisation
    did not make (``owned``) are never written into: the first step that
    touches one writes a new array instead.

    The iterate is ``tables`` minus the constant ``lag`` (its log-partition
    is 0): an accepted step only records its log-partition instead of
    subtracting it from a table (a pass over it); the tables are
    normalised in place only when ``|lag|`` exceeds ``_MAX_LAG`` (so that
    float32 tables keep their precision), and by :meth:`normalised`.

    Parameters
    ----------
    tables : list of ndarray
        Log-potentials, one per maximal clique.
    owned : set of int
        Indices of the tables that may be updated in place.
    lag : float, default=0.0
        Log-partition of ``tables``.
    """

    _MAX_LAG = 1.0

    def __init__(self, tables: list, owned: set[int], lag: float = 0.0) -> None:
        self.tables = tables
        self.owned = set(owned)
        self.pending: dict[int, list[np.ndarray]] | None = None
        self.lag = 0.0
        self.accept(lag)

    def apply(self, terms: dict[int, list[np.ndarray]]) -> list:
        """Write a trial's ``terms`` (replacing any pending ones); return the tables."""
        pending, self.pending = self.pending, terms
        for index, new in terms.items():
            if pending is not None:
                new = [step - old for step, old in zip(new, pending[index])]
            self._add(index, new)
        return self.tables

    def relative(self, log_z: float) -> float:
        """The log-partition of the iterate plus the pending step, from that of the tables."""
        return log_z - self.lag

    def accept(self, log_z: float) -> None:
        """Keep the pending step, whose :meth:`relative` log-partition is ``log_z``."""
        self.pending = None
        self.lag += log_z
        if abs(self.lag) > self._MAX_LAG:
            self._shift_first(self.lag)

    def normalised(self) -> list:
        """The iterate's tables (log-partition 0; ``lag`` taken out)."""
        if self.lag != 0.0:
            self._shift_first(self.lag)
        return self.tables

    def _shift_first(self, value: float) -> None:
        """Subtract ``value`` from the first table; ``lag`` drops by as much."""
        if 0 in self.owned:
            self.tables[0] -= self.tables[0].dtype.type(value)
        else:
            self.tables[0] = self.tables[0] - self.tables[0].dtype.type(value)
            self.owned.add(0)
        self.lag -= value

    def withdraw(self) -> None:
        """Take a rejected trial's terms back out of the tables."""
        pending, self.pending = self.pending, None
        for index, terms in (pending or {}).items():
            self._add(index, [-term for term in terms])

    def _add(self, index: int, terms: list[np.ndarray]) -> None:
        if index in self.owned:
            table = self.tables[index]
            for term in terms:
                table += term
        else:
            self.tables[index] = plus_terms(self.tables[index], terms)
            self.owned.add(index)


def _momentum(previous: float, step: float, previous_step: float) -> float:
    """``a`` solving ``a^2 / (1 - a) = previous^2 * step / previous_step``."""
    c = previous**2 * step / previous_step
    return (-c + np.sqrt(c * c + 4.0 * c)) / 2.0


def _mix(a: float, x: MeasuredCounts, z: MeasuredCounts) -> MeasuredCounts:
    """``(1 - a) x + a z`` of two sets of measured counts (three passes over their buffer)."""
    if a == 1.0:
        return z
    flat = z.flat - x.flat
    flat *= a
    flat += x.flat
    return MeasuredCounts(flat, x.sizes)


class _Average:
    """The accelerated scheme's ``x`` beliefs, kept as ``scale * sums``.

    ``x <- (1 - a) x + a z`` becomes ``scale <- (1 - a) scale`` and
    ``sums <- sums + (a / scale) z``: two passes over ``z`` (which is
    consumed) and one over ``sums`` per clique, instead of three over ``x``.
    ``sums`` is folded back into plain beliefs when ``scale`` gets small
    (and by :meth:`beliefs`).

    Parameters
    ----------
    beliefs : list of ndarray
        The starting ``x``; its arrays are taken over (written into).
    """

    #: ``sums`` is rescaled when ``scale`` falls below this.
    _FOLD_BELOW = 1e-6

    def __init__(self, beliefs: list) -> None:
        self.sums = beliefs
        self.scale = 1.0

    def coefficient(self, a: float) -> float:
        """The factor ``a / scale`` by which :meth:`mix` multiplies beliefs (``a < 1``).

        Beliefs computed already multiplied by it (``scale`` of
        :func:`~sklearn_dpsynth.pgm.inference.calibrate`) go to
        :meth:`mix_scaled`, which spares that multiplication.
        """
        scale = 1.0 if self.scale * (1.0 - a) < self._FOLD_BELOW else self.scale
        return a / (scale * (1.0 - a))

    def mix(self, a: float, beliefs: list) -> None:
        """``x <- (1 - a) x + a beliefs`` (``a < 1``), consuming ``beliefs``."""
        coef = self.coefficient(a)
        for v in beliefs:
            v *= v.dtype.type(coef)  # a float64 scalar would make a float32 product run in float64
        self.mix_scaled(a, beliefs)

    def mix_scaled(self, a: float, scaled: list) -> None:
        """:meth:`mix` of beliefs already multiplied by :meth:`coefficient` ``(a)``."""
        if self.scale * (1.0 - a) < self._FOLD_BELOW:
            self._fold()
        self.scale *= 1.0 - a
        for u, v in zip(self.sums, scaled):
            u += v

    def _fold(self) -> None:
        for u in self.sums:
            u *= u.dtype.type(self.scale)
        self.scale = 1.0

    def beliefs(self) -> list:
        """``x``'s beliefs (``sums`` folded: the object keeps them)."""
        if self.scale != 1.0:
            self._fold()
        return self.sums


@dataclass
class _Trial:
    """Outcome of one tentative step."""

    z: _Point
    x_counts: list
    loss: float
    accepted: bool


def _trial(
    tree: JunctionTree,
    objective: Objective,
    x_counts: list,
    x_loss: float,
    z: _Point,
    stepped: _SteppedTables,
    a: float,
    step: float,
    reductions: "_Sweep",
    dtype: type,
    scale: float = 1.0,
) -> _Trial:
    """One tentative accelerated step with momentum ``a`` and step ``step``.

    The step is written into ``z``'s tables (``stepped``); the caller
    accepts or withdraws it.  The trial's beliefs come multiplied by
    ``scale`` (its counts do not): :meth:`_Average.mix_scaled` takes them.
    """
    y_counts = _mix(a, x_counts, z.counts)
    y_loss, grad = objective.loss_and_gradient(y_counts)
    tables = stepped.apply(objective.step_terms(grad, -step / a, dtype))
    beliefs, counts, log_z = _calibrated(tree, tables, objective, reductions, dtype, scale)
    new_z = _Point(beliefs, counts, stepped.relative(log_z))
    new_x = _mix(a, x_counts, new_z.counts)
    loss = objective.loss(new_x)
    bound = (y_loss - a * objective.inner(grad, z.counts)
             - a * a * objective.total * new_z.log_z / step)
    slack = (_SLACK * max(abs(y_loss), 1.0)
             + a * a * objective.total * _LOG_Z_NOISE[np.dtype(dtype)] / step)
    ok = loss <= bound + slack and (a < 1.0 or loss <= x_loss)
    return _Trial(new_z, new_x, loss, ok)


def mirror_descent(
    tree: JunctionTree,
    tables: list,
    objective: Objective,
    *,
    max_iter: int,
    tol: float,
    atol: float = 0.0,
    accelerated: bool = True,
    callback: Callable[[int, float], bool | None] | None = None,
    dtype: type = np.float64,
) -> tuple[list, dict]:
    """Minimise a measurement loss over the models on a junction tree.

    Parameters
    ----------
    tree : JunctionTree
        The junction tree.
    tables : list of ndarray
        Initial log-potentials, one per maximal clique.
    objective : Objective
        The loss.
    max_iter : int
        Maximum number of accepted steps.
    tol : float
        Stop when an accepted step lowers the loss by at most ``tol`` times
        the loss.
    atol : float, default=0.0
        Also stop when an accepted step lowers the loss by at most ``atol``
        (absolute, in the loss's units).
    accelerated : bool, default=True
        Use the accelerated scheme (with restarts) instead of plain mirror
        descent.
    callback : callable, default=None
        ``callback(iteration, loss)`` after every accepted step; returning
        True stops.  A callback with a true attribute ``needs_counts`` is
        called ``callback(iteration, loss, counts)`` instead (``counts``:
        the iterate's measured counts, :meth:`Objective.counts`, read-only),
        also once at the start (``iteration`` 0).
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Type of the tables (which must already have it), the beliefs,
        messages, inference temporaries and step terms.  The measured
        counts, gradients, loss and log-partition stay float64.  In float32
        the log-partition carries a rounding error of order 1e-7, which
        the sufficient-decrease test would read as a KL term of that size;
        its slack grows by the same amount (``_LOG_Z_NOISE``).

    Returns
    -------
    tables : list of ndarray
        Log-potentials of the final iterate (log-partition 0).
    info : dict
        ``loss_history``, ``iterations``, ``converged``, ``stalled`` (no
        step, however small, passed the sufficient-decrease test: the
        optimum, or a loss too flat for the precision of ``dtype``),
        ``n_inference``, ``n_restarts``, ``step_size``.
    """
    reductions = _Sweep(reduction_plan(tree, objective.marginal_requests()), ShiftGuesses())
    z, stepped = _start(tree, tables, objective, reductions, dtype, owned=set())
    del tables  # the caller's list must not keep the starting tables alive
    x_average, x_is_z, x_counts = _Average(z.beliefs), True, z.counts
    x_loss = objective.loss(x_counts)
    step = objective.total / objective.smoothness()
    floor = step * _STALL_FLOOR[np.dtype(dtype)]
    history = [x_loss]
    a_prev, step_prev, fresh, backtracked = 1.0, step, True, False
    stats = {"n_inference": 1, "n_restarts": 0, "iterations": 0, "converged": False,
             "stalled": False}
    with_counts = getattr(callback, "needs_counts", False)
    if with_counts and callback(0, x_loss, x_counts):
        max_iter = 0  # the starting point is the answer
    while stats["iterations"] < max_iter and len(objective) and not stats["converged"]:
        trial_step = step * (_GROWTH if backtracked else _FAST_GROWTH)
        while True:
            a = 1.0 if fresh else _momentum(a_prev, trial_step, step_prev)
            result = None  # a rejected trial's tables and beliefs go before the next
            result = _trial(tree, objective, x_counts, x_loss, z, stepped, a, trial_step,
                            reductions, dtype, 1.0 if a == 1.0 else x_average.coefficient(a))
            stats["n_inference"] += 1
            if result.accepted or trial_step < floor:
                break
            trial_step *= _SHRINK
            backtracked = True
        step = trial_step
        if not result.accepted:  # no step passes the test: converged, or stalled on rounding
            stepped.withdraw()
            stats["converged"] = stats["stalled"] = True
            break
        if result.loss > x_loss:
            # momentum overshot: restart from x without momentum
            z = result = stepped = None  # the overshot tables go before the restart's
            restart = potentials_from_marginals(tree, x_average.beliefs(), dtype)
            z, stepped = _start(tree, restart, objective, reductions, dtype,
                                owned=set(range(len(restart))))
            del restart  # z and stepped hold its tables
            stats["n_inference"] += 1
            stats["n_restarts"] += 1
            fresh = True
            continue
        stepped.accept(result.z.log_z)
        decrease = x_loss - result.loss
        if a == 1.0:
            x_average, x_is_z = _Average(result.z.beliefs), True
        else:
            # the trial's beliefs (already times the mixing coefficient) are
            # read only here: they are folded into x's
            x_average.mix_scaled(a, result.z.beliefs)
            result.z.beliefs, x_is_z = None, False
        x_counts, x_loss, z = result.x_counts, result.loss, result.z
        a_prev, step_prev, fresh = a, step, not accelerated
        stats["iterations"] += 1
        history.append(x_loss)
        stats["converged"] = decrease <= max(tol * x_loss, atol)
        if callback is not None and (callback(stats["iterations"], x_loss, x_counts)
                                     if with_counts else callback(stats["iterations"], x_loss)):
            break
    if x_is_z:
        final = stepped.normalised()
    else:
        z = result = stepped = None  # free the last step's tables before building the final ones
        final = potentials_from_marginals(tree, x_average.beliefs(), dtype)
    info = dict(stats, loss_history=history, step_size=step)
    return final, info
