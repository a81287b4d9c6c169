"""Fitting and sampling at scale: make_bayesnet tables in Parquet, numpy vs DuckDB vs Spark.

Three sub-commands (run each under ``/usr/bin/time -v`` for the peak RSS)::

    python -m benchmarks.scale write --rows 1000000 --out /tmp/scale/t1m.parquet
    python -m benchmarks.scale write --rows 10000000 --from /tmp/scale/t1m.parquet \\
        --out /tmp/scale/t10m.parquet
    python -m benchmarks.scale fit --input /tmp/scale/t1m.parquet --backend numpy
    python -m benchmarks.scale fit --input /tmp/scale/t10m.parquet --backend duckdb
    python -m benchmarks.scale fit --input /tmp/scale/t1m.parquet --backend spark
    python -m benchmarks.scale fit --input /tmp/scale/t1m.parquet --backend spark --method aim
    python -m benchmarks.scale sample --rows 1000000

``write`` draws a 15-column :func:`~sklearn_dpsynth.datasets.make_bayesnet`
table (seed 0) and writes it with DuckDB; with ``--from`` it repeats an
existing file's rows instead (SQL, out of core), so that a 10^7-row file
never lives in Python.  ``fit`` fits MST (epsilon 1, seed 0) on the file
read into pandas (``numpy``), counted by DuckDB (``duckdb``) or by Spark in
local mode (``spark``: ``local[2]``, read with ``spark.read.parquet``) and
prints the seconds; for Spark also the passes over the data by phase and
the peak RSS of the driver JVM (local mode: driver and executors in one
JVM); ``--method aim`` fits AIM instead; ``sample`` fits MST on 10^5 rows and times ``sample(rows)``
(wall and CPU seconds: on a shared machine the CPU time is the steadier).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
import warnings

from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.marginal import AIMSynthesizer, MSTSynthesizer

N_FEATURES = 15


def write(rows: int, out: str, source: str | None, features: int = N_FEATURES) -> None:
    """Write a make_bayesnet Parquet table (or ``source`` repeated) to ``out``.

    Repeating ``source`` runs in DuckDB with a 1 GB memory limit (spilling
    to disk), so a 5x10^7-row file never lives in Python.
    """
    import duckdb

    con = duckdb.connect()
    con.execute("SET memory_limit = '1GB'")
    con.execute("SET preserve_insertion_order = false")
    if source is not None:
        (n_source,), = con.execute(f"SELECT count(*) FROM read_parquet('{source}')").fetchall()
        repeats = -(-rows // n_source)
        con.execute(f"COPY (SELECT s.* FROM read_parquet('{source}') s, range({repeats}) r "
                    f"LIMIT {rows}) TO '{out}' (FORMAT parquet)")
        return
    frame = make_bayesnet(rows, features, random_state=0).frame
    frame = frame.astype({c: object for c in frame.columns if frame[c].dtype == "str"})
    con.register("frame_view", frame)
    con.execute(f"COPY (SELECT * FROM frame_view) TO '{out}' (FORMAT parquet)")


def fit(path: str, backend: str, method: str = "mst", memory_limit: str | None = None,
        aim_options: dict | None = None, batched: bool = True) -> dict:
    """Fit MST (or AIM) on ``path`` through ``backend``; seconds and a model summary.

    ``batched=False`` turns off the batched counts (every table its own
    pass), for the before/after pass counts.
    """
    if not batched:
        from sklearn_dpsynth.backends import EncodedTable
        EncodedTable.with_counts = lambda self, column_sets: self
        EncodedTable._count_many = lambda self, sets: [self._count(c, None) for c in sets]
    if backend == "spark":
        return _fit_spark(path, method, aim_options)
    start = time.perf_counter()
    if backend == "numpy":
        import pandas as pd

        X = pd.read_parquet(path)  # pyarrow; DuckDB's .df() peaks at 7x the frame's size
        table_sizes = {"frame_mb": round(X.memory_usage(deep=True).sum() / 2**20, 1),
                       "parquet_mb": round(os.path.getsize(path) / 2**20, 1),
                       "rss_after_read_mb": _peak_rss_mb(os.getpid())}
    else:
        X = path
        passes = _count_duckdb_passes(memory_limit)
    loaded = time.perf_counter()
    model = _fit_quietly(X, method, aim_options)
    done = time.perf_counter()
    out = {"backend": backend, "method": method, "load_seconds": round(loaded - start, 2),
           "fit_seconds": round(done - loaded, 2),
           "n_records_estimate": round(float(model._estimated_n_records()))}
    if backend == "duckdb":
        out["total_passes"] = passes["queries"]
    else:
        out.update(table_sizes)
    return out


def _count_duckdb_passes(memory_limit: str | None) -> dict:
    """Count the DuckDB queries (each one scan of the table or its codes); set the
    memory limit and threads of the connection that ``fit`` opens."""
    from sklearn_dpsynth.backends import _duckdb

    passes = {"queries": 0}
    original_query, original_open = _duckdb.DuckDBSource.query, _duckdb.open_duckdb

    def query(self, sql, fetch="fetchall"):
        passes["queries"] += 1
        return original_query(self, sql, fetch)

    def open_limited(X, memory_limit_=None):
        source = original_open(X, memory_limit_ or memory_limit)
        source.connection.execute("SET preserve_insertion_order = false")
        return source
    _duckdb.DuckDBSource.query = query
    for module in _modules_importing(original_open):
        module.open_duckdb = open_limited
    return passes


def _modules_importing(function) -> list:
    """Loaded modules holding ``function`` under its name (to patch every alias)."""
    import sys
    return [m for m in list(sys.modules.values())
            if getattr(m, function.__name__, None) is function]


def _fit_quietly(X, method: str, aim_options: dict | None = None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "aim":
            return AIMSynthesizer(random_state=0, **(aim_options or {})).fit(X, epsilon=1.0)
        return MSTSynthesizer(random_state=0).fit(X, epsilon=1.0)


def _count_spark_passes() -> dict:
    """Wrap the Spark backend's jobs so that each pass is counted by phase."""
    from sklearn_dpsynth.backends import _spark

    passes = {"domain_learning": 0, "encodability_check": 0, "persist_codes": 0,
              "contingency_tables": 0}

    def counted(owner, name, phase, method=False):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            passes[phase] += 1
            return original(*args, **kwargs)
        setattr(owner, name, classmethod(lambda cls, *a, **k: wrapper(*a, **k))
                if method else wrapper)

    counted(_spark.SparkSource, "_grouped", "domain_learning")  # one job per batch of columns
    counted(_spark.SparkSource, "_check", "encodability_check")
    counted(_spark.SparkTable, "_count", "contingency_tables")
    counted(_spark.SparkTable, "_count_batch", "contingency_tables")  # one job per batch
    counted(_spark.SparkTable, "persisted", "persist_codes", method=True)
    return passes


def _fit_spark(path: str, method: str, aim_options: dict | None = None) -> dict:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("dpsynth-scale")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.memory", "2g").config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    passes = _count_spark_passes()
    start = time.perf_counter()
    model = _fit_quietly(spark.read.parquet(path), method, aim_options)
    seconds = time.perf_counter() - start
    jvm_peak = _peak_rss_mb(spark.sparkContext._gateway.proc.pid)
    spark.stop()
    return {"backend": "spark", "method": method, "fit_seconds": round(seconds, 2),
            "passes": passes, "total_passes": sum(passes.values()),
            "ledger_entries": len(model.privacy_ledger_.summary()),
            "driver_jvm_peak_rss_mb": jvm_peak,
            "python_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                        / 1024),
            "n_records_estimate": round(float(model._estimated_n_records()))}


def _peak_rss_mb(pid: int) -> int | None:
    """Peak resident memory (VmHWM) of a process, in MB; None when unreadable."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024)
    except OSError:
        return None
    return None


def sample(rows: int) -> dict:
    """Seconds of ``sample(rows)`` for MST fitted on 10^5 make_bayesnet rows."""
    frame = make_bayesnet(100_000, N_FEATURES, random_state=0).frame
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MSTSynthesizer(random_state=0).fit(frame, epsilon=1.0)
    start, cpu = time.perf_counter(), time.process_time()
    out = model.sample(rows)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    return {"sample_rows": rows, "sample_seconds": round(seconds, 2),
            "sample_cpu_seconds": round(cpu_seconds, 2), "shape": list(out.shape)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["write", "fit", "sample"])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--out")
    parser.add_argument("--from", dest="source")
    parser.add_argument("--features", type=int, default=N_FEATURES)
    parser.add_argument("--input")
    parser.add_argument("--backend", choices=["numpy", "duckdb", "spark"], default="duckdb")
    parser.add_argument("--method", choices=["mst", "aim"], default="mst")
    parser.add_argument("--memory-limit", help="DuckDB memory_limit, e.g. 1GB")
    parser.add_argument("--rounds", type=int, help="AIM's rounds")
    parser.add_argument("--max-model-size", type=float, help="AIM's max_model_size (MB)")
    parser.add_argument("--unbatched", action="store_true",
                        help="count every table in its own pass (the pass counts before batching)")
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.rows, args.out, args.source, args.features)
    elif args.command == "fit":
        aim_options = {k: v for k, v in (("rounds", args.rounds),
                                           ("max_model_size", args.max_model_size))
                       if v is not None}
        print(json.dumps(fit(args.input, args.backend, args.method, args.memory_limit,
                             aim_options, not args.unbatched)))
    else:
        print(json.dumps(sample(args.rows)))


if __name__ == "__main__":
    main()
