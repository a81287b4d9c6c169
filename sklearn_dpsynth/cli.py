"""The ``dpsynth`` command line: describe, fit, sample, report, ledger, methods.

Built on argparse (the standard library: no extra dependency, plain-text
help, exit code 2 on usage errors).  Runtime errors print one line on stderr
and exit with code 1; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from . import _tableio as tableio
from ._column_kinds import read_kinds
from .exceptions import PrivacyWarning
from .persistence import ModelFileError, check_savable, load, save
from .public_domain import describe_domain
from .registry import available_methods, get_method, get_method_spec

__all__ = ["main", "build_parser", "parse_pairs", "CommandError"]

_DESCRIPTION = """\
Differentially private synthetic tables from the shell.

  dpsynth describe data.csv > domain.json       draft a domain declaration (reads the data)
  dpsynth fit data.csv --method aim --epsilon 1 --domain domain.json -o model.dpsynth
  dpsynth sample model.dpsynth -n 10000 -o synthetic.csv
  dpsynth report real.csv synthetic.csv --holdout test.csv --model model.dpsynth -o report.html
  dpsynth ledger model.dpsynth                  every access to the private data and its cost
  dpsynth methods                               the registered synthesizers

Only `fit` spends privacy budget.  `describe` and `report` read the real
table without any privacy protection: run them on public data, or keep
their output private.
"""


class CommandError(Exception):
    """A runtime error reported to the shell user as one line (exit code 1)."""


# ------------------------------------------------------------------ tables
def read_table(path: str, *, as_text: bool = False) -> pd.DataFrame:
    """Read a CSV or Parquet file (by extension) into a DataFrame.

    A CSV file is read as text (see ``sklearn_dpsynth._tableio.read_table``):
    its separator (comma, semicolon or tab) and encoding (UTF-8, a
    byte-order mark dropped) come from the header line alone, and no
    column's type is guessed from its rows.  With ``as_text=True`` (what
    ``dpsynth fit`` reads) every CSV column is left as text (object dtype)
    for the estimator to read by its declared or privately chosen kind (see
    ``sklearn_dpsynth._column_kinds``); otherwise (``describe`` and
    ``report``, which read their tables without privacy protection anyway)
    the text is cast by the same public rule on the exact counts (dates
    written with a UTC offset come back tz-aware, in UTC, when half of a
    column's dates carry one).  A Parquet file keeps its schema.

    Parameters
    ----------
    path : str
        ``*.parquet`` / ``*.pq`` (needs pyarrow) or anything else as CSV.
    as_text : bool, default=False
        Leave CSV columns as text.

    Returns
    -------
    DataFrame

    Raises
    ------
    CommandError
        For a missing or unreadable file, or a header with empty or
        repeated column names (naming their positions).
    """
    try:
        frame = tableio.read_table(path)
    except tableio.TableReadError as exc:
        raise CommandError(str(exc)) from None
    if as_text or tableio.format_from_suffix(path) == "parquet":
        return frame
    return _exact_kinds(frame)


def _exact_kinds(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns cast by the public kind rule on their exact counts (no privacy:
    for the commands that read a table without protection)."""
    with warnings.catch_warnings():  # exact counts: a single fraction makes a column
        # numeric, so that a declaration drafted reads every value; the columns whose
        # text some values do not read as their kind are still named (a warning)
        warnings.simplefilter("ignore", PrivacyWarning)
        typed, _ = read_kinds(frame, {}, budget=None, rng=None, preprocessing="non-private")
    return typed


def write_table(frame: pd.DataFrame, path: str) -> None:
    """Write a DataFrame as Parquet for ``*.parquet`` / ``*.pq``, TSV for
    ``*.tsv`` / ``*.tsv.gz``, else CSV (see ``sklearn_dpsynth._tableio.write_table``)."""
    try:
        tableio.write_table(frame, path)
    except ImportError as exc:
        raise CommandError(str(exc)) from None


def _parse_value(text: str) -> Any:
    """A ``key=value`` value: JSON when it parses (numbers, lists, true/null), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_pairs(items: Sequence[str], option: str) -> dict:
    """``["a=1", "b=x", "c=null"]`` as ``{"a": 1, "b": "x", "c": None}``.

    The values of ``dpsynth fit --param`` (and of the benchmarks' parameter
    options): JSON when they parse as JSON, else the text.  A
    :class:`CommandError` naming ``option`` is raised for an item without
    ``=`` or without a key.
    """
    pairs = {}
    for item in items:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise CommandError(f"{option} expects key=value, got {item!r}")
        pairs[key] = _parse_value(value)
    return pairs


def _conditions(items: Sequence[str], model: Any) -> dict:
    """``--condition col=value`` as a dict, values cast like the column (text kept as text)."""
    conditions = {}
    dtypes = getattr(model, "feature_dtypes_in_", {})
    for item in items:
        column, equals, text = item.partition("=")
        if not equals or not column:
            raise CommandError(f"--condition expects column=value, got {item!r}")
        dtype = dtypes.get(column)
        if isinstance(dtype, str):  # extension dtypes are kept by name
            dtype = pd.api.types.pandas_dtype(dtype)
        kind = getattr(dtype, "kind", "O")
        conditions[column] = _parse_value(text) if kind in "iufb" else text
    return conditions


# ---------------------------------------------------------------- commands
def _cmd_describe(args: argparse.Namespace) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        frame = read_table(args.data)
        declaration = describe_domain(frame)
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    unlisted = [str(name) for name, entry in declaration.items()
                if entry.get("kind") == "category" and entry.get("categories") == []]
    if unlisted:
        print("note: values not listed (identifiers, free text, long tails): "
              f"{', '.join(unlisted)}; drafted as '<other>' only: drop these columns or "
              "declare their public categories", file=sys.stderr)
    text = json.dumps(declaration, indent=2, default=str)
    if args.output:
        Path(args.output).write_text(text + "\n")
    else:
        print(text)
    return 0


def _read_domain(path: str | None) -> dict | None:
    if path is None:
        return None
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise CommandError(f"no such file: {path}") from None
    except ValueError as exc:
        raise CommandError(f"{path} is not valid JSON: {exc}") from None


#: Widest line of the printed ledger (a 100-column terminal).
_LEDGER_WIDTH = 100

#: Printed ledger columns: (summary column, header, width); ``order`` and
#: ``delta`` are shown only when some entry has one.
_LEDGER_NUMBERS = [("noise_scale", "noise", 9), ("sensitivity", "sens", 7),
                   ("rho", "rho", 9), ("epsilon", "epsilon", 9), ("order", "order", 6),
                   ("delta", "delta", 9), ("cumulative_epsilon", "cum eps", 9)]


def _ledger_number(value: float, width: int) -> str:
    text = "-" if pd.isna(value) else f"{value:.3g}"
    return text.rjust(width)


def _ledger_rows(summary: pd.DataFrame, width: int) -> list[str]:
    """The ledger as lines of at most ``width`` characters (long targets wrapped)."""
    numbers = [(column, header, size) for column, header, size in _LEDGER_NUMBERS
               if not (column == "order" and summary[column].isna().all())
               and not (column == "delta" and (summary[column] == 0).all())]
    mechanism = 11
    target = max(width - mechanism - sum(size + 1 for _, _, size in numbers) - 1, 20)
    lines = [" ".join(["target".ljust(target), "mechanism".ljust(mechanism)]
                      + [header.rjust(size) for _, header, size in numbers]).rstrip()]
    share = ""
    for _, row in summary.iterrows():
        if row["share"] != share:
            share = row["share"]
            lines.append(f"[{share or 'fit'}]")
        wrapped = textwrap.wrap(str(row["target"]), target) or [""]
        cells = [wrapped[0].ljust(target), str(row["mechanism"])[:mechanism].ljust(mechanism)]
        cells += [_ledger_number(row[column], size) for column, _, size in numbers]
        lines.append(" ".join(cells).rstrip())
        lines.extend(f"  {rest}" for rest in textwrap.wrap(" ".join(wrapped[1:]), target - 2))
    return lines


def _print_ledger(model: Any, stream: Any) -> None:
    """Print the ledger in lines of at most 100 characters, then the total."""
    ledger = model.privacy_ledger_
    for line in _ledger_rows(ledger.summary(), _LEDGER_WIDTH):
        print(line, file=stream)
    eps, delta = ledger.spent()
    print("noise: the noise's scale (standard deviation, or the exponential mechanism's "
          "scale);\nsens: sensitivity; rho: zCDP cost; cum eps: epsilon of the entries so far "
          "(at the ledger's delta)", file=stream)
    print(f"total: epsilon={eps:.6g}, delta={delta:.3g}", file=stream)


def _cmd_fit(args: argparse.Namespace) -> int:
    spec = get_method_spec(args.method)
    cls = get_method(spec.name)
    params = parse_pairs(args.param, "--param")
    params["domain"] = _read_domain(args.domain)
    if args.random_state is not None:
        if params.get("random_state", args.random_state) != args.random_state:
            raise CommandError("--random-state and --param random_state= disagree; give one")
        params["random_state"] = args.random_state
    accepted = cls().get_params(deep=False)
    if "verbose" in accepted and "verbose" not in params:
        params["verbose"] = not args.quiet  # progress on stderr where the method has it
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise CommandError(f"method {args.method!r} has no parameter {', '.join(unknown)}")
    model = cls(**params)
    try:  # before any budget is spent: a model that cannot be saved is never fitted
        check_savable(model)
    except ValueError as exc:
        raise CommandError(f"a {args.method} model with these parameters cannot be saved: "
                           f"{exc}") from None
    frame = read_table(args.data, as_text=True)  # read by declared or private kinds in fit
    public = read_table(args.public, as_text=True) if args.public else None
    print(f"fitting {args.method} on {args.data} at epsilon={args.epsilon:g}, "
          f"delta={args.delta:g} ...", file=sys.stderr)
    model.fit(frame, epsilon=args.epsilon, delta=args.delta,
              **({} if public is None else {"public_data": public}))
    save(model, args.output, keep_random_state=args.keep_random_state)
    _print_ledger(model, sys.stdout)
    print(f"wrote the fitted model to {args.output}", file=sys.stderr)
    return 0


def _load_model(path: str) -> Any:
    if not Path(path).is_file():
        raise CommandError(f"no such file: {path}")
    try:
        return load(path)
    except ModelFileError as exc:
        raise CommandError(f"{path}: {exc}") from None


#: Above this many rows, ``sample -o FILE`` writes in chunks of this size.
_CHUNK_ROWS = 1_000_000


def _cmd_sample(args: argparse.Namespace) -> int:
    model = _load_model(args.model)
    conditions = _conditions(args.condition, model) or None
    if args.output and (args.n_samples or 0) > _CHUNK_ROWS:  # bounded memory
        is_parquet = tableio.format_from_suffix(args.output) == "parquet"
        model.sample_to(args.output, args.n_samples, chunk_size=_CHUNK_ROWS,
                        format="parquet" if is_parquet else "csv", conditions=conditions,
                        random_state=args.random_state)
        print(f"wrote {args.n_samples} synthetic rows to {args.output}", file=sys.stderr)
        return 0
    rows = model.sample(args.n_samples, conditions=conditions, random_state=args.random_state)
    if args.output:
        write_table(rows, args.output)
        print(f"wrote {len(rows)} synthetic rows to {args.output}", file=sys.stderr)
    else:
        rows.to_csv(sys.stdout, index=False)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report  # matplotlib is imported only for reports
    real = read_table(args.real)
    synth = read_table(args.synthetic)
    holdout = read_table(args.holdout) if args.holdout else None
    model = _load_model(args.model) if args.model else None
    domain = _read_domain(args.domain)
    write_report(args.output, real, synth, holdout=holdout, model=model, target=args.target,
                 domain=domain, random_state=args.random_state, n_jobs=args.n_jobs)
    print(f"wrote the report to {args.output}", file=sys.stderr)
    return 0


def _cmd_ledger(args: argparse.Namespace) -> int:
    _print_ledger(_load_model(args.model), sys.stdout)
    return 0


def _cmd_methods(args: argparse.Namespace) -> int:
    for name in available_methods():
        spec = get_method_spec(name)
        status = "" if spec.installed else f"  (needs the [{spec.extra}] extra)"
        print(f"{name:<12} {spec.family:<9} {spec.description}{status}")
    return 0


# ------------------------------------------------------------------ parser
def _add_fit(commands: Any) -> None:
    fit = commands.add_parser("fit", help="fit a synthesizer on a private table (spends the budget)",
                              description="Fit a synthesizer on a private CSV or Parquet table, "
                              "save the model and print the privacy ledger.")
    fit.add_argument("data", help="private table (.csv, or .parquet with pyarrow)")
    fit.add_argument("--method", default="mst", help="registered method (see `dpsynth methods`)")
    fit.add_argument("--epsilon", type=float, required=True, help="privacy budget epsilon")
    fit.add_argument("--delta", type=float, default=1e-9, help="privacy budget delta (1e-9)")
    fit.add_argument("--domain", help="JSON domain declaration (from `dpsynth describe` on "
                     "public data, edited); undeclared columns are learned privately")
    fit.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                     help="estimator parameter, value as JSON or text (repeatable)")
    fit.add_argument("--public", help="public table for methods that accept public_data")
    fit.add_argument("--random-state", type=int, default=None,
                     help="seed, for research only: it is the noise and must stay secret")
    fit.add_argument("--keep-random-state", action="store_true",
                     help="keep the seed in the saved model (never publish such a file)")
    fit.add_argument("--quiet", action="store_true",
                     help="no progress output (methods with a verbose parameter show it)")
    fit.add_argument("-o", "--output", required=True, help="model file to write (.dpsynth)")
    fit.set_defaults(run=_cmd_fit)


def _add_report(commands: Any) -> None:
    report = commands.add_parser("report", help="write a self-contained HTML quality report",
                                 description="Compare a real and a synthetic table in one HTML "
                                 "file. It reads the real table without privacy protection: "
                                 "keep the report private.")
    report.add_argument("real", help="real (training) table")
    report.add_argument("synthetic", help="synthetic table")
    report.add_argument("--holdout", help="real rows not used in fit (ML efficacy, DCR)")
    report.add_argument("--model", help="fitted model file, for the privacy ledger")
    report.add_argument("--target", help="target column for ML efficacy (needs --holdout)")
    report.add_argument("--domain", help="JSON domain declaration of the columns")
    report.add_argument("--random-state", type=int, default=0, help="seed of the metrics (0)")
    report.add_argument("--n-jobs", type=int, default=1, help="threads of the metric models (1)")
    report.add_argument("-o", "--output", required=True, help="HTML file to write")
    report.set_defaults(run=_cmd_report)


def build_parser() -> argparse.ArgumentParser:
    """The ``dpsynth`` argument parser.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(prog="dpsynth", description=_DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    describe = commands.add_parser("describe", help="draft a JSON domain declaration of a table",
                                   description="Print an editable JSON domain declaration. It "
                                   "reads the data without privacy protection: use it on public "
                                   "data, or edit it down to what is publicly documented.")
    describe.add_argument("data", help="table (.csv, or .parquet with pyarrow)")
    describe.add_argument("-o", "--output", help="write the JSON here instead of stdout")
    describe.set_defaults(run=_cmd_describe)
    _add_fit(commands)
    sample = commands.add_parser("sample", help="draw synthetic rows from a saved model",
                                 description="Draw synthetic rows (no budget spent).")
    sample.add_argument("model", help="model file written by `dpsynth fit`")
    sample.add_argument("-n", "--n-samples", type=int, default=None,
                        help="synthetic rows to draw (default: the model's differentially "
                        "private estimate of the number of training rows)")
    sample.add_argument("--condition", action="append", default=[], metavar="COLUMN=VALUE",
                        help="fix a column's value (methods that support conditions; repeatable)")
    sample.add_argument("-o", "--output", help="CSV or Parquet file (default: CSV on stdout)")
    sample.add_argument("--random-state", type=int, default=None,
                        help="seed of the sampling (default: fresh entropy; a saved model "
                             "keeps no seed)")
    sample.set_defaults(run=_cmd_sample)
    _add_report(commands)
    ledger = commands.add_parser("ledger", help="print a saved model's privacy ledger",
                                 description="Print every access to the private data and the "
                                 "total (epsilon, delta).")
    ledger.add_argument("model", help="model file written by `dpsynth fit`")
    ledger.set_defaults(run=_cmd_ledger)
    methods = commands.add_parser("methods", help="list the registered methods",
                                  description="List the registered synthesizers.")
    methods.set_defaults(run=_cmd_methods)
    return parser


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"dpsynth: error: {text}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dpsynth``; returns the exit code (0 ok, 1 runtime error, 2 usage error).

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("dpsynth: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # every runtime error: one line, or the traceback with --debug
        if args.debug:
            raise
        print(_one_line(exc), file=sys.stderr)
        return 1


def console_main() -> None:
    """Entry point of the ``dpsynth`` console script."""
    sys.exit(main())


if __name__ == "__main__":
    console_main()
