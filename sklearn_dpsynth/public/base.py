"""What the public-data synthesizers share: the public-data path and record models.

* :class:`PublicDataSynthesizer` -- a :class:`~sklearn_dpsynth.BaseSynthesizer`
  that accepts ``fit(..., public_data=)``: the base class encodes the public
  table once with the fitted domain and the hook
  ``_fit_encoded(table, ledger, rng, public)`` receives the private rows and
  the public ones as encoded tables (``public`` is None without one).
  Defined beside the base class (MST and the neural methods declare it
  too) and exported here.
* :class:`WeightedRecords` -- a distribution over a finite set of records
  (public records reweighted, or Private Evolution's candidates): sampling,
  conditional sampling and exact log-likelihoods.
* :func:`uniform_rows` -- rows drawn uniformly from the public domain.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .._base import PublicDataSynthesizer

__all__ = ["PublicDataSynthesizer", "WeightedRecords", "uniform_rows"]


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
    """A probability distribution over a finite list of records.

    Parameters
    ----------
    codes : ndarray of int, shape (n_records, n_columns)
        The records (repeats allowed: their probabilities add up).
    weights : ndarray of shape (n_records,)
        Non-negative weights; normalised.  All-zero weights mean uniform.
    """

    def __init__(self, codes: np.ndarray, weights: np.ndarray) -> None:
        weights = np.maximum(np.asarray(weights, dtype=float), 0.0)
        if codes.shape[0] != weights.shape[0] or codes.shape[0] == 0:
            raise ValueError("need one weight per record and at least one record.")
        total = weights.sum()
        self.codes = np.asarray(codes, dtype=np.int64)
        self.probabilities = (weights / total if total > 0
                              else np.full(weights.shape, 1.0 / weights.size))

    def sample(self, n_samples: int, rng: np.random.Generator,
               conditions: dict[int, int] | None = None) -> np.ndarray:
        """Draw records i.i.d., optionally among those matching ``conditions``."""
        probs = self.probabilities
        if conditions:
            match = np.ones(len(probs), dtype=bool)
            for column, code in conditions.items():
                match &= self.codes[:, column] == code
            probs = np.where(match, probs, 0.0)
            if probs.sum() <= 0:
                raise ValueError("no record of the model matches the conditions; they have "
                                 "probability 0.")
        cumulative = np.cumsum(probs)
        picks = np.searchsorted(cumulative, rng.random(n_samples) * cumulative[-1],
                                side="right")
        return self.codes[np.minimum(picks, len(probs) - 1)]

    def log_likelihood(self, codes: np.ndarray) -> np.ndarray:
        """Log-probability of each row: ``log`` of the mass of the equal records.

        Rows equal to no record have probability 0 (``-inf``): the model is a
        distribution on its records only.
        """
        mass: dict[bytes, float] = {}
        for key, p in zip(_row_keys(self.codes), self.probabilities):
            mass[key] = mass.get(key, 0.0) + p
        probs = np.array([mass.get(key, 0.0) for key in _row_keys(codes)])
        with np.errstate(divide="ignore"):
            return np.log(probs)


def _row_keys(codes: np.ndarray) -> list[bytes]:
    rows = np.ascontiguousarray(np.asarray(codes, dtype=np.int64))
    return [row.tobytes() for row in rows]


class RecordsModelMixin:
    """Sampling and scoring of a synthesizer whose model is ``records_``.

    Expects ``records_`` (a :class:`WeightedRecords`) and ``n_records_`` (a
    differentially private estimate of the number of training rows).
    Conditional sampling draws among the records that match the conditions.
    The log-likelihood is exact: the model puts all its mass on its records,
    so a row equal to none of them scores ``-inf``.
    """

    #: The model puts all its mass on finitely many records: held-out rows
    #: outside them score ``-inf`` (exact, but useless for model selection).
    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("records_", "n_records_")

    _likelihood_on_records_only = True

    def _sample_encoded(self, n_samples: int, rng: np.random.Generator,
                        conditions: dict[int, int] | None) -> np.ndarray:
        return self.records_.sample(n_samples, rng, conditions)

    def _log_likelihood_encoded(self, codes: np.ndarray) -> np.ndarray:
        return self.records_.log_likelihood(codes)

    def _estimated_n_records(self) -> float:
        return self.n_records_
