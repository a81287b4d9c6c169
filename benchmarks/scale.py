"""Fitting and sampling at scale: make_bayesnet tables in Parquet, numpy vs DuckDB.

Three sub-commands (run each under ``/usr/bin/time -v`` for the peak RSS)::

    python -m benchmarks.scale write --rows 1000000 --out /tmp/scale/t1m.parquet
    python -m benchmarks.scale write --rows 10000000 --from /tmp/scale/t1m.parquet \\
        --out /tmp/scale/t10m.parquet
    python -m benchmarks.scale fit --input /tmp/scale/t1m.parquet --backend numpy
    python -m benchmarks.scale fit --input /tmp/scale/t10m.parquet --backend duckdb
    python -m benchmarks.scale sample --rows 1000000

``write`` draws a 15-column :func:`~sklearn_dpsynth.datasets.make_bayesnet`
table (seed 0) and writes it with DuckDB; with ``--from`` it repeats an
existing file's rows instead (SQL, out of core), so that a 10^7-row file
never lives in Python.  ``fit`` fits MST (epsilon 1, seed 0) on the file
read into pandas (``numpy``) or counted by DuckDB (``duckdb``) and prints
the seconds; ``sample`` fits MST on 10^5 rows and times ``sample(rows)``
(wall and CPU seconds: on a shared machine the CPU time is the steadier).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.marginal import MSTSynthesizer

N_FEATURES = 15


def write(rows: int, out: str, source: str | None) -> None:
    """Write a make_bayesnet Parquet table (or ``source`` repeated) to ``out``."""
    import duckdb

    con = duckdb.connect()
    if source is not None:
        (n_source,), = con.execute(f"SELECT count(*) FROM read_parquet('{source}')").fetchall()
        repeats = -(-rows // n_source)
        con.execute(f"COPY (SELECT s.* FROM read_parquet('{source}') s, range({repeats}) r "
                    f"LIMIT {rows}) TO '{out}' (FORMAT parquet)")
        return
    frame = make_bayesnet(rows, N_FEATURES, random_state=0).frame
    frame = frame.astype({c: object for c in frame.columns if frame[c].dtype == "str"})
    con.register("frame_view", frame)
    con.execute(f"COPY (SELECT * FROM frame_view) TO '{out}' (FORMAT parquet)")


def fit(path: str, backend: str) -> dict:
    """Fit MST on ``path`` through ``backend``; seconds and a model summary."""
    start = time.perf_counter()
    if backend == "numpy":
        import duckdb

        X = duckdb.connect().execute(f"SELECT * FROM read_parquet('{path}')").df()
    else:
        X = path
    loaded = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MSTSynthesizer(random_state=0).fit(X, epsilon=1.0)
    done = time.perf_counter()
    return {"backend": backend, "load_seconds": round(loaded - start, 2),
            "fit_seconds": round(done - loaded, 2),
            "n_records_estimate": round(float(model._estimated_n_records()))}


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
    parser.add_argument("--input")
    parser.add_argument("--backend", choices=["numpy", "duckdb"], default="duckdb")
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.rows, args.out, args.source)
    elif args.command == "fit":
        print(json.dumps(fit(args.input, args.backend)))
    else:
        print(json.dumps(sample(args.rows)))


if __name__ == "__main__":
    main()
