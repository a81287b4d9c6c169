"""Speed of the exact releases beside the floating-point draws they replaced.

From the repository root::

    python -m benchmarks.exact_release --cells 1000000 --repeats 3

Times, per noise scale, ``DiscreteGaussian(sigma).release`` on ``cells``
integer counts (the sampler of ``benchmarks.exact_noise`` plus the
release's integer check) against ``rng.normal`` on as many floats (the old
``gaussian_mechanism``), and the exact exponential mechanism on
``candidates`` scores against report-noisy-max with Gumbel noise (the old
``exponential_mechanism``).  The best of ``repeats`` runs is printed, in
milliseconds.  The fit-level figures (MST and AIM on Adult) come from
``python -m benchmarks.aim_adult --methods mst aim --epsilons 1 --seeds 1``.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.exact_noise import _best_time
from sklearn_dpsynth.privacy import DiscreteGaussian, ExponentialMechanism


def _best_ms(run, repeats: int) -> float:
    return 1000.0 * _best_time(run, repeats)


def main(argv=None) -> None:
    """Print the timings (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1_000_000)
    parser.add_argument("--candidates", type=int, default=1_000)
    parser.add_argument("--sigmas", type=float, nargs="+", default=[0.5, 4.0, 50.0, 2000.0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 1000, args.cells)
    print(f"{'release':<34}{'sigma/eps':>10}{'exact ms':>12}{'float ms':>12}")
    for sigma in args.sigmas:
        exact = _best_ms(lambda: DiscreteGaussian(sigma).release(counts, rng), args.repeats)
        floating = _best_ms(lambda: counts + rng.normal(0.0, sigma, counts.shape),
                            args.repeats)
        print(f"{f'{args.cells} counts, Gaussian':<34}{sigma:>10g}{exact:>12.1f}"
              f"{floating:>12.1f}")
    scores = rng.normal(0.0, 50.0, args.candidates)
    for epsilon in (0.05, 1.0):
        exact = _best_ms(lambda: ExponentialMechanism(epsilon).release(scores, rng),
                         args.repeats)
        floating = _best_ms(
            lambda: int(np.argmax(scores + rng.gumbel(0.0, 2.0 / epsilon, scores.shape))),
            args.repeats)
        print(f"{f'{args.candidates} candidates, exponential':<34}{epsilon:>10g}"
              f"{exact:>12.1f}{floating:>12.1f}")


if __name__ == "__main__":
    main()
