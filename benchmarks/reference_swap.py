"""Swap halves of MST between the reference and ours: our estimation on the reference's measurements.

Three steps, two interpreters:

0. ``prepare`` (here) writes the harness's training codes and domain into ``--out``.
1. ``dump`` runs in the reference's venv (mbi 1.0).  It calls the steps of
   private-pgm's ``mechanisms/mst.py`` one by one, exactly as ``MST()`` does
   (same ``numpy.random.seed``, same draws, so its synthetic table is the
   harness's reference run for that seed), and pickles the 1-way
   measurements, the compression supports, the selected tree, the 2-way
   measurements and the reference's synthetic codes.
2. ``swap`` runs here.  For every dump it estimates *our* model
   (:meth:`MSTSynthesizer._estimate`, warm-started and stopped as in a fit)
   from the reference's measurements on the reference's compressed domain,
   samples it, and prints both sides' 2-way / 3-way TVD per seed and the
   paired differences: on identical measurements, any difference is the
   estimation and the sampling.

Usage::

    python -m benchmarks.reference_swap prepare --table texas --out swap
    /work/refenv/bin/python -m benchmarks.reference_swap dump --reference-dir /work/refcode \\
        --table texas --epsilon 0.3 --seeds 0-11 --out swap
    python -m benchmarks.reference_swap swap --table texas --epsilon 0.3 --out swap \\
        [--param early_stopping=0.6]
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path


def _seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def dump(args: argparse.Namespace) -> None:
    """Reference MST, step by step, with its intermediate releases pickled (reference venv)."""
    import json

    sys.path.insert(0, args.reference_dir)
    from benchmarks.reference_driver import patch_chex_numeric, shim_matplotlib
    shim_matplotlib()
    patch_chex_numeric()
    import mbi
    import numpy as np
    import pandas as pd

    import mst

    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    table = folder / f"{args.table}-train.csv"
    domain = json.loads((folder / f"{args.table}-domain.json").read_text())
    data = mbi.Dataset(pd.read_csv(table), mbi.Domain.fromdict(domain))
    for seed in _seeds(args.seeds):
        np.random.seed(seed)
        rho = mst.cdp_rho(args.epsilon, args.delta)
        sigma = np.sqrt(3 / (2 * rho))
        log1 = mst.measure(data, [(col,) for col in data.domain], sigma)
        compressed, log1c, undo = mst.compress_domain(data, log1)
        cliques = mst.select(compressed, rho / 3.0, log1c)
        log2 = mst.measure(compressed, cliques, sigma)
        model = mst.estimation.mirror_descent(compressed.domain, log1c + log2, iters=10000)
        synthetic = undo(model.synthetic_data())
        record = {
            "one_way": [(m.clique, np.asarray(m.noisy_measurement), m.stddev) for m in log1],
            "cliques": [tuple(c) for c in cliques],
            "two_way": [(m.clique, np.asarray(m.noisy_measurement), m.stddev) for m in log2],
            "synthetic": synthetic.df[list(data.domain.attrs)].to_numpy(),
        }
        path = folder / f"{args.table}-eps{args.epsilon:g}-seed{seed}.pkl"
        with open(path, "wb") as handle:
            pickle.dump(record, handle)
        print(f"seed {seed}: {path}", flush=True)


def _ours_on(record: dict, table, epsilon: float, params: dict):
    """Our MST model estimated from the reference's measurements (its compressed domain)."""
    import numpy as np

    from sklearn_dpsynth import MSTSynthesizer
    from sklearn_dpsynth.marginal.compression import DomainCompression
    from sklearn_dpsynth.pgm import Measurement, estimate_total

    columns = list(table.domain)
    synth = MSTSynthesizer(domain=table.domain, random_state=0, **params)
    synth.fit(table.train, epsilon=epsilon)  # fitted attributes; its model is replaced below
    mappings = []
    for _, noisy, sigma in record["one_way"]:
        kept = noisy >= 3 * sigma  # the reference's support rule (a single rare code too)
        mapping = np.empty(kept.size, dtype=np.int64)
        mapping[kept], mapping[~kept] = np.arange(kept.sum()), kept.sum()
        mappings.append(mapping)
    synth.compression_ = DomainCompression(mappings)
    one_way = [synth._one_way_measurement(j, noisy, sigma)
               for j, (_, noisy, sigma) in enumerate(record["one_way"])]
    total = estimate_total(synth._model_domain(), one_way)
    independent = [synth.compression_.project_counts(j, noisy, total)
                   for j, (_, noisy, _) in enumerate(record["one_way"])]
    two_way = [Measurement(tuple(synth.attributes_[columns.index(c)] for c in clique),
                           noisy, float(sigma)) for clique, noisy, sigma in record["two_way"]]
    synth._estimate(one_way + two_way, independent)
    return synth


def prepare(args: argparse.Namespace) -> None:
    """Write the table's training codes and domain where ``dump`` reads them."""
    import json

    from benchmarks.reference import TABLES, data_folder

    table = TABLES[args.table](data_folder(args.data))
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    table.train[list(table.domain)].to_csv(folder / f"{args.table}-train.csv", index=False)
    (folder / f"{args.table}-domain.json").write_text(json.dumps(table.domain))


def swap(args: argparse.Namespace) -> None:
    """Both sides' scores on the reference's measurements, per seed and paired."""
    import numpy as np
    import pandas as pd

    from benchmarks.reference import TABLES, data_folder, marginal_scores
    from sklearn_dpsynth.cli import parse_pairs

    dumps = sorted(Path(args.out).glob(f"{args.table}-eps{args.epsilon:g}-seed*.pkl"),
                   key=lambda p: int(p.stem.rsplit("seed", 1)[1]))
    if not dumps:
        raise SystemExit(f"no dumps for {args.table} at epsilon {args.epsilon:g} in {args.out}")
    table = TABLES[args.table](data_folder(args.data))
    params = parse_pairs(args.param, "--param")
    columns = list(table.domain)
    rows = []
    for path in dumps:
        with open(path, "rb") as handle:
            record = pickle.load(handle)
        reference = marginal_scores(table.train, pd.DataFrame(record["synthetic"], columns=columns),
                                    table.domain)
        synth = _ours_on(record, table, args.epsilon, params)
        ours = marginal_scores(table.train, synth.sample(len(table.train)), table.domain)
        rows.append([reference["tvd2"], ours["tvd2"], reference["tvd3"], ours["tvd3"]])
        print(f"{path.stem}: reference {rows[-1][0]:.5f} / {rows[-1][2]:.5f}, "
              f"ours {rows[-1][1]:.5f} / {rows[-1][3]:.5f}", flush=True)
    scores = np.array(rows)
    for name, k in (("2-way", 0), ("3-way", 2)):
        diff = scores[:, k + 1] - scores[:, k]
        error = f"{diff.std(ddof=1) / np.sqrt(len(diff)):.5f}" if len(diff) > 1 else "n/a"
        print(f"{name}: reference {scores[:, k].mean():.5f}, ours {scores[:, k + 1].mean():.5f}, "
              f"paired difference {diff.mean():+.5f} (SE {error}, ours better on "
              f"{(diff < 0).sum()}/{len(diff)}) {params or ''}")


def main(argv: list[str] | None = None) -> None:
    """Command line: ``dump`` (reference venv) or ``swap`` (here)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    zero = sub.add_parser("prepare", help="run here first")
    zero.add_argument("--data", default=None, help="shared data folder")
    one = sub.add_parser("dump", help="run in the reference's venv")
    one.add_argument("--reference-dir", required=True)
    two = sub.add_parser("swap", help="run here")
    two.add_argument("--param", action="append", default=[],
                     help="MST parameter NAME=VALUE (VALUE is JSON when it parses, else text)")
    two.add_argument("--data", default=None, help="shared data folder")
    for command in (zero, one, two):
        command.add_argument("--table", default="texas")
        command.add_argument("--epsilon", type=float, default=0.3)
        command.add_argument("--out", required=True)
    one.add_argument("--delta", type=float, default=1e-9)
    one.add_argument("--seeds", default="0-11", help="LOW-HIGH")
    args = parser.parse_args(argv)
    {"prepare": prepare, "dump": dump, "swap": swap}[args.command](args)


if __name__ == "__main__":
    main()
