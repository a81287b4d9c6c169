"""The method registry: names, lazy imports, clear errors, registration."""

import importlib.util
import subprocess
import sys
import textwrap

import pytest

import sklearn_dpsynth
from sklearn_dpsynth import registry
from sklearn_dpsynth.registry import (
    available_methods,
    get_method,
    get_method_spec,
    register_method,
)

from .conftest import SYNTHESIZERS

BUILT_IN = {
    "independent": ("IndependentSynthesizer", "marginal", None),
    "mst": ("MSTSynthesizer", "marginal", None),
    "aim": ("AIMSynthesizer", "marginal", None),
    "dptbart": ("DPTBARTSynthesizer", "neural", "neural"),
    "synlm": ("SynLMSynthesizer", "neural", "neural"),
    "dp2stage": ("DP2StageSynthesizer", "neural", "neural"),
    "pmw_pub": ("PMWPubSynthesizer", "public", None),
    "mst_public": ("MSTPublicSynthesizer", "public", None),
    "jam": ("JAMSynthesizer", "public", None),
    "pe": ("PrivateEvolutionSynthesizer", "evolution", None),
}


@pytest.fixture
def fresh_registry(monkeypatch):
    """The registry, restored after the test."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    return registry


@pytest.fixture
def no_torch(monkeypatch):
    """Pretend that torch is not installed (find_spec cannot see it)."""
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real_find_spec(name, *a))


def test_built_in_methods_in_order_with_their_classes():
    assert available_methods() == list(BUILT_IN)
    assert available_methods(family="marginal") == ["independent", "mst", "aim"]
    assert available_methods(family="neural") == ["dptbart", "synlm", "dp2stage"]
    for name, (class_name, family, extra) in BUILT_IN.items():
        spec = get_method_spec(name)
        assert (spec.family, spec.extra) == (family, extra)
        assert spec.description and "\n" not in spec.description
        if spec.installed:
            assert get_method(name) is getattr(sklearn_dpsynth, class_name)


def test_contract_tests_cover_every_registered_method():
    assert list(SYNTHESIZERS) == available_methods()


def test_unknown_name_lists_the_registered_ones():
    with pytest.raises(ValueError, match=r"Unknown method 'msst'; registered methods: "
                                         r"independent, mst, aim, dptbart, synlm, dp2stage, pmw_pub, mst_public, jam, pe\."):
        get_method("msst")


def test_missing_extra_is_named(no_torch):
    spec = get_method_spec("dptbart")
    assert spec.missing_modules() == ["torch"] and not spec.installed
    with pytest.raises(ImportError, match=r"'dptbart' needs the \[neural\] extra \(torch not "
                                          r"installed\): pip install 'sklearn-dpsynth\[neural\]'"):
        get_method("dptbart")
    assert available_methods(installed_only=True) == [
        name for name, (_, _, extra) in BUILT_IN.items() if extra != "neural"]
    assert get_method("mst") is sklearn_dpsynth.MSTSynthesizer


def test_core_methods_load_without_importing_torch():
    script = textwrap.dedent("""
        import sys

        class NoTorch:  # any import of torch or opacus now fails
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "opacus"):
                    raise ModuleNotFoundError(f"No module named {name!r}")

        sys.meta_path.insert(0, NoTorch())
        from sklearn_dpsynth.registry import get_method
        assert get_method("mst").__name__ == "MSTSynthesizer"
        assert "torch" not in sys.modules
        try:
            get_method("synlm")
        except ImportError as exc:
            assert "[neural]" in str(exc), exc
        else:
            raise AssertionError("no ImportError without torch")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]


def test_register_a_method_by_import_string_or_class(fresh_registry):
    spec = register_method("copy_of_mst", "sklearn_dpsynth.marginal.mst:MSTSynthesizer",
                           family="marginal", description="  MST under another name. ")
    assert spec.description == "MST under another name."
    assert available_methods()[-1] == "copy_of_mst"
    assert get_method("copy_of_mst") is sklearn_dpsynth.MSTSynthesizer
    register_method("by_class", sklearn_dpsynth.IndependentSynthesizer, family="other",
                    description="The baseline, registered as a class.")
    assert get_method("by_class") is sklearn_dpsynth.IndependentSynthesizer
    # lazy: a broken import string registers, and fails only when used, naming the method
    register_method("ghost", "no_such_module_for_tests:Ghost", family="other",
                    description="Cannot be imported.")
    with pytest.raises(ImportError, match="'ghost' is registered as 'no_such_module_for_tests"):
        get_method("ghost")
    register_method("ghost2", "sklearn_dpsynth:NoSuchSynthesizer", family="other",
                    description="Wrong attribute.")
    with pytest.raises(ImportError, match="'ghost2'.*NoSuchSynthesizer"):
        get_method("ghost2")


def test_register_rejects_bad_entries(fresh_registry):
    good = dict(family="marginal", description="d")
    with pytest.raises(ValueError, match="already registered.*replace=True"):
        register_method("mst", "sklearn_dpsynth:MSTSynthesizer", **good)
    replaced = register_method("mst", "sklearn_dpsynth:AIMSynthesizer", replace=True, **good)
    assert get_method("mst") is sklearn_dpsynth.AIMSynthesizer and replaced.name == "mst"
    with pytest.raises(ValueError, match="name"):
        register_method("Bad Name", "a:B", **good)
    with pytest.raises(ValueError, match="target"):
        register_method("nocolon", "sklearn_dpsynth.MSTSynthesizer", **good)
    with pytest.raises(ValueError, match="target"):
        register_method("notaclass", len, **good)
    with pytest.raises(ValueError, match="family"):
        register_method("fam", "a:B", family="gan", description="d")
    with pytest.raises(ValueError, match="extra"):
        register_method("ext", "a:B", extra="gpu", **good)
    with pytest.raises(ValueError, match="description"):
        register_method("desc", "a:B", family="other", description=" ")
    assert "Bad Name" not in available_methods() and "fam" not in available_methods()


def test_demo_job_takes_its_choices_from_the_registry(fresh_registry, capsys):
    from sklearn_dpsynth.__main__ import main
    register_method("ghost", "no_such_module_for_tests:Ghost", family="other",
                    description="Cannot be imported.")
    assert main(["--method", "ghost", "--n-samples", "200"]) == 2
    assert "'ghost' is registered as" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--method", "nope"])
