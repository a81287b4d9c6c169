"""Encoding and decoding columns with a public domain."""

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth.domain import OTHER, ColumnSpec, Domain, spec_from_declaration


def test_declarations_are_read_by_type():
    dom = Domain.from_declaration({"a": 3, "b": ["x", "y"], "c": (0.0, 1.0),
                                   "d": {"edges": [0, 1, 5]}}, n_bins=4)
    assert [s.kind for s in dom] == ["codes", "categorical", "numeric", "numeric"]
    assert dom.sizes == [3, 2, 4, 2]
    model_domain = dom.model_domain()
    assert (model_domain.attributes, model_domain.shape) == (("a", "b", "c", "d"), (3, 2, 4, 2))


def test_codes_round_trip_and_errors_name_the_column():
    spec = ColumnSpec("age", "codes", n_codes=5)
    np.testing.assert_array_equal(spec.encode(np.array([0, 4, 2.0])), [0, 4, 2])
    with pytest.raises(ValueError, match="'age'.*0..4"):
        spec.encode(np.array([5]))
    with pytest.raises(ValueError, match="'age'"):
        spec.encode(np.array([1.5]))
    with pytest.raises(TypeError, match="'age'"):
        spec.encode(np.array(["a"], dtype=object))


def test_categories_round_trip_other_and_missing():
    spec = ColumnSpec("city", "categorical", categories=["a", "b", None], other=True)
    assert spec.missing and spec.size == 4 and spec.other_code == 2 and spec.missing_code == 3
    codes = spec.encode(np.array(["a", "zzz", None, "b"], dtype=object))
    np.testing.assert_array_equal(codes, [0, 2, 3, 1])
    decoded = spec.decode(codes)
    assert list(decoded) == ["a", OTHER, None, "b"]
    strict = ColumnSpec("city", "categorical", categories=["a", "b"])
    with pytest.raises(ValueError, match="'city'.*categories in some rows"):
        strict.encode(np.array(["zzz"], dtype=object))
    with pytest.raises(ValueError, match="'city' contains missing values"):
        strict.encode(np.array([None], dtype=object))


def test_numeric_categories_match_their_text_forms():
    """A column read from a CSV file is text: declared numeric categories
    match ``"1"`` and ``"1.0"`` (both encoders), text that is no number goes
    to "<other>" or is refused; text categories and bools are matched as
    they are."""
    spec = ColumnSpec("grade", "categorical", categories=[1, 2, 0.25], other=True)
    text = np.array(["1", "1.0", "2", "0.25", "x", "3"], dtype=object)
    np.testing.assert_array_equal(spec.encode(text), [0, 0, 1, 2, 3, 3])
    np.testing.assert_array_equal(spec.encode_series(pd.Series(text)), [0, 0, 1, 2, 3, 3])
    assert list(spec.decode(np.array([0, 2]))) == [1, 0.25]
    strict = ColumnSpec("grade", "categorical", categories=[1, 2])
    with pytest.raises(ValueError, match="'grade'.*categories in some rows"):
        strict.encode_series(pd.Series(["1", "nan"], dtype=object))
    as_text = ColumnSpec("code", "categorical", categories=["1", "2"])
    np.testing.assert_array_equal(as_text.encode(np.array(["2", "1"], dtype=object)), [1, 0])
    with pytest.raises(ValueError, match="'code'"):
        as_text.encode(np.array(["1.0"], dtype=object))  # text categories match exactly
    flags = ColumnSpec("flag", "categorical", categories=[False, True], other=True)
    np.testing.assert_array_equal(flags.encode(np.array(["1", True], dtype=object)), [2, 1])


def test_numeric_categories_match_whole_number_text_exactly():
    """Text of a whole number past 2**53 is that integer, not the nearest
    float (which is the neighbouring category), in both encoders; numpy
    strings read as numbers like Python ones."""
    big = 2**53
    spec = ColumnSpec("id", "categorical", categories=[big, big + 1])
    text = np.array([str(big + 1), str(big)], dtype=object)
    np.testing.assert_array_equal(spec.encode(text), [1, 0])
    np.testing.assert_array_equal(spec.encode_series(pd.Series(text)), [1, 0])
    grade = ColumnSpec("grade", "categorical", categories=[1, 2])
    numpy_text = np.array([np.str_("2"), np.str_("1.0")], dtype=object)
    np.testing.assert_array_equal(grade.encode(numpy_text), [1, 0])


def test_numeric_bins_round_trip_within_bin():
    spec = spec_from_declaration("x", (0.0, 10.0), n_bins=5)
    values = np.array([0.0, 1.9, 2.0, 9.99, 10.0])
    codes = spec.encode(values)
    np.testing.assert_array_equal(codes, [0, 0, 1, 4, 4])
    np.testing.assert_allclose(spec.decode(codes), [1, 1, 3, 9, 9])
    rng = np.random.default_rng(0)
    uniform = spec.decode(np.repeat(np.arange(5), 200), rng, "uniform")
    assert np.all(spec.encode(uniform) == np.repeat(np.arange(5), 200))
    with pytest.raises(ValueError, match="'x'.*bounds"):
        spec.encode(np.array([11.0]))


def test_integer_columns_decode_to_integers_inside_bounds():
    spec = spec_from_declaration("n", (1, 4), n_bins=3, integer=True)
    decoded = spec.decode(np.array([0, 1, 2]))
    assert np.all(decoded == np.rint(decoded))
    assert decoded.min() >= 1 and decoded.max() <= 4


def test_clip_spec_clips_instead_of_failing():
    spec = ColumnSpec("x", "numeric", edges=np.linspace(0, 1, 3), clip=True)
    np.testing.assert_array_equal(spec.encode(np.array([-5.0, 5.0])), [0, 1])


@pytest.mark.parametrize("bad, match", [
    ({"x": True}, "bool"),
    ({"x": (5, 1)}, "low < high"),
    ({"x": {"kind": "numeric"}}, "bounds"),
    ({"x": ["a", "a"]}, "duplicates"),
    ({"x": object()}, "cannot read"),
])
def test_bad_declarations_name_the_column(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Domain.from_declaration(bad)


def test_domain_encode_decode_frame():
    dom = Domain.from_declaration({"a": 3, "b": ["x", "y"]})
    frame = pd.DataFrame({"a": [0, 2, 1], "b": ["y", "x", "y"]})
    codes = dom.encode(frame)
    np.testing.assert_array_equal(codes, [[0, 1], [2, 0], [1, 1]])
    back = dom.decode(codes)
    assert list(back["b"]) == ["y", "x", "y"]
    with pytest.raises(ValueError, match="unknown column 'zz'"):
        dom.index("zz")


def test_datetimes_encode_as_seconds_with_timestamp_or_iso_bounds():
    spec = spec_from_declaration("t", (pd.Timestamp("2020-01-01"), pd.Timestamp("2020-01-05")),
                                 n_bins=4)
    np.testing.assert_allclose(spec.edges[[0, -1]], [1577836800.0, 1578182400.0])
    naive = pd.Series(pd.to_datetime(["2020-01-01 12:00", "2020-01-04 23:00"]))
    np.testing.assert_array_equal(spec.encode(naive.to_numpy()), [0, 3])
    aware = naive.dt.tz_localize("Europe/Paris")  # 1 hour ahead of UTC in January
    np.testing.assert_array_equal(spec.encode(aware.to_numpy()), [0, 3])
    same = spec_from_declaration("t", {"bounds": ["2020-01-01T01:00:00+01:00",
                                                  "2020-01-05"], "n_bins": 4}, n_bins=8)
    np.testing.assert_allclose(same.edges, spec.edges)
    with pytest.raises(ValueError, match="'t'.*date-time"):
        spec_from_declaration("t", {"bounds": ["2020-01-01", "not a date"]}, n_bins=4)
    with pytest.raises(ValueError, match="'t'.*outside the declared bounds.*in some rows"):
        spec.encode(pd.Series(pd.to_datetime(["2021-01-01"])).to_numpy())


# ------------------------------------------------------- integer resolution
def test_small_integer_ranges_get_one_code_per_integer():
    from sklearn_dpsynth.domain import INTEGER_RESOLUTION_MAX
    spec = spec_from_declaration("age", (17, 90), n_bins=32, integer=True)
    assert spec.size == 74 and spec.integer
    ages = np.arange(17, 91)
    codes = spec.encode(ages)
    np.testing.assert_array_equal(codes, np.arange(74))
    rng = np.random.default_rng(0)
    for bin_value in ("midpoint", "uniform"):
        np.testing.assert_array_equal(spec.decode(codes, rng, bin_value), ages)
    # the threshold counts the integers within the bounds
    at = spec_from_declaration("n", (1, INTEGER_RESOLUTION_MAX), n_bins=8, integer=True)
    above = spec_from_declaration("n", (0, INTEGER_RESOLUTION_MAX), n_bins=8, integer=True)
    assert at.size == INTEGER_RESOLUTION_MAX and above.size == 8
    # floats, explicit per-column n_bins and resolution="bins" keep uniform bins
    assert spec_from_declaration("x", (17, 90), n_bins=32).size == 32
    assert spec_from_declaration("a", {"bounds": (17, 90), "n_bins": 4}, 32, True).size == 4
    assert spec_from_declaration("a", {"bounds": (17, 90), "resolution": "bins"}, 32,
                                 True).size == 32


def test_resolution_integer_on_request_and_its_errors():
    spec = spec_from_declaration("n", {"bounds": (0.5, 1000), "resolution": "integer"}, 8)
    assert spec.integer and spec.size == 1000 and spec.decode(np.array([0]))[0] == 1
    with pytest.raises(ValueError, match="'n'.*no integer"):
        spec_from_declaration("n", {"bounds": (0.2, 0.8), "resolution": "integer"}, 8)
    with pytest.raises(ValueError, match="'n'.*resolution must be"):
        spec_from_declaration("n", {"bounds": (0, 8), "resolution": "fine"}, 8)
    with pytest.raises(ValueError, match="'n'.*explicit 'edges'"):
        spec_from_declaration("n", {"edges": [0, 1, 2], "resolution": "integer"}, 8)


def test_learned_integer_columns_follow_the_same_rule():
    import warnings
    from sklearn_dpsynth.preprocessing import learn_domain
    frame = pd.DataFrame({"age": np.arange(18, 81), "x": np.linspace(0, 1, 63)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dom = learn_domain(frame, None, n_bins=8, preprocessing="non-private")
    # a float column reserves a missing code by dtype: 8 bins + 1
    assert dom["age"].size == 63 and dom["x"].n_values == 8 and dom["x"].missing
    np.testing.assert_array_equal(dom["age"].decode(dom["age"].encode(frame["age"])),
                                  frame["age"])


# ------------------------------------------------------------ point masses
def test_points_get_their_own_codes_and_decode_exactly():
    spec = spec_from_declaration("gain", {"bounds": (0, 1000), "scale": "linear",
                                          "points": [0, 500.5], "missing": True}, n_bins=4)
    assert spec.n_bins == 4 and spec.size == 4 + 2 + 1 and spec.missing_code == 6
    values = np.array([0.0, 0.1, 500.5, 500.4, 1000.0, np.nan])
    codes = spec.encode(values)
    np.testing.assert_array_equal(codes, [4, 0, 5, 2, 3, 6])
    rng = np.random.default_rng(0)
    for bin_value in ("midpoint", "uniform"):
        decoded = spec.decode(codes, rng, bin_value)
        assert decoded[0] == 0.0 and decoded[2] == 500.5 and np.isnan(decoded[5])
        np.testing.assert_array_equal(spec.encode(decoded[1:5])[[0, 2, 3]], [0, 2, 3])
    again = Domain.from_declaration({"gain": spec.to_dict()})["gain"]
    np.testing.assert_array_equal(again.encode(values), codes)


def test_bad_points_name_the_column_and_integer_points_merge():
    with pytest.raises(ValueError, match="'g'.*within the bounds"):
        spec_from_declaration("g", {"bounds": (0, 10), "points": [11]}, 4)
    with pytest.raises(ValueError, match="'g'.*duplicates"):
        spec_from_declaration("g", {"bounds": (0, 10), "points": [1, 1]}, 4)
    with pytest.raises(ValueError, match="'g'.*numbers"):
        spec_from_declaration("g", {"bounds": (0, 10), "points": ["a"]}, 4)
    # on a per-integer column an integer point already has its own code
    spec = spec_from_declaration("g", {"bounds": (0, 10), "points": [0]}, 4, integer=True)
    assert spec.size == 11 and len(spec.points) == 0


# ---------------------------------------------------------------- decoding
def test_bin_value_is_checked_and_uniform_needs_a_generator():
    spec = spec_from_declaration("x", (0.0, 1.0), n_bins=4)
    with pytest.raises(ValueError, match="bin_value"):
        spec.decode(np.array([0]), bin_value="median")
    with pytest.raises(ValueError, match="random generator"):
        spec.decode(np.array([0]), bin_value="uniform")


def test_uniform_integers_cover_every_integer_of_the_bin_evenly():
    spec = spec_from_declaration("n", (0, 999), n_bins=10, integer=True)
    draws = spec.decode(np.zeros(20_000, dtype=np.int64), np.random.default_rng(1), "uniform")
    counts = np.bincount(draws.astype(int), minlength=100)
    assert set(np.unique(draws)) == set(range(100))  # the bin [0, 99.9) holds 0..99
    assert counts.max() < 1.5 * counts.min()


# ----------------------------------------------------------------- density
def test_log_widths_are_widths_integer_counts_or_zero():
    spec = spec_from_declaration("x", {"bounds": (0.0, 8.0), "points": [2.0],
                                       "missing": True}, n_bins=4)
    np.testing.assert_allclose(spec.log_widths, np.log([2, 2, 2, 2, 1, 1]))
    counts = spec_from_declaration("n", {"bounds": (0, 9), "n_bins": 4}, 4, integer=True)
    # bins [0, 2.25) [2.25, 4.5) [4.5, 6.75) [6.75, 9]: 3, 2, 2, 3 integers
    np.testing.assert_allclose(counts.log_widths, np.log([3, 2, 2, 3]))
    assert spec_from_declaration("n", (0, 9), 4, integer=True).log_widths.tolist() == [0.0] * 10
    cat = ColumnSpec("c", "categorical", categories=["a", "b"], other=True, missing=True)
    assert cat.log_widths.tolist() == [0.0, 0.0, 0.0, 0.0]
    dom = Domain([spec, cat])
    np.testing.assert_allclose(dom.log_widths(np.array([[0, 1], [4, 3]])), [np.log(2), 0.0])


# ------------------------------------------------- declared kinds (issue 23)
def test_declared_kinds_units_zones_and_notes():
    from sklearn_dpsynth.domain import declared_kind

    entry = {"kind": "datetime", "bounds": ["2013-01-01", "2013-12-31"], "unit": "month",
             "tz": "Europe/Paris", "note": "from the codebook", "scale": "linear"}
    spec = spec_from_declaration("d", entry, 12)
    assert (spec.value_type, spec.unit, spec.tz) == ("datetime", "month", "Europe/Paris")
    # bounds in the declared zone: Paris midnight is 23:00 UTC the day before
    assert spec.edges[0] == pd.Timestamp("2013-01-01", tz="Europe/Paris").timestamp()
    assert entry["note"] == "from the codebook"  # the caller's entry is not modified
    again = Domain.from_declaration(Domain([spec]).to_dict())["d"]
    assert (again.value_type, again.unit, again.tz) == ("datetime", "month", "Europe/Paris")
    np.testing.assert_array_equal(again.edges, spec.edges)
    integer = spec_from_declaration("n", {"kind": "integer", "bounds": [0, 10]}, 4)
    assert integer.integer and integer.kind == "numeric"
    assert spec_from_declaration("c", {"kind": "category", "categories": ["a"]}, 4).kind == \
        "categorical"
    # the describe form of a date column: "numeric" with ISO bounds reads as dates
    assert declared_kind({"kind": "numeric", "bounds": ["2013-01-01", "2014-01-01"]})[0] == \
        "datetime"
    assert declared_kind((0, 5)) == ("numeric", None, None)
    assert declared_kind(4)[0] == "codes" and declared_kind(["a"])[0] == "category"


def test_kind_only_entries_are_learned_and_cannot_complete_a_domain():
    assert spec_from_declaration("d", {"kind": "datetime", "unit": "day"}, 8) is None
    assert spec_from_declaration("x", {"kind": "numeric", "note": "n"}, 8) is None
    with pytest.raises(ValueError, match="'x'.*only the kind"):
        Domain.from_declaration({"x": {"kind": "numeric"}})


@pytest.mark.parametrize("entry, match", [
    ({"kind": "duration", "bounds": [0, 1]}, "kind must be one of"),
    ({"kind": "datetime", "bounds": ["2013-01-01", "2014-01-01"], "unit": "week"}, "unit"),
    ({"kind": "datetime", "bounds": ["2013-01-01", "2014-01-01"], "tz": "Mars/Base"},
     "time zone"),
    ({"kind": "numeric", "bounds": [0, 1], "unit": "day"}, "datetime columns only"),
])
def test_bad_kind_entries_name_the_column(entry, match):
    with pytest.raises(ValueError, match=f"'col'.*{match}"):
        spec_from_declaration("col", entry, 4)


def test_snapping_to_units_stays_in_bounds():
    from sklearn_dpsynth.domain import snap_seconds

    low = pd.Timestamp("2013-01-15").timestamp()
    values = np.array([pd.Timestamp(t).timestamp() for t in
                       ("2013-01-20 10:00", "2013-02-28 23:59:59", "2013-03-01 00:00")])
    snapped = pd.to_datetime(snap_seconds(values, "month", None, low), unit="s")
    assert list(snapped) == [pd.Timestamp("2013-02-01"), pd.Timestamp("2013-02-01"),
                             pd.Timestamp("2013-03-01")]
    paris = pd.to_datetime(snap_seconds(values, "day", "Europe/Paris"), unit="s", utc=True)
    assert (paris.tz_convert("Europe/Paris") ==
            paris.tz_convert("Europe/Paris").normalize()).all()


def test_timedelta_specs_encode_durations_and_show_them_in_messages():
    spec = spec_from_declaration("wait", {"kind": "timedelta", "bounds": ["0s", "1 days"]}, 4)
    codes = spec.encode(pd.to_timedelta(["1h", "23h"]).to_numpy())
    np.testing.assert_array_equal(codes, [0, 3])
    with pytest.raises(ValueError, match=r"\[0 days 00:00:00, 1 days 00:00:00\]"):
        spec.encode(pd.to_timedelta(["2 days"]).to_numpy())


def test_reversed_datetime_bounds_are_shown_as_dates():
    with pytest.raises(ValueError, match=r"'d'.*\[2014-01-01, 2013-01-01\]"):
        spec_from_declaration("d", {"kind": "datetime", "bounds": ["2014-01-01", "2013-01-01"]},
                              4)


def test_unit_starts_of_many_values_match_each_value_alone():
    """Decoding converts each unit of the span once: the starts of many
    repeated unit indices (hours across a DST fall-back and spring-forward,
    months) equal those computed one index at a time."""
    from sklearn_dpsynth.domain._datetimes import _unit_starts, _wall_units

    for unit, tz, start, stop in (("hour", "Europe/Paris", "2020-03-28", "2020-03-30"),
                                  ("hour", "Europe/Paris", "2020-10-24", "2020-10-27"),
                                  ("month", "America/New_York", "2019-01-01", "2021-01-01")):
        low, high = (pd.Timestamp(v, tz=tz).timestamp() for v in (start, stop))
        first, last = _wall_units(np.array([low, high]), unit, tz)
        index = np.random.default_rng(0).integers(first, last + 1, 2_000)
        alone = np.array([_unit_starts(np.array([i]), unit, tz)[0] for i in index])
        assert np.array_equal(_unit_starts(index, unit, tz), alone)
