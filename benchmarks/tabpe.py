"""Private Evolution side by side with DPSDA's Tab-PE (issue 27, item 3).

Our :class:`~sklearn_dpsynth.evolution.PrivateEvolutionSynthesizer` at its
defaults -- without public data (the mutation generator) and with a public
table (the public bootstrap) -- against Independent, AIM and DPSDA's own
Tab-PE (microsoft/DPSDA, ``pe/api/tabular``), on the coded tables of
:mod:`benchmarks.reference` (``adult``: coded Adult; ``ordered``: 20 binary
columns tied by one constraint, a table whose structure is high-order).
Same training rows, public domain, epsilon and delta for every method.

Tab-PE never runs in this process: it lives in its own virtual environment
(``--dpsda-python``, with DPSDA's checkout ``--dpsda-dir``) and is driven by
``benchmarks/tabpe_driver.py`` as a subprocess.  From the repository root::

    python -m benchmarks.tabpe --tables adult,ordered \\
        --methods pe,pe_public,independent,aim,tabpe --epsilon 1 --seeds 0,1,2 \\
        --dpsda-dir /work/dpsda-src --dpsda-python /work/venv-dpsda/bin/python \\
        --out benchmarks/results/tabpe
    python -m benchmarks.tabpe --summarise benchmarks/results/tabpe

Figures per run: ``fit_cpu_seconds`` (``time.process_time`` of the fit
call; for Tab-PE, of ``PE.run`` inside the driver, imports and CSV I/O
excluded), ``fit_seconds`` (wall), ``tvd2``/``tvd3`` (mean TVD over every
2-way marginal and over every 3-way one, or ``--n-3way`` of them drawn with
the public seed 0) and ``highorder`` (the table's own high-order check, see
:data:`benchmarks.reference.TABLES`).  Ours samples as many rows as the
training table; Tab-PE's output is its final ``--tabpe-samples`` selected
rows (its example's 1,000), scored as a distribution like ours.

``pe_public`` gets the held-out 20% of the table (the rows no method trains
on) as its public table: public data from the private rows' own
distribution, the favourable case for public data.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd

from benchmarks.reference import (TABLES, CodedTable, check_codes, data_folder,
                                  marginal_scores, write_coded_table)

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "tabpe_driver.py"
METHODS = ("pe", "pe_public", "independent", "aim", "tabpe")
FIGURES = ("fit_cpu_seconds", "fit_seconds", "tvd2", "tvd3", "highorder")


def fit_ours(method: str, table: CodedTable, epsilon: float, delta: float,
             seed: int) -> tuple[pd.DataFrame, dict]:
    """Fit one of our methods at its defaults; its synthetic codes and fit times."""
    from sklearn_dpsynth import AIMSynthesizer, IndependentSynthesizer
    from sklearn_dpsynth.evolution import PrivateEvolutionSynthesizer

    kinds = {"pe": PrivateEvolutionSynthesizer, "pe_public": PrivateEvolutionSynthesizer,
             "independent": IndependentSynthesizer, "aim": AIMSynthesizer}
    synth = kinds[method](domain=table.domain, random_state=seed)
    extra = {"public_data": table.test} if method == "pe_public" else {}
    start_cpu, start_wall = time.process_time(), time.perf_counter()
    synth.fit(table.train, epsilon=epsilon, delta=delta, **extra)
    info = {"fit_cpu_seconds": time.process_time() - start_cpu,
            "fit_seconds": time.perf_counter() - start_wall,
            "spent_epsilon": float(synth.privacy_ledger_.spent()[0])}
    return synth.sample(len(table.train)), info


def fit_tabpe(table: CodedTable, epsilon: float, delta: float, seed: int,
              options: argparse.Namespace) -> tuple[pd.DataFrame | None, dict]:
    """Run DPSDA's Tab-PE in its own interpreter; ``None`` rows on failure."""
    with tempfile.TemporaryDirectory(prefix="dpsynth-tabpe-") as tmp:
        csv_path, domain_path = write_coded_table(table.train, table.domain, Path(tmp))
        out, info_path = Path(tmp) / "synthetic.csv", Path(tmp) / "info.json"
        command = [options.dpsda_python, str(DRIVER), "--dpsda-dir", options.dpsda_dir,
                   "--data", str(csv_path), "--domain", str(domain_path),
                   "--epsilon", repr(epsilon), "--delta", repr(delta), "--seed", str(seed),
                   "--iterations", str(options.tabpe_iterations),
                   "--samples", str(options.tabpe_samples),
                   "--out", str(out), "--info", str(info_path)]
        try:
            done = subprocess.run(command, capture_output=True, text=True,
                                  timeout=options.timeout)
        except subprocess.TimeoutExpired:
            return None, {"status": "timeout"}
        if done.returncode != 0:
            return None, {"status": "error", "stderr_tail": done.stderr[-2000:]}
        return pd.read_csv(out), json.loads(info_path.read_text())


def run_one(table_name: str, method: str, epsilon: float, seed: int,
            options: argparse.Namespace) -> dict:
    """Fit and score one run; write its JSON record into ``--out``."""
    table = TABLES[table_name](data_folder(options.data_dir))
    record = {"table": table_name, "method": method, "epsilon": epsilon,
              "delta": options.delta, "seed": seed, "n_train": len(table.train),
              "highorder_name": table.highorder_name, "status": "ok"}
    if method == "tabpe":
        synthetic, info = fit_tabpe(table, epsilon, options.delta, seed, options)
    else:
        synthetic, info = fit_ours(method, table, epsilon, options.delta, seed)
    record.update(info)
    if synthetic is not None:
        synthetic = check_codes(synthetic, table.domain, method)
        record["n_synthetic"] = len(synthetic)
        record.update(marginal_scores(table.train, synthetic, table.domain, options.n_3way))
        record["highorder"] = float(table.highorder(synthetic, table.train))
    path = Path(options.out) / f"{table_name}-{method}-eps{epsilon:g}-seed{seed}.json"
    path.write_text(json.dumps(record, indent=1))
    return record


def summarise(folder: str | Path) -> str:
    """Markdown table: mean (min-max) of every figure per table, method and epsilon."""
    records = pd.DataFrame([json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))])
    records = records[records["status"] == "ok"]
    lines = ["| table | method | epsilon | seeds | " + " | ".join(FIGURES) + " |",
             "|---" * (4 + len(FIGURES)) + "|"]
    order = {m: i for i, m in enumerate(METHODS)}
    groups = records.groupby(["table", "method", "epsilon"], sort=False)
    keys = sorted(groups.groups, key=lambda k: (k[0], order.get(k[1], 99), k[2]))
    for key in keys:
        group = groups.get_group(key)
        cells = [_cell(group[f]) if f in group else "n/a" for f in FIGURES]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]:g} | {len(group)} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(values: pd.Series) -> str:
    values = values.dropna()
    if values.empty:
        return "n/a"
    digits = 1 if values.max() >= 10 else 3
    if len(values) == 1:
        return f"{values.iloc[0]:.{digits}f}"
    return f"{values.mean():.{digits}f} ({values.min():.{digits}f}-{values.max():.{digits}f})"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="adult,ordered")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--epsilon", type=float, nargs="+", default=[1.0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--n-3way", type=int, default=200)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--dpsda-dir", default="/work/dpsda-src")
    parser.add_argument("--dpsda-python", default="/work/venv-dpsda/bin/python")
    parser.add_argument("--tabpe-iterations", type=int, default=30)
    parser.add_argument("--tabpe-samples", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--out", default=str(HERE / "results" / "tabpe"))
    parser.add_argument("--summarise", default=None, help="print the table of a results folder")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.summarise:
        print(summarise(args.summarise))
        return
    unknown = set(args.methods.split(",")) - set(METHODS)
    if unknown:
        raise SystemExit(f"unknown methods {sorted(unknown)}; choose from {list(METHODS)}")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for table in args.tables.split(","):
        for epsilon in args.epsilon:
            for seed in (int(s) for s in args.seeds.split(",")):
                for method in args.methods.split(","):
                    record = run_one(table, method, epsilon, seed, args)
                    print(json.dumps({k: record.get(k) for k in
                                      ("table", "method", "seed", "status") + FIGURES}),
                          flush=True)


if __name__ == "__main__":
    main()
