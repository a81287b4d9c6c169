"""Private domain learning: refusal without signal, learned ranges, heavy-tailed bins."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth import (DomainInferenceError, DomainInferenceWarning,
                             IndependentSynthesizer, TableDiscretizer)
from sklearn_dpsynth import _domain_learning
from sklearn_dpsynth.domain import numeric_edges, numeric_scale, spec_from_declaration
from sklearn_dpsynth.preprocessing import learn_domain
from sklearn_dpsynth.privacy import PrivacyLedger


def _learn(frame, seed=0, epsilon=1.0, share=0.1, **kwargs):
    """learn_domain as a synthesizer's fit calls it; (domain, ledger)."""
    ledger = PrivacyLedger(epsilon, 1e-9)
    domain = learn_domain(frame, None, rng=np.random.default_rng(seed),
                          budget=ledger.share(share * ledger.rho_budget, share * 1e-9),
                          **kwargs)
    return domain, ledger


def _entries(ledger):
    """What the ledger shows of each entry: target, mechanism and costs."""
    return [(e.target, e.mechanism, e.rho, e.delta, e.noise_scale, e.sensitivity)
            for e in ledger.entries]


def _outcome(call):
    try:
        return call(), None
    except Exception as error:  # noqa: BLE001 - class and message are compared
        return None, (type(error), str(error))


def _medium_table(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "amount": rng.lognormal(8, 1.5, n),
        "month": rng.integers(1, 13, n),
        "year": rng.integers(2000, 2021, n),
        "when": pd.Timestamp("2019-06-01") + pd.to_timedelta(rng.integers(0, 400, n), "D"),
        "city": rng.choice(["Lyon", "Nice", "Paris"], n),
    })


# ------------------------------------------------------------ neighbours
@pytest.mark.parametrize("row", [0, 17])
def test_neighbours_spend_the_same_entries(row):
    """D and D' one row apart, the same noise: the same ledger entries (targets,
    mechanisms, costs) on every learning path (ranges, datetimes, categories)."""
    frame = _medium_table()
    neighbour = frame.drop(index=row).reset_index(drop=True)
    (domain_a, ledger_a), (domain_b, ledger_b) = _learn(frame), _learn(neighbour)
    assert _entries(ledger_a) == _entries(ledger_b)
    targets = [e.target for e in ledger_a.entries]
    levels = ("blocks", "cells", "sub-cells")
    for column in ("amount", "month", "year", "when"):
        # an integer or datetime column also selects its bounds (a fact of its dtype)
        selected = ("bounds",) if column in ("month", "year", "when") else ()
        assert [t for t in targets if t.startswith(f"range of {column!r}")] == \
            [f"range of {column!r}: {level}" for level in levels + selected]
    assert domain_a.columns == domain_b.columns


@pytest.mark.parametrize("row", [0, 9_999])
def test_neighbours_of_a_lattice_spend_the_same_entries(row):
    """The selection of an integer column's bounds: D and D' one row apart (the
    maximum's row for ``row=0``) spend the same entries: one exponential
    mechanism of sensitivity 1 per integer column, whether its outcome is
    used or not."""
    frame = _lattice_table()
    frame.loc[0, "wind_dir"] = 360
    neighbour = frame.drop(index=row).reset_index(drop=True)
    (_, ledger_a), (_, ledger_b) = _learn(frame), _learn(neighbour)
    assert _entries(ledger_a) == _entries(ledger_b)
    bounds = [e for e in ledger_a.entries if e.target.endswith(": bounds")]
    assert [e.target for e in bounds] == [f"range of {c!r}: bounds"
                                          for c in ("year", "wind_dir", "day")]
    assert all(e.mechanism == "exponential" and e.sensitivity == 1.0 for e in bounds)


def test_whole_valued_float_column_is_not_integer_in_the_ledger():
    """Integer or not is the dtype's word, never the values': a float column
    holding whole numbers only, and its neighbour with one more row holding
    a fraction, spend the same entries, with no selection of bounds; the same
    column as integers spends one (the dtype decides, not the values)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"count": rng.integers(0, 40, 3000).astype(float)})
    neighbour = pd.concat([frame, pd.DataFrame({"count": [2.5]})], ignore_index=True)
    (domain_a, ledger_a), (domain_b, ledger_b) = _learn(frame), _learn(neighbour)
    assert _entries(ledger_a) == _entries(ledger_b)
    assert not any(e.target.endswith(": bounds") for e in ledger_a.entries)
    assert not domain_a["count"].integer and not domain_b["count"].integer
    _, ledger_int = _learn(frame.astype("int64"))
    assert [e.target for e in ledger_int.entries if e.target.endswith(": bounds")] == [
        "range of 'count': bounds"]


def _delay_table(n=5000, seed=3):
    """Delays in minutes as a flights table holds them: exponential (scale 40)
    from -15, the largest a few hundred minutes, inside the decade
    [100, 1000); as floats (two decimals) and as whole minutes (Int64)."""
    delays = np.round(np.random.default_rng(seed).exponential(40, n) - 15, 2)
    return pd.DataFrame({"delay": delays,
                         "minutes": pd.array(np.round(delays).astype(int), dtype="Int64")})


@pytest.mark.parametrize("change", ["drop the largest", "add an outlier"])
def test_neighbours_of_a_heavy_tail_spend_the_same_entries(change):
    """D and D' one row apart, the same noise, at the row the selection of the
    bounds reads most (the largest delay, or a new one a thousand times
    larger): the same ledger entries (one exponential mechanism of
    sensitivity 1 for the integer column, none for the float one), the same
    schema (kinds, integer and missing flags) and the same dtypes sampled."""
    frame = _delay_table()
    if change == "drop the largest":
        neighbour = frame.drop(index=int(frame["delay"].idxmax())).reset_index(drop=True)
    else:
        outlier = pd.DataFrame({"delay": [4e5], "minutes": pd.array([400_000], dtype="Int64")})
        neighbour = pd.concat([frame, outlier], ignore_index=True)
    (domain_a, ledger_a), (domain_b, ledger_b) = _learn(frame), _learn(neighbour)
    assert _entries(ledger_a) == _entries(ledger_b)
    bounds = [e for e in ledger_a.entries if e.target.endswith(": bounds")]
    assert [(e.target, e.mechanism, e.sensitivity) for e in bounds] == [
        ("range of 'minutes': bounds", "exponential", 1.0)]
    for column in frame.columns:
        a, b = domain_a[column], domain_b[column]
        assert (a.kind, a.integer, a.missing, a.value_type) == \
            (b.kind, b.integer, b.missing, b.value_type)
    samples = [IndependentSynthesizer(random_state=0).fit(X, epsilon=1.0).sample(50)
               for X in (frame, neighbour)]
    assert list(samples[0].dtypes) == list(samples[1].dtypes) == list(frame.dtypes)


def test_neighbours_refused_with_the_same_error():
    """Nothing learnable on 200 rows: D and D' (one more row) are refused with
    the same class and message, naming the columns and what was spent."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(0, 1, 200),
                          "c": rng.choice([f"v{i}" for i in range(40)], 200)})
    neighbour = pd.concat([frame, pd.DataFrame({"x": [3.0], "c": ["v-new"]})],
                          ignore_index=True)
    errors = [_outcome(lambda X=X: _learn(X))[1] for X in (frame, neighbour)]
    assert errors[0] is not None and errors[0] == errors[1]
    kind, message = errors[0]
    assert kind is DomainInferenceError and issubclass(kind, ValueError)
    assert "['x', 'c']" in message and "domain=" in message and "dpsynth describe" in message
    assert "preprocessing='private-lenient'" in message
    ledger = PrivacyLedger(1.0, 1e-9)
    with pytest.raises(DomainInferenceError):
        learn_domain(frame, None, rng=np.random.default_rng(0),
                     budget=ledger.share(0.1 * ledger.rho_budget, 1e-10))
    assert f"epsilon={ledger.spent()[0]:.4g} of the budget epsilon=1 is spent" in \
        str(_outcome(lambda: _learn(frame))[1][1])
    # refused before the sub-cells: blocks and cells of x, categories of c only
    assert [e.target for e in ledger.entries] == [
        "range of 'x': blocks", "range of 'x': cells", "categories of 'c'",
        "present values of 'c'"]


def _identifier_table(n, seed=0):
    """A city column (three values) and a plane-registration-like identifier
    (no value holds more than a few rows)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"city": rng.choice(["Lyon", "Nice", "Paris"], n),
                         "plane": [f"N{v:05d}" for v in rng.integers(0, n // 2, n)]})


@pytest.mark.parametrize("row", [0, 11])
def test_neighbours_get_the_same_long_tail_decision(row):
    """5,000 rows, an identifier column: D and D' one row apart spend the same
    ledger entries (the noisy number of present values of every categorical
    column, whatever is kept) and, with the same noise, get the same domain:
    the identifier as '<other>' alone (plus its missing code), with one
    DomainInferenceWarning naming it, not a refusal."""
    frame = _identifier_table(5000)
    neighbour = frame.drop(index=row).reset_index(drop=True)
    out = []
    for table in (frame, neighbour):
        with pytest.warns(DomainInferenceWarning, match=r"\['plane'\].*identifier-like"):
            out.append(_learn(table, share=0.3))
    (domain_a, ledger_a), (domain_b, ledger_b) = out
    assert _entries(ledger_a) == _entries(ledger_b)
    assert [e.target for e in ledger_a.entries] == [
        "categories of 'city'", "present values of 'city'",
        "categories of 'plane'", "present values of 'plane'"]
    assert domain_a.to_dict() == domain_b.to_dict()
    plane = domain_a["plane"]
    assert plane.categories == [] and plane.other and plane.missing  # <other>, missing code
    assert domain_a["city"].categories == ["Lyon", "Nice", "Paris"]


def test_the_long_tail_decision_reads_only_the_noisy_present_count(monkeypatch):
    """No value kept: the column is '<other>' alone exactly when the released
    present count reaches _LONG_TAIL_RATIO times the selection threshold plus
    two noise standard deviations, else the fit is refused
    (the few-hundred-row case); the exact count plays no part."""
    frame = _identifier_table(300)[["plane"]]
    budget = {}

    def fixed_count(self, n_present, target):
        histogram = self.categorical()
        budget["surely kept"] = histogram.threshold + 2 * histogram.sigma
        return released[0]
    monkeypatch.setattr(_domain_learning._Budget, "noisy_present_count", fixed_count)
    released = [1e9]
    with pytest.warns(DomainInferenceWarning, match="identifier-like"):
        domain, _ = _learn(frame)
    assert domain["plane"].categories == []
    needed = _domain_learning._LONG_TAIL_RATIO * budget["surely kept"]
    released[0] = math.ceil(needed) - 1
    with pytest.raises(DomainInferenceError, match=r"\['plane'\]"):
        _learn(frame)
    released[0] = math.ceil(needed)
    with pytest.warns(DomainInferenceWarning, match="identifier-like"):
        _learn(frame)


def test_a_small_table_with_an_identifier_is_refused():
    """200 rows, two columns: the identifier keeps nothing and its noisy present
    count is below the long-tail ratio: refused, naming the column."""
    with pytest.raises(DomainInferenceError, match=r"\['plane'\]"):
        _learn(_identifier_table(200), share=0.3)


def test_the_refusal_reads_only_the_noisy_counts(monkeypatch):
    """With the noise mechanisms replaced by fixed outputs, two unrelated tables
    of the same schema get the same decision: the same error, or the same domain."""
    rng = np.random.default_rng(1)
    tables = [pd.DataFrame({"a": rng.lognormal(3, 1, 3000), "b": rng.normal(0, 1, 3000)}),
              pd.DataFrame({"a": rng.uniform(-5e6, 5e6, 40), "b": np.full(40, 7.0)})]

    def released(value):
        def noisy_histogram(self, counts, target):
            out = np.zeros(counts.size)
            out[counts.size // 2] = value  # a fixed cell, whatever the data
            return out
        return noisy_histogram

    monkeypatch.setattr(_domain_learning._Budget, "noisy_histogram", released(0.0))
    errors = [_outcome(lambda X=X: _learn(X))[1] for X in tables]
    assert errors[0] is not None and errors[0] == errors[1]
    monkeypatch.setattr(_domain_learning._Budget, "noisy_histogram", released(1e6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainInferenceWarning)  # a cell at 0, as chosen
        domains = [_outcome(lambda X=X: _learn(X)[0])[0] for X in tables]
    assert domains[0].to_dict() == domains[1].to_dict()


# -------------------------------------------------------------- fidelity
def test_lognormal_bounds_hold_the_2nd_to_98th_percentiles_and_stay_near_the_data():
    """5,000 lognormal values, 30 noise draws: the learned bounds hold the 2nd to
    98th percentiles in at least 90% of the draws, and 93% of the rows in every
    one; they stay within a decade of the data, the upper one within the
    largest value plus 5% of the range in at least 80% of the draws (a thin top
    percent below the noise is clipped rather than the range widened to the
    next decade), and get log-spaced bins."""
    held = near = 0
    for seed in range(30):
        values = np.random.default_rng(seed).lognormal(8, 1.5, 5000)
        domain, _ = _learn(pd.DataFrame({"x": values}), seed=seed)
        low, high = domain["x"].edges[[0, -1]]
        held += low <= np.quantile(values, 0.02) and high >= np.quantile(values, 0.98)
        near += high <= values.max() + 0.05 * (values.max() - values.min())
        assert np.mean((values >= low) & (values <= high)) >= 0.93, seed
        assert low >= 10 and high <= 1e6, seed
        steps = np.diff(np.log(domain["x"].edges))
        assert np.allclose(steps, steps[0]) and steps.size >= 32
    assert held >= 27 and near >= 24


def test_an_integer_tail_ending_inside_a_decade_is_not_widened_to_its_edge():
    """5,000 delays in whole minutes (the largest 290-420), 30 noise draws: both
    learned bounds lie inside the real range widened by 5% of its width on
    each side (issue 23's criterion for synthetic values) in at least 26 draws
    (measured 29/30; 22/30 before the selection of the bounds could move an
    end past the quiet cells of its block: the high end stayed at a cell or
    decade edge such as 1000), and hold 97% of the rows on average and 92%
    in every draw (measured 97.4% and 92.5%; 97.5% and 92.5% before)."""
    near, inside = 0, []
    for seed in range(30):
        values = _delay_table(seed=100 + seed)[["minutes"]]
        domain, _ = _learn(values, seed=seed)
        low, high = domain["minutes"].edges[[0, -1]]
        x = values["minutes"].to_numpy(dtype=float)
        margin = 0.05 * (x.max() - x.min())
        near += low >= x.min() - margin and high <= x.max() + margin
        inside.append(np.mean((x >= low) & (x <= high)))
    assert near >= 26, near
    assert np.mean(inside) >= 0.97 and np.min(inside) >= 0.92, inside


def test_concentrated_integer_columns_get_their_own_range():
    """20,000 rows: months 1..12 and years 2000..2020 are learned as those
    integers (not the grid cells [10, 15) or [2000, 2500) around them), and
    sampled values are integers inside them."""
    frame = _medium_table(20_000)[["month", "year"]]
    synth = IndependentSynthesizer(random_state=0).fit(frame, epsilon=1.0)
    month, year = synth.domain_["month"], synth.domain_["year"]
    assert month.edges[0] == 0.5 and month.edges[-1] == 12.5 and month.n_bins == 12
    assert 1999.5 == year.edges[0] and 2020.5 <= year.edges[-1] <= 2030.5
    out = synth.sample(5000)
    for column in ("month", "year"):
        values = out[column].to_numpy()
        spec = synth.domain_[column]
        assert out[column].dtype == frame[column].dtype
        assert values.min() >= spec.edges[0] and values.max() <= spec.edges[-1]


class _RecordingShare:
    """Stands in for a ledger share: keeps the scores a selection is given."""

    def __init__(self):
        self.scores = []

    def select(self, scores, **kwargs):
        self.scores.append(np.asarray(scores, dtype=float))
        return 0


@pytest.mark.parametrize("same_cell, across, kind", [
    (False, False, "integer"), (True, False, "integer"), (False, True, "integer"),
    (False, True, "float"), (False, False, "datetime"), (True, False, "datetime"),
    (False, True, "datetime")])
def test_bound_selection_scores_move_by_at_most_one_between_neighbours(same_cell, across, kind):
    """The selection's scores (clipped rows plus a public penalty) of D and of
    every D' one row apart differ by at most 1 for every candidate pair, the
    sensitivity it is charged for: also when both ends lie in one cell (a row
    is never below the low bound and above the high one), and when the
    candidates run inward across whole cells (``across``), for an integer, a
    float or a datetime column (whose end cells are cut in days)."""
    if kind == "datetime":
        grid = _domain_learning._datetime_grid()
        values = pd.to_datetime(["2013-06-01", "2013-06-01" if same_cell else "2009-03-01"])
        cells = grid.cell_of(_domain_learning._datetimes_as_seconds(values))
        step = _domain_learning._DAY
    else:
        grid = _domain_learning._numeric_grid()
        cells = grid.cell_of(np.array([305.0, 305.0 if same_cell else 25.0]))
        step = 1.0 if kind == "integer" else None
    limits = (int(cells[1]) + 3, int(cells[0]) - 2) if across else None
    found = _domain_learning._Range(0.0, 0.0, int(cells[1]), int(cells[0]), 0.0, 0.0,
                                    limits=limits)
    sub, low_part, high_part = _domain_learning._sub_grid(grid, found, step)
    if kind == "datetime":  # one part per day of the end cells (calendar years)
        assert np.allclose(sub.right[high_part] - sub.left[high_part], step)
    low_candidates, high_candidates = _domain_learning._end_candidates(
        grid, found, sub, low_part, high_part)
    assert (low_candidates.size > low_part.size) == across
    counts = np.random.default_rng(0).integers(0, 4, sub.left.size).astype(float)
    budget = _domain_learning._Budget(_RecordingShare(), np.random.default_rng(0), 1e-4, 1e-9)
    edges = (grid.right[found.low_cell], grid.left[found.high_cell])

    def scores(table_counts, prior, aims):
        budget.share.scores.clear()
        _domain_learning._select_ends(table_counts, low_candidates, high_candidates, sub,
                                      400.0 * (step or 1.0), budget, target="t",
                                      cell_edges=edges,
                                      priors=(prior, 10.0), aims=aims)
        return budget.share.scores[0]

    # the lattice pull of a constant column (:func:`_enclosed_span`: one integer
    # of the span 400) as well as the default one; without aims and with the
    # aimed score ``-|clipped - aim|`` of a datetime lattice (aims near the
    # clipped counts, where the absolute value bends)
    for prior in (50.0, 50.0 * 400.0):
        for aims in ((0.0, 0.0), (2.0, 2.0), (1.5, 3.0)):
            reference = scores(counts, prior, aims)
            for cell in range(sub.left.size):
                for change in (-1, 1):
                    if counts[cell] + change >= 0:
                        neighbour = counts.copy()
                        neighbour[cell] += change
                        moved = np.abs(scores(neighbour, prior, aims) - reference)
                        assert np.max(moved) <= 1.0 + 1e-9


def _lattice_table(n=10_000, seed=7):
    """Integer columns as ``dpsynth fit`` reads a weather table: a year that is
    always 2013, wind directions on a lattice of tens in [0, 360] (about 270
    rows each) and the days of the month of dates spread over 2013 (days 30
    and 31 thinner: about 300 and 190 rows)."""
    rng = np.random.default_rng(seed)
    dates = pd.Timestamp("2013-01-01") + pd.to_timedelta(rng.integers(0, 365, n), "D")
    return pd.DataFrame({"year": pd.array(np.full(n, 2013), dtype="Int64"),
                         "wind_dir": pd.array(10 * rng.integers(0, 37, n), dtype="Int64"),
                         "day": pd.array(dates.day, dtype="Int64")})


def test_a_constant_year_and_integer_lattices_stay_inside_the_data():
    """10,000 rows: the constant year is learned as its one integer (one bin: no
    2014 can be sampled), and the wind directions and days of the month get an
    upper bound within 5% of their range above their maximum (378, 32) in at
    least 16 of 20 draws (measured: 18/20 and 17/20, 18/20 and 18/20 before the
    selection could also move an end past quiet cells; the sub-cell histogram
    alone, before the selection of the bounds, gave 7/20 and 10/20: the
    per-integer counts of 190 to 300 rows are below its bar, so the bounds
    stayed at the cells' edges 399 and 39), never clipping more than a tenth
    of the range."""
    frame = _lattice_table()
    near = {"wind_dir": 0, "day": 0}
    for seed in range(20):
        domain, _ = _learn(frame, seed=seed)
        np.testing.assert_array_equal(domain["year"].edges, [2012.5, 2013.5])
        for column, top in (("wind_dir", 360), ("day", 31)):
            low, high = domain[column].edges[[0, -1]] + [0.5, -0.5]  # first and last integers
            assert low <= frame[column].min() and high >= 0.9 * top, (column, seed)
            near[column] += high <= top + 0.05 * (top - frame[column].min())
    assert near["wind_dir"] >= 16 and near["day"] >= 16, near


def test_a_table_with_nothing_learnable_is_refused_before_the_main_measurements():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"score": rng.lognormal(5, 2.5, 200),  # 50 rows a decade
                          "label": rng.choice(list("abcdefgh"), 200)})
    synth = IndependentSynthesizer(random_state=0)
    with pytest.raises(DomainInferenceError, match=r"\['score', 'label'\]"):
        synth.fit(frame, epsilon=1.0)
    assert not hasattr(synth, "privacy_ledger_")  # nothing was released
    with pytest.raises(DomainInferenceError, match=r"\['label'\]"):  # all of epsilon
        TableDiscretizer(random_state=0).fit(frame, epsilon=1.0)


def test_lenient_opt_in_keeps_the_fallback_and_the_warning():
    """preprocessing='private-lenient' fits as before: the whole public grid, no
    category, one DomainInferenceWarning naming the columns."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"score": rng.lognormal(5, 2.5, 200),  # 50 rows a decade
                          "label": rng.choice(list("abcdefgh"), 200)})
    with pytest.warns(DomainInferenceWarning, match=r"\['score', 'label'\].*whole public grid"):
        synth = IndependentSynthesizer(random_state=0, preprocessing="private-lenient").fit(
            frame, epsilon=1.0)
    grid = _domain_learning._numeric_grid()
    np.testing.assert_array_equal(synth.domain_["score"].edges[[0, -1]],
                                  [grid.left[0], grid.right[-1]])
    assert synth.domain_["label"].categories == []
    assert len(synth.sample(10)) == 10
    with pytest.raises(ValueError, match="preprocessing"):
        learn_domain(frame, None, preprocessing="lenient")


# ----------------------------------------------------------- heavy tails
def test_log_edges_on_a_declared_range_spanning_decades():
    edges = numeric_edges(0, 1e6, 32)
    # 32 bins per three orders of magnitude: [0, 1) and 63 geometric bins up to 1e6
    assert edges[0] == 0 and edges[1] == 1 and edges[-1] == 1e6 and edges.size == 65
    ratios = edges[2:] / edges[1:-1]
    np.testing.assert_allclose(ratios, ratios[0])
    spec = spec_from_declaration("amount", (0, 1e6), 32)
    assert list(spec.points) == [0.0]  # the spike at 0 has its own code
    assert spec.encode(np.array([0.0, 0.5]))[0] == spec.n_bins
    linear = spec_from_declaration("amount", {"bounds": (0, 1e6), "scale": "linear"}, 32)
    np.testing.assert_allclose(np.diff(linear.edges), 1e6 / 32)
    assert not len(linear.points)
    # a few negative corrections share one bin
    negative = numeric_edges(-5894.56, 16334326.0, 32)
    assert negative[:3].tolist() == [-5894.56, 0.0, 1.0]


@pytest.mark.parametrize("low, high, scale", [
    (0, 999, "linear"), (0, 1000, "log"), (2, 1999, "linear"), (2, 2000, "log"),
    (-20, 1999, "linear"), (-19, 1999, "log"), (-6934.5, 4225276, "log"),
    (-1e6, 1e6, "linear"), (0.5, 1, "linear"),
])
def test_auto_scale_rule(low, high, scale):
    assert numeric_scale(low, high) == scale


def test_scale_errors_name_the_column():
    with pytest.raises(ValueError, match="'a'.*scale"):
        spec_from_declaration("a", {"bounds": (0, 10), "scale": "cubic"}, 8)
    with pytest.raises(ValueError, match="'a'.*positive upper bound"):
        spec_from_declaration("a", {"bounds": (-10, 0), "scale": "log"}, 8)
    with pytest.raises(ValueError, match="'a'.*explicit 'edges'"):
        spec_from_declaration("a", {"edges": [0, 1, 2], "scale": "log"}, 8)


def test_integer_log_bins_hold_whole_integers_and_decode_inside_the_bounds():
    spec = spec_from_declaration("stay", {"bounds": (0, 9999), "scale": "log"}, 32,
                                 integer=True)
    edges = spec.edges
    assert edges[0] == -0.5 and edges[1] == 0.5 and edges[-1] == 9999.5  # 0 alone
    assert np.all(edges == np.floor(edges) + 0.5) and np.all(np.diff(edges) >= 1)
    values = np.arange(0, 10000)
    codes = spec.encode(values)
    decoded = spec.decode(codes, np.random.default_rng(0), "uniform")
    assert np.array_equal(decoded, np.rint(decoded)) and decoded.min() >= 0 \
        and decoded.max() <= 9999
    np.testing.assert_array_equal(spec.encode(decoded), codes)


def _zero_inflated(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    amount = np.where(rng.random(n) < 0.6, 0.0, rng.lognormal(7, 1.5, n))
    return pd.DataFrame({"amount": np.minimum(amount, 1e6)})


def _tvd_on_quantile_grid(real, fake):
    """TVD of the two samples on the real column's 5%-quantile bins (zeros alone)."""
    cuts = np.unique(np.quantile(real, np.linspace(0, 1, 21)))[1:-1]
    a = np.bincount(np.searchsorted(cuts, real, side="right"), minlength=cuts.size + 1)
    b = np.bincount(np.searchsorted(cuts, fake, side="right"), minlength=cuts.size + 1)
    return 0.5 * np.abs(a / a.sum() - b / b.sum()).sum()


def test_declared_log_scale_beats_linear_on_a_zero_inflated_lognormal():
    frame = _zero_inflated()
    tvds = {}
    for scale in ("linear", "auto"):
        domain = {"amount": {"bounds": (0, 1e6), "scale": scale}}
        values = []
        for seed in range(3):
            synth = IndependentSynthesizer(domain=domain, random_state=seed)
            fake = synth.fit(frame, epsilon=1.0).sample(len(frame))["amount"]
            values.append(_tvd_on_quantile_grid(frame["amount"], fake))
        tvds[scale] = np.mean(values)
    # uniform bins of 31,250 put 99% of the rows in the first one: their
    # synthetic values spread over [0, 31250); log bins and the point at 0 do not
    assert tvds["auto"] < 0.1 < 0.4 < tvds["linear"]


def test_learned_zero_inflated_amount_gets_its_spike():
    frame = _zero_inflated()
    domain, _ = _learn(frame)
    spec = domain["amount"]
    assert spec.edges[0] == 0 and list(spec.points) == [0.0]
    assert numeric_scale(spec.edges[0], spec.edges[-1]) == "log"
    assert (frame["amount"] <= spec.edges[-1]).mean() >= 0.99


def test_scale_is_a_dict_key_for_every_synthesizer_and_round_trips():
    frame = _zero_inflated(2000)
    declared = {"amount": {"bounds": (0, 1e6), "scale": "log", "n_bins": 8}}
    synth = IndependentSynthesizer(domain=declared, random_state=0).fit(frame, epsilon=1.0)
    spec = synth.domain_["amount"]
    assert spec.n_bins == 16 and list(spec.points) == [0.0]  # 8 per three decades
    assert synth.privacy_ledger_.summary()["target"].str.startswith("1-way").all()  # free
    again = spec_from_declaration("amount", spec.to_dict(), 32)
    np.testing.assert_array_equal(again.edges, spec.edges)
    np.testing.assert_array_equal(again.points, spec.points)


def test_datetime_bounds_keep_uniform_bins():
    """Seconds since 1970 span 'orders of magnitude' from 1970 on: dates stay linear."""
    spec = spec_from_declaration("when", (pd.Timestamp("1970-01-01"), pd.Timestamp("2030-01-01")),
                                 8)
    np.testing.assert_allclose(np.diff(spec.edges), np.diff(spec.edges)[0])
    assert not len(spec.points)
    frame = pd.DataFrame({"when": pd.Timestamp("1970-01-01") + pd.to_timedelta(
        np.random.default_rng(0).integers(0, 20_000, 20_000), "D")})
    domain, _ = _learn(frame)
    steps = np.diff(domain["when"].edges)
    np.testing.assert_allclose(steps, steps[0])


# ------------------------------------------------- float and datetime ends
def _weather_table(seed, n=10_000):
    """Four light-tailed float columns as hourly weather records hold them: a
    temperature, a wind speed (Weibull, a tenth of the rows below 4), a gust
    (missing in 80% of the rows) and a humidity capped at 100."""
    rng = np.random.default_rng(seed)
    gust = 16 + rng.gamma(4, 2.5, n)
    gust[rng.random(n) < 0.8] = np.nan
    return pd.DataFrame({"temp": rng.normal(55, 17, n), "speed": 12 * rng.weibull(2.0, n),
                         "gust": gust, "humid": np.clip(rng.normal(62, 19, n), 13, 100)})


def test_light_tailed_float_columns_end_near_their_data():
    """Issue 23's criterion on learned float bounds: 30 noise draws of a
    weather-like table (noise about 180 per cell count), every column's learned
    bounds inside its real range widened by 5% of its width on each side in
    at least 17 draws (measured 19/30; 4/30 on the previous rule, whose bound
    jumped to the edge of the decade, e.g. 100 for a gust ending at 50, or
    took in the empty decade below it, when the noisy mass past the outermost
    cell with evidence passed one standard deviation), and each column in at
    least 20 (measured: the gust 22, the others 28 to 30; before: the gust
    12, the speed 19); the rows inside the bounds stay at 92% on average for
    the three full columns (measured 94.1%; 95.2% before) and 80% for the gust
    (measured 83.8%; 86.9% before): a tail below the noise is clipped rather
    than the range widened past the data."""
    columns = ["temp", "speed", "gust", "humid"]
    near_all, near, inside = 0, dict.fromkeys(columns, 0), {c: [] for c in columns}
    for seed in range(30):
        frame = _weather_table(500 + seed)
        domain, _ = _learn(frame, seed=seed, share=0.02)
        ok = True
        for column in columns:
            x = frame[column].dropna().to_numpy()
            low, high = domain[column].edges[[0, -1]]
            margin = 0.05 * (x.max() - x.min())
            good = low >= x.min() - margin and high <= x.max() + margin
            near[column] += good
            ok = ok and good
            inside[column].append(np.mean((x >= low) & (x <= high)))
        near_all += ok
    assert near_all >= 17 and min(near.values()) >= 20, (near_all, near)
    assert np.mean([np.mean(inside[c]) for c in ("temp", "speed", "humid")]) >= 0.92
    assert np.mean(inside["gust"]) >= 0.80


def test_bulk_end_ignores_a_lone_noisy_outer_cell_and_moves_out_cell_by_cell():
    """The end rule of a float column's bulk block reads noisy counts only:
    scanning from the top, an outer cell whose noise alone passes two
    standard deviations (where the evidence rule stops) does not hold the
    bound; mass beyond the significant cells moves it out one cell at a time
    (a cell with evidence of its own), never to the block's edge."""
    sigma = 100.0
    # cells of a decade, low to high: the bulk in the first four, a thin
    # fifth (2.5 sigma), nothing beyond but one outer cell at 2.5 sigma of noise
    noisy = np.array([3000, 1200, 800, 500, 250, 10, -30, 20, -50, 250, -20], dtype=float)
    total = float(noisy[:5].sum())
    evidence = _domain_learning._outermost_evidence(noisy, sigma, total, sigma / 2 ** 0.5,
                                                    from_top=True)
    bulk = _domain_learning._bulk_end(noisy, sigma, total, sigma / 2 ** 0.5, from_top=True)
    assert evidence == 9  # the lone noisy cell holds the evidence rule's bound
    assert bulk == 4  # the bulk rule ends at the thin fifth cell, which has evidence
    thin = noisy.copy()
    thin[4] = 60  # a fifth cell below the noise: the bound stays at the fourth
    assert _domain_learning._bulk_end(thin, sigma, total, sigma / 2 ** 0.5, True) == 3


def _hours_of_a_year(seed, n):
    """``n`` hourly timestamps of 2013 whose last day is December 30 (a year of
    records that misses its last day), as the weather table holds them."""
    hours = pd.date_range("2013-01-01 06:00", "2013-12-30 23:00", freq="h")
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"when": np.sort(rng.choice(hours, n))})


@pytest.mark.parametrize("n, least", [(10_000, 25), (50_000, 25)])
def test_a_datetime_column_ends_on_its_first_and_last_days(n, least):
    """The selection of a datetime column's bounds among day edges: of 30 noise
    draws, the learned bounds lie within the real days (from 2013-01-01 to
    the end of 2013-12-30) in at least 25 (measured 29/30 at 10,000 and
    28/30 at 50,000 rows; 0/30 before, when the bounds stayed at the year's edges, so
    that synthetic hours fell on December 31), always on midnights, holding
    94% (10,000 rows; measured 95.8%) or 98% (50,000; measured 99.1%) of
    the rows on average: a bound past the last day is as cheap as one on it
    (both clip nothing), so the selection aims at clipping two of its noise
    units per end."""
    within, inside = 0, []
    first, end = pd.Timestamp("2013-01-01").timestamp(), pd.Timestamp("2013-12-31").timestamp()
    for seed in range(30):
        frame = _hours_of_a_year(700 + seed, n)
        domain, _ = _learn(frame, seed=seed, share=0.02)
        low, high = domain["when"].edges[[0, -1]]
        assert low % 86_400 == 0 and high % 86_400 == 0
        within += low >= first and high <= end
        seconds = (frame["when"] - pd.Timestamp("1970-01-01")).dt.total_seconds().to_numpy()
        inside.append(np.mean((seconds >= low) & (seconds <= high)))
    assert within >= least, within
    assert np.mean(inside) >= (0.94 if n == 10_000 else 0.98), np.mean(inside)


@pytest.mark.parametrize("change", ["add a later day", "drop the last row"])
def test_neighbours_of_a_datetime_end_spend_the_same_entries(change):
    """D and D' one row apart at the end the selection reads most (a row a day
    past the last one, or the last row dropped), the same noise: the same
    ledger entries, the datetime column's ``bounds`` one exponential mechanism
    of sensitivity 1 (its scores, ``|clipped - aim|`` plus a public penalty,
    move by at most 1: see the sensitivity test above), and the same schema."""
    frame = _hours_of_a_year(3, 10_000)
    if change == "add a later day":
        neighbour = pd.concat([frame, pd.DataFrame({"when": [pd.Timestamp("2013-12-31 12:00")]})],
                              ignore_index=True)
    else:
        neighbour = frame.iloc[:-1]
    (domain_a, ledger_a), (domain_b, ledger_b) = _learn(frame), _learn(neighbour)
    assert _entries(ledger_a) == _entries(ledger_b)
    bounds = [e for e in ledger_a.entries if e.target.endswith(": bounds")]
    assert [(e.target, e.mechanism, e.sensitivity) for e in bounds] == [
        ("range of 'when': bounds", "exponential", 1.0)]
    a, b = domain_a["when"], domain_b["when"]
    assert (a.kind, a.integer, a.missing, a.value_type) == \
        (b.kind, b.integer, b.missing, b.value_type)


def _selected_highs(values, draws=200, bounds=None, rho_per_column=2.4e-4):
    """The last integers ``_with_selected_ends`` gives an integer column of
    ``values`` over ``draws`` runs of its exponential mechanism (a real ledger
    share), from the end cells the histograms learned around the data, as if
    the sub-cell histogram had narrowed them to ``bounds`` (default: the end
    cells' edges, nothing narrowed); about 110 rows per noise unit of the
    selection, as in a 15-column table at epsilon 1."""
    grid = _domain_learning._numeric_grid()
    low_cell, high_cell = (int(c) for c in grid.cell_of(np.array([values.min(), values.max()])))
    found = _domain_learning._Range(grid.left[low_cell], grid.right[high_cell], low_cell,
                                    high_cell, 0.0, 0.0, total=float(values.size))
    parts = _domain_learning._sub_grid(grid, found, 1.0)
    counts = np.bincount(np.searchsorted(parts[0].cuts, values, side="right"),
                         minlength=parts[0].left.size).astype(float)
    ledger = PrivacyLedger(100.0, 1e-9)
    rng = np.random.default_rng(0)
    budget = _domain_learning._Budget(ledger.share(0.5 * ledger.rho_budget, 5e-10), rng,
                                      rho_per_column, 1e-10)
    selection = budget.part(_domain_learning._LEVEL_SHARES[2]).part(0.7)
    low, high = bounds or (found.low, found.high)
    highs = [_domain_learning._with_selected_ends(
        "c", low, high, grid, found, parts, counts, selection,
        budget.part(_domain_learning._LEVEL_SHARES[1]).sigma, 1.0)[1] - 1
        for _ in range(draws)]
    return np.array(highs), _domain_learning._selection_unit(selection)


def test_small_integer_lattices_end_at_their_last_value():
    """10,000 rows: days of the month (the 31st thinnest, about 1.7 noise units
    of the selection) end within 5% of their range past the 31st (at most 32)
    in at least 95% of the selections (98% of 1,000; 93.5% before the pull was
    spread over the span between the end cells' inner edges, [1.5, 30), not
    their outer ones, [1, 40)), and keep the 31st in at least 45% (56%; 69%
    before: the trade of a stronger pull); a constant year whose sub-cell
    histogram kept a false part 30 years out ends at its value in at least
    70% (80%; 10.5% when its pull was spread over the whole cell
    [2000, 2500))."""
    dates = pd.Timestamp("2013-01-01") + pd.to_timedelta(
        np.random.default_rng(7).integers(0, 365, 10_000), "D")
    highs, unit = _selected_highs(dates.day.to_numpy(dtype=float))
    assert 100 <= unit <= 120
    assert np.mean(highs <= 32) >= 0.95 and np.mean(highs >= 31) >= 0.45, np.bincount(
        highs.astype(int))
    years, _ = _selected_highs(np.full(10_000, 2013.0), bounds=(2013.0, 2044.0))
    assert np.mean(years == 2013) >= 0.7, np.bincount(years.astype(int) - 2013)
