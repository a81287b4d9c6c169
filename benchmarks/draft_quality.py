"""Accuracy of fits on ``describe``'s unedited draft of a new user's table.

A new user runs ``dpsynth describe data.csv > domain.json`` and fits on the
draft as it is.  How good the draft's bins are shows in the synthetic
rows: this script fits Independent, MST and AIM on the draft of a real
table at a few budgets and prints the mean and worst 2-way TVD of the
synthetic rows against the training rows (numeric columns in 20
equal-width bins, :func:`sklearn_dpsynth.metrics.workload_error`), with
fit CPU seconds::

    # 1. export the table once (needs statsmodels, in a separate venv)
    python -m venv /work/venv-data && /work/venv-data/bin/pip install statsmodels
    /work/venv-data/bin/python -m benchmarks.draft_quality export --out /tmp/randhie
    # 2. draft and fit
    python -m benchmarks.draft_quality run --data /tmp/randhie/randhie.csv \\
        --epsilons 1,3 --seeds 0,1,2

The table: statsmodels' ``randhie`` (RAND Health Insurance Experiment,
20,190 rows, 10 columns; public domain, as statsmodels' copy states), with
zero-inflated columns that are logs already (``lpi``, ``fmde``) and
fractions that take a few values (``lncoins``, ``physlm``).  The draft is
made from the whole file, as the user would, and the fits read the
file as text as ``dpsynth fit`` does; the rows are shuffled
(``random_state=0``) and the first ``--train`` rows fitted, the rest kept
as a holdout (its TVD to the training rows is the sampling floor).
``--draft FILE`` fits a given declaration instead (e.g. one written by
an older version).  Not private: the draft reads the table.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from sklearn_dpsynth import (AIMSynthesizer, IndependentSynthesizer, MSTSynthesizer,
                             describe_domain)
from sklearn_dpsynth.cli import read_table
from sklearn_dpsynth.metrics import workload_error

METHODS = {"independent": IndependentSynthesizer, "mst": MSTSynthesizer,
           "aim": AIMSynthesizer}


def export(out: Path) -> Path:
    """Write ``randhie.csv`` (statsmodels' copy) into ``out``."""
    import statsmodels.api as sm  # only in the data venv

    out.mkdir(parents=True, exist_ok=True)
    path = out / "randhie.csv"
    sm.datasets.randhie.load_pandas().data.to_csv(path, index=False)
    return path


def split(frame: pd.DataFrame, n_train: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Shuffled (``random_state=0``) training rows and the holdout."""
    shuffled = frame.sample(frac=1.0, random_state=0)
    return shuffled.iloc[:n_train], shuffled.iloc[n_train:]


def fit_scores(method: str, draft: dict, train: pd.DataFrame, train_text: pd.DataFrame,
               epsilon: float, seed: int) -> dict:
    """One fit on ``draft`` of the training rows as ``dpsynth fit`` reads them
    (``train_text``): 2-way TVD (mean, worst pair) of a training-sized sample
    against the typed training rows ``train``."""
    start = time.process_time()
    model = METHODS[method](domain=draft, random_state=seed).fit(train_text, epsilon=epsilon)
    seconds = time.process_time() - start
    synthetic = model.sample(len(train), random_state=seed)
    per_pair = workload_error(train, synthetic, k=2, reduce="none")
    return {"tvd2": float(per_pair.mean()), "worst": float(per_pair.max()),
            "fit_cpu_seconds": seconds}


def run(data: Path, draft_path: Path | None, epsilons: list[float], seeds: list[int],
        methods: list[str], n_train: int) -> list[str]:
    """Markdown rows ``method | epsilon | 2-way TVD | worst pair | fit CPU s``."""
    frame = read_table(str(data))  # typed as `dpsynth describe` reads it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # describe's PrivacyWarning: a benchmark
        draft = json.loads(draft_path.read_text()) if draft_path else describe_domain(frame)
    train, holdout = split(frame, n_train)
    train_text = split(read_table(str(data), as_text=True), n_train)[0]  # as `fit` reads it
    lines = ["| method | epsilon | 2-way TVD | worst pair | fit CPU s |", "|---|---|---|---|---|"]
    for epsilon in epsilons:
        for method in methods:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                runs = [fit_scores(method, draft, train, train_text, epsilon, seed)
                        for seed in seeds]
            mean = {key: np.mean([r[key] for r in runs]) for key in runs[0]}
            lines.append(f"| {method} | {epsilon:g} | {mean['tvd2']:.4f} | "
                         f"{mean['worst']:.3f} | {mean['fit_cpu_seconds']:.2f} |")
            print(lines[-1], flush=True)
    floor = workload_error(train, holdout, k=2)
    lines.append(f"holdout against training rows: 2-way TVD {floor:.4f}")
    return lines


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",") if v.strip()]


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    out = commands.add_parser("export", help="write randhie.csv (needs statsmodels)")
    out.add_argument("--out", type=Path, required=True)
    fit = commands.add_parser("run", help="draft the table and fit on the draft")
    fit.add_argument("--data", type=Path, required=True)
    fit.add_argument("--draft", type=Path, default=None,
                     help="a declaration to fit instead of describe's draft")
    fit.add_argument("--epsilons", type=_floats, default=[1.0, 3.0])
    fit.add_argument("--seeds", type=_ints, default=[0, 1, 2])
    fit.add_argument("--methods", type=lambda t: t.split(","), default=list(METHODS))
    fit.add_argument("--train", type=int, default=16_000, help="training rows")
    args = parser.parse_args(argv)
    if args.command == "export":
        print(f"wrote {export(args.out)}")
        return
    lines = run(args.data, args.draft, args.epsilons, args.seeds, args.methods, args.train)
    print(lines[-1])


if __name__ == "__main__":
    main()
