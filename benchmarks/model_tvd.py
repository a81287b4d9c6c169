"""The fitted model's own marginal error over many seeds: MST's budget split, AIM's stop.

From the repository root::

    python -m benchmarks.model_tvd --method mst --tables adult,texas,bayesnet,census,ordered \
        --epsilons 0.3,1,3,10 --seeds 0-47 --selection-weights 1,0.6667,0.5
    python -m benchmarks.model_tvd --method aim --tables adult,texas,bayesnet,ordered \
        --epsilons 0.3,1 --seeds 0-15 --stops 0.7,holdout,auto,none
    python -m benchmarks.model_tvd --method aim --tables bayesnet --workload 3way \
        --epsilons 3 --seeds 0-15 --stops 0.7,auto

For every table of the reference harness (:data:`benchmarks.reference.TABLES`),
epsilon (``delta = 1e-9``), variant and seed, MST or AIM is fitted on the
training part as :func:`benchmarks.reference.fit_ours` does (AIM with the
harness's 2-way, or ``--workload 3way``, workload) and the script reads the
**model's exact marginals** (:meth:`marginal`, no sampling noise): the
mean TVD over every k-way marginal (k = the workload's degree, 2 for MST)
against the training table, and for ``ordered`` the model's probability
of its 21 valid rows.  It prints one line per fit and, per table, epsilon
and variant, the mean and its standard error over the seeds.

Variants: ``--selection-weights`` (MST) sets
``sklearn_dpsynth.marginal.mst.SELECTION_WEIGHT`` for the block (1 splits
the budget in thirds, 2/3 is the default 3/8, 1/4, 3/8, 0.5 gives
2/5, 1/5, 2/5); ``--stops`` (AIM) sets ``early_stopping`` (a factor,
``holdout``, ``auto`` or ``none``).  Every variant is private: each one
only changes how the same budget is split or when the estimation stops.
Not a test of privacy: the scores read the training table.
"""

from __future__ import annotations

import argparse
import itertools
import time
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import pandas as pd

import sklearn_dpsynth.marginal.mst as mst_module
from sklearn_dpsynth import AIMSynthesizer, MSTSynthesizer
from sklearn_dpsynth._marginals import contingency_counts
from sklearn_dpsynth.metrics.marginals import marginal_tvd

from .mst_ordered import _seeds, valid_rows
from .reference import TABLES, aim_workload, data_folder


def exact_tvd(model, train: pd.DataFrame, domain: dict, k: int) -> float:
    """Mean TVD between the model's and the table's k-way marginals, over all of them."""
    columns = list(train.columns)
    codes = train.to_numpy()
    sizes = [domain[c] for c in columns]
    return float(np.mean([
        marginal_tvd(model.marginal([columns[j] for j in subset]),
                     contingency_counts(codes, sizes, subset) / len(codes))
        for subset in itertools.combinations(range(len(columns)), k)]))


def valid_probability(model, train: pd.DataFrame) -> float:
    """The model's probability of the ``ordered`` table's 21 valid rows."""
    return float(np.exp(model.score_samples(valid_rows(list(train.columns)))).sum())


@contextmanager
def selection_weight(weight: float | None) -> Iterator[None]:
    """MST's selection weight for the block (None: leave the default)."""
    saved = mst_module.SELECTION_WEIGHT
    if weight is not None:
        mst_module.SELECTION_WEIGHT = weight
    try:
        yield
    finally:
        mst_module.SELECTION_WEIGHT = saved


def _stop(text: str):
    if text in ("holdout", "auto"):
        return text
    return None if text == "none" else float(text)


def fit(method: str, table, epsilon: float, seed: int, degree: int, variant: str):
    """One fit of ``method`` with ``variant`` (a selection weight or a stop)."""
    if method == "mst":
        with selection_weight(None if variant == "default" else float(variant)):
            return MSTSynthesizer(domain=table.domain, random_state=seed).fit(
                table.train, epsilon=epsilon, delta=1e-9)
    params = {} if variant == "default" else {"early_stopping": _stop(variant)}
    return AIMSynthesizer(domain=table.domain, workload=aim_workload(table.domain, degree),
                          random_state=seed, **params).fit(table.train, epsilon=epsilon,
                                                           delta=1e-9)


def _summary(values: list[float]) -> str:
    values = np.asarray(values)
    se = values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else float("nan")
    return f"{values.mean():.5f} (SE {se:.5f})"


def run(method: str, tables: list[str], epsilons: list[float], seeds: list[int],
        variants: list[str], degree: int) -> list[dict]:
    """Every fit's figures (printed as they come, then the means)."""
    records = []
    for name in tables:
        table = TABLES[name](data_folder(None))
        k = 2 if method == "mst" else degree
        for epsilon, variant in itertools.product(epsilons, variants):
            rows = []
            for seed in seeds:
                start = time.process_time()
                model = fit(method, table, epsilon, seed, degree, variant)
                row = {"table": name, "epsilon": epsilon, "variant": variant, "seed": seed,
                       "cpu_seconds": time.process_time() - start,
                       f"tvd{k}": exact_tvd(model, table.train, table.domain, k)}
                if name == "ordered":
                    row["valid"] = valid_probability(model, table.train)
                rows.append(row)
                print(" ".join(f"{key}={value:.6g}" if isinstance(value, float)
                               else f"{key}={value}" for key, value in row.items()), flush=True)
            figures = [key for key in rows[0] if key.startswith("tvd") or key == "valid"]
            print(f"== {name} eps={epsilon:g} {method} variant={variant} seeds={len(rows)}: "
                  + "; ".join(f"{key} {_summary([r[key] for r in rows])}" for key in figures)
                  + f"; cpu s {np.mean([r['cpu_seconds'] for r in rows]):.2f}", flush=True)
            records += rows
    return records


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--method", choices=["mst", "aim"], default="mst")
    parser.add_argument("--tables", default="bayesnet")
    parser.add_argument("--epsilons", default="1")
    parser.add_argument("--seeds", default="0-2", help="'0-47' or '0,1,2'")
    parser.add_argument("--selection-weights", default="default",
                        help="MST: comma-separated SELECTION_WEIGHT values, or 'default'")
    parser.add_argument("--stops", default="default",
                        help="AIM: comma-separated early_stopping values, or 'default'")
    parser.add_argument("--workload", choices=["2way", "3way"], default="2way")
    args = parser.parse_args(argv)
    variants = (args.selection_weights if args.method == "mst" else args.stops).split(",")
    run(args.method, args.tables.split(","), [float(e) for e in args.epsilons.split(",")],
        _seeds(args.seeds), variants, int(args.workload[0]))


if __name__ == "__main__":
    main()
