"""Per-column statistical fidelity: Kolmogorov-Smirnov and chi-square scores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._marginals import contingency_counts
from .tables import (
    CATEGORICAL,
    NUMERIC,
    check_choice,
    column_kinds,
    encode_tables,
    numeric_values,
    prepare_tables,
    reduce_values,
)

__all__ = ["ks_score", "chi_square_score", "ks_statistic"]

# Pseudo-count given to a category that appears only in the synthetic data,
# so that its expected frequency is tiny but not zero.
_UNSEEN_PSEUDO_COUNT = 1e-6


def ks_statistic(a: Any, b: Any) -> float:
    """Two-sample Kolmogorov-Smirnov statistic ``sup_x |F_a(x) - F_b(x)|``.

    Parameters
    ----------
    a, b : array-like of float
        The two samples (non-empty, no missing values).

    Returns
    -------
    statistic : float
        In ``[0, 1]``: the largest gap between the empirical CDFs.
    """
    a = np.sort(np.asarray(a, dtype=float))
    b = np.sort(np.asarray(b, dtype=float))
    if a.size == 0 or b.size == 0:
        raise ValueError("Both samples must be non-empty.")
    grid = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, grid, side="right") / a.size
    cdf_b = np.searchsorted(b, grid, side="right") / b.size
    return float(np.max(np.abs(cdf_a - cdf_b)))


def _observed(values: np.ndarray, column: Any, name: str) -> np.ndarray:
    """Drop missing values, refusing an all-missing column."""
    values = values[~np.isnan(values)]
    if values.size == 0:
        raise ValueError(f"Column {column!r} has no non-missing value in the {name} table.")
    return values


def ks_score(
    real: Any,
    synth: Any,
    domain: Mapping | None = None,
    *,
    reduce: str = "mean",
) -> float | pd.Series:
    """One minus the two-sample Kolmogorov-Smirnov statistic, per numeric column.

    For every numeric column, ``1 - sup_x |F_real(x) - F_synth(x)|`` where
    ``F`` are the empirical CDFs (missing values dropped); the statistic is
    that of :func:`scipy.stats.ks_2samp`.

    Parameters
    ----------
    real, synth : DataFrame or 2-D array
        Real and synthetic tables with the same columns.
    domain : mapping, default=None
        Column domain; only columns that are numeric (a ``(low, high)`` domain
        entry, or a numeric dtype without a domain entry) are scored.
    reduce : {"mean", "max", "none"}, default="mean"
        Average or best score over the numeric columns, or all of them as a
        Series indexed by column.

    Returns
    -------
    score : float or Series
        In ``[0, 1]``, 1 meaning identical empirical distributions.
    """
    check_choice(reduce, "reduce", ("mean", "max", "none"))
    real_df, synth_df = prepare_tables(real, ("synth", synth))
    columns = [c for c, kind in column_kinds(real_df, domain).items() if kind == NUMERIC]
    if not columns:
        raise ValueError("ks_score needs at least one numeric column; the table has none.")
    scores = {}
    for column in columns:
        a = _observed(numeric_values(real_df[column], column), column, "real")
        b = _observed(numeric_values(synth_df[column], column), column, "synthetic")
        scores[column] = 1.0 - ks_statistic(a, b)
    return reduce_values(pd.Series(scores, name="ks_score", dtype=float), reduce)


def _frequencies(real_counts: np.ndarray, synth_counts: np.ndarray, scale: str) -> tuple:
    """Observed (synthetic) and expected (real) frequencies of the seen categories."""
    seen = (real_counts > 0) | (synth_counts > 0)
    real_counts = np.where(real_counts > 0, real_counts, _UNSEEN_PSEUDO_COUNT)[seen]
    synth_counts = synth_counts[seen]
    total = synth_counts.sum() if scale == "count" else 1.0
    observed = synth_counts / synth_counts.sum() * total
    expected = real_counts / real_counts.sum() * total
    return observed, expected


def chi_square_pvalue(observed: np.ndarray, expected: np.ndarray) -> float:
    """p-value of Pearson's chi-square goodness-of-fit statistic.

    ``sum (o - e)^2 / e`` against a chi-square law with ``len(o) - 1`` degrees
    of freedom; 1.0 when there is a single category.
    """
    if observed.size <= 1:
        return 1.0
    statistic = float(np.sum((observed - expected) ** 2 / expected))
    return float(stats.chi2.sf(statistic, observed.size - 1))


def chi_square_score(
    real: Any,
    synth: Any,
    domain: Mapping | None = None,
    *,
    scale: str = "frequency",
    reduce: str = "mean",
) -> float | pd.Series:
    """Chi-square test p-value of the synthetic category frequencies, per categorical column.

    For every categorical column, Pearson's chi-square goodness-of-fit test of
    the synthetic category frequencies (observed) against the real ones
    (expected), over the categories seen in either table; a category seen
    only in the synthetic data gets a tiny expected pseudo-count (1e-6), which
    drives the p-value towards 0.  With the default ``scale="frequency"`` the
    test is applied to relative frequencies, as SDMetrics' CSTest (used by
    DP-TBART) does; this makes the score insensitive to the sample size and
    close to 1 unless the frequencies differ grossly.  ``scale="count"``
    applies it to the synthetic counts (expected: the real proportions times
    the synthetic sample size), the textbook test, whose p-value drops to 0
    for any visible difference on large tables.

    Parameters
    ----------
    real, synth : DataFrame or 2-D array
        Real and synthetic tables with the same columns.
    domain : mapping, default=None
        Column domain; columns with an int or list domain entry, or without a
        domain entry and a non-numeric dtype, are categorical.
    scale : {"frequency", "count"}, default="frequency"
        Whether the test is applied to relative frequencies or to counts.
    reduce : {"mean", "max", "none"}, default="mean"
        Average or best p-value over categorical columns, or all of them as a
        Series indexed by column.

    Returns
    -------
    score : float or Series
        p-values in ``[0, 1]``; higher means the synthetic frequencies are
        more compatible with the real ones.
    """
    check_choice(scale, "scale", ("frequency", "count"))
    check_choice(reduce, "reduce", ("mean", "max", "none"))
    real_df, synth_df = prepare_tables(real, ("synth", synth))
    columns = [c for c, kind in column_kinds(real_df, domain).items() if kind == CATEGORICAL]
    if not columns:
        raise ValueError("chi_square_score needs at least one categorical column; the table has none.")
    encoded = encode_tables([real_df, synth_df], domain, columns=columns)
    scores = {}
    for j, column in enumerate(columns):
        real_counts = contingency_counts(encoded.codes[0], encoded.sizes, [j])
        synth_counts = contingency_counts(encoded.codes[1], encoded.sizes, [j])
        scores[column] = chi_square_pvalue(*_frequencies(real_counts, synth_counts, scale))
    return reduce_values(pd.Series(scores, name="chi_square_score", dtype=float), reduce)
