"""benchmarks.tabpe: one of our runs end to end, the summary, and the Tab-PE driver's public info."""

import argparse
import enum
import json

import pytest

from benchmarks import tabpe, tabpe_driver


def test_one_run_is_scored_and_summarised(tmp_path):
    options = argparse.Namespace(data_dir=None, delta=1e-9, n_3way=20, out=str(tmp_path))
    record = tabpe.run_one("ordered", "independent", 1.0, 0, options)
    assert record["status"] == "ok" and record["n_synthetic"] == record["n_train"] == 16000
    assert 0 <= record["tvd2"] <= record["tvd3"] <= 1 and 0 <= record["highorder"] <= 1
    saved = json.loads((tmp_path / "ordered-independent-eps1-seed0.json").read_text())
    assert saved["tvd2"] == pytest.approx(record["tvd2"])
    table = tabpe.summarise(tmp_path).splitlines()
    assert table[0].startswith("| table | method |") and len(table) == 3
    assert table[2].startswith("| ordered | independent | 1 | 1 |")


def test_driver_takes_categories_from_the_public_domain_only():
    kinds = enum.Enum("Kinds", {"CATEGORICAL": "cat"})
    info = tabpe_driver.column_info({"a": 3, "b": 2}, kinds)
    assert info == {"a": {"type": kinds.CATEGORICAL, "categories": [0, 1, 2]},
                    "b": {"type": kinds.CATEGORICAL, "categories": [0, 1]}}


def test_unknown_methods_are_refused():
    with pytest.raises(SystemExit, match="unknown methods"):
        tabpe.main(["--methods", "pe,gan"])
