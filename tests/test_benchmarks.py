"""Tests of the benchmark harness on a tiny dummy method and tiny data."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from threadpoolctl import threadpool_limits

from benchmarks import datasets as bench_datasets
from benchmarks.datasets import Dataset, data_dir, load_dataset, standard_split
from benchmarks.reproduce import REPRODUCTIONS, comparison_table
from benchmarks.run import (
    main,
    markdown_table,
    results_frame,
    run_benchmark,
    run_reproduction,
    summarize,
    write_results,
)
from sklearn_dpsynth import registry


@pytest.fixture(autouse=True)
def _single_thread():
    with threadpool_limits(limits=1):
        yield


class _Ledger:
    def __init__(self, epsilon, delta):
        self._spent = (epsilon, delta)

    def spent(self):
        return self._spent


class DummySynth(BaseEstimator):
    """Resamples each column independently from its (non-private) histogram."""

    def __init__(self, domain=None, random_state=None, smoothing=1.0):
        self.domain = domain
        self.random_state = random_state
        self.smoothing = smoothing

    def fit(self, X, y=None, *, epsilon, delta=1e-9):
        self.columns_ = list(X.columns)
        self.probs_ = []
        for column in self.columns_:
            counts = np.bincount(X[column], minlength=self.domain[column]) + self.smoothing
            self.probs_.append(counts / counts.sum())
        self.rng_ = np.random.default_rng(self.random_state)
        self.privacy_ledger_ = _Ledger(epsilon, delta)
        return self

    def sample(self, n_samples=None, *, random_state=None):
        rng = self.rng_ if random_state is None else np.random.default_rng(random_state)
        return pd.DataFrame({c: rng.choice(len(p), size=n_samples, p=p)
                             for c, p in zip(self.columns_, self.probs_, strict=True)})

    def score(self, X, y=None):
        logp = sum(np.log(p[X[c].to_numpy()]) for c, p in zip(self.columns_, self.probs_, strict=True))
        return float(np.mean(logp))


def _tiny_dataset(n=240):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, n)
    frame = pd.DataFrame({"a": a, "b": (a + rng.integers(0, 2, n)) % 4, "c": rng.integers(0, 2, n),
                          "y": (a > 0).astype(int)})
    train, test = standard_split(frame)
    return Dataset("tiny", train, test, {"a": 3, "b": 4, "c": 2, "y": 2}, target="y", entropy=None)


@pytest.fixture
def fresh_registry(monkeypatch):
    """The package registry, restored after the test."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    return registry


@pytest.fixture
def dummy_method(fresh_registry):
    fresh_registry.register_method("dummy", DummySynth, family="other",
                                   description="Non-private column histograms (tests only).")
    return "dummy"


def test_run_benchmark_records_and_summary(dummy_method):
    lines = []
    results = run_benchmark(_tiny_dataset(), [dummy_method], [0.5, 2.0], seeds=2, n_3way=2,
                            metrics=["tvd1", "tvd2", "tvd3", "nll", "pair", "efficacy"],
                            progress=lines.append)
    assert set(results) == {"config", "runs", "summary"}
    assert len(results["runs"]) == 4 and len(lines) == 4
    run = results["runs"][0]
    assert run["method"] == "dummy" and run["epsilon"] == 0.5 and run["seed"] == 0
    assert run["spent_epsilon"] == 0.5 and run["n_synthetic"] == 216
    assert run["fit_seconds"] >= 0 and run["fit_peak_mb"] >= 0
    assert set(run["metrics"]) == {"tvd1", "tvd2", "tvd3", "nll", "pair", "f1", "auc", "acc"}
    assert 0 <= run["metrics"]["tvd2"] <= 1 and run["metrics"]["nll"] > 0
    # seeds differ: the synthesizer's random_state is the seed
    assert results["runs"][0]["metrics"]["tvd2"] != results["runs"][1]["metrics"]["tvd2"]
    summary = pd.DataFrame(results["summary"])
    row = summary[(summary.epsilon == 2.0) & (summary.metric == "tvd1")].iloc[0]
    values = [r["metrics"]["tvd1"] for r in results["runs"] if r["epsilon"] == 2.0]
    assert row["n"] == 2 and row["mean"] == pytest.approx(np.mean(values))
    assert row["std"] == pytest.approx(np.std(values, ddof=1))
    assert results["config"]["n_train"] == 216 and results["config"]["n_test"] == 24


def test_json_and_markdown_shape(dummy_method, tmp_path):
    results = run_benchmark(_tiny_dataset(), [dummy_method], [1.0, 3.0], seeds=2,
                            metrics=["tvd1", "tvd2"], memory="none")
    path = write_results(results, tmp_path / "sub" / "out.json")
    loaded = json.loads(path.read_text())  # strict JSON: NaN/None written as null
    assert loaded["runs"][0]["fit_peak_mb"] is None
    assert [r["epsilon"] for r in loaded["runs"]] == [1.0, 1.0, 3.0, 3.0]
    table = markdown_table(results).splitlines()
    assert table[0].startswith("| method | epsilon | fit_seconds")
    assert "| tvd1 | tvd2 |" in table[0]
    rows = [line for line in table if line.startswith("| dummy")]
    assert len(rows) == 2 and "±" in rows[0]
    frame = results_frame(results)
    assert list(frame.columns) == ["method", "epsilon", "seed", "metric", "value"]
    assert len(frame) == 4 * (4 + 2)  # 4 runs x (4 cost keys + 2 metrics)


def test_cli_main_runs_registered_dataset(dummy_method, monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(bench_datasets.DATASETS, "tiny", _tiny_dataset)
    out = tmp_path / "r.json"
    code = main(["--dataset", "tiny", "--methods", "dummy", "--epsilon", "1", "--seeds", "1",
                 "--metrics", "tvd1", "nll", "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| dummy | 1 |" in printed and str(out) in printed
    assert json.loads(out.read_text())["config"]["dataset"] == "tiny"
    assert main(["--dataset", "tiny", "--methods", "no_such_method", "--epsilon", "1"]) == 2
    assert "Unknown method" in capsys.readouterr().err


def test_methods_come_from_the_package_registry(fresh_registry, capsys):
    # an unknown name or a broken import fails before any run, naming the method
    fresh_registry.register_method("ghost", "no_such_module_for_tests:Ghost", family="other",
                                   description="Cannot be imported.")
    with pytest.raises(ImportError, match="'ghost'"):
        run_benchmark(_tiny_dataset(), ["ghost"], [1.0], seeds=1)
    with pytest.raises(ValueError, match="Unknown method 'nope'.*independent, mst, aim"):
        run_benchmark(_tiny_dataset(), ["nope"], [1.0], seeds=1)
    # a registered library method runs end to end under its registry name
    results = run_benchmark(_tiny_dataset(), ["independent"], [1.0], seeds=1,
                            metrics=["tvd1"], memory="none")
    run = results["runs"][0]
    assert run["method"] == "independent" and run["spent_epsilon"] == pytest.approx(1.0)
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ("method names: " + ", ".join(fresh_registry.available_methods())) in help_text
    assert help_text.count("ghost") >= 1


def test_run_benchmark_validation(dummy_method):
    data = _tiny_dataset()
    with pytest.raises(ValueError, match="Unknown metrics"):
        run_benchmark(data, [dummy_method], [1.0], seeds=1, metrics=["tvd9"])
    with pytest.raises(ValueError, match="seeds"):
        run_benchmark(data, [dummy_method], [1.0], seeds=0)
    no_target = Dataset("t", data.train, data.test, data.domain, target=None)
    with pytest.raises(ValueError, match="needs a target"):
        run_benchmark(no_target, [dummy_method], [1.0], seeds=1, metrics=["efficacy"])
    with pytest.raises(ValueError, match="Unknown dataset"):
        load_dataset("mnist")


def test_standard_split_and_data_dir(monkeypatch, tmp_path):
    frame = pd.DataFrame({"v": np.arange(25)})
    train, test = standard_split(frame)
    perm = np.random.default_rng(0).permutation(25)
    assert test["v"].tolist() == perm[:2].tolist()
    assert train["v"].tolist() == perm[2:].tolist()
    monkeypatch.setenv("DPSYNTH_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    (tmp_path / "adult").mkdir()
    pd.DataFrame({"age": np.arange(30) % 5, "income>50K": np.arange(30) % 2}).to_csv(
        tmp_path / "adult" / "adult.csv", index=False)
    (tmp_path / "adult" / "adult-domain.json").write_text(json.dumps({"age": 5, "income>50K": 2}))
    adult = load_dataset("adult")
    assert (len(adult.train), len(adult.test)) == (27, 3)
    assert adult.domain == {"age": 5, "income>50K": 2} and adult.target == "income>50K"
    monkeypatch.setenv("DPSYNTH_DATA", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="DPSYNTH_DATA"):
        load_dataset("adult")


def test_comparison_table_beside_paper():
    runs = [{"method": "mst", "epsilon": 1.0, "seed": s, "fit_seconds": 1.0, "sample_seconds": 0.1,
             "fit_peak_mb": 1.0, "sample_peak_mb": 1.0,
             "metrics": {"f1": 0.4 + s / 100, "auc": 0.8, "acc": 0.7, "coracc": 0.75, "pair": 0.8,
                         "hist": 0.9}} for s in range(2)]
    results = {"runs": runs}
    results["summary"] = summarize(results).to_dict(orient="records")
    table = comparison_table(results, REPRODUCTIONS["dp2stage-table8"]).splitlines()
    assert table[0] == "| method | source | F1 | AUC | ACC | CorAcc | Pair | HIST |"
    assert table[2] == ("| mst | ours (2 seeds) | 40.5 ± 0.7 | 80.0 ± 0.0 | 70.0 ± 0.0 | "
                        "75.0 ± 0.0 | 80.0 ± 0.0 | 90.0 ± 0.0 |")
    assert table[3] == "| mst | paper | 39.6 | 76.8 | 72.8 | 70.0 | 74.6 | 87.0 |"


def test_reproduction_runs_through_the_harness(monkeypatch, dummy_method):
    spec = REPRODUCTIONS["dp2stage-table8"]
    monkeypatch.setitem(bench_datasets.DATASETS, spec.dataset, _tiny_dataset)
    results, text = run_reproduction("dp2stage-table8", seeds=2, methods=[dummy_method],
                                     memory="none")
    assert results["config"]["reproduce"] == "dp2stage-table8"
    assert results["config"]["epsilons"] == [spec.epsilon] and results["config"]["delta"] == spec.delta
    assert {r["method"] for r in results["runs"]} == {"dummy"} and len(results["runs"]) == 2
    f1 = np.mean([r["metrics"]["f1"] for r in results["runs"]]) * 100
    assert text.splitlines()[2].startswith(f"| dummy | ours (2 seeds) | {f1:.1f} ± ")
    with pytest.raises(ValueError, match="Unknown reproduction"):
        run_reproduction("no-such-table")


def test_benchmark_modules_import_in_one_direction():
    import ast
    from pathlib import Path

    source = (Path(__file__).resolve().parents[1] / "benchmarks" / "reproduce.py").read_text()
    imported = {node.module for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.ImportFrom) and node.level > 0}
    assert "run" not in imported and "methods" not in imported
