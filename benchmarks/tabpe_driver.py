"""Run DPSDA's Tab-PE on a coded table (``python tabpe_driver.py --help``).

Runs in the separate benchmark environment where DPSDA (microsoft/DPSDA,
the ``pe`` package) is importable; it never imports ``sklearn_dpsynth``.
:mod:`benchmarks.tabpe` calls it as a subprocess.  It reads an integer-coded
table (CSV) and its public domain (JSON ``{column: size}``), configures
Tab-PE as DPSDA's own Adult example does (``example/tabular/adult.py``:
``TabularAPI`` with mutation rate 0.5 to 0.01, polynomial decay with
``gamma=0.2``; ``TabularEmbedding``; L2 nearest-neighbour votes; five
iterations that draw parents from the clipped noisy votes, then iterations
that keep the best-voted ``num_samples`` rows and add three variations of
each; Gaussian noise calibrated by DPSDA's own accountant), runs it at the
given epsilon and delta, and writes the final selected rows as CSV.

Fairness choices, all public: every column is categorical with the
categories ``0..size-1`` of the public domain (DPSDA's ``get_tab_info``
would read categories and bounds from the private rows); one label for the
whole table (DPSDA's per-label runs read the label shares from the private
rows without noise); nearest neighbours by scikit-learn (DPSDA's backend
``"sklearn"``; the example's ``"torch"`` finds the same neighbours).

Environment: DPSDA's ``pe`` package imports its image and text modules at
import time.  Their third-party packages that the tabular path never calls
(:data:`UNUSED_PACKAGES`) are registered with ``generalimport``, DPSDA's own
mechanism for optional dependencies: importing them yields a placeholder
that raises only if used.  The environment needs numpy, pandas, scipy,
scikit-learn, omegaconf, generalimport, pillow, requests, tqdm, openai and
tenacity (no torch, whose listed optional import DPSDA already defers).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

#: Packages that DPSDA's image and text modules import and its tabular path never uses.
UNUSED_PACKAGES = ("torchvision", "azure", "cleanfid", "faiss", "fld", "matplotlib", "ot")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dpsda-dir", required=True, help="checkout of microsoft/DPSDA")
    parser.add_argument("--data", required=True, help="coded table (CSV)")
    parser.add_argument("--domain", required=True, help="JSON {column: size}")
    parser.add_argument("--epsilon", type=float, required=True)
    parser.add_argument("--delta", type=float, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=30,
                        help="PE iterations (the example's 30; the first is the random rows)")
    parser.add_argument("--samples", type=int, default=1000,
                        help="synthetic rows kept per iteration (the example's 1000)")
    parser.add_argument("--out", required=True, help="synthetic codes (CSV)")
    parser.add_argument("--info", required=True, help="JSON with fit seconds")
    return parser.parse_args(argv)


def column_info(domain: dict, column_type) -> dict:
    """DPSDA's per-column info from the public domain: categories ``0..size-1``."""
    return {column: {"type": column_type.CATEGORICAL, "categories": list(range(size))}
            for column, size in domain.items()}


def build_runner(frame, domain: dict, iterations: int):
    """DPSDA's objects for the table, configured as its Adult example."""
    import pandas as pd
    from pe.api import TabularAPI
    from pe.constant.data import LABEL_ID_COLUMN_NAME, TABULAR_DATA_COLUMN_NAME
    from pe.data import Data, TabularColumnType
    from pe.embedding import TabularEmbedding
    from pe.histogram import NearestNeighbors
    from pe.population import CompositePopulation, PEPopulation
    from pe.runner import PE

    columns = list(domain)
    rows = frame[columns].to_numpy().tolist()
    metadata = {"label_columns": [], "label_info": [{"name": "all", "column_values": {}}],
                "cat_columns": columns, "int_columns": [], "float_columns": [],
                "feature_columns": columns}
    private = Data(data_frame=pd.DataFrame({TABULAR_DATA_COLUMN_NAME: rows,
                                            LABEL_ID_COLUMN_NAME: 0}), metadata=metadata)
    info = column_info(domain, TabularColumnType)
    api = TabularAPI(info=info, mutation_rate_init=0.5, mutation_rate_final=0.01,
                     decay_type="polynomial", gamma=0.2, num_iterations=iterations)
    histogram = NearestNeighbors(embedding=TabularEmbedding(info=info), mode="L2",
                                 lookahead_degree=0, backend="sklearn")
    explore = PEPopulation(api=api, initial_variation_api_fold=0, next_variation_api_fold=1,
                           keep_selected=False, selection_mode="sample", histogram_threshold=0)
    refine = PEPopulation(api=api, initial_variation_api_fold=3, next_variation_api_fold=3,
                          keep_selected=True, selection_mode="rank")
    population = CompositePopulation(populations=[explore] * 5 + [refine] * (iterations - 5))
    return PE(priv_data=private, population=population, histogram=histogram)


def main(argv=None) -> None:
    args = parse_args(argv)
    sys.path.insert(0, str(Path(args.dpsda_dir).resolve()))
    from generalimport import generalimport

    catcher = generalimport(*UNUSED_PACKAGES, message="not used by DPSDA's tabular path")
    # generalimport scopes a catcher to its caller's folder; these imports come from DPSDA's.
    catcher._scope = str(Path(args.dpsda_dir).resolve())
    import numpy as np
    import pandas as pd
    from pe.constant.data import TABULAR_DATA_COLUMN_NAME, VARIATION_API_FOLD_ID_COLUMN_NAME

    logging.disable(logging.INFO)
    domain = {c: int(k) for c, k in json.loads(Path(args.domain).read_text()).items()}
    frame = pd.read_csv(args.data)
    np.random.seed(args.seed)  # DPSDA draws from numpy's global generator
    runner = build_runner(frame, domain, args.iterations)
    start_cpu, start_wall = time.process_time(), time.perf_counter()
    final = runner.run(num_samples_schedule=[args.samples] * args.iterations,
                       delta=args.delta, epsilon=args.epsilon, checkpoint_path=None,
                       save_checkpoint=False, fraction_per_label_id=[1.0])
    cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start_wall
    selected = final.data_frame[final.data_frame[VARIATION_API_FOLD_ID_COLUMN_NAME] == -1]
    codes = pd.DataFrame(selected[TABULAR_DATA_COLUMN_NAME].tolist(), columns=list(domain))
    codes.astype(np.int64).to_csv(args.out, index=False)
    Path(args.info).write_text(json.dumps({"fit_cpu_seconds": cpu, "fit_seconds": wall,
                                           "n_synthetic": len(codes),
                                           "iterations": args.iterations,
                                           "samples": args.samples}))


if __name__ == "__main__":
    main()
