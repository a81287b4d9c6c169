"""How MST-style methods split their budget between their three phases.

Used by MST and MST+public: the 1-way marginals are measured first, then
(optionally) a spanning tree of pairs is selected privately, then the
tree's pairs are measured.
"""

from __future__ import annotations

import numpy as np

__all__ = ["budget_shares"]


def budget_shares(private_selection: bool, measure_cliques: bool) -> tuple[float, float, float]:
    """Shares of the budget of 1-way measurement, selection and clique measurement.

    Parameters
    ----------
    private_selection : bool
        Whether the pairs are selected on the private table (else the
        selection share is 0).
    measure_cliques : bool
        Whether pairs are measured at all (else their share is 0).

    Returns
    -------
    tuple of float
        The three shares, equal among the phases that run, adding up to 1.
    """
    parts = np.array([1.0, float(private_selection), float(measure_cliques)])
    shares = parts / parts.sum()
    return float(shares[0]), float(shares[1]), float(shares[2])
