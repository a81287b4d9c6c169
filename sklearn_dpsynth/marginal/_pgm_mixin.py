"""What the graphical-model synthesizers (MST, AIM) share once fitted.

:class:`_PGMMixin` answers marginals, samples and scores rows from a fitted
:class:`~sklearn_dpsynth.pgm.GraphicalModel` stored as ``model_``, whose
attribute ``attributes_[j]`` stands for column ``j`` of ``domain_``, and
``compression_``, the
:class:`~sklearn_dpsynth.marginal._compression.DomainCompression` from the
domain's codes to the model's (``DomainCompression.identity`` when the model
works on the domain's codes).  Everything here uses the fitted model only: no
budget is spent.
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

__all__ = ["_PGMMixin"]


class _PGMMixin:
    """Marginals, sampling and scoring from a fitted graphical model.

    Expects ``model_``, ``attributes_``, ``domain_``, ``compression_`` and
    optionally ``sampling`` (``"lowvar"`` when absent).
    """

    # ----------------------------------------------------- column positions
    def _positions(self, columns: Sequence[Hashable], parameter: str) -> tuple[int, ...]:
        """Positions of distinct known columns; ValueError naming ``parameter``."""
        positions = []
        for column in columns:
            try:
                positions.append(self.domain_.index(column))
            except ValueError:
                raise ValueError(f"{parameter}: unknown column {column!r}; the columns are "
                                 f"{self.domain_.columns}.") from None
        if not positions:
            raise ValueError(f"{parameter}: a marginal needs at least one column.")
        if len(set(positions)) != len(positions):
            raise ValueError(f"{parameter}: repeated column in {tuple(columns)!r}.")
        return tuple(positions)

    # ------------------------------------------------------ codes <-> model
    def _sample_encoded(self, n_samples: int, rng: np.random.Generator,
                        conditions: dict[int, int] | None) -> np.ndarray:
        self._reject_conditions(conditions)
        method = getattr(self, "sampling", "lowvar")
        sampled = self.model_.sample(n_samples, rng, method=method)
        return self.compression_.expand(sampled, rng)

    def _log_likelihood_encoded(self, codes: np.ndarray) -> np.ndarray:
        model_codes = self.compression_.compress(codes)
        return (self.model_.log_likelihood(model_codes)
                + self.compression_.log_expansion(model_codes))

    def _estimated_n_records(self) -> float:
        return self.model_.total

    # ------------------------------------------------------------- marginal
    def marginal(self, columns: Any, *, as_frame: bool = False) -> np.ndarray | pd.DataFrame:
        """Marginal distribution of some columns under the fitted model.

        Answers any marginal, measured or not, from the model alone: no
        budget is spent.

        Parameters
        ----------
        columns : column name or list of column names
            The columns, in the order of the output axes.
        as_frame : bool, default=False
            Return a long DataFrame instead of an array.

        Returns
        -------
        ndarray or DataFrame
            An ndarray of probabilities of shape
            ``tuple(domain_[c].size for c in columns)`` indexed by the
            encoded codes (``domain_[c]``'s code order; numeric bins from
            low to high, the missing-value code last); it sums to 1.  With
            ``as_frame=True``, one row per cell in the same (C) order: the
            decoded value of every column (numeric bins as midpoints) and a
            ``"probability"`` column.
        """
        check_is_fitted(self, "model_")
        if not isinstance(columns, (list, tuple)):
            columns = [columns]
        positions = self._positions(columns, "columns")
        probs = self.model_.marginal([self.attributes_[j] for j in positions], normalize=True)
        probs = self.compression_.expand_marginal(probs, positions)
        if not as_frame:
            return probs
        return self._marginal_frame(probs, positions)

    def _marginal_frame(self, probs: np.ndarray, positions: tuple[int, ...]) -> pd.DataFrame:
        """Long form of a marginal: decoded values and probabilities."""
        cells = np.indices(probs.shape).reshape(len(positions), -1)
        data = {self.domain_.columns[j]: self.domain_.specs[j].decode(cells[a])
                for a, j in enumerate(positions)}
        data["probability"] = probs.ravel()
        return pd.DataFrame(data)
