"""The HTML report, parsed; and the thread limit of the metrics that train models."""

from __future__ import annotations

import base64
import html
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_info

pytest.importorskip("matplotlib")

from sklearn_dpsynth import IndependentSynthesizer  # noqa: E402
from sklearn_dpsynth.metrics import (  # noqa: E402
    detection_score,
    evaluate,
    ml_efficacy,
    workload_error,
)
from sklearn_dpsynth.metrics.threads import thread_limit  # noqa: E402
from sklearn_dpsynth.domain import ColumnSpec  # noqa: E402
from sklearn_dpsynth.report import build_report, write_report  # noqa: E402
from sklearn_dpsynth.report._build import (  # noqa: E402
    _clip_cause, _model_range, _other_only_columns)

DOMAIN = {"a": ["x", "y", "z"], "b": (0, 10), "<c&>": ["u", "v"]}


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], size=n)
    return pd.DataFrame({"a": a, "b": rng.integers(0, 11, size=n),
                         "<c&>": np.where(a == "x", "u", rng.choice(["u", "v"], size=n))})


class _Page(HTMLParser):
    """Sections (by id), tables (as lists of rows of cell texts) and images."""

    def __init__(self):
        super().__init__()
        self.sections, self.tables, self.images, self.links = [], [], [], []
        self._row, self._cell = None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.sections.append(attrs.get("id"))
        elif tag == "table":
            self.tables.append((self.sections[-1] if self.sections else None, []))
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "img":
            self.images.append((self.sections[-1], attrs.get("src", "")))
        for name in ("href", "src"):
            if tag != "img" and name in attrs:
                self.links.append(attrs[name])

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr":
            self.tables[-1][1].append(self._row)


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


@pytest.fixture(scope="module")
def setting():
    train, holdout = _table(), _table(seed=1)
    model = IndependentSynthesizer(domain=DOMAIN).fit(train, epsilon=2.0)
    return train, holdout, model, model.sample(300, random_state=0)


@pytest.fixture(scope="module")
def full_page(setting):
    train, holdout, model, synth = setting
    return _parse(build_report(train, synth, holdout=holdout, model=model, target="a",
                               domain=DOMAIN))


def test_every_section_is_there(full_page):
    assert full_page.sections == ["overview", "columns", "associations", "marginals",
                                  "efficacy", "privacy-sanity", "ledger"]


def test_images_are_embedded_pngs(full_page):
    by_section = {}
    for section, src in full_page.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
        by_section[section] = by_section.get(section, 0) + 1
    assert by_section == {"columns": 3, "associations": 1}
    assert full_page.links == []  # nothing to fetch: the page is self-contained


def test_marginal_table_matches_the_metric(setting, full_page):
    train, _, _, synth = setting
    table = next(rows for section, rows in full_page.tables if section == "marginals")
    assert table[0] == ["k", "marginals", "mean TVD", "median TVD", "max TVD"]
    for row in table[1:]:
        k = int(row[0])
        expected = workload_error(train, synth, k, DOMAIN)
        assert float(row[2]) == pytest.approx(expected, abs=5e-4 * max(1, expected))


def test_ledger_total_is_the_models(setting, full_page):
    _, _, model, _ = setting
    eps, delta = model.privacy_ledger_.spent()
    rows = next(rows for section, rows in full_page.tables if section == "ledger")
    assert len(rows) == 1 + len(model.privacy_ledger_)
    overview = next(rows for section, rows in full_page.tables if section == "overview")
    budget = [r for r in overview if r[1].startswith("privacy budget")]
    assert budget == [["privacy", "privacy budget spent (epsilon, delta)",
                       f"({eps:.4g}, {delta:.3g})"]]


def test_efficacy_table_matches_the_metric(setting, full_page):
    train, holdout, _, synth = setting
    rows = next(rows for section, rows in full_page.tables if section == "efficacy")
    expected = ml_efficacy(synth, holdout, "a", domain=DOMAIN, random_state=0)
    assert rows[0] == ["model", "metric", "trained on synthetic", "trained on real"]
    assert [float(r[2]) for r in rows[1:]] == pytest.approx(expected["value"].tolist(), abs=1e-3)


def test_optional_sections_need_their_inputs(setting, tmp_path):
    train, _, _, synth = setting
    path = tmp_path / "r.html"
    write_report(path, train, synth, domain=DOMAIN)
    page = _parse(path.read_text(encoding="utf-8"))
    assert page.sections == ["overview", "columns", "associations", "marginals",
                             "privacy-sanity"]


def test_column_names_are_escaped(setting, full_page):
    train, _, _, synth = setting
    text = build_report(train, synth, domain=DOMAIN)
    assert "<c&>" not in text and "&lt;c&amp;&gt;" in text


@pytest.mark.parametrize("kwargs, message", [
    ({"target": "a"}, "holdout"),
    ({"target": "nope", "holdout": "same"}, "target"),
    ({"model": object()}, "fitted synthesizer"),
    ({"n_jobs": 0}, "n_jobs"),
])
def test_bad_arguments_are_named(setting, kwargs, message):
    train, _, _, synth = setting
    if kwargs.get("holdout") == "same":
        kwargs["holdout"] = train
    with pytest.raises(ValueError, match=message):
        build_report(train, synth, **kwargs)


# ------------------------------------------------------------- thread limits
def _openmp_threads():
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "openmp"]


def test_thread_limit_limits_the_openmp_pool():
    before = _openmp_threads()
    if not before:
        pytest.skip("no OpenMP runtime loaded")
    with thread_limit(1):
        assert set(_openmp_threads()) == {1}
    assert _openmp_threads() == before
    with thread_limit(None):
        assert _openmp_threads() == before


def test_n_jobs_changes_threads_not_results(setting):
    train, holdout, _, synth = setting
    train, holdout, synth = train.iloc[:80], holdout.iloc[:80], synth.iloc[:80]
    scores = [detection_score(train, synth, DOMAIN, cv=2, random_state=0, n_jobs=n)
              for n in (1, 2)]
    assert scores[0] == pytest.approx(scores[1], abs=1e-12)
    tables = [evaluate(train, holdout, synth, target="a", domain=DOMAIN, random_state=0,
                       metrics=["ml_efficacy"], efficacy_models=["boosting"], n_jobs=n)
              for n in (1, 2)]
    pd.testing.assert_frame_equal(tables[0], tables[1])


@pytest.mark.parametrize("n_jobs", [0, -2, 1.5, True, "2"])
def test_bad_n_jobs_is_refused(setting, n_jobs):
    train, holdout, _, synth = setting
    for call in (lambda: detection_score(train, synth, n_jobs=n_jobs),
                 lambda: ml_efficacy(synth, holdout, "a", n_jobs=n_jobs),
                 lambda: evaluate(train, holdout, synth, n_jobs=n_jobs)):
        with pytest.raises(ValueError, match="n_jobs"):
            call()


# ------------------------------------------------------ real tables: dates, gaps, collapses
def _dated(n=400, seed=0, as_text=False):
    """A table with a monthly date column, a category and a target."""
    rng = np.random.default_rng(seed)
    months = pd.date_range("2013-01-01", "2013-12-01", freq="MS")
    frame = pd.DataFrame({"month": rng.choice(months, n), "a": rng.choice(["x", "y"], n),
                          "t": rng.choice(["no", "yes"], n)})
    if as_text:
        frame["month"] = frame["month"].dt.strftime("%Y-%m-%d").astype(object)
    return frame


def _hand_tvd(real_seconds, synth_seconds, bins=20):
    """1-way TVD on 20 equal-width bins over the real range, computed by hand."""
    low, high = real_seconds.min(), real_seconds.max()
    width = (high - low) / bins
    def shares(values):
        codes = np.minimum(np.maximum(((values - low) // width).astype(int), 0), bins - 1)
        return np.bincount(codes, minlength=bins) / len(values)
    return 0.5 * np.abs(shares(real_seconds) - shares(synth_seconds)).sum()


def test_datetime_tvd_bins_seconds_on_the_real_range():
    rng = np.random.default_rng(3)
    real = pd.DataFrame({"when": pd.Timestamp("2013-01-01")
                         + pd.to_timedelta(rng.integers(0, 365 * 24, 500), unit="h")})
    synth = pd.DataFrame({"when": pd.Timestamp("2012-12-01")
                          + pd.to_timedelta(rng.integers(0, 400 * 24, 500), unit="h")})
    seconds = [(f["when"] - pd.Timestamp("1970-01-01")) / pd.Timedelta(seconds=1)
               for f in (real, synth)]
    expected = _hand_tvd(seconds[0].to_numpy(), seconds[1].to_numpy())
    assert workload_error(real, synth, 1) == pytest.approx(expected, abs=1e-12)
    # a time-zone-aware column is the same instants: the same bins and TVD
    aware = [f.assign(when=f["when"].dt.tz_localize("UTC").dt.tz_convert("Asia/Tokyo"))
             for f in (real, synth)]
    assert workload_error(*aware, 1) == pytest.approx(expected, abs=1e-12)


def test_report_reads_text_dates_as_dates_in_its_tvd():
    real, synth = _dated(seed=0, as_text=True), _dated(seed=1, as_text=True)
    page = _parse(build_report(real[["month"]], synth[["month"]]))
    table = next(rows for section, rows in page.tables if section == "marginals")
    seconds = [(pd.to_datetime(f["month"]) - pd.Timestamp("1970-01-01")) / pd.Timedelta(seconds=1)
               for f in (real, synth)]
    expected = _hand_tvd(seconds[0].to_numpy(), seconds[1].to_numpy())
    assert float(table[1][2]) == pytest.approx(expected, abs=5e-5)


def test_text_dates_and_numbers_become_datetimes_and_floats_in_every_table():
    from sklearn_dpsynth.report._build import _typed_tables

    real = _dated(as_text=True).assign(n=lambda f: np.arange(len(f)).astype(str))
    synth = real.copy()
    synth.loc[0, "month"], synth.loc[1, "n"] = "<other>", "<other>"
    typed_real, typed_synth, none = _typed_tables(real, synth, None, domain=None)
    assert none is None
    for frame in (typed_real, typed_synth):
        assert pd.api.types.is_datetime64_any_dtype(frame["month"].dtype)
        assert pd.api.types.is_float_dtype(frame["n"].dtype)
        assert frame["a"].dtype == real["a"].dtype
    assert typed_synth["month"].isna().sum() == 1 and typed_synth["n"].isna().sum() == 1
    assert (typed_synth["month"].iloc[1:] == typed_real["month"].iloc[1:]).all()


def test_monthly_dates_are_drawn_one_bar_per_month():
    from matplotlib import dates

    from sklearn_dpsynth.report._figures import _date_edges

    real = _dated(seed=0)["month"]
    synth = real + pd.to_timedelta(np.random.default_rng(0).integers(-20, 20, len(real)),
                                   unit="D")
    numbers = [dates.date2num(s.to_numpy()) for s in (real, synth)]
    edges = _date_edges(*numbers)
    assert len(edges) == 13  # twelve months, twelve bars
    months = np.unique(numbers[0])
    assert np.all((edges[:-1] < months) & (months < edges[1:]))
    gaps = np.diff(months)
    assert edges[0] == months[0] - gaps[0] / 2 and edges[-1] == months[-1] + gaps[-1] / 2
    # many dates: 30 equal bins over the real range
    days = dates.date2num((pd.Timestamp("2013-01-01") + pd.to_timedelta(
        np.arange(100), unit="D")).to_numpy())
    np.testing.assert_allclose(_date_edges(days, days + 50), np.linspace(days[0], days[-1], 31))


def test_report_runs_with_missing_synthetic_targets_and_counts_them():
    real, holdout, synth = _dated(seed=0), _dated(seed=1), _dated(seed=2)
    synth.loc[:36, "t"] = None  # 37 synthetic rows without a target
    page = _parse(build_report(real, synth, holdout=holdout, target="t"))
    overview = next(rows for section, rows in page.tables if section == "overview")
    counted = [row for row in overview if row[1].startswith("synthetic rows without a target")]
    assert counted == [["utility", "synthetic rows without a target (left out of ML efficacy)",
                        f"37 of {len(synth)}"]]
    rows = next(rows for section, rows in page.tables if section == "efficacy")
    expected = ml_efficacy(synth.dropna(), holdout, "t", random_state=0)
    assert [float(r[2]) for r in rows[1:]] == pytest.approx(expected["value"].tolist(), abs=1e-3)


def test_overview_flags_collapsed_columns():
    real = _dated(seed=0)
    synth = _dated(seed=1).assign(a="<other>", t="yes")
    text = build_report(real, synth)
    flags = text.split('<div class="flags">')[1].split("</div>")[0]
    assert "a: 100% of the synthetic values are &lt;other&gt;" in flags
    assert "t: the synthetic column holds a single value (2 distinct in the real one)" in flags
    assert "month" not in flags
    assert '<div class="flags">' not in build_report(real, _dated(seed=1))


def test_overview_flags_numeric_ranges_past_the_other_table():
    """A learned range far past the data (synthetic longitudes of -400) and one
    that cut off the data's tails (no synthetic latitude above 50 where 10% of
    the real ones are) are named in the overview, with their exact shares."""
    rng = np.random.default_rng(0)
    real = pd.DataFrame({"lon": rng.uniform(-170, -70, 1000),
                         "lat": np.r_[rng.uniform(25, 50, 900), rng.uniform(55, 70, 100)]})
    synth = pd.DataFrame({"lon": np.r_[real["lon"][:970], np.full(30, -400.0)],
                          "lat": np.r_[real["lat"][:900], real["lat"][:100]]})
    flags = build_report(real, synth).split('<div class="flags">')[1].split("</div>")[0]
    assert "lon: 3.0% of the synthetic values lie beyond the real range" in flags
    assert "lat: 10.0% of the real values lie beyond the synthetic range" in flags
    assert "may have cut them off" in flags  # no model: the report cannot tell why
    assert flags.count("<li>") == 2
    assert '<div class="flags">' not in build_report(real, real.sample(frac=1, random_state=1))


def test_a_tail_inside_the_models_declared_range_is_not_blamed_on_the_range():
    """Bounds declared wider than the data, synthetic values that stop short of the
    real top: the flag says the tail lies inside the model's range, not that the
    range cut it off."""
    rng = np.random.default_rng(0)
    real = pd.DataFrame({"lat": np.r_[rng.uniform(25, 50, 900), rng.uniform(55, 70, 100)],
                         "c": rng.choice(["a", "b"], 1000)})
    model = IndependentSynthesizer(
        domain={"lat": {"kind": "numeric", "bounds": [20, 75]},
                "c": {"kind": "categorical", "categories": ["a", "b"]}},
        random_state=0).fit(real, epsilon=1.0)
    synth = real.assign(lat=np.r_[real["lat"][:900], real["lat"][:100]])
    flags = build_report(real, synth, model=model).split('<div class="flags">')[1]
    flags = html.unescape(flags.split("</div>")[0])
    assert ("lat: 10.0% of the real values lie beyond the synthetic range (all inside the "
            "model's range [20, 75]") in flags
    assert "cut them off" not in flags


def test_exact_values_in_a_reached_end_bin_are_told_apart_from_a_tail():
    """60% exact zeros that the synthetic rows draw across the first bin (0.1 rather
    than 0): the flag names the end bin and points, not a tail without mass."""
    rng = np.random.default_rng(0)
    real = pd.DataFrame({"x": np.r_[np.zeros(600), rng.uniform(1, 9, 400)],
                         "c": rng.choice(["a", "b"], 1000)})
    model = IndependentSynthesizer(
        domain={"x": {"kind": "numeric", "bounds": [0, 10]},
                "c": {"kind": "categorical", "categories": ["a", "b"]}},
        random_state=0).fit(real, epsilon=1.0)
    assert 0.1 < model.domain_["x"].edges[1]  # 0.1 shares the first bin with 0
    synth = real.assign(x=np.r_[np.full(600, 0.1), real["x"][600:]])
    flags = build_report(real, synth, model=model).split('<div class="flags">')[1]
    flags = html.unescape(flags.split("</div>")[0])
    assert ("x: 60.0% of the real values lie beyond the synthetic range (all inside the "
            "model's range [0, 10]: 60.0% lie in the end bins that the synthetic values do "
            "reach") in flags
    assert "little or no mass" not in flags


def test_model_range_of_an_integer_column_is_its_first_and_last_integer():
    rng = np.random.default_rng(0)
    real = pd.DataFrame({"n": rng.integers(0, 11, 500), "x": rng.uniform(0, 1, 500)})
    model = IndependentSynthesizer(
        domain={"n": {"kind": "numeric", "bounds": [0, 10], "integer": True},
                "x": {"kind": "numeric", "bounds": [0, 1]}},
        random_state=0).fit(real, epsilon=1.0)
    assert model.domain_["n"].edges[0] == -0.5  # cut at half-integers
    assert _model_range(model, "n") == (0.0, 10.0)
    assert _model_range(model, "x") == (0.0, 1.0)
    assert _model_range(model, "absent") is None and _model_range(None, "n") is None


def test_clip_cause_names_the_share_outside_the_models_range():
    values = np.r_[np.linspace(0, 9, 90), np.linspace(11, 20, 10)]
    synth = np.linspace(0, 9, 50)
    assert _clip_cause(values, (0.0, 10.0), synth).startswith(
        "(10.0% lie outside the model's range [0, 10], which cut them off")
    assert _clip_cause(values, (0.0, 20.0), synth).startswith(
        "(all inside the model's range [0, 20]")
    assert "may have cut them off" in _clip_cause(values, None, synth)


def test_a_column_declared_without_categories_is_not_blamed_on_the_budget():
    """A column the domain declares '<other>' only (as describe drafts
    identifiers) is all '<other>' by declaration, not for want of budget."""
    real = _dated(seed=0).assign(a=[f"id{i}" for i in range(400)])
    synth = _dated(seed=1).assign(a="<other>")
    domain = {"a": {"kind": "category", "categories": [], "other": True}}
    flags = build_report(real, synth, domain=domain).split('<div class="flags">')[1]
    assert "a: declared with no category listed, so every synthetic value is &lt;other&gt;" in flags
    assert "too small a budget" not in flags.split("</div>")[0]


def test_a_column_modelled_as_other_alone_is_left_out_of_the_scores():
    """An identifier declared '<other>' only (all synthetic values '<other>')
    would score a 1-way TVD of 1; the report leaves it out of every score and
    says so, and its scores equal those of the tables without that column.
    A fitted model's own '<other>'-only columns are left out the same way."""
    real = _dated(seed=0).assign(a=[f"id{i}" for i in range(400)])
    synth = _dated(seed=1).assign(a="<other>")
    domain = {"a": {"kind": "category", "categories": [], "other": True}}
    with_id = build_report(real, synth, domain=domain)
    without = build_report(real.drop(columns="a"), synth.drop(columns="a"))
    scores = [page.split('<table class="scores">')[1].split("</table>")[0]
              for page in (with_id, without)]
    assert scores[0] == scores[1]
    flags = with_id.split('<div class="flags">')[1].split("</div>")[0]
    assert "a: declared with no category listed, so every synthetic value is &lt;other&gt;" in flags
    assert "left out of every score" in flags and flags.count("<li>a:") == 1
    assert "left out of every score" not in build_report(real, synth)

    class Model:
        privacy_ledger_ = None
        domain_ = [ColumnSpec("a", "categorical", categories=[], other=True)]
    assert _other_only_columns(real.columns, None, Model(), target=None) == ["a"]
    assert _other_only_columns(real.columns, None, Model(), target="a") == []
