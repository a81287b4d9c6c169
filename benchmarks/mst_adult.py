"""Benchmark MSTSynthesizer on Adult: fit/sample time, marginal error, held-out NLL.

Standalone script (the general harness is ``benchmarks/run.py``); from the
repository root::

    python -m benchmarks.mst_adult --seeds 5

Protocol: ``../shared/data/adult/adult.csv`` with its public domain; a
seeded permutation (``numpy.random.default_rng(0)``) holds out the first
10% of rows as the test set, the rest is the private training table.  For
every seed the synthesizer is fitted at ``(epsilon, delta)``, ``len(train)``
rows are sampled, and the script reports the mean total variation distance
(half the L1 distance of normalised histograms) between synthetic and
training rows over all 2-way marginals and over 100 random 3-way marginals
(fixed seed), and the held-out negative log-likelihood (``-score(test)``,
nats per row).
"""

from __future__ import annotations

import argparse
import os
import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks import datasets
from sklearn_dpsynth._marginals import contingency_counts
from sklearn_dpsynth.marginal.mst import MSTSynthesizer

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "adult"


def load_adult(data_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Training and held-out rows of Adult (the harness's standard split), and its domain."""
    os.environ["DPSYNTH_DATA"] = str(Path(data_dir).resolve().parent)
    data = datasets.load_adult()
    return data.train, data.test, data.domain


def marginal_tvd(a: np.ndarray, b: np.ndarray, sizes: list[int], columns: tuple) -> float:
    """Total variation distance between the normalised histograms of two code tables."""
    ha = contingency_counts(a, sizes, columns) / len(a)
    hb = contingency_counts(b, sizes, columns) / len(b)
    return 0.5 * float(np.abs(ha - hb).sum())


def workloads(n_columns: int, n_triples: int = 100, seed: int = 0) -> tuple[list, list]:
    """All column pairs and ``n_triples`` random distinct triples (fixed seed)."""
    pairs = list(itertools.combinations(range(n_columns), 2))
    triples = list(itertools.combinations(range(n_columns), 3))
    pick = np.random.default_rng(seed).choice(len(triples), size=n_triples, replace=False)
    return pairs, [triples[k] for k in sorted(pick)]


def run_seed(seed, train, test, domain, args, pairs, triples) -> dict:
    """Fit, sample and evaluate once."""
    early = {"none": None, "holdout": "holdout"}.get(args.early_stopping)
    if args.early_stopping not in ("none", "holdout"):
        early = float(args.early_stopping)
    synth = MSTSynthesizer(domain=domain, random_state=seed, max_iter=args.max_iter,
                           tol=args.tol, early_stopping=early, sampling=args.sampling)
    start, cpu_start = time.perf_counter(), time.process_time()
    synth.fit(train, epsilon=args.epsilon, delta=args.delta)
    fit_s = time.perf_counter() - start
    fit_cpu_s = time.process_time() - cpu_start
    start = time.perf_counter()
    synthetic = synth.sample(len(train))
    sample_s = time.perf_counter() - start
    sizes = [domain[c] for c in train.columns]
    real, fake = train.to_numpy(), synthetic[train.columns].to_numpy()
    return {
        "seed": seed,
        "fit_s": fit_s,
        "fit_cpu_s": fit_cpu_s,
        "sample_s": sample_s,
        "tvd_2way": np.mean([marginal_tvd(real, fake, sizes, p) for p in pairs]),
        "tvd_3way": np.mean([marginal_tvd(real, fake, sizes, t) for t in triples]),
        "nll_test": -synth.score(test),
        "iterations": synth.estimation_info_["iterations"],
        "epsilon_spent": synth.privacy_ledger_.spent()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--max-iter", type=int, default=1000)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--early-stopping", default="holdout",
                        help="discrepancy factor of the estimation, 'holdout' (the "
                             "default: chosen per fit) or 'none'")
    parser.add_argument("--sampling", default="lowvar", choices=["lowvar", "iid"])
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    train, test, domain = load_adult(args.data)
    pairs, triples = workloads(train.shape[1])
    rows = []
    for seed in range(args.seeds):
        rows.append(run_seed(seed, train, test, domain, args, pairs, triples))
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in rows[-1].items()), flush=True)
    table = pd.DataFrame(rows).set_index("seed")
    summary = table.agg(["mean", "std"])
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4f}".format):
        print(table)
        print(summary)


if __name__ == "__main__":
    main()
