"""What the public-data synthesizers share: the public-data path and record models.

* :class:`PublicDataSynthesizer` -- a :class:`~sklearn_dpsynth.BaseSynthesizer`
  whose ``fit`` also takes ``public_data=``, encoded once with the fitted
  domain.  Subclasses implement ``_fit_table(table, ledger, rng, public)``
  (the private rows behind the encoded-table interface; ``public`` an
  encoded table or None).  The ``fit`` override is a stand-in for the
  public-data path of the base class being written in parallel and will be
  deleted at the port (``_fit_table`` then becomes ``_fit_encoded``).
* :class:`WeightedRecords` -- a distribution over a finite set of records
  (public records reweighted, or Private Evolution's candidates): sampling,
  conditional sampling and exact log-likelihoods.
* :func:`uniform_rows` -- rows drawn uniformly from the public domain.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._base import DEFAULT_DELTA, BaseSynthesizer
from ..preprocessing import InputForm, align_columns, check_table
from ..privacy import PrivacyLedger
from ._shim import CodesTable

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


class PublicDataSynthesizer(BaseSynthesizer):
    """Base class of the synthesizers that take a public table in ``fit``.

    ``fit(X, y=None, *, epsilon, delta=1e-9, public_data=None)``: the public
    table (same columns as ``X``) is encoded once with the fitted domain
    ``domain_`` and handed to ``_fit_table`` as an encoded table.  It is
    public: reading it costs nothing, and anything derived from it alone is
    public too.
    """

    #: Whether ``fit`` takes ``public_data=`` (read by the method registry).
    _accepts_public_data = True

    def fit(self, X: Any, y: Any = None, *, epsilon: float, delta: float = DEFAULT_DELTA,
            public_data: Any = None):
        """Fit on the private table ``X`` within ``(epsilon, delta)``.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            The private table.
        y : None
            Ignored.
        epsilon : float
            Privacy budget, finite and ``> 0``.
        delta : float, default=1e-9
            Privacy parameter in (0, 1).
        public_data : DataFrame or array-like, default=None
            A public table with the same columns as ``X`` (values inside the
            fitted domain).  What ``None`` means depends on the method.

        Returns
        -------
        self
        """
        if public_data is not None:
            try:
                check_table(public_data)
            except (ValueError, TypeError) as error:
                raise ValueError(f"public_data: {error}") from None
        self._pending_public = public_data
        try:
            super().fit(X, y, epsilon=epsilon, delta=delta)
        finally:
            del self._pending_public
        return self

    def _fit_encoded(self, codes: np.ndarray, ledger: PrivacyLedger,
                     rng: np.random.Generator) -> None:
        table = CodesTable(codes, self.domain_.columns, self.domain_.sizes)
        self._fit_table(table, ledger, rng, self._encode_public(self._pending_public))

    def _encode_public(self, public_data: Any) -> CodesTable | None:
        """``public_data`` encoded with ``domain_`` (no budget: the table is public)."""
        if public_data is None:
            return None
        form = InputForm(list(self.domain_.columns), [],
                         isinstance(public_data, pd.DataFrame))
        try:
            codes = self.domain_.encode(align_columns(public_data, form))
        except (ValueError, TypeError) as error:
            raise ValueError(f"public_data: {error}") from None
        return CodesTable(codes, self.domain_.columns, self.domain_.sizes)

    @abstractmethod
    def _fit_table(self, table: Any, ledger: PrivacyLedger, rng: np.random.Generator,
                   public: Any) -> None:
        """Learn the model from the encoded private table, spending through ``ledger``."""


class RecordsModelMixin:
    """Sampling and scoring of a synthesizer whose model is ``records_``.

    Expects ``records_`` (a :class:`WeightedRecords`) and ``n_records_`` (a
    differentially private estimate of the number of training rows).
    Conditional sampling draws among the records that match the conditions.
    The log-likelihood is exact: the model puts all its mass on its records,
    so a row equal to none of them scores ``-inf``.
    """

    def _sample_encoded(self, n_samples: int, rng: np.random.Generator,
                        conditions: dict[int, int] | None) -> np.ndarray:
        return self.records_.sample(n_samples, rng, conditions)

    def _log_likelihood_encoded(self, codes: np.ndarray) -> np.ndarray:
        return self.records_.log_likelihood(codes)

    def _estimated_n_records(self) -> float:
        return self.n_records_
