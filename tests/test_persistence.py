"""save/load: round trips, dropped seeds, format versions, limits and refusing unsafe files."""

from __future__ import annotations

import io
import json
import os
import pickle
import zipfile

import numpy as np
import pandas as pd
import pytest

import sklearn_dpsynth
from sklearn_dpsynth import MSTSynthesizer, load, save
from sklearn_dpsynth.evolution import PrivateEvolutionSynthesizer
from sklearn_dpsynth.persistence import (FORMAT_VERSION, ModelFileError, ModelFileSecurityWarning,
                                         UnsafeModelFileError, check_savable, convert_v1,
                                         read_header)

DOMAIN = {"a": ["x", "y", "z"], "b": (0, 10), "c": ["u", "v"]}


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], size=n)
    return pd.DataFrame({"a": a, "b": rng.integers(0, 11, size=n),
                         "c": np.where(a == "x", "u", rng.choice(["u", "v"], size=n))})


@pytest.fixture(scope="module")
def fitted():
    return MSTSynthesizer(domain=DOMAIN, max_iter=100, random_state=3).fit(_table(), epsilon=1.0)


def _bytes(model, **kwargs) -> bytes:
    buffer = io.BytesIO()
    save(model, buffer, **kwargs)
    return buffer.getvalue()


def _parts(blob: bytes) -> tuple[dict, dict, dict]:
    """Header, model.json and the raw entries of a model file."""
    head, _, body = blob[len(b"DPSYNTH-MODEL\n"):].partition(b"\n")
    archive = zipfile.ZipFile(io.BytesIO(body))
    entries = {name: archive.read(name) for name in archive.namelist()}
    return json.loads(head), json.loads(entries.pop("model.json")), entries


def _assemble(header: dict, structure, entries: dict, compression=zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        archive.writestr("model.json", json.dumps(structure))
        for name, data in entries.items():
            archive.writestr(name, data)
    return b"DPSYNTH-MODEL\n" + json.dumps(header).encode() + b"\n" + buffer.getvalue()


def test_round_trip_keeps_the_model(fitted, tmp_path):
    path = tmp_path / "model.dpsynth"
    save(fitted, path)
    loaded = load(path)
    assert type(loaded) is MSTSynthesizer
    assert loaded.privacy_ledger_.entries == fitted.privacy_ledger_.entries
    pd.testing.assert_frame_equal(loaded.sample(200, random_state=7),
                                  fitted.sample(200, random_state=7))
    table = _table(seed=1)
    assert loaded.score(table) == fitted.score(table)
    assert sklearn_dpsynth.save is save and sklearn_dpsynth.load is load


def test_the_file_is_json_and_plain_arrays(fitted):
    header, structure, entries = _parts(_bytes(fitted))
    assert header == {"format_version": 2, "library_version": sklearn_dpsynth.__version__,
                      "class": "MSTSynthesizer", "keeps_random_state": False}
    assert structure["$estimator"]["class"] == "MSTSynthesizer"
    assert structure["$estimator"]["params"]["max_iter"] == 100
    for name, data in entries.items():
        assert name.startswith("arrays/") and name.endswith(".npy")
        array = np.load(io.BytesIO(data), allow_pickle=False)
        assert array.dtype.kind in "biufM"
    assert _bytes(fitted) == _bytes(fitted)  # no dates, no seeds: the same model, the same bytes


def _values(node, name):
    """Every value stored under the key ``name`` anywhere in a model.json structure."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == name:
                yield value
            yield from _values(value, name)
    elif isinstance(node, list):
        for item in node:
            yield from _values(item, name)


def test_derivable_caches_are_not_saved_and_are_rebuilt(fitted):
    fitted.score(_table(seed=2))  # fills the categories' lookups and the message plan
    specs = fitted.domain_.specs
    assert any(spec._lookup is not None for spec in specs)
    assert fitted.model_.tree._message_plan is not None
    _, structure, _ = _parts(_bytes(fitted))
    for cache in ("_lookup", "_message_plan", "_separator_plan", "_beliefs"):
        assert list(_values(structure, cache)) and all(
            value is None for value in _values(structure, cache)), cache
    loaded = load(io.BytesIO(_bytes(fitted)))
    table = _table(seed=1)
    assert loaded.score(table) == fitted.score(table)
    assert [spec.encode(table[spec.name]).tolist() for spec in loaded.domain_.specs] == \
        [spec.encode(table[spec.name]).tolist() for spec in specs]


def test_the_seed_is_dropped_by_default(fitted, tmp_path):
    save(fitted, tmp_path / "m")
    loaded = load(tmp_path / "m")
    assert loaded.random_state is None and fitted.random_state == 3
    assert read_header(tmp_path / "m")["keeps_random_state"] is False
    # the sampling generator was re-seeded from OS entropy: not the fitted one's state
    assert (loaded._sampling_rng.bit_generator.state
            != fitted._sampling_rng.bit_generator.state)
    assert not loaded.sample(50).equals(load(tmp_path / "m").sample(50))


def test_keep_random_state_keeps_reproducible_sampling(tmp_path):
    model = MSTSynthesizer(domain=DOMAIN, max_iter=50, random_state=3).fit(_table(), epsilon=1.0)
    save(model, tmp_path / "m", keep_random_state=True)
    first, second = load(tmp_path / "m"), load(tmp_path / "m")
    assert first.random_state == 3
    pd.testing.assert_frame_equal(first.sample(50), second.sample(50))
    pd.testing.assert_frame_equal(load(tmp_path / "m").sample(50), model.sample(50))


def test_a_header_hiding_kept_seeds_is_refused():
    model = MSTSynthesizer(domain=DOMAIN, max_iter=20, random_state=3).fit(_table(), epsilon=1.0)
    header, structure, entries = _parts(_bytes(model, keep_random_state=True))
    assert header["keeps_random_state"] is True
    with pytest.raises(ModelFileError, match="keeps_random_state is false"):
        load(io.BytesIO(_assemble({**header, "keeps_random_state": False}, structure, entries)))


def test_the_header_does_not_depend_on_the_private_rows(tmp_path):
    table = _table()
    headers = [read_header(io.BytesIO(_bytes(MSTSynthesizer(domain=DOMAIN, max_iter=20).fit(
        frame, epsilon=1.0)))) for frame in (table, table.iloc[1:])]
    assert headers[0] == headers[1]
    assert headers[0]["format_version"] == FORMAT_VERSION


def test_other_format_versions_are_refused(fitted):
    header, structure, entries = _parts(_bytes(fitted))
    later = _assemble({**header, "format_version": FORMAT_VERSION + 1}, structure, entries)
    with pytest.raises(ModelFileError, match=r"format version 3 .*upgrade sklearn-dpsynth"):
        load(io.BytesIO(later))


def _v1_file(model) -> bytes:
    header = {"format_version": 1, "library_version": "0.1", "class": "x",
              "keeps_random_state": False}
    return (b"DPSYNTH-MODEL\n" + json.dumps(header).encode() + b"\n"
            + pickle.dumps(model, protocol=4))


def test_version_1_pickles_are_refused_and_convert_v1_converts_them(fitted, tmp_path):
    (tmp_path / "old").write_bytes(_v1_file(fitted))
    with pytest.raises(UnsafeModelFileError, match=r"version 1 .*convert_v1"):
        load(tmp_path / "old")
    with pytest.raises(ValueError, match="allow_pickle=True"):
        convert_v1(tmp_path / "old", tmp_path / "new")
    assert not (tmp_path / "new").exists()
    with pytest.warns(ModelFileSecurityWarning, match="convert only files you wrote"):
        convert_v1(tmp_path / "old", tmp_path / "new", allow_pickle=True)
    converted = load(tmp_path / "new")
    assert converted.random_state is None
    pd.testing.assert_frame_equal(converted.sample(20, random_state=1),
                                  fitted.sample(20, random_state=1))
    with pytest.raises(ValueError, match="not a version-1"):
        convert_v1(tmp_path / "new", tmp_path / "again", allow_pickle=True)


def test_a_version_1_file_naming_the_former_module_domain_still_converts(fitted, tmp_path,
                                                                        monkeypatch):
    """Version-1 files pickled ``Domain`` and ``ColumnSpec`` as ``sklearn_dpsynth.domain.X``
    (a module then, a package now): the package's names still resolve them."""
    from sklearn_dpsynth.domain import ColumnSpec, Domain

    for cls in (Domain, ColumnSpec):
        monkeypatch.setattr(cls, "__module__", "sklearn_dpsynth.domain")
    blob = _v1_file(fitted)
    monkeypatch.undo()
    assert b"sklearn_dpsynth.domain" in blob and b"sklearn_dpsynth.domain._" not in blob
    (tmp_path / "old").write_bytes(blob)
    with pytest.warns(ModelFileSecurityWarning):
        convert_v1(tmp_path / "old", tmp_path / "new", allow_pickle=True)
    converted = load(tmp_path / "new")
    assert type(converted.domain_) is Domain
    assert all(type(spec) is ColumnSpec for spec in converted.domain_)
    pd.testing.assert_frame_equal(converted.sample(20, random_state=1),
                                  fitted.sample(20, random_state=1))


class _Shell:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_a_pickle_calling_os_system_is_refused_unread(tmp_path):
    marker = tmp_path / "pwned"
    with pytest.raises(UnsafeModelFileError, match="version 1"):
        load(io.BytesIO(_v1_file(_Shell(marker))))
    assert not marker.exists()


@pytest.mark.parametrize("name", ["system", "os.system", "builtins.eval", "get_method",
                                  "Path", "BaseSynthesizer", "ndarray"])
def test_classes_outside_the_registry_are_refused(fitted, name):
    header, structure, entries = _parts(_bytes(fitted))
    for node in ({"$estimator": {"class": name, "params": {}}}, {"$object": [name, {}]}):
        structure["$estimator"]["fitted"]["model_"] = node
        with pytest.raises(UnsafeModelFileError, match="not one of the library's persisted"):
            load(io.BytesIO(_assemble(header, structure, entries)))


@pytest.mark.parametrize("blob, message", [
    (b"\x80\x04N.", "Not a sklearn-dpsynth model file"),
    (b"DPSYNTH-MODEL\nnot json\n", "header is damaged"),
    (b'DPSYNTH-MODEL\n{"format_version": 2}', "header is damaged"),
    (b'DPSYNTH-MODEL\n{"format_version": 2}\nPK\x03\x04garbage', "damaged"),
    (b'DPSYNTH-MODEL\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n', "header is damaged"),
])
def test_damaged_files_give_clear_errors(blob, message):
    with pytest.raises(ModelFileError, match=message):
        load(io.BytesIO(blob))


def test_a_file_without_a_fitted_synthesizer_is_refused(fitted):
    header, structure, entries = _parts(_bytes(fitted))
    with pytest.raises(ModelFileError, match="does not hold a fitted synthesizer"):
        load(io.BytesIO(_assemble(header, [1, 2], entries)))
    unfitted = {"$estimator": {"class": "MSTSynthesizer",
                               "params": structure["$estimator"]["params"]}}
    with pytest.raises(ModelFileError, match="does not hold a fitted synthesizer"):
        load(io.BytesIO(_assemble(header, unfitted, entries)))
    with pytest.raises(ModelFileError, match="different classes"):
        load(io.BytesIO(_assemble({**header, "class": "AIMSynthesizer"}, structure, entries)))


def test_save_refuses_unfitted_models_and_foreign_objects(fitted, tmp_path):
    with pytest.raises(ValueError, match="fitted synthesizer"):
        save(MSTSynthesizer(), tmp_path / "m")
    odd = load(io.BytesIO(_bytes(fitted)))
    odd.callback_ = len  # an attribute the class does not declare: never silently lost
    with pytest.raises(ValueError, match=r"\['callback_'\].*_persisted_state_"):
        save(odd, tmp_path / "m")
    odd = load(io.BytesIO(_bytes(fitted)))
    odd.estimation_info_ = {"hook": len}  # code: a model file holds data only
    with pytest.raises(ValueError, match="builtin_function_or_method.*never code"):
        save(odd, tmp_path / "m")
    assert not (tmp_path / "m").exists()
    with pytest.raises(ValueError, match="keep_random_state"):
        save(fitted, tmp_path / "m", keep_random_state="yes")


def test_check_savable_refuses_parameters_holding_code():
    check_savable(MSTSynthesizer(domain=DOMAIN))
    check_savable(PrivateEvolutionSynthesizer(generator="uniform"))
    with pytest.raises(ValueError, match="generator.*function"):
        check_savable(PrivateEvolutionSynthesizer(generator=lambda sizes, public: None))
    with pytest.raises(ValueError, match="synthesizers and pipelines of sklearn_dpsynth"):
        check_savable(object())


def test_models_of_nullable_and_tz_aware_inputs_round_trip(tmp_path):
    # inputs read from files, DuckDB or Spark carry nullable dtypes and time zones
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "n": pd.array(rng.integers(0, 5, 300), dtype="Int64"),
        "b": pd.array(rng.random(300) < 0.5, dtype="boolean"),
        "t": pd.date_range("2021-01-01", periods=300, freq="h", tz="Europe/Paris"),
        "f": pd.array(rng.random(300), dtype="Float64"),
        "u": pd.date_range("2021-01-01", periods=300, freq="h", tz="UTC+01:00"),
    })
    domain = {"n": {"bounds": (0, 4), "missing": True}, "f": {"bounds": (0, 1), "missing": True},
              "t": {"bounds": ("2021-01-01T00:00:00+01:00", "2021-02-01T00:00:00+01:00"),
                    "missing": True},
              "u": {"bounds": ("2021-01-01T00:00:00+01:00", "2021-02-01T00:00:00+01:00")}}
    model = MSTSynthesizer(domain=domain, random_state=0).fit(frame, epsilon=1.0)
    save(model, tmp_path / "m.dpsynth")
    loaded = load(tmp_path / "m.dpsynth")
    assert loaded.sample(5).dtypes.to_dict() == model.sample(5).dtypes.to_dict()
    assert str(loaded.sample(5)["t"].dt.tz) == "Europe/Paris"
    pd.testing.assert_frame_equal(loaded.sample(30, random_state=2),
                                  model.sample(30, random_state=2))


def test_loading_has_no_side_effects(tmp_path, monkeypatch):
    pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    data = tmp_path / "private.parquet"
    _table().to_parquet(data, index=False)
    model = MSTSynthesizer(domain=DOMAIN, max_iter=30).fit(str(data), epsilon=1.0)  # in DuckDB
    blob = _bytes(model)
    assert b"duckdb" not in blob.lower()  # no engine object, setting or path is saved
    empty = tmp_path / "cwd"
    empty.mkdir()
    monkeypatch.chdir(empty)
    monkeypatch.setenv("TMPDIR", str(empty))
    loaded = load(io.BytesIO(blob))
    loaded.sample(10)  # samples without a backend
    assert list(empty.iterdir()) == []
