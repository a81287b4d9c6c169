"""``score_samples`` is a log-density in the input's units, comparable across binnings."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.special import digamma
from sklearn.model_selection import GridSearchCV

from sklearn_dpsynth import IndependentSynthesizer, MSTSynthesizer


def _beta_frame(n, seed):
    """A smooth density on [0, 1]: Beta(2, 2), p(x) = 6 x (1 - x)."""
    return pd.DataFrame({"x": np.random.default_rng(seed).beta(2.0, 2.0, n)})


#: Mean log-density of Beta(2, 2): minus its differential entropy,
#: -(log B(2, 2) - 2 psi(2) + 2 psi(4)) = 0.1251 nats.
BETA22_MEAN_LOG_DENSITY = -(np.log(1 / 6) - 2 * digamma(2) + 2 * digamma(4))


def _score(n_bins, train, test, epsilon=1e4):
    synth = IndependentSynthesizer(domain={"x": (0.0, 1.0)}, n_bins=n_bins, random_state=0)
    return synth.fit(train, epsilon=epsilon).score(test)


def test_finer_bins_score_higher_until_they_overfit_and_approach_the_true_density():
    train, test = _beta_frame(50_000, 0), _beta_frame(20_000, 1)
    scores = [_score(k, train, test) for k in (2, 4, 8, 16, 32)]
    # the binned density's expected log-density is the truth's minus KL(p || p_binned),
    # which shrinks with the bin width: strictly increasing here
    assert np.all(np.diff(scores) > 0), scores
    # at 32 bins KL(p || p_binned) is ~ h^2/24 * E[(p'/p)^2] ~ 1e-3 nats, the estimate
    # of 32 probabilities from 50,000 rows adds ~ 31 / (2 * 50,000) = 3e-4, and the
    # test mean has a standard error of ~ 0.005 (std of log p(X) ~ 0.7 over 20,000
    # rows): 0.02 is four standard errors plus the bias
    assert scores[-1] == pytest.approx(BETA22_MEAN_LOG_DENSITY, abs=0.02)
    assert scores[-1] < BETA22_MEAN_LOG_DENSITY + 0.02
    # with few rows, very fine bins are mostly empty and the model overfits (its
    # pseudocounts flatten it towards the uniform density, score 0): the held-out
    # score falls well below the true 0.125 and below a moderate binning's
    small = _beta_frame(300, 2)
    coarse, fine = _score(16, small, test), _score(2048, small, test)
    assert fine < coarse - 0.1 and fine < 0


def test_grid_search_over_n_bins_no_longer_picks_the_coarsest():
    data = _beta_frame(6000, 3)
    search = GridSearchCV(
        IndependentSynthesizer(domain={"x": (0.0, 1.0)}, random_state=0),
        {"n_bins": [2, 4, 8, 16, 32]}, cv=3)
    search.fit(data, epsilon=100.0)
    assert search.best_params_["n_bins"] > 4
    means = search.cv_results_["mean_test_score"]
    assert means[0] < means[2]


def test_score_is_code_log_probability_minus_log_bin_width():
    frame = pd.DataFrame({"x": np.random.default_rng(4).uniform(0, 10, 500),
                          "c": np.random.default_rng(5).choice(["a", "b"], 500)})
    synth = IndependentSynthesizer(domain={"x": (0.0, 10.0), "c": ["a", "b"]}, n_bins=5,
                                   random_state=0).fit(frame, epsilon=1.0)
    codes = synth.domain_.encode(frame)
    expected = (np.log(synth.marginals_[0][codes[:, 0]]) - np.log(2.0)
                + np.log(synth.marginals_[1][codes[:, 1]]))
    np.testing.assert_allclose(synth.score_samples(frame), expected)


def _every_value(spec):
    """Values covering every code once, with the measure each stands for.

    Integers and categories are enumerated (counting measure 1 each); a bin of
    a float column is represented by its midpoint, weighted by its width; a
    point mass by itself, weight 1.
    """
    if spec.kind == "categorical":
        return list(spec.categories), [1.0] * len(spec.categories)
    if spec.integer:
        integers = np.arange(np.ceil(spec.edges[0]), np.floor(spec.edges[-1]) + 1)
        return list(integers), [1.0] * len(integers)
    midpoints = 0.5 * (spec.edges[:-1] + spec.edges[1:])
    return (list(midpoints) + list(spec.points),
            list(np.diff(spec.edges)) + [1.0] * len(spec.points))


@pytest.mark.parametrize("cls", [IndependentSynthesizer, MSTSynthesizer])
def test_exp_score_integrates_to_one_over_the_domain(cls):
    rng = np.random.default_rng(6)
    n = 2000
    frame = pd.DataFrame({
        "age": rng.integers(18, 30, n),                         # per-integer codes
        "count": rng.integers(0, 300, n),                       # 16 bins of ~19 integers
        "amount": np.where(rng.random(n) < 0.6, 0.0, rng.uniform(0, 100, n)),
        "c": rng.choice(["u", "v", "w"], n),
    })
    domain = {"age": (18, 29), "count": (0, 299), "c": ["u", "v", "w"],
              "amount": {"bounds": (0.0, 100.0), "points": [0.0]}}
    synth = cls(domain=domain, n_bins=16, random_state=0).fit(frame, epsilon=3.0)
    assert synth.domain_["age"].size == 12 and synth.domain_["count"].size == 16
    assert synth.domain_["amount"].size == 17
    values, measures = zip(*(_every_value(spec) for spec in synth.domain_))
    rows = pd.DataFrame(list(itertools.product(*values)), columns=synth.domain_.columns)
    weight = np.prod(np.array(list(itertools.product(*measures))), axis=1)
    total = np.sum(np.exp(synth.score_samples(rows)) * weight)
    assert total == pytest.approx(1.0, rel=1e-6)


def test_point_mass_is_scored_as_a_probability_and_decodes_exactly():
    rng = np.random.default_rng(7)
    x = np.where(rng.random(4000) < 0.7, 0.0, rng.uniform(0, 1000, 4000))
    frame = pd.DataFrame({"gain": x})
    synth = IndependentSynthesizer(domain={"gain": {"bounds": (0.0, 1000.0), "points": [0]}},
                                   n_bins=10, random_state=0).fit(frame, epsilon=100.0)
    zero, other = synth.score_samples(pd.DataFrame({"gain": [0.0, 50.0]}))
    assert np.exp(zero) == pytest.approx(0.7, abs=0.03)
    assert np.exp(other) == pytest.approx(0.3 / 1000, rel=0.15)  # density per unit
    sample = synth.sample(4000, random_state=0)["gain"]
    assert np.mean(sample == 0.0) == pytest.approx(0.7, abs=0.03)


def test_clipped_values_are_scored_as_clipped():
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"x": rng.normal(50, 5, 3000)})
    synth = IndependentSynthesizer(random_state=0).fit(frame, epsilon=10.0)
    spec = synth.domain_["x"]
    assert spec.clip
    outside = pd.DataFrame({"x": [spec.edges[-1] + 1e6, spec.edges[0] - 1e6]})
    edges = pd.DataFrame({"x": [spec.edges[-1], spec.edges[0]]})
    np.testing.assert_allclose(synth.score_samples(outside), synth.score_samples(edges))


@pytest.mark.parametrize("name", ["independent", "mst", "aim"])
def test_bin_value_is_a_validated_reproducible_hyperparameter(name):
    from sklearn.utils._param_validation import InvalidParameterError

    from .conftest import make_synthesizer
    frame = pd.DataFrame({"x": np.random.default_rng(9).uniform(0, 10, 600),
                          "c": np.random.default_rng(10).choice(["a", "b"], 600)})
    domain = {"x": (0.0, 10.0), "c": ["a", "b"]}
    synth = make_synthesizer(name, domain=domain, n_bins=5, random_state=0)
    assert synth.get_params()["bin_value"] == "uniform"
    synth.fit(frame, epsilon=1.0)
    first = synth.sample(300, random_state=3)
    pd.testing.assert_frame_equal(first, synth.sample(300, random_state=3))
    assert first["x"].nunique() > 5  # spread within the bins
    mid = synth.set_params(bin_value="midpoint").sample(300, random_state=3)
    assert set(mid["x"]) <= {1.0, 3.0, 5.0, 7.0, 9.0}
    # same codes, different placement: every value stays in its bin
    np.testing.assert_array_equal(np.floor(first["x"] / 2), np.floor(mid["x"] / 2))
    with pytest.raises(InvalidParameterError, match="bin_value"):
        make_synthesizer(name, domain=domain, bin_value="median").fit(frame, epsilon=1.0)
