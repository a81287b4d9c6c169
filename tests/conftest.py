"""Shared fixtures: small tables and the list of synthesizers under test."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth.datasets import make_bayesnet

#: Where the shared real tables live (beside the checkout).
DATA_DIR = Path(os.environ.get("DPSYNTH_DATA",
                               Path(__file__).resolve().parents[1].parent / "shared" / "data"))

#: Synthesizers under the common contract tests, with settings that keep
#: fits fast.  Those whose module is not importable (e.g. no torch) skip.
SYNTHESIZERS = {
    "IndependentSynthesizer": {},
    "MSTSynthesizer": {"max_iters": 200},
    "AIMSynthesizer": {"max_iters": 50, "rounds": 4},
    "DPTBARTSynthesizer": {"epochs": 1, "d_model": 16, "n_layers": 1, "n_heads": 2,
                           "batch_size": 64},
    "SynLMSynthesizer": {"epochs": 1, "d_model": 16, "n_layers": 1, "n_heads": 2,
                         "batch_size": 64},
}


def make_synthesizer(name: str, **params):
    """Instantiate a synthesizer by class name with the fast test settings."""
    module = importlib.import_module("sklearn_dpsynth")
    cls = getattr(module, name, None)
    if cls is None:
        pytest.skip(f"{name} is not available")
    if name in ("DPTBARTSynthesizer", "SynLMSynthesizer"):
        pytest.importorskip("torch")
        pytest.importorskip("opacus")
    settings = {k: v for k, v in SYNTHESIZERS[name].items()
                if k in cls().get_params()}
    settings.update(params)
    return cls(**settings)


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
