"""The Independent baseline: noisy 1-way marginals, sampled as a product."""

from __future__ import annotations

import math

import numpy as np

from .._base import BaseSynthesizer
from .._docstrings import fill_doc
from .._marginals import project_to_simplex
from ..backends import EncodedTable
from ..privacy import PrivacyLedger, gaussian_sigma

__all__ = ["IndependentSynthesizer"]


@fill_doc
class IndependentSynthesizer(BaseSynthesizer):
    """Product of noisy 1-way marginals: the baseline every method must beat.

    Every column's histogram is measured once with the Gaussian mechanism,
    projected onto valid counts, and columns are sampled independently.
    It preserves 1-way marginals and nothing else.

    Parameters
    ----------
    %(common_parameters)s
    pseudocount : float, default=0.5
        Added to every projected count before normalising, so that held-out
        log-likelihoods stay finite (Jeffreys prior).
    random_state : int, RandomState, Generator or None, default=None
        Seeds the noise and sampling.
        %(seed_warning)s

    Attributes
    ----------
    domain_ : Domain
        The complete public domain of the encoded table.
    marginals_ : list of ndarray
        Estimated probability vector of each column.
    n_records_ : float
        DP estimate of the training row count.
    privacy_ledger_ : PrivacyLedger
        Every measurement and its cost.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when fitted on a DataFrame with string column names.

    Notes
    -----
    **Privacy argument.** Neighbouring tables differ by adding or removing one row, which changes
    each of the ``d`` column histograms by 1 in one cell: the vector of all
    histograms has L2 sensitivity ``sqrt(d)``.  Measuring each histogram
    with Gaussian noise of standard deviation ``sigma = sqrt(d / (2 rho))``
    is therefore ``rho``-zCDP in total (``d`` entries of ``rho / d``),
    where ``rho`` is all the budget left after domain learning.  The row
    count, the projection, the pseudocount and sampling are
    post-processing of these noisy histograms.  zCDP composes additively and
    converts to ``(epsilon, delta)`` with the bound of Canonne, Kamath &
    Steinke (2020); see :class:`~sklearn_dpsynth.PrivacyLedger`.

    Examples
    --------
    >>> from sklearn_dpsynth import IndependentSynthesizer
    >>> from sklearn_dpsynth.datasets import make_bayesnet
    >>> data = make_bayesnet(n_samples=2000, n_features=4, random_state=0)
    >>> synth = IndependentSynthesizer(domain=data.domain, random_state=0)
    >>> synth = synth.fit(data.frame, epsilon=1.0)
    >>> synth.sample(5).shape
    (5, 4)
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("n_records_", "marginals_")

    _parameter_constraints: dict = {
        **BaseSynthesizer._parameter_constraints,
        "pseudocount": [float, int],
    }

    def __init__(self, *, domain=None, n_bins=32, preprocessing="private",
                 preprocessing_budget=0.3, max_categories=99,
                 bin_value="uniform", pseudocount=0.5,
                 random_state=None):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.preprocessing_budget = preprocessing_budget
        self.max_categories = max_categories
        self.bin_value = bin_value
        self.pseudocount = pseudocount
        self.random_state = random_state

    def _fit_encoded(self, table: EncodedTable, ledger: PrivacyLedger,
                     rng: np.random.Generator, public: EncodedTable | None) -> None:
        if self.pseudocount < 0:
            raise ValueError(f"pseudocount must be >= 0, got {self.pseudocount}.")
        sizes = self.domain_.sizes
        n_features = len(sizes)
        sigma = gaussian_sigma(ledger.rho_remaining(), math.sqrt(n_features))
        noisy = [
            ledger.gaussian(table.counts([j]), sigma=sigma, rng=rng,
                            target=f"1-way marginal of {name!r}", n_cells=sizes[j])
            for j, name in enumerate(self.domain_.columns)
        ]
        self.n_records_ = _inverse_variance_total(noisy)
        self.marginals_ = [self._to_probabilities(y) for y in noisy]

    def _to_probabilities(self, noisy: np.ndarray) -> np.ndarray:
        counts = project_to_simplex(noisy, self.n_records_) + self.pseudocount
        return counts / counts.sum()

    def _sample_encoded(self, n_samples: int, rng: np.random.Generator,
                        conditions: dict[int, int] | None) -> np.ndarray:
        conditions = conditions or {}
        columns = []
        for j, probs in enumerate(self.marginals_):
            if j in conditions:
                columns.append(np.full(n_samples, conditions[j], dtype=np.int64))
            else:
                columns.append(_draw(probs, n_samples, rng))
        return np.column_stack(columns) if columns else np.empty((n_samples, 0), np.int64)

    def _log_likelihood_encoded(self, codes: np.ndarray) -> np.ndarray:
        logs = [np.log(p)[codes[:, j]] for j, p in enumerate(self.marginals_)]
        return np.sum(logs, axis=0)

    def _estimated_n_records(self) -> float:
        return self.n_records_


def _inverse_variance_total(noisy: list[np.ndarray]) -> float:
    """Combine the sums of noisy histograms; each has variance ``sigma^2 * cells``."""
    weights = np.array([1.0 / y.size for y in noisy])
    sums = np.array([y.sum() for y in noisy])
    return max(float(np.sum(weights * sums) / np.sum(weights)), 1.0)


def _draw(probs: np.ndarray, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    cumulative = np.cumsum(probs)
    cumulative /= cumulative[-1]
    draws = np.searchsorted(cumulative, rng.random(n_samples), side="right")
    return np.minimum(draws, len(probs) - 1).astype(np.int64)
