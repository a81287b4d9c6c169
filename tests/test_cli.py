"""The ``dpsynth`` command line, through ``main([...])`` and one real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth import describe_domain, load
from sklearn_dpsynth.cli import main, read_table
from sklearn_dpsynth.registry import available_methods

ROOT = Path(__file__).resolve().parents[1]
DOMAIN = {"a": ["x", "y", "z"], "b": {"kind": "numeric", "bounds": [0, 10], "integer": True},
          "c": ["u", "v"]}


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], size=n)
    return pd.DataFrame({"a": a, "b": rng.integers(0, 11, size=n),
                         "c": np.where(a == "x", "u", rng.choice(["u", "v"], size=n))})


@pytest.fixture
def files(tmp_path):
    data = tmp_path / "data.csv"
    _table().to_csv(data, index=False)
    domain = tmp_path / "domain.json"
    domain.write_text(json.dumps(DOMAIN))
    return tmp_path, data, domain


def _fit(tmp_path, data, domain, *extra):
    model = tmp_path / "model.dpsynth"
    code = main(["fit", str(data), "--method", "independent", "--epsilon", "1", "--delta",
                 "1e-9", "--domain", str(domain), "-o", str(model), *extra])
    assert code == 0
    return model


def test_methods_lists_the_registry(capsys):
    assert main(["methods"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert names == available_methods()


def test_describe_prints_the_declaration_and_the_warning(files, capsys):
    _, data, _ = files
    assert main(["describe", str(data)]) == 0
    out, err = capsys.readouterr()
    with pytest.warns(Warning):
        expected = describe_domain(read_table(str(data)))
    assert json.loads(out) == json.loads(json.dumps(expected))
    # the text of "b" reads as whole numbers; never missing, so the draft has no missing code
    entry = json.loads(out)["b"]
    assert "missing" not in entry and "note" in entry
    assert {k: entry[k] for k in ("kind", "bounds", "integer")} == {
        "kind": "numeric", "bounds": [0, 10], "integer": True}
    assert "warning:" in err and "privacy" in err.lower()


def test_fit_sample_ledger_end_to_end(files, capsys):
    tmp_path, data, domain = files
    model_path = _fit(tmp_path, data, domain, "--param", "n_bins=8")
    out, _ = capsys.readouterr()
    model = load(model_path)
    eps, delta = model.privacy_ledger_.spent()
    assert eps == pytest.approx(1.0) and f"total: epsilon={eps:.6g}" in out
    assert model.n_bins == 8 and model.random_state is None
    assert main(["ledger", str(model_path)]) == 0
    assert f"total: epsilon={eps:.6g}, delta={delta:.3g}" in capsys.readouterr().out
    rows = tmp_path / "synthetic.csv"
    assert main(["sample", str(model_path), "-n", "120", "-o", str(rows),
                 "--condition", "a=y", "--condition", "b=3"]) == 0
    synthetic = pd.read_csv(rows)
    assert list(synthetic.columns) == ["a", "b", "c"] and len(synthetic) == 120
    assert (synthetic["a"] == "y").all() and (synthetic["b"] == 3).all()


def test_sample_to_stdout(files, capsys):
    tmp_path, data, domain = files
    model_path = _fit(tmp_path, data, domain)
    capsys.readouterr()
    assert main(["sample", str(model_path), "-n", "5"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "a,b,c"


def test_fit_with_a_seed_keeps_it_only_on_request(files):
    tmp_path, data, domain = files
    assert load(_fit(tmp_path, data, domain, "--random-state", "4")).random_state is None
    kept = _fit(tmp_path, data, domain, "--random-state", "4", "--keep-random-state")
    assert load(kept).random_state == 4


def test_report_command_writes_html(files):
    tmp_path, data, domain = files
    model_path = _fit(tmp_path, data, domain)
    synthetic = tmp_path / "s.csv"
    holdout = tmp_path / "h.csv"
    _table(seed=1).to_csv(holdout, index=False)
    assert main(["sample", str(model_path), "-n", "300", "-o", str(synthetic)]) == 0
    out = tmp_path / "report.html"
    assert main(["report", str(data), str(synthetic), "--holdout", str(holdout), "--model",
                 str(model_path), "--target", "c", "-o", str(out)]) == 0
    text = out.read_text()
    assert 'id="ledger"' in text and 'id="efficacy"' in text


@pytest.mark.parametrize("argv", [
    [], ["fit"], ["fit", "x.csv", "--epsilon", "one", "-o", "m"], ["sample"], ["nope"],
])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert "usage:" in capsys.readouterr().err


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("dpsynth: error:")]
    assert "Traceback" not in err and len(lines) == 1 and err.rstrip().endswith(lines[0])
    return lines[0]


def test_runtime_errors_exit_1_with_one_line(files, capsys):
    tmp_path, data, domain = files
    assert main(["sample", str(tmp_path / "missing.dpsynth")]) == 1
    assert "no such file" in _one_line_error(capsys)
    assert main(["fit", str(data), "--epsilon", "1", "--method", "mst", "--param", "bogus=1",
                 "-o", str(tmp_path / "m")]) == 1
    assert "bogus" in _one_line_error(capsys)
    assert main(["fit", str(data), "--epsilon", "-1", "--domain", str(domain),
                 "-o", str(tmp_path / "m")]) == 1
    assert "epsilon" in _one_line_error(capsys)
    assert main(["fit", str(data), "--epsilon", "1", "--method", "nosuch",
                 "-o", str(tmp_path / "m")]) == 1
    assert "nosuch" in _one_line_error(capsys)
    assert main(["ledger", str(data)]) == 1  # a CSV is not a model file
    assert "Not a sklearn-dpsynth model file" in _one_line_error(capsys)
    assert not (tmp_path / "m").exists()


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(Exception, match="no such file"):
        main(["--debug", "sample", str(tmp_path / "missing.dpsynth")])


def test_parquet_needs_pyarrow_or_round_trips(files, capsys):
    tmp_path, _, _ = files
    path = tmp_path / "data.parquet"
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        path.write_bytes(b"PAR1")
        assert main(["describe", str(path)]) == 1
        assert "pyarrow" in _one_line_error(capsys)
    else:
        _table().to_parquet(path)
        assert main(["describe", str(path)]) == 0


@pytest.mark.parametrize("command", [[], ["fit"], ["sample"], ["report"], ["describe"]])
def test_help_is_plain_text(command, capsys):
    assert main([*command, "--help"]) == 0
    text = capsys.readouterr().out
    assert "usage: dpsynth" in text
    for markup in (":func:", ":class:", "``", ".. "):
        assert markup not in text


def test_the_module_runs_as_a_process(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "sklearn_dpsynth.cli", "methods"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and "mst" in done.stdout
    done = subprocess.run([sys.executable, "-m", "sklearn_dpsynth.cli", "ledger",
                           str(tmp_path / "missing")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1 and done.stderr.startswith("dpsynth: error: no such file")


def _extras() -> dict:
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    section = config["options.extras_require"]
    return {name: {line.split(">")[0].split("=")[0].strip()
                   for line in section[name].splitlines() if line.strip()}
            for name in section}


def test_all_is_every_user_extra_and_no_dev_tool():
    extras = _extras()
    user = {name: pkgs for name, pkgs in extras.items() if name not in ("all", "dev", "test", "docs")}
    assert set(user) >= {"neural", "plots", "report", "parquet"}
    assert extras["all"] == set().union(*user.values())
    assert not extras["all"] & {"pytest", "pytest-xdist", "sphinx", "numpydoc"}
    assert extras["dev"] == extras["test"] | extras["docs"]


def test_the_console_script_points_at_main():
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    scripts = config["options.entry_points"]["console_scripts"]
    assert "dpsynth = sklearn_dpsynth.cli:console_main" in scripts


def test_fit_shows_progress_where_the_method_has_it(files, capsys):
    tmp_path, data, domain = files
    args = ["fit", str(data), "--method", "aim", "--epsilon", "1", "--domain", str(domain),
            "--param", "max_iter=20", "--param", "rounds=2", "-o", str(tmp_path / "m")]
    assert main(args) == 0
    assert load(tmp_path / "m").verbose is True
    assert main([*args, "--quiet"]) == 0
    assert load(tmp_path / "m").verbose is False


def test_module_demo_help_is_plain_text_and_says_what_n_samples_counts(capsys):
    from sklearn_dpsynth.__main__ import main as demo_main

    with pytest.raises(SystemExit) as done:
        demo_main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for markup in (":func:", ":class:", "``", ".. ", "~sklearn"):
        assert markup not in text
    flat = " ".join(text.split())
    assert "--n-samples N_SAMPLES number of TRAINING rows" in flat
    assert "not the number of synthetic rows" in flat
    assert main(["sample", "--help"]) == 0
    sample_help = " ".join(capsys.readouterr().out.split())
    assert "private estimate of the number of training rows" in sample_help


def _long_aim_model():
    from sklearn_dpsynth import AIMSynthesizer
    from sklearn_dpsynth.datasets import make_bayesnet

    data = make_bayesnet(n_samples=600, n_features=6, random_state=0)
    long_names = {c: f"{c}_a_rather_long_column_name_from_a_real_export" for c in data.frame}
    frame = data.frame.rename(columns=long_names)
    domain = {long_names[c]: entry for c, entry in data.domain.items()}
    return AIMSynthesizer(domain=domain, max_iter=20, rounds=6, random_state=0).fit(
        frame, epsilon=1.0)


def test_printed_ledger_fits_a_100_column_terminal(tmp_path, capsys):
    from sklearn_dpsynth import save

    model = _long_aim_model()
    path = tmp_path / "aim.dpsynth"
    save(model, path)
    assert main(["ledger", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100
    summary = model.privacy_ledger_.summary()
    assert summary["target"].str.len().max() > 60  # wrapping was needed
    entries = _printed_entries(lines)
    assert len(entries) == len(summary)
    for (target, cells), (_, row) in zip(entries, summary.iterrows()):
        assert target.replace(" ", "") == row["target"].replace(" ", "")
        assert cells[0] == row["mechanism"]
        assert cells[-1] == f"{row['cumulative_epsilon']:.3g}"
        assert cells[-3] == f"{row['rho']:.3g}"
    eps, delta = model.privacy_ledger_.spent()
    assert lines[-1] == f"total: epsilon={eps:.6g}, delta={delta:.3g}"


def _printed_entries(lines: list[str]) -> list[tuple[str, list[str]]]:
    """``(target, other cells)`` of each printed entry, wrapped targets joined."""
    width = lines[0].index("mechanism")
    entries: list[tuple[str, list[str]]] = []
    for line in lines[1:]:
        if line.startswith("noise:"):  # the legend after the table
            break
        if line.startswith("  "):  # the rest of a wrapped target
            target, cells = entries[-1]
            entries[-1] = (target + line.strip(), cells)
        elif not line.startswith("["):  # "[domain learning]": a group of entries
            entries.append((line[:width].strip(), line[width:].split()))
    return entries


def test_describe_names_a_numeric_column_with_unreadable_text(tmp_path, capsys):
    """A column drafted numeric though some of its text is no number: describe says
    so (a fit on the draft refuses those rows), naming the column, not the text."""
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": [str(v) for v in range(1, 40)] + ["secret?"],
                  "b": ["x", "y"] * 20}).to_csv(path, index=False)
    assert main(["describe", str(path)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["a"]["kind"] == "numeric"
    named = [line for line in err.splitlines() if "do not read so" in line]
    assert len(named) == 1 and "['a']" in named[0] and "secret" not in err


def test_sample_random_state_reproduces_the_rows(files, capsys):
    tmp_path, data, domain = files
    model_path = _fit(tmp_path, data, domain)
    outputs = []
    for seed in (3, 3, 4):
        out = tmp_path / f"rows-{len(outputs)}.csv"
        assert main(["sample", str(model_path), "-n", "200", "--random-state", str(seed),
                     "-o", str(out)]) == 0
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1] and outputs[0] != outputs[2]


def test_a_seed_given_as_a_param_is_not_dropped(files):
    """``--param random_state=0`` seeds the fit (it used to be overwritten by the
    unset ``--random-state``, so two such fits differed)."""
    tmp_path, data, domain = files
    marginals = []
    for name in ("a", "b"):
        model = tmp_path / f"{name}.dpsynth"
        assert main(["fit", str(data), "--method", "independent", "--epsilon", "1", "--domain",
                     str(domain), "--param", "random_state=0", "-o", str(model),
                     "--quiet"]) == 0
        marginals.append(load(model).sample(100, random_state=0).to_csv())
    assert marginals[0] == marginals[1]
    assert main(["fit", str(data), "--method", "independent", "--epsilon", "1", "--domain",
                 str(domain), "--param", "random_state=0", "--random-state", "1", "-o",
                 str(tmp_path / "c.dpsynth")]) == 1
