"""Shared fixtures: small tables and the list of synthesizers under test."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.registry import available_methods, get_method_spec

#: Where the shared real tables live (beside the checkout).
DATA_DIR = Path(os.environ.get("DPSYNTH_DATA",
                               Path(__file__).resolve().parents[1].parent / "shared" / "data"))

#: Fast settings of the registered methods for the common contract tests,
#: keyed by registry name.  A method registered without an entry here is
#: tested with its defaults.
FAST_SETTINGS = {
    "independent": {},
    "mst": {"max_iter": 200},
    "aim": {"max_iter": 50, "rounds": 4},
    "dptbart": {"epochs": 1, "d_model": 16, "n_layers": 1, "n_heads": 2, "batch_size": 64},
    "synlm": {"epochs": 1, "d_model": 16, "n_layers": 1, "n_heads": 2, "batch_size": 64},
    "pmw_pub": {"n_uniform": 2000},
    "jam": {"max_iter": 50, "final_max_iter": 100, "rounds": 4},
    "pe": {},
    "dp2stage": {"epochs": 3, "stage1_epochs": 1, "stage1_rows": 200, "d_model": 16,
                 "n_layers": 1, "n_heads": 2, "batch_size": 64},
}

#: Every registered method, with its test settings: the contract tests are
#: parametrised over this, so a newly registered method is tested too.
SYNTHESIZERS = {name: FAST_SETTINGS.get(name, {}) for name in available_methods()}


def make_synthesizer(name, **params):
    """Instantiate a registered method with its fast test settings.

    Skips the test when the method's extra (e.g. torch and opacus) is not installed.
    """
    spec = get_method_spec(name)
    if not spec.installed:
        pytest.skip(f"{name} needs the [{spec.extra}] extra: {spec.missing_modules()} missing")
    cls = spec.load()
    settings = {**SYNTHESIZERS[name], **params}
    return cls(**settings)


def pytest_collection_modifyitems(items):
    """Mark the tests parametrised with a neural method as ``neural``."""
    for item in items:
        name = getattr(item, "callspec", None) and item.callspec.params.get("name")
        if name in SYNTHESIZERS and get_method_spec(name).family == "neural":
            item.add_marker(pytest.mark.neural)


@pytest.fixture(scope="session")
def bayesnet():
    """A small mixed-type table with a known distribution."""
    return make_bayesnet(n_samples=3000, n_features=5, random_state=0)


@pytest.fixture
def mixed_frame():
    """A mixed-type DataFrame with missing values and several dtypes."""
    rng = np.random.default_rng(0)
    n = 400
    return pd.DataFrame({
        "age": rng.integers(18, 80, n),
        "income": rng.normal(50_000, 10_000, n),
        "city": rng.choice(["Paris", "Lyon", "Nice"], n),
        "member": rng.random(n) < 0.3,
        "score": np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 10, n).astype(float)),
    })


MIXED_DOMAIN = {
    "age": (18, 80),
    "income": (0, 100_000),
    "city": ["Lyon", "Nice", "Paris"],
    "score": {"bounds": (0, 10), "n_bins": 10, "missing": True},
}
