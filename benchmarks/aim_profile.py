"""Where an AIM fit on Adult spends its time and memory, round by round.

Standalone script::

    python -m benchmarks.aim_profile --epsilon 10

Fits ``AIMSynthesizer`` with default settings (seed 0) on the training
split of ``benchmarks.mst_adult.load_adult`` and prints, every ``--every``
rounds, the model size, its number of maximal cliques, the mirror-descent
iterations of the round's re-estimation and the seconds elapsed; then the
time of the final estimation, the fit time and the process's peak resident
memory (``ru_maxrss``, also printed with every round).  Run it under ``py-spy record`` for a flame graph.
"""

from __future__ import annotations

import argparse
import resource
import time

from benchmarks.aim_adult import DATA
from benchmarks.mst_adult import load_adult
from sklearn_dpsynth.marginal.aim import AIMSynthesizer


def _peak_mb() -> float:
    """Peak resident memory of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--every", type=int, default=10, help="print every k-th round")
    args = parser.parse_args()
    train, _, domain = load_adult(DATA)

    round_ends = []

    def report(info: dict) -> None:
        round_ends.append(time.perf_counter() - start)
        if info["round"] % args.every == 0 or info["final"]:
            print(f"round {info['round']:4d}  model {info['model_size_mb']:7.2f} MiB  "
                  f"iters {info['estimation_iterations']:4d}  "
                  f"elapsed {round_ends[-1]:7.1f} s  peak {_peak_mb():5.0f} MiB  "
                  f"clique {info['clique']}", flush=True)

    synth = AIMSynthesizer(domain=domain, random_state=args.seed, callback=report)
    start = time.perf_counter()
    synth.fit(train, epsilon=args.epsilon, delta=1e-9)
    fit_s = time.perf_counter() - start
    last_round = round_ends[-1] if round_ends else 0.0
    peak_mb = _peak_mb()
    print(f"rounds {synth.n_rounds_}  cliques {len(synth.model_.cliques)}  "
          f"model {synth.model_.size_mb:.2f} MiB  final estimation "
          f"{synth.estimation_info_['iterations']} iterations")
    print(f"fit {fit_s:.1f} s (rounds {last_round:.1f} s)  peak RSS {peak_mb:.0f} MiB")


if __name__ == "__main__":
    main()
