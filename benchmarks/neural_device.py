"""The neural synthesizers on a GPU against the CPU: the same guarantee, the same model.

Run from the repository root on a machine with CUDA (``--device cuda``)::

    python -m benchmarks.neural_device --methods dptbart synlm dp2stage --out results/device

For each method it fits, with the same ``random_state`` and the method's
default hyperparameters (``--epochs`` shortens training), a
``make_bayesnet`` table of ``--rows`` rows and ``--columns`` columns of
codes at ``epsilon=1, delta=1e-6``:

* on the CPU and on the device: the privacy ledgers must be equal (the
  accounting never depends on where the arithmetic runs) and the fits
  comparable -- mean 2-way TVD of ``sample(rows)`` against the training
  table and held-out ``score`` (nats per row, higher is better);
* twice on the device with the same seed: whether the samples are
  identical (CUDA kernels may reduce in a different order from run to run);
* a device-fitted model saved with :func:`sklearn_dpsynth.persistence.save`
  and loaded back on the CPU (``device="cpu"``) must sample the same rows
  as the device model sampled on the CPU.

It prints one JSON line per method (and writes them to ``--out``), with
fit wall seconds on each device.  Exit status 1 when a property that must
hold (equal ledgers, finite scores, the saved model's samples) fails.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from sklearn_dpsynth import persistence
from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.metrics import workload_error
from sklearn_dpsynth.registry import get_method


def mean_two_way_tvd(real: pd.DataFrame, synth: pd.DataFrame, sizes: list[int]) -> float:
    """Mean total variation distance over every pair of code columns."""
    return float(workload_error(real, synth, k=2, domain=dict(zip(real.columns, sizes))))


def ledger_text(model) -> str:
    """The ledger's entries as one comparable string."""
    return model.privacy_ledger_.summary().to_csv(index=False)


def fit(method: str, device: str, train: pd.DataFrame, sizes: list[int], args) -> tuple:
    cls = get_method(method)
    params = dict(domain=sizes, device=device, random_state=args.seed)
    if args.epochs is not None:
        params["epochs"] = args.epochs
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = cls(**params).fit(train, epsilon=1.0, delta=1e-6)
    return model, time.perf_counter() - start


def check_method(method: str, train, test, sizes, args) -> dict:
    cpu, cpu_s = fit(method, "cpu", train, sizes, args)
    dev, dev_s = fit(method, args.device, train, sizes, args)
    dev2, _ = fit(method, args.device, train, sizes, args)
    n = len(train)
    dev_rows = dev.sample(n, random_state=1)
    buffer = io.BytesIO()
    persistence.save(dev, buffer)
    buffer.seek(0)
    loaded = persistence.load(buffer).set_params(device="cpu")
    dev.set_params(device="cpu")
    same_after_load = dev.sample(500, random_state=2).equals(loaded.sample(500, random_state=2))
    dev.set_params(device=args.device)
    result = {
        "method": method, "device": args.device, "rows": n, "columns": len(sizes),
        "ledger_equal": ledger_text(cpu) == ledger_text(dev),
        "fit_seconds_cpu": round(cpu_s, 2), f"fit_seconds_{args.device}": round(dev_s, 2),
        "tvd2_cpu": round(mean_two_way_tvd(train, cpu.sample(n, random_state=1), sizes), 4),
        f"tvd2_{args.device}": round(mean_two_way_tvd(train, dev_rows, sizes), 4),
        "score_cpu": round(float(cpu.score(test)), 4),
        f"score_{args.device}": round(float(dev.score(test)), 4),
        "same_seed_same_samples_on_device": dev_rows.equals(dev2.sample(n, random_state=1)),
        "saved_then_loaded_on_cpu_samples_equal": bool(same_after_load),
    }
    result["ok"] = bool(result["ledger_equal"] and result["saved_then_loaded_on_cpu_samples_equal"]
                        and np.isfinite(result["score_cpu"])
                        and np.isfinite(result[f"score_{args.device}"]))
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=["dptbart", "synlm", "dp2stage"])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--columns", type=int, default=8)
    parser.add_argument("--epochs", type=float, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    data = make_bayesnet(n_samples=args.rows + 2_000, n_features=args.columns, n_numeric=0,
                         random_state=0)
    sizes = list(data.network.cardinalities)
    frame = pd.DataFrame(np.asarray(data.codes), columns=[f"x{i}" for i in range(len(sizes))])
    train, test = frame.iloc[:args.rows].reset_index(drop=True), frame.iloc[args.rows:]
    results = []
    for method in args.methods:
        result = check_method(method, train, test, sizes, args)
        print(json.dumps(result), flush=True)
        results.append(result)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        Path(args.out, "neural_device.json").write_text(json.dumps(results, indent=1))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
