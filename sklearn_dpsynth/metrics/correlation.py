"""CorAcc: agreement of pairwise association levels between real and synthetic data.

Association of a pair of columns:

* categorical-categorical: Cramer's V with Bergsma's bias correction,
* numeric-categorical: the correlation ratio eta,
* numeric-numeric: the absolute Pearson correlation,

all in ``[0, 1]``, each bucketed into the levels low ``[0, 0.1)``, weak
``[0.1, 0.3)``, medium ``[0.3, 0.5)`` and strong ``[0.5, 1]``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._marginals import contingency_counts
from .tables import (
    CATEGORICAL,
    NUMERIC,
    column_kinds,
    encode_tables,
    numeric_values,
    prepare_tables,
)

__all__ = [
    "correlation_accuracy",
    "cramers_v",
    "correlation_ratio",
    "association_level",
    "LEVELS",
]

#: Names of the association levels, weakest first.
LEVELS = ("low", "weak", "medium", "strong")
_LEVEL_EDGES = np.array([0.1, 0.3, 0.5])


def association_level(value: float) -> str:
    """Level of an association in ``[0, 1]``: low, weak, medium or strong.

    Parameters
    ----------
    value : float
        Association strength.

    Returns
    -------
    level : {"low", "weak", "medium", "strong"}
        ``[0, 0.1)`` low, ``[0.1, 0.3)`` weak, ``[0.3, 0.5)`` medium,
        ``[0.5, 1]`` strong.
    """
    return LEVELS[int(np.searchsorted(_LEVEL_EDGES, value, side="right"))]


def cramers_v(table: Any) -> float:
    """Bias-corrected Cramer's V of a contingency table (Bergsma, 2013).

    With ``n`` observations, ``r x c`` non-empty rows/columns and
    ``phi2 = chi2 / n``:
    ``phi2~ = max(0, phi2 - (r-1)(c-1)/(n-1))``,
    ``r~ = r - (r-1)^2/(n-1)``, ``c~ = c - (c-1)^2/(n-1)`` and
    ``V~ = sqrt(phi2~ / min(r~ - 1, c~ - 1))``.

    Parameters
    ----------
    table : array-like of shape (r, c)
        Counts; empty rows and columns are ignored.

    Returns
    -------
    v : float
        In ``[0, 1]``; 0 when either variable takes a single value.
    """
    table = np.asarray(table, dtype=float)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    n = table.sum()
    r, c = table.shape
    if r < 2 or c < 2 or n < 2:
        return 0.0
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    phi2 = float(np.sum((table - expected) ** 2 / expected)) / n
    phi2_corr = max(0.0, phi2 - (r - 1) * (c - 1) / (n - 1))
    r_corr = r - (r - 1) ** 2 / (n - 1)
    c_corr = c - (c - 1) ** 2 / (n - 1)
    denominator = min(r_corr - 1, c_corr - 1)
    if denominator <= 0:
        return 0.0
    return float(min(1.0, np.sqrt(phi2_corr / denominator)))


def correlation_ratio(categories: Any, values: Any) -> float:
    """Correlation ratio eta of a numeric variable given a categorical one.

    ``eta = sqrt(SS_between / SS_total)`` where ``SS_between`` is the sum over
    categories of ``n_c (mean_c - mean)^2`` and ``SS_total`` the total sum of
    squares of ``values``.

    Parameters
    ----------
    categories : array-like of int of shape (n,)
        Non-negative integer category codes.
    values : array-like of float of shape (n,)
        Numeric values.

    Returns
    -------
    eta : float
        In ``[0, 1]``; 0 when ``values`` is constant.
    """
    codes = np.asarray(categories, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    counts = np.bincount(codes)
    sums = np.bincount(codes, weights=values)
    present = counts > 0
    means = sums[present] / counts[present]
    grand = values.mean()
    ss_total = float(np.sum((values - grand) ** 2))
    if ss_total <= 0:
        return 0.0
    ss_between = float(np.sum(counts[present] * (means - grand) ** 2))
    return float(np.sqrt(min(1.0, ss_between / ss_total)))


def _abs_pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Absolute Pearson correlation, 0 when either variable is constant."""
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt(np.sum(x**2) * np.sum(y**2))
    if denominator <= 0:
        return 0.0
    return float(min(1.0, abs(np.sum(x * y)) / denominator))


def _pair_association(frame: pd.DataFrame, codes: np.ndarray, sizes: list, kinds: dict,
                      i: int, j: int) -> float:
    """Association of columns ``i`` and ``j`` of one table, by their kinds."""
    columns = list(frame.columns)
    kind_i, kind_j = kinds[columns[i]], kinds[columns[j]]
    if kind_i == CATEGORICAL and kind_j == CATEGORICAL:
        return cramers_v(contingency_counts(codes, sizes, [i, j]))
    x = numeric_values(frame[columns[i]], columns[i]) if kind_i == NUMERIC else None
    y = numeric_values(frame[columns[j]], columns[j]) if kind_j == NUMERIC else None
    if x is not None and y is not None:
        keep = ~(np.isnan(x) | np.isnan(y))
        return _abs_pearson(x[keep], y[keep]) if keep.sum() > 1 else 0.0
    cat, num = (codes[:, i], y) if x is None else (codes[:, j], x)
    keep = ~np.isnan(num)
    return correlation_ratio(cat[keep], num[keep]) if keep.any() else 0.0


def correlation_accuracy(
    real: Any,
    synth: Any,
    domain: Mapping | None = None,
    *,
    return_pairs: bool = False,
) -> float | pd.DataFrame:
    """CorAcc: fraction of column pairs whose association level is preserved.

    For every pair of columns the association (bias-corrected Cramer's V,
    correlation ratio or absolute Pearson correlation, by the columns' kinds)
    is computed in the real and in the synthetic table and bucketed into
    low ``[0, 0.1)``, weak ``[0.1, 0.3)``, medium ``[0.3, 0.5)`` or strong
    ``[0.5, 1]``; the score is the fraction of pairs with the same level
    (DP-2Stage, appendix C).  Missing values are dropped pairwise for numeric
    columns and treated as a category for categorical ones.

    Parameters
    ----------
    real, synth : DataFrame or 2-D array
        Real and synthetic tables with the same columns (at least 2).
    domain : mapping, default=None
        Column domain: int or list entries are categorical, ``(low, high)``
        numeric; other columns by dtype.
    return_pairs : bool, default=False
        Return a per-pair DataFrame (columns ``column_1``, ``column_2``,
        ``real``, ``synth``, ``real_level``, ``synth_level``, ``match``)
        instead of the fraction.

    Returns
    -------
    score : float or DataFrame
        Fraction in ``[0, 1]``; 1 when every pair keeps its level.
    """
    real_df, synth_df = prepare_tables(real, ("synth", synth))
    if real_df.shape[1] < 2:
        raise ValueError("correlation_accuracy needs at least 2 columns.")
    kinds = column_kinds(real_df, domain)
    encoded = encode_tables([real_df, synth_df], domain)
    rows = []
    for i, j in itertools.combinations(range(real_df.shape[1]), 2):
        a_real = _pair_association(real_df, encoded.codes[0], encoded.sizes, kinds, i, j)
        a_synth = _pair_association(synth_df, encoded.codes[1], encoded.sizes, kinds, i, j)
        rows.append({
            "column_1": real_df.columns[i], "column_2": real_df.columns[j],
            "real": a_real, "synth": a_synth,
            "real_level": association_level(a_real), "synth_level": association_level(a_synth),
        })
    pairs = pd.DataFrame(rows)
    pairs["match"] = pairs["real_level"] == pairs["synth_level"]
    return pairs if return_pairs else float(pairs["match"].mean())
