"""``benchmarks.draft_quality``: fits on describe's unedited draft of a CSV file."""

import json

import numpy as np
import pandas as pd

from benchmarks.draft_quality import main, split


def _table(path, n=400):
    rng = np.random.default_rng(0)
    zero = rng.random(n) < 0.3
    pd.DataFrame({"rate": rng.choice([0.0, 0.25, 0.95], n),
                  "lpi": np.where(zero, 0.0, rng.uniform(2.5, 7.2, n)),
                  "group": rng.choice(["a", "b"], n)}).to_csv(path, index=False)


def test_split_is_a_fixed_shuffle_of_every_row(tmp_path):
    frame = pd.DataFrame({"x": np.arange(50)})
    train, holdout = split(frame, 40)
    assert len(train) == 40 and len(holdout) == 10
    assert sorted(pd.concat([train, holdout])["x"]) == list(range(50))
    assert split(frame, 40)[0].equals(train) and not train["x"].is_monotonic_increasing


def test_run_prints_one_row_per_method_and_budget_and_the_floor(tmp_path, capsys):
    path = tmp_path / "t.csv"
    _table(path)
    main(["run", "--data", str(path), "--epsilons", "1,3", "--seeds", "0",
          "--methods", "independent", "--train", "300"])
    out = capsys.readouterr().out.splitlines()
    rows = [line.split("|") for line in out if line.startswith("| independent")]
    assert [r[2].strip() for r in rows] == ["1", "3"]
    assert all(0.0 <= float(r[3]) <= float(r[4]) <= 1.0 for r in rows)  # mean <= worst
    assert out[-1].startswith("holdout against training rows: 2-way TVD")
    # a given declaration is fitted instead of the draft
    draft = tmp_path / "d.json"
    draft.write_text(json.dumps({"rate": {"categories": [0.0, 0.25, 0.95]},
                                 "lpi": {"kind": "numeric", "bounds": [0, 7.2]},
                                 "group": ["a", "b"]}))
    main(["run", "--data", str(path), "--draft", str(draft), "--epsilons", "1", "--seeds",
          "0", "--methods", "independent", "--train", "300"])
    assert "| independent | 1 |" in capsys.readouterr().out
