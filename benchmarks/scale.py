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
prints the seconds; for numpy also the frame's size and the memory
breakdown (RSS after the imports, the peak while loading, the fit's own
peak, and their ratios to the frame; ``--loader columns``, the default,
reads the Parquet column by column, ``--loader pandas`` with
``pd.read_parquet``); for Spark also the passes over the data by phase and
the peak RSS and CPU seconds of the driver JVM (local mode: driver and
executors in one JVM) and of Python; ``--method aim`` fits AIM instead.
``sample`` fits MST on 10^5 rows and times ``sample(rows)`` (wall and CPU
seconds: on a shared machine the CPU time is the steadier).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
import tracemalloc
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
        aim_options: dict | None = None, batched: bool = True, loader: str = "columns",
        trace: bool = False) -> dict:
    """Fit MST (or AIM) on ``path`` through ``backend``; seconds and a model summary.

    ``batched=False`` turns off the batched counts (every table its own
    pass), for the before/after pass counts.  For ``numpy`` the table is
    read by ``loader`` (see :func:`read_frame`) and the memory is broken
    down (:func:`_fit_numpy`); ``trace`` adds tracemalloc's peak during the
    fit.
    """
    if not batched:
        from sklearn_dpsynth.backends import EncodedTable
        EncodedTable.with_counts = lambda self, column_sets: self
        EncodedTable._count_many = lambda self, sets: [self._count(c, None) for c in sets]
    if backend == "spark":
        return _fit_spark(path, method, aim_options)
    if backend == "numpy":
        return _fit_numpy(path, method, aim_options, loader, trace)
    passes = _count_duckdb_passes(memory_limit)
    start = time.perf_counter()
    model = _fit_quietly(path, method, aim_options)
    return {"backend": backend, "method": method,
            "fit_seconds": round(time.perf_counter() - start, 2),
            "n_records_estimate": round(float(model._estimated_n_records())),
            "total_passes": passes["queries"]}


def read_frame(path: str, loader: str = "columns"):
    """A Parquet file as a pandas DataFrame.

    ``"pandas"`` is ``pd.read_parquet`` (pyarrow reads the whole table,
    then converts it: both copies are alive at the peak, and pyarrow's
    mimalloc pool keeps what it freed).  ``"columns"`` reads one column at
    a time into pyarrow's system-allocator pool, converts it at once and
    trims the allocator (``release_unused``), so that at most one column's
    Arrow copy is alive besides the frame and its freed buffers go back to
    the system.
    Both give the same frame (``assert_frame_equal``).
    """
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    if loader == "pandas":
        return pd.read_parquet(path)
    pool = pa.system_memory_pool()
    pa.set_memory_pool(pool)
    parquet = pq.ParquetFile(path)
    columns = {}
    for name in parquet.schema_arrow.names:
        columns[name] = parquet.read(columns=[name]).column(0).to_pandas()
        pool.release_unused()  # glibc's malloc_trim: hand the read's buffers back
    return pd.DataFrame(columns, copy=False)


def _fit_numpy(path: str, method: str, aim_options: dict | None, loader: str,
               trace: bool) -> dict:
    """Fit in memory; seconds and peak RSS after the imports, the load and the fit.

    Peaks are the process's VmHWM; the high-water mark is reset after
    loading (``/proc/self/clear_refs``) so that ``peak_fit_mb`` is the
    fit's own.  Ratios are to the frame's ``memory_usage(deep=True)``.
    """
    rss_imports = _rss_mb("VmRSS")
    start = time.perf_counter()
    X = read_frame(path, loader)
    loaded = time.perf_counter()
    frame_mb = X.memory_usage(deep=True).sum() / 2**20
    peak_load, rss_loaded = _rss_mb("VmHWM"), _rss_mb("VmRSS")
    reset = _reset_peak_rss()
    if trace:
        tracemalloc.start()
    model = _fit_quietly(X, method, aim_options)
    done = time.perf_counter()
    peak_fit = _rss_mb("VmHWM") if reset else None
    peak = max(peak_load, _rss_mb("VmHWM"))
    out = {"backend": "numpy", "method": method, "loader": loader,
           "load_seconds": round(loaded - start, 2), "fit_seconds": round(done - loaded, 2),
           "n_records_estimate": round(float(model._estimated_n_records())),
           "frame_mb": round(frame_mb, 1),
           "parquet_mb": round(os.path.getsize(path) / 2**20, 1),
           "rss_after_imports_mb": rss_imports, "peak_rss_load_mb": peak_load,
           "rss_after_load_mb": rss_loaded, "peak_rss_fit_mb": peak_fit,
           "peak_rss_mb": peak, "peak_over_frame": round(peak / frame_mb, 2),
           "net_peak_mb": peak - rss_imports,
           "net_peak_over_frame": round((peak - rss_imports) / frame_mb, 2)}
    if trace:
        out["traced_peak_fit_mb"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
    return out


def _rss_mb(field: str) -> int:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process, in MB (0 when unreadable)."""
    return _peak_rss_mb(os.getpid(), field) or 0


def _reset_peak_rss() -> bool:
    """Reset this process's VmHWM to its current RSS; False where Linux refuses."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return False
    return True


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
    jvm_pid = spark.sparkContext._gateway.proc.pid
    jvm_peak, jvm_cpu = _peak_rss_mb(jvm_pid), _cpu_seconds(jvm_pid)
    spark.stop()
    return {"backend": "spark", "method": method, "fit_seconds": round(seconds, 2),
            "passes": passes, "total_passes": sum(passes.values()),
            "ledger_entries": len(model.privacy_ledger_.summary()),
            "driver_jvm_peak_rss_mb": jvm_peak, "driver_jvm_cpu_seconds": jvm_cpu,
            "python_cpu_seconds": round(time.process_time(), 1),
            "python_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                        / 1024),
            "n_records_estimate": round(float(model._estimated_n_records()))}


def _peak_rss_mb(pid: int, field: str = "VmHWM") -> int | None:
    """Peak resident memory (``VmHWM``; ``VmRSS``: current) of a process, in MB;
    None when unreadable."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(f"{field}:"):
                    return round(int(line.split()[1]) / 1024)
    except OSError:
        return None
    return None


def _cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds of a process so far; None when unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 1)


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
    parser.add_argument("--loader", choices=["columns", "pandas"], default="columns",
                        help="numpy backend: read the Parquet column by column, or pd.read_parquet")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="numpy backend: also report tracemalloc's peak during the fit")
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
                             aim_options, not args.unbatched, args.loader,
                             args.tracemalloc)))
    else:
        print(json.dumps(sample(args.rows)))


if __name__ == "__main__":
    main()
