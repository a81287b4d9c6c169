"""What the graphical-model synthesizers (MST, AIM, JAM) share once fitted.

:class:`PGMMixin` answers marginals, samples and scores rows from a fitted
:class:`~sklearn_dpsynth.pgm.GraphicalModel` stored as ``model_``, whose
attribute ``attributes_[j]`` stands for column ``j`` of ``domain_``, and
``compression_``, the
:class:`~sklearn_dpsynth.marginal.compression.DomainCompression` from the
domain's codes to the model's (``DomainCompression.identity`` when the model
works on the domain's codes).  Everything here uses the fitted model only: no
budget is spent.

Conditioning (``sample(n, conditions=...)``, ``marginal(columns, given=...)``)
is exact: a condition on an original code becomes evidence on its compressed
code, entered in the junction tree (:meth:`GraphicalModel.condition`), and
the expansion back to original codes fixes the conditioned column to its
value (a merged code spreads uniformly over its original codes, so fixing
one of them leaves the other columns' conditional unchanged).
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..pgm import GraphicalModel, ZeroProbabilityEvidence

__all__ = ["PGMMixin"]


class PGMMixin:
    """Marginals, sampling and scoring from a fitted graphical model.

    Expects ``model_``, ``attributes_``, ``domain_``, ``compression_`` and
    ``sampling`` (MST's parameter; a class attribute of AIM and JAM).
    """

    # ----------------------------------------------------- column positions
    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("attributes_", "compression_", "cliques_", "model_",
                         "estimation_info_")

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
    def _conditioned_model(self, conditions: dict[int, int] | None,
                           parameter: str) -> GraphicalModel:
        """``model_`` given original codes of some columns (``model_`` when none).

        Raises a ValueError naming the columns (not their values) when the
        model gives the conditions probability zero.
        """
        if not conditions:
            return self.model_
        evidence = {self.attributes_[j]: int(self.compression_.mappings[j][code])
                    for j, code in conditions.items()}
        try:
            return self.model_.condition(evidence)
        except ZeroProbabilityEvidence:
            columns = [self.domain_.columns[j] for j in sorted(conditions)]
            raise ValueError(f"{parameter}: the values fixed for columns {columns} have "
                             "probability zero under the fitted model; no row can "
                             "satisfy them.") from None

    def _sample_encoded(self, n_samples: int, rng: np.random.Generator,
                        conditions: dict[int, int] | None) -> np.ndarray:
        """Encoded rows, from the model conditioned on ``conditions`` if any.

        Both generators (``sampling="lowvar"`` and ``"iid"``) run on the
        conditioned model, so low-variance rounding also applies under
        conditions.
        """
        model = self._conditioned_model(conditions, "conditions")
        method = self.sampling
        sampled = model.sample(n_samples, rng, method=method)
        codes = self.compression_.expand(sampled, rng)
        for j, code in (conditions or {}).items():
            codes[:, j] = code
        return codes

    def _log_likelihood_encoded(self, codes: np.ndarray) -> np.ndarray:
        model_codes = self.compression_.compress(codes)
        return (self.model_.log_likelihood(model_codes)
                + self.compression_.log_expansion(model_codes))

    def _estimated_n_records(self) -> float:
        return self.model_.total

    # ------------------------------------------------------------- marginal
    def marginal(self, columns: Any, *, given: dict | None = None,
                 as_frame: bool = False) -> np.ndarray | pd.DataFrame:
        """Marginal distribution of some columns under the fitted model.

        Answers any marginal, measured or not, from the model alone: no
        budget is spent.  With ``given``, the exact conditional distribution
        given fixed values of other columns (evidence entered in the
        junction tree, then recalibrated).

        Parameters
        ----------
        columns : column name or list of column names
            The columns, in the order of the output axes.
        given : dict, optional
            ``{column: value}`` to condition on, values as in the fitted
            table (a numeric value stands for its bin).  A ValueError names
            the columns when the model gives them probability zero.
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
        conditions = self._given_codes(given)
        model = self._conditioned_model(conditions, "given")
        probs = model.marginal([self.attributes_[j] for j in positions], normalize=True)
        probs = self.compression_.expand_marginal(probs, positions)
        probs = _fix_conditioned_axes(probs, positions, conditions or {})
        if not as_frame:
            return probs
        return self._marginal_frame(probs, positions)

    def _given_codes(self, given: dict | None) -> dict[int, int] | None:
        """Original codes of the ``given`` values, keyed by column position."""
        if not given:
            return None
        if not isinstance(given, dict):
            raise ValueError("given must be a dict {column: value}.")
        self._positions(list(given), "given")
        return self._encode_conditions(given)

    def _marginal_frame(self, probs: np.ndarray, positions: tuple[int, ...]) -> pd.DataFrame:
        """Long form of a marginal: decoded values and probabilities."""
        cells = np.indices(probs.shape).reshape(len(positions), -1)
        data = {self.domain_.columns[j]: self.domain_.specs[j].decode(cells[a])
                for a, j in enumerate(positions)}
        data["probability"] = probs.ravel()
        return pd.DataFrame(data)


def _fix_conditioned_axes(probs: np.ndarray, positions: tuple[int, ...],
                          conditions: dict[int, int]) -> np.ndarray:
    """Put all the mass of a conditioned column's axis on its fixed code.

    The expansion spreads a merged code over its original codes; a column
    that is conditioned on one of them takes that code with probability 1.
    """
    for axis, j in enumerate(positions):
        if j not in conditions:
            continue
        index = [slice(None)] * probs.ndim
        index[axis] = conditions[j]
        fixed = np.zeros_like(probs)
        fixed[tuple(index)] = probs[tuple(index)]
        probs = fixed / fixed.sum()
    return probs
