"""MST on the reference harness's ``ordered`` table: tree draw against stop (issue 27, item 1).

From the repository root::

    python -m benchmarks.mst_ordered --epsilons 3,10 --seeds 0-59 --what ceiling
    python -m benchmarks.mst_ordered --epsilons 3,10 --seeds 0-23 --what share

``ordered`` (:func:`benchmarks.reference.load_ordered`) has 20 binary
columns, every row non-increasing: 21 of the ``2**20`` rows are valid.  A
tree-structured model with the exact marginals on its edges gives the valid
rows probability 1 only when every edge joins neighbouring columns
(``b_i - b_{i+1}``); any other edge leaks mass onto invalid rows.  For every
seed MST is fitted at ``(epsilon, 1e-9)`` on the training part and the script
prints, per fit and as a mean with its standard error over the seeds:

* ``--what ceiling`` -- the *tree's ceiling*: the valid rows' probability
  under the tree model of the selected edges with the exact training
  marginals (closed form: product of the edge marginals over the shared
  columns' marginals).  The estimation is skipped (``max_iter=1``; the tree
  and its draws do not depend on it), so this measures the selection alone;
* ``--what share`` -- the fitted model's exact probability of the 21 valid
  rows (what the sampled share of valid rows estimates, without sampling
  noise), and the held-out stop's factor.

``--stop`` is MST's ``early_stopping`` (``holdout``, a number, or ``none``).
Not private (the ceiling reads the training table): a diagnostic only.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from sklearn_dpsynth import MSTSynthesizer

from .reference import TABLES, data_folder


def valid_rows(columns: list[str]) -> pd.DataFrame:
    """The 21 rows satisfying ``b0 >= b1 >= ... >= b19`` (a run of ones, then zeros)."""
    width = len(columns)
    bits = (np.arange(width)[None, :] < np.arange(width + 1)[:, None]).astype(np.int64)
    return pd.DataFrame(bits, columns=columns)


def tree_ceiling(train: pd.DataFrame, edges: list[tuple[str, str]]) -> float:
    """Probability of the valid rows under the tree of ``edges`` with exact marginals."""
    codes = train.to_numpy()
    position = {name: k for k, name in enumerate(train.columns)}
    valid = valid_rows(list(train.columns)).to_numpy()
    degree = np.zeros(codes.shape[1], dtype=int)
    log_p = np.zeros(len(valid))
    for a, b in edges:
        i, j = position[a], position[b]
        degree[[i, j]] += 1
        joint = np.zeros((2, 2))
        np.add.at(joint, (codes[:, i], codes[:, j]), 1.0)
        with np.errstate(divide="ignore"):
            log_p += np.log(joint[valid[:, i], valid[:, j]] / len(codes))
    for k in range(codes.shape[1]):
        single = np.bincount(codes[:, k], minlength=2) / len(codes)
        with np.errstate(divide="ignore"):
            log_p -= (degree[k] - 1) * np.log(single[valid[:, k]])
    return float(np.exp(log_p).sum())


def _seeds(text: str) -> list[int]:
    if "-" in text:
        low, high = (int(v) for v in text.split("-"))
        return list(range(low, high + 1))
    return [int(v) for v in text.split(",")]


def _stop(text: str):
    if text == "holdout":
        return "holdout"
    return None if text == "none" else float(text)


def run(epsilon: float, seeds: list[int], stop, what: str) -> list[float]:
    """One figure per seed (see the module docstring), printed as it comes."""
    table = TABLES["ordered"](data_folder(None))
    valid = valid_rows(list(table.train.columns))
    figures = []
    for seed in seeds:
        extra = {"max_iter": 1} if what == "ceiling" else {}
        synth = MSTSynthesizer(domain=table.domain, random_state=seed, early_stopping=stop,
                               **extra).fit(table.train, epsilon=epsilon, delta=1e-9)
        if what == "ceiling":
            figures.append(tree_ceiling(table.train, synth.tree_edges_))
            note = ""
        else:
            figures.append(float(np.exp(synth.score_samples(valid)).sum()))
            note = f" factor {synth.estimation_info_.get('holdout', {}).get('factor')}"
        print(f"epsilon {epsilon:g} seed {seed}: {what} {figures[-1]:.5f}{note}", flush=True)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epsilons", default="3,10")
    parser.add_argument("--seeds", default="0-2", help="'0-59' or '0,1,2'")
    parser.add_argument("--stop", default="holdout", help="holdout, a number or none")
    parser.add_argument("--what", choices=["ceiling", "share"], default="ceiling")
    args = parser.parse_args(argv)
    seeds = _seeds(args.seeds)
    for epsilon in (float(e) for e in args.epsilons.split(",")):
        figures = np.array(run(epsilon, seeds, _stop(args.stop), args.what))
        spread = figures.std(ddof=1) if len(figures) > 1 else float("nan")
        print(f"epsilon {epsilon:g}, stop {args.stop}, {len(figures)} seeds: mean {args.what} "
              f"{figures.mean():.5f} (SD {spread:.5f}, SE {spread / np.sqrt(len(figures)):.5f})")


if __name__ == "__main__":
    main()
