"""MST on a wide table (issue 27, item 6): 100 categorical columns, 10^5 rows.

From the repository root::

    python -m benchmarks.mst_wide --seeds 3
    python -m benchmarks.mst_wide --seeds 3 --param early_stopping=none --param compress=false

Protocol: ``make_bayesnet(n_samples=100_000, n_features=100, n_numeric=0,
random_state=0)`` as integer codes with its public domain; for every seed
MST is fitted at ``(epsilon, delta)`` (default 1 and 1e-9, the reference
harness's), ``len(train)`` rows are sampled, and the script prints the mean
total variation distance over ``--n-pairs`` random 2-way marginals (drawn
with the public seed 0, the same for every run) of

* ``tvd`` -- the sampled rows against the training table (the figure of the
  issue; the reference's recorded 0.0073 is this, seed 0, 738 s);
* ``tvd_model`` -- the fitted model's own exact marginals (what sampling
  would give with infinitely many rows), against the training table;
* ``tvd_tree`` -- the same, on the model's selected tree edges only;

and the fit's CPU seconds (process time: the steadier figure on a shared
machine) and wall seconds.  ``--param name=value`` sets any MST parameter
(``none``, ``true``, ``false`` and numbers are parsed).

Diagnostics (not private; for locating where the error comes from):

* ``--tree oracle`` -- the spanning tree is the maximum spanning tree of the
  *exact* pair scores (what the private selection would pick without its
  noise); the selection's share is still recorded in the ledger, so every
  other step gets the budget it gets in a private fit;
* ``--generator systematic`` -- the generator without its balancing step
  (the default before issue 27 item 6): each parent group's values dealt
  systematically along the context order only;
* ``--generator shuffled`` -- rows generated as private-pgm's reference
  does: in every parent group the rounded counts of the new attribute in a
  random order, instead of our low-variance interleaving (no balancing);
* ``--shares a,b,c`` -- the budget split between the 1-way measurements, the
  selection and the tree's measurements in these proportions instead of
  thirds (still the whole budget);
* ``--subset-spread`` -- also scores the sample on every pair and prints
  the standard deviation of a random ``--n-pairs`` subset's mean
  (``sd_subset``): how far a figure measured on another random subset of
  pairs may lie from ours.

Result: the gap was the generator's (see benchmarks/README.md, "MST on a
100-column table"): with the balancing step, the default scores 0.00704
(0.00702 / 0.00711 / 0.00700; ``tvd_model`` 0.00700) where the systematic
generator scored 0.00750 and the reference 0.0073 (seed 0).

Findings before the balancing step (every run used the generator now
behind ``--generator systematic``; seeds 0-2 unless said, the shared
2-core machine under load, so CPU seconds only):

=================================================  =======  =========  =========
run                                                tvd      tvd_model  fit CPU s
=================================================  =======  =========  =========
defaults (``--seeds 3``)                           0.00756  0.00699    5.2
seeds 3-11 (``--seeds 9 --first-seed 3``)          0.00756  0.00703    5.4
``--tree oracle``                                  0.00755  0.00702    5.2
``--generator shuffled``                           0.00764  0.00699    5.6
``--param compress=false``                         0.00749  0.00698    5.6
``--param early_stopping=none``                    0.00745  0.00693    6.7
``--shares 1,0.5,1.5``                             0.00746  0.00695    5.6
``--shares 0.5,0.5,2``                             0.00745  0.00693    5.5
``--epsilon 1.5``                                  0.00724  0.00668    5.4
``--epsilon 3``                                    0.00712  0.00652    5.4
``--epsilon 1000 --seeds 1``                       0.00695  0.00638    7.8
``--epsilon 1000 --seeds 1 --generator shuffled``  0.00721  0.00638    7.2
=================================================  =======  =========  =========

* The private selection already picks as good a tree as the noise-free
  one (``--tree oracle``): the candidate scores and their exponential
  mechanism are not the cause.  Budget splits, no compression and running
  the estimation to convergence each move the figure by about 0.0001 (the
  seed-to-seed standard deviation); compression thresholds of
  2 or 5 noise deviations instead of 3 (``COMPRESSION_SIGMAS`` patched by
  hand) change nothing measurable.
* Sampling 10^5 rows adds 0.0005-0.0006 to the model's own error, as much
  as all the privacy noise (``--epsilon 1000``: a noise-free tree still
  samples at 0.00695).  The reference's generator form adds more (0.00764
  on the same models) and varies twice as much between seeds (0.0074-0.0078).
* The mean over 500 random pairs of 4,950 has a standard deviation of
  0.0006 across subsets (``--subset-spread``): a figure measured on another
  random subset (the reference's script draws its own) cannot be compared
  at the 5% level.  With the same subset, the reference's 0.0073 at
  epsilon 1 would lie within 0.0001-0.0002 of its own generator on a
  noise-free tree (0.0072): one seed of it is not evidence of a better
  mechanism.  Ours reaches 0.0073 at epsilon 1.5.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import time
from typing import Iterator

import numpy as np
import pandas as pd

import sklearn_dpsynth.marginal.mst as mst_module
import sklearn_dpsynth.pgm.sampling as sampling_module
from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.marginal.mst import MSTSynthesizer
from sklearn_dpsynth.marginal.selection import maximum_spanning_tree
from sklearn_dpsynth.metrics import workload_error
from sklearn_dpsynth.metrics.marginals import marginal_tvd


def load_wide(n_samples: int = 100_000, n_features: int = 100) -> tuple[pd.DataFrame, dict]:
    """The wide bayesnet table as integer codes, and its domain ``{column: size}``."""
    bunch = make_bayesnet(n_samples=n_samples, n_features=n_features, n_numeric=0,
                          random_state=0)
    columns = [f"v{i}" for i in range(len(bunch.network.cardinalities))]
    frame = pd.DataFrame(np.asarray(bunch.codes, dtype=np.int64), columns=columns)
    return frame, {c: int(k) for c, k in zip(columns, bunch.network.cardinalities)}


def random_pairs(columns: list, n_pairs: int, seed: int = 0) -> list[tuple]:
    """``n_pairs`` distinct column pairs drawn with a public seed (all if fewer)."""
    pairs = list(itertools.combinations(columns, 2))
    if n_pairs >= len(pairs):
        return pairs
    pick = np.random.default_rng(seed).choice(len(pairs), size=n_pairs, replace=False)
    return [pairs[k] for k in sorted(pick)]


def histogram(frame: pd.DataFrame, pair: tuple, domain: dict) -> np.ndarray:
    """Normalised 2-way histogram of two code columns."""
    a, b = (frame[c].to_numpy() for c in pair)
    counts = np.bincount(a * domain[pair[1]] + b, minlength=domain[pair[0]] * domain[pair[1]])
    return counts.reshape(domain[pair[0]], domain[pair[1]]) / len(frame)


def mean_tvd(truth: dict, other, pairs: list[tuple]) -> float:
    """Mean over ``pairs`` of half the L1 distance between ``truth[p]`` and ``other(p)``."""
    return float(np.mean([marginal_tvd(truth[p], other(p)) for p in pairs]))


def _oracle_kruskal(pairs, scores, components, rho_per_round, ledger, rng, labels):
    """Kruskal on the exact scores (NOT private), the selection's cost still recorded."""
    n_rounds = components.n_components - 1
    ledger.spend(target=f"{n_rounds} spanning-tree edges (oracle, not private)",
                 mechanism="none (diagnostic)", rho=rho_per_round * n_rounds)
    return maximum_spanning_tree(pairs, scores, components)


def _unbalanced(values, rows, group, cells, n_values, rng):
    """The dealt values unchanged (the generator before the balancing step)."""
    return values


def _shuffled_groups(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every group's rounded values in a random order (the reference's generator)."""
    n_groups, n_values = counts.shape
    flat = counts.ravel()
    values = np.repeat(np.tile(np.arange(n_values), n_groups), flat)
    group = np.repeat(np.repeat(np.arange(n_groups), n_values), flat)
    return values[np.argsort(group + rng.random(values.size), kind="stable")]


@contextlib.contextmanager
def diagnostics(tree: str, generator: str,
                shares: tuple[float, float, float] | None = None) -> Iterator[None]:
    """Swap in the oracle tree, another generator and/or a budget split for the block."""
    saved = (mst_module.private_kruskal, sampling_module._interleave,
             mst_module.budget_shares, sampling_module._balance)
    if tree == "oracle":
        mst_module.private_kruskal = _oracle_kruskal
    if generator in ("systematic", "shuffled"):
        sampling_module._balance = _unbalanced
    if generator == "shuffled":
        sampling_module._interleave = _shuffled_groups
    if shares is not None:
        mst_module.budget_shares = lambda selection, cliques, selection_weight=1.0: tuple(
            s / sum(shares) for s in shares)
    try:
        yield
    finally:
        (mst_module.private_kruskal, sampling_module._interleave,
         mst_module.budget_shares, sampling_module._balance) = saved


def subset_spread(train: pd.DataFrame, synthetic: pd.DataFrame, domain: dict,
                  n_pairs: int) -> float:
    """Standard deviation of the mean TVD over a random ``n_pairs`` subset of all pairs."""
    codes = {c: domain[c] for c in train.columns}
    per_pair = workload_error(train, synthetic, k=2, domain=codes, reduce="none").to_numpy()
    finite = np.sqrt(max(0.0, 1.0 - n_pairs / len(per_pair)))
    return float(per_pair.std(ddof=1) / np.sqrt(n_pairs) * finite)


def run_seed(seed: int, train: pd.DataFrame, domain: dict, truth: dict, pairs: list,
             args: argparse.Namespace) -> dict:
    """Fit, sample and score one seed."""
    synth = MSTSynthesizer(domain=domain, random_state=seed).set_params(**args.params)
    with diagnostics(args.tree, args.generator, args.shares):
        cpu, wall = time.process_time(), time.perf_counter()
        synth.fit(train, epsilon=args.epsilon, delta=args.delta)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        synthetic = synth.sample(len(train))
    tree = [tuple(e) for e in synth.tree_edges_]
    tree_truth = {e: histogram(train, e, domain) for e in tree}
    row = {
        "seed": seed,
        "tvd": mean_tvd(truth, lambda p: histogram(synthetic, p, domain), pairs),
        "tvd_model": mean_tvd(truth, lambda p: synth.marginal(list(p)), pairs),
        "tvd_tree": mean_tvd(tree_truth, lambda p: synth.marginal(list(p)), tree),
        "fit_cpu_s": cpu,
        "fit_wall_s": wall,
        "iterations": synth.estimation_info_["iterations"],
    }
    if args.subset_spread:
        row["sd_subset"] = subset_spread(train, synthetic, domain, len(pairs))
    return row


def _value(text: str):
    """A ``--param`` value: none/true/false, an int, a float, or the string."""
    lowered = text.lower()
    if lowered in ("none", "true", "false"):
        return {"none": None, "true": True, "false": False}[lowered]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..SEEDS-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--n-pairs", type=int, default=500)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--tree", choices=["private", "oracle"], default="private")
    parser.add_argument("--generator", choices=["ours", "systematic", "shuffled"],
                        default="ours")
    parser.add_argument("--shares", type=lambda text: tuple(float(v) for v in text.split(",")),
                        default=None, metavar="A,B,C")
    parser.add_argument("--subset-spread", action="store_true")
    args = parser.parse_args(argv)
    if args.shares is not None and (len(args.shares) != 3 or min(args.shares) <= 0):
        parser.error("--shares takes three positive numbers, e.g. 1,0.5,1.5")
    args.params = {}
    for item in args.param:
        name, _, value = item.partition("=")
        args.params[name] = _value(value)
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    train, domain = load_wide(args.rows, args.features)
    pairs = random_pairs(list(train.columns), args.n_pairs)
    truth = {p: histogram(train, p, domain) for p in pairs}
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        rows.append(run_seed(seed, train, domain, truth, pairs, args))
        print(" ".join(f"{k}={v:.5g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in rows[-1].items()), flush=True)
    table = pd.DataFrame(rows).set_index("seed")
    with pd.option_context("display.width", 160, "display.float_format", "{:.5f}".format):
        print(table.agg(["mean", "std"]))


if __name__ == "__main__":
    main()
