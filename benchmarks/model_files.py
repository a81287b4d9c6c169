"""Model files: zip of ``.npy`` (``sklearn_dpsynth.save``/``load``) against safetensors.

Fits (or reuses, from ``--cache``) a large AIM model and a DP-TBART model of
the bundled Adult table, then times, on disk and best of ``--repeat``:

* the container alone: writing and reading the same arrays and JSON
  structure as a zip of ``.npy`` entries (with the dtype, shape and CRC
  checks of :func:`sklearn_dpsynth.load`) and as a safetensors file (the
  structure in its metadata);
* :func:`sklearn_dpsynth.save` and :func:`sklearn_dpsynth.load` of the
  whole model.

safetensors is not a dependency of the library: install it in a separate
virtual environment and put that environment's ``site-packages`` on
``PYTHONPATH`` (the safetensors rows are skipped when it is missing).

Example
-------
::

    PYTHONPATH=.:/tmp/stvenv/lib/python3.11/site-packages \\
        python benchmarks/model_files.py --cache /tmp/model-files
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from sklearn_dpsynth import AIMSynthesizer, load, save
from sklearn_dpsynth.persistence._codec import Encoder
from sklearn_dpsynth.persistence._container import decode_array, read_file, write_file

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "adult"


def _best(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def _adult() -> tuple[pd.DataFrame, dict]:
    return (pd.read_csv(DATA / "adult.csv"),
            json.loads((DATA / "adult-domain.json").read_text()))


def _model(cache: Path, name: str, fit) -> object:
    path = cache / f"{name}.dpsynth"
    if path.exists():
        return load(path)
    model = fit()
    save(model, path)
    return model


def _measure(label: str, model, cache: Path, repeat: int) -> None:
    encoder = Encoder(keep_random_state=False)
    structure = encoder.encode(model)
    arrays = encoder.arrays
    ours, theirs = cache / "container.zip", cache / "container.safetensors"
    print(f"{label}: {len(arrays)} arrays, {sum(a.nbytes for a in arrays) / 1e6:.2f} MB")
    write = _best(lambda: write_file(ours, {"format_version": 2}, structure, arrays), repeat)
    read = _best(lambda: [decode_array(raw, "a") for raw in
                          read_file(ours, 2 ** 40, lambda header: None)[2]], repeat)
    print(f"  zip+npy     file {ours.stat().st_size / 1e6:.3f} MB, write {write * 1e3:.1f} ms, "
          f"read {read * 1e3:.1f} ms")
    try:
        import safetensors.numpy as st
    except ImportError:
        print("  safetensors not installed: skipped")
    else:
        tensors = {str(i): np.ascontiguousarray(a) for i, a in enumerate(arrays)}
        metadata = {"structure": json.dumps(structure, separators=(",", ":"))}
        write = _best(lambda: st.save_file(tensors, theirs, metadata=metadata), repeat)
        read = _best(lambda: (st.load_file(theirs), json.loads(metadata["structure"])), repeat)
        print(f"  safetensors file {theirs.stat().st_size / 1e6:.3f} MB, write {write * 1e3:.1f} "
              f"ms, read {read * 1e3:.1f} ms")
    path = cache / "model.dpsynth"
    print(f"  sklearn_dpsynth.save {_best(lambda: save(model, path), repeat) * 1e3:.1f} ms, "
          f"load {_best(lambda: load(path), repeat) * 1e3:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default="/tmp/model-files", help="fitted models kept here")
    parser.add_argument("--repeat", type=int, default=7, help="timings per figure (best kept)")
    args = parser.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    warnings.simplefilter("ignore")

    def fit_aim():
        frame, domain = _adult()
        return AIMSynthesizer(domain=domain, random_state=0, max_iter=50,
                              final_max_iter=100).fit(frame, epsilon=10.0)

    def fit_tbart():
        from sklearn_dpsynth.neural import DPTBARTSynthesizer

        frame, domain = _adult()
        return DPTBARTSynthesizer(domain=domain, random_state=0, epochs=1, d_model=256,
                                  n_layers=6, n_heads=8, batch_size=256).fit(
            frame.iloc[:500], epsilon=5.0)

    aim = _model(cache, "aim", fit_aim)
    _measure(f"AIM Adult (epsilon 10, {aim.n_rounds_} rounds, {len(aim.cliques_)} cliques)",
             aim, cache, args.repeat)
    _measure("DP-TBART Adult (d_model=256, 6 layers)", _model(cache, "tbart", fit_tbart),
             cache, args.repeat)


if __name__ == "__main__":
    main()
