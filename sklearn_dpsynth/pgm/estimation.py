"""Private-PGM estimation: the model that best explains noisy marginals.

:func:`estimate` builds the junction tree of the measured cliques (plus any
extra cliques), warm-starts the log-potentials, and minimises

    L(mu) = sum_C weight_C * ||Q_C mu_C - y_C||^2 / sigma_C^2

over the model's marginal counts ``mu`` by (accelerated) entropic mirror
descent on the log-potentials (:mod:`.mirror_descent`).
"""

from __future__ import annotations

import warnings
from typing import Callable, Mapping, Sequence

import numpy as np

from .domain import ModelDomain, require_model_domain
from .factor import Factor
from .junction_tree import JunctionTree, validate_cliques
from .measurement import Measurement, Objective, estimate_total
from .mirror_descent import mirror_descent
from .model import GraphicalModel, tables_from_potentials

__all__ = ["auto_dtype", "estimate", "estimate_from_tables", "estimation_tree",
           "initial_tables", "AnswerStop", "DiscrepancyStop", "HeldOutLoss", "holdout_stop_factor",
           "holdout_summary",
           "expected_loss", "Measurement", "estimate_total"]  # the last two re-exported

#: The default of ``max_iters``, the deprecated old name of ``max_iter``.
_RENAMED = "deprecated"


def _max_iter(max_iter: int | None, max_iters: int | str) -> int | None:
    """``max_iter``, or the deprecated ``max_iters`` (which wins, with a FutureWarning)
    when it is given: one spelling of the step cap, scikit-learn's ``max_iter``."""
    if isinstance(max_iters, str) and max_iters == _RENAMED:
        return max_iter
    warnings.warn("max_iters was renamed max_iter; max_iters is deprecated and will be removed "
                  f"in the next release: use max_iter={max_iters!r}.", FutureWarning, stacklevel=3)
    return max_iters


def initial_tables(
    tree: JunctionTree,
    potentials: GraphicalModel | Mapping[Sequence[str], Factor | np.ndarray] | None,
) -> list[np.ndarray]:
    """Starting log tables on ``tree``, as :func:`estimate` builds them.

    Parameters
    ----------
    tree : JunctionTree
        The tree of the estimation (see :func:`estimation_tree`).
    potentials : GraphicalModel, mapping or None
        As ``estimate``'s ``potentials``: a model on ``tree`` gives its own
        tables (not copies), another model or mapping is projected.

    Returns
    -------
    list of ndarray
        One table per maximal clique of ``tree``.
    """
    if potentials is None:
        return tables_from_potentials(tree, None)
    if isinstance(potentials, GraphicalModel):
        if potentials.domain != tree.domain:
            raise ValueError("potentials is a GraphicalModel over another domain")
        if potentials.cliques == tree.cliques:
            # no copy: mirror descent never writes into its starting tables
            return list(potentials.tables)
        return potentials.project(tree).tables
    if not isinstance(potentials, Mapping):
        raise ValueError("potentials must be None, a GraphicalModel or a mapping")
    keys = validate_cliques(tree.domain, potentials.keys(), "potentials")
    if all(tree.index_containing(k) is not None for k in keys):
        return tables_from_potentials(tree, potentials)
    return GraphicalModel(tree.domain, keys, potentials).project(tree).tables


class DiscrepancyStop:
    """``callback`` for :func:`estimate`: stop at a loss target, or once it is out of reach.

    The discrepancy rule stops an estimation at the first step whose loss
    is at most ``target`` (e.g. ``0.7`` times the number of measured
    entries, the loss's expected value at the true marginals).  Where no
    distribution reaches the target (the measurements are inconsistent
    beyond what the target allows), the loss flattens above it and the
    rule alone would run to the step cap.  This callback also stops when
    the target is out of reach *within the cap*: when, at the rate the
    loss fell over the last ``window`` accepted steps, the remaining gap
    ``loss - target`` would take more steps than the cap leaves.  Mirror
    descent's loss decreases ever more slowly (it is convex in the
    marginals), so that extrapolation is optimistic and the cap would have
    stopped the run above the target anyway; the model at that step
    replaces the model at the cap.

    Parameters
    ----------
    target : float
        Loss at which the estimation stops.
    max_iter : int
        The estimation's cap on accepted steps (required).
    window : int, default=25
        Accepted steps over which the rate of decrease is measured (no
        out-of-reach stop before that many steps).
    max_iters : int, default="deprecated"
        Deprecated old name of ``max_iter``: when given it is used and a
        FutureWarning is raised.  It will be removed in the next release.

    Attributes
    ----------
    reason : {"target", "out of reach"} or None
        Why it stopped (None while it has not).
    iteration : int or None
        The step at which it stopped.
    """

    def __init__(self, target: float, max_iter: int | None = None, window: int = 25, *,
                 max_iters: int | str = _RENAMED) -> None:
        max_iter = _max_iter(max_iter, max_iters)
        if max_iter is None:
            raise TypeError("DiscrepancyStop needs max_iter, the estimation's cap on steps.")
        _check_count("window", window, least=1)
        self.target = float(target)
        self.max_iter = int(max_iter)
        self.window = int(window)
        self.reason: str | None = None
        self.iteration: int | None = None
        self._recent: dict[int, float] = {}

    def __call__(self, iteration: int, loss: float) -> bool:
        """Whether the estimation stops after accepted step ``iteration`` at ``loss``."""
        earlier = self._recent.pop(iteration - self.window, None)
        self._recent[iteration] = float(loss)
        if loss <= self.target:
            return self._stop("target", iteration)
        if earlier is None:
            return False
        drop = earlier - float(loss)
        left = self.max_iter - iteration
        if drop <= 0 or (float(loss) - self.target) * self.window > drop * left:
            return self._stop("out of reach", iteration)
        return False

    def _stop(self, reason: str, iteration: int) -> bool:
        self.reason, self.iteration = reason, int(iteration)
        return True


class AnswerStop:
    """``callback`` for :func:`estimate`: stop once one measured answer has settled.

    Follows the model's counts on one measurement (the ``index``-th of the
    estimation's measurements) and stops after the first accepted step at
    which they are within ``threshold`` (L1 distance) of their value
    ``window`` steps earlier.  Used where what matters downstream is the
    model's answer on that marginal, e.g. a newly measured one: with a
    ``threshold`` that is a fraction of the measurement's noise scale
    (``sigma`` times its number of cells), the steps left would move that
    answer by less than the noise can tell.  Only the noisy releases'
    fit is read (post-processing).

    Parameters
    ----------
    index : int
        Position of the followed measurement among the estimation's.
    threshold : float
        Largest L1 move of its counts over ``window`` steps at which it stops.
    window : int, default=10
        Accepted steps over which the move is measured (the start, step 0,
        counts: no stop before step ``window``).
    least_move : float, default=0.0
        Also required for a stop: the answer is more than ``least_move``
        (L1) away from its value at the start.  A caller that reads whether
        the answer moved by more than some amount (AIM's annealing test)
        passes that amount, so that a stop never decides that test for it:
        an answer that has not yet moved that far is followed to the end.

    Attributes
    ----------
    iteration : int or None
        The step at which it stopped (None while it has not).
    """

    needs_counts = True

    def __init__(self, index: int, threshold: float, window: int = 10,
                 least_move: float = 0.0) -> None:
        _check_nonnegative("threshold", threshold)
        _check_nonnegative("least_move", least_move)
        _check_count("window", window, least=1)
        self.index = int(index)
        self.threshold = float(threshold)
        self.window = int(window)
        self.least_move = float(least_move)
        self.iteration: int | None = None
        self._start: np.ndarray | None = None
        self._recent: dict[int, np.ndarray] = {}

    def __call__(self, iteration: int, loss: float, counts: Sequence[np.ndarray]) -> bool:
        """Whether the estimation stops after accepted step ``iteration``."""
        earlier = self._recent.pop(iteration - self.window, None)
        answer = np.array(counts[self.index], dtype=float)
        self._recent[iteration] = answer
        if self._start is None:
            self._start = answer
        if earlier is None or _l1(answer, earlier) > self.threshold:
            return False
        if _l1(answer, self._start) <= self.least_move:
            return False
        self.iteration = int(iteration)
        return True


def _l1(u: np.ndarray, v: np.ndarray) -> float:
    return float(np.abs(u - v).sum())


class HeldOutLoss:
    """``callback`` for :func:`estimate`: the loss of held-out measurements at every step.

    Follows an estimation fitted to one set of measurements and evaluates,
    at its start and after every accepted step, the loss of *other*
    measurements of the same marginals (same cliques, queries and order:
    the held-out half of a noise split).  Where the held-out noise is
    independent of the fitted measurements, the held-out loss is, in
    expectation, the model's squared error on the true marginals plus a
    constant, so its minimum marks the step where the model stopped
    learning signal and started fitting the noise of its own
    measurements.  It stops the estimation once no step has lowered the
    held-out loss for ``max(patience, best)`` steps (``best``: the step of
    the lowest held-out loss so far).

    Parameters
    ----------
    objective : Objective
        The held-out measurements' loss on the estimation's junction tree.
    patience : int, default=25
        Fewest steps without a new held-out minimum before stopping.

    Attributes
    ----------
    history : list of tuple
        ``(iteration, loss, heldout_loss)`` from the start (iteration 0).
    best : int or None
        Index in ``history`` of the lowest held-out loss.
    """

    needs_counts = True

    def __init__(self, objective: Objective, patience: int = 25) -> None:
        _check_count("patience", patience, least=1)
        self.objective = objective
        self.patience = int(patience)
        self.history: list[tuple[int, float, float]] = []
        self.best: int | None = None

    def __call__(self, iteration: int, loss: float, counts: Sequence[np.ndarray]) -> bool:
        """Record step ``iteration``; whether the held-out loss has stopped falling."""
        heldout = self.objective.loss(counts)
        self.history.append((int(iteration), float(loss), float(heldout)))
        if self.best is None or heldout < self.history[self.best][2]:
            self.best = len(self.history) - 1
        best_iteration = self.history[self.best][0]
        return iteration - best_iteration > max(self.patience, best_iteration)

    @property
    def best_at_end(self) -> bool:
        """Whether the last recorded step has the lowest held-out loss."""
        return self.best is not None and self.best == len(self.history) - 1


def expected_loss(measurements: Sequence[Measurement]) -> float:
    """The loss's expected value at the true marginals: ``sum(weight * size)``."""
    return float(sum(m.noisy.size * m.weight for m in measurements))


def holdout_stop_factor(
    domain: ModelDomain,
    halves: Sequence[tuple[Measurement, Measurement]],
    *,
    total: float,
    potentials: GraphicalModel | Mapping[Sequence[str], Factor | np.ndarray] | None = None,
    cliques: Sequence[Sequence[str]] | None = None,
    max_iter: int = 1000,
    tol: float = 1e-4,
    dtype: type | str = np.float64,
    patience: int = 25,
    fold_potentials: Sequence | None = None,
) -> tuple[float | None, list[dict]]:
    """A discrepancy factor chosen by two-fold cross-validation on a noise split.

    Every marginal was measured twice with independent noise (two halves
    of its budget).  For each fold, the model is fitted to one half of
    every measurement and followed by :class:`HeldOutLoss` on the other
    half; the step of the lowest held-out loss gives the fold's factor
    ``tau = loss / expected_loss`` (the fitted half's loss there, over its
    expected value at the true marginals).  The result is the lower of the
    two folds' factors: the estimation on the combined measurements stops
    at the first step whose loss is at most that factor times its expected
    value (the discrepancy rule of ``early_stopping``, with the factor read
    off the data instead of fixed).  The discrepancy factor is a ratio to
    the noise level, so a factor chosen at the halves' noise roughly
    carries over to the combined measurements'; but each half has twice
    the combined noise variance, and the less noise the more of the
    measured structure a fit can confirm, so a fold's best stop comes
    early for the combined measurements: the lower (later) of the two
    factors partly corrects that.  Where a fold's held-out loss was still
    falling at its last step (the fold ran to ``tol`` or ``max_iter``
    without the held-out loss turning up), the data support fitting to the
    end, and the result is None: the combined estimation runs to ``tol`` /
    ``max_iter`` (a factor read there, the converged loss of a noisier
    fit, would stop it early).  Only the noisy measurements are read:
    post-processing.

    Parameters
    ----------
    domain : ModelDomain
    halves : sequence of (Measurement, Measurement)
        The two halves of every measurement (same clique and query).
    total : float
        Number of records (that of the combined measurements).
    potentials, cliques, max_iter, tol, dtype
        As in :func:`estimate`; ``potentials`` is both folds' warm start.
    patience : int, default=25
        As in :class:`HeldOutLoss`.
    fold_potentials : sequence of two warm starts, default=None
        One warm start per fold (each as ``potentials``), the first for the
        fold fitted to the first halves; replaces ``potentials``.  A start
        computed from the combined measurements (e.g. the independent model
        of the mean of both halves) already holds the held-out half's
        noise, which makes the held-out loss favour steps near the start
        (too early a stop); a start computed from the fitted half alone
        keeps the held-out half unseen.  Not with ``potentials``.

    Returns
    -------
    factor : float or None
        The lower of the folds' factors; None where a fold's held-out loss
        was lowest at its last step (run to convergence).
    folds : list of dict
        Per fold: ``factor``, ``best_iteration``, ``iterations`` (steps run),
        ``best_at_end`` (the held-out loss was still falling) and ``history``
        (``HeldOutLoss.history``).
    """
    domain = require_model_domain(domain)
    first = _check_measurements(domain, [a for a, _ in halves])
    second = _check_measurements(domain, [b for _, b in halves])
    for a, b in zip(first, second):
        if a.clique != b.clique or a.noisy.shape != b.noisy.shape:
            raise ValueError("the two halves of a measurement must measure the same marginal")
    _check_options(max_iter, tol, 0.0, total)
    dtype = _check_dtype(dtype)
    if fold_potentials is None:
        fold_potentials = (potentials, potentials)
    elif potentials is not None:
        raise ValueError("give potentials (both folds' start) or fold_potentials, not both")
    elif len(fold_potentials) != 2:
        raise ValueError("fold_potentials must hold two warm starts, one per fold")
    tree = estimation_tree(domain, first, cliques)
    folds = []
    for fitted, heldout, start in ((first, second, fold_potentials[0]),
                                   (second, first, fold_potentials[1])):
        monitor = HeldOutLoss(Objective(tree, heldout, float(total)), patience=patience)
        _, info = _estimate_checked(tree, fitted, initial_tables(tree, start), total,
                                    max_iter, tol, 0.0, True, monitor, dtype)
        iteration, loss, _ = monitor.history[monitor.best]
        folds.append({"factor": loss / expected_loss(fitted), "best_iteration": iteration,
                      "iterations": info["iterations"], "best_at_end": monitor.best_at_end,
                      "history": monitor.history})
    if any(f["best_at_end"] for f in folds):
        return None, folds
    return float(min(f["factor"] for f in folds)), folds


def holdout_summary(factor: float | None, folds: Sequence[dict]) -> dict:
    """What a synthesizer keeps of :func:`holdout_stop_factor`'s answer.

    ``factor`` and, per fold, ``factor``, ``best_iteration``, ``iterations``
    and ``best_at_end`` (the loss histories are left out).
    """
    keys = ("factor", "best_iteration", "iterations", "best_at_end")
    return {"factor": factor, "folds": [{k: fold[k] for k in keys} for fold in folds]}


def estimation_tree(domain: ModelDomain, measurements: Sequence[Measurement],
                    cliques: Sequence[Sequence[str]] | None = None) -> JunctionTree:
    """The junction tree :func:`estimate` fits on: the measured cliques plus ``cliques``.

    Parameters
    ----------
    domain : ModelDomain
    measurements : sequence of Measurement
        Checked measurements.
    cliques : sequence of sequence of str, default=None
        Extra cliques the model must contain.

    Returns
    -------
    JunctionTree
    """
    extra = validate_cliques(domain, cliques or [], "cliques")
    return JunctionTree(domain, [m.clique for m in measurements] + extra)


def _check_measurements(
    domain: ModelDomain, measurements: Sequence[Measurement]
) -> list[Measurement]:
    """Validate the measurement list."""
    if isinstance(measurements, Measurement) or not isinstance(measurements, Sequence):
        raise ValueError("measurements must be a sequence of Measurement")
    for m in measurements:
        if not isinstance(m, Measurement):
            raise ValueError(f"measurements must contain Measurement, got {type(m)}")
        m.check(domain)
    return list(measurements)


def _check_options(max_iter: int, tol: float, atol: float, total: float | None) -> None:
    """Validate the scalar options of :func:`estimate`."""
    _check_count("max_iter", max_iter, least=0)
    _check_nonnegative("tol", tol)
    _check_nonnegative("atol", atol)
    if total is not None and (not np.isfinite(total) or total <= 0):
        raise ValueError(f"total must be positive and finite, got {total!r}")


def _check_count(name: str, value: int, least: int) -> None:
    """Raise unless ``value`` is an int (not a bool) of at least ``least`` (0 or 1)."""
    if isinstance(value, bool) or int(value) != value or value < least:
        what = "a non-negative int" if least == 0 else f"an int >= {least}"
        raise ValueError(f"{name} must be {what}, got {value!r}")


def _check_nonnegative(name: str, value: float) -> None:
    """Raise unless ``value`` is a finite number ``>= 0``."""
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")


def estimate(
    domain: ModelDomain,
    measurements: Sequence[Measurement],
    *,
    cliques: Sequence[Sequence[str]] | None = None,
    total: float | None = None,
    potentials: GraphicalModel | Mapping[Sequence[str], Factor | np.ndarray] | None = None,
    max_iter: int = 1000,
    tol: float = 1e-4,
    atol: float = 0.0,
    accelerated: bool = True,
    callback: Callable[[int, float], bool | None] | None = None,
    dtype: type | str = np.float64,
    max_iters: int | str = _RENAMED,
) -> tuple[GraphicalModel, dict]:
    """Fit a graphical model to noisy marginal measurements (Private-PGM).

    Parameters
    ----------
    domain : ModelDomain
        Attribute sizes.
    measurements : sequence of Measurement
        Noisy measurements of marginal counts.
    cliques : sequence of sequence of str, default=None
        Extra cliques the model must contain (beyond the measured ones).
    total : float, default=None
        Number of records; estimated by :func:`estimate_total` when None.
    potentials : GraphicalModel or mapping, default=None
        Warm start: a model (projected onto the new junction tree when its
        maximal cliques differ) or log-potentials keyed by clique.
    max_iter : int, default=1000
        Maximum number of accepted mirror-descent steps.
    tol : float, default=1e-4
        Stop when an accepted step lowers the loss by at most ``tol`` times
        the loss.  With noisy measurements the last digits of the loss are
        spent fitting noise: smaller values get closer to the exact
        minimiser but rarely improve the model's marginals.
    atol : float, default=0.0
        Also stop when an accepted step lowers the loss by at most ``atol``.
        The loss is in units of the measurements' noise variances (a
        measured cell off by one noise standard deviation adds
        ``weight``), so ``atol`` of order 1 stops once further steps move
        the model by less than the noise can tell.
    accelerated : bool, default=True
        Accelerated mirror descent with restarts (else plain mirror descent).
    callback : callable, default=None
        ``callback(iteration, loss)`` after every accepted step; returning
        True stops the optimisation.
    dtype : {numpy.float64, numpy.float32, "auto"}, default=numpy.float64
        Floating type of the model-sized arrays (log-potentials, beliefs,
        messages); see the Notes.  ``"auto"`` is float32 when float32 can
        resolve the loss (:func:`auto_dtype`), else float64.
    max_iters : int, default="deprecated"
        Deprecated old name of ``max_iter``: when given it is used and a
        FutureWarning is raised.  It will be removed in the next release.

    Returns
    -------
    model : GraphicalModel
        The fitted model (``model.total`` is the total used).
    info : dict
        ``loss_history`` (loss at the start and after every accepted step,
        non-increasing), ``iterations``, ``converged``, ``n_inference``
        (belief propagations run), ``n_restarts``, ``step_size`` (final
        step on the count gradient), ``total``, ``dtype`` (the type used)
        and ``float64_from`` (see the Notes).

    Notes
    -----
    With ``dtype=numpy.float32`` the log-potentials, beliefs, messages,
    step terms and the model's tables are float32 (half the memory and
    memory traffic); measured counts, gradients, the loss, the
    log-partition (summed in float64) and every scalar stay float64, and
    marginals answered by the model are float64.  One belief propagation
    then agrees with float64 to float32 rounding (probabilities to about
    5e-7 relative), but its log-partition carries an error of order 1e-7
    that the backtracking test cannot tell from a real change, so that
    test is relaxed by the same amount: estimates follow a slightly
    different path and end as close to the optimum as float64's, within
    1e-4 in marginal probabilities (``tests/test_pgm_float32.py``).
    Probabilities below about 1e-38 round to zero.  Once the loss is small
    next to the rounding of float32 counts, steps that exact arithmetic
    guarantees to pass the test (those below the safe step) fail it: the
    float32 estimation has stalled, and it goes on in float64 from there
    to the end, storing the result in float32 again;
    ``info["float64_from"]`` is the step where float64 took over (None
    when it did not).  Where the counts' rounding is not small next to the
    noise (large totals, tiny noise), float32 also converges far more
    slowly without stalling, which ``"auto"`` avoids; an explicit float32
    there gets a ``RuntimeWarning``.
    """
    max_iter = _max_iter(max_iter, max_iters)
    domain = require_model_domain(domain)
    measurements = _check_measurements(domain, measurements)
    _check_options(max_iter, tol, atol, total)
    dtype = _check_dtype(dtype)
    tree = estimation_tree(domain, measurements, cliques)
    return _estimate_checked(tree, measurements, initial_tables(tree, potentials), total,
                             max_iter, tol, atol, accelerated, callback, dtype)


#: ``dtype="auto"`` picks float32 when the float32 rounding of the largest
#: count (``total * 2**-23``) is at most this fraction of the smallest noise
#: scale ``sigma / sqrt(weight)``: the loss then resolves every step.  At
#: 0.12 float32 was seen to crawl; from 0.005 to 0.024 it matched float64
#: (with its float64 finish).  Adult (48,842 rows) at epsilon 10: 0.0024.
AUTO_FLOAT32_RATIO = 0.01

#: Warning for an explicit float32 estimation that ``"auto"`` would run in float64.
FLOAT32_TOO_COARSE = (
    "dtype=float32 (model_dtype='float32'): float32 rounding of the counts exceeds 1% of "
    "the smallest noise scale (a large total or small noise), where a float32 estimation "
    "can converge far more slowly than float64 without stopping early; use 'auto' or "
    "float64.")


def auto_dtype(measurements: Sequence[Measurement], total: float) -> np.dtype:
    """The floating type ``dtype="auto"`` resolves to.

    Parameters
    ----------
    measurements : sequence of Measurement
        The measurements to fit.
    total : float
        Number of records the model's counts add up to.

    Returns
    -------
    numpy.dtype
        float32 when ``total * 2**-23 <= AUTO_FLOAT32_RATIO * min(sigma /
        sqrt(weight))`` (``AUTO_FLOAT32_RATIO = 0.01``: the largest count's
        float32 rounding is at most 1% of the smallest noise scale, so the
        loss resolves every step), else float64.
    """
    noise = min((m.sigma / np.sqrt(m.weight) for m in measurements), default=np.inf)
    small = total * 2.0**-23 <= AUTO_FLOAT32_RATIO * noise
    return np.dtype(np.float32 if small else np.float64)


def _check_dtype(dtype: type | str) -> np.dtype | None:
    """The floating type of the model's tables (float64 or float32; None for "auto")."""
    message = f"dtype must be numpy.float64, numpy.float32 or 'auto', got {dtype!r}"
    if isinstance(dtype, str) and dtype == "auto":
        return None
    if dtype is None:  # np.dtype(None) would read it as float64
        raise ValueError(message)
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        raise ValueError(message) from None
    if resolved.type not in (np.float64, np.float32):
        raise ValueError(message)
    return resolved


def _taken(tables: list[np.ndarray], dtype: np.dtype) -> list[np.ndarray]:
    """The tables in a new list, as ``dtype``; the caller's list is emptied.

    A table of another dtype is converted (and the original released) one
    at a time, so the conversion holds at most one extra table.
    """
    out = list(tables)
    tables.clear()
    for k, table in enumerate(out):
        out[k] = np.asarray(table, dtype=dtype)
    return out


def estimate_from_tables(
    tree: JunctionTree,
    measurements: Sequence[Measurement],
    tables: list[np.ndarray],
    *,
    total: float | None = None,
    max_iter: int = 1000,
    tol: float = 1e-4,
    atol: float = 0.0,
    accelerated: bool = True,
    callback: Callable[[int, float], bool | None] | None = None,
    dtype: type | str = np.float64,
    max_iters: int | str = _RENAMED,
) -> tuple[GraphicalModel, dict]:
    """:func:`estimate` on a given junction tree from given starting tables.

    The starting tables are *taken over*: the list is emptied, so that they
    are freed as soon as the optimisation has moved away from them when the
    caller holds no other reference (a model of several hundred MiB is then
    not kept alive beside the new iterates).

    Parameters
    ----------
    tree : JunctionTree
        Junction tree whose maximal cliques cover every measured clique.
    measurements : sequence of Measurement
        Noisy measurements of marginal counts.
    tables : list of ndarray
        Starting log-potentials, one per maximal clique of ``tree`` (axes in
        the clique's order); emptied by the call, never written into.
    total, max_iter, tol, atol, accelerated, callback, dtype, max_iters
        As in :func:`estimate` (tables of another dtype are converted).

    Returns
    -------
    model : GraphicalModel
    info : dict
        As in :func:`estimate`.
    """
    max_iter = _max_iter(max_iter, max_iters)
    measurements = _check_measurements(tree.domain, measurements)
    _check_options(max_iter, tol, atol, total)
    dtype = _check_dtype(dtype)
    if not isinstance(tables, list) or len(tables) != len(tree.cliques):
        raise ValueError("tables must be a list with one table per maximal clique")
    return _estimate_checked(tree, measurements, tables, total, max_iter, tol, atol,
                             accelerated, callback, dtype)


def _estimate_checked(tree: JunctionTree, measurements: list[Measurement],
                      tables: list[np.ndarray], total: float | None, max_iter: int,
                      tol: float, atol: float, accelerated: bool,
                      callback: Callable[[int, float], bool | None] | None,
                      dtype: np.dtype | None) -> tuple[GraphicalModel, dict]:
    """Mirror descent on validated arguments (the tables are taken over)."""
    total = float(estimate_total(tree.domain, measurements) if total is None else total)
    if dtype is None:
        dtype = auto_dtype(measurements, total)
    elif dtype == np.float32 and auto_dtype(measurements, total) == np.float64:
        warnings.warn(FLOAT32_TOO_COARSE, RuntimeWarning, stacklevel=3)
    objective = Objective(tree, measurements, total)
    final, info = mirror_descent(tree, _taken(tables, dtype), objective,
                                 max_iter=int(max_iter), tol=float(tol),
                                 atol=float(atol), accelerated=accelerated,
                                 callback=callback, dtype=dtype.type)
    info["float64_from"] = None
    if dtype == np.float32 and info["stalled"] and info["iterations"] < max_iter:
        final, info = _continue_in_float64(tree, objective, final, info, int(max_iter),
                                           float(tol), float(atol), accelerated, callback)
    info["total"] = total
    info["dtype"] = dtype.name
    return GraphicalModel.from_tables(tree, final, total), info


def _continue_in_float64(tree: JunctionTree, objective: Objective, tables: list[np.ndarray],
                         info: dict, max_iter: int, tol: float, atol: float,
                         accelerated: bool,
                         callback: Callable[[int, float], bool | None] | None
                         ) -> tuple[list[np.ndarray], dict]:
    """Finish in float64 a float32 estimation that stalled on rounding.

    A float32 model's counts carry rounding errors of about 6e-8 of the
    total; once the loss is small next to that, the sufficient-decrease
    test rejects steps below the safe one, which exact arithmetic always
    accepts, and float32 would stop far from the optimum (on a table with
    near-deterministic structure: after 87 steps, at a loss of 1,467
    against 81 in float64).  The remaining steps then run in float64 from
    its tables; the result is stored in float32 again and
    ``info["float64_from"]`` records the step where float64 took over.
    """
    done = info["iterations"]
    resumed = None if callback is None else _Resumed(callback, done)
    tables = _taken(tables, np.dtype(np.float64))
    final, rest = mirror_descent(tree, tables, objective, max_iter=max_iter - done,
                                 tol=tol, atol=atol, accelerated=accelerated,
                                 callback=resumed, dtype=np.float64)
    merged = dict(rest, iterations=done + rest["iterations"],
                  n_inference=info["n_inference"] + rest["n_inference"],
                  n_restarts=info["n_restarts"] + rest["n_restarts"],
                  loss_history=info["loss_history"][:-1] + rest["loss_history"],
                  float64_from=done)
    return _taken(final, np.dtype(np.float32)), merged


class _Resumed:
    """A callback seen from a continued estimation: its step numbers offset by ``done``."""

    def __init__(self, callback: Callable, done: int) -> None:
        self.callback, self.done = callback, done
        self.needs_counts = getattr(callback, "needs_counts", False)

    def __call__(self, iteration: int, loss: float, *counts) -> bool | None:
        if iteration == 0 and self.needs_counts:
            return False  # the continued start is the stalled end, already seen
        return self.callback(self.done + iteration, loss, *counts)
