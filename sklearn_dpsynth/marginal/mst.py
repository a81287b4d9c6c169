"""MST: noisy 1- and 2-way marginals on a private maximum spanning tree."""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import BaseSynthesizer, PublicDataSynthesizer
from .._docstrings import fill_doc
from .._progress import Progress
from .._validation import DEPRECATED_NAME
from ..backends import EncodedTable
from ..pgm import Measurement, ModelDomain, estimate, estimate_total
from ..pgm.estimation import expected_loss, holdout_stop_factor, holdout_summary
from ..privacy import PrivacyLedger
from .budget import budget_shares
from .compression import DomainCompression
from .measure import measure_marginal_halves, measure_marginals, weighted_sigmas
from .pgm_mixin import PGMMixin
from .selection import (Components, all_pairs, l1_pair_scores, maximum_spanning_tree,
                        mutual_information, private_kruskal)

__all__ = ["MSTSynthesizer"]

#: Codes whose noisy 1-way count is below this many noise standard
#: deviations are merged when ``compress=True``.
COMPRESSION_SIGMAS = 3.0

#: Smallest count of a code in the estimation's starting point (the
#: independent model), so that its log-potentials are finite.
_WARM_START_FLOOR = 0.01

#: Largest diagonal query passed to the engine as a dense matrix.
_DENSE_QUERY_MAX = 512

#: The tree selection's weight against each measuring phase's 1
#: (``sklearn_dpsynth.marginal.budget.budget_shares``): shares of 3/8,
#: 1/4 and 3/8 for the 1-way measurements, the selection and the tree's
#: measurements.  Measured on the reference harness over 48 seeds (issue 27,
#: ``benchmarks/README.md``, "MST's budget split"): against thirds it lowers
#: the 2-way TVD at every epsilon on Texas, ``bayesnet`` and the census
#: table, and keeps the tree as often right on ``ordered``.
SELECTION_WEIGHT = 2.0 / 3.0


@fill_doc
class MSTSynthesizer(PGMMixin, PublicDataSynthesizer):
    """MST: a graphical model fitted to noisy marginals on a spanning tree.

    The method of McKenna, Miklau & Sheldon ("Winning the NIST contest: a
    scalable and general approach to differentially private synthetic
    data", 2021).  With ``rho`` the zCDP budget left after domain learning:

    1. every 1-way marginal is measured with the Gaussian mechanism
       (``3 rho / 8`` in total);
    2. with ``compress=True``, the codes of each column whose noisy count is
       below three noise standard deviations are merged into one code (when
       there are at least two of them) and the model is built on this
       compressed domain;
    3. a spanning tree over the columns is selected privately (``rho / 4``):
       the quality of a pair is the L1 distance between its true 2-way
       marginal and its estimate under the independent model fitted to the
       1-way measurements, and Kruskal's algorithm picks each of the
       ``r - 1`` edges (``r`` components to connect) with the exponential
       mechanism at ``rho / (4 (r - 1))``;
    4. the 2-way marginals of the tree (and the ``initial_cliques``) are
       measured with the Gaussian mechanism (``3 rho / 8``);
    5. Private-PGM (:func:`sklearn_dpsynth.pgm.estimate`) fits a graphical
       model to all the measurements, starting from the independent model
       of step 3 (see Notes);
    6. rows are generated from the model (low-variance sampler by default)
       and merged codes are spread uniformly over the original codes they
       stand for.

    Parameters
    ----------
    %(common_parameters)s
    initial_cliques : list of tuple of column names, default=None
        Marginals always measured in step 4; their columns start connected
        in the spanning tree, which is grown around them.
    weights : dict, default=None
        ``{marginal: weight}`` where a marginal is a tuple of column names
        (order ignored; a bare name stands for a 1-way marginal) and the
        weight a positive number; unlisted marginals weigh 1.  Within each
        measurement step, marginal ``i`` gets noise ``sigma / w_i`` where
        ``sigma`` is chosen so that the step keeps its budget (equivalently,
        the weights of the step are rescaled to ``sum w_i^2 = m`` for ``m``
        marginals): a larger weight buys a more accurate marginal at the
        expense of the others.  Pairs that are not selected are ignored.
    compress : bool, default=True
        Merge rare codes (step 2).
    sampling : {"lowvar", "iid"}, default="lowvar"
        Generator: low-variance rounding of the model's conditionals (the
        NIST-contest generator; synthetic marginals match the model's
        closely) or independent rows.
    max_iter : int, default=1000
        Largest number of mirror-descent steps of the estimation.
    tol : float, default=1e-4
        Estimation stops when a step lowers the loss by at most ``tol``
        times the loss.
    early_stopping : "holdout", float or None, default="holdout"
        Stop the estimation at the first step whose loss is at most a
        factor times the number of measured entries (the loss's expected
        value at the true marginals; see Notes).  ``"holdout"`` chooses the
        factor for each fit from the noisy measurements themselves: every
        marginal is measured as two halves of its budget (same cost, same
        noise for their mean) and the factor is where the model fitted to
        one half best predicts the other (two-fold cross-validation; where
        the held-out half is still better predicted at convergence, the
        estimation runs to ``tol`` / ``max_iter``).  A number fixes the
        factor (0.7 was the default before); ``None`` runs to ``tol`` /
        ``max_iter``.
    verbose : int, default=0
        0 is silent; 1 (or more) prints one line per stage on stderr (1-way
        measurement, selection, measurement, estimation), each with its time
        and the epsilon spent so far.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the noise, the selections and sampling.
        %(seed_warning)s
    model_dtype : {"float64", "float32", "auto"}, default="float64"
        Floating type of the graphical model's log-potentials, beliefs and
        messages (``dtype`` of :func:`sklearn_dpsynth.pgm.estimate`);
        counts, gradients and losses stay float64.  ``"float32"`` halves the
        model's memory; an estimation that float32 rounding stalls is
        finished in float64 (the reference harness's ``ordered`` table at
        epsilon 10: 2-way TVD 0.00034 against float64's 0.00036).
        ``"auto"`` is float32 where its rounding of the counts is at most 1%
        of the noise (:func:`sklearn_dpsynth.pgm.auto_dtype`; an explicit
        ``"float32"`` elsewhere warns).  MST's
        models are small, so float64 stays its default.
    max_iters : int, default="deprecated"
        Deprecated old name of ``max_iter``; set, it is used and ``fit``
        warns (FutureWarning).  It will be removed in the next release.

    Attributes
    ----------
    domain_ : Domain
        The complete public domain of the encoded table.
    compression_ : DomainCompression
        Map between the domain's codes and the model's.
    model_ : GraphicalModel
        The fitted model on the compressed domain (attributes named as in
        ``attributes_``).
    attributes_ : list of str
        Name of every column in ``model_``.
    cliques_ : list of tuple
        Marginals measured in step 4 (column names): the initial cliques,
        then the tree edges.
    tree_edges_ : list of tuple
        The selected spanning-tree edges (column-name pairs), in selection
        order.
    estimation_info_ : dict
        What :func:`sklearn_dpsynth.pgm.estimate` reported.
    privacy_ledger_ : PrivacyLedger
        Every measurement and selection, and its cost.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when fitted on a DataFrame with string column names.

    Notes
    -----
    **Compression.** A compressed code standing for ``k`` original codes is
    measured, in step 1, by the sum of their ``k`` noisy counts, whose noise
    has variance ``k sigma^2``; it enters the estimation divided by ``sqrt(k)``
    through a diagonal query of ``1 / sqrt(k)`` (a whitening, so that every
    entry has noise ``sigma`` and the least-squares loss is the generalised
    one).  The model treats the original codes of a group as equally likely:
    the probability of an original code is ``P(group) / k``, in
    :meth:`score_samples`, :meth:`marginal` and :meth:`sample` alike.

    **Estimation.** The least-squares optimum fits the noise as well as the
    signal: at small budgets a 2-way table with many small cells is mostly
    noise. Mirror descent starts from the independent model (the exact
    least-squares fit of the 1-way measurements) and stops at the first step
    whose loss ``sum ||Q mu - y||^2 / sigma^2`` is at most ``tau`` times the
    number of measured entries ``m``, the loss's expected value at the true
    marginals (a discrepancy principle, after Morozov): dependencies that the
    noise cannot confirm stay close to independence.  The best ``tau`` depends
    on the table and the budget (a fixed 0.7, the former default, was tuned on
    Adult and random Bayesian networks; on Texas and on a census table with
    one-year ages other factors, or running to convergence, do better).  With
    ``early_stopping="holdout"`` (the default) each marginal ``i`` is released
    twice, with independent noise of scale ``sqrt(2) sigma_i``; the
    measurement the model is fitted to is the mean of the two halves (noise
    variance ``sigma_i^2``, as one release).  For each of the two folds, the
    model is fitted to one half of every measurement while the loss of the
    other half is followed (``sklearn_dpsynth.pgm.estimation.HeldOutLoss``:
    with independent noise it is, in expectation, the model's squared error on
    the true marginals plus a constant).  Each fold starts from the independent
    model of its own half's 1-way measurements, so that nothing of the held-out
    half enters the fold's fit (a start from the combined measurements would
    hold the held-out noise and favour steps near the start).  The fitted
    half's ``loss / m`` at the lowest held-out loss is the fold's factor, and
    ``tau`` is the lower of the two (each half has twice the noise variance of
    the combined measurements, whose best stop comes later); where a fold's
    held-out loss was still falling when that fold converged, the estimation
    runs to ``tol`` / ``max_iter`` instead
    (``sklearn_dpsynth.pgm.estimation.holdout_stop_factor``).  That costs
    two extra estimations on the same small tree, each followed until the
    held-out loss has not improved for as long as its best step took (fits
    took 1.2 to 6.4 times the CPU time of the fixed factor 0.7 in
    ``benchmarks/README.md``, all under 7 s).  ``estimation_info_["holdout"]``
    records the factor (None: run to convergence) and each fold's.  A number
    fixes ``tau``; ``None`` runs to ``tol`` / ``max_iter``.  Every stopping
    rule reads only the noisy measurements.

    **Privacy argument.** Under add/remove-one-row neighbours, every marginal
    (contingency table) has L2 sensitivity 1.  Step 1 releases the ``d`` 1-way
    marginals with noise ``sigma_j``, costing ``sum_j 1 / (2 sigma_j^2)``; with
    equal weights ``sigma_j = sqrt(d / (2 rho_1))`` (the Gaussian mechanism on
    their concatenation, of sensitivity ``sqrt(d)``), and in general the
    ``weights`` are normalised so that the costs add up to ``rho_1``.  Each
    pair score of step 3 changes by at most 1 (the estimate is a function of
    step 1's output only), so each exponential-mechanism round at pure
    ``epsilon = sqrt(8 rho_2 / (r - 1))`` is ``rho_2 / (r - 1)``-zCDP. Step 4
    spends the rest of the budget, ``rho_3``, in the same way as step 1.  With
    ``early_stopping="holdout"`` each marginal of steps 1 and 4 is released
    twice at ``sqrt(2) sigma_i``, ``1 / (4 sigma_i^2)`` each: the two add up to
    the ``1 / (2 sigma_i^2)`` of one release, and the ledger records both
    halves.  zCDP composes additively (also adaptively), so the fit is
    ``rho``-zCDP and the ledger records exactly ``rho``; it is converted to ``(epsilon, delta)`` by
    :class:`~sklearn_dpsynth.PrivacyLedger`. Compression, the
    independent model of step 3, the choice of the stopping factor, estimation,
    generation, :meth:`marginal` and
    :meth:`score_samples` only use the noisy outputs (post-processing).  Budget
    split: ``(rho_1, rho_2, rho_3) = (3/8, 1/4, 3/8) rho`` as above (the
    selection weighs 2/3 of each measuring phase, ``SELECTION_WEIGHT``,
    which measured better than thirds); halves between steps 1
    and 4 when no private selection is needed (``fit(..., public_data=)`` given, the
    ``initial_cliques`` already connect every column, or only one pair can be
    chosen, as with two columns); everything on step 1
    when there is nothing else to measure.

    **Public data.** With ``fit(X, ..., public_data=P)``, step 3 is replaced by
    the maximum spanning tree of the pairs' mutual information *on the public
    table* ``P`` (as NIST-MST did with the contest's provisional data),
    encoded on the fitted domain and compressed as the private one: it costs
    nothing, but its privacy rests on ``P`` being public.  No other step reads
    ``P``.

    Examples
    --------
    >>> from sklearn_dpsynth.marginal.mst import MSTSynthesizer
    >>> from sklearn_dpsynth.datasets import make_bayesnet
    >>> data = make_bayesnet(n_samples=2000, n_features=4, random_state=0)
    >>> synth = MSTSynthesizer(domain=data.domain, random_state=0)
    >>> synth = synth.fit(data.frame, epsilon=1.0)
    >>> synth.sample(5).shape
    (5, 4)
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("tree_edges_",)

    _parameter_constraints: dict = {
        **BaseSynthesizer._parameter_constraints,
        "initial_cliques": [list, tuple, None],
        "weights": [dict, None],
        "compress": ["boolean"],
        "sampling": [StrOptions({"lowvar", "iid"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_iters": [Interval(Integral, 1, None, closed="left"), DEPRECATED_NAME],
        "tol": [Interval(Real, 0, None, closed="left")],
        "early_stopping": [Interval(Real, 0, None, closed="neither"),
                           StrOptions({"holdout"}), None],
        "verbose": ["verbose"],
        "model_dtype": [StrOptions({"auto", "float32", "float64"})],
    }

    def __init__(self, *, domain=None, n_bins=32, preprocessing="private",
                 preprocessing_budget=0.3, max_categories=99,
                 bin_value="uniform", initial_cliques=None,
                 weights=None, compress=True, sampling="lowvar",
                 max_iter=1000, tol=1e-4, early_stopping="holdout", verbose=0,
                 random_state=None, model_dtype="float64", max_iters="deprecated"):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.preprocessing_budget = preprocessing_budget
        self.max_categories = max_categories
        self.bin_value = bin_value
        self.initial_cliques = initial_cliques
        self.weights = weights
        self.compress = compress
        self.sampling = sampling
        self.max_iter = max_iter
        self.tol = tol
        self.early_stopping = early_stopping
        self.verbose = verbose
        self.random_state = random_state
        self.model_dtype = model_dtype
        self.max_iters = max_iters

    _renamed_params_ = {"max_iters": "max_iter"}

    # ------------------------------------------------------------------ fit
    def _fit_encoded(self, table: EncodedTable, ledger: PrivacyLedger,
                     rng: np.random.Generator, public: EncodedTable | None) -> None:
        plan = self._plan(public)
        rho = ledger.rho_remaining()
        shares = budget_shares(plan.private_selection, plan.measure_cliques,
                               selection_weight=SELECTION_WEIGHT)
        self.attributes_ = list(self.domain_.model_domain().attributes)
        log = Progress(self.verbose, "MST", stage_note=lambda: _spent_so_far(ledger))
        log.stage(f"measuring {table.n_columns} 1-way marginals")
        halves = _Halves() if self.early_stopping == "holdout" else None
        one_way, independent = self._first_round(table, ledger, rng, shares[0] * rho,
                                                 plan.weights, halves)
        compressed = table.remap(self.compression_.mappings)
        if plan.public is None and plan.components.n_components > 1:
            # one batched pass counts every candidate pair (the tree's scores
            # and, from memory, the selected edges' measurements)
            compressed = compressed.with_counts(
                _candidate_pairs(compressed.n_columns, plan.components))
        log.stage("selecting the spanning tree"
                  + (" on the public table" if plan.public is not None else ""))
        if plan.public is None:
            edges = self._private_tree(compressed, plan.components, independent, ledger, rng,
                                       shares[1] * rho)
        else:
            edges = self._public_tree(plan.public, plan.components)
        cliques = plan.initial + edges
        log.stage(f"measuring {len(cliques)} selected marginals")
        measurements = one_way + self._measure_cliques(compressed, cliques, ledger, rng,
                                                       plan.weights, halves)
        log.stage(f"estimating the model from {len(measurements)} measurements")
        self._estimate(measurements, independent, halves)
        log.stage(None)
        labels = self.domain_.columns
        self.cliques_ = [tuple(labels[c] for c in clique) for clique in cliques]
        self.tree_edges_ = [(labels[a], labels[b]) for a, b in edges]

    def _plan(self, public: EncodedTable | None) -> "_Plan":
        """Validated options, before any budget is spent."""
        initial = self._initial_positions()
        components = Components(len(self.domain_))
        for clique in initial:
            components.connect(clique)
        return _Plan(initial, self._weight_map(), public, components, len(self.domain_))

    # --------------------------------------------------- steps 1-2: 1-way
    def _first_round(self, table: EncodedTable, ledger: PrivacyLedger, rng: np.random.Generator,
                     rho: float, weights: dict, halves: "_Halves | None"
                     ) -> tuple[list[Measurement], list[np.ndarray]]:
        """Measure the 1-way marginals, compress, and fit the independent model.

        Sets ``compression_``; returns the 1-way measurements on the
        compressed codes and the independent model's counts of every column
        (the closed-form optimum of the loss of those measurements).  With
        ``halves`` given, every marginal is measured as two halves (see
        :func:`_measure`): their pairs of measurements are appended to
        ``halves.pairs`` and each half's own independent model is stored in
        ``halves.independent`` (the folds' starting points).
        """
        cliques = [(j,) for j in range(table.n_columns)]
        sigmas = weighted_sigmas(rho, [weights.get(frozenset(c), 1.0) for c in cliques])
        noisy, split = _measure(table.with_counts(cliques), cliques, sigmas, ledger, rng,
                                halves is not None)
        self.compression_ = (
            DomainCompression.from_noisy_counts(noisy, COMPRESSION_SIGMAS * sigmas)
            if self.compress else DomainCompression.identity(self.domain_.sizes))
        one_way = [self._one_way_measurement(j, y, sigma)
                   for j, (y, sigma) in enumerate(zip(noisy, sigmas))]
        if halves is not None:
            pairs = [tuple(self._one_way_measurement(j, y, np.sqrt(2.0) * sigma) for y in pair)
                     for j, (pair, sigma) in enumerate(zip(split, sigmas))]
            halves.pairs.extend(pairs)
            halves.independent = tuple(
                self._independent([pair[k] for pair in split], [pair[k] for pair in pairs])
                for k in range(2))
        return one_way, self._independent(noisy, one_way)

    def _independent(self, noisy: list[np.ndarray],
                     one_way: list[Measurement]) -> list[np.ndarray]:
        """The independent model's counts of every column: the exact optimum of the
        loss of the 1-way measurements ``one_way`` (``noisy`` on the original codes)."""
        total = estimate_total(self._model_domain(), one_way)
        return [self.compression_.project_counts(j, y, total) for j, y in enumerate(noisy)]

    def _one_way_measurement(self, column: int, noisy: np.ndarray, sigma: float) -> Measurement:
        """A noisy 1-way count vector re-expressed on the compressed codes."""
        values, scale = self.compression_.compress_measurement(column, noisy)
        query = None if scale is None else _diagonal(scale)
        return Measurement((self.attributes_[column],), values, float(sigma), query)

    def _model_domain(self) -> ModelDomain:
        """The compressed domain in the engine's form."""
        return self.domain_.model_domain(self.compression_.sizes)

    # ------------------------------------------------------ step 3: the tree
    def _private_tree(self, compressed: EncodedTable, components: Components,
                      independent: list[np.ndarray], ledger: PrivacyLedger,
                      rng: np.random.Generator, rho: float) -> list[tuple[int, int]]:
        """Spanning-tree edges chosen with the exponential mechanism."""
        if components.n_components == 1:
            return []
        pairs = _candidate_pairs(compressed.n_columns, components)
        total = float(independent[0].sum())

        def outer(pair):
            return np.outer(independent[pair[0]], independent[pair[1]]) / total

        scores = l1_pair_scores(compressed, pairs, outer)
        rho_round = rho / (components.n_components - 1)
        return private_kruskal(pairs, scores, components, rho_round, ledger, rng,
                               self.domain_.columns)

    def _public_tree(self, public: EncodedTable,
                     components: Components) -> list[tuple[int, int]]:
        """Mutual-information maximum spanning tree of the public table."""
        if components.n_components == 1:
            return []
        compressed = public.remap(self.compression_.mappings)
        pairs = _candidate_pairs(compressed.n_columns, components)
        scores = np.array([mutual_information(compressed, p) for p in pairs])
        return maximum_spanning_tree(pairs, scores, components)

    # ------------------------------------------------------- step 4: cliques
    def _measure_cliques(self, compressed: EncodedTable, cliques: list[tuple[int, ...]],
                         ledger: PrivacyLedger, rng: np.random.Generator,
                         weights: dict, halves: "_Halves | None") -> list[Measurement]:
        """Measure the selected marginals with the rest of the budget (halves: as step 1)."""
        if not cliques:
            return []
        sigmas = weighted_sigmas(ledger.rho_remaining(),
                                 [weights.get(frozenset(c), 1.0) for c in cliques])
        noisy, split = _measure(compressed.with_counts(cliques), cliques, sigmas, ledger, rng,
                                halves is not None)
        names = [tuple(self.attributes_[c] for c in clique) for clique in cliques]
        if halves is not None:
            halves.pairs.extend(tuple(Measurement(name, y, float(np.sqrt(2.0) * sigma))
                                      for y in pair)
                                for name, pair, sigma in zip(names, split, sigmas))
        return [Measurement(name, y, float(sigma))
                for name, y, sigma in zip(names, noisy, sigmas)]

    # ---------------------------------------------------- step 5: estimation
    def _estimate(self, measurements: list[Measurement], independent: list[np.ndarray],
                  halves: "_Halves | None" = None) -> None:
        """Private-PGM from the independent model; sets ``model_``."""
        start = self._start(independent)
        factor, holdout = self.early_stopping, None
        if halves is not None:
            total = float(independent[0].sum())
            factor, folds = holdout_stop_factor(
                self._model_domain(), halves.pairs, total=total,
                fold_potentials=[self._start(counts) for counts in halves.independent],
                max_iter=self._param("max_iter"), tol=self.tol, dtype=self.model_dtype)
            holdout = holdout_summary(factor, folds)
        self.model_, self.estimation_info_ = estimate(
            self._model_domain(), measurements, potentials=start, max_iter=self._param("max_iter"),
            tol=self.tol, callback=_stopping_rule(measurements, factor),
            dtype=self.model_dtype)
        if holdout is not None:
            self.estimation_info_["holdout"] = holdout

    def _start(self, independent: list[np.ndarray]) -> dict:
        """Log-potentials of an independent model (counts floored so that they are finite)."""
        return {(a,): np.log(np.maximum(counts, _WARM_START_FLOOR))
                for a, counts in zip(self.attributes_, independent)}

    # ----------------------------------------------------- parameter checks
    def _initial_positions(self) -> list[tuple[int, ...]]:
        """``initial_cliques`` as column positions, duplicates dropped."""
        out, seen = [], set()
        for clique in self.initial_cliques or []:
            if not isinstance(clique, (list, tuple)):
                raise ValueError("initial_cliques must be a list of tuples of column names, "
                                 f"got an entry {clique!r}.")
            positions = self._positions(clique, "initial_cliques")
            if frozenset(positions) not in seen:
                seen.add(frozenset(positions))
                out.append(positions)
        return out

    def _weight_map(self) -> dict[frozenset, float]:
        """``weights`` keyed by frozensets of column positions."""
        out = {}
        for key, weight in (self.weights or {}).items():
            columns = key if isinstance(key, tuple) else (key,)
            positions = self._positions(columns, "weights")
            if (isinstance(weight, bool) or not isinstance(weight, (Real, np.number))
                    or not np.isfinite(weight) or weight <= 0):
                raise ValueError(f"weights: the weight of {key!r} must be a finite number "
                                 f"> 0, got {weight!r}.")
            out[frozenset(positions)] = float(weight)
        return out


@dataclass
class _Plan:
    """Validated options of a fit."""

    initial: list
    weights: dict
    public: EncodedTable | None
    components: Components
    n_columns: int

    @property
    def private_selection(self) -> bool:
        """Whether the tree needs private choices (no public data, a real choice)."""
        if self.public is not None:
            return False
        sizes = np.bincount([self.components.find(j) for j in range(self.n_columns)])
        n_candidates = (self.n_columns**2 - int(np.sum(sizes**2))) // 2
        return n_candidates > 1

    @property
    def measure_cliques(self) -> bool:
        """Whether step 4 measures anything."""
        return bool(self.initial) or self.components.n_components > 1


@dataclass
class _Halves:
    """The noise split of ``early_stopping="holdout"``: every marginal's two halves."""

    #: ``(first, second)`` measurements of every marginal, in measurement order.
    pairs: list = field(default_factory=list)
    #: Each half's own independent model (counts per column): the folds' starts.
    independent: tuple = ()


def _measure(table: EncodedTable, cliques: list, sigmas: np.ndarray, ledger: PrivacyLedger,
             rng: np.random.Generator, split: bool) -> tuple[list[np.ndarray], list | None]:
    """Noisy marginals at ``sigmas``: one release each, or the mean of two halves.

    With ``split``, every marginal is released twice at ``sqrt(2) sigma``
    (:func:`~sklearn_dpsynth.marginal.measure.measure_marginal_halves`, the
    same zCDP cost); the mean of the halves, of noise variance ``sigma^2``,
    stands for the marginal and the halves are returned as well.
    """
    if not split:
        return measure_marginals(table, cliques, sigmas, ledger, rng), None
    pairs = measure_marginal_halves(table, cliques, sigmas, ledger, rng)
    return [0.5 * (a + b) for a, b in pairs], pairs


def _stopping_rule(measurements: list[Measurement], factor: float | None) -> Callable | None:
    """Discrepancy-principle callback: loss at most ``factor`` times its expected value."""
    if not factor:
        return None
    threshold = factor * expected_loss(measurements)
    return lambda iteration, loss: loss <= threshold


def _spent_so_far(ledger: PrivacyLedger) -> str:
    """The stage note of the verbose log: the epsilon the ledger has spent so far."""
    spent = ledger.spent()[0] if len(ledger.entries) else 0.0
    return f"epsilon spent so far {spent:.4g}"


def _candidate_pairs(n_columns: int, components: Components) -> list[tuple[int, int]]:
    """Column pairs that join two different components (public: the structure only)."""
    pairs = all_pairs(n_columns)
    return [p for p, apart in zip(pairs, components.apart(pairs)) if apart]


def _diagonal(values: np.ndarray) -> np.ndarray | sp.csr_matrix:
    """Diagonal query matrix: dense when small (cheaper to apply), else sparse."""
    if values.size <= _DENSE_QUERY_MAX:
        return np.diag(values)
    return sp.diags(values, format="csr")
