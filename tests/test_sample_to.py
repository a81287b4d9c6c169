"""sample_to: synthetic rows written to CSV/Parquet in chunks of bounded size."""

import math

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth.marginal import MSTSynthesizer as MST


def _frame(n=800, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "city": pd.Categorical(rng.choice(["a", "b", "c"], size=n)),
        "age": pd.array(rng.integers(18, 90, size=n), dtype="Int64"),
        "income": rng.lognormal(10, 1, size=n),
        "when": pd.to_datetime("2000-01-01") + pd.to_timedelta(rng.integers(0, 3650, n), "D"),
        "flag": rng.random(n) < 0.4,
    })


DOMAIN = {"city": {"categories": ["a", "b", "c"]},
          "age": {"bounds": (18, 90), "integer": True, "missing": True},
          "income": {"bounds": (0, 2e5), "clip": True},
          "when": {"bounds": ("2000-01-01", "2010-12-31")}}


@pytest.fixture(scope="module")
def model():
    return MST(domain=DOMAIN, random_state=0).fit(_frame(), epsilon=1.0)


def _record_chunks(model, monkeypatch):
    sizes = []
    original = type(model)._sample_encoded
    monkeypatch.setattr(type(model), "_sample_encoded", lambda self, n, rng, conditions: (
        sizes.append(n), original(self, n, rng, conditions))[1])
    return sizes


@pytest.mark.parametrize("n_samples, chunk_size", [(1000, 300), (900, 300), (7, 100), (0, 5)])
def test_csv_has_exactly_n_rows_in_bounded_chunks(model, tmp_path, monkeypatch, n_samples,
                                                  chunk_size):
    sizes = _record_chunks(model, monkeypatch)
    path = tmp_path / "out.csv"
    n_chunks = model.sample_to(path, n_samples, chunk_size=chunk_size, random_state=1)
    assert n_chunks == max(math.ceil(n_samples / chunk_size), 1) == len(sizes)
    assert sum(sizes) == n_samples and max(sizes) <= chunk_size
    back = pd.read_csv(path)
    assert len(back) == n_samples and list(back.columns) == list(model.feature_names_in_)
    if n_samples:
        assert set(back["city"]) <= {"a", "b", "c"}
        assert back["income"].between(0, 2e5).all()


def test_parquet_keeps_the_input_dtypes(model, tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "out.parquet"
    assert model.sample_to(path, 1050, chunk_size=200, random_state=2) == 6
    back = pd.read_parquet(path)
    expected = model.sample(3, random_state=0)
    assert len(back) == 1050 and list(back.columns) == list(expected.columns)
    for column in expected.columns:
        assert back[column].dtype == expected[column].dtype, column
    assert list(back["city"].cat.categories) == ["a", "b", "c"]


def test_same_seed_same_file_and_chunks_follow_one_generator(model, tmp_path):
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    model.sample_to(a, 500, chunk_size=128, random_state=5)
    model.sample_to(b, 500, chunk_size=128, random_state=5)
    model.sample_to(c, 500, chunk_size=128, random_state=6)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    # one generator continues across chunks: chunk two differs from chunk one
    rows = pd.read_csv(a)
    assert not rows.iloc[:128].reset_index(drop=True).equals(
        rows.iloc[128:256].reset_index(drop=True))


def test_gzip_csv_and_arrays(tmp_path):
    array = np.random.default_rng(0).integers(0, 3, size=(300, 3))
    model = MST(domain=3, random_state=0).fit(array, epsilon=1.0)
    path = tmp_path / "out.csv.gz"
    assert model.sample_to(path, 250, chunk_size=100, random_state=0) == 3
    back = pd.read_csv(path)
    assert back.shape == (250, 3) and list(back.columns) == ["0", "1", "2"]
    assert back.isin([0, 1, 2]).all().all()


def test_bad_arguments_are_clear_errors(model, tmp_path):
    with pytest.raises(ValueError, match="chunk_size"):
        model.sample_to(tmp_path / "x.csv", 10, chunk_size=0)
    with pytest.raises(ValueError, match="format"):
        model.sample_to(tmp_path / "x.csv", 10, format="xlsx")
    with pytest.raises(ValueError, match="suffix"):
        model.sample_to(tmp_path / "x.txt", 10)
    with pytest.raises(ValueError, match="n_samples"):
        model.sample_to(tmp_path / "x.csv", -1)
    with pytest.raises(Exception, match="not fitted"):
        MST().sample_to(tmp_path / "x.csv", 10)


def test_cli_sample_writes_large_outputs_in_chunks(tmp_path, monkeypatch):
    from sklearn_dpsynth import cli, save

    frame = _frame().astype({"age": "int64"})
    domain = dict(DOMAIN, age={"bounds": (18, 90), "integer": True})
    model = MST(domain=domain, random_state=0).fit(frame, epsilon=1.0)
    path = tmp_path / "model.dpsynth"
    save(model, path)
    sizes = _record_chunks(model, monkeypatch)
    monkeypatch.setattr(cli, "_CHUNK_ROWS", 100)
    out = tmp_path / "rows.csv"
    assert cli.main(["sample", str(path), "-n", "250", "-o", str(out)]) == 0
    assert sizes == [100, 100, 50]
    back = pd.read_csv(out)
    assert back.shape == (250, 5) and list(back.columns) == list(model.feature_names_in_)
