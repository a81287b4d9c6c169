"""Private Evolution (PE) for tables, with pluggable generators."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._docstrings import fill_doc
from .._progress import Progress
from ..marginal.workload import workload_positions
from ..privacy import PrivacyLedger, gaussian_sigma, noisy_row_count
from ..public.base import (DEFAULT_SMOOTHING, SMOOTHING_CONSTRAINT, PublicDataSynthesizer,
                           RecordsModelMixin, WeightedRecords, draw_indices)
from ._voting import noisy_vote_distribution, vote_histogram
from .generators import make_generator

__all__ = ["PrivateEvolutionSynthesizer", "round_shares", "code_positions"]

#: ``(rounds, candidate_ratio)`` when left to None: one round and two
#: candidates per row for generators that start from good rows (Swanberg et
#: al.'s best setting), many rounds over few candidates for the mutation
#: generator, which must evolve uniform rows (measured on
#: ``adult_public_split``, see the user guide).
DEFAULT_ROUNDS = {"start": (1, 2.0), "mutation": (30, 0.1)}

#: Varied copies of every elite in a round of ``selection="elite"`` (Tab-PE's 3).
ELITE_CHILDREN = 3

#: Share of the rounds that draw parents from the votes before ``selection="elite"``
#: switches to keeping the best-voted candidates (Tab-PE: 5 of 30).
ELITE_WARMUP = 1 / 6


def code_positions(domain: Any) -> list[np.ndarray | None]:
    """Positions in ``[0, 1]`` of the codes of every numeric column (public).

    Parameters
    ----------
    domain : Domain
        The fitted domain.

    Returns
    -------
    list of (ndarray or None)
        Per column: None unless its kind is ``"numeric"``; then bin ``b`` of
        ``B`` sits at ``b / (B - 1)`` (0 when ``B = 1``), a point code at the
        position of the bin that holds the point, the missing code at
        ``nan``.  Only the domain's edges and points are read.
    """
    out: list[np.ndarray | None] = []
    for spec in domain:
        if spec.kind != "numeric":
            out.append(None)
            continue
        n_bins = spec.n_bins
        scale = max(n_bins - 1, 1)
        points = np.asarray(spec.points if spec.points is not None else [], dtype=float)
        point_bins = np.clip(np.searchsorted(spec.edges, points, side="right") - 1, 0,
                             n_bins - 1)
        positions = np.concatenate([np.arange(n_bins), point_bins]) / scale
        if spec.missing:
            positions = np.append(positions, np.nan)
        out.append(positions.astype(float))
    return out


def round_shares(schedule: Any, rounds: int) -> np.ndarray:
    """Share of the rounds' budget spent in each round.

    Parameters
    ----------
    schedule : {"increasing", "even", "decreasing"} or sequence of float
        ``"increasing"``: round ``t`` (1-based) gets a share proportional to
        ``t``; ``"even"``: equal shares; ``"decreasing"``: proportional to
        ``rounds + 1 - t``; a sequence: ``rounds`` positive weights.
    rounds : int
        Number of rounds.

    Returns
    -------
    ndarray of shape (rounds,)
        Positive, summing to 1.
    """
    steps = np.arange(1, rounds + 1, dtype=float)
    if isinstance(schedule, str):
        weights = {"increasing": steps, "even": np.ones(rounds),
                   "decreasing": steps[::-1]}.get(schedule)
        if weights is None:
            raise ValueError("schedule must be 'increasing', 'even', 'decreasing' or a list "
                             f"of weights; got {schedule!r}.")
    else:
        weights = np.asarray(schedule, dtype=float)
        if weights.shape != (rounds,) or not np.all(np.isfinite(weights) & (weights > 0)):
            raise ValueError(f"schedule: need {rounds} positive weights (one per round), got "
                             f"{list(np.ravel(schedule))}.")
    return weights / weights.sum()


@fill_doc
class PrivateEvolutionSynthesizer(RecordsModelMixin, PublicDataSynthesizer):
    """Private Evolution for tables: private votes steer a public generator.

    Algorithm 1 of Swanberg, McKenna, Roth, Cheu & Kairouz ("Is API access
    to LLMs useful for generating private synthetic tabular data?"), after
    Lin et al.'s Private Evolution.  With ``N`` the number of synthetic rows
    (``n_synthetic``, or a noisy count) and ``T = rounds``:

    1. ``S_1 = random_api(candidate_ratio * N)`` from the generator;
    2. in round ``t`` every private row votes for its nearest candidate under
       the workload-aware distance ``Wdist(x, c) = sum_M w_M [x_M != c_M]``
       (the number of workload marginals on which ``x`` and ``c`` fall in
       different cells; with ``distance="scaled_l1"`` numeric columns are
       compared by scaled L1 within the categorical cells); the vote
       histogram gets Gaussian noise at the
       round's budget, is clipped at 0 and normalised;
    3. if ``t < T``, ``|S_t|`` parents are drawn from that distribution
       (with replacement) and ``variation_api(parents)`` is ``S_{t+1}``;
       with ``selection="elite"`` (Tab-PE's refinement), from round
       ``ceil(T / 6)`` on, the quarter of ``S_t`` with the most noisy votes
       is kept instead and the rest of ``S_{t+1}`` is three variations of
       each kept row (measured worse here, so not the default);
    4. the model is the last round's distribution over ``S_T``: ``sample``
       draws from it (the paper's ``N`` elites are ``sample(N)``).

    The paper found that one round was its best setting, that an increasing
    budget across rounds beats even or decreasing ones, and that more
    candidates than ``N`` help; ``rounds=1``, ``schedule="increasing"`` and
    ``candidate_ratio=2`` are the defaults when the generator starts from
    good rows (``public_data``).  Without public data the defaults follow
    Tab-PE (Private Evolution for tables, Tran, Backurs, Lin et al., ICML
    2026; DPSDA's ``pe/api/tabular``): the mutation generator
    (:class:`~sklearn_dpsynth.evolution.MutationGenerator`) evolves uniform
    rows over 30 rounds of 0.1 candidates per row, mutating cells at a rate
    that falls from 0.5 to 0.01 (``power=0.2``); parents are drawn from
    the votes.

    Parameters
    ----------
    %(common_parameters)s
    generator : str, RowGenerator or callable, default="auto"
        ``"auto"``: ``"public"`` when ``fit`` gets ``public_data``, else
        ``"uniform"``; ``"uniform"`` (uniform rows, variations redraw
        columns uniformly), ``"public"`` (bootstrap of ``public_data``,
        variations from its 1-way marginals), a :class:`~sklearn_dpsynth.evolution.SynthesizerGenerator`
        wrapping a fitted synthesizer, any object with ``random_rows(n, rng)``
        and ``variations(rows, rng)`` returning codes, or a factory
        ``factory(domain, public)`` returning one (see
        ``sklearn_dpsynth.evolution.generators``).  A generator that
        cannot see ``public_data`` (``"uniform"``, an object, a fitted
        synthesizer) warns when ``fit`` gets one: it would be ignored.
    workload : list, default=None
        Marginals of the distance: entries ``(columns, weight)`` or bare
        tuples of column names; ``None`` is every 2-way marginal of at most
        10,000 cells.
    distance : {"workload", "scaled_l1"}, default="workload"
        ``"workload"``: a marginal counts 1 when the records fall in
        different cells.  ``"scaled_l1"``: the paper's variant for numeric
        columns -- within the cell of the marginal's categorical columns, the
        mean scaled L1 distance between the numeric columns' bin positions
        (bin ``b`` of ``B`` at ``b / (B - 1)``, a point code at its bin, a
        missing value 1 away from any present one); see
        :func:`~sklearn_dpsynth.evolution.workload_distance`.  Only columns
        whose domain kind is ``"numeric"`` are ordered; on other tables both
        choices are the same distance.
    rounds : int or None, default=None
        Number of voting rounds ``T``.  None: 30 with the mutation
        generator (``"mutation"``, or ``"auto"`` without ``public_data``),
        else 1.
    schedule : {"increasing", "even", "decreasing"} or list of float, default="increasing"
        How the rounds share the budget (see :func:`round_shares`).
    n_synthetic : int, default=None
        ``N``; None measures the row count with ``count_share`` of the
        budget.
    candidate_ratio : float or None, default=None
        Candidates per synthetic row.  None: 0.1 with the mutation
        generator (a few thousand candidates, so that each gets enough
        votes to rise above the noise), else 2.  A fit refuses
        (ValueError) more candidate cells (rows times columns) than
        ``max_sample_cells`` (``2**28``), the limit of one ``sample`` call.
    threshold : float, default=0.0
        Noisy votes below ``threshold`` noise standard deviations are set to
        0 before normalising (post-processing).  0 is the paper's clipping;
        with many candidates the positive noise of empty bins otherwise
        carries much of the mass (Lin et al.'s PE uses such a threshold).
    selection : {"sample", "elite"}, default="sample"
        How a round's candidates become the next round's parents.
        ``"sample"``: ``|S_t|`` parents drawn from the noisy-vote
        distribution (Swanberg et al.).  ``"elite"`` (Tab-PE's ``"rank"``
        populations): the first ``ceil(T / 6)`` rounds sample; later rounds
        keep the quarter of the candidates with the most noisy votes (ties
        by public randomness) and fill the rest with variations of them.
        On coded Adult and on a chain-structured table ``"elite"`` was
        worse (the model is the last round's vote distribution; Tab-PE
        instead outputs its elites with equal weights; see
        ``benchmarks/README.md``).  Post-processing: no budget.
    count_share : float in (0, 1), default=0.02
        Share of the budget spent on the row count when ``n_synthetic`` is
        None.
    n_resample : int, default=1
        Columns redrawn per variation by the offline generators.
    smoothing : float in [0, 1), default=0.05
        ``lam``, the weight of the independent base measure in the model
        (see Likelihood): ``sample`` draws that share of rows from it.
        ``0`` keeps the candidates alone (rows outside them score ``-inf``).
    verbose : int, default=0
        0 is silent; 1 (or more) prints every round.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the generator, the noise, the tie-breaking and sampling.
        %(seed_warning)s

    Attributes
    ----------
    domain_ : Domain
    records_ : WeightedRecords
        The model: the last candidates and their noisy-vote probabilities,
        smoothed by the same distribution's 1-way marginals.
    n_synthetic_ : int
        ``N`` as used.
    n_records_ : float
        DP estimate of the training row count.
    rounds_ : int
        ``T`` as used.
    candidate_ratio_ : float
        Candidates per synthetic row as used.
    history_ : list of dict
        Per round: ``round``, ``rho``, ``sigma``, ``n_candidates``,
        ``n_distinct`` (distinct candidate rows), ``kept`` (candidates with
        positive noisy votes).
    privacy_ledger_ : PrivacyLedger
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    **Privacy argument.** Under add/remove-one-row neighbours the row count
    changes by 1, and each row casts exactly one vote, whose target depends
    on that row and on the candidates only: one row changes one bin of the
    vote histogram by 1 (L2 sensitivity 1).  Each release is the Gaussian
    mechanism, ``1 / (2 sigma_t^2)``-zCDP (``ledger.gaussian``).  This holds
    for either ``distance``: the distance is a fixed function of two records
    and of the public domain (the bin positions come from the declared or
    already-paid-for edges, never from the private rows), so it only decides
    *which* bin a row's single vote goes to.  The
    candidates of round ``t`` are a function of the generator (which never
    sees private data), the public table, the seeded randomness and earlier
    noisy releases; the tie-breaking order is public randomness.  zCDP
    composes additively under such adaptive choices, the last round spends
    exactly what is left, and the ledger totals the budget.  Clipping,
    normalising, drawing parents, ranking the noisy votes to keep elites,
    sampling and scoring are post-processing.
    A generator wrapping a synthesizer fitted on *private* data must have
    its own budget accounted for separately.

    **Likelihood.** The model is the mixture
    ``(1 - lam) * p_candidates + lam * prod_j q_j`` of the last round's
    noisy-vote distribution over its candidates and an independent base
    measure, ``q_j = (1 - lam) m_j + lam / k_j`` with ``m_j`` the 1-way
    marginal of column ``j`` under the vote distribution (post-processing
    of the noisy votes: no budget) and ``k_j`` its number of codes.  Every
    row of the domain has a positive probability, so :meth:`score` is
    finite on held-out rows; :meth:`score_samples` is exact for the
    mixture and :meth:`sample` draws from it.

    **Distance.** Complete ``k``-way workloads (and 1-way ones with any
    weights) use a one-hot matrix product; other workloads compute the
    definition marginal by marginal, which costs ``len(workload)`` times
    more.  With ``distance="scaled_l1"`` and numeric columns, 1-way and
    complete 2-way workloads still use matrix products (two per block of
    rows); complete ``k``-way workloads with ``k > 2`` use the definition.

    Examples
    --------
    >>> from sklearn_dpsynth.datasets import make_bayesnet
    >>> from sklearn_dpsynth.evolution import PrivateEvolutionSynthesizer
    >>> data = make_bayesnet(n_samples=2000, n_features=4, random_state=0)
    >>> synth = PrivateEvolutionSynthesizer(domain=data.domain, random_state=0)
    >>> synth = synth.fit(data.frame, epsilon=1.0)
    >>> synth.sample(5).shape
    (5, 4)
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("history_", "n_synthetic_", "rounds_", "candidate_ratio_")

    _parameter_constraints: dict = {
        **PublicDataSynthesizer._parameter_constraints,
        "generator": [str, callable, object],
        "workload": [list, tuple, None],
        "distance": [StrOptions({"workload", "scaled_l1"})],
        "rounds": [Interval(Integral, 1, None, closed="left"), None],
        "schedule": [StrOptions({"increasing", "even", "decreasing"}), list, tuple],
        "n_synthetic": [Interval(Integral, 1, None, closed="left"), None],
        "candidate_ratio": [Interval(Real, 0, None, closed="neither"), None],
        "threshold": [Interval(Real, 0, None, closed="left")],
        "selection": [StrOptions({"sample", "elite"})],
        "count_share": [Interval(Real, 0, 1, closed="neither")],
        "n_resample": [Interval(Integral, 1, None, closed="left")],
        "smoothing": [SMOOTHING_CONSTRAINT],
        "verbose": ["verbose"],
    }

    def __init__(self, *, domain=None, n_bins=32, preprocessing="private",
                 preprocessing_budget=0.1, max_categories=99, bin_value="uniform",
                 generator="auto",
                 workload=None, distance="workload", rounds=None, schedule="increasing", n_synthetic=None,
                 candidate_ratio=None, threshold=0.0, selection="sample", count_share=0.02,
                 n_resample=1,
                 smoothing=DEFAULT_SMOOTHING, verbose=0, random_state=None):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.preprocessing_budget = preprocessing_budget
        self.max_categories = max_categories
        self.bin_value = bin_value
        self.generator = generator
        self.workload = workload
        self.distance = distance
        self.rounds = rounds
        self.schedule = schedule
        self.n_synthetic = n_synthetic
        self.candidate_ratio = candidate_ratio
        self.threshold = threshold
        self.selection = selection
        self.count_share = count_share
        self.n_resample = n_resample
        self.smoothing = smoothing
        self.verbose = verbose
        self.random_state = random_state

    def _fit_encoded(self, table, ledger: PrivacyLedger, rng: np.random.Generator,
                     public) -> None:
        workload = workload_positions(self.workload, table.columns, table.sizes)
        self.rounds_, self.candidate_ratio_ = self._round_settings(public)
        shares = round_shares(self.schedule, self.rounds_)
        positions = (code_positions(self.domain_) if self.distance == "scaled_l1" else None)
        generator = make_generator(self.generator, self.domain_,
                                   None if public is None else public.to_numpy(),
                                   self.n_resample, self.rounds_)
        if public is not None and not _sees_public(self.generator):
            warnings.warn(
                f"public_data is ignored: generator={_describe(self.generator)} does not use "
                "it. Use generator='auto' or 'public' to start from the public rows, or a "
                "factory(domain, public).", UserWarning, stacklevel=4)
        self._n_candidates(self.n_synthetic or 1, len(table.sizes))  # before any spending
        n_synthetic, counted = self._synthetic_size(table, ledger, rng)
        n_candidates = self._n_candidates(n_synthetic, len(table.sizes))
        rho_rounds = ledger.rho_remaining()
        candidates = self._checked(generator.random_rows(n_candidates, rng), n_candidates,
                                   table.sizes, "random_rows")
        elite_from = self._elite_from()
        self.history_ = []
        for t in range(self.rounds_):
            last = t == self.rounds_ - 1
            rho = ledger.rho_remaining() if last else shares[t] * rho_rounds
            priority = rng.random(candidates.shape[0])
            votes = vote_histogram(table, candidates, workload, priority, positions=positions)
            probs, noisy = noisy_vote_distribution(
                votes, rho, ledger, rng, target=f"PE round {t + 1}: nearest-candidate votes",
                threshold=self.threshold)
            self._record(t, rho, ledger, candidates, probs)
            if not last:
                parents = (_best_voted(noisy, priority, n_candidates // (1 + ELITE_CHILDREN))
                           if t + 1 >= elite_from and n_candidates > 1 else None)
                candidates = self._next_candidates(candidates, probs, parents, generator,
                                                   n_candidates, table.sizes, rng)
        self.records_ = WeightedRecords(candidates, probs, smoothing=self.smoothing,
                                        sizes=table.sizes)
        self.n_synthetic_ = n_synthetic
        self.n_records_ = float(n_synthetic) if counted else max(float(noisy.sum()), 1.0)

    def _next_candidates(self, candidates: np.ndarray, probs: np.ndarray,
                         elites: np.ndarray | None, generator: Any, n_candidates: int,
                         sizes: list[int], rng: np.random.Generator) -> np.ndarray:
        """The next round's candidates (post-processing of the noisy votes).

        ``elites`` None: ``n_candidates`` parents drawn from ``probs`` and
        varied.  Else the elites are kept and the other
        ``n_candidates - len(elites)`` rows are variations of the elites in
        turn (``ELITE_CHILDREN`` of each when the counts divide), from one
        ``variations`` call.
        """
        if elites is None:
            parents = candidates[draw_indices(probs, n_candidates, rng)]
            return self._checked(generator.variations(parents, rng), n_candidates, sizes,
                                 "variations")
        kept = candidates[elites]
        parents = kept[np.arange(n_candidates - kept.shape[0]) % kept.shape[0]]
        children = self._checked(generator.variations(parents, rng), parents.shape[0], sizes,
                                 "variations")
        return np.concatenate([kept, children])

    def _elite_from(self) -> int:
        """First round (1-based) after which elites are kept; ``rounds_`` means never."""
        if self.selection == "sample" or self.rounds_ < 2:
            return self.rounds_
        return max(int(math.ceil(ELITE_WARMUP * self.rounds_)), 1)

    def _mutating(self, public) -> bool:
        """Whether the generator is the mutation generator (by name)."""
        name = self.generator if isinstance(self.generator, str) else None
        return name == "mutation" or (name == "auto" and public is None)

    def _round_settings(self, public) -> tuple[int, float]:
        """``rounds`` and ``candidate_ratio``, their None resolved (see DEFAULT_ROUNDS)."""
        rounds, ratio = DEFAULT_ROUNDS["mutation" if self._mutating(public) else "start"]
        return (rounds if self.rounds is None else int(self.rounds),
                ratio if self.candidate_ratio is None else float(self.candidate_ratio))

    def _synthetic_size(self, table, ledger: PrivacyLedger,
                        rng: np.random.Generator) -> tuple[int, bool]:
        """``N``: ``n_synthetic``, or the row count measured with ``count_share``."""
        if self.n_synthetic is not None:
            return int(self.n_synthetic), False
        rho = self.count_share * ledger.rho_remaining()
        return max(int(noisy_row_count(ledger, table.n_rows, rho, rng)), 1), True

    def _n_candidates(self, n_synthetic: int, n_columns: int) -> int:
        """``candidate_ratio * N`` rows, refused above ``max_sample_cells`` cells.

        The check runs before any candidate is drawn, with a ValueError
        naming ``candidate_ratio`` and ``n_synthetic`` (``N`` is a noisy
        count or the parameter: the check reads no private data).
        """
        n_candidates = max(int(math.ceil(self.candidate_ratio_ * n_synthetic)), 1)
        self._check_cells(n_candidates, n_columns, f"candidate_ratio={self.candidate_ratio_:g} "
                          f"times n_synthetic={n_synthetic}",
                          "lower candidate_ratio or set a smaller n_synthetic")
        return n_candidates

    @staticmethod
    def _checked(rows: Any, n_rows: int, sizes: list[int], call: str) -> np.ndarray:
        """A generator's output as codes, with a clear error when it is not."""
        rows = np.asarray(rows)
        if rows.shape != (n_rows, len(sizes)) or not np.issubdtype(rows.dtype, np.integer):
            raise ValueError(f"generator.{call} must return integer codes of shape "
                             f"({n_rows}, {len(sizes)}), got {rows.dtype} {rows.shape}.")
        bad = [j for j, k in enumerate(sizes) if rows[:, j].min() < 0 or rows[:, j].max() >= k]
        if bad:
            raise ValueError(f"generator.{call} returned codes outside the domain in "
                             f"column(s) {bad}.")
        return rows.astype(np.int64)

    def _record(self, t: int, rho: float, ledger: PrivacyLedger, candidates: np.ndarray,
                probs: np.ndarray) -> None:
        info = {"round": t + 1, "rho": rho, "sigma": gaussian_sigma(rho),
                "n_candidates": int(candidates.shape[0]),
                "n_distinct": int(np.unique(candidates, axis=0).shape[0]),
                "kept": int(np.count_nonzero(probs))}
        self.history_.append(info)
        Progress(self.verbose).line(
            f"[PE round {info['round']}: {info['n_candidates']} candidates "
            f"({info['n_distinct']} distinct), {info['kept']} with votes]")


def _best_voted(noisy: np.ndarray, priority: np.ndarray, n_best: int) -> np.ndarray:
    """Indices of the ``n_best`` largest noisy votes (ties by the public ``priority``)."""
    order = np.lexsort((priority, -noisy))
    return order[:max(n_best, 1)]


def _sees_public(spec: Any) -> bool:
    """Whether a ``generator`` spec reads the public rows (a name or a factory does)."""
    if isinstance(spec, str):
        return spec in ("auto", "public")
    is_object = hasattr(spec, "_sample_encoded") or (
        hasattr(spec, "random_rows") and not isinstance(spec, type))
    return callable(spec) and not is_object


def _describe(spec: Any) -> str:
    return repr(spec) if isinstance(spec, str) else f"a {type(spec).__name__}"
