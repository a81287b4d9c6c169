"""Published result tables: how to rerun them and the paper's values.

This module holds data and formatting only; ``benchmarks.run`` runs a
reproduction (``--reproduce NAME``), so the import goes one way.

``dp2stage-table8``: the marginal baselines (AIM, MST) of DP-2Stage
(Afonja et al., "DP-2Stage: Adapting Language Models as Differentially
Private Tabular Data Generators"), Table 8: Adult, epsilon = 1,
delta = 1e-5; F1, ROC-AUC and accuracy of LogisticRegression and a boosted
model trained on synthetic data and tested on real data (averaged over the
two models, target ``income``), CorAcc, Pair and HIST, all x 100.

Differences from the paper's protocol that can move the numbers: our split
is the benchmark's standard 90/10 split of the raw Adult file (rows with
missing values removed), fidelity metrics compare with the training table,
the boosted model is scikit-learn's HistGradientBoosting, and the domain is
the public UCI domain (numeric columns in the synthesizers' default bins).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

__all__ = ["REPRODUCTIONS", "Reproduction", "comparison_table"]


@dataclass(frozen=True)
class Reproduction:
    """A published table: how to rerun it and the paper's values."""

    dataset: str
    methods: tuple
    epsilon: float
    delta: float
    metrics: tuple
    columns: dict  # paper column -> benchmark result key
    paper: dict  # method -> {paper column: value}
    scale: float = 100.0
    source: str = ""
    notes: list = field(default_factory=list)


REPRODUCTIONS: dict[str, Reproduction] = {
    "dp2stage-table8": Reproduction(
        dataset="adult_raw",
        methods=("aim", "mst"),
        epsilon=1.0,
        delta=1e-5,
        metrics=("efficacy", "coracc", "pair", "hist"),
        columns={"F1": "f1", "AUC": "auc", "ACC": "acc", "CorAcc": "coracc", "Pair": "pair",
                 "HIST": "hist"},
        paper={
            "aim": {"F1": 59.6, "AUC": 86.8, "ACC": 80.3, "CorAcc": 86.4, "Pair": 77.1, "HIST": 88.4},
            "mst": {"F1": 39.6, "AUC": 76.8, "ACC": 72.8, "CorAcc": 70.0, "Pair": 74.6, "HIST": 87.0},
        },
        source="DP-2Stage (Afonja et al.), Table 8, Adult, epsilon=1, delta=1e-5",
    ),
}


def comparison_table(results: dict, reproduction: Reproduction) -> str:
    """Markdown table with our mean ± std (x scale) and the paper's value per method.

    ``results`` is what ``benchmarks.run.run_benchmark`` returns (its
    ``"summary"`` rows are read); ``python -m benchmarks.run --reproduce NAME``
    runs a reproduction and prints this table.
    """
    summary = pd.DataFrame(results["summary"])
    columns = list(reproduction.columns)
    lines = ["| method | source | " + " | ".join(columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for method in dict.fromkeys(summary["method"]):
        rows = summary[summary.method == method].set_index("metric")
        n = int(rows["n"].max())
        cells = []
        for column in columns:
            key = reproduction.columns[column]
            mean = rows.at[key, "mean"] * reproduction.scale if key in rows.index else float("nan")
            std = rows.at[key, "std"] * reproduction.scale if key in rows.index else float("nan")
            cells.append(f"{mean:.1f}" + ("" if pd.isna(std) else f" ± {std:.1f}"))
        lines.append(f"| {method} | ours ({n} seed{'s' if n > 1 else ''}) | " + " | ".join(cells) + " |")
        if method in reproduction.paper:
            paper = reproduction.paper[method]
            lines.append(f"| {method} | paper | " + " | ".join(f"{paper[c]:.1f}" for c in columns) + " |")
    return "\n".join(lines) + f"\n\n{reproduction.source}; values x {reproduction.scale:g}."
