"""MST on the reference harness's ``ordered`` table: tree draw against stop (issue 27, item 1).

From the repository root::

    python -m benchmarks.mst_ordered --epsilons 3,10 --seeds 0-59 --what ceiling
    python -m benchmarks.mst_ordered --epsilons 3,10 --seeds 0-23 --what share
    python -m benchmarks.mst_ordered --epsilons 3,10 --seeds 0-59 --what tree
    python -m benchmarks.mst_ordered --epsilons 3,10 --seeds 0-59 --exact-margins
    python -m benchmarks.mst_ordered --epsilons 3,10 --seeds 0-59 --selection-scale 4
    python -m benchmarks.mst_ordered --epsilons 3,10 --seeds 0-59 --round-power 2

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
  noise), and the held-out stop's factor;
* ``--what tree`` -- the tree's ceiling and its non-adjacent edges, with each
  one's exact pair score against the adjacent edge it displaced (the score
  of ``(b_{j-1}, b_j)``), to see where the draw goes wrong.

Three variants of the tree selection measure what limits it; with any of
them the script also fits the default on the same seed (same noise up to
the selection, same random stream) and prints the paired difference:

* ``--exact-margins`` (*not private*) -- the pair scores' independent
  estimate is built from the exact 1-way counts instead of the noisy ones:
  the selection without the 1-way noise in its scores;
* ``--selection-scale K`` (*not private*) -- every exponential-mechanism
  round runs at ``K`` times its zCDP budget, drawn outside the ledger (the
  ledger records the nominal selection cost, so the measurements keep their
  budget);
* ``--round-power P`` (private, the same total) -- round ``t`` of ``r``
  gets ``t**P / sum(s**P)`` of the selection budget instead of ``1 / r``
  (later rounds, which choose among the weak edges, get more);
* ``--minority-score`` (private) -- the pair score weighs the L1 deviation of
  each cell by ``1 - q_y``, ``q`` the independent estimate's shares of the
  values of the pair's member whose rarest value is rarer: the cells of a
  rare value count fully, those of a common one hardly.  The weights are at
  most 1 and public (the noisy 1-way counts), so the sensitivity stays 1; it
  drops the bias that the noise of the other member's 1-way count puts in
  the plain score, at the price of about half its gaps.

``--stop`` is MST's ``early_stopping`` (``holdout``, a number, or ``none``).
Not private (the ceiling reads the training table): a diagnostic only.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sklearn_dpsynth import MSTSynthesizer, PrivacyLedger
from sklearn_dpsynth.marginal.selection import all_pairs, l1_pair_scores

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


@dataclass(frozen=True)
class Selection:
    """How the diagnostic MST selects its tree (the defaults: as MST does)."""

    #: Score the pairs against the independent model of the exact 1-way counts.
    exact_margins: bool = False
    #: Multiplier of every round's zCDP budget (above 1: not private).
    scale: float = 1.0
    #: Round ``t`` gets a share of the selection budget proportional to ``t**power``.
    power: float = 0.0
    #: Weigh the cells by ``1 - q_y`` of the member with the rarer value (see above).
    minority: bool = False

    @property
    def default(self) -> bool:
        """Whether this is MST's own selection."""
        return self == Selection()


class DiagnosticMST(MSTSynthesizer):
    """MST with the tree selection of :class:`Selection` (a benchmark diagnostic).

    Set ``selection`` after construction.  With the default ``Selection()``
    the tree is MST's, draw for draw.  ``exact_margins`` and ``scale > 1``
    read the private table outside the privacy accounting: never use such a
    fit for anything but this measurement.
    """

    selection = Selection()

    def _private_tree(self, compressed, components, independent, ledger, rng, rho):
        plan = self.selection
        if plan.default or components.n_components == 1:
            return super()._private_tree(compressed, components, independent, ledger, rng, rho)
        pairs = [p for p, apart in zip(all_pairs(compressed.n_columns),
                                       components.apart(all_pairs(compressed.n_columns)))
                 if apart]
        margins = ([compressed.counts((j,)).astype(float) for j in range(compressed.n_columns)]
                   if plan.exact_margins else independent)
        total = float(margins[0].sum())
        def outer(pair):
            return np.outer(margins[pair[0]], margins[pair[1]]) / total

        scores = (minority_scores(compressed, pairs, outer) if plan.minority
                  else l1_pair_scores(compressed, pairs, outer))
        rounds = components.n_components - 1
        weights = np.arange(1, rounds + 1, dtype=float) ** plan.power
        round_rho = rho * weights / weights.sum()
        book = ledger
        if plan.scale != 1.0:
            ledger.spend(target="spanning tree (diagnostic, drawn outside the ledger)",
                         mechanism="exponential", rho=rho)
            book = PrivacyLedger(1e6, 0.5)
        chosen = []
        for round_ in range(rounds):
            candidates = np.flatnonzero(components.apart(pairs))
            pick = 0 if candidates.size == 1 else book.select(
                scores[candidates], rho=plan.scale * round_rho[round_], rng=rng,
                target=f"spanning-tree edge {round_ + 1}/{rounds}")
            edge = tuple(pairs[candidates[pick]])
            components.union(*edge)
            chosen.append(edge)
        return chosen


def minority_scores(table, pairs: list[tuple[int, int]], estimate) -> np.ndarray:
    """Pair scores ``sum_xy w_xy |T_xy - E_xy|`` with weights ``1 - q`` (see the module
    docstring); each weight is at most 1 and depends on ``E`` only: sensitivity 1."""
    scores = np.empty(len(pairs))
    for k, pair in enumerate(pairs):
        expected = estimate(pair)
        deviation = np.abs(table.counts(pair) - expected)
        rows = expected.sum(axis=1) / expected.sum()
        columns = expected.sum(axis=0) / expected.sum()
        weights = np.clip((1 - columns)[None, :] if columns.min() <= rows.min()
                          else (1 - rows)[:, None], 0.0, 1.0)
        scores[k] = float((deviation * weights).sum())
    return scores


def non_adjacent(train: pd.DataFrame, edges: list[tuple[str, str]]) -> list[str]:
    """The edges ``b_i - b_j`` with ``|i - j| > 1``, each with its exact pair score
    and that of ``(b_{j-1}, b_j)`` (``j`` the later column): ``"b13-b16 638 < 611"``."""
    codes = train.to_numpy()
    position = {name: k for k, name in enumerate(train.columns)}
    out = []
    for a, b in edges:
        i, j = sorted((position[a], position[b]))
        if j - i > 1:
            out.append(f"{train.columns[i]}-{train.columns[j]} "
                       f"{_exact_score(codes, i, j):.0f} vs {_exact_score(codes, j - 1, j):.0f}")
    return out


def _exact_score(codes: np.ndarray, i: int, j: int) -> float:
    """L1 distance of the pair's 2-way counts from the product of its exact margins."""
    joint = np.zeros((2, 2))
    np.add.at(joint, (codes[:, i], codes[:, j]), 1.0)
    return float(np.abs(joint - np.outer(joint.sum(1), joint.sum(0)) / joint.sum()).sum())


def _seeds(text: str) -> list[int]:
    if "-" in text:
        low, high = (int(v) for v in text.split("-"))
        return list(range(low, high + 1))
    return [int(v) for v in text.split(",")]


def _stop(text: str):
    if text == "holdout":
        return "holdout"
    return None if text == "none" else float(text)


def run(epsilon: float, seeds: list[int], stop, what: str,
        selection: Selection = Selection()) -> tuple[list[float], list[float]]:
    """One figure per seed (see the module docstring), printed as it comes.

    Returns the figures and, for a selection other than MST's, the default's
    figures on the same seeds (else an empty list).
    """
    table = TABLES["ordered"](data_folder(None))
    figures, baseline = [], []
    for seed in seeds:
        figure, note = _figure(table, epsilon, seed, stop, what, selection)
        figures.append(figure)
        if not selection.default:
            baseline.append(_figure(table, epsilon, seed, stop, what, Selection())[0])
            note += f" (default {baseline[-1]:.5f}, difference {figure - baseline[-1]:+.5f})"
        print(f"epsilon {epsilon:g} seed {seed}: {what} {figure:.5f}{note}", flush=True)
    return figures, baseline


def _figure(table, epsilon: float, seed: int, stop, what: str,
            selection: Selection) -> tuple[float, str]:
    """One fit's figure and its note."""
    extra = {"max_iter": 1} if what != "share" else {}
    synth = DiagnosticMST(domain=table.domain, random_state=seed, early_stopping=stop, **extra)
    synth.selection = selection
    synth.fit(table.train, epsilon=epsilon, delta=1e-9)
    if what == "share":
        valid = valid_rows(list(table.train.columns))
        factor = synth.estimation_info_.get("holdout", {}).get("factor")
        return float(np.exp(synth.score_samples(valid)).sum()), f" factor {factor}"
    ceiling = tree_ceiling(table.train, synth.tree_edges_)
    if what == "tree":
        wrong = non_adjacent(table.train, synth.tree_edges_)
        return ceiling, f"; {len(wrong)} non-adjacent: {', '.join(wrong) or '-'}"
    return ceiling, ""


def _summary(figures: list[float]) -> str:
    """Mean, SD and SE of some figures."""
    values = np.asarray(figures)
    spread = values.std(ddof=1) if len(values) > 1 else float("nan")
    return f"{values.mean():.5f} (SD {spread:.5f}, SE {spread / np.sqrt(len(values)):.5f})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epsilons", default="3,10")
    parser.add_argument("--seeds", default="0-2", help="'0-59' or '0,1,2'")
    parser.add_argument("--stop", default="holdout", help="holdout, a number or none")
    parser.add_argument("--what", choices=["ceiling", "share", "tree"], default="ceiling")
    parser.add_argument("--exact-margins", action="store_true",
                        help="score pairs against the exact 1-way counts (not private)")
    parser.add_argument("--selection-scale", type=float, default=1.0,
                        help="each round at this many times its budget (not private)")
    parser.add_argument("--round-power", type=float, default=0.0,
                        help="round t's share of the selection budget grows as t**power")
    parser.add_argument("--minority-score", action="store_true",
                        help="weigh each cell by 1 - share of its rarer member's value")
    args = parser.parse_args(argv)
    seeds = _seeds(args.seeds)
    selection = Selection(args.exact_margins, args.selection_scale, args.round_power,
                          args.minority_score)
    for epsilon in (float(e) for e in args.epsilons.split(",")):
        figures, baseline = run(epsilon, seeds, _stop(args.stop), args.what, selection)
        print(f"epsilon {epsilon:g}, stop {args.stop}, {selection}, {len(figures)} seeds: "
              f"mean {args.what} {_summary(figures)}")
        if baseline:
            print(f"  default {_summary(baseline)}; paired difference "
                  f"{_summary(np.subtract(figures, baseline))}")


if __name__ == "__main__":
    main()
