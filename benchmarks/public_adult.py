"""Public data and Private Evolution on Adult: Figure 2 of Swanberg et al., on our data.

Standalone script, from the repository root::

    nice -n 10 python -m benchmarks.public_adult --epsilons 0.1 0.3 1 3 10 --seeds 3 \\
        --methods dp_workload independent mst pmw_uniform pmw_public mst_public public_alone
    python -m benchmarks.public_adult --report benchmarks/results/public_adult*.json \\
        --plot docs/images/public_adult.png

Protocol: ``../shared/data/adult_public_split`` -- ``private.csv`` (32,384
rows) is private, ``public.csv`` (3,238 rows) public, both on the split's
``domain.json`` (numeric columns in 32 codes).  The workload is every 2-way
marginal (105); the metric is the mean total variation distance over the
workload between the private table and ``len(private)`` synthetic rows
(for "DP workload", the noisy answers projected onto the simplex; for the
"alone" rows, the public table itself).  ``delta = 1e-9``.  The
out-of-distribution public table ("ood") is 3,238 rows sampled from
:class:`~sklearn_dpsynth.IndependentSynthesizer` fitted on the public split
with ``epsilon = 1e6`` (practically its exact 1-way marginals; public data,
so no privacy is spent): it knows the 1-way marginals but not the joint.
Each (method, epsilon, seed) run is appended as one JSON line to
``--out`` as soon as it finishes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from benchmarks.datasets import data_dir
from sklearn_dpsynth._marginals import contingency_counts

#: Where results go (git-ignored).
RESULTS = Path(__file__).resolve().parent / "results"


def load_split() -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Private and public tables of ``adult_public_split`` and its domain."""
    folder = data_dir() / "adult_public_split"
    with open(folder / "domain.json") as handle:
        domain = {c: int(k) for c, k in json.load(handle).items()}
    private = pd.read_csv(folder / "private.csv")[list(domain)]
    public = pd.read_csv(folder / "public.csv")[list(domain)]
    return private, public, domain


def ood_public(public: pd.DataFrame, domain: dict) -> pd.DataFrame:
    """Rows of an Independent model of the public table: right 1-way, wrong joint."""
    from sklearn_dpsynth import IndependentSynthesizer
    model = IndependentSynthesizer(domain=domain, random_state=0).fit(public, epsilon=1e6)
    return model.sample(len(public), random_state=0)


def mean_tvd(private: np.ndarray, probabilities: list[np.ndarray], sizes, pairs) -> float:
    """Mean TVD between the private pair marginals and given pair distributions."""
    out = []
    for pair, q in zip(pairs, probabilities):
        p = contingency_counts(private, sizes, pair) / len(private)
        out.append(0.5 * float(np.abs(p - np.asarray(q).reshape(p.shape)).sum()))
    return float(np.mean(out))


def table_tvd(private: np.ndarray, rows: np.ndarray, sizes, pairs) -> float:
    """Mean TVD between the pair marginals of two code tables."""
    return mean_tvd(private, [contingency_counts(rows, sizes, p) / len(rows) for p in pairs],
                    sizes, pairs)


def _synth(name: str, **params) -> Callable:
    def build(domain, seed):
        import importlib
        module, cls = name.rsplit(".", 1)
        return getattr(importlib.import_module(module), cls)(domain=domain, random_state=seed,
                                                             **params)
    return build


PE = "sklearn_dpsynth.evolution.PrivateEvolutionSynthesizer"

#: name -> (builder, which public table ("public", "ood" or None)).
METHODS: dict[str, tuple[Callable, str | None]] = {
    "independent": (_synth("sklearn_dpsynth.IndependentSynthesizer"), None),
    "mst": (_synth("sklearn_dpsynth.MSTSynthesizer"), None),
    "aim": (_synth("sklearn_dpsynth.AIMSynthesizer", rounds=30), None),
    "pmw_uniform": (_synth("sklearn_dpsynth.public.PMWPubSynthesizer"), None),
    "pmw_public": (_synth("sklearn_dpsynth.public.PMWPubSynthesizer"), "public"),
    "pmw_ood": (_synth("sklearn_dpsynth.public.PMWPubSynthesizer"), "ood"),
    "mst_public": (_synth("sklearn_dpsynth.public.MSTPublicSynthesizer"), "public"),
    "mst_ood": (_synth("sklearn_dpsynth.public.MSTPublicSynthesizer"), "ood"),
    "jam_uniform": (_synth("sklearn_dpsynth.public.JAMSynthesizer"), None),
    "jam_public": (_synth("sklearn_dpsynth.public.JAMSynthesizer"), "public"),
    "jam_ood": (_synth("sklearn_dpsynth.public.JAMSynthesizer"), "ood"),
    "pe_uniform_1": (_synth(PE, generator="uniform", rounds=1), None),
    "pe_public_1": (_synth(PE, generator="public", rounds=1), "public"),
    "pe_public_3": (_synth(PE, generator="public", rounds=3), "public"),
    "pe_ood_1": (_synth(PE, generator="public", rounds=1), "ood"),
    # The paper's ablations: budget schedule across rounds, candidates per row.
    "pe_public_3_even": (_synth(PE, generator="public", rounds=3, schedule="even"), "public"),
    "pe_public_3_decreasing": (_synth(PE, generator="public", rounds=3,
                                      schedule="decreasing"), "public"),
    "pe_public_1_ratio1": (_synth(PE, generator="public", candidate_ratio=1.0), "public"),
    "pe_public_1_ratio4": (_synth(PE, generator="public", candidate_ratio=4.0), "public"),
}

#: Rows with no budget: a public table taken as the synthetic data.
ALONE = {"public_alone": "public", "ood_alone": "ood"}


def run_one(method: str, epsilon: float, seed: int, data: dict, delta: float) -> dict:
    """Fit one method once and measure its workload error."""
    private, tables, domain = data["private"], data["tables"], data["domain"]
    sizes, pairs = data["sizes"], data["pairs"]
    start = time.perf_counter()
    if method == "dp_workload":
        from sklearn_dpsynth.public import measure_workload
        noisy = measure_workload(private, domain=domain, epsilon=epsilon, delta=delta,
                                 random_state=seed)
        tvd = mean_tvd(data["codes"], noisy.distributions(), sizes, pairs)
        spent = noisy.privacy_ledger.spent()[0]
    else:
        build, which = METHODS[method]
        synth = build(domain, seed)
        public = None if which is None else tables[which]
        kwargs = {} if which is None else {"public_data": public}
        synth.fit(private, epsilon=epsilon, delta=delta, **kwargs)
        rows = synth.sample(len(private))[list(domain)].to_numpy()
        tvd = table_tvd(data["codes"], rows, sizes, pairs)
        spent = synth.privacy_ledger_.spent()[0]
    return {"method": method, "epsilon": epsilon, "seed": seed, "tvd2": tvd,
            "fit_s": time.perf_counter() - start, "spent_epsilon": spent}


def load_data() -> dict:
    """Tables, domain and workload of the benchmark."""
    private, public, domain = load_split()
    sizes = [domain[c] for c in domain]
    pairs = list(itertools.combinations(range(len(sizes)), 2))
    return {"private": private, "codes": private.to_numpy(), "domain": domain, "sizes": sizes,
            "pairs": pairs, "tables": {"public": public, "ood": ood_public(public, domain)}}


def run(args) -> None:
    data = load_data()
    out = args.out or RESULTS / f"public_adult-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a") as handle:
        for method in args.methods:
            if method in ALONE:
                codes = data["tables"][ALONE[method]].to_numpy()
                tvd = table_tvd(data["codes"], codes, data["sizes"], data["pairs"])
                record = {"method": method, "epsilon": float("inf"), "seed": 0, "tvd2": tvd,
                          "fit_s": 0.0, "spent_epsilon": 0.0}
                handle.write(json.dumps(record) + "\n")
                print(record, flush=True)
                continue
            for epsilon in args.epsilons:
                for seed in range(args.seeds):
                    record = run_one(method, epsilon, seed, data, args.delta)
                    handle.write(json.dumps(record) + "\n")
                    handle.flush()
                    print(record, flush=True)
    print(f"results appended to {out}")


def report(paths: list[Path], plot: Path | None) -> pd.DataFrame:
    """Mean +- std of the TVD per method and epsilon (Markdown), and the plot."""
    records = [json.loads(line) for path in paths for line in open(path) if line.strip()]
    frame = pd.DataFrame(records)
    summary = frame.groupby(["method", "epsilon"])["tvd2"].agg(["mean", "std", "count"])
    table = summary.apply(_cell, axis=1).unstack("epsilon")
    print(_csv_table(table))
    if plot is not None:
        _plot(summary.reset_index(), plot)
    return table


def _cell(row: pd.Series) -> str:
    """``mean ± std (runs)`` of one method and epsilon."""
    std = 0.0 if pd.isna(row["std"]) else row["std"]
    return f"{row['mean']:.4f} ± {std:.4f} ({int(row['count'])})"


def _csv_table(table: pd.DataFrame) -> str:
    """The summary as an reStructuredText ``csv-table`` (for the docs)."""
    header = ", ".join(["method"] + [f'"eps={e:g}"' for e in table.columns])
    lines = [".. csv-table::", f"   :header: {header}", ""]
    for method, row in table.iterrows():
        cells = ['""' if pd.isna(v) else f'"{v}"' for v in row]
        lines.append("   " + ", ".join([method] + cells))
    return "\n".join(lines)


def _plot(summary: pd.DataFrame, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.set_prop_cycle(color=plt.get_cmap("tab20").colors)
    ablation = summary["method"].str.contains("_even|_decreasing|_ratio")
    summary = summary[~ablation]
    finite = summary[np.isfinite(summary["epsilon"])]
    for method, group in finite.groupby("method"):
        style = "--" if "pe_" in method else ("-." if "ood" in method else "-")
        ax.errorbar(group["epsilon"], group["mean"], yerr=group["std"].fillna(0),
                    label=method, marker="o", ms=3, linestyle=style, capsize=2)
    for _, row in summary[~np.isfinite(summary["epsilon"])].iterrows():
        ax.axhline(row["mean"], color="grey", linestyle=":", linewidth=1)
        ax.annotate(row["method"], (finite["epsilon"].min(), row["mean"]), fontsize=7,
                    va="bottom", color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("epsilon (delta = 1e-9)")
    ax.set_ylabel("mean 2-way TVD on the private table")
    ax.set_title("Adult (public split): public data and Private Evolution")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = ["dp_workload", *METHODS, *ALONE]
    parser.add_argument("--methods", nargs="+", default=names, choices=names)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--out", type=Path, default=None, help="JSON-lines file (appended)")
    parser.add_argument("--report", type=Path, nargs="+", default=None,
                        help="summarise these result files instead of running")
    parser.add_argument("--plot", type=Path, default=None, help="PNG of error vs epsilon")
    args = parser.parse_args()
    if args.report:
        report(args.report, args.plot)
    else:
        run(args)


if __name__ == "__main__":
    main()
