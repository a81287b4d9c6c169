"""Data sets: the Bayesian-network generator's ground truth and the Adult loader."""

import itertools

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth.datasets import ADULT_DOMAIN, bundled_adult_path, load_adult, make_bayesnet
from sklearn_dpsynth.domain import Domain

from .conftest import DATA_DIR


def test_bayesnet_likelihood_is_a_distribution():
    data = make_bayesnet(n_samples=10, n_features=4, cardinality=(2, 3), random_state=3)
    cards = data.network.cardinalities
    every_row = np.array(list(itertools.product(*[range(k) for k in cards])))
    probs = np.exp(data.network.log_likelihood_codes(every_row))
    assert probs.sum() == pytest.approx(1.0)
    joint = data.network.joint()
    np.testing.assert_allclose(joint.ravel(), probs)
    entropy = -np.sum(probs * np.log(probs))
    # one numeric column (4 // 3), uniform over a width of 10: + log 10 in its units
    assert data.entropy == pytest.approx(entropy + np.log(10))


def test_bayesnet_frame_encodes_to_the_network_values():
    data = make_bayesnet(n_samples=2000, n_features=6, n_numeric=3, random_state=0)
    codes = Domain.from_declaration(data.domain).encode(data.frame)
    np.testing.assert_array_equal(codes, data.codes)
    np.testing.assert_allclose(data.log_likelihood(data.frame),
                               data.network.log_likelihood_codes(data.codes) - 3 * np.log(10))
    assert data.frame["x1"].dtype == np.int64 and data.frame["x0"].dtype == float


def test_bayesnet_entropy_matches_monte_carlo():
    data = make_bayesnet(n_samples=50_000, n_features=6, random_state=2)
    estimate = -data.log_likelihood(data.frame).mean()
    stderr = data.log_likelihood(data.frame).std() / np.sqrt(len(data.frame))
    assert abs(estimate - data.entropy) < 5 * stderr


def test_bayesnet_is_reproducible_and_validates():
    a = make_bayesnet(n_samples=50, random_state=4)
    b = make_bayesnet(n_samples=50, random_state=4)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    with pytest.raises(ValueError, match="n_numeric"):
        make_bayesnet(n_features=3, n_numeric=5)


ADULT_RAW = DATA_DIR / "adult_raw" / "adult.data"


@pytest.mark.skipif(not ADULT_RAW.exists(), reason="shared data not available")
def test_load_adult_from_the_raw_file():
    data = load_adult(ADULT_RAW)
    frame = data.frame
    assert frame.shape == (30162, 15)
    assert frame["age"].dtype == np.int64 and frame["income"].dtype.kind in "OU" or \
        pd.api.types.is_string_dtype(frame["income"])
    codes = Domain.from_declaration(data.domain).encode(frame)  # every row in the domain
    assert codes.shape == frame.shape
    assert set(data.domain) == set(ADULT_DOMAIN)


def test_load_adult_keeps_missing_values(tmp_path):
    path = tmp_path / "adult.csv"
    header = ",".join(ADULT_DOMAIN)
    rows = ["39,State-gov,77516,Bachelors,13,Never-married,Adm-clerical,Not-in-family,"
            "White,Male,2174,0,40,United-States,<=50K",
            "50,?,83311,Bachelors,13,Married-civ-spouse,?,Husband,White,Male,0,0,13,"
            "United-States,>50K."]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    data = load_adult(path)
    assert data.frame["type_employer"].isna().sum() == 1
    assert data.frame.loc[1, "income"] == ">50K"
    Domain.from_declaration(data.domain).encode(data.frame)
    assert len(load_adult(path, missing="drop").frame) == 1


def test_bundled_adult_loads_offline_and_is_small():
    path = bundled_adult_path()
    assert path.is_file() and path.stat().st_size < 1_000_000
    data = load_adult()
    frame = data.frame
    assert frame.shape == (30162, 15) and not frame.isna().any().any()
    assert list(frame.columns) == list(ADULT_DOMAIN)
    assert Domain.from_declaration(data.domain).encode(frame).shape == frame.shape
    # missing codes follow the UCI documentation, not the rows read (this file has none)
    documented = {"type_employer", "occupation", "country"}
    assert {c for c in ADULT_DOMAIN if data.domain[c] != ADULT_DOMAIN[c]} == documented
    assert load_adult(missing="drop").domain == {c: ADULT_DOMAIN[c] for c in ADULT_DOMAIN}
    assert frame["income"].value_counts()["<=50K"] == 22654  # the UCI class balance


@pytest.mark.skipif(not ADULT_RAW.exists(), reason="shared data not available")
def test_bundled_adult_equals_the_raw_file():
    pd.testing.assert_frame_equal(load_adult().frame, load_adult(ADULT_RAW).frame)


def test_bundled_adult_license_is_noted():
    text = (bundled_adult_path().parent / "README").read_text()
    assert "CC BY 4.0" in text and "10.24432/C5XW20" in text
