"""How well private domain inference recovers bounds and category lists.

Learns the domain of adult_raw and texas with nothing declared, as a
synthesizer's ``fit`` does with the default ``preprocessing_budget`` (10% of
the zCDP budget and of ``delta``), on the full tables and on 1,000-row
subsamples, and prints the learned numeric bounds and category counts next
to the truth.  Run from the repository root::

    python -m benchmarks.domain_inference --epsilon 1 --seeds 3

Before/after figures of the issue-9 change were taken with this script
before ``learn_domain`` took a ``budget=ledger.share(...)`` argument (the
old signature was ``ledger=, rho=, delta=``).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

from benchmarks.datasets import data_dir
from sklearn_dpsynth.datasets import load_adult
from sklearn_dpsynth.preprocessing import learn_domain
from sklearn_dpsynth.privacy import PrivacyLedger, epsilon_to_rho


def load_tables() -> dict[str, pd.DataFrame]:
    """The two raw mixed-type tables, undeclared."""
    adult = load_adult(data_dir() / "adult_raw" / "adult.data").frame
    texas = pd.read_csv(data_dir() / "texas" / "texas.csv",
                        dtype={"TYPE_OF_ADMISSION": str, "PAT_AGE": str})
    return {"adult_raw": adult, "texas": texas}


def learn(frame: pd.DataFrame, epsilon: float, delta: float, share: float, seed: int):
    """The domain a synthesizer's fit would learn, and the budget it spent."""
    ledger = PrivacyLedger(epsilon, delta)
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        domain = learn_domain(frame, None, n_bins=32, rng=rng,
                              budget=ledger.share(share * ledger.rho_budget, share * delta))
    return domain


def describe(frame: pd.DataFrame, domains: list) -> list[dict]:
    """One row per column: truth and what each seed learned."""
    rows = []
    for name in frame.columns:
        series = frame[name]
        specs = [domain[name] for domain in domains]
        if specs[0].kind == "numeric":
            values = pd.to_numeric(series, errors="coerce").dropna()
            lows = [s.edges[0] for s in specs]
            highs = [s.edges[-1] for s in specs]
            overlap = [min(h, values.max()) >= max(lo, values.min())
                       for lo, h in zip(lows, highs)]
            inside = [float(values.between(lo, h).mean()) for lo, h in zip(lows, highs)]
            rows.append({"column": name, "kind": "numeric",
                         "truth": f"[{values.min():g}, {values.max():g}]",
                         "learned": "; ".join(f"[{lo:g}, {h:g}]" for lo, h in zip(lows, highs)),
                         "rows inside": f"{np.mean(inside):.3f}",
                         "overlaps": f"{sum(overlap)}/{len(overlap)}"})
        else:
            counts = [len(s.categories or []) for s in specs]
            rows.append({"column": name, "kind": "categorical",
                         "truth": f"{series.nunique(dropna=True)} categories",
                         "learned": ", ".join(str(c) for c in counts),
                         "rows inside": f"{np.mean([_covered(series, s) for s in specs]):.3f}",
                         "overlaps": ""})
    return rows


def _covered(series: pd.Series, spec) -> float:
    """Share of present rows whose category was kept."""
    present = series.dropna().astype(object)
    kept = set(spec.categories or [])
    return float(present.isin(kept).mean()) if len(present) else 1.0


def markdown(rows: list[dict]) -> str:
    """A Markdown table of ``rows`` (dicts with the same keys)."""
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(row[key]) for key in header) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--share", type=float, default=0.1,
                        help="preprocessing_budget (share of rho and delta)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--subsample", type=int, default=1000)
    args = parser.parse_args(argv)
    for table, frame in load_tables().items():
        small = frame.sample(n=args.subsample, random_state=0).reset_index(drop=True)
        for label, data in ((f"{table} ({len(frame)} rows)", frame),
                            (f"{table} ({args.subsample} rows)", small)):
            domains = [learn(data, args.epsilon, args.delta, args.share, seed)
                       for seed in range(args.seeds)]
            print(f"\n### {label}, epsilon={args.epsilon}, share={args.share}, "
                  f"seeds 0..{args.seeds - 1}\n")
            print(markdown(describe(data, domains)))


if __name__ == "__main__":
    main()
