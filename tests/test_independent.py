"""IndependentSynthesizer: noisy 1-way marginals converge to the truth."""

import numpy as np
import pytest

from sklearn_dpsynth import IndependentSynthesizer
from sklearn_dpsynth._marginals import contingency_counts, project_to_simplex
from sklearn_dpsynth.datasets import make_bayesnet


def _one_way_error(synth, codes, sizes):
    errors = []
    for j, probs in enumerate(synth.marginals_):
        truth = contingency_counts(codes, sizes, [j])
        errors.append(0.5 * np.abs(probs - truth / truth.sum()).sum())
    return float(np.mean(errors))


def test_marginals_converge_as_epsilon_grows():
    data = make_bayesnet(n_samples=20_000, n_features=6, random_state=1)
    errors = []
    for epsilon in [0.05, 0.5, 5.0, 500.0]:
        runs = [IndependentSynthesizer(domain=data.domain, random_state=seed).fit(
            data.frame, epsilon=epsilon) for seed in range(3)]
        codes = runs[0].domain_.encode(data.frame)
        errors.append(np.mean([_one_way_error(s, codes, s.domain_.sizes) for s in runs]))
    assert all(a > b for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 1e-3


def test_score_is_the_sum_of_log_marginals(bayesnet):
    synth = IndependentSynthesizer(domain=bayesnet.domain, random_state=0).fit(
        bayesnet.frame, epsilon=1.0)
    codes = synth.domain_.encode(bayesnet.frame)
    expected = sum(np.log(p[codes[:, j]]) for j, p in enumerate(synth.marginals_))
    np.testing.assert_allclose(synth.score_samples(bayesnet.frame),
                               expected - synth.domain_.log_widths(codes))
    # the product distribution normalises over the whole encoded domain
    grids = np.meshgrid(*[np.arange(k) for k in synth.domain_.sizes], indexing="ij")
    every_row = np.column_stack([g.ravel() for g in grids])
    assert np.exp(synth._log_likelihood_encoded(every_row)).sum() == pytest.approx(1.0)


def test_heldout_likelihood_is_bounded_by_the_true_entropy(bayesnet):
    synth = IndependentSynthesizer(domain=bayesnet.domain, random_state=0).fit(
        bayesnet.frame, epsilon=100.0)
    # a product model cannot beat the true distribution's cross-entropy
    fresh = make_bayesnet(n_samples=3000, n_features=5, random_state=0)
    assert -synth.score(fresh.frame) >= bayesnet.entropy - 0.05


def test_conditions_fix_columns(bayesnet):
    synth = IndependentSynthesizer(domain=bayesnet.domain, random_state=0).fit(
        bayesnet.frame, epsilon=1.0)
    out = synth.sample(100, conditions={"c2": "v1"})
    assert (out["c2"] == "v1").all()
    with __import__("pytest").raises(ValueError, match="unknown column"):
        synth.sample(5, conditions={"nope": 1})


@pytest.mark.parametrize("total", [1.0, 37.5])
def test_simplex_projection(total):
    rng = np.random.default_rng(0)
    for _ in range(20):
        y = rng.normal(size=7) * 10
        x = project_to_simplex(y, total)
        assert x.min() >= 0 and x.sum() == pytest.approx(total)
        # optimality (KKT): the projection minimises ||x - y|| over the simplex
        for _ in range(20):
            other = rng.dirichlet(np.ones(7)) * total
            assert np.sum((x - y) ** 2) <= np.sum((other - y) ** 2) + 1e-9
