"""Time the exact discrete Gaussian sampler against OpenDP's and float noise.

Ours (``sklearn_dpsynth.privacy._exact.discrete_gaussian``, seeded, int64)
always runs; numpy's float ``Generator.normal`` (the inexact noise it
replaces) is timed alongside for scale.  OpenDP's discrete Gaussian
(``make_gaussian`` on an ``i64`` vector domain, 0.16) runs when ``opendp``
imports here, or in a separate interpreter given by ``--opendp-python``
(OpenDP is never a dependency of the package: install it in its own
virtual environment).  OpenDP draws from OS entropy and cannot be seeded.

    python -m benchmarks.exact_noise
    python -m benchmarks.exact_noise --opendp-python /work/venv-opendp/bin/python \\
        --sizes 1000 10000 1000000 10000000 --sigma 10

Prints a Markdown table of the best time over ``--repeats`` runs per size
(one run for OpenDP above ``--opendp-repeat-below`` values).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

DEFAULT_SIZES = [10**3, 10**4, 10**6, 10**7]


def _best_time(run, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _time_opendp(sizes: list[int], sigma: float, repeats: int, repeat_below: int) -> dict:
    """Seconds per size for OpenDP's discrete Gaussian on an integer vector."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    measurement = dp.m.make_gaussian(
        dp.vector_domain(dp.atom_domain(T=dp.i64)), dp.l2_distance(T=dp.i64), scale=sigma)
    times = {}
    for size in sizes:
        counts = [0] * size
        times[size] = _best_time(lambda: measurement(counts),
                                 repeats if size < repeat_below else 1)
    return {"version": _opendp_version(), "seconds": times}


def _opendp_version() -> str:
    from importlib.metadata import version

    return version("opendp")


def _time_opendp_elsewhere(python: str, sizes: list[int], sigma: float, repeats: int,
                           repeat_below: int) -> dict:
    """Run this file's OpenDP timing in another interpreter (its own venv)."""
    command = [python, __file__, "--worker-opendp", "--sigma", str(sigma),
               "--repeats", str(repeats), "--opendp-repeat-below", str(repeat_below),
               "--sizes", *map(str, sizes)]
    result = json.loads(subprocess.run(command, check=True, capture_output=True,
                                       text=True).stdout)
    result["seconds"] = {int(size): seconds for size, seconds in result["seconds"].items()}
    return result


def _time_ours(sizes: list[int], sigma: float, repeats: int) -> tuple[dict, dict]:
    import numpy as np

    from sklearn_dpsynth.privacy._exact import discrete_gaussian

    rng = np.random.default_rng(0)
    exact = {size: _best_time(lambda: discrete_gaussian(sigma, size, rng), repeats)
             for size in sizes}
    floats = {size: _best_time(lambda: rng.normal(0.0, sigma, size), repeats)
              for size in sizes}
    return exact, floats


def _opendp_in_process(sizes, sigma, repeats, repeat_below):
    try:
        return _time_opendp(sizes, sigma, repeats, repeat_below)
    except ImportError:
        return None


def _format(value) -> str:
    return "-" if value is None else f"{value:.4g}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES)
    parser.add_argument("--sigma", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--opendp-python", default=None,
                        help="interpreter of a virtual environment that has opendp")
    parser.add_argument("--opendp-max-size", type=int, default=10**7,
                        help="skip OpenDP above this size (it takes ~20 us a draw)")
    parser.add_argument("--opendp-repeat-below", type=int, default=10**5,
                        help="time OpenDP once (not best of --repeats) from this size on")
    parser.add_argument("--worker-opendp", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker_opendp:
        print(json.dumps(_time_opendp(args.sizes, args.sigma, args.repeats,
                                      args.opendp_repeat_below)))
        return
    exact, floats = _time_ours(args.sizes, args.sigma, args.repeats)
    opendp_sizes = [size for size in args.sizes if size <= args.opendp_max_size]
    if not opendp_sizes:
        opendp = None
    elif args.opendp_python:
        opendp = _time_opendp_elsewhere(args.opendp_python, opendp_sizes, args.sigma,
                                        args.repeats, args.opendp_repeat_below)
    else:
        opendp = _opendp_in_process(opendp_sizes, args.sigma, args.repeats,
                                    args.opendp_repeat_below)
    opendp_seconds = opendp["seconds"] if opendp else {}
    label = f"OpenDP {opendp['version']} (s)" if opendp else "OpenDP (not run)"
    print(f"discrete Gaussian, sigma = {args.sigma}, best of {args.repeats} "
          f"(OpenDP once from {args.opendp_repeat_below})\n")
    print(f"| size | ours, exact int64 (s) | {label} | OpenDP / ours "
          "| numpy float normal (s) |")
    print("|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        theirs = opendp_seconds.get(size)
        ratio = None if theirs is None else theirs / exact[size]
        print(f"| {size:,} | {_format(exact[size])} | {_format(theirs)} "
              f"| {_format(ratio)} | {_format(floats[size])} |")


if __name__ == "__main__":
    main(sys.argv[1:])
