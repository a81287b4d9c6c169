"""Throughput of DP-SGD training of the neural synthesizers, and their default fits on Adult.

Two subcommands, run from the repository root:

``throughput``
    Rows per second of the training loop of
    :func:`sklearn_dpsynth.neural.training.train_transformer` on the
    integer-coded Adult table, with DP-SGD (``ghost`` or ``hooks`` Opacus
    mode) and without DP (the same loop, plain gradients), for the
    column-masked head (``column``) and the equivalent full-vocabulary head
    (``full``).  Each configuration runs ``--rounds`` times, interleaved with
    the others, and the best round is kept (the machine may be shared); both
    wall-clock and CPU-time rates are printed.

``quality``
    Fits ``DPTBARTSynthesizer`` and/or ``SynLMSynthesizer`` with their
    default settings on the standard Adult split (10% held out with
    ``numpy.random.default_rng(0).permutation``) and prints fit seconds,
    held-out NLL (nats/row) and the mean 2-way TVD between a synthetic table
    of the training size and the training table.

Examples
--------
::

    python benchmarks/neural_throughput.py throughput --threads 1 --rounds 3
    python benchmarks/neural_throughput.py quality --methods dptbart synlm --epsilon 1
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import datasets  # noqa: E402
from sklearn_dpsynth.registry import available_methods, get_method  # noqa: E402


def load_adult() -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The Adult table split into (train, test) as the benchmarks do, and its domain."""
    data = datasets.load_adult()
    return data.train, data.test, data.domain


def _measure(codes, sizes, layout_name, d_model, n_layers, head, mode, batch, steps, augmult,
             seed):
    import torch

    from sklearn_dpsynth.neural.layout import FieldLayout, PlainLayout
    from sklearn_dpsynth.neural.dpsgd import DPSGDConfig, TrainingConfig
    from sklearn_dpsynth.neural.training import train_transformer
    from sklearn_dpsynth.neural.transformer import TabularTransformer

    layout = (PlainLayout if layout_name == "dptbart" else FieldLayout)(sizes)
    torch.manual_seed(seed)
    model = TabularTransformer(layout.vocabulary.n_tokens, layout.seq_len, sizes,
                               d_model=d_model, n_layers=n_layers, n_heads=4, head=head)
    dp = None if mode == "none" else DPSGDConfig(1.0, 1.0, grad_sample_mode=mode)
    random_order = layout_name == "synlm"
    warm = TrainingConfig(steps=1, sample_rate=min(256 / len(codes), 1.0),
                          expected_batch_size=256, augmult=augmult, random_order=random_order)
    train_transformer(model, layout, codes, warm, dp=dp, rng=np.random.default_rng(seed),
                      device=torch.device("cpu"))
    config = TrainingConfig(steps=steps, sample_rate=batch / len(codes),
                            expected_batch_size=batch, augmult=augmult,
                            random_order=random_order)
    report = train_transformer(model, layout, codes, config, dp=dp,
                               rng=np.random.default_rng(seed + 1), device=torch.device("cpu"))
    return report.rows_seen / report.seconds, report.rows_seen / report.cpu_seconds


def throughput(args: argparse.Namespace) -> list[dict]:
    """Best-of-rounds training throughput of every requested configuration."""
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    train, _, domain = load_adult()
    sizes = [domain[c] for c in train.columns]
    codes = train.to_numpy()
    configs = [(layout, d, head, mode) for layout in args.layouts for d in args.d_model
               for head in args.heads for mode in args.modes]
    best: dict = {}
    for round_ in range(args.rounds):
        for layout, d, head, mode in configs:
            wall, cpu = _measure(codes, sizes, layout, d, args.n_layers, head, mode,
                                 args.batch, args.steps, args.augmult, seed=round_)
            old = best.get((layout, d, head, mode), (0.0, 0.0))
            best[(layout, d, head, mode)] = (max(old[0], wall), max(old[1], cpu))
    rows = [dict(layout=k[0], d_model=k[1], head=k[2], dp_mode=k[3], rows_per_s=round(v[0]),
                 rows_per_cpu_s=round(v[1])) for k, v in best.items()]
    print(pd.DataFrame(rows).to_string(index=False))
    return rows


def quality(args: argparse.Namespace) -> list[dict]:
    """Default fits on Adult: fit seconds, held-out NLL and mean 2-way TVD."""
    from sklearn_dpsynth.metrics.marginals import workload_error

    train, test, domain = load_adult()
    results = []
    for method in args.methods:
        for seed in range(args.seeds):
            params = json.loads(args.params) if args.params else {}
            synth = get_method(method)(domain=domain, random_state=seed, **params)
            start = time.perf_counter()
            synth.fit(train, epsilon=args.epsilon, delta=args.delta)
            fit_seconds = time.perf_counter() - start
            nll = -synth.score(test)
            start = time.perf_counter()
            fake = synth.sample(len(train))
            sample_seconds = time.perf_counter() - start
            result = dict(method=method, seed=seed, epsilon=args.epsilon,
                          fit_seconds=round(fit_seconds, 1),
                          sample_seconds=round(sample_seconds, 1), nll=round(nll, 3),
                          tvd2=round(workload_error(train, fake, 2, domain), 4),
                          spent_epsilon=synth.privacy_ledger_.spent()[0],
                          steps=synth.steps_, noise_multiplier=round(synth.noise_multiplier_, 3),
                          batch=synth.expected_batch_size_, params=params)
            print(json.dumps(result), flush=True)
            results.append(result)
    return results


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    speed = sub.add_parser("throughput", help="training rows/s with and without DP")
    speed.add_argument("--layouts", nargs="+", default=["dptbart"],
                       choices=["dptbart", "synlm"])
    speed.add_argument("--d-model", nargs="+", type=int, default=[64])
    speed.add_argument("--n-layers", type=int, default=2)
    speed.add_argument("--heads", nargs="+", default=["full", "column"],
                       choices=["full", "column"])
    speed.add_argument("--modes", nargs="+", default=["none", "hooks", "ghost"],
                       choices=["none", "hooks", "ghost"])
    speed.add_argument("--batch", type=int, default=1024)
    speed.add_argument("--steps", type=int, default=5)
    speed.add_argument("--augmult", type=int, default=1)
    speed.add_argument("--rounds", type=int, default=3)
    speed.add_argument("--threads", type=int, default=1,
                       help="torch threads (0: leave torch's default)")
    fits = sub.add_parser("quality", help="default fits on Adult")
    fits.add_argument("--methods", nargs="+", default=["dptbart", "synlm"],
                      choices=available_methods(family="neural"))
    fits.add_argument("--epsilon", type=float, default=1.0)
    fits.add_argument("--delta", type=float, default=1e-9)
    fits.add_argument("--seeds", type=int, default=1)
    fits.add_argument("--params", default="", help="JSON of extra estimator parameters")
    for p in (speed, fits):
        p.add_argument("--out", default="", help="write the results as JSON here")
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        results = throughput(args) if args.command == "throughput" else quality(args)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
