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

#: Categories shown per categorical column (the most frequent real ones).
MAX_CATEGORIES_SHOWN = 20


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


def _numeric_panel(ax: Any, real: np.ndarray, synth: np.ndarray) -> None:
    """Overlaid density histograms on common edges, in the column's units."""
    values = np.concatenate([real, synth])
    values = values[np.isfinite(values)]
    if values.size == 0:
        ax.text(0.5, 0.5, "no finite values", ha="center", transform=ax.transAxes)
        return
    edges = np.histogram_bin_edges(values, bins=30)
    for data, label in ((real, "real"), (synth, "synthetic")):
        data = data[np.isfinite(data)]
        if data.size:
            ax.hist(data, bins=edges, density=True, histtype="stepfilled", alpha=0.45, label=label)
    ax.set_ylabel("density")


def _categorical_panel(ax: Any, real: pd.Series, synth: pd.Series) -> None:
    """Grouped bars of the most frequent real categories."""
    p = real.astype(str).value_counts(normalize=True)
    q = synth.astype(str).value_counts(normalize=True)
    labels = list(p.index[:MAX_CATEGORIES_SHOWN])
    labels += [c for c in q.index if c not in p.index][:max(0, MAX_CATEGORIES_SHOWN - len(labels))]
    positions = np.arange(len(labels))
    ax.bar(positions - 0.2, p.reindex(labels, fill_value=0).to_numpy(), width=0.4, label="real")
    ax.bar(positions + 0.2, q.reindex(labels, fill_value=0).to_numpy(), width=0.4,
           label="synthetic")
    ax.set_xticks(positions)
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize="small")
    ax.set_ylabel("frequency")


def column_figure(name: str, real: pd.Series, synth: pd.Series, numeric: bool) -> str:
    """Real vs synthetic distribution of one column, as base64 PNG.

    Parameters
    ----------
    name : str
        Column name (the panel's title).
    real, synth : Series
        The column in the real and the synthetic table.
    numeric : bool
        Histogram of values (True) or bars of categories (False).

    Returns
    -------
    str
    """
    figure = _figure(4.6, 3.2)
    ax = figure.add_subplot()
    if numeric:
        _numeric_panel(ax, pd.to_numeric(real, errors="coerce").to_numpy(float),
                       pd.to_numeric(synth, errors="coerce").to_numpy(float))
    else:
        _categorical_panel(ax, real, synth)
    missing = (real.isna().mean(), synth.isna().mean())
    title = str(name) if max(missing) == 0 else (
        f"{name}\nmissing: real {missing[0]:.1%}, synthetic {missing[1]:.1%}")
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
