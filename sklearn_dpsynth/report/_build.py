"""Assemble the HTML quality report from the metrics and the figures."""

from __future__ import annotations

import datetime
import html
import math
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..metrics import (
    correlation_accuracy,
    detection_score,
    distance_to_closest_record,
    ml_efficacy,
    workload_error,
)
from ..metrics.tables import NUMERIC, column_kinds, prepare_tables
from ..metrics.threads import check_n_jobs
from ..public_domain import typed_text
from ._figures import OTHER, association_figure, column_figure

__all__ = ["build_report", "write_report"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1200px;
color:#222;padding:0 1em}
h1{margin-bottom:.2em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0} th,td{border:1px solid #ccc;padding:.25em .6em;
text-align:right} th{background:#f3f3f3} td:first-child,th:first-child{text-align:left}
.note{color:#555;font-size:.92em}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:.5em}
.grid img{border:1px solid #eee;width:100%;box-sizing:border-box}
.scores td.value{font-weight:bold} img{max-width:100%}
.scores td:nth-child(2),.scores th:nth-child(2){text-align:left}
.wide{overflow-x:auto;max-width:100%}
td.num{white-space:nowrap} td.text{text-align:left}
table.ledger{width:100%} table.ledger td,table.ledger th{font-size:.88em}
table.ledger th{overflow-wrap:anywhere} table.ledger td.text{overflow-wrap:break-word}
table.ledger td.text:first-child{overflow-wrap:anywhere;min-width:10em}
.flags{background:#fff6e0;border-left:4px solid #e0a000;padding:.4em 1em;margin:.8em 0}
.flags li{margin:.2em 0}
"""

#: 3-way marginals evaluated at most (a random subset beyond this).
_MAX_THREE_WAY = 200


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _table(frame: pd.DataFrame, *, css_class: str = "") -> str:
    """An escaped HTML table of a DataFrame (numbers to 4 significant digits)."""
    def cell(value: Any) -> str:
        if isinstance(value, (float, np.floating)):
            return '<td class="num">' + ("" if np.isnan(value) else f"{value:.4g}") + "</td>"
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return f'<td class="num">{value}</td>'
        return f'<td class="text">{_esc(value)}</td>'
    head = "".join(f"<th>{_esc(c)}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return f'<table class="{css_class}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _image(data: str, alt: str) -> str:
    return f'<img src="data:image/png;base64,{data}" alt="{_esc(alt)}">'


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{_esc(title)}</h2>\n{body}\n</section>'


# ------------------------------------------------------------------ sections
def _marginal_errors(real: pd.DataFrame, synth: pd.DataFrame, domain: Any,
                     seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Summary per order k and the worst 2-way marginals."""
    rows, worst = [], pd.DataFrame(columns=["columns", "TVD"])
    for k in (1, 2, 3):
        if k > real.shape[1]:
            break
        n_marginals = _MAX_THREE_WAY if k == 3 else None
        from math import comb
        if n_marginals is not None and comb(real.shape[1], k) <= n_marginals:
            n_marginals = None
        errors = workload_error(real, synth, k, domain, reduce="none",
                                n_marginals=n_marginals, random_state=seed)
        rows.append({"k": k, "marginals": len(errors), "mean TVD": errors.mean(),
                     "median TVD": errors.median(), "max TVD": errors.max()})
        if k == 2:
            top = errors.sort_values(ascending=False).head(10)
            worst = pd.DataFrame({"columns": [" x ".join(map(str, i)) for i in top.index],
                                  "TVD": top.to_numpy()})
    return pd.DataFrame(rows), worst


def _association_matrices(real: pd.DataFrame, synth: pd.DataFrame,
                          domain: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Square matrices of pairwise associations (Cramer's V, correlation ratio, |r|)."""
    pairs = correlation_accuracy(real, synth, domain, return_pairs=True)
    columns = list(real.columns)
    matrices = []
    for side in ("real", "synth"):
        matrix = pd.DataFrame(np.eye(len(columns)), index=columns, columns=columns)
        for row in pairs.itertuples(index=False):
            value = getattr(row, side)
            matrix.loc[row.column_1, row.column_2] = value
            matrix.loc[row.column_2, row.column_1] = value
        matrices.append(matrix)
    return matrices[0], matrices[1]


def _without_missing_target(frames: dict, target: Any) -> tuple[dict, str]:
    """The tables without their rows whose target is missing, and a sentence saying how many."""
    dropped = {name: int(frame[target].isna().sum()) for name, frame in frames.items()}
    kept = {name: frame[frame[target].notna()].reset_index(drop=True)
            for name, frame in frames.items()}
    counts = [f"{n} of {len(frames[name])} {name} rows" for name, n in dropped.items() if n]
    sentence = "" if not counts else (
        f"Rows whose target is missing are left out of this section: {', '.join(counts)}. ")
    return kept, sentence


def _efficacy_section(real, synth, holdout, target, domain, seed, n_jobs) -> tuple[str, dict]:
    """ML efficacy: train on synthetic vs on real, test on the holdout.

    Rows whose target is missing (in any table) are dropped, and the page
    says how many: a missing target is neither a class to learn nor a
    value to score.
    """
    frames, dropped = _without_missing_target(
        {"synthetic": synth, "real training": real, "holdout": holdout}, target)
    note = (f'<p class="note">Models trained on the synthetic table (and, for reference, on '
            f'the real training table) predict <code>{_esc(target)}</code> on the holdout '
            f'rows. Higher is better. {_esc(dropped)}</p>')
    empty = [name for name, frame in frames.items() if frame.empty]
    if empty:
        message = f"no {' or '.join(empty)} row has a target value: ML efficacy not computed"
        return note + f"<p><strong>{_esc(message)}.</strong></p>", {
            "ML efficacy": message}
    on_synth = ml_efficacy(frames["synthetic"], frames["holdout"], target, domain=domain,
                           random_state=seed, n_jobs=n_jobs)
    on_real = ml_efficacy(frames["real training"], frames["holdout"], target, domain=domain,
                          random_state=seed, n_jobs=n_jobs)
    table = on_synth.rename(columns={"value": "trained on synthetic"})
    table["trained on real"] = on_real["value"].to_numpy()
    metric = table["metric"].iloc[0]
    mean = table[(table["model"] == "mean") & (table["metric"] == metric)].iloc[0]
    headline = {f"ML efficacy ({metric}, synthetic / real)":
                f"{mean['trained on synthetic']:.3f} / {mean['trained on real']:.3f}"}
    missing = int(synth[target].isna().sum())
    if missing:
        headline["synthetic rows without a target (left out of ML efficacy)"] = (
            f"{missing} of {len(synth)}")
    return note + _table(table), headline


def _privacy_section(real, synth, holdout, domain, seed) -> tuple[str, dict]:
    summary = distance_to_closest_record(real, synth, holdout, domain=domain, random_state=seed)
    frame = pd.DataFrame({"measure": list(summary), "value": list(summary.values())})
    headline = {"exact-match rate (synthetic rows copying a training row)":
                f"{summary['exact_match_rate']:.4f}"}
    if "holdout_exact_match_rate" in summary:
        headline["exact-match rate of holdout rows (baseline)"] = (
            f"{summary['holdout_exact_match_rate']:.4f}")
    body = ('<p class="note">Distance to closest record (Gower-like, in [0, 1]) and the share '
            'of exact copies. A synthetic table much closer to the training rows than the '
            'holdout rows are hints at memorisation. These are sanity checks, not a privacy '
            'guarantee: the guarantee is the ledger below.</p>' + _table(frame))
    return body, headline


def _ledger_section(model: Any) -> tuple[str, dict]:
    ledger = model.privacy_ledger_
    epsilon, delta = ledger.spent()
    summary = ledger.summary()
    headline = {"privacy budget spent (epsilon, delta)": f"({epsilon:.4g}, {delta:.3g})"}
    body = (f'<p>Model: <code>{_esc(type(model).__name__)}</code>. Total guarantee: '
            f'<strong>epsilon = {epsilon:.6g}, delta = {delta:.3g}</strong> for everything the '
            'model and its samples reveal.</p><div class="wide">'
            + _table(summary, css_class="ledger") + "</div>")
    return body, headline


def _columns_section(real: pd.DataFrame, synth: pd.DataFrame, kinds: dict) -> str:
    images = [_image(column_figure(c, real[c], synth[c], _figure_kind(real[c], kinds[c])),
                     f"column {c}") for c in real.columns]
    return ('<p class="note">Real vs synthetic distribution of every column, in the '
            "columns' own units: histograms over the real range (bars are shares of each "
            "table's present values; synthetic values beyond the real range are counted on "
            "the panel), histograms over time of date-time columns (in UTC), and bars of the "
            "most frequent categories.</p>"
            '<div class="grid">' + "".join(images) + "</div>")


def _figure_kind(series: pd.Series, kind: str) -> str:
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return "datetime"
    return "numeric" if kind == NUMERIC else "categorical"


def _collapse_flags(real: pd.DataFrame, synth: pd.DataFrame,
                    domain: Mapping | None = None, unscored: tuple = ()) -> list[str]:
    """Columns whose synthetic (or real) values collapsed to ``<other>`` or one value.

    ``unscored`` columns (modelled as ``<other>`` alone) get one flag saying
    so, whether declared that way or learned so by the model."""
    flags = []
    unlisted = _declared_unlisted(domain)
    for column in real.columns:
        if column in unscored:
            how = ("declared with no category listed" if column in unlisted
                   else "the model keeps no category of it")
            flags.append(f"{column}: {how}, so every synthetic value is {OTHER} (no value "
                         "of it is released); left out of every score and figure of this "
                         "report. Drop the column, or declare its public categories.")
            continue
        real_values, synth_values = real[column].dropna(), synth[column].dropna()
        name = f"{column}"
        if synth_values.empty and not real_values.empty:
            flags.append(f"{name}: every synthetic value is missing.")
            continue
        other = float((synth_values.astype(str) == OTHER).mean()) if len(synth_values) else 0.0
        if other >= COLLAPSE_SHARE and column in unlisted:
            flags.append(f"{name}: declared with no category listed, so {other:.0%} of the "
                         f"synthetic values are {OTHER} (drop the column, or declare its "
                         "public categories).")
        elif other >= COLLAPSE_SHARE:
            flags.append(f"{name}: {other:.0%} of the synthetic values are {OTHER} (the "
                         "categories were not learned: too small a budget, or categories "
                         "too rare; declare them in the domain).")
        elif synth_values.nunique() == 1 and real_values.nunique() > 1:
            flags.append(f"{name}: the synthetic column holds a single value "
                         f"({real_values.nunique()} distinct in the real one).")
        if real_values.nunique() == 1:
            flags.append(f"{name}: the real column holds a single value.")
    return flags


def _other_only_columns(columns: Any, domain: Mapping | None, model: Any,
                        target: Any) -> list:
    """Columns modelled as ``<other>`` alone: declared with no category listed
    (``{"categories": []}``, what ``describe`` drafts for an identifier), or
    held so by ``model``'s domain.  No value of them is released, so every
    synthetic value is ``<other>``: scoring them would only measure that
    (a 1-way TVD of 1 for an identifier).  The target is always scored."""
    unlisted = _declared_unlisted(domain)
    specs = getattr(model, "domain_", None) or ()
    unlisted |= {spec.name for spec in specs
                 if spec.kind == "categorical" and not spec.categories}
    unscored = [c for c in columns if c in unlisted and c != target]
    return unscored if len(unscored) < len(columns) else []  # nothing left to score


def _declared_unlisted(domain: Mapping | None) -> set:
    """Columns the domain declares with no category listed (``{"categories": []}``)."""
    return {c for c, entry in (domain or {}).items()
            if isinstance(entry, Mapping) and entry.get("categories") == []}


def _without_columns(dropped: list, *tables: pd.DataFrame | None,
                     domain: Mapping | None) -> list:
    """``tables`` without the ``dropped`` columns, then ``domain`` without them."""
    kept = [None if t is None else t.drop(columns=dropped) for t in tables]
    return kept + [None if domain is None
                   else {c: e for c, e in domain.items() if c not in dropped}]


#: Share of ``<other>`` among a synthetic column's values flagged as a collapse.
COLLAPSE_SHARE = 0.9


#: Share of a numeric column's values past the other table's range flagged.
RANGE_SHARE = 0.01


def _range_flags(real: pd.DataFrame, synth: pd.DataFrame, kinds: dict,
                 model: Any = None) -> list[str]:
    """Numeric columns whose synthetic values go past the real range, or whose
    real values lie past the synthetic range: cut off by the model's range
    (when ``model``'s domain shows it), or a tail the synthetic values do not
    reach inside that range."""
    flags = []
    for column in real.columns:
        if _figure_kind(real[column], kinds[column]) != "numeric":
            continue
        real_values = real[column].dropna().to_numpy(dtype=float)
        synth_values = synth[column].dropna().to_numpy(dtype=float)
        if not (real_values.size and synth_values.size):
            continue
        beyond = _outside(synth_values, real_values)
        if beyond >= RANGE_SHARE:
            flags.append(f"{column}: {beyond:.1%} of the synthetic values lie beyond the "
                         "real range (declare the column's documented bounds).")
        clipped = _outside(real_values, synth_values)
        if clipped >= RANGE_SHARE:
            cause = _clip_cause(real_values, _model_range(model, column), synth_values,
                                _model_edges(model, column))
            flags.append(f"{column}: {clipped:.1%} of the real values lie beyond the synthetic "
                         f"range {cause}")
    return flags


def _model_edges(model: Any, column: Any) -> np.ndarray | None:
    """The bin edges of a plain numeric column of ``model``'s domain (else None)."""
    specs = getattr(model, "domain_", None)
    if specs is None or column not in specs.columns:
        return None
    spec = specs[column]
    if spec.kind != "numeric" or spec.value_type != "number":
        return None
    return spec.edges


def _model_range(model: Any, column: Any) -> tuple[float, float] | None:
    """The values a plain numeric column of ``model``'s domain covers: its lowest
    and highest edge, or for an integer column (cut at half-integers) the
    first and last integer inside them."""
    edges = _model_edges(model, column)
    if edges is None:
        return None
    low, high = float(edges[0]), float(edges[-1])
    if model.domain_[column].integer:
        return float(math.ceil(low)), float(math.floor(high))
    return low, high


def _clip_cause(real_values: np.ndarray, model_range: tuple[float, float] | None,
                synth_values: np.ndarray, edges: np.ndarray | None = None) -> str:
    """Why real values lie past the synthetic range, as far as the report can tell.

    With the model's range: the share outside it (cut off).  With its bin
    ``edges`` too, the share that lies in the very bins holding the
    synthetic extremes: those bins are reached, but decode to values spread
    over the bin, so a value the data repeat at a bin's end (a 0, a minimum)
    does not come back exactly.  The rest is a tail the model gives little
    or no mass.
    """
    if model_range is None:
        return ("(the model's range may have cut them off: declare the column's documented "
                "bounds; or the noise hid a thin tail).")
    low, high = model_range
    outside_model = (real_values < low) | (real_values > high)
    cut = float(np.mean(outside_model))
    in_end_bins = 0.0 if edges is None else float(np.mean(
        ~outside_model & _in_extreme_bins(real_values, synth_values, edges)))
    unreached = _outside(real_values, synth_values) - cut - in_end_bins
    causes = []
    if in_end_bins > 0:
        causes.append(f"{in_end_bins:.1%} lie in the end bins that the synthetic values do "
                      "reach, which decode to values spread over the bin: a value the data "
                      "repeat there (such as 0) comes back exactly only if declared as a "
                      "point ('points')")
    if unreached > 1e-12:
        causes.append(f"{unreached:.1%} lie in a tail the model gives little or no mass, "
                      "its noisy counts being small; more budget or coarser bins keep "
                      "more of it")
    if cut > 0:
        head = (f"{cut:.1%} lie outside the model's range [{low:g}, {high:g}], which cut "
                "them off: declare the column's documented bounds")
        return "(" + "; ".join([head] + causes) + ")."
    return f"(all inside the model's range [{low:g}, {high:g}]: " + "; ".join(causes) + ")."


def _in_extreme_bins(real_values: np.ndarray, synth_values: np.ndarray,
                     edges: np.ndarray) -> np.ndarray:
    """Whether each real value lies past the synthetic range but in the bin of
    the synthetic minimum (below it) or maximum (above it)."""
    def bin_of(values):
        return np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
    low, high = synth_values.min(), synth_values.max()
    bins = bin_of(real_values)
    return (((real_values < low) & (bins == bin_of(low)))
            | ((real_values > high) & (bins == bin_of(high))))


def _outside(values: np.ndarray, reference: np.ndarray) -> float:
    return float(np.mean((values < reference.min()) | (values > reference.max())))


def _overview(scores: dict, flags: list[str]) -> str:
    rows = "".join(f'<tr><td>{_esc(group)}</td><td>{_esc(name)}</td>'
                   f'<td class="value">{_esc(value)}</td></tr>'
                   for group, items in scores.items() for name, value in items.items())
    warning = "" if not flags else (
        '<div class="flags"><strong>Columns to check</strong><ul>'
        + "".join(f"<li>{_esc(flag)}</li>" for flag in flags) + "</ul></div>")
    return (warning + '<table class="scores"><thead><tr><th>area</th><th>score</th>'
            f"<th>value</th></tr></thead><tbody>{rows}</tbody></table>")


def _typed_tables(real: pd.DataFrame, *others: pd.DataFrame | None,
                  domain: Mapping | None) -> list:
    """Read text columns of numbers or dates (in the real table) as such in every table.

    Files are read as text; a column whose real values are all numbers (or
    all dates, see :func:`~sklearn_dpsynth.public_domain.typed_text`) is
    compared as numbers (or as date-times, in UTC) in every table, and the
    other tables' values that do not parse count as missing.  Columns the
    domain describes are left as they are.
    """
    described = set(domain or ())
    tables = [real.copy()] + [None if t is None else t.copy() for t in others]
    for column in real.columns:
        if column in described:
            continue
        typed = _as_utc(typed_text(real[column]))
        if pd.api.types.is_datetime64_any_dtype(typed.dtype):
            convert = _datetimes
        elif pd.api.types.is_numeric_dtype(typed.dtype) \
                and not pd.api.types.is_bool_dtype(typed.dtype):
            convert = _numbers
        else:
            continue
        tables[0][column] = typed
        for table in tables[1:]:
            if table is not None and table[column].dtype != typed.dtype:
                table[column] = convert(table[column])
    return tables


def _as_utc(series: pd.Series) -> pd.Series:
    """Time-zone-aware date-times as naive UTC ones; anything else as it is."""
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        return series.dt.tz_convert("UTC").dt.tz_localize(None)
    return series


def _numbers(series: pd.Series) -> pd.Series:
    """A column as floats; values that are not numbers become missing."""
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(
            series.dtype):
        return series
    return pd.to_numeric(series.astype(object), errors="coerce").astype(float)


def _datetimes(series: pd.Series) -> pd.Series:
    """A column as naive UTC date-times; values that are not dates become missing."""
    if not pd.api.types.is_datetime64_any_dtype(series.dtype):
        text = series.astype(object).where(series.notna(), None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = pd.to_datetime(text, errors="coerce", utc=True, format="ISO8601")
            if parsed.isna().sum() > series.isna().sum():
                parsed = pd.to_datetime(text, errors="coerce", utc=True, format="mixed")
        series = parsed
    return _as_utc(series)


def _check_inputs(real, synth, holdout, target, model) -> None:
    if target is not None and holdout is None:
        raise ValueError("target: ML efficacy needs holdout rows (real rows not used in fit).")
    if target is not None and target not in real.columns:
        raise ValueError(f"target {target!r} is not a column of the tables.")
    if model is not None and not hasattr(model, "privacy_ledger_"):
        raise ValueError("model must be a fitted synthesizer (it has no privacy_ledger_).")


def build_report(
    real: Any,
    synth: Any,
    *,
    holdout: Any = None,
    model: Any = None,
    target: Any = None,
    domain: Mapping | None = None,
    title: str = "Synthetic data quality report",
    random_state: int = 0,
    n_jobs: int | None = 1,
) -> str:
    """The quality report of a synthetic table, as one self-contained HTML page.

    Sections: overview scores (fidelity, utility, privacy sanity, budget);
    every column's distribution, real vs synthetic; pairwise association
    heat maps (real, synthetic, difference); the k-way marginal error table;
    ML efficacy (with ``target`` and ``holdout``); exact-match rate and
    distance to closest record (against ``holdout`` when given); the privacy
    ledger with the total (epsilon, delta) (with ``model``).  Figures are
    embedded as base64 PNG: the file needs no network to be viewed.

    The report reads the real tables without any privacy protection: it is
    for the data holder, not for publication.

    Parameters
    ----------
    real : DataFrame
        The real training table (the private data given to the synthesizer).
    synth : DataFrame
        The synthetic table, with the same columns.
    holdout : DataFrame, optional
        Real rows not used in ``fit`` (ML efficacy, DCR baseline).
    model : fitted synthesizer, optional
        For the privacy ledger.
    target : hashable, optional
        Target column of the ML efficacy (needs ``holdout``).
    domain : mapping, optional
        Column domain, as for the metrics.
    title : str, default="Synthetic data quality report"
        The page's title.
    random_state : int, default=0
        Seed of the randomised metrics.
    n_jobs : int or None, default=1
        Threads of the models trained by the metrics.

    Returns
    -------
    str
        The HTML document.
    """
    check_n_jobs(n_jobs)
    real_df, synth_df = prepare_tables(real, ("synth", synth))
    holdout_df = None if holdout is None else prepare_tables(real_df, ("holdout", holdout))[1]
    _check_inputs(real_df, synth_df, holdout_df, target, model)
    real_df, synth_df, holdout_df = _typed_tables(real_df, synth_df, holdout_df, domain=domain)
    unscored = _other_only_columns(real_df.columns, domain, model, target)
    collapse_flags = _collapse_flags(real_df, synth_df, domain, unscored)
    if unscored:
        real_df, synth_df, holdout_df, domain = _without_columns(
            unscored, real_df, synth_df, holdout_df, domain=domain)
    kinds = column_kinds(real_df, domain)
    seed = int(random_state)
    sections, scores = [], {"fidelity": {}, "utility": {}, "privacy": {}}

    errors, worst = _marginal_errors(real_df, synth_df, domain, seed)
    for row in errors.itertuples(index=False):
        scores["fidelity"][f"mean {row.k}-way marginal TVD (0 best)"] = f"{row[2]:.4f}"
    auc = detection_score(real_df, synth_df, domain, random_state=seed, n_jobs=n_jobs,
                          max_samples=5_000)
    scores["fidelity"]["detection ROC-AUC (0.5 best)"] = f"{auc:.3f}"

    sections.append(_section("columns", "Column distributions",
                             _columns_section(real_df, synth_df, kinds)))
    if real_df.shape[1] > 1:
        real_assoc, synth_assoc = _association_matrices(real_df, synth_df, domain)
        sections.append(_section("associations", "Pairwise associations", (
            '<p class="note">Bias-corrected Cramer\'s V (two categorical columns), correlation '
            'ratio (categorical and numeric) or absolute Pearson correlation (two numeric '
            'columns), all in [0, 1].</p>'
            + _image(association_figure(real_assoc, synth_assoc), "association heat maps"))))
    sections.append(_section("marginals", "k-way marginal errors", (
        '<p class="note">Total-variation distance between real and synthetic k-way '
        'marginals (numeric columns in 20 equal-width bins); 0 means identical.</p>'
        + _table(errors) + "<h3>Worst 2-way marginals</h3>" + _table(worst))))
    if target is not None:
        body, headline = _efficacy_section(real_df, synth_df, holdout_df, target, domain,
                                           seed, n_jobs)
        scores["utility"].update(headline)
        sections.append(_section("efficacy", "ML efficacy", body))
    body, headline = _privacy_section(real_df, synth_df, holdout_df, domain, seed)
    scores["privacy"].update(headline)
    sections.append(_section("privacy-sanity", "Distance to closest record", body))
    if model is not None:
        body, headline = _ledger_section(model)
        scores["privacy"].update(headline)
        sections.append(_section("ledger", "Privacy ledger", body))

    scores = {group: items for group, items in scores.items() if items}
    overview = _section("overview", "Overview", (
        f"<p>{len(real_df)} real rows, {len(synth_df)} synthetic rows"
        + ("" if holdout_df is None else f", {len(holdout_df)} holdout rows")
        + f", {real_df.shape[1]} columns.</p>"
        + _overview(scores, collapse_flags + _range_flags(real_df, synth_df, kinds, model))))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>"
            f"<h1>{_esc(title)}</h1><p class=\"note\">Made by sklearn-dpsynth on {stamp}. "
            "This report is computed from the real table without privacy protection: keep "
            "it private. Only the synthetic table and the model are DP releases.</p>\n"
            + overview + "\n" + "\n".join(sections) + "\n</body></html>\n")


def write_report(path: str | os.PathLike, real: Any, synth: Any, **kwargs: Any) -> None:
    """Write :func:`~sklearn_dpsynth.report.build_report`'s HTML page to ``path`` (UTF-8).

    Parameters
    ----------
    path : str or path-like
        The HTML file to write.
    real, synth : DataFrame
        As for :func:`~sklearn_dpsynth.report.build_report`.
    **kwargs
        The keyword arguments of :func:`~sklearn_dpsynth.report.build_report`.
    """
    Path(path).write_text(build_report(real, synth, **kwargs), encoding="utf-8")
