"""The documentation builds without warnings, its gallery runs, and the demo job runs."""

import ast
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GALLERY = sorted((DOCS / "gallery").glob("*/plot_*.py"))


@pytest.mark.slow
def test_sphinx_build_runs_the_gallery_and_has_no_warnings(tmp_path):
    """``sphinx-build -W -n``: every cross-reference resolves, every example runs.

    sphinx-gallery executes each ``docs/gallery/*/plot_*.py`` (an error aborts
    the build) and writes its page into ``docs/auto_examples`` (git-ignored),
    which is removed first so that every example runs afresh rather than
    being skipped as unchanged; so are autosummary's stale pages.
    """
    for module in ("sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme",
                   "matplotlib", "torch", "opacus"):
        pytest.importorskip(module)
    for generated in ("auto_examples", "generated"):
        shutil.rmtree(DOCS / generated, ignore_errors=True)
    html = tmp_path / "html"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(html)],
        capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-5000:]

    assert GALLERY, "no gallery examples found"
    for script in GALLERY:
        page = html / "auto_examples" / script.parent.name / (script.stem + ".html")
        text = page.read_text(encoding="utf-8")
        # the page shows what the script printed or displayed, not only its code
        assert re.search(r'class="(sphx-glr-script-out|output_subarea output_html)[ "]', text), (
            f"{script.name}: no output on its page")
        if "plt." in script.read_text() or "plot_marginals(" in script.read_text():
            assert re.search(r'<img [^>]*src="[^"]*sphx_glr_' + re.escape(script.stem), text), (
                f"{script.name}: its figure is not on the page")
    index = (html / "auto_examples" / "index.html").read_text(encoding="utf-8")
    assert all(script.stem in index for script in GALLERY)


def _statements(source: str) -> list[str]:
    """The top-level statements of a script, normalised by ``ast.unparse``."""
    return [ast.unparse(node) for node in ast.parse(source).body
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]


def test_readme_quickstart_is_what_the_gallery_quickstart_runs():
    """Every statement of the README's quickstart is run by the gallery's first example.

    Only the report's file name differs (the gallery writes into a temporary
    folder, not into the docs source tree).
    """
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Quickstart\n\n```python\n(.*?)```", readme, flags=re.DOTALL)
    assert block, "README has no Quickstart python block"
    script = (DOCS / "gallery" / "start" / "plot_adult_quickstart.py").read_text()
    readme_code = block.group(1).replace('write_report("report.html",', "write_report(path,")
    gallery_statements = set(_statements(script))
    missing = [s for s in _statements(readme_code) if s not in gallery_statements]
    assert not missing, missing
    # and the docs' quickstart page shows the README's code
    page = (DOCS / "quickstart.rst").read_text(encoding="utf-8")
    shown = re.search(r".. code-block:: python\n\n(.*?)\n\n\S", page, flags=re.DOTALL)
    assert shown and textwrap.dedent(shown.group(1)) + "\n" == block.group(1)


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
