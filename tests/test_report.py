"""The HTML report, parsed; and the thread limit of the metrics that train models."""

from __future__ import annotations

import base64
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
from sklearn_dpsynth.metrics._threads import thread_limit  # noqa: E402
from sklearn_dpsynth.report import build_report, write_report  # noqa: E402

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
