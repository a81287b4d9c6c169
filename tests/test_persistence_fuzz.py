"""Fuzzing load: mutated and crafted model files end in ModelFileError, never in harm.

Thousands of mutated valid files (byte flips, truncations, JSON value
mutations, crafted ``.npy`` headers) plus the audit's cases (an overlapping
dtype, ``os.system``, a ``dateutil/`` time-zone path, a huge header, deep
nesting).  Every load either returns a model or raises
:class:`~sklearn_dpsynth.persistence.ModelFileError`; an audit hook checks
that no file is opened and no process or code is started while loading.

The suite runs a small number of cases; ``DPSYNTH_FUZZ_CASES=5000`` runs the
big version (cases per mutation kind).
"""

from __future__ import annotations

import copy
import io
import json
import os
import site
import sys
import time
import zipfile
import zoneinfo
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth import IndependentSynthesizer, MSTSynthesizer, load, save
from sklearn_dpsynth.persistence import ModelFileError, UnsafeModelFileError

CASES = int(os.environ.get("DPSYNTH_FUZZ_CASES", "120"))
DOMAIN = {"a": ["x", "y", "z"], "b": (0, 10), "c": ["u", "v"], "t": {
    "bounds": ("2021-01-01T00:00:00+01:00", "2021-02-01T00:00:00+01:00")}}

#: Where loading may open files: the Python installation and its packages (lazy imports)
#: and the system's time-zone database (IANA names, validated before use).
_ALLOWED_PREFIXES = tuple(str(Path(p).resolve()) + os.sep for p in {
    sys.prefix, sys.base_prefix, *site.getsitepackages(), *zoneinfo.TZPATH})
_FORBIDDEN_EVENTS = ("os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn",
                     "os.fork", "exec", "ctypes.dlopen", "os.remove", "os.mkdir", "shutil.rmtree")
_WATCH = {"on": False, "events": []}


def _audit(event: str, args: tuple) -> None:
    if not _WATCH["on"]:
        return
    if event == "open":
        path = args[0]
        if isinstance(path, (str, bytes, os.PathLike)):
            path = os.fsdecode(path)
            resolved = str(Path(path).resolve())
            if not resolved.startswith(_ALLOWED_PREFIXES):
                _WATCH["events"].append(f"open {path}")
    elif event in _FORBIDDEN_EVENTS:
        _WATCH["events"].append(event)


sys.addaudithook(_audit)  # audit hooks cannot be removed: it only acts while watching


def _outcome(blob: bytes | io.IOBase) -> str:
    """``"ok"`` or the ModelFileError's class name; fails on anything else or any side effect."""
    stream = blob if hasattr(blob, "read") else io.BytesIO(blob)
    _WATCH.update(on=True, events=[])
    try:
        load(stream)
        result = "ok"
    except ModelFileError as exc:
        result = type(exc).__name__
    except BaseException as exc:  # noqa: BLE001 -- anything else is the bug we look for
        _WATCH["on"] = False
        raise AssertionError(f"load raised {type(exc).__name__}: {exc}") from exc
    finally:
        _WATCH["on"] = False
    assert _WATCH["events"] == [], _WATCH["events"]
    return result


def test_the_watch_sees_file_reads_and_processes(tmp_path):
    (tmp_path / "secret").write_text("x")
    _WATCH.update(on=True, events=[])
    try:
        (tmp_path / "secret").read_text()
        os.system("true")
    finally:
        _WATCH["on"] = False
    assert _WATCH["events"] == [f"open {tmp_path / 'secret'}", "os.system"]


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], size=n)
    return pd.DataFrame({"a": a, "b": rng.integers(0, 11, size=n),
                         "c": np.where(a == "x", "u", rng.choice(["u", "v"], size=n)),
                         "t": pd.date_range("2021-01-01", periods=n, freq="h",
                                            tz="Europe/Paris")})


@pytest.fixture(scope="module", params=["mst", "independent"])
def valid(request) -> bytes:
    cls = MSTSynthesizer if request.param == "mst" else IndependentSynthesizer
    params = {"max_iter": 30} if request.param == "mst" else {}
    model = cls(domain=DOMAIN, random_state=0, **params).fit(_table(), epsilon=1.0)
    buffer = io.BytesIO()
    save(model, buffer)
    blob = buffer.getvalue()
    load(io.BytesIO(blob)).sample(5)  # lazy imports (module code runs) before watching
    assert _outcome(blob) == "ok"
    return blob


def _parts(blob: bytes) -> tuple[bytes, dict, dict]:
    head, _, body = blob[len(b"DPSYNTH-MODEL\n"):].partition(b"\n")
    archive = zipfile.ZipFile(io.BytesIO(body))
    entries = {name: archive.read(name) for name in archive.namelist()}
    return head, json.loads(entries.pop("model.json")), entries


def _assemble(head: bytes, structure, entries: dict, *, text: str | None = None,
              compression=zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        archive.writestr("model.json", text if text is not None else json.dumps(structure))
        for name, data in entries.items():
            archive.writestr(name, data)
    return b"DPSYNTH-MODEL\n" + head + b"\n" + buffer.getvalue()


def _nodes(node, path=()):
    """Every (path, node) of a JSON structure."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _nodes(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _nodes(value, path + (i,))


def _replace(structure, path, value):
    if not path:
        return value
    parent = structure
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return structure


_POISON = [
    None, True, False, -1, 0, 1, 2**63, -(2**70), 10**300, 1e308, -0.0, "", "x", "os.system",
    "$array", "datetime64[ns, dateutil//etc/passwd]", "datetime64[ns, /etc/passwd]", [], {},
    [[]] * 3, {"$array": 10**9}, {"$array": -1}, {"$array": "0"},
    {"$object": ["system", {}]}, {"$object": ["Domain", {"specs": 5, "evil": 1}]},
    {"$estimator": {"class": "os.system", "params": {}}},
    {"$estimator": {"class": "MSTSynthesizer", "params": {"domain": 1}}},
    {"$pdtype": "datetime64[ns, dateutil//etc/passwd]"}, {"$pdtype": "period[D]"},
    {"$dtype": "V16"}, {"$dtype": "|O"}, {"$dtype": [["a", "|O"], ["b", "<i8"]]},
    {"$scalar": ["|O", 1]}, {"$scalar": ["<f8", "nan"]}, {"$scalar": ["<M8[ns]", 2**70]},
    {"$generator": {"state": -1, "inc": 0, "has_uint32": 0, "uinteger": 0}},
    {"$generator": 5}, {"$tuple": 5}, {"$dict": [[1]]}, {"$float": "1e999"},
    {"$set": [[1]]}, {"$strarray": {"shape": [10**9], "values": []}},
    {"$objarray": {"shape": [2, -1], "values": [1, 2]}},
    {"$module": {"seq_len": 3, "tensors": {}}}, {"$unknown": 1}, {"$tuple": [], "x": 1},
]


def _json_mutant(rng, head, structure, entries) -> bytes:
    mutant = copy.deepcopy(structure)
    for _ in range(int(rng.integers(1, 4))):
        nodes = list(_nodes(mutant))
        path, node = nodes[int(rng.integers(len(nodes)))]
        choice = rng.random()
        if choice < 0.6:
            value = copy.deepcopy(_POISON[int(rng.integers(len(_POISON)))])
        elif choice < 0.8:  # another node of the same file, out of place
            value = copy.deepcopy(nodes[int(rng.integers(len(nodes)))][1])
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            value = node * float(rng.choice([-1, 0, 1e6, 1e300])) if isinstance(node, float) \
                else int(node * int(rng.choice([-1, 0, 10**6, 2**40])))
        elif isinstance(node, (list, dict)) and node:  # drop an element
            value = copy.deepcopy(node)
            key = list(value)[int(rng.integers(len(value)))] if isinstance(value, dict) \
                else int(rng.integers(len(value)))
            del value[key]
        else:
            value = None
        mutant = _replace(mutant, path, value)
    return _assemble(head, mutant, entries)


def _npy(header: str, data: bytes = b"") -> bytes:
    text = header.encode("latin1")
    padded = text + b" " * ((64 - (10 + len(text) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(padded).to_bytes(2, "little") + padded + data


_BAD_NPY = [
    # the audit's overlapping fields: an object and an int64 at one offset
    _npy("{'descr': {'names': ['a', 'b'], 'formats': ['|O', '<i8'], 'offsets': [0, 0]}, "
         "'fortran_order': False, 'shape': (2,), }", b"\x00" * 16),
    _npy("{'descr': [('a', '|O'), ('b', '<i8')], 'fortran_order': False, 'shape': (1,), }",
         b"\x00" * 16),
    _npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", b"\x00" * 8),
    _npy("{'descr': '<f8', 'fortran_order': False, 'shape': (10**12,), }", b"\x00" * 8),
    _npy("{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }", b"\x00" * 8),
    _npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", b"\x00" * 8),
    _npy("__import__('os').system('true')"),
    _npy("{'descr': '<V8', 'fortran_order': False, 'shape': (1,), }", b"\x00" * 8),
    _npy("{'descr': '<f8', 'fortran_order': False, 'shape': " + "(" * 5000 + ")" * 5000 + "}"),
]


def test_byte_flips(valid):
    rng = np.random.default_rng(1)
    outcomes = Counter()
    for _ in range(CASES):
        blob = bytearray(valid)
        for position in rng.integers(0, len(blob), size=int(rng.integers(1, 5))):
            blob[position] ^= int(rng.integers(1, 256))
        outcomes[_outcome(bytes(blob))] += 1
    assert sum(outcomes.values()) == CASES
    _report("byte flips", outcomes)


def test_byte_flips_inside_entries(valid):
    # flips behind a valid CRC: they reach the JSON and .npy parsers
    rng = np.random.default_rng(5)
    head, structure, entries = _parts(valid)
    entries = {"model.json": json.dumps(structure).encode(), **entries}
    names = list(entries)
    outcomes = Counter()
    for _ in range(CASES):
        name = names[int(rng.integers(len(names)))]
        data = bytearray(entries[name])
        header_end = data.find(b"\n") + 1 if name.endswith(".npy") else len(data)
        for position in rng.integers(0, max(header_end, 1), size=int(rng.integers(1, 4))):
            data[position] ^= int(rng.integers(1, 256))
        mutated = {**entries, name: bytes(data)}
        text = mutated.pop("model.json").decode("utf-8", "replace")
        outcomes[_outcome(_assemble(head, None, mutated, text=text))] += 1
    assert outcomes["ModelFileError"] + outcomes["UnsafeModelFileError"] > 0
    _report("byte flips inside entries", outcomes)


def test_truncations(valid):
    rng = np.random.default_rng(2)
    lengths = set(rng.integers(0, len(valid), size=CASES).tolist()) | {0, 1, 13, 14, 15}
    outcomes = Counter(_outcome(valid[:n]) for n in sorted(lengths))
    assert outcomes["ok"] == 0  # every truncated file is refused
    _report("truncations", outcomes)


def test_json_value_mutations(valid):
    rng = np.random.default_rng(3)
    head, structure, entries = _parts(valid)
    outcomes = Counter(_outcome(_json_mutant(rng, head, structure, entries))
                       for _ in range(CASES))
    assert outcomes["UnsafeModelFileError"] > 0 and outcomes["ModelFileError"] > 0
    _report("JSON mutations", outcomes)


def test_crafted_arrays_are_refused_before_allocation(valid):
    head, structure, entries = _parts(valid)
    for bad in _BAD_NPY:
        for name in entries:
            outcome = _outcome(_assemble(head, structure, {**entries, name: bad}))
            assert outcome in ("ModelFileError", "UnsafeModelFileError"), bad[:80]


def test_the_audit_cases(valid):
    head, structure, entries = _parts(valid)
    # a time-zone path (reads and parses any file with pandas' dateutil zones)
    for dtype in ("datetime64[ns, dateutil//etc/passwd]", "datetime64[ns, ../../etc/passwd]",
                  "datetime64[ns, dateutil/Europe/Paris]"):
        mutant = copy.deepcopy(structure)
        form = mutant["$estimator"]["fitted"]["_form"]["$object"][1]
        form["dtypes"][-1] = dtype
        with pytest.raises(UnsafeModelFileError, match="time zone|dtype"):
            load(io.BytesIO(_assemble(head, mutant, entries)))
        assert _outcome(_assemble(head, mutant, entries)) == "UnsafeModelFileError"
    # os.system named as a class
    mutant = copy.deepcopy(structure)
    mutant["$estimator"]["class"] = "system"
    assert _outcome(_assemble(head, mutant, entries)) == "UnsafeModelFileError"
    # deep nesting, in the structure and in the header
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(ModelFileError, match="nested deeper"):
        load(io.BytesIO(_assemble(head, None, entries, text=deep)))
    assert _outcome(b"DPSYNTH-MODEL\n" + b"[" * 60_000 + b"\n") == "ModelFileError"
    # compressed entries (zip bombs) and unexpected entries
    assert _outcome(_assemble(head, structure, entries,
                              compression=zipfile.ZIP_DEFLATED)) == "ModelFileError"
    assert _outcome(_assemble(head, structure, {**entries, "../evil": b"x"})) == "ModelFileError"
    assert _outcome(_assemble(head, structure, {**entries, "arrays/999.npy": b"x"})) \
        == "ModelFileError"


class _EndlessHeader(io.RawIOBase):
    """A stream whose header line never ends (300 MB and counting); counts what is read."""

    def __init__(self):
        self.served = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        chunk = b"DPSYNTH-MODEL\n" if self.served == 0 else b"x" * len(buffer)
        chunk = chunk[:len(buffer)]
        buffer[:len(chunk)] = chunk
        self.served += len(chunk)
        return len(chunk)


def test_a_huge_header_is_refused_without_reading_it():
    stream = io.BufferedReader(_EndlessHeader())
    with pytest.raises(ModelFileError, match="header is longer than"):
        load(stream)
    assert stream.raw.served < 1024 * 1024


def test_a_file_over_max_bytes_is_refused(valid):
    with pytest.raises(ModelFileError, match="max_bytes"):
        load(io.BytesIO(valid), max_bytes=len(valid) // 2)


def _report(kind: str, outcomes: Counter) -> None:
    if CASES > 1000:  # the big run prints its figures (pytest -s)
        print(f"\n{kind}: {dict(outcomes)}")


@pytest.mark.slow
@pytest.mark.neural
def test_neural_files_survive_mutations():
    pytest.importorskip("torch")
    from sklearn_dpsynth.neural import DPTBARTSynthesizer

    model = DPTBARTSynthesizer(domain=DOMAIN, epochs=1, d_model=8, n_layers=1, n_heads=2,
                               batch_size=64, random_state=0).fit(_table(), epsilon=1.0)
    buffer = io.BytesIO()
    save(model, buffer)
    valid = buffer.getvalue()
    load(io.BytesIO(valid))  # lazy imports before watching
    assert _outcome(valid) == "ok"
    head, structure, entries = _parts(valid)
    rng = np.random.default_rng(4)
    started = time.perf_counter()
    outcomes = Counter(_outcome(_json_mutant(rng, head, structure, entries))
                       for _ in range(max(CASES // 4, 20)))
    params = copy.deepcopy(structure)
    params["$estimator"]["params"]["n_layers"] = 10**9  # a huge model is never built
    outcomes[_outcome(_assemble(head, params, entries))] += 1
    assert outcomes["ModelFileError"] > 0
    _report(f"neural JSON mutations ({time.perf_counter() - started:.1f} s)", outcomes)
