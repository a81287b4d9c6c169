"""The documentation builds without warnings; examples and the demo job run."""

import re
import runpy
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*.py"))


@pytest.mark.slow
def test_sphinx_build_has_no_warnings(tmp_path):
    # -n (nitpicky): every cross-reference must resolve
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "html")],
        capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-5000:]


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script, monkeypatch, tmp_path):
    if "neural" in script.name or "dptbart" in script.name or "synlm" in script.name:
        pytest.importorskip("torch")
        pytest.importorskip("opacus")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("matplotlib.pyplot.show", lambda *a, **k: None, raising=False)
    runpy.run_path(str(script), run_name="__main__")


def test_demo_job_writes_rows_and_prints_the_ledger(tmp_path, capsys):
    from sklearn_dpsynth.__main__ import main
    out = tmp_path / "rows.csv"
    assert main(["--method", "independent", "--n-samples", "2000", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "spent epsilon=1" in printed and "held-out NLL" in printed
    assert len(pd.read_csv(out)) > 1000


def test_contributor_page_lists_the_layers_of_the_architecture_test():
    from .test_architecture import LAYERS

    text = (ROOT / "docs" / "contributing.rst").read_text()
    rows = re.findall(r"^   \* - (\d+)\n     - (.+)$", text, flags=re.MULTILINE)
    documented = [tuple(re.sub(r"(/|\.py)$", "", unit) for unit in re.findall(r"``([^`]+)``", units))
                  for _, units in rows]
    assert [int(floor) for floor, _ in rows] == list(range(len(LAYERS)))
    assert documented == LAYERS
