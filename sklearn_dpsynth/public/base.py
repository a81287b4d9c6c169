"""What the public-data synthesizers share: the public-data path and record models.

* :class:`PublicDataSynthesizer` -- a :class:`~sklearn_dpsynth.BaseSynthesizer`
  that accepts ``fit(..., public_data=)``: the base class encodes the public
  table once with the fitted domain and the hook
  ``_fit_encoded(table, ledger, rng, public)`` receives the private rows and
  the public ones as encoded tables (``public`` is None without one).
  Defined beside the base class (MST and the neural methods declare it
  too) and exported here.
* :class:`WeightedRecords` -- a distribution over a finite set of records
  (public records reweighted, or Private Evolution's candidates), smoothed
  by an independent base measure so that every row has a positive
  probability: sampling, conditional sampling and exact log-likelihoods.
* :func:`uniform_rows` -- rows drawn uniformly from the public domain.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Sequence

import numpy as np
from sklearn.utils._param_validation import Interval

from .._base import PublicDataSynthesizer

__all__ = ["PublicDataSynthesizer", "WeightedRecords", "uniform_rows", "draw_indices",
           "DEFAULT_SMOOTHING", "SMOOTHING_CONSTRAINT", "REWEIGHTING_CONSTRAINTS"]

#: Default weight ``lam`` of the independent base measure in the smoothed
#: densities of the record-based methods (PMW-pub, MST+public, Private
#: Evolution): a public constant, see :class:`WeightedRecords`.
DEFAULT_SMOOTHING = 0.05

#: Their ``smoothing`` parameter's constraint: a weight in ``[0, 1)``.
SMOOTHING_CONSTRAINT = Interval(Real, 0, 1, closed="left")

#: The constraints of the parameters the public-record reweighting methods
#: (PMW-pub, MST+public) share: uniform rows, the reweighting's stopping
#: rule, the smoothing and progress output.
REWEIGHTING_CONSTRAINTS: dict = {
    "n_uniform": [Interval(Integral, 1, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "smoothing": [SMOOTHING_CONSTRAINT],
    "verbose": ["verbose"],
}


def uniform_rows(sizes: Sequence[int], n_rows: int, rng: np.random.Generator) -> np.ndarray:
    """``n_rows`` rows of codes drawn uniformly and independently from the domain.

    Parameters
    ----------
    sizes : sequence of int
        Number of codes of every column.
    n_rows : int
        Number of rows.
    rng : numpy.random.Generator
        Source of randomness (no data is read).

    Returns
    -------
    ndarray of int64, shape (n_rows, len(sizes))
    """
    return np.column_stack([rng.integers(0, k, size=n_rows) for k in sizes]).astype(np.int64)


class WeightedRecords:
    """A probability distribution over a finite list of records, optionally smoothed.

    With ``smoothing = lam > 0`` the distribution is the mixture

        p(x) = (1 - lam) * p_records(x) + lam * prod_j q_j(x_j),
        q_j = (1 - lam) * m_j + lam / k_j,

    where ``p_records`` puts the normalised weights on the records, ``m_j``
    is the given 1-way distribution of column ``j`` (``one_way[j]``) and
    ``k_j`` its number of codes: every row of the domain has a positive
    probability, and the probabilities sum to 1 over the domain.  With
    ``lam = 0`` it is the records' distribution alone (rows equal to no
    record have probability 0).

    Parameters
    ----------
    codes : ndarray of int, shape (n_records, n_columns)
        The records (repeats allowed: their probabilities add up).
    weights : ndarray of shape (n_records,)
        Non-negative weights; normalised.  All-zero weights mean uniform.
    one_way : sequence of ndarray or None, default=None
        Per column, non-negative masses over its codes (normalised here);
        None uses the records' own 1-way distributions.  Only read when
        ``smoothing > 0``; then ``sizes`` fixes the number of codes.
    smoothing : float in [0, 1), default=0.0
        ``lam``: the weight of the independent base measure.
    sizes : sequence of int or None, default=None
        Number of codes of every column; required when ``smoothing > 0``.
    """

    def __init__(self, codes: np.ndarray, weights: np.ndarray, *,
                 one_way: Sequence[np.ndarray] | None = None, smoothing: float = 0.0,
                 sizes: Sequence[int] | None = None) -> None:
        weights = np.maximum(np.asarray(weights, dtype=float), 0.0)
        if codes.shape[0] != weights.shape[0] or codes.shape[0] == 0:
            raise ValueError("need one weight per record and at least one record.")
        if not 0.0 <= float(smoothing) < 1.0:
            raise ValueError(f"smoothing must be in [0, 1), got {smoothing!r}.")
        total = weights.sum()
        self.codes = np.asarray(codes, dtype=np.int64)
        self.probabilities = (weights / total if total > 0
                              else np.full(weights.shape, 1.0 / weights.size))
        self.smoothing = float(smoothing)
        self.base = (self._base_measure(one_way, sizes) if self.smoothing > 0 else None)

    def _base_measure(self, one_way, sizes) -> list[np.ndarray]:
        """``q_j = (1 - lam) m_j + lam / k_j`` for every column (all positive)."""
        if sizes is None or len(sizes) != self.codes.shape[1]:
            raise ValueError("smoothing needs the number of codes of every column (sizes).")
        if one_way is None:
            one_way = [np.bincount(self.codes[:, j], weights=self.probabilities,
                                   minlength=int(k)) for j, k in enumerate(sizes)]
        base = []
        for j, (mass, k) in enumerate(zip(one_way, sizes)):
            mass = np.maximum(np.asarray(mass, dtype=float).ravel(), 0.0)
            if mass.shape != (int(k),):
                raise ValueError(f"one_way[{j}] must have {int(k)} entries, got {mass.size}.")
            total = mass.sum()
            mass = mass / total if total > 0 else np.full(int(k), 1.0 / int(k))
            base.append((1.0 - self.smoothing) * mass + self.smoothing / int(k))
        return base

    def sample(self, n_samples: int, rng: np.random.Generator,
               conditions: dict[int, int] | None = None) -> np.ndarray:
        """Draw rows i.i.d. from the distribution, optionally given ``conditions``.

        Given conditions, the records component keeps the matching records
        and the base measure fixes the conditioned columns; each row comes
        from a component with its posterior probability given the conditions.
        """
        conditions = conditions or {}
        record_mass = self._matching_mass(conditions)
        if self.base is None:
            if record_mass <= 0:
                raise ValueError("no record of the model matches the conditions; they have "
                                 "probability 0.")
            return self._sample_records(n_samples, rng, conditions)
        base_mass = float(np.prod([self.base[j][c] for j, c in conditions.items()]))
        share = (self.smoothing * base_mass
                 / ((1.0 - self.smoothing) * record_mass + self.smoothing * base_mass))
        from_base = rng.random(n_samples) < share
        out = np.empty((n_samples, self.codes.shape[1]), dtype=np.int64)
        n_base = int(from_base.sum())
        if n_base < n_samples:
            out[~from_base] = self._sample_records(n_samples - n_base, rng, conditions)
        out[from_base] = self._sample_base(n_base, rng, conditions)
        return out

    def _matching(self, conditions: dict[int, int]) -> np.ndarray:
        """Which records agree with ``conditions``."""
        match = np.ones(len(self.probabilities), dtype=bool)
        for column, code in conditions.items():
            match &= self.codes[:, column] == code
        return match

    def _matching_mass(self, conditions: dict[int, int]) -> float:
        if not conditions:
            return 1.0
        return float(self.probabilities[self._matching(conditions)].sum())

    def _sample_records(self, n_samples: int, rng: np.random.Generator,
                        conditions: dict[int, int]) -> np.ndarray:
        probs = self.probabilities
        if conditions:
            probs = np.where(self._matching(conditions), probs, 0.0)
        return self.codes[draw_indices(probs, n_samples, rng)]

    def _sample_base(self, n_samples: int, rng: np.random.Generator,
                     conditions: dict[int, int]) -> np.ndarray:
        columns = [np.full(n_samples, conditions[j], dtype=np.int64) if j in conditions
                   else draw_indices(q, n_samples, rng) for j, q in enumerate(self.base)]
        return np.column_stack(columns) if columns else np.empty((n_samples, 0), np.int64)

    def log_likelihood(self, codes: np.ndarray) -> np.ndarray:
        """Log-probability of each row under the (smoothed) distribution.

        Without smoothing, rows equal to no record have probability 0
        (``-inf``); with it every row of the domain is finite.
        """
        mass: dict[bytes, float] = {}
        for key, p in zip(_row_keys(self.codes), self.probabilities):
            mass[key] = mass.get(key, 0.0) + p
        probs = np.array([mass.get(key, 0.0) for key in _row_keys(codes)])
        with np.errstate(divide="ignore"):
            log_records = np.log(probs)
        if self.base is None:
            return log_records
        codes = np.asarray(codes, dtype=np.int64)
        log_base = np.zeros(codes.shape[0])
        for j, q in enumerate(self.base):
            log_base += np.log(q[codes[:, j]])
        return np.logaddexp(np.log1p(-self.smoothing) + log_records,
                            np.log(self.smoothing) + log_base)


def draw_indices(probs: np.ndarray, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """``n_samples`` indices drawn i.i.d. with probabilities proportional to ``probs``."""
    cumulative = np.cumsum(probs)
    picks = np.searchsorted(cumulative, rng.random(n_samples) * cumulative[-1], side="right")
    return np.minimum(picks, len(probs) - 1)


def _row_keys(codes: np.ndarray) -> list[bytes]:
    rows = np.ascontiguousarray(np.asarray(codes, dtype=np.int64))
    return [row.tobytes() for row in rows]


class RecordsModelMixin:
    """Sampling and scoring of a synthesizer whose model is ``records_``.

    Expects ``records_`` (a :class:`WeightedRecords`, smoothed by the
    estimator's ``smoothing``) and ``n_records_`` (a differentially private
    estimate of the number of training rows).  Conditional sampling and the
    log-likelihood are those of the smoothed distribution: every row of the
    domain scores finitely when ``smoothing > 0``.
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("records_", "n_records_")

    def _sample_encoded(self, n_samples: int, rng: np.random.Generator,
                        conditions: dict[int, int] | None) -> np.ndarray:
        return self.records_.sample(n_samples, rng, conditions)

    def _log_likelihood_encoded(self, codes: np.ndarray) -> np.ndarray:
        return self.records_.log_likelihood(codes)

    def _estimated_n_records(self) -> float:
        return self.n_records_
