"""Run synthesizers on a benchmark data set and report fidelity, utility and cost.

Usage::

    python -m benchmarks.run --dataset adult --methods independent mst \\
        --epsilon 0.3 1 3 --seeds 5 [--delta 1e-9] [--out results.json] [--n-3way 100]
    python -m benchmarks.run --reproduce dp2stage-table8

For every method, epsilon and seed (``random_state`` of the synthesizer) the
harness fits on the private training table of the fixed split, samples as
many rows as it has, times both steps, records their peak memory and
computes the chosen metrics against the training table (the held-out NLL
and the ML efficacy use the test table).  Results go to a JSON file and a
Markdown table of mean +- standard deviation over seeds is printed.

Peak memory is measured with :mod:`tracemalloc`: the peak of the memory
allocated through Python's allocators (NumPy array buffers included) while
fitting, resp. sampling, above what was allocated before.  Memory allocated
by native libraries outside Python's allocators (e.g. BLAS or OpenMP
workspaces, PyTorch tensors) is not counted.  Tracing slows allocation-heavy
Python code, so the times are recorded with tracing on; use ``--memory none``
for clean timings.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import platform
import sys
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from sklearn_dpsynth.metrics import (
    conjunction_error,
    correlation_accuracy,
    detection_score,
    distance_to_closest_record,
    histogram_intersection,
    ml_efficacy,
    pair_similarity,
    workload_error,
)

from .datasets import Dataset, load_dataset
from .methods import available_methods, build, check_methods
from .reproduce import REPRODUCTIONS, comparison_table

__all__ = [
    "run_benchmark",
    "run_reproduction",
    "summarize",
    "markdown_table",
    "results_frame",
    "write_results",
    "main",
    "BENCH_METRICS",
    "DEFAULT_METRICS",
]

RESULTS_DIR = Path(__file__).resolve().parent / "results"
COST_KEYS = ("fit_seconds", "sample_seconds", "fit_peak_mb", "sample_peak_mb")


@dataclass
class RunContext:
    """What a benchmark metric sees: the data, the fitted model and its sample."""

    dataset: Dataset
    estimator: Any
    synth: pd.DataFrame
    n_3way: int


def _tvd(k: int) -> Callable[[RunContext], dict]:
    def metric(c: RunContext) -> dict:
        return {f"tvd{k}": workload_error(c.dataset.train, c.synth, k, c.dataset.domain)}
    return metric


def _tvd3(c: RunContext) -> dict:
    value = workload_error(c.dataset.train, c.synth, 3, c.dataset.domain,
                           n_marginals=c.n_3way, random_state=0)
    return {"tvd3": value}


def _nll(c: RunContext) -> dict:
    if not hasattr(c.estimator, "score"):
        return {"nll": math.nan}
    nll = -float(c.estimator.score(c.dataset.test))
    values = {"nll": nll}
    if c.dataset.entropy is not None:
        values["nll_minus_entropy"] = nll - c.dataset.entropy
    return values


def _hist(c: RunContext) -> dict:
    return {"hist": histogram_intersection(c.dataset.train, c.synth, c.dataset.domain)}


def _pair(c: RunContext) -> dict:
    return {"pair": pair_similarity(c.dataset.train, c.synth, c.dataset.domain)}


def _coracc(c: RunContext) -> dict:
    return {"coracc": correlation_accuracy(c.dataset.train, c.synth, c.dataset.domain)}


def _efficacy(c: RunContext) -> dict:
    table = ml_efficacy(c.synth, c.dataset.test, c.dataset.target, domain=c.dataset.domain,
                        random_state=0)
    means = table[table.model == "mean"].set_index("metric")["value"]
    names = {"f1": "f1", "roc_auc": "auc", "accuracy": "acc", "r2": "r2"}
    return {names[m]: float(v) for m, v in means.items()}


def _detection(c: RunContext) -> dict:
    return {"detection_auc": detection_score(c.dataset.train, c.synth, c.dataset.domain, random_state=0)}


def _conjunctions(c: RunContext) -> dict:
    return {"conj": conjunction_error(c.dataset.train, c.synth, c.dataset.domain, random_state=0)}


def _dcr(c: RunContext) -> dict:
    summary = distance_to_closest_record(c.dataset.train, c.synth, c.dataset.test,
                                         domain=c.dataset.domain, random_state=0)
    return {"dcr_median": summary["dcr_median"], "exact_match": summary["exact_match_rate"],
            "holdout_dcr_median": summary["holdout_dcr_median"]}


#: Benchmark metrics by name; each returns ``{result key: value}``.
BENCH_METRICS: dict[str, Callable[[RunContext], dict]] = {
    "tvd1": _tvd(1),
    "tvd2": _tvd(2),
    "tvd3": _tvd3,
    "nll": _nll,
    "hist": _hist,
    "pair": _pair,
    "coracc": _coracc,
    "efficacy": _efficacy,
    "detection": _detection,
    "conj": _conjunctions,
    "dcr": _dcr,
}
DEFAULT_METRICS = ("tvd1", "tvd2", "tvd3", "nll", "hist", "pair", "coracc", "efficacy")


def _measured(func: Callable[[], Any], memory: str) -> tuple[Any, float, float | None]:
    """Run ``func``; return its result, wall seconds and peak traced MiB (or None)."""
    if memory == "none":
        start = time.perf_counter()
        result = func()
        return result, time.perf_counter() - start, None
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    try:
        result = func()
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, seconds, max(peak - base, 0) / 2**20


def _spent(estimator: Any) -> tuple[float | None, float | None]:
    """Privacy actually spent according to the estimator's ledger, if any."""
    ledger = getattr(estimator, "privacy_ledger_", None)
    if ledger is None:
        return None, None
    eps, delta = ledger.spent()
    return float(eps), float(delta)


def _run_metrics(context: RunContext, metrics: Sequence[str]) -> dict:
    values: dict = {}
    for name in metrics:
        values.update(BENCH_METRICS[name](context))
    return values


def run_once(dataset: Dataset, method: str, epsilon: float, seed: int, *, delta: float,
             n_3way: int, metrics: Sequence[str], memory: str = "tracemalloc",
             method_kwargs: dict | None = None) -> dict:
    """Fit, sample and evaluate one (method, epsilon, seed) run.

    Returns
    -------
    record : dict
        ``method``, ``epsilon``, ``delta``, ``seed``, cost keys
        (``fit_seconds``, ``sample_seconds``, ``fit_peak_mb``,
        ``sample_peak_mb``), ``spent_epsilon``, ``spent_delta``,
        ``n_synthetic`` and ``metrics`` (``{key: value}``).
    """
    estimator = build(method, domain=dataset.domain, random_state=seed, **(method_kwargs or {}))
    _, fit_seconds, fit_peak = _measured(
        lambda: estimator.fit(dataset.train, epsilon=epsilon, delta=delta), memory)
    synth, sample_seconds, sample_peak = _measured(
        lambda: estimator.sample(len(dataset.train)), memory)
    if not isinstance(synth, pd.DataFrame):
        synth = pd.DataFrame(synth, columns=dataset.train.columns)
    spent_eps, spent_delta = _spent(estimator)
    context = RunContext(dataset, estimator, synth, n_3way)
    return {
        "method": method, "epsilon": float(epsilon), "delta": float(delta), "seed": int(seed),
        "fit_seconds": fit_seconds, "sample_seconds": sample_seconds,
        "fit_peak_mb": fit_peak, "sample_peak_mb": sample_peak,
        "spent_epsilon": spent_eps, "spent_delta": spent_delta, "n_synthetic": len(synth),
        "metrics": _run_metrics(context, metrics),
    }


def _check_metrics(metrics: Sequence[str] | None, dataset: Dataset) -> list[str]:
    """Requested metrics, or the defaults that the data set supports."""
    if metrics is None:
        return [m for m in DEFAULT_METRICS if m != "efficacy" or dataset.target is not None]
    unknown = [m for m in metrics if m not in BENCH_METRICS]
    if unknown:
        raise ValueError(f"Unknown metrics {unknown}; choose from {sorted(BENCH_METRICS)}.")
    if "efficacy" in metrics and dataset.target is None:
        raise ValueError(f"metric 'efficacy' needs a target; dataset {dataset.name!r} has none.")
    return list(metrics)


def _environment() -> dict:
    import sklearn

    import sklearn_dpsynth
    return {"python": platform.python_version(), "numpy": np.__version__,
            "pandas": pd.__version__, "scikit-learn": sklearn.__version__,
            "sklearn_dpsynth": getattr(sklearn_dpsynth, "__version__", None),
            "machine": platform.machine(), "timestamp": _dt.datetime.now().isoformat(timespec="seconds")}


def run_benchmark(
    dataset: str | Dataset,
    methods: Sequence[str],
    epsilons: Sequence[float],
    seeds: int = 5,
    *,
    delta: float = 1e-9,
    n_3way: int = 100,
    metrics: Sequence[str] | None = None,
    memory: str = "tracemalloc",
    method_kwargs: dict | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Run every (method, epsilon, seed) combination and collect the results.

    Parameters
    ----------
    dataset : str or Dataset
        Name in :data:`benchmarks.datasets.DATASETS` or a loaded data set.
    methods : sequence of str
        Names in :mod:`sklearn_dpsynth.registry` (imported before anything
        runs, so an unknown name or a missing extra fails fast).
    epsilons : sequence of float
        Privacy budgets.
    seeds : int, default=5
        Number of repetitions; seed ``s`` in ``range(seeds)`` is the
        synthesizer's ``random_state``.
    delta : float, default=1e-9
        Privacy parameter delta.
    n_3way : int, default=100
        Number of random 3-way marginals (fixed seed 0) for ``tvd3``.
    metrics : sequence of str, default=None
        Names from :data:`BENCH_METRICS`; by default :data:`DEFAULT_METRICS`
        (``efficacy`` only with a target).
    memory : {"tracemalloc", "none"}, default="tracemalloc"
        How peak memory is measured (see the module docstring).
    method_kwargs : dict, default=None
        ``{method: {constructor argument: value}}`` passed to the constructors.
    progress : callable, default=None
        Called with a line of text after each run.

    Returns
    -------
    results : dict
        ``{"config": {...}, "runs": [record, ...], "summary": [row, ...]}``;
        see :func:`run_once` for a record and :func:`summarize` for rows.
    """
    if memory not in ("tracemalloc", "none"):
        raise ValueError(f"memory must be 'tracemalloc' or 'none', got {memory!r}.")
    if not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be a positive integer, got {seeds!r}.")
    data = load_dataset(dataset)
    metrics = _check_metrics(metrics, data)
    check_methods(list(methods))
    runs = []
    for method in methods:
        for epsilon in epsilons:
            for seed in range(seeds):
                record = run_once(data, method, epsilon, seed, delta=delta, n_3way=n_3way,
                                  metrics=metrics, memory=memory,
                                  method_kwargs=(method_kwargs or {}).get(method))
                runs.append(record)
                if progress is not None:
                    progress(f"{method} eps={epsilon:g} seed={seed}: fit {record['fit_seconds']:.2f}s, "
                             + ", ".join(f"{k}={v:.4g}" for k, v in record["metrics"].items()))
    config = {"dataset": data.name, "description": data.description, "methods": list(methods),
              "epsilons": [float(e) for e in epsilons], "seeds": seeds, "delta": delta,
              "n_3way": n_3way, "metrics": metrics, "memory": memory,
              "n_train": len(data.train), "n_test": len(data.test), "target": data.target,
              "entropy": data.entropy, "split": "default_rng(0).permutation(n); test = perm[:n // 10]",
              "environment": _environment()}
    results = {"config": config, "runs": runs}
    results["summary"] = summarize(results).to_dict(orient="records")
    return results


def run_reproduction(
    name: str,
    *,
    seeds: int = 5,
    methods: Sequence[str] | None = None,
    memory: str = "tracemalloc",
    progress: Callable[[str], None] | None = None,
) -> tuple[dict, str]:
    """Rerun a published table of :data:`benchmarks.reproduce.REPRODUCTIONS`.

    Parameters
    ----------
    name : str
        Key of ``REPRODUCTIONS`` (e.g. ``"dp2stage-table8"``).
    seeds : int, default=5
        Repetitions per method.
    methods : sequence of str, default=None
        Subset of methods (the paper's by default).
    memory : {"tracemalloc", "none"}
        Memory measurement of the runs.
    progress : callable, default=None
        Per-run progress callback.

    Returns
    -------
    results : dict
        As :func:`run_benchmark`, with ``config["reproduce"]`` and ``config["paper"]``.
    text : str
        The comparison table beside the paper's values.
    """
    if name not in REPRODUCTIONS:
        raise ValueError(f"Unknown reproduction {name!r}; choose from {sorted(REPRODUCTIONS)}.")
    spec = REPRODUCTIONS[name]
    results = run_benchmark(spec.dataset, list(methods or spec.methods), [spec.epsilon], seeds,
                            delta=spec.delta, metrics=list(spec.metrics), memory=memory,
                            progress=progress)
    results["config"]["reproduce"] = name
    results["config"]["paper"] = spec.paper
    return results, comparison_table(results, spec)


def results_frame(results: dict) -> pd.DataFrame:
    """Tidy table of every run: columns method, epsilon, seed, metric, value.

    Cost keys (``fit_seconds``, ...) are included as metrics.  The table suits
    :func:`sklearn_dpsynth.metrics.plot_metric_vs_epsilon`.
    """
    rows = []
    for run in results["runs"]:
        values = {key: run[key] for key in COST_KEYS}
        values.update(run["metrics"])
        for metric, value in values.items():
            rows.append({"method": run["method"], "epsilon": run["epsilon"], "seed": run["seed"],
                         "metric": metric, "value": np.nan if value is None else float(value)})
    return pd.DataFrame(rows, columns=["method", "epsilon", "seed", "metric", "value"])


def summarize(results: dict) -> pd.DataFrame:
    """Mean, standard deviation (ddof=1; NaN for one seed) and count over seeds.

    Returns
    -------
    summary : DataFrame
        Columns method, epsilon, metric, mean, std, n.
    """
    frame = results_frame(results)
    grouped = frame.groupby(["method", "epsilon", "metric"], sort=False)["value"]
    summary = grouped.agg(["mean", "std", "count"]).reset_index()
    return summary.rename(columns={"count": "n"})


def _format(mean: float, std: float, metric: str) -> str:
    """``mean ± std`` with a precision suited to the metric."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "n/a"
    digits = 1 if metric.endswith("_mb") else 2 if metric.endswith("_seconds") else 4
    if std is None or math.isnan(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def markdown_table(results: dict) -> str:
    """Markdown table: one row per (method, epsilon), one column per metric (mean ± std)."""
    summary = pd.DataFrame(results["summary"])
    if summary.empty:
        return "(no runs)"
    metrics = list(dict.fromkeys(summary["metric"]))
    n_seeds = int(summary["n"].max())
    header = ["method", "epsilon"] + metrics
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for (method, epsilon), group in summary.groupby(["method", "epsilon"], sort=False):
        cells = group.set_index("metric")
        row = [str(method), f"{epsilon:g}"]
        row += [_format(cells.at[m, "mean"], cells.at[m, "std"], m) if m in cells.index else ""
                for m in metrics]
        lines.append("| " + " | ".join(row) + " |")
    note = f"\nMean ± std over {n_seeds} seed(s); " if n_seeds > 1 else "\nSingle seed; "
    note += "tvd*/conj: lower is better; hist/pair/coracc/f1/auc/acc: higher is better; nll in nats/row."
    return "\n".join(lines) + "\n" + note


def _json_ready(value: Any) -> Any:
    """NaN -> None and NumPy scalars -> Python, recursively (strict JSON)."""
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def write_results(results: dict, path: str | Path) -> Path:
    """Write results as strict JSON (NaN as null); create the folder if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        json.dump(_json_ready(results), handle, indent=2, allow_nan=False)
    return path


def _default_out(name: str) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return RESULTS_DIR / f"{name}-{stamp}.json"


def build_parser() -> argparse.ArgumentParser:
    """Command-line interface of ``python -m benchmarks.run``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="adult", help="adult, adult_raw or bayesnet")
    parser.add_argument("--methods", nargs="+", default=None,
                        help=f"registered method names: {', '.join(available_methods())}")
    parser.add_argument("--epsilon", nargs="+", type=float, default=None, help="privacy budgets")
    parser.add_argument("--seeds", type=int, default=5, help="repetitions (random_state 0..seeds-1)")
    parser.add_argument("--delta", type=float, default=None, help="delta (default 1e-9)")
    parser.add_argument("--out", default=None,
                        help="JSON output (default benchmarks/results/<name>-<time>.json)")
    parser.add_argument("--n-3way", type=int, default=100, help="random 3-way marginals for tvd3")
    parser.add_argument("--metrics", nargs="+", default=None, help=f"subset of {sorted(BENCH_METRICS)}")
    parser.add_argument("--memory", choices=("tracemalloc", "none"), default="tracemalloc")
    parser.add_argument("--n-threads", type=int, default=None,
                        help="limit BLAS/OpenMP threads (e.g. 1 on a busy shared machine)")
    parser.add_argument("--reproduce", default=None,
                        help=f"a paper table: {', '.join(REPRODUCTIONS)}")
    parser.add_argument("--quiet", action="store_true", help="no per-run progress lines")
    return parser


def _run_from_args(args: argparse.Namespace) -> str:
    """Run what the arguments ask for; return the text to print."""
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    if args.reproduce is not None:
        results, text = run_reproduction(args.reproduce, seeds=args.seeds, methods=args.methods,
                                         memory=args.memory, progress=progress)
        name = args.reproduce
    else:
        if not args.methods or not args.epsilon:
            raise SystemExit("--methods and --epsilon are required (or use --reproduce).")
        results = run_benchmark(args.dataset, args.methods, args.epsilon, args.seeds,
                                delta=1e-9 if args.delta is None else args.delta,
                                n_3way=args.n_3way, metrics=args.metrics, memory=args.memory,
                                progress=progress)
        text = markdown_table(results)
        name = args.dataset
    path = write_results(results, args.out or _default_out(name))
    return f"{text}\n\nResults written to {path}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks.run``."""
    args = build_parser().parse_args(argv)
    try:
        if args.n_threads is not None:
            from threadpoolctl import threadpool_limits
            with threadpool_limits(limits=args.n_threads):
                print(_run_from_args(args))
        else:
            print(_run_from_args(args))
    except (ImportError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
