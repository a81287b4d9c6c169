"""Fit private-pgm's reference MST or AIM on an encoded table (runs in the reference's venv).

This script is ours; it is *not* imported by the package nor by the rest of
the harness.  ``benchmarks/reference.py`` calls it as a subprocess with the
reference environment's interpreter (``--ref-python``), in which ``mbi`` 1.0
and jax are installed.  The mechanism scripts (``mst.py``, ``aim.py``,
``mechanism.py``, ``cdp2adp.py`` from private-pgm's ``mechanisms/`` folder)
are *not* part of this repository: pass the folder holding them with
``--reference-dir``; it is put on ``sys.path`` and the scripts are used
through the same calls as their own ``__main__`` blocks.

Input: the table as a CSV of integer codes and its domain as a JSON
``{column: size}`` (what ``mbi.Dataset.load`` reads).  Output: the synthetic
table as a CSV with the same columns, and a JSON with the fit time and the
versions used.  The seed goes to ``numpy.random.seed`` (the scripts draw
their noise and their samples from NumPy's global generator).

Usage::

    /work/refenv/bin/python benchmarks/reference_driver.py --reference-dir /work/refcode \
        --data train.csv --domain domain.json --method mst --epsilon 1 --seed 0 \
        --out synthetic.csv --info info.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options of the driver."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-dir", required=True,
                        help="folder with private-pgm's mechanisms/ scripts")
    parser.add_argument("--data", required=True, help="CSV of integer codes")
    parser.add_argument("--domain", required=True, help="JSON {column: size}")
    parser.add_argument("--method", choices=["mst", "aim"], required=True)
    parser.add_argument("--epsilon", type=float, required=True)
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workload", choices=["2way", "3way"], default="2way",
                        help="AIM's workload: all k-way marginals of at most --max-cells cells")
    parser.add_argument("--max-cells", type=int, default=10000)
    parser.add_argument("--max-model-size", type=float, default=80.0)
    parser.add_argument("--max-iters", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=None,
                        help="AIM's synthetic rows (default: its estimated total); MST's "
                             "script always returns its estimated total")
    parser.add_argument("--out", required=True, help="CSV to write the synthetic rows to")
    parser.add_argument("--info", required=True, help="JSON to write fit time and versions to")
    return parser.parse_args(argv)


def aim_workload(domain, degree: int, max_cells: int) -> list:
    """Every ``degree``-way marginal of at most ``max_cells`` cells, weight 1 (the script's rule)."""
    cliques = itertools.combinations(domain.attrs, degree)
    return [(clique, 1.0) for clique in cliques if domain.size(clique) <= max_cells]


def fit_reference(args: argparse.Namespace, data):
    """Run the reference mechanism; return its synthetic ``mbi.Dataset``."""
    if args.method == "mst":
        import mst
        return mst.MST(data, args.epsilon, args.delta)
    import aim
    workload = aim_workload(data.domain, int(args.workload[0]), args.max_cells)
    mechanism = aim.AIM(args.epsilon, args.delta, max_model_size=args.max_model_size,
                        max_iters=args.max_iters)
    _, synth = mechanism.run(data, workload, num_synth_rows=args.rows)
    return synth


def shim_matplotlib() -> None:
    """Let ``cdp2adp.py`` import without matplotlib.

    The script imports ``matplotlib.pyplot`` at the top but never uses it;
    where matplotlib is absent (the GPU machine) an empty module stands in.
    """
    try:
        import matplotlib.pyplot  # noqa: F401
    except ImportError:
        import types
        sys.modules["matplotlib"] = types.ModuleType("matplotlib")
        sys.modules["matplotlib.pyplot"] = types.ModuleType("matplotlib.pyplot")


def patch_chex_numeric() -> bool:
    """Make ``chex.Numeric`` accept jax tracers again, when it does not; return whether patched.

    With jax >= 0.10, ``chex.Numeric`` (chex 0.1.92) names the concrete
    ``jaxlib`` array class, which traced values are not instances of, so
    ``mbi.Factor``'s arithmetic with a traced scalar (``normalize`` inside a
    jitted oracle) fails with "DynamicJaxprTracer has no attribute domain".
    (``isinstance`` against a ``typing.Union`` checks the value's type, not
    the array class's ``__instancecheck__``, which is what admits tracers).
    The patch replaces that union by a tuple of the same classes, which
    ``isinstance`` checks class by class; no computation of mbi changes.
    """
    import typing

    import chex
    import jax
    import jax.numpy as jnp

    accepted = []
    jax.jit(lambda x: accepted.append(isinstance(x, chex.Numeric)) or x)(jnp.float32(1.0))
    if accepted[0]:
        return False
    chex.Numeric = tuple(typing.get_args(chex.Numeric))
    return True


def main(argv: list[str] | None = None) -> None:
    """Load, fit, write the synthetic rows and the run's info."""
    args = parse_args(argv)
    sys.path.insert(0, args.reference_dir)
    shim_matplotlib()
    patched = patch_chex_numeric()
    import jax
    import mbi
    import numpy as np

    np.random.seed(args.seed)
    data = mbi.Dataset.load(args.data, args.domain)
    start = time.perf_counter()
    synth = fit_reference(args, data)
    fit_seconds = time.perf_counter() - start
    frame = synth.df[list(data.domain.attrs)]
    frame.to_csv(args.out, index=False)
    info = {"fit_seconds": fit_seconds, "rows": int(len(frame)),
            "jax": jax.__version__, "jax_backend": jax.default_backend(),
            "mbi": getattr(mbi, "__version__", None) or _dist_version("mbi"),
            "numpy": np.__version__, "chex_numeric_patched": patched}
    with open(args.info, "w") as handle:
        json.dump(info, handle)


def _dist_version(name: str) -> str | None:
    """Installed version of a distribution, or None."""
    from importlib import metadata
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


if __name__ == "__main__":
    main()
