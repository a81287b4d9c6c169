"""Where an AIM fit of the reference harness spends its CPU time: rounds against final estimation.

Standalone script (issue 27, item 5)::

    python -m benchmarks.aim_final_profile --table texas --epsilon 10 [--profile 35] \
        [--param round_settle=0]

Fits ``AIMSynthesizer`` as ``benchmarks.reference.fit_ours`` does (workload
``aim_workload(domain, 2)``, ``delta=1e-9``, seed 0) and prints the fit's CPU
seconds (``time.process_time``), the number of rounds and of mirror-descent
steps in the rounds' re-estimations, and the CPU seconds, steps and stop
reason of the final estimation (``refit_from_independent``).  With
``--profile N`` the fit runs under ``cProfile`` (which slows it) and the
``N`` most expensive calls by cumulative time are printed.  ``--param
NAME=VALUE`` (repeatable) sets a numeric parameter of the synthesizer (``None``
for None), e.g. ``round_settle=0`` for rounds run to ``max_iter``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

import sklearn_dpsynth.marginal.aim._estimator as aim_estimator
from benchmarks import reference
from sklearn_dpsynth import AIMSynthesizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="texas", choices=sorted(reference.TABLES))
    parser.add_argument("--epsilon", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    params = dict(_parameter(text) for text in args.param)
    table = reference.TABLES[args.table](reference.data_folder(None))
    final: dict = {}
    refit = aim_estimator.refit_from_independent

    def timed_refit(*positional, **named):
        start = time.process_time()
        model, info = refit(*positional, **named)
        final.update(cpu=time.process_time() - start, steps=info["iterations"],
                     stopped_by=info.get("stopped_by"))
        return model, info

    aim_estimator.refit_from_independent = timed_refit
    rounds: list[int] = []
    synth = AIMSynthesizer(domain=table.domain, workload=reference.aim_workload(table.domain, 2),
                           random_state=args.seed, **params,
                           callback=lambda info: rounds.append(info["estimation_iterations"]))
    profiler = cProfile.Profile() if args.profile else None
    start = time.process_time()
    if profiler is not None:
        profiler.enable()
    synth.fit(table.train, epsilon=args.epsilon, delta=1e-9)
    if profiler is not None:
        profiler.disable()
    total = time.process_time() - start
    print(f"{args.table} epsilon={args.epsilon:g} seed={args.seed}: fit {total:.1f} CPU s, "
          f"{len(rounds)} rounds ({sum(rounds)} mirror-descent steps); final estimation "
          f"{final['cpu']:.1f} CPU s, {final['steps']} steps, stopped by {final['stopped_by']}")
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(args.profile)
        print(out.getvalue())


def _parameter(text: str) -> tuple[str, float | None]:
    """``NAME=VALUE`` as a name and a number (``None`` for None)."""
    name, _, value = text.partition("=")
    return name, None if value == "None" else float(value)


if __name__ == "__main__":
    main()
