"""Benchmark AIMSynthesizer on Adult beside MST and the Independent baseline.

Standalone script::

    python benchmarks/aim_adult.py --seeds 3

Protocol: ``../shared/data/adult/adult.csv`` (48,842 rows, 14 integer-coded
columns) with its public domain ``adult-domain.json``; a seeded permutation
(``numpy.random.default_rng(0)``) holds out the first 10% of rows as the
test set, the rest is the private training table.  For every method,
epsilon (``--epsilons``, default 0.3 1 3; ``delta = 1e-9``) and seed, the
synthesizer is fitted with its default settings, ``len(train)`` rows are
sampled, and the script reports the fit time, the number of rounds (AIM:
select-measure rounds; MST: measured 2-way marginals), the mean total
variation distance (half the L1 distance of normalised histograms) between
synthetic and training rows over all 2-way marginals and over 100 random
3-way marginals (fixed seed), and the held-out negative log-likelihood
(``-score(test)``, nats per row).  Heavy: run one at a time.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.mst_adult import load_adult, marginal_tvd, workloads
from sklearn_dpsynth.cli import parse_pairs
from sklearn_dpsynth.registry import available_methods, get_method

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "adult"

#: Methods compared by default (registry names).
METHODS = ("aim", "mst", "independent")


def mean_tvd(real: np.ndarray, fake: np.ndarray, sizes: list[int], marginals: list) -> float:
    """Mean total variation distance over a list of marginals."""
    return float(np.mean([marginal_tvd(real, fake, sizes, m) for m in marginals]))


def make(method: str, domain: dict, seed: int, aim_params: dict | None = None):
    """A synthesizer with default settings, or None when not importable.

    ``aim_params`` overrides AIM's hyperparameters (other methods ignore it).
    """
    try:
        cls = get_method(method)
    except ImportError:
        return None
    params = dict(aim_params or {}) if method == "aim" else {}
    return cls(domain=domain, random_state=seed, **params)


def rounds_of(synth) -> float:
    """Rounds of AIM, measured 2-way marginals of MST, else NaN."""
    if hasattr(synth, "n_rounds_"):
        return float(synth.n_rounds_)
    if hasattr(synth, "cliques_"):
        return float(len(synth.cliques_))
    return float("nan")


def run_one(method, epsilon, seed, data, args) -> dict | None:
    """Fit, sample and evaluate one method once."""
    train, test, domain, pairs, triples = data
    synth = make(method, domain, seed, parse_pairs(args.aim_param, "--aim-param"))
    if synth is None:
        return None
    start = time.perf_counter()
    synth.fit(train, epsilon=epsilon, delta=args.delta)
    fit_s = time.perf_counter() - start
    synthetic = synth.sample(len(train))
    sizes = [domain[c] for c in train.columns]
    real, fake = train.to_numpy(), synthetic[train.columns].to_numpy()
    return {
        "method": method, "epsilon": epsilon, "seed": seed, "fit_s": fit_s,
        "rounds": rounds_of(synth),
        "tvd_2way": mean_tvd(real, fake, sizes, pairs),
        "tvd_3way": mean_tvd(real, fake, sizes, triples),
        "nll_test": -synth.score(test),
        "epsilon_spent": synth.privacy_ledger_.spent()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    parser.add_argument("--methods", nargs="+", default=list(METHODS),
                        choices=available_methods())
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--output", type=Path, default=None, help="CSV of every run")
    parser.add_argument("--aim-param", action="append", default=[], metavar="NAME=VALUE",
                        help="override an AIM hyperparameter (repeatable; VALUE is JSON "
                             "when it parses, e.g. null, else text)")
    args = parser.parse_args()
    train, test, domain = load_adult(args.data)
    data = (train, test, domain, *workloads(train.shape[1]))
    rows = []
    for epsilon in args.epsilons:
        for method in args.methods:
            for seed in range(args.seeds):
                row = run_one(method, epsilon, seed, data, args)
                if row is None:
                    print(f"{method}: not importable, skipped", flush=True)
                    break
                rows.append(row)
                print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in row.items()), flush=True)
    table = pd.DataFrame(rows)
    if args.output is not None:
        table.to_csv(args.output, index=False)
    summary = table.drop(columns="seed").groupby(["epsilon", "method"], sort=False).agg(
        ["mean", "std"])
    with pd.option_context("display.width", 200, "display.max_columns", 30,
                           "display.float_format", "{:.4f}".format):
        print(summary)


if __name__ == "__main__":
    main()
