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

``--raw`` runs the numeric-distance comparison instead: Adult's raw
mixed-type table (``adult_raw/adult.data`` through
:func:`~sklearn_dpsynth.datasets.load_adult`, with its public domain: six
numeric columns in 32 bins, or one code per integer when fewer) is split at
random (seed 0) into 10% public rows and 90% private ones; Private Evolution
with the public-bootstrap or the uniform generator (1 round) runs with
``distance="workload"`` and ``distance="scaled_l1"``; the metric is the
mean 2-way TVD on the fitted domain's codes::

    nice -n 10 python -m benchmarks.public_adult --raw --epsilons 0.3 1 3 10 --seeds 3 \\
        --methods raw_pe_public_1_workload raw_pe_public_1_scaled_l1
    nice -n 10 python -m benchmarks.public_adult --raw --epsilons 1 --seeds 3 \\
        --methods raw_pe_uniform_1_workload raw_pe_uniform_1_scaled_l1
    nice -n 10 python -m benchmarks.public_adult --throughput 30000 60000
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
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


#: Methods of the ``--raw`` comparison: name -> (generator, distance).
RAW_METHODS = {"raw_pe_public_1_workload": ("public", "workload"),
               "raw_pe_public_1_scaled_l1": ("public", "scaled_l1"),
               "raw_pe_uniform_1_workload": ("uniform", "workload"),
               "raw_pe_uniform_1_scaled_l1": ("uniform", "scaled_l1")}


def load_raw(public_share: float = 0.1) -> dict:
    """Adult's raw table and public domain, split into private and public rows."""
    from sklearn_dpsynth.datasets import load_adult
    data = load_adult(data_dir() / "adult_raw" / "adult.data")
    order = np.random.default_rng(0).permutation(len(data.frame))
    n_public = int(round(public_share * len(order)))
    frame = data.frame
    return {"private": frame.iloc[order[n_public:]].reset_index(drop=True),
            "public": frame.iloc[order[:n_public]].reset_index(drop=True),
            "domain": data.domain}


def run_raw_one(method: str, epsilon: float, seed: int, data: dict,
                delta: float) -> tuple[dict, object]:
    """PE on raw Adult with one distance; TVD on the fitted domain's codes.

    Returns the record and the fitted domain (for the public-alone row).
    """
    from sklearn_dpsynth.evolution import PrivateEvolutionSynthesizer
    start = time.perf_counter()
    private = data["private"]
    generator, distance = RAW_METHODS[method]
    synth = PrivateEvolutionSynthesizer(domain=data["domain"], generator=generator,
                                        distance=distance, random_state=seed)
    synth.fit(private, epsilon=epsilon, delta=delta, public_data=data["public"])
    rows = synth.sample(len(private))
    tvd = _raw_tvd(private, rows, synth.domain_)
    return ({"method": method, "epsilon": epsilon, "seed": seed, "tvd2": tvd,
             "fit_s": time.perf_counter() - start,
             "spent_epsilon": float(synth.privacy_ledger_.spent()[0])}, synth.domain_)


def _raw_tvd(private: pd.DataFrame, rows: pd.DataFrame, domain) -> float:
    pairs = list(itertools.combinations(range(len(domain.sizes)), 2))
    return table_tvd(domain.encode(private), domain.encode(rows), domain.sizes, pairs)


def run_raw(args) -> None:
    """The numeric-distance comparison on raw Adult (``--raw``)."""
    data = load_raw()
    out = args.out or RESULTS / f"public_adult_raw-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    domain = None
    with open(out, "a") as handle:
        for epsilon in args.epsilons:
            for method in args.methods:
                for seed in range(args.first_seed, args.first_seed + args.seeds):
                    record, domain = run_raw_one(method, epsilon, seed, data, args.delta)
                    handle.write(json.dumps(record) + "\n")
                    handle.flush()
                    print(record, flush=True)
        if domain is not None:
            record = {"method": "raw_public_alone", "epsilon": float("inf"), "seed": 0,
                      "tvd2": _raw_tvd(data["private"], data["public"], domain),
                      "fit_s": 0.0, "spent_epsilon": 0.0}
            handle.write(json.dumps(record) + "\n")
            print(record, flush=True)
    print(f"results appended to {out}")


def throughput(n_rows: int, n_candidates: int) -> None:
    """Time nearest-candidate voting on raw Adult (all 2-way marginals), both distances.

    ``n_rows`` private rows (the first ones of ``adult_raw``, repeated if
    needed) against ``n_candidates`` uniform candidates of the public domain.
    """
    from sklearn_dpsynth.backends import NumpyTable
    from sklearn_dpsynth.evolution import (PrivateEvolutionSynthesizer, UniformGenerator,
                                           code_positions, vote_histogram)
    from sklearn_dpsynth.marginal.workload import workload_positions
    data = load_raw(public_share=0.0)
    frame = data["private"]
    frame = frame.iloc[np.arange(n_rows) % len(frame)].reset_index(drop=True)
    # The fitted domain of PE: only its (public) edges and categories are used.
    domain = PrivateEvolutionSynthesizer(domain=data["domain"], n_synthetic=1).fit(
        frame.iloc[:50], epsilon=1.0).domain_
    table = NumpyTable(domain.encode(frame), list(domain.columns), domain.sizes)
    workload = workload_positions(None, table.columns, table.sizes)
    rng = np.random.default_rng(0)
    candidates = UniformGenerator(domain.sizes).random_rows(n_candidates, rng)
    priority = rng.random(n_candidates)
    for name, positions in (("workload", None), ("scaled_l1", code_positions(domain))):
        start = time.perf_counter()
        votes = vote_histogram(table, candidates, workload, priority, positions=positions)
        elapsed = time.perf_counter() - start
        print(f"{name}: {n_rows} rows x {n_candidates} candidates, {len(domain.sizes)} "
              f"columns / {sum(domain.sizes)} codes, {len(workload)} marginals: "
              f"{elapsed:.1f} s, {n_rows * n_candidates / elapsed / 1e6:.0f} million "
              f"row-candidate pairs per second (votes {votes.sum():.0f})", flush=True)


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
                for seed in range(args.first_seed, args.first_seed + args.seeds):
                    record = run_one(method, epsilon, seed, data, args.delta)
                    handle.write(json.dumps(record) + "\n")
                    handle.flush()
                    print(record, flush=True)
    print(f"results appended to {out}")


def report(paths: list[Path], plot: Path | None,
           previous: Path | None = None) -> pd.DataFrame:
    """Mean +- std of the TVD per method and epsilon (Markdown), and the plot.

    ``previous``: a ``csv-table`` printed by an earlier report (e.g.
    ``docs/user_guide/public_results.inc``); its cells (mean, std, runs) are
    pooled with the runs of ``paths`` (a run repeated with the same method,
    epsilon and seed counts once, the last one).
    """
    records = [json.loads(line) for path in paths for line in open(path) if line.strip()]
    frame = pd.DataFrame(records).drop_duplicates(["method", "epsilon", "seed"], keep="last")
    summary = frame.groupby(["method", "epsilon"])["tvd2"].agg(["mean", "std", "count"])
    if previous is not None:
        summary = _pool(_read_csv_table(previous), summary)
    table = summary.apply(_cell, axis=1).unstack("epsilon")
    print(_csv_table(table))
    if plot is not None:
        _plot(summary.reset_index(), plot)
    return table


def _read_csv_table(path: Path) -> pd.DataFrame:
    """The (method, epsilon) -> mean, std, count cells of a printed ``csv-table``."""
    text = path.read_text()
    header = re.search(r":header: method, (.*)", text).group(1)
    epsilons = [float(e) for e in re.findall(r'"eps=([^"]+)"', header)]
    rows = []
    for line in text.splitlines():
        cells = re.findall(r'"([^"]*)"', line)
        if not line.startswith("   ") or ":header:" in line or len(cells) != len(epsilons):
            continue
        method = line.strip().split(",")[0]
        for epsilon, cell in zip(epsilons, cells):
            found = re.fullmatch(r"(\S+) ± (\S+) \((\d+)\)", cell)
            if found:
                rows.append({"method": method, "epsilon": epsilon, "mean": float(found[1]),
                             "std": float(found[2]), "count": int(found[3])})
    return pd.DataFrame(rows).set_index(["method", "epsilon"])


def _pool(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Mean, sample std and count of two groups of runs, from their summaries."""
    both = old.add_suffix("_old").join(new, how="outer").fillna(
        {"count": 0, "count_old": 0, "mean": 0.0, "mean_old": 0.0, "std": 0.0, "std_old": 0.0})
    count = both["count_old"] + both["count"]
    mean = (both["count_old"] * both["mean_old"] + both["count"] * both["mean"]) / count
    squares = sum((both[f"count{s}"] - 1).clip(lower=0) * both[f"std{s}"] ** 2
                  + both[f"count{s}"] * both[f"mean{s}"] ** 2 for s in ("_old", ""))
    std = np.sqrt(((squares - count * mean ** 2) / (count - 1)).clip(lower=0))
    return pd.DataFrame({"mean": mean, "std": std.where(count > 1), "count": count})


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
    parser.add_argument("--methods", nargs="+", default=None, choices=names + list(RAW_METHODS),
                        help="default: every method of the chosen mode")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seeds run are first_seed .. first_seed + seeds - 1")
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--out", type=Path, default=None, help="JSON-lines file (appended)")
    parser.add_argument("--report", type=Path, nargs="+", default=None,
                        help="summarise these result files instead of running")
    parser.add_argument("--plot", type=Path, default=None, help="PNG of error vs epsilon")
    parser.add_argument("--previous", type=Path, default=None,
                        help="with --report: pool with the cells of this printed csv-table")
    parser.add_argument("--throughput", type=int, nargs=2, default=None,
                        metavar=("ROWS", "CANDIDATES"),
                        help="time PE's voting on raw Adult with both distances")
    parser.add_argument("--raw", action="store_true",
                        help="compare PE's distances on raw Adult instead (see above)")
    args = parser.parse_args()
    if args.methods is None:
        args.methods = list(RAW_METHODS) if args.raw else names
    if args.report:
        report(args.report, args.plot, args.previous)
    elif args.throughput:
        throughput(*args.throughput)
    elif args.raw:
        run_raw(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
