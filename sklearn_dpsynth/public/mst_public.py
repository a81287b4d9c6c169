"""MST with public generation: MST's selection and measurements, public records reweighted."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._docstrings import fill_doc
from .._marginals import project_to_simplex
from ..backends import NumpyTable
from ..marginal.budget import budget_shares
from ..marginal.selection import (Components, all_pairs, l1_pair_scores, maximum_spanning_tree,
                                  mutual_information, private_kruskal)
from ..privacy import PrivacyLedger
from .base import (DEFAULT_SMOOTHING, REWEIGHTING_CONSTRAINTS, PublicDataSynthesizer,
                   RecordsModelMixin, WeightedRecords, uniform_rows)
from ._reweight import one_way_estimates, reweight_records
from ._workload import measure_workload_table, noisy_total
from .pmw import _progress

__all__ = ["MSTPublicSynthesizer"]


@fill_doc
class MSTPublicSynthesizer(RecordsModelMixin, PublicDataSynthesizer):
    """MST's measurements, with generation by reweighting public records.

    "MST modified to take public data" (Swanberg et al.): the selection and
    measurements of MST (McKenna, Miklau & Sheldon 2021), with its last step
    -- Private-PGM -- replaced by the PMW-pub reweighting of the public
    records.  With ``rho`` the zCDP budget left after domain learning and
    ``d`` columns:

    1. the ``d`` 1-way marginals are measured with the Gaussian mechanism
       (``rho / 3``);
    2. a spanning tree is selected with MST's private Kruskal
       (``sklearn_dpsynth.marginal.selection.private_kruskal``,
       ``rho / 3``): the quality of a pair is the L1 distance between its
       true 2-way counts and the independent model of step 1; with
       ``public_selection=True`` the tree is instead the mutual-information
       maximum spanning tree of the public table (free; budget in halves
       between steps 1 and 3);
    3. the ``d - 1`` tree marginals are measured (``rho / 3``);
    4. non-negative weights on the public records fit all the measurements
       (generalised least squares, as in
       :class:`~sklearn_dpsynth.public.PMWPubSynthesizer`), and rows are drawn
       from the weighted records.

    Without ``public_data``, ``n_uniform`` uniform rows of the domain stand in.
    Unlike :class:`~sklearn_dpsynth.MSTSynthesizer` the domain is not
    compressed: reweighting works on the public records' cells directly.

    Parameters
    ----------
    %(common_parameters)s
    public_selection : bool, default=False
        Choose the tree on the public table (no selection budget).
    n_uniform : int, default=10000
        Uniform rows used when ``fit`` gets no ``public_data``.
    max_iter : int, default=1000
        Largest number of projected-gradient steps of the reweighting.
    tol : float, default=1e-6
        Relative step size at which the reweighting stops.
    %(smoothing_records)s
    verbose : int, default=0
        0 is silent; 1 (or more) prints the steps.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the noise, the selections, the uniform rows and sampling.
        %(seed_warning)s

    Attributes
    ----------
    domain_ : Domain
    tree_edges_ : list of tuple
        The spanning tree (column-name pairs), in selection order.
    records_ : WeightedRecords
        The model: the public records and their probabilities, smoothed by
        the noisy 1-way distributions.
    weights_ : ndarray
        Fitted record weights.
    n_records_ : float
        DP estimate of the training row count.
    reweight_info_ : dict
    privacy_ledger_ : PrivacyLedger
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    **Privacy argument.** MST's (see :class:`~sklearn_dpsynth.MSTSynthesizer`):
    under add/remove-one-row neighbours every marginal has L2 sensitivity 1,
    so steps 1 and 3 cost ``sum_i 1 / (2 sigma_i^2)`` (equal noise, each step
    its share); each pair score of step 2 changes by at most 1 (the
    independent model is a function of step 1's output), so each of the
    ``d - 1`` exponential-mechanism rounds costs its share ``rho_2 / (d - 1)``
    (a round with one candidate is free).  zCDP composes additively and the
    ledger records exactly ``rho``.  The public tree (``public_selection``),
    the uniform rows, the reweighting, sampling and scoring use only the
    noisy releases and public information; the privacy of the output rests
    on ``public_data`` being public.

    **Likelihood.** As for :class:`~sklearn_dpsynth.public.PMWPubSynthesizer`:
    the mixture ``(1 - lam) * p_records + lam * prod_j q_j``, with the
    base measure's ``q_j`` read off the noisy 1-way and tree marginals
    (post-processing); every row of the domain scores finitely.

    Examples
    --------
    >>> from sklearn_dpsynth.datasets import make_bayesnet
    >>> from sklearn_dpsynth.public import MSTPublicSynthesizer
    >>> data = make_bayesnet(n_samples=3000, n_features=4, random_state=0)
    >>> public = make_bayesnet(n_samples=500, n_features=4, random_state=0).frame
    >>> synth = MSTPublicSynthesizer(domain=data.domain, random_state=0)
    >>> synth = synth.fit(data.frame, epsilon=1.0, public_data=public)
    >>> len(synth.tree_edges_)
    3
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("weights_", "reweight_info_", "tree_edges_")

    _parameter_constraints: dict = {
        **PublicDataSynthesizer._parameter_constraints,
        **REWEIGHTING_CONSTRAINTS,
        "public_selection": ["boolean"],
    }

    def __init__(self, *, domain=None, n_bins=32, preprocessing="private",
                 preprocessing_budget=0.1, max_categories=99, bin_value="uniform",
                 public_selection=False,
                 n_uniform=10000, max_iter=1000, tol=1e-6, smoothing=DEFAULT_SMOOTHING,
                 verbose=0, random_state=None):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.preprocessing_budget = preprocessing_budget
        self.max_categories = max_categories
        self.bin_value = bin_value
        self.public_selection = public_selection
        self.n_uniform = n_uniform
        self.max_iter = max_iter
        self.tol = tol
        self.smoothing = smoothing
        self.verbose = verbose
        self.random_state = random_state

    def _fit_encoded(self, table, ledger: PrivacyLedger, rng: np.random.Generator,
                     public) -> None:
        records = (public.to_numpy() if public is not None
                   else uniform_rows(table.sizes, self.n_uniform, rng))
        n_columns = len(table.sizes)
        private_selection = n_columns > 2 and not self.public_selection
        rho = ledger.rho_remaining()
        shares = budget_shares(private_selection, measure_cliques=n_columns > 1)
        ones = [((j,), 1.0) for j in range(n_columns)]
        _progress(self.verbose, "MST+public: measuring the 1-way marginals")
        one_way, one_sigmas = measure_workload_table(table, ones, shares[0] * rho, ledger, rng)
        if private_selection:
            _progress(self.verbose, "MST+public: selecting the spanning tree")
            edges = _private_tree(table, one_way, one_sigmas, shares[1] * rho, ledger, rng)
        else:
            edges = _public_tree(records, table.sizes)
        measured = [(j,) for j in range(n_columns)]
        answers, sigmas = list(one_way), list(one_sigmas)
        if edges:
            _progress(self.verbose, f"MST+public: measuring {len(edges)} tree marginals")
            two_way, two_sigmas = measure_workload_table(
                table, [(e, 1.0) for e in edges], ledger.rho_remaining(), ledger, rng)
            measured += edges
            answers += two_way
            sigmas += list(two_sigmas)
        _progress(self.verbose, f"MST+public: reweighting {len(records)} public records")
        self.weights_, self.reweight_info_ = reweight_records(
            records, table.sizes, measured, answers, sigmas, tol=self.tol,
            max_iter=self.max_iter)
        estimates = one_way_estimates(measured, answers, sigmas, table.sizes, records,
                                      self.weights_)
        self.records_ = WeightedRecords(records, self.weights_, one_way=estimates,
                                        smoothing=self.smoothing, sizes=table.sizes)
        self.n_records_ = noisy_total(one_way, one_sigmas)
        self.tree_edges_ = [(table.columns[a], table.columns[b]) for a, b in edges]


def _private_tree(table: Any, one_way: list, sigmas, rho: float, ledger: PrivacyLedger,
                  rng: np.random.Generator) -> list[tuple[int, int]]:
    """MST's private Kruskal on L1 scores against the independent model of ``one_way``."""
    total = noisy_total(one_way, sigmas)
    independent = [project_to_simplex(y, total) for y in one_way]
    pairs = all_pairs(len(table.sizes))
    scores = l1_pair_scores(
        table, pairs, lambda pair: np.outer(independent[pair[0]], independent[pair[1]]) / total)
    components = Components(len(table.sizes))
    return private_kruskal(pairs, scores, components, rho / (len(table.sizes) - 1), ledger,
                           rng, table.columns)


def _public_tree(records: np.ndarray, sizes: list[int]) -> list[tuple[int, int]]:
    """Mutual-information maximum spanning tree of public records (no budget)."""
    pairs = all_pairs(len(sizes))
    public = NumpyTable(records, list(range(len(sizes))), sizes)
    scores = np.array([mutual_information(public, pair) for pair in pairs])
    return maximum_spanning_tree(pairs, scores, Components(len(sizes)))
