"""What private domain learning gives a synthesizer when nothing is declared.

Standalone script; from the repository root::

    nice -n 10 python -m benchmarks.domain_learning learned --seeds 3
    nice -n 10 python -m benchmarks.domain_learning learned --seeds 2 --method aim
    nice -n 10 python -m benchmarks.domain_learning heavy-tails --seeds 3
    python -m benchmarks.domain_learning ends --csv /tmp/newuser/weather10k.csv --seeds 30

Two studies, both with :class:`~sklearn_dpsynth.MSTSynthesizer` (``--method aim``:
:class:`~sklearn_dpsynth.AIMSynthesizer` for the first) at ``epsilon=1``
(``delta=1e-9``, the synthesizer's default ``preprocessing_budget``, 30% for MST and
AIM; ``--preprocessing-budget`` sets another, ``--tables adult`` runs one table):

* ``learned``: adult_raw (30,162 rows) and texas (50,000 rows), whole and
  as seeded 1,000-, 5,000- and 10,000-row subsamples
  (``frame.sample(n, random_state=0)``), **nothing declared**.  Per table:
  the mean and worst share of rows inside the learned numeric bounds, the
  share of categorical values whose category was kept, the numbers of
  categories kept, and the mean 2-way total variation distance between the
  real and synthetic tables *on the original values* (every numeric column
  cut on the distinct 5%-quantiles of the real column, see
  ``benchmarks.decoding.mean_two_way_tvd``).  A fit refused with
  :class:`~sklearn_dpsynth.exceptions.DomainInferenceError` is reported as
  such, with the columns it names.  The script runs unchanged on an older
  checkout (``PYTHONPATH=<old tree>``) for before/after figures.
* ``heavy-tails``: texas whole, categorical columns declared from
  ``texas.json``; the seven money and length-of-stay columns declared with
  the public bounds of ``texas.json`` and ``"scale": "linear"`` (uniform
  bins, the old default) or ``"scale": "auto"`` (the new default), or
  learned privately.  Reported: the mean 2-way TVD over the pairs of those
  seven columns and over all pairs.

* ``ends``: a CSV file read as the command line reads it (typed privately,
  nothing declared), its numeric and datetime columns learned with the
  synthesizers' default budget (:class:`~sklearn_dpsynth.IndependentSynthesizer`,
  whose domain learning is MST's and AIM's: the same shares, the same
  noise for a seed) over ``--seeds`` noise draws.  Per column: the draws
  whose learned bounds lie inside the real range widened by 5% of its width
  on each side (a datetime column: inside the real days), the mean and worst
  share of rows inside the bounds, and the most frequent bounds.  The
  tables of ``benchmarks.new_user`` (``weather10k.csv``) are the intended
  input.

``--details`` prints every numeric column's learned bounds and rows inside.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import math
import warnings

import numpy as np
import pandas as pd

from benchmarks.decoding import load, mean_two_way_tvd
from sklearn_dpsynth import domain as domain_module
from sklearn_dpsynth.marginal import AIMSynthesizer
from sklearn_dpsynth.marginal.mst import MSTSynthesizer

try:  # absent from checkouts older than the refusal
    from sklearn_dpsynth.exceptions import DomainInferenceError
except ImportError:  # pragma: no cover - before/after runs only
    class DomainInferenceError(Exception):
        """Placeholder: never raised by an older checkout."""

SIZES = (1000, 5000, 10000, None)


def tables(sizes=SIZES, names=("adult", "texas")) -> dict[str, pd.DataFrame]:
    """adult_raw and texas, whole (``None``) and subsampled, undeclared."""
    out = {}
    for name in names:
        frame, _ = load(name)
        for size in sizes:
            label = f"{name} {'all' if size is None else size}"
            out[label] = (frame if size is None or size >= len(frame)
                          else frame.sample(n=size, random_state=0).reset_index(drop=True))
    return out


def numeric_names(frame: pd.DataFrame) -> list:
    """Columns modelled as numbers (numeric, non-bool dtypes)."""
    return [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])
            and not pd.api.types.is_bool_dtype(frame[c])]


def learned_summary(frame: pd.DataFrame, domain) -> dict:
    """Rows inside the learned bounds and categories kept, per column and overall."""
    inside, covered, kept, bounds = {}, {}, {}, {}
    for spec in domain:
        series = frame[spec.name]
        if spec.kind == "numeric":
            # text in a column learned as numeric (texas' 'INVALID') counts as outside
            values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
            low, high = spec.edges[0], spec.edges[-1]
            bounds[spec.name] = (low, high)
            inside[spec.name] = float(np.mean((values >= low) & (values <= high)))
        elif spec.kind == "categorical":
            present = series.dropna().astype(object)
            kept[spec.name] = f"{len(spec.categories)}/{present.nunique()}"
            covered[spec.name] = float(present.isin(set(spec.categories)).mean())
    return {"inside": inside, "covered": covered, "kept": kept, "bounds": bounds}


METHODS = {"mst": MSTSynthesizer, "aim": AIMSynthesizer}


def fit_learned(frame: pd.DataFrame, seed: int, epsilon: float, method: str = "mst",
                preprocessing_budget: float | None = None):
    """``method`` with nothing declared: ``(synthesizer, None)`` or ``(None, refusal)``."""
    synth = METHODS[method](random_state=seed)
    if preprocessing_budget is not None:
        synth.set_params(preprocessing_budget=preprocessing_budget)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            synth.fit(frame, epsilon=epsilon)
        except DomainInferenceError as error:
            return None, str(error)
    return synth, None


def study_learned(seeds: int, epsilon: float, sizes, details: bool,
                  method: str = "mst", names=("adult", "texas"),
                  preprocessing_budget: float | None = None) -> None:
    print("| table | rows inside numeric bounds, mean (worst) | category rows kept | "
          "categories kept | 2-way TVD |\n|---|---|---|---|---|")
    for label, frame in tables(sizes, names).items():
        numeric = numeric_names(frame)
        rows, tvds, refusals = [], [], []
        for seed in range(seeds):
            synth, refusal = fit_learned(frame, seed, epsilon, method, preprocessing_budget)
            if synth is None:
                refusals.append(refusal.split(":")[0][:150])
                continue
            summary = learned_summary(frame, synth.domain_)
            rows.append(summary)
            fake = synth.sample(len(frame), random_state=seed)
            tvds.append(mean_two_way_tvd(frame, fake, numeric))
            if details:
                for column, (low, high) in summary["bounds"].items():
                    print(f"  seed {seed} {column}: [{low:g}, {high:g}] "
                          f"inside {summary['inside'][column]:.3f}")
        print(_row(label, rows, tvds, refusals, seeds), flush=True)


def _row(label: str, rows: list, tvds: list, refusals: list, seeds: int) -> str:
    if not rows:
        return f"| {label} | refused {len(refusals)}/{seeds}: {refusals[0]} | | | |"
    inside = [np.mean(list(r["inside"].values())) for r in rows if r["inside"]]
    worst = [min(r["inside"].values()) for r in rows if r["inside"]]
    covered = [np.mean(list(r["covered"].values())) for r in rows if r["covered"]]
    kept = "; ".join(", ".join(r["kept"].values()) for r in rows[:1])
    note = f" (refused {len(refusals)}/{seeds})" if refusals else ""
    return (f"| {label}{note} | {np.mean(inside):.3f} ({np.min(worst):.3f}) | "
            f"{np.mean(covered) if covered else float('nan'):.3f} | {kept} | "
            f"{np.mean(tvds):.3f} ± {np.std(tvds):.3f} |")


def heavy_tail_variants(declared: dict, numeric: list) -> dict:
    """Declarations of texas: the numeric columns linear, auto, or left to learning
    (on a checkout without ``scale``: as declared, or left to learning)."""
    categorical = {c: e for c, e in declared.items() if c not in numeric}
    if not hasattr(domain_module, "numeric_scale"):  # before/after runs only
        return {"declared (uniform bins)": declared, "learned": categorical}
    return {
        "declared, scale linear": {**categorical,
                                   **{c: {**declared[c], "scale": "linear"} for c in numeric}},
        "declared, scale auto": {**categorical,
                                 **{c: {**declared[c], "scale": "auto"} for c in numeric}},
        "learned": categorical,
    }


def numeric_pairs_tvd(real: pd.DataFrame, fake: pd.DataFrame, numeric: list) -> float:
    """Mean 2-way TVD over the pairs of ``numeric`` columns only."""
    values = []
    for pair in itertools.combinations(numeric, 2):
        values.append(mean_two_way_tvd(real[list(pair)], fake[list(pair)], list(pair)))
    return float(np.mean(values))


def study_heavy_tails(seeds: int, epsilon: float) -> None:
    frame, declared = load("texas")
    numeric = [c for c in frame.columns if c not in set(
        c for c, e in declared.items() if isinstance(e, list))]
    print("| texas numeric columns | 2-way TVD, numeric pairs | 2-way TVD, all pairs |\n"
          "|---|---|---|")
    for variant, domain in heavy_tail_variants(declared, numeric).items():
        pairs, overall = [], []
        for seed in range(seeds):
            synth = MSTSynthesizer(domain=domain, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                synth.fit(frame, epsilon=epsilon)
            fake = synth.sample(len(frame), random_state=seed)
            pairs.append(numeric_pairs_tvd(frame, fake, numeric))
            overall.append(mean_two_way_tvd(frame, fake, numeric))
        print(f"| {variant} | {np.mean(pairs):.3f} ± {np.std(pairs):.3f} | "
              f"{np.mean(overall):.3f} ± {np.std(overall):.3f} |", flush=True)


def _real_range(values: pd.Series, is_datetime: bool) -> tuple[np.ndarray, float, float]:
    """Present values as numbers (seconds for dates) and the range a learned
    bound must keep inside: widened by 5% of its width, or to whole days."""
    if is_datetime:
        stamps = pd.to_datetime(values.dropna().astype(str), utc=True, format="ISO8601")
        seconds = ((stamps - pd.Timestamp(0, tz="UTC")).dt.total_seconds()).to_numpy()
        day = 86_400.0
        return seconds, seconds.min() // day * day, (seconds.max() // day + 1) * day
    numbers = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    margin = 0.05 * (numbers.max() - numbers.min())
    return numbers, numbers.min() - margin, numbers.max() + margin


def study_ends(csv: str, seeds: int, epsilon: float) -> None:
    """Learned bounds of a CSV's numeric and datetime columns against its real ranges."""
    from sklearn_dpsynth.cli import read_table
    from sklearn_dpsynth.marginal import IndependentSynthesizer

    frame, real = read_table(csv, as_text=True), pd.read_csv(csv, low_memory=False)
    near, inside, ends = (collections.defaultdict(list) for _ in range(3))
    for seed in range(seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = IndependentSynthesizer(random_state=seed).fit(frame, epsilon=epsilon)
        for spec in model.domain_:
            if spec.kind != "numeric":
                continue
            is_datetime = spec.value_type == "datetime"
            values, low, high = _real_range(real[spec.name], is_datetime)
            first, last = spec.edges[0], spec.edges[-1]
            if spec.integer:  # edges lie half a unit outside the first and last integers
                first, last = math.ceil(first), math.floor(last)
            near[spec.name].append(first >= low and last <= high)
            inside[spec.name].append(float(np.mean((values >= first) & (values <= last))))
            shown = [pd.Timestamp(v, unit="s").date() if is_datetime else f"{v:g}"
                     for v in (first, last)]
            ends[spec.name].append(f"[{shown[0]}, {shown[1]}]")
    print(f"{csv}, {seeds} draws, epsilon={epsilon:g}\n\n| column | bounds inside the real "
          "range +5% (days) | rows inside, mean (worst) | most frequent bounds |\n"
          "|---|---|---|---|")
    for name in near:
        common = ", ".join(f"{b} x{k}" for b, k in
                           collections.Counter(ends[name]).most_common(3))
        print(f"| {name} | {sum(near[name])}/{seeds} | {np.mean(inside[name]):.3f} "
              f"({np.min(inside[name]):.3f}) | {common} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("study", choices=["learned", "heavy-tails", "ends"])
    parser.add_argument("--csv", default="/tmp/newuser/weather10k.csv",
                        help="the table of the ends study (see benchmarks.new_user)")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help="subsample sizes (0 = the whole table); default 1000 5000 "
                             "10000 and the whole table")
    parser.add_argument("--details", action="store_true")
    parser.add_argument("--method", choices=sorted(METHODS), default="mst",
                        help="the synthesizer of the learned study")
    parser.add_argument("--tables", nargs="+", choices=["adult", "texas"],
                        default=["adult", "texas"], help="the tables of the learned study")
    parser.add_argument("--preprocessing-budget", type=float, default=None,
                        help="the synthesizer's preprocessing_budget (default: its own)")
    args = parser.parse_args(argv)
    sizes = SIZES if args.sizes is None else tuple(s or None for s in args.sizes)
    if args.study == "learned":
        study_learned(args.seeds, args.epsilon, sizes, args.details, args.method,
                      args.tables, args.preprocessing_budget)
    elif args.study == "ends":
        study_ends(args.csv, args.seeds, args.epsilon)
    else:
        study_heavy_tails(args.seeds, args.epsilon)


if __name__ == "__main__":
    main()
