"""Benchmark DP-2Stage (Afonja et al.) next to DP-TBART, SynLM, MST and AIM, in parallel jobs.

Standalone script, run from the repository root.  Every ``(dataset, method,
seed)`` is one job that writes ``OUT/<dataset>__<method>__seed<k>.json``
(jobs whose file exists are skipped, so a killed run resumes), ``--jobs``
of them at a time in separate processes::

    python -m benchmarks.dp2stage --dataset adult --seeds 0 1 2 --jobs 8 \
        --device cuda --data-dir /data --out results/dp2stage_adult
    python -m benchmarks.dp2stage --summarise results/dp2stage_adult

Methods: ``DP-Standard``, ``DP-2Stage-U`` and ``DP-2Stage-O`` (stage 1 on the
*other* table: Texas for Adult, Adult for Texas; ``--public-rows`` of it),
each unweighted (every token weight 1, the paper's default loss) and with
``-w`` (``value_weight=0.65``); ``DP-2Stage-U-w-shuffle``, the paper's
column-shuffling ablation (``column_order="shuffle"``); and the baselines
``DP-TBART``, ``SynLM``, ``MST``, ``AIM`` from the same harness.

Protocol: the harness's standard split (``benchmarks.datasets``: the first
10% of a ``default_rng(0)`` permutation held out); ``--train-rows`` keeps a
seeded subsample of the training table.  Every method is fitted at
``(epsilon, delta) = (1, 1e-5)`` (the paper's setting) with the public
domain, the target column first for DP-2Stage; ``len(train)`` rows are
sampled.  Reported: fit and sample seconds, held-out log-likelihood
(``score(test)``, nats/row), DP-2Stage's value and all-token perplexity on
the test rows (the paper's Figure 3 / Table 4 diagnostic), HIST, CorAcc,
Pair (the paper's metrics, ``sklearn_dpsynth.metrics``), mean 2-way TVD and
ML efficacy (F1/AUC/accuracy of logistic regression and boosting trained on
synthetic rows, tested on real ones).

Texas: ``texas/texas.csv`` with the published schema ``texas.json`` as the
public domain; the target ``RISK_MORTALITY`` is binarised as the paper's
minor vs major risk: codes 0-2 (none given, minor, moderate) are
``"minor"``, 3-4 (major, extreme) ``"major"`` (our reading of the APR-DRG
codes; the paper does not spell out the cut).

The paper's Table 3 / Table 8 figures are not quoted: they could not be
found from this machine, and none are invented.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks import datasets
from sklearn_dpsynth import metrics

#: DP-2Stage variants: (stage-1 pseudo data, lambda, column order).
VARIANTS = {
    "DP-Standard": (None, None, None),
    "DP-Standard-w": (None, 0.65, None),
    "DP-2Stage-U": ("uniform", None, None),
    "DP-2Stage-U-w": ("uniform", 0.65, None),
    "DP-2Stage-O": ("other", None, None),
    "DP-2Stage-O-w": ("other", 0.65, None),
    "DP-2Stage-U-w-shuffle": ("uniform", 0.65, "shuffle"),
}

#: Baselines from the same harness.
BASELINES = ("DP-TBART", "SynLM", "MST", "AIM")

METHODS = list(VARIANTS) + list(BASELINES)

#: RISK_MORTALITY codes of the "major" class (APR-DRG: 3 major, 4 extreme).
TEXAS_MAJOR = ("3", "4")


def load_texas() -> datasets.Dataset:
    """Texas with its published schema as the public domain and a binary target."""
    folder = datasets.data_dir() / "texas"
    with open(folder / "texas.json") as handle:
        schema = json.load(handle)["columns"]
    # categorical codes are read as text: "01" (PAT_AGE) must not become 1
    frame = pd.read_csv(folder / "texas.csv", dtype={
        column["name"]: str for column in schema if column["type"] == "categorical"})
    domain = {}
    for column in schema:
        name = column["name"]
        if column["type"] == "categorical":
            domain[name] = [str(v) for v in column["i2s"]]
        else:
            domain[name] = (float(column["min"]), float(column["max"]))
    risk = frame["RISK_MORTALITY"].isin(TEXAS_MAJOR)
    frame["RISK_MORTALITY"] = np.where(risk, "major", "minor")
    domain["RISK_MORTALITY"] = ["minor", "major"]
    train, test = datasets.standard_split(frame[list(domain)])
    return datasets.Dataset("texas", train, test, domain, target="RISK_MORTALITY",
                            description="Texas hospital discharges 2013 (schema texas.json), "
                                        "RISK_MORTALITY minor (0-2) vs major (3-4)")


def load_table(name: str) -> datasets.Dataset:
    """``adult`` (the raw table) or ``texas``."""
    return load_texas() if name == "texas" else datasets.load_dataset("adult_raw")


def evaluate(synth, data, train, rows, models) -> dict:
    """Fidelity, utility and likelihood figures of one fitted model."""
    efficacy = metrics.ml_efficacy(rows, data.test, data.target, models=models,
                                   domain=data.domain, random_state=0)
    out = {"heldout_ll": float(synth.score(data.test)),
           "hist": metrics.histogram_intersection(train, rows, data.domain),
           "coracc": metrics.correlation_accuracy(train, rows, data.domain),
           "pair": metrics.pair_similarity(train, rows, data.domain),
           "tvd2": metrics.workload_error(train, rows, 2, data.domain)}
    if hasattr(synth, "perplexity"):
        ppl = synth.perplexity(data.test)
        out.update(value_ppl=ppl["value"], all_ppl=ppl["all"])
    for _, row in efficacy.iterrows():
        out[f"{row['model']}_{row['metric']}"] = float(row["value"])
    return out


def make_synthesizer(method: str, seed: int, data, public, args):
    """The unfitted estimator of a method."""
    neural = dict(device=args.device, n_threads=args.threads, random_state=seed)
    if args.epochs is not None:
        neural["epochs"] = args.epochs
    if args.lr is not None:
        neural["lr"] = args.lr
    if method in VARIANTS:
        from sklearn_dpsynth.neural import DP2StageSynthesizer

        pseudo, value_weight, order = VARIANTS[method]
        options = {} if args.stage1_epochs is None else {"stage1_epochs": args.stage1_epochs}
        return DP2StageSynthesizer(
            domain=data.domain, target=data.target, column_order=order,
            pseudo_data=public if pseudo == "other" else pseudo, value_weight=value_weight,
            **options, **neural)
    if method in ("DP-TBART", "SynLM"):
        from sklearn_dpsynth.neural import DPTBARTSynthesizer, SynLMSynthesizer

        cls = DPTBARTSynthesizer if method == "DP-TBART" else SynLMSynthesizer
        return cls(domain=data.domain, **neural)
    from sklearn_dpsynth.marginal import AIMSynthesizer, MSTSynthesizer

    cls = MSTSynthesizer if method == "MST" else AIMSynthesizer
    return cls(domain=data.domain, random_state=seed)


def run_job(dataset: str, method: str, seed: int, args) -> dict:
    """Fit one method on one dataset with one seed, evaluate, write the JSON file."""
    if args.data_dir is not None:
        os.environ["DPSYNTH_DATA"] = str(args.data_dir)
    data = load_table(dataset)
    train = data.train
    if args.train_rows is not None and args.train_rows < len(train):
        train = train.sample(args.train_rows, random_state=0).reset_index(drop=True)
    public = None
    if method in VARIANTS and VARIANTS[method][0] == "other":
        other = load_table("texas" if dataset == "adult" else "adult").train
        public = other.sample(min(args.public_rows, len(other)), random_state=0)
    synth = make_synthesizer(method, seed, data, public, args)
    start = time.perf_counter()
    synth.fit(train, epsilon=args.epsilon, delta=args.delta)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    rows = synth.sample(len(train))
    sample_seconds = time.perf_counter() - start
    result = {"dataset": dataset, "method": method, "seed": seed, "train_rows": len(train),
              "device": args.device, "fit_s": fit_seconds, "sample_s": sample_seconds,
              "epsilon_spent": synth.privacy_ledger_.spent()[0]}
    for name in ("stage1_steps_", "steps_", "noise_multiplier_"):
        if hasattr(synth, name):
            result[name.rstrip("_")] = float(getattr(synth, name))
    result.update(evaluate(synth, data, train, rows, args.models))
    path = job_path(args.out, dataset, method, seed)
    path.write_text(json.dumps(result, indent=1))
    return result


def job_path(out: Path, dataset: str, method: str, seed: int) -> Path:
    """Result file of one job."""
    return Path(out) / f"{dataset}__{method}__seed{seed}.json"


def run_all(args) -> None:
    """Run the missing jobs, ``--jobs`` processes at a time (spawned: safe with CUDA)."""
    Path(args.out).mkdir(parents=True, exist_ok=True)
    todo = [(dataset, method, seed) for dataset in args.dataset for seed in args.seeds
            for method in args.methods
            if not job_path(args.out, dataset, method, seed).exists()]
    print(f"{len(todo)} jobs to run, {args.jobs} at a time; results in {args.out}", flush=True)
    if args.jobs == 1:
        for job in todo:
            print(json.dumps(run_job(*job, args)), flush=True)
        return
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(run_job, *job, args): job for job in todo}
        for future in as_completed(futures):
            try:
                print(json.dumps(future.result()), flush=True)
            except Exception as error:  # keep the other jobs running; report the failure
                print(f"job {futures[future]} failed: {error!r}", flush=True)


#: Columns of the summary table (the paper's metrics first).
SUMMARY_COLUMNS = ["logistic_f1", "logistic_roc_auc", "logistic_accuracy", "boosting_f1",
                   "boosting_roc_auc", "boosting_accuracy", "coracc", "pair", "hist", "tvd2",
                   "heldout_ll", "value_ppl", "fit_s", "sample_s"]


def summarise(folder: Path) -> str:
    """Markdown table, mean ± std over seeds, of the JSON results in ``folder``."""
    frame = pd.DataFrame([json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))])
    if frame.empty:
        return f"no results in {folder}"
    columns = [c for c in SUMMARY_COLUMNS if c in frame.columns]
    lines = []
    for dataset, part in frame.groupby("dataset", sort=False):
        lines += [f"\n### {dataset} (epsilon={part['epsilon_spent'].max():.3g})\n",
                  "| method | seeds | " + " | ".join(columns) + " |",
                  "|---" * (len(columns) + 2) + "|"]
        order = [m for m in METHODS if m in set(part["method"])]
        for method in order:
            rows = part[part["method"] == method]
            cells = [_mean_std(rows[c]) for c in columns]
            lines.append(f"| {method} | {len(rows)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _mean_std(values: pd.Series) -> str:
    values = values.dropna()
    if values.empty:
        return ""
    if len(values) == 1:
        return f"{values.mean():.3g}"
    return f"{values.mean():.3g} ± {values.std(ddof=1):.2g}"


def load_public_split() -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """``adult_public_split``: private and public rows (integer codes) and the domain."""
    folder = datasets.data_dir() / "adult_public_split"
    with open(folder / "domain.json") as handle:
        domain = {column: int(k) for column, k in json.load(handle).items()}
    private = pd.read_csv(folder / "private.csv")[list(domain)]
    public = pd.read_csv(folder / "public.csv")[list(domain)]
    return private, public, domain


def pretrain_check(args) -> pd.DataFrame:
    """DP-TBART and SynLM with and without non-private pre-training on public.csv."""
    from sklearn_dpsynth.neural import DPTBARTSynthesizer, SynLMSynthesizer

    private, public, domain = load_public_split()
    train, test = datasets.standard_split(private)
    if args.train_rows is not None and args.train_rows < len(train):
        train = train.sample(args.train_rows, random_state=0).reset_index(drop=True)
    results = []
    for seed in args.seeds:
        for cls in (DPTBARTSynthesizer, SynLMSynthesizer):
            for epochs in (0.0, args.pretrain_epochs):
                class WithPublic(cls):  # what fit(public_data=...) will do (issue 10)
                    def _fit_encoded(self, codes, ledger, rng):
                        return super()._fit_encoded(codes, ledger, rng,
                                                    public=self.domain_.encode(public))

                synth = WithPublic(domain=domain, epochs=args.epochs, random_state=seed)
                synth.pretrain_epochs = epochs
                start = time.perf_counter()
                synth.fit(train, epsilon=args.epsilon, delta=args.delta)
                result = {"method": cls.__name__, "pretrain_epochs": epochs, "seed": seed,
                          "fit_s": time.perf_counter() - start,
                          "heldout_nll": -synth.score(test)}
                rows = synth.sample(len(train))
                result["tvd2"] = metrics.workload_error(train, rows, 2, domain)
                print(json.dumps(result), flush=True)
                results.append(result)
    return pd.DataFrame(results)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", nargs="+", default=["adult"], choices=["adult", "texas"])
    parser.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=Path("results/dp2stage"),
                        help="folder of the per-job JSON results")
    parser.add_argument("--jobs", type=int, default=1, help="parallel processes")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads per job (neural methods)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="folder holding adult_raw/ and texas/ (default: ../shared/data)")
    parser.add_argument("--train-rows", type=int, default=None,
                        help="seeded subsample of the training table (default: all)")
    parser.add_argument("--public-rows", type=int, default=5000,
                        help="rows of the other table used by DP-2Stage-O")
    parser.add_argument("--epochs", type=float, default=None,
                        help="DP-SGD epochs of the neural methods (default: each one's own)")
    parser.add_argument("--lr", type=float, default=None,
                        help="DP-SGD learning rate of the neural methods (default: each one's own)")
    parser.add_argument("--stage1-epochs", type=float, default=None,
                        help="DP-2Stage stage-1 epochs (default: the estimator's 5)")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--models", nargs="+", default=["logistic", "boosting"])
    parser.add_argument("--summarise", type=Path, default=None, metavar="DIR",
                        help="only print the markdown summary of the results in DIR")
    parser.add_argument("--pretrain-check", action="store_true",
                        help="instead: DP-TBART/SynLM with and without public pre-training "
                             "on adult_public_split")
    parser.add_argument("--pretrain-epochs", type=float, default=5.0)
    args = parser.parse_args(argv)
    if args.data_dir is not None:
        os.environ["DPSYNTH_DATA"] = str(args.data_dir)
    if args.summarise is not None:
        print(summarise(args.summarise))
        return
    if args.pretrain_check:
        args.epochs = 10.0 if args.epochs is None else args.epochs
        table = pretrain_check(args)
        print(table.groupby(["method", "pretrain_epochs"]).mean(numeric_only=True).round(4))
        return
    run_all(args)
    print(summarise(args.out))


if __name__ == "__main__":
    main()
