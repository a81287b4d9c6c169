"""AIM's model state: measurements, structural zeros and re-estimation.

Everything here is post-processing of noisy measurements; nothing reads the
private table.

* :class:`MeasurementBank` keeps one Private-PGM measurement per measured
  marginal: repeated measurements of the same marginal are merged by
  inverse-variance weighting, which leaves the estimation loss unchanged up
  to a constant (``sum_i ||mu - y_i||^2 / s_i^2 = ||mu - y||^2 / s^2 +
  const`` with ``1/s^2 = sum_i 1/s_i^2`` and ``y = s^2 sum_i y_i / s_i^2``)
  while making every estimation step cheaper.
* :class:`ZeroMasks` holds the structural zeros and forces them into a
  model's log-potentials (``-inf``), so that they are exactly zero in every
  marginal and never sampled.
* :func:`holdout_factor` chooses the final estimation's discrepancy factor
  by two-fold cross-validation on the two halves of every measurement.
* :func:`grow_tree` and :func:`refit` keep the junction tree monotone (the
  previous maximal cliques are always part of the next model), warm-start
  on the new tree and re-estimate.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from ...pgm import Factor, GraphicalModel, JunctionTree, Measurement, estimate
from ...pgm.estimation import (DiscrepancyStop, estimate_from_tables, estimation_tree,
                               holdout_stop_factor, holdout_summary, initial_tables)

__all__ = ["MeasurementBank", "ZeroMasks", "grow_tree", "independent_start", "refit",
           "refit_from_independent", "holdout_factor"]

Marginal = tuple[int, ...]

#: Smallest count of a code in the independent starting point of the final
#: estimation, so that its log-potentials are finite.
START_FLOOR = 0.01


class MeasurementBank:
    """Noisy marginal counts, one merged measurement per marginal.

    Parameters
    ----------
    names : sequence of str
        Model attribute name of every column position.
    """

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self._sums: dict[Marginal, np.ndarray] = {}
        self._precisions: dict[Marginal, float] = {}

    def add(self, marginal: Marginal, noisy: np.ndarray, sigma: float) -> None:
        """Record a noisy measurement of ``marginal`` (flattened counts) at ``sigma``."""
        precision = 1.0 / (sigma * sigma)
        weighted = precision * np.asarray(noisy, dtype=float).ravel()
        if marginal in self._sums:
            self._sums[marginal] = self._sums[marginal] + weighted
            self._precisions[marginal] += precision
        else:
            self._sums[marginal] = weighted
            self._precisions[marginal] = precision

    def __contains__(self, marginal: Marginal) -> bool:
        return marginal in self._sums

    def __len__(self) -> int:
        return len(self._sums)

    def n_entries(self) -> int:
        """Number of measured entries (a repeated marginal counts once)."""
        return int(sum(v.size for v in self._sums.values()))

    def marginals(self) -> list[Marginal]:
        """The measured marginals in order of first measurement."""
        return list(self._sums)

    def measurements(self) -> list[Measurement]:
        """One engine measurement per measured marginal.

        Returns
        -------
        list of Measurement
            Merged value ``sum_i y_i / s_i^2 / sum_i 1 / s_i^2`` with noise
            ``(sum_i 1 / s_i^2) ** -0.5``.
        """
        out = []
        for marginal, weighted in self._sums.items():
            precision = self._precisions[marginal]
            out.append(Measurement(tuple(self.names[j] for j in marginal),
                                   weighted / precision, float(precision ** -0.5)))
        return out


class ZeroMasks:
    """Structural zeros: cells of some marginals known to be impossible.

    Parameters
    ----------
    masks : dict of tuple of int to ndarray of bool
        ``{marginal: mask}``; ``mask`` has one axis per column of the
        marginal (in increasing position order) and is True where the cell
        is impossible.
    names : sequence of str
        Model attribute name of every column position.
    """

    def __init__(self, masks: Mapping[Marginal, np.ndarray], names: Sequence[str]) -> None:
        self.masks = dict(masks)
        self.names = list(names)

    def __bool__(self) -> bool:
        return bool(self.masks)

    @property
    def cliques(self) -> list[tuple[str, ...]]:
        """The masked marginals as model cliques."""
        return [tuple(self.names[j] for j in m) for m in self.masks]

    def potentials(self, base: Mapping[tuple[str, ...], np.ndarray] | None = None
                   ) -> dict[tuple[str, ...], Factor]:
        """Log-potentials that are ``-inf`` on impossible cells, 0 elsewhere.

        Parameters
        ----------
        base : dict of tuple of str to ndarray, optional
            Log-potentials (axes in key order) to which the masks are added;
            keys without a mask are kept as they are.

        Returns
        -------
        dict of tuple of str to Factor
        """
        out = {clique: Factor(clique, values) for clique, values in (base or {}).items()}
        for m, mask in self.masks.items():
            clique = tuple(self.names[j] for j in m)
            factor = Factor(clique, np.where(mask, -np.inf, 0.0))
            out[clique] = out[clique] + factor if clique in out else factor
        return out

    def apply(self, model: GraphicalModel) -> GraphicalModel:
        """The model with every impossible cell's log-potential set to ``-inf``.

        Parameters
        ----------
        model : GraphicalModel
            A model whose junction tree covers every masked marginal.

        Returns
        -------
        GraphicalModel
            The same model when there are no structural zeros, else a new
            one on the same tree (mass moved off the zeros is renormalised).
        """
        if not self.masks:
            return model
        tables = [t.copy() for t in model.tables]
        for clique, factor in self.potentials().items():
            index = model.tree.index_containing(clique)
            view = factor.broadcast_view(model.cliques[index])
            tables[index] = np.add(tables[index], view, dtype=tables[index].dtype)
        return GraphicalModel.from_tables(model.tree, tables, model.total)


def parse_structural_zeros(
    structural_zeros: Mapping[Any, Any] | None,
    positions: Callable[[Sequence[Hashable], str], Marginal],
    domain: Any,
) -> dict[Marginal, np.ndarray]:
    """Validate ``structural_zeros`` and express them as masks on sorted positions.

    Parameters
    ----------
    structural_zeros : dict or None
        ``{columns: cells}`` where ``columns`` is a tuple of column names
        and ``cells`` either a list of impossible cells (tuples of raw
        values, one per column, encoded with the domain) or a boolean array
        of shape ``tuple(domain[c].size for c in columns)`` on the encoded
        codes, True where impossible.
    positions : callable
        ``positions(columns, parameter)`` returns the columns' positions.
    domain : Domain
        The fitted public domain.

    Returns
    -------
    dict of tuple of int to ndarray of bool
    """
    if structural_zeros is None:
        return {}
    if not isinstance(structural_zeros, Mapping):
        raise ValueError("structural_zeros must be a dict {columns: impossible cells}, "
                         f"got {type(structural_zeros).__name__}.")
    out: dict[Marginal, np.ndarray] = {}
    for columns, cells in structural_zeros.items():
        columns = columns if isinstance(columns, (list, tuple)) else (columns,)
        pos = positions(columns, "structural_zeros")
        mask = _zero_mask(columns, pos, cells, domain)
        order = np.argsort(pos)
        key = tuple(int(pos[k]) for k in order)
        mask = np.transpose(mask, order)
        out[key] = out[key] | mask if key in out else mask
        if out[key].all():
            raise ValueError(f"structural_zeros: every cell of {tuple(columns)!r} is "
                             "marked impossible.")
    return out


def _zero_mask(columns, pos, cells, domain) -> np.ndarray:
    """Boolean mask (axes in ``columns`` order) of one ``structural_zeros`` entry."""
    shape = tuple(domain.sizes[j] for j in pos)
    if isinstance(cells, np.ndarray) and cells.dtype == bool:
        if cells.shape != shape:
            raise ValueError(f"structural_zeros: the mask of {tuple(columns)!r} has shape "
                             f"{cells.shape}, expected {shape}.")
        return cells.copy()
    mask = np.zeros(shape, dtype=bool)
    for cell in cells:
        if not isinstance(cell, (list, tuple)) or len(cell) != len(pos):
            raise ValueError(f"structural_zeros: the cells of {tuple(columns)!r} must be "
                             f"tuples of {len(pos)} values, got {cell!r}.")
        try:
            codes = tuple(int(domain.specs[j].encode(np.array([v], dtype=object))[0])
                          for j, v in zip(pos, cell))
        except ValueError as error:
            raise ValueError(f"structural_zeros: {error}") from None
        mask[codes] = True
    return mask


def grow_tree(tree: JunctionTree, clique: Sequence[str]) -> JunctionTree:
    """The junction tree of ``tree``'s maximal cliques plus ``clique``.

    ``tree`` itself when it already covers ``clique`` (no rebuild).  Since
    the previous maximal cliques are kept, the model's capacity never
    shrinks and the previous model is exactly representable on the result.
    """
    if tree.index_containing(clique) is not None:
        return tree
    return JunctionTree(tree.domain, list(tree.cliques) + [tuple(clique)])


def warm_start(model: GraphicalModel, tree: JunctionTree, zeros: ZeroMasks) -> GraphicalModel:
    """``model`` expressed on ``tree`` (a refinement of its own tree)."""
    if model.tree is tree or model.cliques == tree.cliques:
        return model
    return zeros.apply(model.project(tree))


def refit(
    tree: JunctionTree,
    bank: MeasurementBank,
    warm: GraphicalModel | None,
    zeros: ZeroMasks,
    *,
    max_iters: int,
    tol: float,
    atol: float = 0.0,
    dtype: type | str = np.float64,
    callback: Callable[[int, float], bool | None] | None = None,
) -> tuple[GraphicalModel, dict]:
    """Re-estimate the model on ``tree`` from every measurement so far.

    The warm model is handed over: once its tables are taken as the
    starting point, this function holds no reference to it, so when the
    caller keeps none either its tables are freed as soon as mirror descent
    leaves them (one model-sized array less during the estimation).

    Parameters
    ----------
    tree : JunctionTree
        Target structure; covers every measured and masked marginal.
    bank : MeasurementBank
        The measurements.
    warm : GraphicalModel or None
        Previous model (warm start), on ``tree`` or on a coarser tree.
    zeros : ZeroMasks
        Structural zeros, forced into the result.
    max_iters, tol, atol : int, float, float
        Mirror-descent limits of :func:`sklearn_dpsynth.pgm.estimate`.
    dtype : {numpy.float64, numpy.float32, "auto"}, default=numpy.float64
        Type of the model's tables and beliefs (:func:`~sklearn_dpsynth.pgm.estimate`).
    callback : callable, default=None
        ``callback(iteration, loss)`` after every accepted step; True stops
        (e.g. ``AnswerStop`` of ``sklearn_dpsynth.pgm.estimation``).

    Returns
    -------
    model : GraphicalModel
    info : dict
        What :func:`~sklearn_dpsynth.pgm.estimate` reported.
    """
    measurements = bank.measurements()
    target = estimation_tree(tree.domain, measurements, tree.cliques)
    if warm is None:
        tables = initial_tables(target, zeros.potentials() if zeros else None)
    else:
        tables = initial_tables(target, warm_start(warm, tree, zeros))
        warm = None  # handed over: see above
    model, info = estimate_from_tables(target, measurements, tables, max_iter=max_iters,
                                       tol=tol, atol=atol, dtype=dtype, callback=callback)
    return zeros.apply(model), info


def independent_start(model: GraphicalModel) -> dict[tuple[str], np.ndarray]:
    """Log 1-way marginal counts of ``model``, floored at :data:`START_FLOOR`.

    The log-potentials of the independent model (the product of ``model``'s
    1-way marginals), the start of :func:`refit_from_independent`.

    Parameters
    ----------
    model : GraphicalModel
        Source of the 1-way marginals.

    Returns
    -------
    dict of tuple of str to ndarray
    """
    return {(a,): np.log(np.maximum(model.marginal((a,)), START_FLOOR))
            for a in model.domain}


def refit_from_independent(
    tree: JunctionTree,
    bank: MeasurementBank,
    one_way: Mapping[tuple[str], np.ndarray],
    zeros: ZeroMasks,
    *,
    max_iters: int,
    tol: float,
    early_stopping: float,
    dtype: type | str = np.float64,
) -> tuple[GraphicalModel, dict]:
    """Estimate afresh from the independent model, stopping by the discrepancy principle.

    The start is the product of the last model's 1-way marginals
    (:func:`independent_start`), so the caller can free that model before
    the estimation allocates its own tables; mirror descent stops at the
    first step whose loss is at most ``early_stopping`` times the number of
    measured entries, the loss's expected value at the true marginals.
    Cells that the noise cannot tell from zero thus keep a small but not
    vanishing probability (running to convergence drives them to zero).
    Where no distribution reaches that target, it stops once the target is
    out of reach within ``max_iters`` (``DiscrepancyStop`` of
    ``sklearn_dpsynth.pgm.estimation``);
    ``info["stopped_by"]`` is ``"target"``, ``"out of reach"`` or None
    (stopped by ``tol`` or the cap).

    Parameters
    ----------
    tree : JunctionTree
        Target structure.
    bank : MeasurementBank
        The measurements.
    one_way : dict of tuple of str to ndarray
        Log-potentials of the start, from :func:`independent_start`.
    zeros : ZeroMasks
        Structural zeros, forced into the start and the result.
    max_iters, tol : int, float
        Mirror-descent limits.
    early_stopping : float
        Discrepancy factor ``tau``.
    dtype : {numpy.float64, numpy.float32, "auto"}, default=numpy.float64
        Type of the model's tables and beliefs.

    Returns
    -------
    model : GraphicalModel
    info : dict
    """
    stop = DiscrepancyStop(early_stopping * bank.n_entries(), max_iters)
    model, info = estimate(tree.domain, bank.measurements(), cliques=list(tree.cliques),
                           potentials=zeros.potentials(one_way), max_iter=max_iters, tol=tol,
                           callback=stop, dtype=dtype)
    info["stopped_by"] = stop.reason
    return zeros.apply(model), info


def holdout_factor(
    tree: JunctionTree,
    halves: tuple[MeasurementBank, MeasurementBank],
    zeros: ZeroMasks,
    *,
    total: float,
    max_iters: int,
    tol: float,
    dtype: type | str = np.float64,
) -> tuple[float | None, dict]:
    """The final estimation's stop, read off the noise split.

    Every marginal was released as two halves with independent noise (the
    two banks, filled in the same order, the 1-way marginals among them).
    For each fold the model is fitted to one half, from the independent
    model of that half's own 1-way measurements (a start computed from
    both halves would already hold the held-out noise), while the other
    half's loss is followed
    (:func:`sklearn_dpsynth.pgm.estimation.holdout_stop_factor`): the
    fitted half's ``loss / n_entries`` at the lowest held-out loss is the
    fold's factor.  The result is the lower of the two factors, for
    :func:`refit_from_independent`, or None where a fold's held-out loss
    was still falling at its last step: the noise never showed the fit
    going too far, so the estimation is run to convergence.  Only noisy
    releases are read (post-processing).

    Parameters
    ----------
    tree : JunctionTree
        The final structure (the folds are fitted on it).
    halves : (MeasurementBank, MeasurementBank)
        First and second halves of every measurement.
    zeros : ZeroMasks
        Structural zeros, forced into the starts.
    total : float
        Number of records (an estimate from the releases).
    max_iters, tol : int, float
        Mirror-descent limits.
    dtype : {numpy.float64, numpy.float32, "auto"}, default=numpy.float64
        Type of the folds' tables and beliefs.

    Returns
    -------
    factor : float or None
    info : dict
        ``factor`` and, per fold, ``factor``, ``best_iteration``,
        ``iterations`` and ``best_at_end``.
    """
    first, second = (bank.measurements() for bank in halves)
    starts = [zeros.potentials(_half_independent_start(ms)) for ms in (first, second)]
    factor, folds = holdout_stop_factor(
        tree.domain, list(zip(first, second)), total=total, cliques=list(tree.cliques),
        max_iter=max_iters, tol=tol, dtype=dtype, fold_potentials=starts)
    return factor, holdout_summary(factor, folds)


def _half_independent_start(measurements: Sequence[Measurement]) -> dict:
    """Log-potentials of the independent model of one half's 1-way measurements."""
    return {m.clique: np.log(np.maximum(m.noisy, START_FLOOR))
            for m in measurements if len(m.clique) == 1}
