"""Marginal-based fidelity: workload error, histogram intersection, Pair.

All three compare normalised k-way histograms (marginals) of the real and the
synthetic table.  For two distributions ``p`` and ``q`` over the same cells,

* the total-variation distance is ``TVD = 0.5 * sum_i |p_i - q_i|`` in
  ``[0, 1]`` (0 = identical), and
* the histogram intersection is ``sum_i min(p_i, q_i) = 1 - TVD`` in
  ``[0, 1]`` (1 = identical).

Numeric columns are cut into equal-width bins whose edges come from the real
table's range (or from the public bounds of ``domain``); the same edges are
applied to the synthetic table, whose out-of-range values fall into the end
bins.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from .._marginals import contingency_counts
from .tables import (
    Encoded,
    bins_tuple,
    check_choice,
    encode_tables,
    prepare_tables,
    reduce_values,
)

__all__ = ["workload_error", "histogram_intersection", "pair_similarity", "marginal_tvd"]

# Above this many cells a marginal is counted over its observed cells only.
_DENSE_CELL_LIMIT = 2**22


def _joint_histograms(encoded: Encoded, columns: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Normalised joint histograms of some columns in real and synthetic data.

    Parameters
    ----------
    encoded : Encoded
        Codes of the real table (first) and the synthetic table (second).
    columns : tuple of int
        Positions of the columns in the code matrices.

    Returns
    -------
    p, q : ndarray of shape (n_cells,)
        Probabilities of the same cells in the real and the synthetic table.
    """
    real, synth = encoded.codes[0], encoded.codes[1]
    n_cells = math.prod(encoded.sizes[c] for c in columns)
    if n_cells <= _DENSE_CELL_LIMIT:
        p = contingency_counts(real, encoded.sizes, columns).ravel()
        q = contingency_counts(synth, encoded.sizes, columns).ravel()
    else:
        p, q = _observed_cell_counts(real, synth, columns)
    return p / p.sum(), q / q.sum()


def _observed_cell_counts(real: np.ndarray, synth: np.ndarray, columns: tuple) -> tuple:
    """Counts of the cells observed in either table (for huge marginals)."""
    both = np.vstack([real[:, list(columns)], synth[:, list(columns)]])
    _, cell = np.unique(both, axis=0, return_inverse=True)
    cell = cell.reshape(-1, 1)
    n_cells = int(cell.max()) + 1
    p = contingency_counts(cell[: len(real)], [n_cells], [0])
    q = contingency_counts(cell[len(real):], [n_cells], [0])
    return p, q


def marginal_tvd(p: np.ndarray, q: np.ndarray) -> float:
    """Total-variation distance ``0.5 * sum |p - q|`` of two distributions.

    Parameters
    ----------
    p, q : array-like
        Probabilities over the same cells (each summing to 1).

    Returns
    -------
    tvd : float
        In ``[0, 1]``; 0 when the distributions are identical, 1 when their
        supports are disjoint.
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape, got {p.shape} and {q.shape}.")
    return float(0.5 * np.abs(p - q).sum())


def _check_k(k: Any, n_columns: int) -> int:
    """Validate the order ``k`` of the marginals."""
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= n_columns:
        raise ValueError(f"k must be an integer in 1..{n_columns} (number of columns), got {k!r}.")
    return int(k)


def select_subsets(
    n_columns: int, k: int, n_marginals: int | None = None, random_state: Any = None
) -> list[tuple[int, ...]]:
    """All k-subsets of column positions, or ``n_marginals`` random ones.

    Parameters
    ----------
    n_columns : int
        Number of columns.
    k : int
        Size of the subsets.
    n_marginals : int, default=None
        Number of distinct subsets drawn uniformly without replacement; all
        subsets when None or at least their number.
    random_state : int, RandomState or None
        Seed of the draw.

    Returns
    -------
    subsets : list of tuple of int
        Sorted subsets, in lexicographic order.
    """
    total = math.comb(n_columns, k)
    if n_marginals is None or n_marginals >= total:
        return list(itertools.combinations(range(n_columns), k))
    if not isinstance(n_marginals, (int, np.integer)) or n_marginals < 1:
        raise ValueError(f"n_marginals must be a positive integer or None, got {n_marginals!r}.")
    rng = check_random_state(random_state)
    if total <= 1_000_000:
        every = list(itertools.combinations(range(n_columns), k))
        picked = rng.choice(total, size=int(n_marginals), replace=False)
        return sorted(every[i] for i in picked)
    chosen: set = set()
    while len(chosen) < n_marginals:
        chosen.add(tuple(sorted(rng.choice(n_columns, size=k, replace=False).tolist())))
    return sorted(chosen)


def _per_marginal_tvd(encoded: Encoded, subsets: list) -> pd.Series:
    """TVD of every marginal, indexed by tuples of column names."""
    values = [marginal_tvd(*_joint_histograms(encoded, cols)) for cols in subsets]
    names = [tuple(encoded.columns[c] for c in cols) for cols in subsets]
    return pd.Series(values, index=pd.Index(names, tupleize_cols=False), name="tvd", dtype=float)


def workload_error(
    real: Any,
    synth: Any,
    k: int = 2,
    domain: Mapping | None = None,
    *,
    n_marginals: int | None = None,
    random_state: Any = None,
    reduce: str = "mean",
    bins: int = 20,
) -> float | pd.Series:
    """Total-variation distance between real and synthetic k-way marginals.

    For every set of ``k`` columns the normalised joint histograms ``p``
    (real) and ``q`` (synthetic) are compared by
    ``TVD = 0.5 * sum_cells |p - q|`` (half the L1 distance), the workload
    error used by MST/AIM.

    Parameters
    ----------
    real, synth : DataFrame or 2-D array
        Real and synthetic tables with the same columns (an array synthetic
        table takes the real table's column names).
    k : int, default=2
        Order of the marginals (1, 2, 3, ...).
    domain : mapping, default=None
        ``{column: spec}`` as for the synthesizers: an int ``k`` means integer
        codes ``0..k-1`` (used as is, no binning), a list the categories, a
        ``(low, high)`` tuple a numeric column binned over these bounds.
        Columns not in ``domain``: categorical by category, numeric binned
        over the real range.
    n_marginals : int, default=None
        Evaluate this many k-subsets of columns drawn at random without
        replacement instead of all of them.
    random_state : int, RandomState or None, default=None
        Seed of the subset draw (only used with ``n_marginals``).
    reduce : {"mean", "max", "none"}, default="mean"
        Average or worst error over the marginals, or all of them.
    bins : int, default=20
        Number of equal-width bins of numeric columns.

    Returns
    -------
    error : float or Series
        In ``[0, 1]``, 0 meaning identical marginals.  With
        ``reduce="none"``, a Series of per-marginal TVDs indexed by tuples of
        column names.

    Examples
    --------
    >>> import pandas as pd
    >>> real = pd.DataFrame({"a": ["x", "x", "y", "y"]})
    >>> synth = pd.DataFrame({"a": ["x", "x", "x", "y"]})
    >>> workload_error(real, synth, k=1)
    0.25
    """
    check_choice(reduce, "reduce", ("mean", "max", "none"))
    real_df, synth_df = prepare_tables(real, ("synth", synth))
    k = _check_k(k, real_df.shape[1])
    encoded = encode_tables([real_df, synth_df], domain, bins)
    subsets = select_subsets(real_df.shape[1], k, n_marginals, random_state)
    return reduce_values(_per_marginal_tvd(encoded, subsets), reduce)


def _mean_intersection(real: Any, synth: Any, k: int, domain: Mapping | None, bins: Any,
                       n_marginals: int | None, random_state: Any) -> float:
    """Mean histogram intersection of k-way marginals, averaged over ``bins``."""
    real_df, synth_df = prepare_tables(real, ("synth", synth))
    k = _check_k(k, real_df.shape[1])
    subsets = select_subsets(real_df.shape[1], k, n_marginals, random_state)
    scores = []
    for n_bins in bins_tuple(bins):
        encoded = encode_tables([real_df, synth_df], domain, n_bins)
        scores.append(1.0 - _per_marginal_tvd(encoded, subsets).mean())
    return float(np.mean(scores))


def histogram_intersection(
    real: Any,
    synth: Any,
    domain: Mapping | None = None,
    *,
    bins: int | tuple = (20, 50),
) -> float:
    """HIST: normalised histogram intersection of the 1-way marginals.

    For every column, ``sum_i min(p_i, q_i)`` over the categories (or bins)
    ``i`` of the real (``p``) and synthetic (``q``) normalised histograms,
    averaged over columns (equivalently ``1 -`` the mean 1-way TVD), as in
    DP-2Stage (Afonja et al., appendix C).

    Parameters
    ----------
    real, synth : DataFrame or 2-D array
        Real and synthetic tables with the same columns.
    domain : mapping, default=None
        Column domain (see :func:`workload_error`).
    bins : int or tuple of int, default=(20, 50)
        Equal-width bins of numeric columns; with a tuple the score is
        averaged over the binnings (DP-2Stage uses 20 and 50).

    Returns
    -------
    score : float
        In ``[0, 1]``, 1 meaning identical 1-way marginals.
    """
    return _mean_intersection(real, synth, 1, domain, bins, None, None)


def pair_similarity(
    real: Any,
    synth: Any,
    domain: Mapping | None = None,
    *,
    bins: int | tuple = (20, 50),
    n_marginals: int | None = None,
    random_state: Any = None,
) -> float:
    """Pair: normalised histogram intersection of the 2-way marginals.

    ``sum_cells min(p, q)`` of the joint histograms of every pair of columns,
    averaged over pairs (equivalently ``1 -`` the mean 2-way TVD), as in
    DP-2Stage (Afonja et al., appendix C).

    Parameters
    ----------
    real, synth : DataFrame or 2-D array
        Real and synthetic tables with the same columns (at least 2).
    domain : mapping, default=None
        Column domain (see :func:`workload_error`).
    bins : int or tuple of int, default=(20, 50)
        Equal-width bins of numeric columns; with a tuple the score is
        averaged over the binnings.
    n_marginals : int, default=None
        Use this many random pairs instead of all of them.
    random_state : int, RandomState or None, default=None
        Seed of the pair draw.

    Returns
    -------
    score : float
        In ``[0, 1]``, 1 meaning identical 2-way marginals.
    """
    return _mean_intersection(real, synth, 2, domain, bins, n_marginals, random_state)
