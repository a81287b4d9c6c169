"""Side by side with private-pgm's reference MST and AIM (issue 15, item 1).

Our MST/AIM and the reference's (``mbi`` 1.0 with the ``mechanisms/`` scripts
of the private-pgm repository) are fitted on the same integer-coded table,
with the same public domain, budgets and seeds; both synthetic tables are
scored by the same code (:func:`sklearn_dpsynth.metrics.workload_error`).
The reference never runs in this process: it lives in its own virtual
environment and is driven by ``benchmarks/reference_driver.py`` as a
subprocess (``--ref-python``), reading the table as CSV plus a domain JSON.

From the repository root::

    nice -n 10 python -m benchmarks.reference --tables adult,ordered --methods mst \
        --epsilons 1 --seeds 0 --reference-dir /work/refcode --out ref-results
    python -m benchmarks.reference --summarise ref-results

Figures per run: ``fit_seconds`` (the fit call only; for the reference, the
mechanism call inside the driver, jax compilation included, imports and
CSV I/O excluded), ``tvd2`` (mean TVD over every 2-way marginal), ``tvd3``
(mean TVD over every 3-way marginal, or over ``--n-3way`` of them drawn with
the public seed 0), ``nll`` (held-out negative log-likelihood in nats per row
from ``score``: ours only, the reference's scripts return rows, not a
model's density, so "n/a") and ``highorder`` (the table's own high-order
check, see :data:`TABLES`).  TVDs are against the training table; the NLL
is on the held-out 20% (public permutation seed 0).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from benchmarks.datasets import standard_split
from sklearn_dpsynth.cli import CommandError, parse_pairs

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "reference_driver.py"
TEST_FRACTION = 0.2
N_TEXAS_BINS = 32


@dataclass
class CodedTable:
    """An integer-coded benchmark table with its public domain and high-order check.

    Attributes
    ----------
    name : str
    train, test : DataFrame
        Codes ``0..size-1`` per column; ``test`` is the held-out part.
    domain : dict
        ``{column: size}``, public.
    highorder : callable
        ``highorder(synthetic, train) -> float``, the table's high-order check.
    highorder_name : str
        What ``highorder`` measures (and which direction is better).
    """

    name: str
    train: pd.DataFrame
    test: pd.DataFrame
    domain: dict
    highorder: Callable[[pd.DataFrame, pd.DataFrame], float]
    highorder_name: str


# ------------------------------------------------------------------ tables
def data_folder(data_dir: str | Path | None) -> Path:
    """The shared data folder: ``data_dir``, ``$DPSYNTH_DATA`` or ``<repo>/../shared/data``."""
    if data_dir is not None:
        return Path(data_dir)
    from benchmarks.datasets import data_dir as default_dir
    return default_dir()


def _split(name, frame, domain, highorder, highorder_name) -> CodedTable:
    train, test = standard_split(frame[list(domain)], seed=0, test_fraction=TEST_FRACTION)
    return CodedTable(name, train, test, dict(domain), highorder, highorder_name)


def joint_tvd(synthetic: pd.DataFrame, train: pd.DataFrame) -> float:
    """TVD between the full joint distributions (all columns at once) of two code tables."""
    columns = list(train.columns)
    p = train.value_counts(subset=columns, normalize=True)
    q = synthetic[columns].value_counts(subset=columns, normalize=True)
    p, q = p.align(q, fill_value=0.0)
    return 0.5 * float(np.abs(p.to_numpy() - q.to_numpy()).sum())


def kway_tvd(k: int, domain: dict, n_marginals: int = 100) -> Callable:
    """A high-order check: mean TVD of ``n_marginals`` random ``k``-way marginals (public seed 0)."""
    def check(synthetic: pd.DataFrame, train: pd.DataFrame) -> float:
        from sklearn_dpsynth.metrics import workload_error

        return float(workload_error(train, synthetic[list(train.columns)], k=k, domain=domain,
                                    n_marginals=n_marginals, random_state=0))
    return check


def load_adult_coded(data_dir: Path) -> CodedTable:
    """Adult as coded by the MST/AIM papers (finest public resolution of the coded file)."""
    frame = pd.read_csv(data_dir / "adult" / "adult.csv")
    with open(data_dir / "adult" / "adult-domain.json") as handle:
        domain = {column: int(size) for column, size in json.load(handle).items()}
    return _split("adult", frame, domain, kway_tvd(4, domain),
                  "mean TVD of 100 random 4-way marginals (seed 0; lower is better)")


def texas_edges(low: float, high: float, n_bins: int = N_TEXAS_BINS) -> np.ndarray:
    """Public bin edges for a heavy-tailed column: log-spaced over the schema's bounds.

    Edges are ``sign(t) * expm1(|t|)`` for ``t`` evenly spaced over
    ``[sign(low) log1p|low|, log1p(high)]``: fine near zero, coarse in the
    tail.  Built from the published bounds only, never from the rows.
    """
    def forward(v: float) -> float:
        return float(np.sign(v) * np.log1p(abs(v)))

    grid = np.linspace(forward(low), forward(high), n_bins + 1)
    return np.sign(grid) * np.expm1(np.abs(grid))


def encode_texas(frame: pd.DataFrame, schema: list[dict]) -> tuple[pd.DataFrame, dict]:
    """Codes of the Texas table from its published schema (category lists, bounds)."""
    codes, domain = {}, {}
    for column in schema:
        name = column["name"]
        if column["type"] == "categorical":
            labels = list(column["i2s"])
            code = frame[name].map({label: i for i, label in enumerate(labels)})
            if code.isna().any():
                raise ValueError(f"column {name!r} holds a value outside the published schema.")
            codes[name], domain[name] = code.to_numpy(dtype=np.int64), len(labels)
        else:
            edges = texas_edges(column["min"], column["max"])
            values = frame[name].to_numpy(dtype=float)
            if np.isnan(values).any():
                raise ValueError(f"column {name!r} has missing values.")
            code = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
            codes[name], domain[name] = code.astype(np.int64), len(edges) - 1
    return pd.DataFrame(codes), domain


def load_texas(data_dir: Path) -> CodedTable:
    """Texas hospital discharges, coded with the published schema (``texas.json``)."""
    schema = json.loads((data_dir / "texas" / "texas.json").read_text())["columns"]
    categorical = [c["name"] for c in schema if c["type"] == "categorical"]
    frame = pd.read_csv(data_dir / "texas" / "texas.csv", dtype={c: str for c in categorical})
    coded, domain = encode_texas(frame, schema)
    return _split("texas", coded, domain, kway_tvd(4, domain),
                  "mean TVD of 100 random 4-way marginals (seed 0; lower is better)")


def load_bayesnet_coded(data_dir: Path | None = None) -> CodedTable:
    """``make_bayesnet`` codes: 10 variables, up to 3 parents, so up to 4-way structure."""
    from sklearn_dpsynth.datasets import make_bayesnet

    bunch = make_bayesnet(n_samples=30_000, n_features=10, max_parents=3, random_state=0)
    columns = [f"v{i}" for i in range(len(bunch.network.cardinalities))]
    frame = pd.DataFrame(np.asarray(bunch.codes, dtype=np.int64), columns=columns)
    domain = {c: int(k) for c, k in zip(columns, bunch.network.cardinalities)}
    return _split("bayesnet", frame, domain, joint_tvd,
                  "joint TVD (all 10 variables; lower is better)")


#: Columns of the ``census`` table (ages kept at one-year resolution).
CENSUS_COLUMNS = ["age", "type_employer", "education", "marital", "occupation",
                  "relationship", "race", "sex", "country", "income"]
#: Public bounds of the ``census`` ages (those of the UCI Adult documentation).
CENSUS_AGES = (17, 90)
#: Percentile bins of age in the ``census`` score.
CENSUS_AGE_BINS = 20


def load_census(data_dir: Path) -> CodedTable:
    """A census excerpt with one-year ages: 10 columns of ``adult_raw``, about 27k rows.

    ``adult_raw/adult.data`` (30,162 rows) reduced to :data:`CENSUS_COLUMNS`;
    age is coded ``age - 17`` over the public range 17-90 (74 codes), every
    other column by the sorted list of its values (the published UCI
    categories).  The held-out part is 10% (``standard_split``, seed 0), so
    the private table has 27,146 rows.  High-order check: the census score
    :func:`census_score`.
    """
    frame = pd.read_csv(data_dir / "adult_raw" / "adult.data", skipinitialspace=True)
    frame = frame[CENSUS_COLUMNS]
    low, high = CENSUS_AGES
    coded = pd.DataFrame({"age": frame["age"].to_numpy(dtype=np.int64) - low})
    domain = {"age": high - low + 1}
    for column in CENSUS_COLUMNS[1:]:
        categories = sorted(frame[column].astype(str).unique())
        coded[column] = pd.Categorical(frame[column].astype(str),
                                       categories=categories).codes.astype(np.int64)
        domain[column] = len(categories)
    train, test = standard_split(coded, seed=0, test_fraction=0.1)
    return CodedTable("census", train, test, domain, census_score,
                      "2-way score out of 1000, ages in 20 percentile bins (higher is better)")


def census_score(synthetic: pd.DataFrame, train: pd.DataFrame) -> float:
    """``1000 * (1 - mean TVD over all column pairs)``, age in 20 percentile bins of ``train``.

    The bins' edges are the 5%, 10%, ..., 95% quantiles of the training
    ages (a benchmark's score, computed outside any fit); both tables'
    ages are cut at the same edges.
    """
    edges = np.unique(np.quantile(train["age"], np.linspace(0, 1, CENSUS_AGE_BINS + 1)[1:-1]))

    def binned(frame: pd.DataFrame) -> pd.DataFrame:
        out = frame[list(train.columns)].copy()
        out["age"] = np.searchsorted(edges, out["age"].to_numpy(), side="right")
        return out

    real, fake = binned(train), binned(synthetic)
    tvds = []
    for a, b in itertools.combinations(train.columns, 2):
        p = real.value_counts(subset=[a, b], normalize=True)
        q = fake.value_counts(subset=[a, b], normalize=True)
        p, q = p.align(q, fill_value=0.0)
        tvds.append(0.5 * float(np.abs(p.to_numpy() - q.to_numpy()).sum()))
    return 1000.0 * (1.0 - float(np.mean(tvds)))


def load_bayesnet100(data_dir: Path | None = None) -> CodedTable:
    """``make_bayesnet`` codes with 100 variables (up to 3 parents), 30,000 rows."""
    from sklearn_dpsynth.datasets import make_bayesnet

    bunch = make_bayesnet(n_samples=30_000, n_features=100, max_parents=3, random_state=0)
    columns = [f"v{i:02d}" for i in range(len(bunch.network.cardinalities))]
    frame = pd.DataFrame(np.asarray(bunch.codes, dtype=np.int64), columns=columns)
    domain = {c: int(k) for c, k in zip(columns, bunch.network.cardinalities)}
    return _split("bayesnet100", frame, domain, kway_tvd(4, domain),
                  "mean TVD of 100 random 4-way marginals (seed 0; lower is better)")


def make_ordered(n_samples: int = 20_000, n_columns: int = 20, seed: int = 0) -> pd.DataFrame:
    """Binary columns under a deterministic constraint that ties all of them.

    Every row is non-increasing, ``b0 >= b1 >= ... >= b19``: a run of ones
    then zeros, the run's length drawn from a fixed skewed law over ``0..20``.
    Of the ``2**20`` possible rows only 21 satisfy the constraint.
    """
    rng = np.random.default_rng(seed)
    weights = np.exp(-0.5 * ((np.arange(n_columns + 1) - 0.35 * n_columns) / 4.0) ** 2)
    lengths = rng.choice(n_columns + 1, size=n_samples, p=weights / weights.sum())
    bits = (np.arange(n_columns)[None, :] < lengths[:, None]).astype(np.int64)
    return pd.DataFrame(bits, columns=[f"b{i:02d}" for i in range(n_columns)])


def ordered_share(synthetic: pd.DataFrame, train: pd.DataFrame | None = None) -> float:
    """Share of rows that are non-increasing across their columns (the ``ordered`` constraint)."""
    bits = synthetic.to_numpy()
    return float((np.diff(bits, axis=1) <= 0).all(axis=1).mean())


def load_ordered(data_dir: Path | None = None) -> CodedTable:
    """The ``ordered`` table of :func:`make_ordered`, 20 binary columns."""
    frame = make_ordered()
    domain = {c: 2 for c in frame.columns}
    return _split("ordered", frame, domain, ordered_share,
                  "share of rows satisfying b0 >= b1 >= ... >= b19 (higher is better; real: 1)")


#: Table loaders by name; each takes the data folder.
TABLES: dict[str, Callable[[Path], CodedTable]] = {
    "adult": load_adult_coded,
    "texas": load_texas,
    "bayesnet": load_bayesnet_coded,
    "ordered": load_ordered,
    "census": load_census,
    "bayesnet100": load_bayesnet100,
}


# ------------------------------------------------------------------ metrics
def marginal_scores(train: pd.DataFrame, synthetic: pd.DataFrame, domain: dict,
                    n_3way: int = 200) -> dict:
    """Mean 2-way and 3-way TVD of ``synthetic`` against ``train`` (shared metric code).

    Every 2-way marginal; every 3-way marginal when there are at most
    ``n_3way`` of them, else ``n_3way`` drawn with the public seed 0.
    """
    from sklearn_dpsynth.metrics import workload_error

    synthetic = synthetic[list(train.columns)]
    n_triples = len(list(itertools.combinations(train.columns, 3)))
    sample = None if n_triples <= n_3way else n_3way
    return {"tvd2": float(workload_error(train, synthetic, k=2, domain=domain)),
            "tvd3": float(workload_error(train, synthetic, k=3, domain=domain,
                                         n_marginals=sample, random_state=0))}


def check_codes(synthetic: pd.DataFrame, domain: dict, side: str) -> pd.DataFrame:
    """Validate a synthetic code table: the domain's columns, codes in ``0..size-1``."""
    missing = [c for c in domain if c not in synthetic.columns]
    if missing:
        raise ValueError(f"{side} synthetic table lacks columns {missing}.")
    for column, size in domain.items():
        values = synthetic[column].to_numpy()
        if values.min() < 0 or values.max() >= size:
            raise ValueError(f"{side} synthetic column {column!r} has codes outside 0..{size - 1}.")
    return synthetic[list(domain)].astype(np.int64)


# ------------------------------------------------------------------ I/O for the reference
def write_coded_table(frame: pd.DataFrame, domain: dict, folder: Path) -> tuple[Path, Path]:
    """Write ``frame`` as CSV and ``domain`` as JSON, the format ``mbi.Dataset.load`` reads."""
    folder.mkdir(parents=True, exist_ok=True)
    csv_path, domain_path = folder / "data.csv", folder / "domain.json"
    frame[list(domain)].to_csv(csv_path, index=False)
    domain_path.write_text(json.dumps({c: int(k) for c, k in domain.items()}))
    return csv_path, domain_path


def read_coded_table(csv_path: Path, domain_path: Path) -> tuple[pd.DataFrame, dict]:
    """Read back what :func:`write_coded_table` wrote (columns in the domain's order)."""
    domain = {c: int(k) for c, k in json.loads(Path(domain_path).read_text()).items()}
    frame = pd.read_csv(csv_path)
    return check_codes(frame, domain, "stored"), domain


# ------------------------------------------------------------------ one run
@dataclass(frozen=True)
class Task:
    """One fit: a table, a method (AIM with its workload), a budget, a seed and a side."""

    table: str
    method: str
    epsilon: float
    seed: int
    side: str  # "ours" or "reference"
    workload: str = "2way"

    @property
    def label(self) -> str:
        method = self.method if self.method == "mst" else f"aim-{self.workload}"
        return f"{self.table}-{method}-eps{self.epsilon:g}-seed{self.seed}-{self.side}"


def aim_workload(domain: dict, degree: int, max_cells: int = 10000) -> list:
    """Every ``degree``-way marginal of at most ``max_cells`` cells, weight 1 (as the reference)."""
    return [(clique, 1.0) for clique in itertools.combinations(domain, degree)
            if int(np.prod([domain[c] for c in clique])) <= max_cells]


def fit_ours(task: Task, table: CodedTable, delta: float,
             params: dict | None = None) -> tuple[pd.DataFrame, dict]:
    """Fit our synthesizer (with ``params`` set); return its synthetic codes, fit time and NLL."""
    from sklearn_dpsynth import AIMSynthesizer, MSTSynthesizer

    if task.method == "mst":
        synth = MSTSynthesizer(domain=table.domain, random_state=task.seed)
    else:
        workload = aim_workload(table.domain, int(task.workload[0]))
        synth = AIMSynthesizer(domain=table.domain, workload=workload, random_state=task.seed)
    synth.set_params(**(params or {}))
    start, cpu_start = time.perf_counter(), time.process_time()
    synth.fit(table.train, epsilon=task.epsilon, delta=delta)
    fit_seconds = time.perf_counter() - start
    fit_cpu_seconds = time.process_time() - cpu_start
    synthetic = synth.sample(len(table.train))
    spent = synth.privacy_ledger_.spent()
    info = {"fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu_seconds, "nll": -float(synth.score(table.test)),
            "spent_epsilon": float(spent[0]), "spent_delta": float(spent[1])}
    return synthetic, info


def fit_reference(task: Task, table: CodedTable, delta: float, options: argparse.Namespace,
                  workdir: Path) -> tuple[pd.DataFrame | None, dict]:
    """Fit the reference in its own interpreter; ``None`` rows on timeout or failure."""
    csv_path, domain_path = write_coded_table(table.train, table.domain, workdir)
    out, info_path = workdir / "synthetic.csv", workdir / "info.json"
    command = [options.ref_python, str(DRIVER), "--reference-dir", str(options.reference_dir),
               "--data", str(csv_path), "--domain", str(domain_path), "--method", task.method,
               "--epsilon", repr(task.epsilon), "--delta", repr(delta), "--seed", str(task.seed),
               "--workload", task.workload, "--rows", str(len(table.train)),
               "--out", str(out), "--info", str(info_path)]
    env = dict(os.environ)
    if options.jax_cpu:
        env["JAX_PLATFORMS"] = "cpu"
    start = time.perf_counter()
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=options.timeout)
    except subprocess.TimeoutExpired:
        return None, {"status": "timeout", "wall_seconds": time.perf_counter() - start}
    if done.returncode != 0:
        return None, {"status": "error", "stderr_tail": done.stderr[-2000:]}
    info = json.loads(info_path.read_text())
    info["wall_seconds"] = time.perf_counter() - start
    return pd.read_csv(out), info


def run_task(task: Task, options: argparse.Namespace) -> dict:
    """Fit one side, score it, write its JSON record into ``--out``; return the record."""
    table = TABLES[task.table](data_folder(options.data_dir))
    record = {"table": task.table, "method": task.method, "workload": task.workload,
              "epsilon": task.epsilon, "delta": options.delta, "seed": task.seed,
              "side": task.side, "n_train": len(table.train), "n_test": len(table.test),
              "highorder_name": table.highorder_name}
    if task.side == "ours":
        synthetic, info = fit_ours(task, table, options.delta, _params(options.ours_param))
        info["status"] = "ok"
    else:
        with tempfile.TemporaryDirectory(prefix="dpsynth-ref-") as tmp:
            synthetic, info = fit_reference(task, table, options.delta, options, Path(tmp))
        if synthetic is not None:
            info["status"], info["nll"] = "ok", None
    record.update(info)
    if synthetic is not None:
        synthetic = check_codes(synthetic, table.domain, task.side)
        record.update(marginal_scores(table.train, synthetic, table.domain, options.n_3way))
        record["highorder"] = float(table.highorder(synthetic, table.train))
    if synthetic is not None and options.keep_synthetic:
        synthetic.to_csv(Path(options.out) / f"{task.label}.csv.gz", index=False)
    path = Path(options.out) / f"{task.label}.json"
    path.write_text(json.dumps(record, indent=1))
    return record


# ------------------------------------------------------------------ summary
FIGURES = ["fit_seconds", "fit_cpu_seconds", "tvd2", "tvd3", "nll", "highorder"]


def load_records(folder: str | Path) -> pd.DataFrame:
    """Every run record (one JSON per run) in ``folder`` as one frame."""
    records = [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]
    if not records:
        raise ValueError(f"no run records (*.json) in {folder}.")
    frame = pd.DataFrame(records)
    for figure in FIGURES:
        if figure not in frame:
            frame[figure] = np.nan
        frame[figure] = pd.to_numeric(frame[figure], errors="coerce")
    frame["method"] = np.where(frame["method"] == "mst", "mst", "aim-" + frame["workload"])
    return frame


def _cell(values: pd.Series, statuses: pd.Series, digits: int, spread: bool = False) -> str:
    """Mean over seeds of one figure (with ``spread``, and its standard error
    where two or more seeds finished), or why there is none."""
    ok = values.dropna()
    if ok.empty:
        failed = sorted(set(statuses) - {"ok"})
        return "/".join(failed) if failed else "n/a"
    text = f"{ok.mean():.{digits}f}"
    if spread and len(ok) > 1:
        text += f" ± {ok.std(ddof=1) / np.sqrt(len(ok)):.{digits + 1}f}"
    return text if len(ok) == len(values) else f"{text} ({len(ok)}/{len(values)})"


def summarise(folder: str | Path, spread: bool = False) -> str:
    """Markdown table: table x method x epsilon rows, ours vs reference per figure.

    Every cell is the mean over the seeds that finished (``(k/n)`` when only
    ``k`` of ``n`` did; ``timeout``/``error`` when none did), followed with
    ``spread`` by ``± `` its standard error over the seeds (one more digit);
    ``seeds`` reads ``ours / reference`` where the two sides ran different
    numbers of seeds; the last column is the reference's mean fit time over
    ours.
    """
    frame = load_records(folder)
    digits = {"fit_seconds": 2, "fit_cpu_seconds": 2, "tvd2": 4, "tvd3": 4, "nll": 3, "highorder": 4}
    header = ["table", "method", "eps", "seeds"]
    for figure in FIGURES:
        header += [f"{figure} ours", f"{figure} ref"]
    header.append("speed-up")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for (table, method, eps), group in frame.groupby(["table", "method", "epsilon"], sort=True):
        ours, ref = group[group.side == "ours"], group[group.side == "reference"]
        counts = [str(side["seed"].nunique()) for side in (ours, ref)]
        seeds = counts[0] if counts[0] == counts[1] else " / ".join(counts)
        row = [table, method, f"{eps:g}", seeds]
        for figure in FIGURES:
            row += [_cell(side[figure], side["status"], digits[figure], spread)
                    for side in (ours, ref)]
        speed = ref["fit_seconds"].mean() / ours["fit_seconds"].mean()
        row.append(f"{speed:.0f}x" if np.isfinite(speed) else "n/a")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


# ------------------------------------------------------------------ CLI
def _csv_list(kind: Callable) -> Callable[[str], list]:
    return lambda text: [kind(part) for part in text.split(",") if part.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=_csv_list(str), default=["adult"],
                        help=f"comma-separated, from {sorted(TABLES)}")
    parser.add_argument("--methods", type=_csv_list(str), default=["mst"], help="mst,aim")
    parser.add_argument("--epsilons", type=_csv_list(float), default=[1.0])
    parser.add_argument("--seeds", type=_csv_list(int), default=[0])
    parser.add_argument("--workload", type=_csv_list(str), default=["2way"],
                        help="AIM's workload(s): 2way, 3way or 2way,3way")
    parser.add_argument("--sides", type=_csv_list(str), default=["ours", "reference"])
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--ours-param", action="append", default=[], metavar="NAME=VALUE",
                        help="a parameter of our synthesizer (repeatable), e.g. "
                             "early_stopping=0.6; use a separate --out")
    parser.add_argument("--n-3way", type=int, default=200,
                        help="3-way marginals scored (all when there are fewer)")
    parser.add_argument("--jobs", type=int, default=1, help="parallel processes")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per reference fit (recorded as 'timeout')")
    parser.add_argument("--reference-dir", default="/work/refcode",
                        help="folder with private-pgm's mechanisms/ scripts")
    parser.add_argument("--ref-python", default="/work/refenv/bin/python",
                        help="interpreter of the environment with mbi and jax")
    parser.add_argument("--jax-cpu", action="store_true",
                        help="run the reference with JAX_PLATFORMS=cpu")
    parser.add_argument("--data-dir", default=None,
                        help="folder holding adult/ and texas/ (default: ../shared/data)")
    parser.add_argument("--out", default="benchmarks/results/reference")
    parser.add_argument("--force", action="store_true", help="rerun runs already recorded")
    parser.add_argument("--keep-synthetic", action="store_true",
                        help="also store each run's synthetic codes (<run>.csv.gz) to rescore later")
    parser.add_argument("--summarise", metavar="DIR", default=None,
                        help="print the Markdown summary of DIR's records and exit")
    parser.add_argument("--spread", action="store_true",
                        help="each mean of the summary followed by its standard error "
                             "over the seeds")
    args = parser.parse_args(argv)
    _check_args(parser, args)
    return args


def _params(pairs: list[str]) -> dict:
    """``--ours-param`` pairs as a dict (``early_stopping=null`` gives None)."""
    return parse_pairs(pairs, "--ours-param")


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    for name, values, allowed in [("--tables", args.tables, TABLES),
                                  ("--methods", args.methods, {"mst", "aim"}),
                                  ("--workload", args.workload, {"2way", "3way"}),
                                  ("--sides", args.sides, {"ours", "reference"})]:
        unknown = [v for v in values if v not in allowed]
        if unknown:
            parser.error(f"{name}: unknown {unknown}; choose from {sorted(allowed)}")
    if any(e <= 0 for e in args.epsilons):
        parser.error("--epsilons must all be > 0")
    if args.jobs < 1:
        parser.error("--jobs must be >= 1")
    try:
        _params(args.ours_param)
    except CommandError as error:
        parser.error(f"{error}; e.g. early_stopping=0.6")


def plan(args: argparse.Namespace) -> list[Task]:
    """Every task of the grid not yet recorded in ``--out`` (all with ``--force``)."""
    tasks = []
    for table, method, eps, seed, side in itertools.product(
            args.tables, args.methods, args.epsilons, args.seeds, args.sides):
        for workload in (args.workload if method == "aim" else ["2way"]):
            task = Task(table, method, eps, seed, side, workload)
            if args.force or not (Path(args.out) / f"{task.label}.json").exists():
                tasks.append(task)
    # slow reference fits first, so that parallel workers finish together
    return sorted(tasks, key=lambda t: (t.side != "reference", t.method != "aim"))


def _report(record: dict) -> str:
    figures = " ".join(f"{k}={record[k]:.4g}" for k in FIGURES
                       if isinstance(record.get(k), (int, float)))
    return f"{record['table']} {record['method']} eps={record['epsilon']:g} " \
           f"seed={record['seed']} {record['side']}: {record.get('status')} {figures}"


def main(argv: list[str] | None = None) -> None:
    """Run the grid (or summarise a results folder)."""
    args = parse_args(argv)
    if args.summarise:
        print(summarise(args.summarise, spread=args.spread))
        return
    Path(args.out).mkdir(parents=True, exist_ok=True)
    tasks = plan(args)
    print(f"{len(tasks)} runs to do; records go to {args.out}", flush=True)
    if args.jobs == 1:
        for task in tasks:
            print(_report(run_task(task, args)), flush=True)
    else:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for record in pool.map(run_task, tasks, [args] * len(tasks)):
                print(_report(record), flush=True)
    print(summarise(args.out, spread=args.spread))


if __name__ == "__main__":
    sys.exit(main())
