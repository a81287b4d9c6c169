"""Every registered synthesizer documents each parameter once, from one shared text.

The shared parameter entries live in ``sklearn_dpsynth._docstrings`` and are
filled into the class docstrings at import time by ``fill_doc``; these tests
read the rendered docstrings (what ``help()`` and Sphinx show).
"""

import ast
import inspect
import re

import pytest
from numpydoc.docscrape import NumpyDocString

from sklearn_dpsynth._docstrings import SHARED_DOCS, fill_doc
from sklearn_dpsynth.registry import available_methods, get_method_spec

METHODS = [name for name in available_methods() if not get_method_spec(name).missing_modules()]

#: Parameters every synthesizer documents with the shared text.
COMMON = ("domain", "n_bins", "preprocessing", "preprocessing_budget", "max_categories",
          "bin_value")

#: Methods that keep their own ``n_bins`` text on purpose (a different default's reason).
OWN_N_BINS = {"dptbart", "dp2stage"}


def _class(name: str) -> type:
    return get_method_spec(name).load()


def _documented(cls: type) -> dict[str, tuple[str, str]]:
    """``{parameter: (type line, description)}``; ``a, b : t`` documents both.

    Raises AssertionError when a parameter is documented twice.
    """
    entries: dict[str, tuple[str, str]] = {}
    for entry in NumpyDocString(inspect.getdoc(cls))["Parameters"]:
        for name in (part.strip() for part in entry.name.split(",")):
            assert name not in entries, f"{cls.__name__}: {name!r} documented twice"
            entries[name] = (entry.type, "\n".join(entry.desc))
    return entries


def _rendered_entries(key: str, init) -> list:
    """The numpydoc parameter entries of ``%(key)s`` filled for a class with ``init``."""
    probe = fill_doc(type("Probe", (), {
        "__doc__": f"Probe.\n\nParameters\n----------\n%({key})s\n", "__init__": init}))
    return NumpyDocString(probe.__doc__)["Parameters"]


def _shared(key: str, default: object) -> tuple[str, str]:
    """The shared entry ``key`` as ``(type line, description)`` for ``default``."""
    (entry,) = _rendered_entries(key, _with_default(key, default))
    return entry.type, "\n".join(entry.desc)


def _with_default(key: str, default: object):
    name = key

    def __init__(self, **kwargs):  # the signature is set below
        pass

    __init__.__signature__ = inspect.Signature([
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)])
    return __init__


def _type_default(type_line: str):
    """The value written after ``default=`` in a numpydoc type line."""
    match = re.search(r"default=(.+)$", type_line)
    assert match, f"no default in {type_line!r}"
    return ast.literal_eval(match[1])


@pytest.mark.parametrize("name", METHODS)
def test_each_init_parameter_is_documented_exactly_once(name):
    cls = _class(name)
    parameters = list(inspect.signature(cls.__init__).parameters)[1:]
    documented = _documented(cls)
    assert sorted(documented) == sorted(parameters)


@pytest.mark.parametrize("name", METHODS)
def test_documented_defaults_are_the_signature_defaults(name):
    cls = _class(name)
    defaults = {p.name: p.default for p in inspect.signature(cls.__init__).parameters.values()}
    for parameter, (type_line, _) in _documented(cls).items():
        assert _type_default(type_line) == defaults[parameter], (cls.__name__, parameter)


@pytest.mark.parametrize("name", METHODS)
def test_common_parameters_render_the_shared_text(name):
    cls = _class(name)
    documented = _documented(cls)
    defaults = {p.name: p.default for p in inspect.signature(cls.__init__).parameters.values()}
    for parameter in COMMON:
        if parameter == "n_bins" and name in OWN_N_BINS:
            continue
        assert documented[parameter] == _shared(parameter, defaults[parameter]), (
            cls.__name__, parameter)
    # every seed is the noise: each random_state entry ends with the same warning
    _, seed = documented["random_state"]
    assert seed.endswith(SHARED_DOCS["seed_warning"]), cls.__name__


#: The methods whose entry of each shared, not common, parameter is the shared text.
USERS = {
    "max_iters_deprecated": {"aim", "jam"},
    "d_model": {"dptbart", "synlm", "dp2stage"},
    "n_layers": {"dptbart", "synlm", "dp2stage"},
    "n_heads": {"dptbart", "synlm", "dp2stage"},
    "d_ff": {"dptbart", "synlm", "dp2stage"},
    "n_threads": {"dptbart", "synlm"},
    "verbose_dpsgd": {"dptbart", "synlm"},
    "pretrain": {"dptbart", "synlm"},
    "smoothing_records": {"pmw_pub", "mst_public"},
}


def test_every_shared_entry_is_listed():
    bundles = {"seed_warning", "domain_learning", "common_parameters"}
    assert set(SHARED_DOCS) == set(COMMON) | set(USERS) | bundles


@pytest.mark.parametrize("key", sorted(USERS))
def test_shared_entries_render_identically_in_the_classes_using_them(key):
    """The classes listed use the shared text to the letter (every parameter of the entry)."""
    for name in sorted(USERS[key] & set(METHODS)):
        cls = _class(name)
        documented = _documented(cls)
        signature = inspect.signature(cls.__init__).parameters
        rendered = _rendered_entries(key, cls.__init__)
        assert rendered
        for entry in rendered:
            for parameter in (part.strip() for part in entry.name.split(",")):
                assert parameter in signature, (name, parameter)
                assert documented[parameter] == (entry.type, "\n".join(entry.desc)), (
                    name, parameter)


@pytest.mark.parametrize("name", METHODS)
def test_no_placeholder_is_left_unfilled(name):
    doc = _class(name).__doc__
    assert "%(" not in doc
    assert "{default}" not in doc


def _probe(doc: str, parameter: str, default: object) -> type:
    """A class with docstring ``doc`` whose ``__init__`` takes ``parameter=default``."""
    return type("Probe", (), {"__doc__": doc, "__init__": _with_default(parameter, default)})


def test_fill_doc_refuses_an_unknown_placeholder_and_a_missing_default():
    with pytest.raises(KeyError, match="no_such_entry"):
        fill_doc(_probe("Bad.\n\n    %(no_such_entry)s\n", "n_bins", 3))
    with pytest.raises(ValueError, match="'domain'"):
        fill_doc(_probe("No domain.\n\n    %(domain)s\n", "n_bins", 3))


def test_fill_doc_indents_the_entry_as_its_placeholder_and_leaves_other_text():
    doc = fill_doc(_probe("Braces {kept} and 100% kept.\n\n        %(max_categories)s\n",
                          "max_categories", 7)).__doc__
    assert doc.splitlines()[0] == "Braces {kept} and 100% kept."
    assert "\n        max_categories : int, default=7\n            Categories kept" in doc
