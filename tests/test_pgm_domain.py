"""The engine's domain value and its one producer, ``Domain.model_domain``."""

import pickle

import numpy as np
import pytest

from sklearn_dpsynth.domain import Domain
from sklearn_dpsynth.pgm import ModelDomain


def test_helpers_answer_by_name():
    dom = ModelDomain(("a", "b", "c"), (2, np.int64(3), 4))
    assert dom.shape == (2, 3, 4) and all(type(s) is int for s in dom.shape)
    assert (len(dom), list(dom), dom["b"]) == (3, ["a", "b", "c"], 3)
    assert "c" in dom and "z" not in dom and 0 not in dom
    assert dom.size() == 24 and dom.size(("c", "a")) == 8 and dom.size(()) == 1
    assert dom.axes(("c", "a")) == (2, 0)
    assert dom.project(("c", "a")) == ModelDomain(("c", "a"), (4, 2))
    assert ModelDomain.from_mapping({"a": 2, "b": 3, "c": 4}) == dom
    assert ModelDomain.from_mapping({"b": 3, "a": 2, "c": 4}) != dom  # order matters


def test_is_a_frozen_hashable_value():
    dom = ModelDomain(("a", "b"), (2, 3))
    assert hash(dom) == hash(ModelDomain(["a", "b"], [2, 3]))
    assert pickle.loads(pickle.dumps(dom)) == dom
    with pytest.raises(AttributeError):
        dom.shape = (1, 1)


@pytest.mark.parametrize(
    "attributes, shape, message",
    [
        ((), (), "at least one"),
        (("a", "a"), (2, 2), "distinct"),
        (("a", "b"), (2,), "2 attributes"),
        (("a",), (0,), "positive"),
        (("a",), (2.0,), "positive"),
        (("a",), (True,), "positive"),
        ((1, 2), (2, 2), "str"),
        ("ab", (2, 2), "not a str"),
    ],
)
def test_invalid_domains_are_refused_once(attributes, shape, message):
    with pytest.raises(ValueError, match=message):
        ModelDomain(attributes, shape)


def test_queries_on_unknown_attributes_name_them():
    dom = ModelDomain(("a", "b"), (2, 3))
    with pytest.raises(ValueError, match="'z'"):
        dom.axes(("a", "z"))
    with pytest.raises(ValueError, match="'z'"):
        dom.project(("z",))
    with pytest.raises(KeyError, match="'z'"):
        dom["z"]
    with pytest.raises(ValueError):
        ModelDomain.from_mapping([("a", 2)])


@pytest.mark.parametrize(
    "columns, attributes",
    [
        (["a", "b"], ("a", "b")),
        ([0, 1], ("0", "1")),
        ([1, "1"], ("c0", "c1")),          # distinct columns, equal strings
        ([1, "c0"], ("1", "c0")),
    ],
)
def test_model_domain_names_attributes_from_the_columns(columns, attributes):
    domain = Domain.from_declaration({c: k for c, k in zip(columns, (3, 2))})
    model_domain = domain.model_domain()
    assert model_domain == ModelDomain(attributes, (3, 2))
    assert domain.model_domain(sizes=[2, 1]) == ModelDomain(attributes, (2, 1))
