"""Command line: fit a synthesizer on a table and write synthetic rows.

``python -m sklearn_dpsynth`` runs on the UCI Adult table shipped with the
package (:func:`~sklearn_dpsynth.datasets.load_adult`, 30,162 rows, with
its public domain from the UCI documentation): it holds out 5,000 rows,
fits on the others at ``epsilon=1``, writes the synthetic CSV, prints the
privacy ledger and two quality figures: the mean 2-way total-variation
distance to the training rows and the held-out negative log-likelihood.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

import numpy as np
import pandas as pd

from . import datasets
from .metrics import workload_error
from .registry import available_methods, get_method

#: Rows of the bundled Adult table held out for the log-likelihood.
_HOLDOUT_ROWS = 5_000


#: ``--help`` text: the docstring without its reStructuredText markup.
_HELP = """\
Fit a synthesizer on the UCI Adult table shipped with the package (30,162
rows, with its public domain from the UCI documentation) and write synthetic
rows: the demo holds out 5,000 rows, fits on the others at --epsilon (1 by
default), writes the synthetic CSV, prints the privacy ledger and two quality
figures: the mean 2-way total-variation distance to the training rows and
the held-out negative log-likelihood.  For your own tables use the dpsynth
command (dpsynth --help).
"""


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m sklearn_dpsynth", description=_HELP,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--method", choices=available_methods(), default="mst",
                        help="registered method (default: mst)")
    parser.add_argument("--epsilon", type=float, default=1.0, help="privacy budget (default: 1)")
    parser.add_argument("--delta", type=float, default=1e-9, help="privacy delta (default: 1e-9)")
    parser.add_argument("--n-samples", type=int, default=None,
                        help="number of TRAINING rows taken from the bundled Adult table "
                             "(default: all 25,162 not held out); it is not the number of "
                             "synthetic rows, which is the model's differentially private "
                             "estimate of this count")
    parser.add_argument("--output", default="synthetic.csv",
                        help="where to write the synthetic rows (default: synthetic.csv)")
    parser.add_argument("--random-state", type=int, default=0,
                        help="seed of the split, the noise and the sampling (default: 0)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo job; returns the process exit code."""
    args = _parse(argv)
    try:
        cls = get_method(args.method)
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    data = datasets.load_adult()
    order = np.random.default_rng(args.random_state).permutation(len(data.frame))
    available = len(order) - _HOLDOUT_ROWS
    n_train = available if args.n_samples is None else args.n_samples
    if not 1 <= n_train <= available:
        print(f"error: --n-samples must lie in [1, {available}], got {n_train}",
              file=sys.stderr)
        return 2
    holdout = data.frame.iloc[order[:_HOLDOUT_ROWS]].reset_index(drop=True)
    train = data.frame.iloc[order[_HOLDOUT_ROWS:_HOLDOUT_ROWS + n_train]].reset_index(drop=True)
    synth = cls(domain=data.domain, random_state=args.random_state)
    synth.fit(train, epsilon=args.epsilon, delta=args.delta)
    rows = synth.sample()
    rows.to_csv(args.output, index=False)
    print(f"wrote {len(rows)} synthetic rows to {args.output} (the number of rows is the "
          "model's differentially private estimate of the training row count, which is "
          "itself private)\n")
    with pd.option_context("display.width", 120, "display.max_columns", 10):
        print(synth.privacy_ledger_.summary().to_string(index=False))
    eps, delta = synth.privacy_ledger_.spent()
    print(f"\nspent epsilon={eps:.6g}, delta={delta:g} (budget {args.epsilon:g}, {args.delta:g})")
    tvd = workload_error(train, rows, k=2, domain=data.domain)
    nll = -synth.score(holdout)
    print(f"mean 2-way TVD vs real rows: {tvd:.4f}")
    print(f"held-out NLL: {nll:.4f} nats/row on {len(holdout)} Adult rows not used in "
          "the fit (a log-density in the data's units: lower is better)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
