"""How MST-style methods split their budget between their three phases.

Used by MST and MST+public: the 1-way marginals are measured first, then
(optionally) a spanning tree of pairs is selected privately, then the
tree's pairs are measured.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["budget_shares"]


def budget_shares(private_selection: bool, measure_cliques: bool,
                  selection_weight: float = 1.0) -> tuple[float, float, float]:
    """Shares of the budget of 1-way measurement, selection and clique measurement.

    Each phase that runs gets a weight -- 1 for each measuring phase,
    ``selection_weight`` for the selection -- and the shares are the
    weights over their sum.

    Parameters
    ----------
    private_selection : bool
        Whether the pairs are selected on the private table (else the
        selection share is 0).
    measure_cliques : bool
        Whether pairs are measured at all (else their share is 0).
    selection_weight : float, default=1.0
        The selection's weight against each measuring phase's 1 (``> 0``);
        1 splits equally among the phases that run.

    Returns
    -------
    tuple of float
        The three shares, adding up to 1.
    """
    if not (math.isfinite(selection_weight) and selection_weight > 0):
        raise ValueError(f"selection_weight must be positive and finite, got "
                         f"{selection_weight!r}.")
    parts = np.array([1.0, selection_weight * float(private_selection), float(measure_cliques)])
    shares = parts / parts.sum()
    return float(shares[0]), float(shares[1]), float(shares[2])
