"""Benchmark data sets with a fixed train/test split.

Data live outside the repository, in ``<repo>/../shared/data`` (override with
the ``DPSYNTH_DATA`` environment variable, pointing at the folder that holds
``adult/``, ``adult_raw/``, ...).

Standard split: ``perm = numpy.random.default_rng(0).permutation(n)``; the
rows ``perm[:n // 10]`` are the held-out test set, the rows
``perm[n // 10:]`` the private training table.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

__all__ = ["Dataset", "data_dir", "standard_split", "load_dataset", "DATASETS"]


@dataclass
class Dataset:
    """A benchmark data set, split.

    Attributes
    ----------
    name : str
    train : DataFrame
        Private training table.
    test : DataFrame
        Held-out real rows.
    domain : dict
        Public domain (``domain=`` of the synthesizers and the metrics).
    target : str or None
        Target column for ML efficacy, if any.
    entropy : float or None
        True entropy (nats per row) of the generating distribution, when known.
    description : str
    """

    name: str
    train: pd.DataFrame
    test: pd.DataFrame
    domain: dict
    target: str | None = None
    entropy: float | None = None
    description: str = ""


def data_dir() -> Path:
    """Folder of the shared data: ``$DPSYNTH_DATA`` or ``<repo>/../shared/data``."""
    override = os.environ.get("DPSYNTH_DATA")
    if override:
        return Path(override)
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def _data_file(*parts: str) -> Path:
    """Path of a data file, with a clear error when it is missing."""
    path = data_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(
            f"{path} not found; put the shared data in <repo>/../shared/data or set DPSYNTH_DATA."
        )
    return path


def standard_split(frame: pd.DataFrame, seed: int = 0, test_fraction: float = 0.1) -> tuple:
    """Split rows with ``default_rng(seed).permutation``: the first part is the test set.

    Parameters
    ----------
    frame : DataFrame
        The full table.
    seed : int, default=0
        Seed of the permutation.
    test_fraction : float, default=0.1
        Share of rows held out (``n * test_fraction`` rounded down).

    Returns
    -------
    train, test : DataFrame
        With fresh RangeIndex.
    """
    n = len(frame)
    perm = np.random.default_rng(seed).permutation(n)
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}.")
    n_test = int(np.floor(n * test_fraction + 1e-9))  # n // 10 for the default
    test = frame.iloc[perm[:n_test]].reset_index(drop=True)
    train = frame.iloc[perm[n_test:]].reset_index(drop=True)
    return train, test


def load_adult() -> Dataset:
    """Adult, pre-encoded (14 integer-coded columns, domain from ``adult-domain.json``)."""
    frame = pd.read_csv(_data_file("adult", "adult.csv"))
    with open(_data_file("adult", "adult-domain.json")) as handle:
        domain = {column: int(k) for column, k in json.load(handle).items()}
    train, test = standard_split(frame[list(domain)])
    return Dataset("adult", train, test, domain, target="income>50K",
                   description="UCI Adult, integer codes as in the MST/AIM papers")


def load_adult_raw() -> Dataset:
    """Adult with raw mixed types, loaded by :func:`sklearn_dpsynth.datasets.load_adult`."""
    from sklearn_dpsynth.datasets import load_adult as load_raw

    bunch = load_raw(_data_file("adult_raw", "adult.data"), missing="drop")
    train, test = standard_split(bunch.frame)
    return Dataset("adult_raw", train, test, dict(bunch.domain), target=bunch.target_name,
                   description="UCI Adult, raw values, public domain from the UCI documentation")


def load_bayesnet(n_samples: int = 20_000, n_features: int = 8, random_state: int = 0) -> Dataset:
    """A random Bayesian network's sample (:func:`sklearn_dpsynth.datasets.make_bayesnet`).

    Its true entropy is known, so the held-out NLL minus the entropy estimates
    the KL divergence from the truth to the model.
    """
    from sklearn_dpsynth.datasets import make_bayesnet

    bunch = make_bayesnet(n_samples=n_samples, n_features=n_features, random_state=random_state)
    train, test = standard_split(bunch.frame)
    return Dataset("bayesnet", train, test, dict(bunch.domain), target=None, entropy=bunch.entropy,
                   description=f"make_bayesnet(n_samples={n_samples}, n_features={n_features}, "
                               f"random_state={random_state})")


#: Loaders by name.
DATASETS: dict[str, Callable[[], Dataset]] = {
    "adult": load_adult,
    "adult_raw": load_adult_raw,
    "bayesnet": load_bayesnet,
}


def load_dataset(name: str | Dataset) -> Dataset:
    """Load a data set by name (a :class:`Dataset` is returned as is)."""
    if isinstance(name, Dataset):
        return name
    if name not in DATASETS:
        raise ValueError(f"Unknown dataset {name!r}; choose from {sorted(DATASETS)}.")
    return DATASETS[name]()
