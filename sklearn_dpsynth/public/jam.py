"""JAM: joint selection of a marginal and of where to take it from (private or public)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval

from .._docstrings import fill_doc
from .._validation import DEPRECATED_NAME
from ..marginal import PGMMixin
from ..marginal.candidates import CandidateScorer
from ..marginal.compression import DomainCompression
from ..marginal.measure import describe
from ..marginal.workload import candidate_weights, n_cells, workload_positions
from ..pgm import GraphicalModel, Measurement, estimate
from ..privacy import PrivacyLedger, gaussian_sigma, noisy_row_count
from .base import PublicDataSynthesizer
from .pmw import _progress

__all__ = ["JAMSynthesizer"]

#: Share of a round's budget spent on the measurement (the rest selects).
MEASURE_SHARE = 0.9

#: Rounds planned per column when ``rounds`` is None.
ROUNDS_PER_COLUMN = 1


@fill_doc
class JAMSynthesizer(PGMMixin, PublicDataSynthesizer):
    """JAM: choose each round a marginal *and* whether to measure it or take it from public data.

    After Fuentes, Mullins, McKenna, Miklau & Sheldon ("Joint selection:
    adaptively incorporating public information for private synthetic
    data", AISTATS 2024).  An AIM-style loop over the workload's marginals
    (and their subsets) in which every candidate ``C`` comes with two
    options, scored against the current Private-PGM model ``mu``:

    * *private*: measure ``C`` with the Gaussian mechanism at the round's
      ``sigma``; score ``w_C (||M_C(D) - mu_C||_1 - sqrt(2/pi) sigma n_C)``
      (the model's error minus the expected error of the measurement);
    * *public*: take ``C`` from the public data, scaled to the noisy row
      count ``N``: ``y_C = N * P_pub(C)``; score
      ``w_C (||M_C(D) - mu_C||_1 - ||M_C(D) - y_C||_1)`` (the model's error
      minus the public marginal's own error).  Free but biased; each
      candidate's public option is used at most once.

    With ``rho`` the zCDP budget left after domain learning and ``T``
    rounds (``rounds``; default ``d``, the number of columns): the row count
    is measured first at ``0.9 rho / (T + 1)``; round ``t`` gets an equal
    share ``r_t = rho_left / (T - t + 1)`` of the budget left, spends
    ``0.1 r_t`` on an exponential-mechanism selection among all options and,
    when a private option wins, ``0.9 r_t`` on the measurement (a public
    choice leaves it to later rounds).  The last round offers private
    options only and spends all that is left.  A public answer enters the
    estimation as a measurement with the round's ``sigma``.  The model may
    grow to ``max_model_size * t / T`` MiB by round ``t``.  The model is
    re-estimated after each round (warm-started Private-PGM) and once more
    at the end.  Without ``public_data`` the public option proposes uniform
    marginals ("JAM(uniform)").

    Parameters
    ----------
    %(common_parameters)s
    workload : list, default=None
        Entries ``(columns, weight)`` or bare tuples of column names;
        ``None`` is every 2-way marginal of at most 10,000 cells.  The
        candidates are its marginals and their subsets, weighted as in AIM.
    rounds : int, default=None
        Rounds ``T`` (``n_columns`` when None).
    max_model_size : float, default=80
        Largest final model (MiB of log-potentials); by round ``t`` the
        model may use ``t / T`` of it.
    max_iter : int, default=100
        Mirror-descent steps of each round's re-estimation.
    final_max_iter : int, default=500
        Mirror-descent steps of the final estimation.
    tol : float, default=1e-6
        Relative loss decrease at which an estimation stops.
    verbose : int, default=0
        0 is silent; 1 (or more) prints every round.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the noise, the selections and sampling.
        %(seed_warning)s
    %(max_iters_deprecated)s

    Attributes
    ----------
    domain_ : Domain
    model_ : GraphicalModel
        The fitted model (attribute ``attributes_[j]`` is column ``j``).
    attributes_ : list of str
    history_ : list of dict
        One dict per round: ``round``, ``clique`` (column names),
        ``source`` (``"private"`` or ``"public"``), ``sigma``,
        ``selection_rho``, ``measurement_rho`` (0 for a public choice).
    n_public_ : int
        Rounds that took a public marginal.
    privacy_ledger_ : PrivacyLedger
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    **Privacy argument.** Under add/remove-one-row neighbours the row count
    and every marginal have L2 sensitivity 1 (Gaussian releases cost
    ``1 / (2 sigma^2)``).  The model, ``N`` and the public marginals are
    fixed given earlier releases and public data, so a private option's
    score changes by at most ``w_C`` and a public option's, a difference of
    two L1 distances to ``M_C(D)``, by at most ``2 w_C``; the selection uses
    sensitivity ``Delta = max w_C`` over the eligible candidates, doubled
    while any public option is eligible, and the exponential mechanism at
    zCDP cost ``rho_sel`` (``ledger.select``) is ``rho_sel``-zCDP.  Which
    options are eligible depends only on earlier releases and public
    quantities.  zCDP composes additively under adaptive choices; the last
    round spends exactly what is left, so the ledger totals ``rho``.
    Estimation, sampling, :meth:`marginal` and scoring are post-processing;
    the privacy of the output rests on ``public_data`` being public.

    Examples
    --------
    >>> from sklearn_dpsynth.datasets import make_bayesnet
    >>> from sklearn_dpsynth.public import JAMSynthesizer
    >>> data = make_bayesnet(n_samples=3000, n_features=4, random_state=0)
    >>> public = make_bayesnet(n_samples=500, n_features=4, random_state=0).frame
    >>> synth = JAMSynthesizer(domain=data.domain, rounds=6, random_state=0)
    >>> synth = synth.fit(data.frame, epsilon=1.0, public_data=public)
    >>> synth.sample(5).shape
    (5, 4)
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("history_", "n_public_")

    _renamed_params_ = {"max_iters": "max_iter", "final_max_iters": "final_max_iter"}

    #: Generator of :meth:`sample` (MST's ``sampling`` parameter; fixed here).
    sampling = "lowvar"

    _parameter_constraints: dict = {
        **PublicDataSynthesizer._parameter_constraints,
        "workload": [list, tuple, None],
        "rounds": [Interval(Integral, 1, None, closed="left"), None],
        "max_model_size": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "final_max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_iters": [Interval(Integral, 1, None, closed="left"), DEPRECATED_NAME],
        "final_max_iters": [Interval(Integral, 1, None, closed="left"), DEPRECATED_NAME],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, *, domain=None, n_bins=32, preprocessing="private",
                 preprocessing_budget=0.1, max_categories=99, bin_value="uniform",
                 workload=None, rounds=None,
                 max_model_size=80.0, max_iter=100, final_max_iter=500, tol=1e-6,
                 verbose=0, random_state=None, max_iters="deprecated",
                 final_max_iters="deprecated"):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.preprocessing_budget = preprocessing_budget
        self.max_categories = max_categories
        self.bin_value = bin_value
        self.workload = workload
        self.rounds = rounds
        self.max_model_size = max_model_size
        self.max_iter = max_iter
        self.final_max_iter = final_max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.max_iters = max_iters
        self.final_max_iters = final_max_iters

    def _fit_encoded(self, table, ledger: PrivacyLedger, rng: np.random.Generator,
                     public) -> None:
        self.attributes_ = list(self.domain_.model_domain().attributes)
        self.compression_ = DomainCompression.identity(self.domain_.sizes)
        workload = workload_positions(self.workload, table.columns, table.sizes)
        weights = candidate_weights(workload)
        rounds = self.rounds if self.rounds is not None else ROUNDS_PER_COLUMN * len(table.sizes)
        run = _JamRun(table, ledger, rng, CandidateScorer(table, weights, self.attributes_),
                      _public_shares(public, weights, table.sizes),
                      self.domain_.model_domain(), max_iters=self._param("max_iter"), tol=self.tol,
                      verbose=self.verbose)
        run.start(ledger.rho_remaining() / (rounds + 1))
        run.loop(rounds, self.max_model_size)
        self.model_, _ = run.refit(self._param("final_max_iter"))
        self.history_ = run.history
        self.n_public_ = sum(1 for h in run.history if h["source"] == "public")


def _public_shares(public: Any, candidates: dict, sizes: list[int]) -> dict:
    """Public (or uniform) distribution of every candidate marginal, flattened."""
    out = {}
    for marginal in candidates:
        if public is None:
            cells = n_cells(sizes, marginal)
            out[marginal] = np.full(cells, 1.0 / cells)
        else:
            counts = public.counts(marginal).ravel()
            out[marginal] = counts / max(counts.sum(), 1.0)
    return out


class _JamRun:
    """State of one JAM fit."""

    def __init__(self, table: Any, ledger: PrivacyLedger, rng: np.random.Generator,
                 scorer: CandidateScorer, public: dict, domain: Any, *, max_iters: int,
                 tol: float, verbose: bool) -> None:
        self.table = table
        self.ledger = ledger
        self.rng = rng
        self.scorer = scorer
        self.weights = scorer.weights
        self.public = public
        self.public_left = set(scorer.weights)
        self.names = scorer.names
        self.domain = domain
        self.max_iters = max_iters
        self.tol = tol
        self.verbose = verbose
        self.measurements: list[Measurement] = []
        self.history: list[dict] = []
        self.model: GraphicalModel | None = None

    # ------------------------------------------------------------ steps
    def start(self, rho_round: float) -> None:
        """Measure the row count (a round's measurement share) and fit a uniform model."""
        rho = MEASURE_SHARE * rho_round
        noisy = np.array([noisy_row_count(self.ledger, self.table.n_rows, rho, self.rng)])
        sigma = gaussian_sigma(rho)
        self.n_hat = max(float(noisy[0]), 1.0)
        query = np.ones((1, self.domain[self.names[0]]))
        self.measurements.append(Measurement((self.names[0],), noisy, sigma, query))
        self.model, _ = self.refit(self.max_iters)

    def refit(self, max_iters: int) -> tuple[GraphicalModel, dict]:
        """Private-PGM on every measurement so far, warm-started."""
        cliques = [(a,) for a in self.names]
        if self.model is not None:
            cliques += list(self.model.cliques)
        return estimate(self.domain, self.measurements, cliques=cliques, potentials=self.model,
                        max_iter=max_iters, tol=self.tol)

    def loop(self, rounds: int, max_model_size: float) -> None:
        """``rounds`` rounds, each with an equal share of the budget left."""
        for round_ in range(1, rounds + 1):
            rho = self.ledger.rho_remaining() / (rounds - round_ + 1)
            last = round_ == rounds
            info = self.round(round_, self.ledger.rho_remaining() if last else rho,
                              allow_public=not last, size_limit=max_model_size * round_ / rounds)
            self.history.append(info)
            _progress(self.verbose,
                      f"JAM round {round_}/{rounds}: {info['source']} {info['clique']}")

    def round(self, round_: int, rho: float, allow_public: bool, size_limit: float) -> dict:
        """Select an option, measure or take the public answer, re-estimate."""
        options, scores, sensitivity = self.options(MEASURE_SHARE * rho, allow_public,
                                                    size_limit)
        pick = self.ledger.select(scores, rho=(1.0 - MEASURE_SHARE) * rho, rng=self.rng,
                                  sensitivity=sensitivity,
                                  target=f"JAM round {round_}: marginal and source")
        marginal, source = options[pick]
        sigma = gaussian_sigma(MEASURE_SHARE * rho)
        if source == "private":
            true = self.scorer.true_counts(marginal)
            noisy = self.ledger.gaussian(true, sigma=sigma, rng=self.rng,
                                         target=describe(self.table.columns, marginal),
                                         n_cells=true.size)
        else:
            noisy = self.n_hat * self.public[marginal]
            self.public_left.discard(marginal)
        self.measurements.append(Measurement(self.scorer.clique(marginal), noisy, sigma))
        self.model, _ = self.refit(self.max_iters)
        return {"round": round_, "clique": tuple(self.table.columns[j] for j in marginal),
                "source": source, "sigma": sigma, "selection_rho": (1 - MEASURE_SHARE) * rho,
                "measurement_rho": MEASURE_SHARE * rho if source == "private" else 0.0}

    def options(self, rho_measure: float, allow_public: bool,
                size_limit: float) -> tuple[list, np.ndarray, float]:
        """Eligible (marginal, source) options, their private scores and sensitivity.

        A private option scores as in AIM (``CandidateScorer.scores``);
        a public one by the model's error minus the public answer's.
        """
        eligible = self.scorer.eligible(self.model.tree, size_limit)
        private, sensitivity, answers = self.scorer.scores(
            self.model, eligible, gaussian_sigma(rho_measure))
        options, scores = [], []
        for marginal, score in zip(eligible, private):
            options.append((marginal, "private"))
            scores.append(score)
            if allow_public and marginal in self.public_left:
                true = self.scorer.true_counts(marginal)
                error = np.abs(true - answers[marginal]).sum()
                public_error = np.abs(true - self.n_hat * self.public[marginal]).sum()
                options.append((marginal, "public"))
                scores.append(self.weights[marginal] * (error - public_error))
        if any(source == "public" for _, source in options):
            sensitivity *= 2.0
        return options, np.array(scores), sensitivity
