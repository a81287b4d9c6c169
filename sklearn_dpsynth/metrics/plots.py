"""Plots of real-vs-synthetic marginals and of metrics against the privacy budget.

matplotlib is optional: it is imported when a plot is made.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._marginals import contingency_counts
from .tables import encode_tables, prepare_tables

__all__ = ["plot_marginals", "plot_metric_vs_epsilon"]


def _pyplot() -> Any:
    """matplotlib.pyplot, with a clear error if matplotlib is missing."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "Plotting needs matplotlib: pip install matplotlib "
            "(or the sklearn-dpsynth[plots] extra)."
        ) from exc
    return plt


def _check_columns(columns: Sequence | None, available: list) -> list:
    """Columns to plot, validated against the table's columns."""
    if columns is None:
        return available
    columns = list(columns)
    unknown = [c for c in columns if c not in available]
    if unknown or not columns:
        raise ValueError(f"columns must be a non-empty subset of the table's columns; unknown: {unknown}.")
    return columns


def _bar_panel(ax: Any, labels: list, p: np.ndarray, q: np.ndarray, title: str) -> None:
    """Side-by-side bars of the real and synthetic frequencies of one column."""
    positions = np.arange(len(labels))
    ax.bar(positions - 0.2, p, width=0.4, label="real")
    ax.bar(positions + 0.2, q, width=0.4, label="synthetic")
    ax.set_title(str(title))
    ax.set_ylabel("frequency")
    if len(labels) <= 20:
        ax.set_xticks(positions)
        ax.set_xticklabels([str(label) for label in labels], rotation=90, fontsize="small")


def plot_marginals(
    real: Any,
    synth: Any,
    columns: Sequence | None = None,
    *,
    domain: Mapping | None = None,
    bins: int = 20,
    n_cols: int = 3,
) -> Any:
    """Bar charts of the real and synthetic 1-way marginals, one panel per column.

    Parameters
    ----------
    real, synth : DataFrame or 2-D array
        Real and synthetic tables with the same columns.
    columns : sequence, default=None
        Columns to plot (all by default).
    domain : mapping, default=None
        Column domain (int codes are shown as is; numeric columns binned).
    bins : int, default=20
        Equal-width bins of numeric columns (edges from the real range).
    n_cols : int, default=3
        Panels per row of the grid.

    Returns
    -------
    figure : matplotlib.figure.Figure
        A grid of bar charts (normalised frequencies, real vs synthetic).
    """
    plt = _pyplot()
    real_df, synth_df = prepare_tables(real, ("synth", synth))
    columns = _check_columns(columns, list(real_df.columns))
    if not isinstance(n_cols, int) or n_cols < 1:
        raise ValueError(f"n_cols must be a positive integer, got {n_cols!r}.")
    encoded = encode_tables([real_df, synth_df], domain, bins, columns=columns)
    n_cols = min(n_cols, len(columns))
    n_rows = math.ceil(len(columns) / n_cols)
    figure, axes = plt.subplots(n_rows, n_cols, figsize=(4 * n_cols, 3 * n_rows), squeeze=False)
    for j, column in enumerate(columns):
        p = contingency_counts(encoded.codes[0], encoded.sizes, [j])
        q = contingency_counts(encoded.codes[1], encoded.sizes, [j])
        _bar_panel(axes.flat[j], encoded.labels[j], p / p.sum(), q / q.sum(), column)
    for ax in list(axes.flat)[len(columns):]:
        ax.set_visible(False)
    axes.flat[0].legend()
    figure.tight_layout()
    return figure


def _metric_values(results: pd.DataFrame, metric: str, value_col: str) -> pd.DataFrame:
    """Rows of one metric from a tidy (``metric``/``value``) or wide table."""
    if "metric" in results.columns:
        rows = results[results["metric"] == metric]
        if rows.empty:
            raise ValueError(f"metric {metric!r} is not in the results' metric column.")
        return rows.rename(columns={value_col: "_value"})
    if metric not in results.columns:
        raise ValueError(f"metric {metric!r} is not a column of the results.")
    return results.rename(columns={metric: "_value"})


def plot_metric_vs_epsilon(
    results: pd.DataFrame,
    metric: str,
    *,
    method_col: str = "method",
    epsilon_col: str = "epsilon",
    value_col: str = "value",
    ax: Any = None,
) -> Any:
    """Mean +- standard deviation of a metric against epsilon, one line per method.

    Parameters
    ----------
    results : DataFrame
        Either tidy (columns ``method``, ``epsilon``, ``metric``, ``value``, one
        row per run and metric, as made by
        ``benchmarks.run.results_frame``) or wide (one column per metric).
        Repeated runs (seeds) are averaged.
    metric : str
        Metric to plot.
    method_col, epsilon_col, value_col : str
        Names of the method, epsilon and value columns.
    ax : matplotlib Axes, default=None
        Axes to draw on (a new figure by default).

    Returns
    -------
    figure : matplotlib.figure.Figure
        Error bars of the metric against epsilon (log scale).
    """
    plt = _pyplot()
    for column in (method_col, epsilon_col):
        if column not in results.columns:
            raise ValueError(f"results has no {column!r} column.")
    rows = _metric_values(results, metric, value_col)
    if ax is None:
        figure, ax = plt.subplots(figsize=(5, 3.5))
    else:
        figure = ax.figure
    for method, group in rows.groupby(method_col, sort=True):
        stats = group.groupby(epsilon_col)["_value"].agg(["mean", "std"]).sort_index()
        ax.errorbar(stats.index.to_numpy(dtype=float), stats["mean"], yerr=stats["std"].fillna(0.0),
                    marker="o", capsize=3, label=str(method))
    ax.set_xscale("log")
    ax.set_xlabel("epsilon")
    ax.set_ylabel(metric)
    ax.legend()
    return figure
