"""Model files from the command line: every method, the neural ones included."""

from __future__ import annotations

import pandas as pd
import pytest

from sklearn_dpsynth import IndependentSynthesizer, load
from sklearn_dpsynth.cli import main
from sklearn_dpsynth.registry import _REGISTRY, register_method

from .test_cli import files  # noqa: F401  (the fixture: a small table and its domain)

TINY = {"epochs=1", "d_model=8", "n_layers=1", "n_heads=2", "batch_size=64"}


@pytest.mark.neural
@pytest.mark.slow
@pytest.mark.parametrize("method, extra", [
    ("dptbart", sorted(TINY)), ("synlm", sorted(TINY)),
    ("dp2stage", sorted(TINY | {"stage1_epochs=1", "stage1_rows=100"})),
])
def test_neural_methods_fit_sample_and_report_from_the_command_line(files, method, extra, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("opacus")
    tmp_path, data, domain = files
    model_path = tmp_path / "model.dpsynth"
    params = [arg for item in extra for arg in ("--param", item)]
    assert main(["fit", str(data), "--method", method, "--epsilon", "2", "--domain",
                 str(domain), "--quiet", "-o", str(model_path), *params]) == 0
    model = load(model_path)
    assert model.privacy_ledger_.spent()[0] == pytest.approx(2.0)
    rows = tmp_path / "synthetic.csv"
    assert main(["sample", str(model_path), "-n", "80", "-o", str(rows)]) == 0
    synthetic = pd.read_csv(rows)
    assert list(synthetic.columns) == ["a", "b", "c"] and len(synthetic) == 80
    assert set(synthetic["a"]) <= {"x", "y", "z"} and synthetic["b"].between(0, 10).all()
    assert main(["ledger", str(model_path)]) == 0
    assert "total: epsilon=2" in capsys.readouterr().out
    report = tmp_path / "report.html"
    assert main(["report", str(data), str(rows), "--model", str(model_path),
                 "-o", str(report)]) == 0
    assert 'id="ledger"' in report.read_text()


class _Hooked(IndependentSynthesizer):
    """A registered method whose parameter holds code: its model cannot be saved."""

    def __init__(self, *, domain=None, n_bins=32, preprocessing="private",
                 preprocessing_budget=0.1, max_categories=99, bin_value="uniform",
                 pseudocount=0.5, random_state=None, hook=print):
        super().__init__(domain=domain, n_bins=n_bins, preprocessing=preprocessing,
                         preprocessing_budget=preprocessing_budget,
                         max_categories=max_categories, bin_value=bin_value,
                         pseudocount=pseudocount, random_state=random_state)
        self.hook = hook


def test_fit_refuses_before_reading_data_a_model_it_could_not_save(tmp_path, capsys):
    register_method("hooked", _Hooked, family="other", description="Holds code.")
    try:
        # the data file does not even exist: the refusal comes before any read
        assert main(["fit", str(tmp_path / "absent.csv"), "--method", "hooked", "--epsilon",
                     "1", "-o", str(tmp_path / "m")]) == 1
    finally:
        _REGISTRY.pop("hooked")
    err = capsys.readouterr().err
    assert "cannot be saved" in err and "hook" in err and "no such file" not in err
    assert not (tmp_path / "m").exists()


def test_a_damaged_model_file_is_one_line_error(files, capsys):
    tmp_path, _, _ = files
    bad = tmp_path / "bad.dpsynth"
    bad.write_bytes(b"DPSYNTH-MODEL\n" + b"[" * 70_000 + b"\n")
    for command in (["ledger", str(bad)], ["sample", str(bad), "-n", "3"]):
        assert main(command) == 1
        err = capsys.readouterr().err
        assert err.startswith("dpsynth: error:") and "header" in err
