"""Our side of the harness against private-pgm's reference (benchmarks/reference.py).

Nothing here needs mbi or jax; the one end-to-end check of the driver runs
only when ``DPSYNTH_REF_PYTHON`` (an interpreter with mbi 1.0) and
``DPSYNTH_REF_DIR`` (private-pgm's ``mechanisms/`` scripts) are set.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess

import numpy as np
import pandas as pd
import pytest

from benchmarks import reference
from benchmarks.reference import (CodedTable, Task, check_codes, encode_texas, joint_tvd,
                                  make_ordered, marginal_scores, ordered_share, read_coded_table,
                                  summarise, texas_edges, write_coded_table)


def brute_tvd(a: pd.DataFrame, b: pd.DataFrame, columns: tuple, domain: dict) -> float:
    """TVD of one marginal by explicit enumeration of its cells."""
    total = 0.0
    for cell in itertools.product(*[range(domain[c]) for c in columns]):
        in_a = np.all([a[c].to_numpy() == v for c, v in zip(columns, cell)], axis=0).mean()
        in_b = np.all([b[c].to_numpy() == v for c, v in zip(columns, cell)], axis=0).mean()
        total += abs(in_a - in_b)
    return 0.5 * total


@pytest.fixture
def small_tables():
    rng = np.random.default_rng(3)
    domain = {"a": 2, "b": 3, "c": 4, "d": 2}
    real = pd.DataFrame({c: rng.integers(0, k, 300) for c, k in domain.items()})
    fake = pd.DataFrame({c: rng.integers(0, k, 250) for c, k in domain.items()})
    return real, fake, domain


def test_write_read_round_trip(tmp_path, small_tables):
    real, _, domain = small_tables
    csv_path, domain_path = write_coded_table(real, domain, tmp_path)
    assert json.loads(domain_path.read_text()) == domain  # the {column: size} mbi reads
    back, back_domain = read_coded_table(csv_path, domain_path)
    assert back_domain == domain
    pd.testing.assert_frame_equal(back, real.astype(np.int64))


def test_check_codes_names_column_not_values(small_tables):
    real, _, domain = small_tables
    bad = real.copy()
    bad.loc[0, "c"] = 17
    with pytest.raises(ValueError, match="'c'") as info:
        check_codes(bad, domain, "reference")
    assert "17" not in str(info.value)
    with pytest.raises(ValueError, match="lacks columns"):
        check_codes(real.drop(columns="b"), domain, "reference")


def test_marginal_scores_match_brute_force(small_tables):
    real, fake, domain = small_tables
    scores = marginal_scores(real, fake, domain, n_3way=10)
    pairs = list(itertools.combinations(domain, 2))
    triples = list(itertools.combinations(domain, 3))  # 4 <= 10: every triple
    assert scores["tvd2"] == pytest.approx(np.mean([brute_tvd(real, fake, p, domain)
                                                    for p in pairs]))
    assert scores["tvd3"] == pytest.approx(np.mean([brute_tvd(real, fake, t, domain)
                                                    for t in triples]))
    assert marginal_scores(real, real, domain) == {"tvd2": 0.0, "tvd3": 0.0}


def test_joint_tvd_matches_brute_force(small_tables):
    real, fake, domain = small_tables
    assert joint_tvd(fake, real) == pytest.approx(brute_tvd(real, fake, tuple(domain), domain))
    assert joint_tvd(real.sample(frac=1.0, random_state=0), real) == pytest.approx(0.0)


def test_ordered_table_and_its_check():
    frame = make_ordered(n_samples=500, n_columns=6, seed=1)
    assert ordered_share(frame) == 1.0
    # the share is the brute-force count of non-increasing rows
    rng = np.random.default_rng(0)
    noisy = pd.DataFrame(rng.integers(0, 2, (400, 6)), columns=frame.columns)
    expected = np.mean([all(r[i] >= r[i + 1] for i in range(5)) for r in noisy.to_numpy()])
    assert ordered_share(noisy) == pytest.approx(expected)
    assert 0 < expected < 0.5


def test_texas_encoding_uses_only_the_schema():
    schema = [{"name": "S", "type": "categorical", "i2s": ["x", "y", "INVALID"]},
              {"name": "M", "type": "continuous", "min": -10.0, "max": 1e6}]
    frame = pd.DataFrame({"S": ["y", "x", "INVALID", "y"], "M": [-10.0, 0.0, 1e6, 55.5]})
    codes, domain = encode_texas(frame, schema)
    assert domain == {"S": 3, "M": reference.N_TEXAS_BINS}
    assert codes["S"].tolist() == [1, 0, 2, 1]
    edges = texas_edges(-10.0, 1e6)
    assert np.all(np.diff(edges) > 0)
    assert edges[0] == pytest.approx(-10.0) and edges[-1] == pytest.approx(1e6)
    expected = np.clip(np.searchsorted(edges, frame["M"], side="right") - 1, 0, len(edges) - 2)
    assert codes["M"].tolist() == expected.tolist()
    assert codes["M"].iloc[0] == 0 and codes["M"].iloc[2] == reference.N_TEXAS_BINS - 1
    # neighbouring tables get the same domain: it depends on the schema only
    _, other = encode_texas(frame.iloc[:1], schema)
    assert other == domain
    with pytest.raises(ValueError, match="'S'"):
        encode_texas(pd.DataFrame({"S": ["zz"], "M": [1.0]}), schema)


def test_fit_ours_spends_the_budget_and_scores(small_tables):
    real, _, domain = small_tables
    table = CodedTable("small", real.iloc[:240], real.iloc[240:], domain, joint_tvd, "joint")
    task = Task("small", "mst", 1.0, 0, "ours")
    synthetic, info = reference.fit_ours(task, table, delta=1e-9)
    again, _ = reference.fit_ours(task, table, delta=1e-9)
    pd.testing.assert_frame_equal(synthetic, again)  # random_state = seed
    assert info["spent_epsilon"] == pytest.approx(1.0)
    assert np.isfinite(info["nll"]) and info["nll"] > 0
    assert check_codes(synthetic, domain, "ours").shape == (240, 4)
    # --ours-param reaches our synthesizer: without compression the fit differs
    params = reference._params(["compress=false", "early_stopping=null"])
    assert params == {"compress": False, "early_stopping": None}
    other, _ = reference.fit_ours(task, table, delta=1e-9, params=params)
    assert not other.equals(synthetic)
    with pytest.raises(SystemExit):
        reference.parse_args(["--ours-param", "early_stopping"])


def _record(tmp_path, side, seed, **figures):
    record = {"table": "t", "method": "mst", "workload": "2way", "epsilon": 1.0, "seed": seed,
              "side": side, "status": "ok", **figures}
    name = f"t-mst-eps1-seed{seed}-{side}.json"
    (tmp_path / name).write_text(json.dumps(record))


def test_summarise_means_status_and_speed(tmp_path):
    for seed, (fit, tvd) in enumerate([(1.0, 0.1), (3.0, 0.3)]):
        _record(tmp_path, "ours", seed, fit_seconds=fit, tvd2=tvd, tvd3=tvd, nll=2.0,
                highorder=0.5)
    _record(tmp_path, "reference", 0, fit_seconds=100.0, tvd2=0.5, tvd3=0.6, nll=None,
            highorder=0.25)
    record = {"table": "t", "method": "mst", "workload": "2way", "epsilon": 1.0, "seed": 1,
              "side": "reference", "status": "timeout"}
    (tmp_path / "t-mst-eps1-seed1-reference.json").write_text(json.dumps(record))
    table = summarise(tmp_path)
    lines = table.splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    row = dict(zip(header, [c.strip() for c in lines[2].strip("|").split("|")]))
    assert row["fit_seconds ours"] == "2.00" and row["tvd2 ours"] == "0.2000"
    assert row["tvd2 ref"] == "0.5000 (1/2)"  # one of the two seeds timed out
    assert row["nll ref"] == "timeout"
    assert row["speed-up"] == "50x"  # 100 s over a mean of 2 s
    assert row["seeds"] == "2"
    (tmp_path / "t-mst-eps1-seed1-reference.json").unlink()
    row = dict(zip(header, summarise(tmp_path).splitlines()[2].strip("|").split("|")))
    assert row["seeds"].strip() == "2 / 1" and row["tvd2 ref"].strip() == "0.5000"
    # --spread: the standard error over the seeds (0.1 and 0.3: SD 0.1414, SE 0.1),
    # none from a single seed
    row = dict(zip(header, summarise(tmp_path, spread=True).splitlines()[2].strip("|")
                   .split("|")))
    assert row["tvd2 ours"].strip() == "0.2000 ± 0.10000"
    assert row["tvd2 ref"].strip() == "0.5000"


def test_plan_skips_recorded_runs(tmp_path):
    args = reference.parse_args(["--tables", "ordered", "--methods", "mst,aim", "--seeds", "0,1",
                                 "--workload", "2way,3way", "--out", str(tmp_path)])
    tasks = reference.plan(args)
    assert len(tasks) == 2 * (1 + 2) * 2  # seeds x (mst + aim's two workloads) x sides
    assert tasks[0].side == "reference" and tasks[0].method == "aim"
    (tmp_path / f"{tasks[0].label}.json").write_text("{}")
    assert len(reference.plan(args)) == len(tasks) - 1
    with pytest.raises(SystemExit):
        reference.parse_args(["--tables", "nope"])


@pytest.mark.skipif(not (os.environ.get("DPSYNTH_REF_PYTHON") and os.environ.get("DPSYNTH_REF_DIR")),
                    reason="set DPSYNTH_REF_PYTHON (python with mbi 1.0) and DPSYNTH_REF_DIR")
def test_driver_end_to_end(tmp_path):  # pragma: no cover - needs the reference environment
    frame = make_ordered(n_samples=1000, n_columns=4, seed=0)
    domain = {c: 2 for c in frame.columns}
    csv_path, domain_path = write_coded_table(frame, domain, tmp_path)
    out, info = tmp_path / "synth.csv", tmp_path / "info.json"
    subprocess.run([os.environ["DPSYNTH_REF_PYTHON"], str(reference.DRIVER),
                    "--reference-dir", os.environ["DPSYNTH_REF_DIR"], "--data", str(csv_path),
                    "--domain", str(domain_path), "--method", "mst", "--epsilon", "10",
                    "--out", str(out), "--info", str(info)], check=True, capture_output=True)
    synthetic, _ = read_coded_table(out, domain_path)
    assert json.loads(info.read_text())["fit_seconds"] > 0
    assert ordered_share(synthetic) > 0.9  # the real share is 1; uniform rows give 5/16


def test_run_task_records_and_keeps_synthetic(tmp_path):
    args = reference.parse_args(["--tables", "ordered", "--sides", "ours", "--keep-synthetic",
                                 "--out", str(tmp_path)])
    task = reference.plan(args)[0]
    record = reference.run_task(task, args)
    stored = json.loads((tmp_path / f"{task.label}.json").read_text())
    assert stored["status"] == "ok" and stored["tvd2"] == pytest.approx(record["tvd2"])
    synthetic = pd.read_csv(tmp_path / f"{task.label}.csv.gz")
    table = reference.load_ordered()
    rescored = marginal_scores(table.train, synthetic, table.domain, args.n_3way)
    assert rescored["tvd2"] == pytest.approx(stored["tvd2"])
    assert ordered_share(synthetic) == pytest.approx(stored["highorder"])
    assert reference.plan(args) == []  # recorded: a rerun skips it
