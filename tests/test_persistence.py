"""save/load: round trips, the dropped seed, format versions, and refusing unsafe files."""

from __future__ import annotations

import io
import json
import os
import pickle

import numpy as np
import pandas as pd
import pytest

import sklearn_dpsynth
from sklearn_dpsynth import IndependentSynthesizer, MSTSynthesizer, load, save
from sklearn_dpsynth.persistence import FORMAT_VERSION, UnsafeModelFileError, read_header

DOMAIN = {"a": ["x", "y", "z"], "b": (0, 10), "c": ["u", "v"]}


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], size=n)
    return pd.DataFrame({"a": a, "b": rng.integers(0, 11, size=n),
                         "c": np.where(a == "x", "u", rng.choice(["u", "v"], size=n))})


@pytest.fixture(scope="module")
def fitted():
    return MSTSynthesizer(domain=DOMAIN, max_iters=100, random_state=3).fit(_table(), epsilon=1.0)


def _file(header: dict, payload: bytes) -> io.BytesIO:
    return io.BytesIO(b"DPSYNTH-MODEL\n" + json.dumps(header).encode() + b"\n" + payload)


def test_round_trip_keeps_the_model(fitted, tmp_path):
    path = tmp_path / "model.dpsynth"
    save(fitted, path)
    loaded = load(path)
    assert type(loaded) is MSTSynthesizer
    assert loaded.privacy_ledger_.spent() == fitted.privacy_ledger_.spent()
    assert len(loaded.privacy_ledger_) == len(fitted.privacy_ledger_)
    pd.testing.assert_frame_equal(loaded.sample(200, random_state=7),
                                  fitted.sample(200, random_state=7))
    table = _table(seed=1)
    assert loaded.score(table) == pytest.approx(fitted.score(table), rel=0, abs=0)
    assert sklearn_dpsynth.save is save and sklearn_dpsynth.load is load


def test_the_seed_is_dropped_by_default(fitted, tmp_path):
    save(fitted, tmp_path / "m")
    loaded = load(tmp_path / "m")
    assert loaded.random_state is None and fitted.random_state == 3
    assert read_header(tmp_path / "m")["keeps_random_state"] is False
    # the sampling generator was re-seeded from OS entropy: not the fitted one's state
    assert (loaded._sampling_rng.bit_generator.state
            != fitted._sampling_rng.bit_generator.state)
    assert not loaded.sample(50).equals(load(tmp_path / "m").sample(50))


def test_keep_random_state_keeps_reproducible_sampling(fitted, tmp_path):
    save(fitted, tmp_path / "m", keep_random_state=True)
    first, second = load(tmp_path / "m"), load(tmp_path / "m")
    assert first.random_state == 3
    pd.testing.assert_frame_equal(first.sample(50), second.sample(50))


def test_the_header_does_not_depend_on_the_private_rows(tmp_path):
    table = _table()
    neighbour = table.iloc[1:]
    headers = []
    for i, frame in enumerate((table, neighbour)):
        model = IndependentSynthesizer(domain=DOMAIN).fit(frame, epsilon=1.0)
        save(model, tmp_path / f"m{i}")
        headers.append(read_header(tmp_path / f"m{i}"))
    assert headers[0] == headers[1]
    assert headers[0]["format_version"] == FORMAT_VERSION


def test_a_later_format_version_is_refused(fitted, tmp_path):
    save(fitted, tmp_path / "m")
    blob = (tmp_path / "m").read_bytes()
    later = blob.replace(b'"format_version": 1', f'"format_version": {FORMAT_VERSION + 1}'.encode())
    with pytest.raises(ValueError, match=r"format version 2 .*upgrade sklearn-dpsynth"):
        load(io.BytesIO(later))


class _Shell:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_a_file_calling_os_system_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Shell(marker), protocol=4)
    with pytest.raises(UnsafeModelFileError, match="system"):
        load(_file({"format_version": 1}, payload))
    assert not marker.exists()


@pytest.mark.parametrize("module, name", [
    ("builtins", "eval"), ("builtins", "getattr"), ("subprocess", "Popen"),
    ("sklearn_dpsynth.registry", "get_method"),  # a function of the package: imports by name
    ("sklearn_dpsynth.cli", "Path"),  # a foreign class re-exported by a module of the package
])
def test_globals_off_the_allow_list_are_refused(module, name):
    payload = b"\x80\x04c" + f"{module}\n{name}\n".encode() + b")R."
    with pytest.raises(UnsafeModelFileError, match=name):
        load(_file({"format_version": 1}, payload))


@pytest.mark.parametrize("blob, message", [
    (b"\x80\x04N.", "Not a sklearn-dpsynth model file"),
    (b"DPSYNTH-MODEL\nnot json\n", "header is damaged"),
    (b'DPSYNTH-MODEL\n{"format_version": 1}\n\x80\x04garbage', "damaged"),
    (b'DPSYNTH-MODEL\n{"format_version": 1}\n\x80\x04K\x01.', "does not hold a fitted"),
])
def test_damaged_files_give_clear_errors(blob, message):
    with pytest.raises(ValueError, match=message):
        load(io.BytesIO(blob))


def test_save_refuses_unfitted_models_and_foreign_objects(fitted, tmp_path):
    with pytest.raises(ValueError, match="fitted synthesizer"):
        save(MSTSynthesizer(), tmp_path / "m")
    odd = load(io.BytesIO(_bytes_of(fitted)))
    odd.callback_ = len  # builtins.len: load would refuse it, so save must too
    with pytest.raises(ValueError, match="builtins.len"):
        save(odd, tmp_path / "m")
    assert not (tmp_path / "m").exists()
    with pytest.raises(ValueError, match="keep_random_state"):
        save(fitted, tmp_path / "m", keep_random_state="yes")


def _bytes_of(model) -> bytes:
    buffer = io.BytesIO()
    save(model, buffer)
    return buffer.getvalue()


def test_models_of_nullable_and_tz_aware_inputs_round_trip(tmp_path):
    # inputs read from files, DuckDB or Spark carry nullable dtypes and time zones
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "n": pd.array(rng.integers(0, 5, 300), dtype="Int64"),
        "b": pd.array(rng.random(300) < 0.5, dtype="boolean"),
        "t": pd.date_range("2021-01-01", periods=300, freq="h", tz="Europe/Paris"),
        "f": pd.array(rng.random(300), dtype="Float64"),
    })
    domain = {"n": {"bounds": (0, 4), "missing": True}, "f": {"bounds": (0, 1), "missing": True},
              "t": {"bounds": ("2021-01-01T00:00:00+01:00", "2021-02-01T00:00:00+01:00"),
                    "missing": True}}
    model = MSTSynthesizer(domain=domain, random_state=0).fit(frame, epsilon=1.0)
    save(model, tmp_path / "m.dpsynth")
    loaded = load(tmp_path / "m.dpsynth")
    assert loaded.sample(5).dtypes.to_dict() == model.sample(5).dtypes.to_dict()
    assert str(loaded.sample(5)["t"].dt.tz) == "Europe/Paris"
