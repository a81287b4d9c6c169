"""AIM: an adaptive and iterative mechanism for DP synthetic data."""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Callable, Hashable

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..._base import BaseSynthesizer
from ..._docstrings import fill_doc
from ..._progress import Progress
from ..._validation import DEPRECATED_NAME
from ...backends import EncodedTable
from ...pgm import GraphicalModel, JunctionTree, Measurement, ModelDomain
from ...pgm.estimation import AnswerStop
from ...privacy import PrivacyLedger, gaussian_sigma
from ._budget import BudgetSchedule
from ._model import (MeasurementBank, ZeroMasks, grow_tree, holdout_factor, independent_start,
                     parse_structural_zeros, refit, refit_from_independent)
from ..candidates import CandidateScorer
from ..compression import DomainCompression
from ..measure import describe, release_halves
from ..pgm_mixin import PGMMixin
from ..workload import candidate_weights, default_aim_workload, parse_workload

__all__ = ["AIMSynthesizer"]

#: Rounds planned per column when ``rounds`` is None (AIM paper: ``T = 16 d``).
ROUNDS_PER_COLUMN = 16
#: Default ``round_settle``: see the class docstring.
ROUND_SETTLE = 0.1
#: Accepted steps over which ``round_settle`` reads the move of the new answer.
SETTLE_WINDOW = 10
#: ``round_settle`` applies to rounds whose grown model has at least this many MiB
#: (smaller models re-estimate in milliseconds: those rounds run as without it).
SETTLE_MIN_MB = 1.0


@fill_doc
class AIMSynthesizer(PGMMixin, BaseSynthesizer):
    """AIM: workload-aware, adaptive selection and measurement of marginals.

    The mechanism of McKenna, Mullins, Sheldon & Miklau ("AIM: an adaptive
    and iterative mechanism for differentially private synthetic data",
    VLDB 2022).  It spends its budget over rounds; each round privately
    selects the marginal on which the current graphical model is worst,
    measures it with the Gaussian mechanism and re-fits the model with
    Private-PGM.  With ``rho`` the zCDP budget left after domain learning,
    ``d`` columns and ``T`` planned rounds (``rounds``, default ``16 d``):

    1. every 1-way marginal (and every ``initial_cliques`` marginal) is
       measured with noise ``sigma = sqrt(T / (2 * 0.9 * rho))``;
    2. each round, the *candidates* are the marginals of the workload's
       downward closure, each weighted by ``w_C = sum_W w_W |C & W|``; those
       that the model already covers, or whose addition keeps the model
       under ``max_model_size * rho_used / rho`` MiB, are scored by
       ``w_C * (||M_C(D) - M_C(model)||_1 - sqrt(2/pi) sigma n_cells(C))``
       and one is selected with the exponential mechanism at
       ``epsilon = sqrt(8 * 0.1 * rho / T)`` (sensitivity ``max w_C``);
    3. the selected marginal is measured at the current ``sigma`` and the
       model is re-estimated, warm-started from the previous one (in the
       last round, with ``early_stopping``, that is left to step 5, which
       restarts from the model's 1-way marginals or continues from the
       previous round's model);
    4. when the model's answer on the measured marginal moved by less than
       ``sqrt(2/pi) sigma n_cells(C)`` in L1, ``sigma`` is halved and
       ``epsilon`` doubled; when the budget left cannot pay two more rounds,
       the last round spends exactly what is left (a tenth on selection);
    5. after the last round the model is re-estimated once more (see
       ``early_stopping``) and rows are generated with the low-variance
       sampler.

    Parameters
    ----------
    %(common_parameters)s
    workload : list, default=None
        The marginals the synthetic data should preserve: entries
        ``(columns, weight)`` with ``columns`` a tuple of column names (of
        any length) and ``weight > 0``; a bare tuple of names weighs 1.
        ``None`` is every 2-way marginal of at most ``max_cells`` cells
        and, on a table whose columns are all binary and whose 3-way
        marginals have at most ``max_cells`` cells in all (up to 20 columns
        at the default), every 3-way marginal too
        (:func:`~sklearn_dpsynth.marginal.workload.default_aim_workload`).
        The rule reads the public domain only, never the rows.
    max_cells : int, default=10000
        Largest 2-way marginal of the default workload, and largest total
        of its 3-way layer.
    max_model_size : float, default=80
        Size cap (MiB of log-potentials, 8 bytes a cell) of the final
        model; after spending a fraction ``f`` of the budget the model may
        use ``f * max_model_size``.
    rounds : int, default=None
        Planned rounds ``T`` that set the initial ``sigma`` and ``epsilon``
        (``16 * n_columns`` when None).  At least ``m + 2`` is used, ``m``
        being the number of initial measurements.  Annealing usually ends
        the run in fewer rounds.
    max_iter : int, default=100
        Mirror-descent steps of each per-round re-estimation (warm-started,
        so a few suffice to take in one new measurement).
    final_max_iter : int, default=1000
        Largest number of mirror-descent steps of the final estimation.
    tol : float, default=1e-6
        An estimation stops when a step lowers its loss by less than
        ``tol`` times the loss.
    round_atol : float, default=0.3
        A per-round re-estimation also stops when a step lowers its loss by
        at most ``round_atol``.  The loss is a sum of squared residuals in
        units of each measurement's noise variance, so a decrease below 1
        moves the model's measured answers by less than one noise standard
        deviation in all.  The selection step scores candidates against the
        round's model, so rounds stopped too early pick worse marginals: 0.3
        beat 1.0 on 2-way TVD on Adult and on ``make_bayesnet`` tables (see
        the user guide's Performance section).  0 runs every round to
        ``max_iter`` / ``tol``.
    round_settle : float or None, default=0.1
        A per-round re-estimation also stops once the model's answer on the
        round's new measurement has settled: it moved (L1) by at most
        ``round_settle * sigma * n_cells`` over the last 10 steps, and it is
        already farther from its value before the round than the annealing
        test's threshold ``sqrt(2/pi) * sigma * n_cells`` (step 4: a round
        that would anneal is run as without the rule, so the stop does not
        make annealing more frequent).  It applies to rounds whose model has
        at least 1 MiB; smaller ones re-estimate in milliseconds and run as
        without it (on Texas at epsilon 1, where every model stays under
        1 MiB, applying it everywhere cost 0.0005 of 2-way TVD over ten
        seeds for one CPU second).  The warm start carries the previous
        rounds' fit, and the steps left would move the new answer by a
        fraction of its noise: without the rule the rounds spend most of
        their ``max_iter`` steps polishing.  On Texas at epsilon 10 (seed 0)
        the rounds take 4,274 steps instead of 5,974 and the fit 59 CPU s
        instead of 93; on Adult at epsilon 10, 27.5 instead of 40.4; the
        reference harness's accuracy stays within the seeds' spread
        (``benchmarks/aim_final_profile.py``).  0.3, applied to every round,
        was faster still (Adult at epsilon 10: 24 CPU s against 33) but
        worse on Texas at epsilon 10 (five seeds: 3-way TVD 0.0295 against
        0.0288, held-out NLL worse on every seed, 16.66 against 16.61).
        The rule reads only the model's fit to the noisy releases
        (post-processing; ``sklearn_dpsynth.pgm.estimation.AnswerStop``).
        None or 0 turns it off (each round runs to ``max_iter`` / ``tol`` /
        ``round_atol``).
    early_stopping : float, "auto", "holdout" or None, default="auto"
        The final estimation restarts from the independent model (the
        product of the last model's 1-way marginals) and stops at the first
        step whose loss is at most a factor ``tau`` times the number of
        measured entries (the loss's expected value at the true marginals;
        the discrepancy rule of
        :class:`~sklearn_dpsynth.MSTSynthesizer`), or once that target is
        out of reach: when, at the rate the loss fell over the last 25
        steps, the remaining gap would take more steps than
        ``final_max_iter`` leaves (the loss falls ever more slowly, so the
        cap would have stopped it above the target anyway).  ``None``
        continues from the last round's model up to ``final_max_iter`` /
        ``tol``; a number fixes ``tau``.  ``"holdout"`` decides from the
        noisy measurements, by two-fold cross-validation (every marginal is
        released as two halves of its budget): ``tau`` is read off the
        folds, and where a fold's held-out loss is still falling at its
        end the run continues as with ``None``.  ``"auto"`` (the default)
        also releases every marginal as two halves; when some merged noisy
        count is negative it reads ``tau`` off the folds as ``"holdout"``
        does on a final model of at most 16 MiB (``AUTO_HOLDOUT_MAX_MB``;
        above it, where the folds can cost more than the fit, ``tau = 0.7``),
        and when none is negative it continues from the model before the
        last round's measurement for at most 300 steps (and
        ``final_max_iter``), as it also does where the folds ask to run on:
        a function of the noisy counts and the selected cliques only.  See
        Notes.
    structural_zeros : dict, default=None
        ``{columns: cells}`` of cells known to be impossible: ``columns`` a
        tuple of column names, ``cells`` a list of tuples of raw values (one
        per column, encoded with the domain) or a boolean array over the
        encoded codes (shape ``tuple(domain_[c].size for c in columns)``,
        True where impossible).  They have probability exactly 0 in the
        model and are never sampled.  The marginal is part of the model
        from the start.
    initial_cliques : list of tuple of column names, default=None
        Marginals measured in step 1 beside the 1-way marginals.
    verbose : int, default=0
        0 is silent; 1 (or more) shows a progress bar (budget used, rounds,
        current marginal).
    callback : callable, default=None
        ``callback(info)`` after every round, with ``info`` a dict as in
        ``history_``.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the noise, the selections and sampling.
        %(seed_warning)s
    model_dtype : {"auto", "float32", "float64"}, default="auto"
        Floating type of the graphical model's log-potentials, beliefs and
        messages (``dtype`` of :func:`sklearn_dpsynth.pgm.estimate`);
        measured counts, gradients and losses stay float64 either way.
        ``"float32"`` halves the model's memory and much of its memory
        traffic; an estimation that float32 rounding stops early is
        finished in float64.  ``"auto"`` uses float32 for an estimation
        when float32 rounding of the largest count is at most 1% of the
        smallest noise standard deviation (:func:`sklearn_dpsynth.pgm.auto_dtype`;
        Adult at epsilon 10: 0.24%), float64 otherwise: large tables at
        large budgets, where float32 converges far more slowly, stay in
        float64 (an explicit ``"float32"`` there warns).  ``"float64"``
        gives the results of earlier versions (up to the last digits).
        The size cap ``max_model_size`` counts 8 bytes a cell in all cases.
    %(max_iters_deprecated)s

    Attributes
    ----------
    domain_ : Domain
        The complete public domain of the encoded table.
    model_ : GraphicalModel
        The fitted model (attribute ``attributes_[j]`` is column ``j``).
    compression_ : DomainCompression
        The identity map between the domain's codes and the model's (AIM
        models the full domain).
    attributes_ : list of str
        Name of every column in ``model_``.
    workload_ : list of (tuple, float)
        The workload used, as column names and weights.
    cliques_ : list of tuple
        Measured marginals (column names) in measurement order, repeats
        included.
    n_rounds_ : int
        Number of select-measure-estimate rounds run.
    history_ : list of dict
        One dict per round: ``round``, ``clique``, ``sigma``, ``epsilon``,
        ``annealed``, ``final``, ``rho_used``, ``rho_total``,
        ``budget_used`` (fraction), ``model_size_mb``, ``size_limit_mb``,
        ``n_candidates`` and ``estimation_iterations`` (0 in the last round
        when ``early_stopping`` is set: see step 3; no timings: the
        time a round takes grows with the private row count, so it is not
        kept in the model or its file).
    estimation_info_ : dict
        What :func:`sklearn_dpsynth.pgm.estimate` reported on the final
        estimation, and ``stopped_by`` (``"target"``, ``"out of reach"``
        or None: ``tol`` or ``final_max_iter``; absent when the run
        continued from the last round's model); with ``"auto"`` also
        ``factor`` (the factor used, or None when it continued); with
        ``early_stopping="holdout"``, and with ``"auto"`` where it folded, also
        ``holdout``: ``factor`` (the factor used; None when the run
        continued to convergence, with ``"auto"`` for at most 300 steps) and each fold's ``factor``,
        ``best_iteration``, ``iterations`` and ``best_at_end``.
    privacy_ledger_ : PrivacyLedger
        Every measurement and selection, and its cost.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when fitted on a DataFrame with string column names.

    See Also
    --------
    sklearn_dpsynth.MSTSynthesizer : One private selection (a spanning tree), then one measurement.

    Notes
    -----
    **Privacy argument.** Neighbouring tables differ by adding or removing
    one row.  Every marginal (contingency table) then changes by 1 in one
    cell: its L2 sensitivity is 1, so releasing it with Gaussian noise of
    standard deviation ``sigma`` is ``1 / (2 sigma^2)``-zCDP; with
    ``early_stopping="holdout"`` or ``"auto"`` each measurement is two releases at
    ``sqrt(2) sigma``, ``1 / (4 sigma^2)`` each, together the same cost
    (the ledger records both halves).  The model
    used in a round is a function of earlier releases only
    (post-processing), so the score of candidate ``C``,
    ``w_C * (||M_C(D) - M_C(model)||_1 - const)``, changes by at most
    ``w_C`` (triangle inequality), and by at most ``Delta = max w_C`` over
    the eligible candidates, whose set depends on public quantities only
    (the domain, the model's structure and the budget schedule).  The
    exponential mechanism at ``epsilon`` with sensitivity ``Delta`` is
    ``epsilon``-DP and ``epsilon^2 / 8``-zCDP (bounded range; Cesar &
    Rogers 2021).  The schedule -- how many rounds, which ``sigma`` and
    ``epsilon``, annealing -- depends only on released values and on the
    public budget, and zCDP composes additively under such adaptive
    choices (Bun & Steinke 2016), so the fit costs the sum of the entries
    of the :class:`~sklearn_dpsynth.PrivacyLedger`.  Every round
    is charged before its output is released, and the final round is sized
    to spend exactly what is left, so the ledger totals the budget ``rho``
    (converted to ``(epsilon, delta)`` by the ledger).  Re-estimation,
    the choice of the stopping factor (with ``"auto"``: the signs of the
    noisy counts, and the final model's size, a function of the selected
    cliques), structural zeros (public knowledge), generation,
    :meth:`marginal` and :meth:`score_samples` use only the noisy releases.

    **Estimation and speed.** Each round's re-estimation is warm-started
    and limited to ``max_iter`` mirror-descent steps: one new measurement
    moves a fitted model only locally, and on Adult more steps per round
    changed the rounds' selections but not the final marginal error.  The
    junction tree only grows: the previous maximal cliques are kept, so a
    selected marginal that the tree already covers triggers no rebuild and
    the warm start is exact.  Repeated measurements of a marginal are merged
    by inverse-variance weighting (the same least-squares loss up to a
    constant), the private table's marginals are counted once, when a
    candidate is first scored, and the model's answers on all candidates
    come from its calibrated clique beliefs in shared passes (every
    clique's candidates from one traversal of its table; those no clique
    covers from the joint table of their covering subtree when it is small,
    :meth:`sklearn_dpsynth.pgm.GraphicalModel.marginals`).  Running the least-squares fit to convergence
    drives every cell whose noisy count is negative to probability zero;
    the final estimation therefore stops by the discrepancy rule
    (``early_stopping``), which keeps held-out log-likelihoods finite and
    did not raise the marginal error on Adult.  Where the measurements
    pin down a distribution far from independence, a fixed factor stops
    too early: on a 20-column binary table whose rows all sum to 10
    (``benchmarks/aim_highorder.py``) the factor 0.7 was reached after
    about 70 steps and kept 0.43-0.52 of the sampled rows valid on two
    of three seeds, where running on kept about 0.6-0.7 (and gave a
    better held-out likelihood).  The default, ``early_stopping="auto"``,
    stops early only where running on could zero a cell: when some merged
    noisy count is negative (by the folds below on small models, else at
    0.7).  When none is, the final
    estimation runs on from the model before the last measurement, for at
    most 300 steps (each step costs a pass over the model, which on that
    table has grown to the full 2^20 cells; the valid share was still
    rising slowly after 400 steps).  On that table no noisy count was
    negative and the valid share went from 0.54 / 0.66 / 0.93 to 0.72 /
    0.91 / 0.92 (seeds 0-2; 0.73 / 0.71 / 0.92 with ``round_settle``, which
    changes the rounds of the large models).  In every other run measured (Adult, Texas,
    a ``make_bayesnet`` table, ``ordered`` and the XOR table, epsilon 0.3
    to 10) some noisy count was negative.  ``early_stopping="holdout"`` lets the
    data decide, as MST's default does: every marginal is released as two
    halves of its budget, and for each of two folds the final estimation
    is fitted to one half (from the independent model of that half's
    1-way measurements) while the other half's loss (in expectation the
    model's squared error on the true marginals plus a constant) is
    followed (``sklearn_dpsynth.pgm.estimation.holdout_stop_factor``).
    When both folds' held-out losses turned up, the final estimation
    restarts from the independent model and stops at ``tau``, the lower
    of the folds' ``loss / n_entries`` at their lowest held-out loss.
    When a fold's was still falling at its last step, the noise never
    showed overfitting and the final estimation continues from the last
    round's model to convergence.  That costs two extra estimations on the final tree;
    ``estimation_info_["holdout"]`` records the folds and the choice.
    The default ``"auto"`` folds only where some noisy count is negative
    and the final model is at most 16 MiB: there the folds cost little,
    and they lowered the 2-way error against the fixed 0.7 (16-64 seeds:
    Texas at epsilon 1 0.0284 to 0.0264, at 0.3 0.0549 to 0.0524;
    ``bayesnet`` at 0.3 0.0081 to 0.0076; Adult level at epsilon 1); on
    the largest models (Texas and Adult at epsilon 10, 55-75 MiB) the
    folds took two to three times the fit, so models above 16 MiB keep 0.7
    (a conservative cut: Texas at epsilon 3, 47 MiB, whose folds happened
    to cost little, keeps 0.7 too); figures in
    ``benchmarks/README.md`` ("AIM's stop folds on small models").  On tables whose
    measurements no distribution fits to that target (Texas: the lowest
    reachable loss is above it), the out-of-reach test ends the final
    estimation after 314-589 steps instead of the 1,000-step cap; where
    the target is reached (Adult, ``bayesnet``, ``ordered``: after 117-883
    steps) it never fired, so those fits are unchanged.
    ``estimation_info_["stopped_by"]`` says which rule ended it.

    Examples
    --------
    >>> from sklearn_dpsynth.marginal.aim import AIMSynthesizer
    >>> from sklearn_dpsynth.datasets import make_bayesnet
    >>> data = make_bayesnet(n_samples=2000, n_features=4, random_state=0)
    >>> synth = AIMSynthesizer(domain=data.domain, rounds=8, random_state=0)
    >>> synth = synth.fit(data.frame, epsilon=1.0)
    >>> synth.sample(5).shape
    (5, 4)
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("workload_", "history_", "n_rounds_")

    _renamed_params_ = {"max_iters": "max_iter", "final_max_iters": "final_max_iter"}

    #: Generator of :meth:`sample` (MST's ``sampling`` parameter; fixed here).
    sampling = "lowvar"

    _parameter_constraints: dict = {
        **BaseSynthesizer._parameter_constraints,
        "workload": [list, tuple, None],
        "max_cells": [Interval(Integral, 1, None, closed="left")],
        "max_model_size": [Interval(Real, 0, None, closed="neither")],
        "rounds": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "final_max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_iters": [Interval(Integral, 1, None, closed="left"), DEPRECATED_NAME],
        "final_max_iters": [Interval(Integral, 1, None, closed="left"), DEPRECATED_NAME],
        "tol": [Interval(Real, 0, None, closed="left")],
        "round_atol": [Interval(Real, 0, None, closed="left")],
        "round_settle": [Interval(Real, 0, None, closed="left"), None],
        "early_stopping": [Interval(Real, 0, None, closed="neither"),
                           StrOptions({"holdout", "auto"}), None],
        "structural_zeros": [dict, None],
        "initial_cliques": [list, tuple, None],
        "verbose": ["verbose"],
        "callback": [callable, None],
        "model_dtype": [StrOptions({"auto", "float32", "float64"})],
    }

    def __init__(self, *, domain=None, n_bins=32, preprocessing="private",
                 preprocessing_budget=0.3, max_categories=99,
                 bin_value="uniform", workload=None, max_cells=10000,
                 max_model_size=80.0, rounds=None, max_iter=100, final_max_iter=1000,
                 tol=1e-6, round_atol=0.3, round_settle=ROUND_SETTLE, early_stopping="auto",
                 structural_zeros=None,
                 initial_cliques=None,
                 verbose=0, callback=None, random_state=None,
                 model_dtype="auto", max_iters="deprecated", final_max_iters="deprecated"):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.preprocessing_budget = preprocessing_budget
        self.max_categories = max_categories
        self.bin_value = bin_value
        self.workload = workload
        self.max_cells = max_cells
        self.max_model_size = max_model_size
        self.rounds = rounds
        self.max_iter = max_iter
        self.final_max_iter = final_max_iter
        self.tol = tol
        self.round_atol = round_atol
        self.round_settle = round_settle
        self.early_stopping = early_stopping
        self.structural_zeros = structural_zeros
        self.initial_cliques = initial_cliques
        self.verbose = verbose
        self.callback = callback
        self.random_state = random_state
        self.model_dtype = model_dtype
        self.max_iters = max_iters
        self.final_max_iters = final_max_iters

    # ------------------------------------------------------------------ fit
    def _fit_encoded(self, table: EncodedTable, ledger: PrivacyLedger,
                     rng: np.random.Generator, public: EncodedTable | None) -> None:
        sizes = self.domain_.sizes
        self.attributes_ = list(self.domain_.model_domain().attributes)
        self.compression_ = DomainCompression.identity(sizes)
        workload = self._workload_positions()
        initial = self._initial_positions()
        zeros = ZeroMasks(parse_structural_zeros(self.structural_zeros, self._positions,
                                                 self.domain_), self.attributes_)
        weights = candidate_weights(workload)
        one_way = [(j,) for j in range(len(sizes))]
        batched = table.with_counts(list(weights) + one_way + list(initial))
        scorer = CandidateScorer(batched, weights, self.attributes_)
        run = _Run(ledger, rng, scorer, zeros, self._run_options())
        first = one_way + [m for m in initial if len(m) > 1]
        schedule = BudgetSchedule.start(run.rho_total, self._planned_rounds(), len(first))
        run.start(first, schedule)
        run.loop(schedule)
        self.model_, self.estimation_info_ = run.finish(self._param("final_max_iter"))
        self.workload_ = [(self._names(m), w) for m, w in workload]
        self.cliques_ = [self._names(m) for m in run.measured]
        self.history_ = run.history
        self.n_rounds_ = len(run.history)

    def _run_options(self) -> "_RunOptions":
        """The options a run reads, as one explicit value."""
        return _RunOptions(
            labels=list(self.domain_.columns), model_domain=self.domain_.model_domain(),
            max_model_size=self.max_model_size,
            max_iters=self._param("max_iter"), tol=self.tol, round_atol=self.round_atol,
            round_settle=self.round_settle,
            early_stopping=self.early_stopping,
            verbose=self.verbose, callback=self.callback,
            dtype=self.model_dtype)

    def _planned_rounds(self) -> int:
        return self.rounds if self.rounds is not None else ROUNDS_PER_COLUMN * len(
            self.domain_.sizes)

    def _names(self, marginal: tuple[int, ...]) -> tuple:
        return tuple(self.domain_.columns[j] for j in marginal)

    # ----------------------------------------------------- parameter checks
    def _workload_positions(self) -> list[tuple[tuple[int, ...], float]]:
        """The workload as sorted column positions and weights."""
        if self.workload is None:
            return default_aim_workload(self.domain_.sizes, self.max_cells)
        return parse_workload(self.workload, self._positions)

    def _initial_positions(self) -> list[tuple[int, ...]]:
        """``initial_cliques`` as sorted column positions, duplicates dropped."""
        out: list[tuple[int, ...]] = []
        for clique in self.initial_cliques or []:
            if not isinstance(clique, (list, tuple)):
                raise ValueError("initial_cliques must be a list of tuples of column names, "
                                 f"got an entry {clique!r}.")
            key = tuple(sorted(self._positions(clique, "initial_cliques")))
            if key not in out:
                out.append(key)
        return out


@dataclass(frozen=True)
class _RunOptions:
    """What an AIM run reads from the estimator: public names and hyperparameters.

    Attributes
    ----------
    labels : list
        Column names, for the ledger and the history.
    model_domain : ModelDomain
        Attribute name and number of codes of every column, in the engine's form.
    max_model_size, max_iters, tol, round_atol, round_settle, early_stopping, verbose, callback
        The estimator's hyperparameters of the same names.
    dtype : str
        ``model_dtype``: "auto", "float32" or "float64".
    """

    labels: list[Hashable]
    model_domain: ModelDomain
    max_model_size: float
    max_iters: int
    tol: float
    round_atol: float
    round_settle: float | None
    early_stopping: float | str | None
    verbose: bool
    callback: Callable[[dict], Any] | None
    dtype: str


class _Run:
    """State of one AIM fit: ledger, model, measurements and progress."""

    def __init__(self, ledger: PrivacyLedger, rng: np.random.Generator,
                 scorer: CandidateScorer, zeros: ZeroMasks, options: _RunOptions) -> None:
        self.ledger = ledger
        self.rng = rng
        self.scorer = scorer
        self.zeros = zeros
        self.options = options
        self.labels = options.labels
        self.rho_total = ledger.rho_remaining()
        self.bank = MeasurementBank(list(options.model_domain.attributes))
        #: The two halves of every release (``early_stopping`` "holdout" or "auto"), else None.
        self.halves: tuple[MeasurementBank, MeasurementBank] | None = None
        if options.early_stopping in ("holdout", "auto"):
            self.halves = (MeasurementBank(self.bank.names), MeasurementBank(self.bank.names))
        self.measured: list[tuple[int, ...]] = []
        self.history: list[dict] = []
        self.model: GraphicalModel | None = None
        #: The final round's tree when that round left its estimation to ``finish``.
        self.final_tree: JunctionTree | None = None

    # ---------------------------------------------------------- releases
    @property
    def rho_used(self) -> float:
        return max(self.rho_total - self.ledger.rho_remaining(), 0.0)

    def measure(self, marginal: tuple[int, ...], sigma: float) -> None:
        """Release ``marginal`` with the Gaussian mechanism at ``sigma`` and bank it.

        With ``early_stopping="holdout"`` or ``"auto"`` it is released twice at
        ``sqrt(2) sigma`` (each ``1 / (4 sigma^2)``-zCDP, together the cost
        of one release at ``sigma``); the rounds use the mean of the two
        (noise variance ``sigma^2``), the final estimation's stopping
        factor both halves.
        """
        true = self.scorer.true_counts(marginal)
        target = describe(self.labels, marginal)
        if self.halves is None:
            noisy = self.ledger.gaussian(true, sigma=sigma, rng=self.rng, target=target,
                                         n_cells=true.size)
            self.bank.add(marginal, noisy, sigma)
        else:
            parts = release_halves(self.ledger, true, sigma, self.rng, target)
            for bank, part in zip(self.halves, parts):
                bank.add(marginal, part, math.sqrt(2.0) * sigma)
            self.bank.add(marginal, (parts[0] + parts[1]) / 2.0, sigma)
        self.measured.append(marginal)

    def select(self, candidates, schedule: BudgetSchedule, round_: int):
        """Pick a candidate with the exponential mechanism; also return model answers."""
        scores, sensitivity, answers = self.scorer.scores(self.model, candidates, schedule.sigma)
        rho = schedule.selection_rho
        if schedule.final:
            rho = min(rho, self.ledger.rho_remaining())
        pick = self.ledger.select(scores, rho=rho, rng=self.rng, sensitivity=sensitivity,
                                  target=f"AIM round {round_}: marginal selection")
        return candidates[pick], answers[candidates[pick]]

    # ------------------------------------------------------------- steps
    def start(self, first: list[tuple[int, ...]], schedule: BudgetSchedule) -> None:
        """Measure the initial marginals and fit the first model."""
        for marginal in first:
            self.measure(marginal, schedule.sigma)
        cliques = [self.scorer.clique(m) for m in first] + self.zeros.cliques
        tree = JunctionTree(self.options.model_domain, cliques)
        self.model, _ = refit(tree, self.bank, None, self.zeros,
                              max_iters=self.options.max_iters, tol=self.options.tol,
                              atol=self.options.round_atol, dtype=self.options.dtype)

    def loop(self, schedule: BudgetSchedule) -> None:
        """Select-measure-estimate rounds until the budget is spent."""
        progress = Progress(self.options.verbose, "AIM")
        with progress.bar(total=100.0, unit="%", bar_format=_BAR_FORMAT) as bar:
            while not schedule.final and self.ledger.rho_remaining() > 0:
                info = self.round(schedule, len(self.history) + 1)
                self.history.append(info)
                _show_round(bar, info)
                if self.options.callback is not None:
                    self.options.callback(dict(info))

    def round(self, schedule: BudgetSchedule, round_: int) -> dict:
        """One round; returns its progress record."""
        schedule.begin_round(self.ledger.rho_remaining())
        cost = schedule.round_cost if not schedule.final else self.ledger.rho_remaining()
        limit = self.options.max_model_size * min((self.rho_used + cost) / self.rho_total, 1.0)
        candidates = self.scorer.eligible(self.model.tree, limit)
        chosen, before = self.select(candidates, schedule, round_)
        sigma, epsilon = schedule.sigma, schedule.epsilon
        if schedule.final:
            sigma = gaussian_sigma(self.ledger.rho_remaining())
        self.measure(chosen, sigma)
        tree = grow_tree(self.model.tree, self.scorer.clique(chosen))
        if schedule.final and self.options.early_stopping is not None:
            # ("auto" too: should it run on, ``finish`` warm-starts from
            # the model before this round, as a round's refit would)
            # the final estimation restarts from the 1-way marginals of the
            # model on ``tree``: re-estimating the whole model first (the
            # largest of the run) would only move those a little
            self.final_tree, est, annealed = tree, {"iterations": 0}, False
        else:
            self.model.release_beliefs()  # only its potentials warm-start the refit
            self.model, est = refit(tree, self.bank, self._hand_over_model(), self.zeros,
                                    max_iters=self.options.max_iters, tol=self.options.tol,
                                    atol=self.options.round_atol, dtype=self.options.dtype,
                                    callback=self._settle_stop(chosen, sigma, before.size,
                                                               tree))
            after = self.scorer.model_counts(self.model, chosen)
            annealed = self._maybe_anneal(schedule, before, after, chosen, sigma)
        return self._record(round_, chosen, sigma, epsilon, schedule.final, annealed, limit,
                            len(candidates), est, tree)

    def _settle_stop(self, chosen: tuple[int, ...], sigma: float, n_cells: int,
                     tree: JunctionTree) -> AnswerStop | None:
        """A round's stop on the new measurement's answer (``round_settle``), or None."""
        factor = self.options.round_settle
        if not factor or tree.size_mb < SETTLE_MIN_MB:
            return None
        index = self.bank.marginals().index(chosen)
        return AnswerStop(index, factor * sigma * n_cells, window=SETTLE_WINDOW,
                          least_move=_expected_move(sigma, n_cells))

    def _hand_over_model(self) -> GraphicalModel:
        """The current model, no longer referenced here (``refit`` frees it early)."""
        model, self.model = self.model, None
        return model

    def _maybe_anneal(self, schedule, before, after, chosen, sigma) -> bool:
        """Halve sigma / double epsilon when the model barely moved."""
        if schedule.final:
            return False
        moved = float(np.abs(after - before).sum())
        if moved <= _expected_move(sigma, before.size):
            schedule.anneal()
            return True
        return False

    def _record(self, round_, chosen, sigma, epsilon, final, annealed, limit, n_candidates,
                est, tree) -> dict:
        rho_used = self.rho_used
        return {
            "round": round_,
            "clique": tuple(self.labels[j] for j in chosen),
            "sigma": sigma,
            "epsilon": epsilon,
            "annealed": annealed,
            "final": final,
            "rho_used": rho_used,
            "rho_total": self.rho_total,
            "budget_used": min(rho_used / self.rho_total, 1.0),
            "model_size_mb": tree.size_mb,
            "size_limit_mb": limit,
            "n_candidates": n_candidates,
            "estimation_iterations": est["iterations"],
        }

    def finish(self, max_iters: int) -> tuple[GraphicalModel, dict]:
        """Final estimation on the final tree (see ``early_stopping``)."""
        options = self.options
        tree = self.model.tree if self.final_tree is None else self.final_tree
        factor, verdict = self._stop_factor(tree, max_iters)
        if factor is None:
            if options.early_stopping == "auto":
                max_iters = min(max_iters, AUTO_MAX_ITER)
            model, info = refit(tree, self.bank, self._hand_over_model(), self.zeros,
                                max_iters=max_iters, tol=options.tol, dtype=options.dtype)
        else:
            one_way = independent_start(self.model)
            self.model = None  # its tables are not needed: free them before estimating
            model, info = refit_from_independent(tree, self.bank, one_way, self.zeros,
                                                 max_iters=max_iters, tol=options.tol,
                                                 early_stopping=factor, dtype=options.dtype)
        info.update(verdict)
        return model, info

    def _stop_factor(self, tree: JunctionTree, max_iters: int) -> tuple[float | None, dict]:
        """The final estimation's discrepancy factor (None: run on from the last
        round's model) and what ``estimation_info_`` reports of that choice."""
        mode = self.options.early_stopping
        if mode not in ("auto", "holdout"):
            return mode, {}
        if mode == "auto":
            factor = auto_stop_factor(self.bank.measurements())
            if factor is None or tree.size_mb > AUTO_HOLDOUT_MAX_MB:
                return factor, {"factor": factor}
        factor, holdout = holdout_factor(tree, self.halves, self.zeros, total=self.model.total,
                                         max_iters=max_iters, tol=self.options.tol,
                                         dtype=self.options.dtype)
        return factor, ({"factor": factor, "holdout": holdout} if mode == "auto"
                        else {"holdout": holdout})


#: The discrepancy factor of ``early_stopping="auto"`` when some noisy count is negative.
AUTO_FACTOR = 0.7
#: Largest final model (MiB, 8 bytes a cell) on which ``early_stopping="auto"``
#: reads its factor off the noise split when some noisy count is negative
#: (two extra estimations on the final tree); above it the factor is
#: :data:`AUTO_FACTOR`.  The size is a function of the selected cliques only.
AUTO_HOLDOUT_MAX_MB = 16.0
#: Most steps of the ``early_stopping="auto"`` final estimation when it runs on
#: from the last round's model (at most ``final_max_iter``).
AUTO_MAX_ITER = 300


def auto_stop_factor(measurements: list[Measurement]) -> float | None:
    """``early_stopping="auto"``: the final estimation's factor, from the noisy counts.

    Running the least-squares fit on drives the cells whose noisy counts
    are negative to probability zero, which is why the final estimation
    stops early (:data:`AUTO_FACTOR`); when no measured noisy count is
    negative there is no such cell, and the fit continues from the last
    round's model (None; for at most :data:`AUTO_MAX_ITER` steps).  A
    function of the noisy
    releases only (post-processing).

    Parameters
    ----------
    measurements : list of Measurement
        The run's measurements (merged repeats).

    Returns
    -------
    float or None
    """
    if any(float(np.min(m.noisy)) < 0.0 for m in measurements):
        return AUTO_FACTOR
    return None


def _expected_move(sigma: float, n_cells: int) -> float:
    """The annealing test's threshold: expected L1 norm of the noise of ``n_cells`` cells."""
    return math.sqrt(2.0 / math.pi) * sigma * n_cells


#: The verbose bar: the percentage of the budget spent, then the last round.
_BAR_FORMAT = "{desc}: {percentage:3.0f}% of budget|{bar}| [{elapsed}<{remaining}{postfix}]"


def _show_round(bar: Any, info: dict) -> None:
    """Move the verbose bar to the budget used after a round, naming its clique."""
    if bar.disable:
        return
    bar.n = round(100.0 * info["budget_used"], 2)
    bar.set_postfix(round=info["round"], clique=info["clique"],
                    model=f"{info['model_size_mb']:.2g}MiB", refresh=False)
    bar.refresh()
