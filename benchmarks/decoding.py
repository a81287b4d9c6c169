"""Benchmark the numeric encoding and decoding choices on the raw mixed-type tables.

Standalone script; from the repository root::

    nice -n 10 python -m benchmarks.decoding resolution --dataset adult --seeds 3
    nice -n 10 python -m benchmarks.decoding decoding --dataset texas --seeds 3
    nice -n 10 python -m benchmarks.decoding score

Two studies, both with :class:`~sklearn_dpsynth.MSTSynthesizer` at
``epsilon=1`` (``delta=1e-9``) on a declared public domain, fitted on the
whole table (Adult raw: 30,162 rows, public domain from the UCI
documentation; Texas: 50,000 rows, domain from the published ``texas.json``
schema, ``LENGTH_OF_STAY`` declared integer since it counts days):

* ``resolution``: integer columns whose bounds hold at most ``T`` integers
  get one code per integer (``"resolution": "integer"``), the others
  ``n_bins=32`` uniform bins, for several thresholds ``T`` (``0`` = never).
  Reported: the mean 2-way total variation distance between the real and
  synthetic tables *on the original values*, every numeric column of both
  being cut on the same evaluation grid (the distinct 5%-quantiles of the
  real column, i.e. at most 20 bins, independent of the model's bins), and
  the fit time.
* ``decoding``: one fit per seed and domain variant (as declared, or with
  ``"points": [0]`` on the zero-inflated amount columns), rows sampled with
  the same codes and decoded with every ``bin_value``.  Reported per numeric
  column: the Kolmogorov-Smirnov statistic and the Wasserstein-1 distance
  (divided by the real column's standard deviation) between real and
  synthetic values, and their means over the columns.
* ``score``: 3-fold cross-validated ``score`` over ``n_bins`` -- the old
  score (log-probability of the codes, ``score_samples + log_widths``) next
  to the log-density that ``score`` now is -- on 6,000 Beta(2, 2) draws
  (IndependentSynthesizer, epsilon=100; true mean log-density 0.125) and on
  Adult's age, fnlwgt, hr_per_week, sex and income (MST, epsilon=1; only
  fnlwgt is binned).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp, wasserstein_distance

from sklearn.model_selection import KFold

from sklearn_dpsynth import IndependentSynthesizer
from sklearn_dpsynth._marginals import contingency_counts
from sklearn_dpsynth.datasets import load_adult
from sklearn_dpsynth.domain import BIN_VALUES
from sklearn_dpsynth.marginal.mst import MSTSynthesizer

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"

#: Columns with a point mass at 0 (zero-inflated amounts), per data set.
ZERO_INFLATED = {
    "adult": ["capital_gain", "capital_loss"],
    "texas": ["TOTAL_NON_COV_CHARGES", "TOTAL_NON_COV_CHARGES_ACCOMM",
              "TOTAL_NON_COV_CHARGES_ANCIL", "TOTAL_CHARGES_ANCIL"],
}


def load(name: str, data_dir: Path = DATA) -> tuple[pd.DataFrame, dict]:
    """The table and its public declaration, numeric entries as ``{"bounds": ...}`` dicts."""
    if name == "adult":
        data = load_adult(data_dir / "adult_raw" / "adult.data")
        frame, declared = data.frame, dict(data.domain)
    elif name == "texas":
        frame, declared = _load_texas(data_dir / "texas")
    else:
        raise ValueError(f"unknown data set {name!r}; use 'adult' or 'texas'.")
    declared = {column: ({"bounds": entry} if isinstance(entry, tuple) else entry)
                for column, entry in declared.items()}
    return frame, declared


def _load_texas(folder: Path) -> tuple[pd.DataFrame, dict]:
    schema = json.loads((folder / "texas.json").read_text())["columns"]
    categorical = [c["name"] for c in schema if c["type"] == "categorical"]
    frame = pd.read_csv(folder / "texas.csv", dtype={c: str for c in categorical})
    frame["LENGTH_OF_STAY"] = frame["LENGTH_OF_STAY"].astype(np.int64)  # days
    declared = {}
    for column in schema:
        if column["type"] == "categorical":
            declared[column["name"]] = list(column["i2s"])
        else:
            declared[column["name"]] = (column["min"], column["max"])
    return frame[[c["name"] for c in schema]], declared


def numeric_columns(declared: dict) -> list:
    """Columns declared numeric (dict entries with bounds)."""
    return [c for c, e in declared.items() if isinstance(e, dict) and "bounds" in e]


def with_resolution(declared: dict, frame: pd.DataFrame, threshold: int) -> dict:
    """Per-integer codes for integer columns spanning at most ``threshold`` integers."""
    out = {}
    for column, entry in declared.items():
        if column in numeric_columns(declared):
            low, high = entry["bounds"]
            span = math.floor(high) - math.ceil(low) + 1
            per_integer = pd.api.types.is_integer_dtype(frame[column]) and span <= threshold
            entry = {**entry, "resolution": "integer" if per_integer else "bins"}
        out[column] = entry
    return out


def with_points(declared: dict, name: str) -> dict:
    """Declare a point mass at 0 on the zero-inflated columns."""
    return {c: ({**e, "points": [0.0]} if c in ZERO_INFLATED[name] else e)
            for c, e in declared.items()}


def evaluation_codes(real: pd.DataFrame, synth: pd.DataFrame, numeric: list) -> tuple:
    """Both tables on a common grid: 5%-quantile bins of the real numeric columns."""
    real_codes, synth_codes, sizes = [], [], []
    for column in real.columns:
        if column in numeric:
            values = real[column].to_numpy(dtype=float)
            edges = np.unique(np.quantile(values, np.linspace(0, 1, 21)))[1:-1]
            a = np.searchsorted(edges, values, side="right")
            b = np.searchsorted(edges, synth[column].to_numpy(dtype=float), side="right")
            size = len(edges) + 1
        else:
            labels = {v: i for i, v in enumerate(pd.unique(real[column].astype(str)))}
            a = real[column].astype(str).map(labels).to_numpy()
            b = synth[column].astype(str).map(labels).fillna(len(labels)).to_numpy()
            size = len(labels) + 1
        real_codes.append(a.astype(np.int64))
        synth_codes.append(b.astype(np.int64))
        sizes.append(size)
    return np.column_stack(real_codes), np.column_stack(synth_codes), sizes


def mean_two_way_tvd(real: pd.DataFrame, synth: pd.DataFrame, numeric: list) -> float:
    """Mean TVD over all column pairs on the common evaluation grid."""
    a, b, sizes = evaluation_codes(real, synth, numeric)
    tvds = []
    for pair in itertools.combinations(range(len(sizes)), 2):
        ha = contingency_counts(a, sizes, pair) / len(a)
        hb = contingency_counts(b, sizes, pair) / len(b)
        tvds.append(0.5 * float(np.abs(ha - hb).sum()))
    return float(np.mean(tvds))


def column_distances(real: pd.DataFrame, synth: pd.DataFrame, numeric: list) -> dict:
    """KS statistic and Wasserstein-1 / std of every numeric column."""
    out = {}
    for column in numeric:
        x = real[column].to_numpy(dtype=float)
        y = synth[column].to_numpy(dtype=float)
        y = y[~np.isnan(y)]
        out[column] = (float(ks_2samp(x, y).statistic),
                       float(wasserstein_distance(x, y) / np.std(x)))
    return out


def study_resolution(name: str, seeds: int, thresholds: list[int], epsilon: float) -> None:
    frame, declared = load(name)
    numeric = numeric_columns(declared)
    print(f"| {name} T | codes of numeric columns | 2-way TVD | fit s |\n|---|---|---|---|")
    for threshold in thresholds:
        domain = with_resolution(declared, frame, threshold)
        tvds, times = [], []
        for seed in range(seeds):
            synth = MSTSynthesizer(domain=domain, random_state=seed)
            start = time.perf_counter()
            synth.fit(frame, epsilon=epsilon)
            times.append(time.perf_counter() - start)
            fake = synth.sample(len(frame), random_state=seed)
            tvds.append(mean_two_way_tvd(frame, fake, numeric))
        sizes = ", ".join(str(synth.domain_[c].size) for c in numeric)
        print(f"| {threshold} | {sizes} | {np.mean(tvds):.4f} ± {np.std(tvds, ddof=1):.4f} "
              f"| {np.mean(times):.1f} |", flush=True)


def study_decoding(name: str, seeds: int, epsilon: float) -> None:
    frame, declared = load(name)
    numeric = numeric_columns(declared)
    variants = {"declared": declared, "points [0]": with_points(declared, name)}
    results: dict = {}
    for variant, domain in variants.items():
        for seed in range(seeds):
            synth = MSTSynthesizer(domain=domain, random_state=seed).fit(frame, epsilon=epsilon)
            for bin_value in BIN_VALUES:
                fake = synth.set_params(bin_value=bin_value).sample(len(frame), random_state=seed)
                for column, pair in column_distances(frame, fake, numeric).items():
                    results.setdefault((variant, bin_value), {}).setdefault(column, []).append(pair)
    _print_decoding(results, numeric)


def _print_decoding(results: dict, numeric: list) -> None:
    print("| domain | bin_value | " + " | ".join(numeric) + " | mean KS | mean W1/std |")
    print("|---|---|" + "---|" * (len(numeric) + 2))
    for (variant, bin_value), columns in results.items():
        means = {c: np.mean(columns[c], axis=0) for c in numeric}
        cells = [f"{means[c][0]:.3f} / {means[c][1]:.3f}" for c in numeric]
        ks = np.mean([means[c][0] for c in numeric])
        w1 = np.mean([means[c][1] for c in numeric])
        print(f"| {variant} | {bin_value} | " + " | ".join(cells) + f" | {ks:.3f} | {w1:.3f} |",
              flush=True)


def _cross_validated_scores(frame, domain, cls, n_bins, epsilon) -> tuple[float, float]:
    """Mean held-out code log-probability (old score) and log-density (new) over 3 folds."""
    old, new = [], []
    for train, test in KFold(3, shuffle=True, random_state=0).split(frame):
        synth = cls(domain=domain, n_bins=n_bins, random_state=0)
        synth.fit(frame.iloc[train], epsilon=epsilon)
        held_out = frame.iloc[test]
        density = synth.score_samples(held_out)
        new.append(density.mean())
        old.append((density + synth.domain_.log_widths(synth.domain_.encode(held_out))).mean())
    return float(np.mean(old)), float(np.mean(new))


def study_score() -> None:
    beta = pd.DataFrame({"x": np.random.default_rng(0).beta(2, 2, 6000)})
    adult, declared = load("adult")
    columns = ["age", "fnlwgt", "hr_per_week", "sex", "income"]
    cases = [("Beta(2,2), Independent, eps=100", beta, {"x": (0.0, 1.0)},
              IndependentSynthesizer, [2, 4, 8, 16, 32, 64], 100.0),
             ("Adult 5 columns, MST, eps=1", adult[columns],
              {c: declared[c] for c in columns}, MSTSynthesizer, [4, 8, 16, 32, 64, 128], 1.0)]
    print("| table | n_bins | old score (codes) | score (log-density) |\n|---|---|---|---|")
    for name, frame, domain, cls, grid, epsilon in cases:
        for n_bins in grid:
            old, new = _cross_validated_scores(frame, domain, cls, n_bins, epsilon)
            print(f"| {name} | {n_bins} | {old:.3f} | {new:.3f} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("study", choices=["resolution", "decoding", "score"])
    parser.add_argument("--dataset", choices=["adult", "texas"], default="adult")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--thresholds", type=int, nargs="+", default=[0, 50, 100, 5000])
    args = parser.parse_args(argv)
    if args.study == "resolution":
        study_resolution(args.dataset, args.seeds, args.thresholds, args.epsilon)
    elif args.study == "decoding":
        study_decoding(args.dataset, args.seeds, args.epsilon)
    else:
        study_score()


if __name__ == "__main__":
    main()
