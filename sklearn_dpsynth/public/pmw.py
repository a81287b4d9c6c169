"""PMW-pub: public records reweighted to fit a noisy workload."""

from __future__ import annotations

import numpy as np

from .._docstrings import fill_doc
from .._progress import Progress
from ..privacy import PrivacyLedger
from .base import (DEFAULT_SMOOTHING, REWEIGHTING_CONSTRAINTS, PublicDataSynthesizer,
                   RecordsModelMixin, WeightedRecords, uniform_rows)
from ._reweight import one_way_estimates, reweight_records
from ._workload import measure_workload_table, noisy_total, workload_positions

__all__ = ["PMWPubSynthesizer"]


def _progress(verbose: bool, message: str) -> None:
    """``[message]`` on stderr when verbose (the public-data methods' steps)."""
    Progress(verbose).line(f"[{message}]")


@fill_doc
class PMWPubSynthesizer(RecordsModelMixin, PublicDataSynthesizer):
    """PMW-pub: non-negative weights on public records that fit noisy marginals.

    The "public data reweighting" step of PMW-pub (Liu, Vietri, Steinke,
    Ullman & Wu, "Leveraging public data for practical private query
    release", ICML 2021) in the one-shot form used as the "Gemini
    inference" baseline by Swanberg et al.:

    1. every marginal of the workload is measured once with the Gaussian
       mechanism (the whole budget, shared so that marginal ``i`` has noise
       ``sigma / w_i``);
    2. non-negative weights on the public records solve
       ``w* = argmin_{w >= 0} sum_i ||(Q_i w - y_i) / sigma_i||^2`` where
       ``Q_i w`` is the weighted count of the records in each cell of
       marginal ``i`` (accelerated projected gradient);
    3. rows are drawn from the public records with probabilities
       ``w* / sum(w*)``.

    The synthetic rows are public records: the method can only be as good
    as the public table's support.  Without ``public_data``, ``n_uniform``
    rows drawn uniformly from the domain stand in ("PMW-pub(uniform)").

    Parameters
    ----------
    %(common_parameters)s
    workload : list, default=None
        Marginals to measure: entries ``(columns, weight)`` or bare tuples of
        column names; ``None`` is every 2-way marginal of at most 10,000
        cells.
    n_uniform : int, default=10000
        Number of uniform rows used when ``fit`` gets no ``public_data``;
        at most ``max_sample_cells`` cells (rows times columns, ``2**28``).
    max_iter : int, default=1000
        Largest number of projected-gradient steps of the reweighting.
    tol : float, default=1e-6
        The reweighting stops when a step moves the weights by at most
        ``tol`` times their norm.
    %(smoothing_records)s
    verbose : int, default=0
        0 is silent; 1 (or more) prints the steps.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the noise, the uniform rows and sampling.
        %(seed_warning)s

    Attributes
    ----------
    domain_ : Domain
    workload_ : list of (tuple, float)
        The measured marginals (column names) and weights.
    records_ : WeightedRecords
        The model: the public records (encoded) and their probabilities,
        smoothed by the noisy 1-way distributions.
    weights_ : ndarray
        ``w*``: the records' fitted weights (counts).
    n_records_ : float
        DP estimate of the training row count (the noisy answers' sums).
    reweight_info_ : dict
        ``cost``, ``iterations``, ``converged`` of the solver.
    privacy_ledger_ : PrivacyLedger
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    **Privacy argument.** Under add/remove-one-row neighbours every marginal
    has L2 sensitivity 1, so marginal ``i`` released with Gaussian noise
    ``sigma_i`` is ``1 / (2 sigma_i^2)``-zCDP; the ``sigma_i`` are chosen so
    that the costs add up to the zCDP budget left after domain learning,
    and zCDP composes additively (the ledger records every release).  The
    public table, the uniform rows (drawn from the public domain with the
    seeded generator) and the reweighting, the row-count estimate,
    sampling and scoring only use the noisy answers and public
    information: post-processing.  The privacy of the output rests on
    ``public_data`` being public.

    **Likelihood.** The model is the mixture
    ``(1 - lam) * p_records + lam * prod_j q_j`` of the reweighted records
    and an independent base measure, ``q_j = (1 - lam) m_j + lam / k_j``
    with ``m_j`` column ``j``'s 1-way distribution read off the noisy
    workload answers (``one_way_estimates`` in ``public/_reweight.py``;
    post-processing, no budget) and ``k_j`` its number of codes.  Every
    row of the domain has a positive probability, so :meth:`score` is
    finite on held-out rows (and usable by pipelines and grid searches);
    :meth:`score_samples` is exact for this mixture, and :meth:`sample`
    draws from it.  ``smoothing = 0`` gives the records alone.

    Examples
    --------
    >>> from sklearn_dpsynth.datasets import make_bayesnet
    >>> from sklearn_dpsynth.public import PMWPubSynthesizer
    >>> data = make_bayesnet(n_samples=3000, n_features=4, random_state=0)
    >>> public = make_bayesnet(n_samples=500, n_features=4, random_state=0).frame
    >>> synth = PMWPubSynthesizer(domain=data.domain, random_state=0)
    >>> synth = synth.fit(data.frame, epsilon=1.0, public_data=public)
    >>> synth.sample(5).shape
    (5, 4)
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("weights_", "reweight_info_", "workload_")

    _parameter_constraints: dict = {
        **PublicDataSynthesizer._parameter_constraints,
        **REWEIGHTING_CONSTRAINTS,
        "workload": [list, tuple, None],
    }

    def __init__(self, *, domain=None, n_bins=32, preprocessing="private",
                 preprocessing_budget=0.1, max_categories=99, bin_value="uniform",
                 workload=None, n_uniform=10000,
                 max_iter=1000, tol=1e-6, smoothing=DEFAULT_SMOOTHING, verbose=0,
                 random_state=None):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.preprocessing_budget = preprocessing_budget
        self.max_categories = max_categories
        self.bin_value = bin_value
        self.workload = workload
        self.n_uniform = n_uniform
        self.max_iter = max_iter
        self.tol = tol
        self.smoothing = smoothing
        self.verbose = verbose
        self.random_state = random_state

    def _fit_encoded(self, table, ledger: PrivacyLedger, rng: np.random.Generator,
                     public) -> None:
        workload = workload_positions(self.workload, table.columns, table.sizes)
        if public is None:  # before any spending
            self._check_cells(self.n_uniform, len(table.sizes), f"n_uniform={self.n_uniform}",
                              "lower n_uniform")
        records = (public.to_numpy() if public is not None
                   else uniform_rows(table.sizes, self.n_uniform, rng))
        _progress(self.verbose, f"PMW-pub: measuring {len(workload)} marginals")
        answers, sigmas = measure_workload_table(table, workload, ledger.rho_remaining(),
                                                 ledger, rng)
        _progress(self.verbose, f"PMW-pub: reweighting {len(records)} public records")
        marginals = [m for m, _ in workload]
        self.weights_, self.reweight_info_ = reweight_records(
            records, table.sizes, marginals, answers, sigmas, tol=self.tol,
            max_iter=self.max_iter)
        one_way = one_way_estimates(marginals, answers, sigmas, table.sizes, records,
                                    self.weights_)
        self.records_ = WeightedRecords(records, self.weights_, one_way=one_way,
                                        smoothing=self.smoothing, sizes=table.sizes)
        self.n_records_ = noisy_total(answers, sigmas)
        self.workload_ = [(tuple(table.columns[j] for j in m), w) for m, w in workload]

