"""The reference harness's census table (one-year ages from adult_raw) and its score."""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.reference import CENSUS_COLUMNS, census_score, load_census

DATA_DIR = Path(os.environ.get("DPSYNTH_DATA",
                               Path(__file__).resolve().parents[1].parent / "shared" / "data"))


def _frame(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 74, n)
    return pd.DataFrame({"age": age, "sex": (age + rng.integers(0, 3, n)) % 2,
                         "income": rng.integers(0, 2, n)})


def test_census_score_is_1000_on_the_same_rows_and_matches_a_direct_computation():
    real = _frame()
    assert census_score(real.sample(frac=1, random_state=1), real) == pytest.approx(1000.0)
    fake = _frame(seed=1)
    # direct: ages cut at the 5%..95% quantiles of the real ages, TVD of every pair
    edges = np.unique(np.quantile(real["age"], np.arange(1, 20) / 20))
    binned = [f.assign(age=np.searchsorted(edges, f["age"], side="right")) for f in (real, fake)]
    tvds = []
    for a, b in [("age", "sex"), ("age", "income"), ("sex", "income")]:
        p, q = (f.groupby([a, b]).size() / len(f) for f in binned)
        p, q = p.align(q, fill_value=0.0)
        tvds.append(0.5 * np.abs(p - q).sum())
    assert census_score(fake, real) == pytest.approx(1000 * (1 - np.mean(tvds)))
    assert census_score(fake, real) < 1000


@pytest.mark.skipif(not (DATA_DIR / "adult_raw" / "adult.data").exists(),
                    reason="shared adult_raw data missing")
def test_census_table_has_one_year_ages_and_27k_training_rows():
    table = load_census(DATA_DIR)
    assert list(table.train.columns) == CENSUS_COLUMNS
    assert len(table.train) == 27_146 and len(table.test) == 3_016
    assert table.domain["age"] == 74
    for column, size in table.domain.items():
        codes = pd.concat([table.train[column], table.test[column]])
        assert codes.min() >= 0 and codes.max() < size
