"""Figures of the report, rendered with matplotlib's object API to base64 PNG.

No pyplot: figures are built with :class:`matplotlib.figure.Figure`, which
needs no backend and leaves no global state behind.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
import pandas as pd

from ..domain import OTHER

#: Categories shown per categorical column (the most frequent real ones).
MAX_CATEGORIES_SHOWN = 20

#: Longest category label drawn in full (longer ones are cut with an ellipsis).
MAX_LABEL_LENGTH = 18

#: Most tick labels on a numeric or date axis.
MAX_TICKS = 6

#: A date-time column with at most this many distinct values gets one bar per value.
MAX_DATE_BARS = 40


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError("The HTML report needs matplotlib: "
                          "pip install 'sklearn-dpsynth[report]'.") from exc
    return Figure(figsize=(width, height), dpi=90, layout="constrained")


def to_png_base64(figure: Any) -> str:
    """The figure as a base64-encoded PNG (for a ``data:`` URI)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _histograms(ax: Any, real: np.ndarray, synth: np.ndarray, edges: np.ndarray) -> str:
    """Overlaid histograms, each bar the share of its table's present values, on the
    edges shared by both tables; returns a line counting the synthetic values beyond them.
    """
    for data, label in ((real, "real"), (synth, "synthetic")):
        if data.size:
            ax.hist(data, bins=edges, weights=np.full(data.size, 1.0 / data.size),
                    histtype="stepfilled", alpha=0.45, label=label)
    ax.set_ylabel("share of rows")
    outside = float(np.mean((synth < edges[0]) | (synth > edges[-1]))) if synth.size else 0.0
    return f"synthetic beyond the real range: {_share(outside)}" if outside else ""


def _value_edges(real: np.ndarray, synth: np.ndarray) -> np.ndarray:
    """30 equal-width bins over the real range (both ranges when the real one is a point)."""
    low, high = (real.min(), real.max()) if real.size else (synth.min(), synth.max())
    if high == low:
        values = np.concatenate([real, synth])
        low, high = values.min(), values.max()
    if high == low:
        return np.array([low - 0.5, high + 0.5])
    return np.linspace(low, high, 31)


def _numeric_panel(ax: Any, real: np.ndarray, synth: np.ndarray) -> str:
    """Histograms on common edges over the real range, in the column's units."""
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    real, synth = real[np.isfinite(real)], synth[np.isfinite(synth)]
    if real.size + synth.size == 0:
        ax.text(0.5, 0.5, "no finite values", ha="center", transform=ax.transAxes)
        return ""
    note = _histograms(ax, real, synth, _value_edges(real, synth))
    values = np.concatenate([real, synth])
    integer = bool(np.all(values == np.rint(values)))
    ax.xaxis.set_major_locator(MaxNLocator(nbins=MAX_TICKS, integer=integer))
    formatter = ScalarFormatter(useOffset=False)  # years as 1995, not 5 + 1.99e3
    formatter.set_powerlimits((-4, 6))
    ax.xaxis.set_major_formatter(formatter)
    ax.tick_params(axis="x", labelrotation=30, labelsize="small")
    return note


def _date_edges(real: np.ndarray, synth: np.ndarray) -> np.ndarray:
    """Histogram edges of date numbers shared by both tables.

    A real column on few dates (monthly data, say) gets one bar per real
    date, each reaching half-way to its neighbours; else 30 equal-width bins
    over the real range.
    """
    distinct = np.unique(real)
    if distinct.size > MAX_DATE_BARS or distinct.size < 2:
        return _value_edges(real, synth)
    middles = (distinct[1:] + distinct[:-1]) / 2
    first = distinct[0] - (middles[0] - distinct[0])
    last = distinct[-1] + (distinct[-1] - middles[-1])
    return np.r_[first, middles, last]


def _datetime_panel(ax: Any, real: pd.Series, synth: pd.Series) -> str:
    """Histograms over time (share of each table's dated rows per bin), with date ticks."""
    from matplotlib import dates

    real_days, synth_days = (dates.date2num(series.dropna().to_numpy())
                             for series in (real, synth))
    if real_days.size + synth_days.size == 0:
        ax.text(0.5, 0.5, "no dates", ha="center", transform=ax.transAxes)
        return ""
    note = _histograms(ax, real_days, synth_days, _date_edges(real_days, synth_days))
    locator = dates.AutoDateLocator(minticks=3, maxticks=MAX_TICKS)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(dates.ConciseDateFormatter(locator))
    ax.tick_params(axis="x", labelsize="small")
    return note


def _share(value: float) -> str:
    """A share as a percentage; a tiny non-zero one as "<0.1%" rather than "0.0%"."""
    return "<0.1%" if 0 < value < 0.001 else f"{value:.1%}"


def _short(label: str) -> str:
    return label if len(label) <= MAX_LABEL_LENGTH else label[:MAX_LABEL_LENGTH - 1] + "\u2026"


def _categorical_panel(ax: Any, real: pd.Series, synth: pd.Series) -> None:
    """Grouped bars of the most frequent real categories (and ``<other>`` when synthesised)."""
    p = real.astype(str).value_counts(normalize=True)
    q = synth.astype(str).value_counts(normalize=True)
    labels = list(p.index[:MAX_CATEGORIES_SHOWN])
    labels += [c for c in q.index if c not in p.index][:max(0, MAX_CATEGORIES_SHOWN - len(labels))]
    if OTHER in q.index and OTHER not in labels:  # never hide a collapse to <other>
        labels[-1:] = [OTHER]
    positions = np.arange(len(labels))
    ax.bar(positions - 0.2, p.reindex(labels, fill_value=0).to_numpy(), width=0.4, label="real")
    ax.bar(positions + 0.2, q.reindex(labels, fill_value=0).to_numpy(), width=0.4,
           label="synthetic")
    ax.set_xticks(positions)
    ax.set_xticklabels([_short(label) for label in labels], rotation=90, fontsize="small")
    ax.set_ylabel("frequency")
    share = float(q.get(OTHER, 0.0))
    if share >= 0.5:
        ax.text(0.98, 0.95, f"{share:.0%} of synthetic values are {OTHER}", ha="right",
                va="top", transform=ax.transAxes, fontsize="small", color="#a00")


def column_figure(name: str, real: pd.Series, synth: pd.Series, kind: str) -> str:
    """Real vs synthetic distribution of one column, as base64 PNG.

    Parameters
    ----------
    name : str
        Column name (the panel's title).
    real, synth : Series
        The column in the real and the synthetic table.
    kind : {"numeric", "datetime", "categorical"}
        Histogram of values, histogram over time (date ticks), or bars of
        categories.

    Returns
    -------
    str
    """
    figure = _figure(4.6, 3.2)
    ax = figure.add_subplot()
    note = ""
    if kind == "numeric":
        note = _numeric_panel(ax, pd.to_numeric(real, errors="coerce").to_numpy(float),
                              pd.to_numeric(synth, errors="coerce").to_numpy(float))
    elif kind == "datetime":
        note = _datetime_panel(ax, real, synth)
    else:
        _categorical_panel(ax, real, synth)
    missing = (real.isna().mean(), synth.isna().mean())
    lines = [str(name)] + ([] if max(missing) == 0 else [
        f"missing: real {_share(missing[0])}, synthetic {_share(missing[1])}"])
    title = "\n".join(lines + ([note] if note else []))
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small")
    return to_png_base64(figure)


def association_figure(real: pd.DataFrame, synth: pd.DataFrame) -> str:
    """Heat maps of pairwise associations: real, synthetic, and their difference.

    Parameters
    ----------
    real, synth : DataFrame
        Square association matrices (values in ``[0, 1]``) with the columns
        as index and columns.

    Returns
    -------
    str
        base64 PNG.
    """
    n = len(real.columns)
    side = min(max(3.0, 0.32 * n + 1.5), 7.0)
    figure = _figure(3 * side, side + 0.6)
    axes = figure.subplots(1, 3)
    difference = synth - real
    panels = ((real, "real", "viridis", 0, 1), (synth, "synthetic", "viridis", 0, 1),
              (difference, "synthetic - real", "RdBu_r", -1, 1))
    labels = [str(c) for c in real.columns]
    for ax, (matrix, title, cmap, low, high) in zip(axes, panels):
        image = ax.imshow(matrix.to_numpy(float), cmap=cmap, vmin=low, vmax=high)
        ax.set_title(title, fontsize="medium")
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xticklabels(labels, rotation=90, fontsize="x-small")
        ax.set_yticklabels(labels, fontsize="x-small")
        figure.colorbar(image, ax=ax, shrink=0.8)
    return to_png_base64(figure)
