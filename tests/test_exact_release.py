"""Every release is drawn exactly; every mechanism's cost against an independent computation.

The floating-point distinguisher of the Gaussian mechanism: a count ``c``
released as ``c + N(0, sigma^2)`` in float64 gives, when ``|y| < 0.5``, a
multiple of ``2^-53`` for ``c >= 1`` (the sum cancels exactly) but keeps the
noise's low bits for ``c = 0``, so the event ``S = {|y| < 0.5 and y 2^53 not
an integer}`` tells an empty cell from a count of 1.  Each release path runs
on a table ``D`` with an empty canary cell and on ``D'`` with one row in it;
every noisy value any path hands on (intercepted at the discrete Gaussian's
release) must be an integer, so ``S`` never happens.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from sklearn_dpsynth import (AIMSynthesizer, DP2StageSynthesizer, DPTBARTSynthesizer,
                             IndependentSynthesizer, JAMSynthesizer, MSTPublicSynthesizer,
                             MSTSynthesizer, PMWPubSynthesizer, PrivacyLedger,
                             PrivateEvolutionSynthesizer, SynLMSynthesizer)
from sklearn_dpsynth.privacy import (MAX_EPSILON, DiscreteGaussian, ExponentialMechanism,
                                     PermuteAndFlip, SubsampledGaussian, ThresholdedHistogram,
                                     dpsgd_rdp, exponential_rho, gaussian_rho, noisy_row_count,
                                     pure_dp_rho)
from sklearn_dpsynth.privacy._exact import discrete_gaussian_tail, discrete_gaussian_variance
from sklearn_dpsynth.public import measure_workload

COLUMNS = ["a", "b", "c"]
DOMAIN = {"a": 3, "b": 2, "c": 3}
#: Mechanisms whose output is (or is decided by) a discrete Gaussian release.
NOISE_LABELS = {DiscreteGaussian.name, ThresholdedHistogram.name}


def _neighbours():
    """``D`` never has ``a == 2`` (the canary cell); ``D'`` has one such row more."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 2, 400)
    b = (a + (rng.random(400) < 0.2)) % 2
    c = rng.integers(0, 3, 400)
    d = pd.DataFrame({"a": a, "b": b, "c": c})
    return d, pd.concat([d, pd.DataFrame({"a": [2], "b": [0], "c": [1]})], ignore_index=True)


def _distinguisher_events(values):
    y = np.asarray(values, dtype=float).ravel()
    scaled = y * 2.0**53
    return int(np.count_nonzero((np.abs(y) < 0.5) & (scaled != np.round(scaled))))


@pytest.fixture
def releases(monkeypatch):
    """Every output of the discrete Gaussian's release, as the paths hand it on."""
    outputs = []
    original = DiscreteGaussian.release

    def recording(self, values, rng):
        noisy = original(self, values, rng)
        outputs.append(np.array(noisy, dtype=float))
        return noisy

    monkeypatch.setattr(DiscreteGaussian, "release", recording)
    return outputs


def _public():
    rng = np.random.default_rng(5)
    return pd.DataFrame({"a": rng.integers(0, 3, 200), "b": rng.integers(0, 2, 200),
                         "c": rng.integers(0, 3, 200)})


#: Each release path: a function of (table, seed) returning its ledger.
PATHS = {
    "measure_workload": lambda x, seed: measure_workload(
        x, domain=DOMAIN, epsilon=1.0, delta=1e-6, random_state=seed).privacy_ledger,
    "independent": lambda x, seed: IndependentSynthesizer(
        domain=DOMAIN, random_state=seed).fit(x, epsilon=1.0, delta=1e-6).privacy_ledger_,
    "mst": lambda x, seed: MSTSynthesizer(
        domain=DOMAIN, max_iter=30, random_state=seed).fit(
        x, epsilon=1.0, delta=1e-6).privacy_ledger_,
    "aim": lambda x, seed: AIMSynthesizer(
        domain=DOMAIN, max_iter=20, rounds=3, random_state=seed).fit(
        x, epsilon=1.0, delta=1e-6).privacy_ledger_,
    "pmw_pub": lambda x, seed: PMWPubSynthesizer(
        domain=DOMAIN, random_state=seed).fit(
        x, epsilon=1.0, delta=1e-6, public_data=_public()).privacy_ledger_,
    "mst_public": lambda x, seed: MSTPublicSynthesizer(
        domain=DOMAIN, random_state=seed).fit(
        x, epsilon=1.0, delta=1e-6, public_data=_public()).privacy_ledger_,
    "jam": lambda x, seed: JAMSynthesizer(
        domain=DOMAIN, rounds=3, max_iter=20, final_max_iter=30, random_state=seed).fit(
        x, epsilon=1.0, delta=1e-6, public_data=_public()).privacy_ledger_,
    "pe": lambda x, seed: PrivateEvolutionSynthesizer(
        domain=DOMAIN, random_state=seed, count_share=0.1).fit(
        x, epsilon=1.0, delta=1e-6).privacy_ledger_,
    "domain_learning": lambda x, seed: IndependentSynthesizer(
        random_state=seed, preprocessing_budget=0.5).fit(
        x.assign(a=x["a"].map({0: "x", 1: "y", 2: "canary"})),
        epsilon=1.0, delta=1e-6).privacy_ledger_,
}


def _neural_row_count(cls):
    def run(x, seed):
        ledger = PrivacyLedger(1.0, 1e-6)
        cls()._plan_private_run(len(x), ledger, np.random.default_rng(seed))
        return ledger
    return run


PATHS.update({f"{cls.__name__} row count": _neural_row_count(cls)
              for cls in (DPTBARTSynthesizer, SynLMSynthesizer, DP2StageSynthesizer)})


@pytest.mark.parametrize("path", list(PATHS))
def test_every_release_path_hands_on_integers_only(path, releases):
    d, d_prime = _neighbours()
    for table in (d, d_prime):
        for seed in (0, 1):
            start = len(releases)
            ledger = PATHS[path](table, seed)
            noisy = releases[start:]
            recorded = [e for e in ledger.entries if e.mechanism in NOISE_LABELS]
            # every noise entry of the ledger went through the exact release
            assert len(noisy) == len(recorded) > 0
            for values in noisy:
                assert np.array_equal(values, np.round(values))
                assert _distinguisher_events(values) == 0


def test_domain_learning_thresholds_with_the_discrete_tail():
    d, d_prime = _neighbours()
    x = d_prime.assign(a=d_prime["a"].map({0: "x", 1: "y", 2: "canary"}))
    ledger = IndependentSynthesizer(random_state=0, preprocessing_budget=0.5).fit(
        x, epsilon=1.0, delta=1e-6).privacy_ledger_
    entry = next(e for e in ledger.entries if e.mechanism == ThresholdedHistogram.name)
    mechanism = ThresholdedHistogram(entry.noise_scale, 1.0 - 1e-12)
    k = entry.details["threshold"] - 1
    assert entry.delta == pytest.approx(discrete_gaussian_tail(entry.noise_scale, k), rel=1e-12)
    assert entry.delta >= _discrete_tail(entry.noise_scale, k)
    assert mechanism.k == 1  # a delta near 1 needs only the smallest threshold


# ------------------------------------------------- costs, computed apart
def _log_pmf(sigma, support, shift=0):
    log_weights = -((support - shift) ** 2) / (2.0 * sigma**2)
    return log_weights - logsumexp(log_weights)


def _discrete_tail(sigma, k):
    """``P(Z >= k)`` of the law the sampler draws, ``N_Z(0, s2)``, by summation."""
    scale = math.sqrt(discrete_gaussian_variance(sigma))
    support = np.arange(-60 * math.ceil(scale) - 60, 60 * math.ceil(scale) + 61)
    log_p = _log_pmf(scale, support)
    return float(np.exp(logsumexp(log_p[support >= k])))


@pytest.mark.parametrize("sigma, shift", [(0.7, (1,)), (2.5, (1,)), (3.0, (2,)), (1.5, (1, 1))])
def test_discrete_gaussian_cost_is_its_renyi_divergence(sigma, shift):
    """Renyi divergence of neighbouring outputs, by summation over the integers.

    For an integer shift ``s`` and order ``alpha`` the divergence is
    ``alpha s^2 / (2 sigma^2)`` times the ratio of the normaliser shifted
    by ``1 - alpha`` to the unshifted one (Canonne, Kamath & Steinke 2020):
    1 at integer orders, below 1 otherwise, so ``rho`` is the zCDP cost.
    """
    support = np.arange(-60 * math.ceil(sigma) - 60, 60 * math.ceil(sigma) + 61)
    rho = DiscreteGaussian(sigma, sensitivity=math.hypot(*shift)).cost().rho
    for alpha in (1.5, 2.0, 5.0, 20.0):
        divergence = 0.0
        for s in shift:  # independent coordinates: divergences add
            log_p, log_q = _log_pmf(sigma, support), _log_pmf(sigma, support, s)
            divergence += logsumexp(alpha * log_p + (1 - alpha) * log_q) / (alpha - 1)
        # equal at integer orders (the shifted sum is the normaliser), below elsewhere
        if alpha == round(alpha):
            assert divergence == pytest.approx(alpha * rho, rel=1e-9)
        else:
            assert alpha * rho * 0.99 < divergence <= alpha * rho * (1 + 1e-12)


@pytest.mark.parametrize("sigma, delta", [(0.8, 1e-6), (3.0, 1e-9), (12.0, 1e-3)])
def test_thresholded_histogram_delta_is_the_discrete_tail(sigma, delta):
    mechanism = ThresholdedHistogram(sigma, delta)
    cost = mechanism.cost()
    assert cost.rho == pytest.approx(1.0 / (2.0 * sigma**2), rel=1e-12)
    assert _discrete_tail(sigma, mechanism.k) <= cost.delta <= delta
    if mechanism.k > 1:  # the smallest threshold the bound allows
        assert discrete_gaussian_tail(sigma, mechanism.k - 1) > delta
    # a key with count 1 (present in one neighbour only) is released w.p. P(Z >= k)
    rng = np.random.default_rng(0)
    released = sum(mechanism.release(np.array([1]), rng).size for _ in range(4000))
    assert released / 4000 <= cost.delta + 5 * math.sqrt(cost.delta / 4000) + 1e-3


def test_release_records_the_mechanisms_cost_before_releasing():
    ledger = PrivacyLedger(10.0, 1e-6)
    rng = np.random.default_rng(0)
    ledger.select([0.0, 1.0], rho=0.01, rng=rng, target="e")
    ledger.select([0.0, 1.0], rho=0.01, rng=rng, target="p", method="permute-and-flip")
    ledger.gaussian(np.array([3, 4]), sigma=2.0, rng=rng, target="g", sensitivity=1.5)
    exponential, flip, gaussian = ledger.entries
    assert exponential.rho == pytest.approx(0.01) == exponential_rho(exponential.noise_scale)
    assert flip.rho == pytest.approx(0.01) == pure_dp_rho(flip.noise_scale)
    assert gaussian.rho == gaussian_rho(2.0, 1.5)
    assert [e.mechanism for e in ledger.entries] == [ExponentialMechanism.name,
                                                     PermuteAndFlip.name, "gaussian"]
    with pytest.raises(ValueError, match="method"):
        ledger.select([0.0], rho=0.01, rng=rng, target="x", method="gumbel")


def test_dpsgd_release_runs_after_its_curve_is_recorded():
    ledger = PrivacyLedger(3.0, 1e-6)
    orders = np.arange(2.0, 64.0)
    mechanism = SubsampledGaussian(sample_rate=0.01, noise_multiplier=1.2, steps=50,
                                   max_grad_norm=1.0, orders=orders)
    seen = []
    out = ledger.release(mechanism, lambda: seen.append(len(ledger.entries)) or "weights",
                         rng=None, target="weights")
    assert out == "weights" and seen == [1]
    np.testing.assert_allclose(ledger.entries[0].rdp_at(orders),
                               dpsgd_rdp(0.01, 1.2, 50, orders), rtol=1e-12)


def test_integer_mechanisms_refuse_fractional_values():
    with pytest.raises(ValueError, match="integer"):
        DiscreteGaussian(1.0).release(np.array([0.5, 1.0]), np.random.default_rng(0))


@pytest.mark.parametrize("selection", [ExponentialMechanism, PermuteAndFlip])
def test_selections_refuse_empty_or_non_finite_scores(selection):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="at least one candidate"):
        selection(1.0).release([], rng)
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="finite"):
            selection(1.0).release([0.0, bad], rng)


def test_one_row_count_release():
    ledger = PrivacyLedger(1.0, 1e-6)
    count = noisy_row_count(ledger, 1000, 0.01, np.random.default_rng(0))
    assert count == round(count)
    [entry] = ledger.entries
    assert (entry.target, entry.mechanism) == ("row count", "gaussian")
    assert entry.rho == pytest.approx(0.01, rel=1e-12)


# ------------------------------------------------------------------ budget
def test_huge_epsilon_is_refused_naming_epsilon():
    d, _ = _neighbours()
    with pytest.raises(ValueError, match="epsilon"):
        IndependentSynthesizer(domain=DOMAIN).fit(d, epsilon=1e300)
    with pytest.raises(ValueError, match="epsilon"):
        PrivacyLedger(1e300, 1e-9)
    synth = IndependentSynthesizer(domain=DOMAIN, pseudocount=0,
                                   random_state=0).fit(d, epsilon=MAX_EPSILON)
    # with no noise to speak of the marginal of 'a' is the exact one
    np.testing.assert_allclose(synth.marginals_[0], [np.mean(d["a"] == v) for v in range(3)])


def test_dpsgd_noise_is_drawn_in_opacus_secure_mode(monkeypatch):
    """What remains floating point runs with the four-draw mitigation, on the fit's seed."""
    pytest.importorskip("torch")
    pytest.importorskip("opacus")
    from opacus.optimizers import optimizer, optimizer_fast_gradient_clipping

    modes = []
    original = optimizer._generate_noise

    def recording(*args, **kwargs):
        modes.append((kwargs.get("secure_mode"), kwargs.get("generator") is not None))
        return original(*args, **kwargs)

    for module in (optimizer, optimizer_fast_gradient_clipping):
        monkeypatch.setattr(module, "_generate_noise", recording)
    d, _ = _neighbours()
    DPTBARTSynthesizer(domain=DOMAIN, epochs=1, d_model=16, n_layers=1, n_heads=2,
                       batch_size=64, random_state=0).fit(d, epsilon=1.0, delta=1e-6)
    assert modes and set(modes) == {(True, True)}
