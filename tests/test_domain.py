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
    with pytest.raises(ValueError, match="'city'.*categories in 1 row"):
        strict.encode(np.array(["zzz"], dtype=object))
    with pytest.raises(ValueError, match="'city' contains missing values"):
        strict.encode(np.array([None], dtype=object))


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
    with pytest.raises(ValueError, match="'t'.*outside the declared bounds.*in 1 row"):
        spec.encode(pd.Series(pd.to_datetime(["2021-01-01"])).to_numpy())
