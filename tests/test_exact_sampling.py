"""The exact samplers of ``privacy._exact`` against their exact laws.

Every law is computed here independently of the sampler (normalised
weights over a wide support, exact rationals, brute force over
permutations) and compared with a chi-square or binomial test at a fixed
seed; each test also shows that it rejects a deliberately wrong law.
"""

import dataclasses
import itertools
import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from sklearn_dpsynth.privacy import _exact
from sklearn_dpsynth.privacy._exact import (
    bernoulli_exp,
    discrete_gaussian,
    discrete_gaussian_tail,
    discrete_gaussian_variance,
    exponential_choice,
    permute_and_flip_choice,
)

SIGMAS = [0.3, 0.4, 1.0, 4.53, 37.2, 1000.0]
#: A correct sampler passes at this p-value with the fixed seeds below.
P_PASS = 1e-4


def _discrete_gaussian_pmf(variance: float, support: np.ndarray) -> np.ndarray:
    """``exp(-k^2 / (2 s2))`` normalised over a support wide enough to hold it all."""
    weights = np.exp(-support.astype(float) ** 2 / (2.0 * variance))
    return weights / weights.sum()


def _chi_square_pvalue(draws: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    """Chi-square goodness of fit on at most about 400 cells.

    Neighbouring values are pooled until a cell expects ``max(20, n/400)``
    draws, which keeps the test's power against smooth departures (a wrong
    variance) at large sigma.
    """
    counts = np.bincount(draws - support[0], minlength=support.size).astype(float)
    assert counts.size == support.size, "a draw fell outside the support"
    expected = pmf * draws.size
    cells_observed, cells_expected = [], []
    observed_run = expected_run = 0.0
    for observed, wanted in zip(counts, expected):
        observed_run += observed
        expected_run += wanted
        if expected_run >= max(20.0, draws.size / 400):
            cells_observed.append(observed_run)
            cells_expected.append(expected_run)
            observed_run = expected_run = 0.0
    cells_observed[-1] += observed_run
    cells_expected[-1] += expected_run
    return float(stats.chisquare(cells_observed, cells_expected).pvalue)


def _gaussian_support(variance: float) -> np.ndarray:
    half = int(60 * math.sqrt(variance)) + 10
    return np.arange(-half, half + 1)


@pytest.mark.parametrize("sigma", SIGMAS)
def test_discrete_gaussian_matches_its_pmf_and_rejects_a_wrong_one(sigma):
    draws = discrete_gaussian(sigma, 10**6, np.random.default_rng(11))
    variance = float(discrete_gaussian_variance(sigma))
    support = _gaussian_support(variance)
    assert _chi_square_pvalue(draws, support, _discrete_gaussian_pmf(variance, support)) > P_PASS
    # the test has power: a variance 3% off is rejected outright
    wrong = _discrete_gaussian_pmf(variance * 1.03, support)
    assert _chi_square_pvalue(draws, support, wrong) < 1e-8


def test_variance_is_the_smallest_grid_value_above_sigma_squared():
    for sigma in SIGMAS + [0.05, 2.0**20 + 0.5, 7.0, 1e6 / 3]:
        variance = discrete_gaussian_variance(sigma)
        exact = Fraction(sigma) ** 2
        assert isinstance(variance, Fraction)
        assert exact <= variance < exact * (1 + Fraction(1, 2**24))
        plan = _exact._GaussianPlan.for_sigma(sigma)
        assert plan.scale == math.floor(sigma) + 1
        assert variance == Fraction(plan.scale * plan.level, plan.grid)
        # one grid step lower is below sigma^2: the representation is tight
        assert Fraction(plan.scale * (plan.level - 1), plan.grid) < exact
    assert discrete_gaussian_variance(3.0) == 9  # exactly representable: no excess


def test_outputs_are_int64_shaped_and_reproducible():
    first = discrete_gaussian(2.5, (3, 4), np.random.default_rng(5))
    second = discrete_gaussian(2.5, (3, 4), np.random.default_rng(5))
    assert first.dtype == np.int64 and first.shape == (3, 4)
    np.testing.assert_array_equal(first, second)
    assert discrete_gaussian(2.5, 0, np.random.default_rng(5)).shape == (0,)
    scores = [0.0, 3.0, 2.5, -1.0]
    for choose in (exponential_choice, permute_and_flip_choice):
        picks = [choose(scores, 1.0, 1.0, np.random.default_rng(s)) for s in range(30)]
        again = [choose(scores, 1.0, 1.0, np.random.default_rng(s)) for s in range(30)]
        assert picks == again and all(isinstance(p, int) for p in picks)
    bits = bernoulli_exp(np.arange(10), 3, np.random.default_rng(2))
    np.testing.assert_array_equal(bits, bernoulli_exp(np.arange(10), 3, np.random.default_rng(2)))
    assert bits.dtype == bool


@pytest.mark.parametrize("sigma", [1.0, 4.53])
def test_python_integer_path_has_the_same_law(sigma):
    plan = _exact._GaussianPlan.for_sigma(sigma)
    variance = float(plan.variance)
    support = _gaussian_support(variance)
    pmf = _discrete_gaussian_pmf(variance, support)
    draws = _exact._discrete_gaussian_python(plan.variance, plan.scale, 20_000,
                                             np.random.default_rng(3))
    assert draws.dtype == np.int64
    assert _chi_square_pvalue(draws, support, pmf) > P_PASS
    # the int64 path with every proposal beyond |y| = ceil(s2 / t) sent outside
    # (vectorised whole part of the exponent, then Python integers)
    narrow = dataclasses.replace(plan, max_magnitude=-(-plan.level // plan.grid))
    draws = _exact._discrete_gaussian_int64(narrow, 20_000, np.random.default_rng(4))
    assert _chi_square_pvalue(draws, support, pmf) > P_PASS
    assert _chi_square_pvalue(draws, support, _discrete_gaussian_pmf(variance * 1.2, support)) < 1e-6


def test_scales_outside_the_int64_bounds_still_sample():
    # sigma = 2**30: the int64 path would leave too many proposals to Python ints
    sigma = 2.0**30
    assert not _exact._GaussianPlan.for_sigma(sigma).fits_int64
    draws = discrete_gaussian(sigma, 300, np.random.default_rng(0))
    assert draws.dtype == np.int64
    assert abs(draws.mean()) < 4 * sigma / math.sqrt(300)
    assert 0.6 < draws.var() / sigma**2 < 1.4
    # tiny sigma: essentially always 0, still through the exact path
    assert not _exact._GaussianPlan.for_sigma(0.01).fits_int64
    assert _exact._GaussianPlan.for_sigma(0.05).fits_int64  # through int64, |y| > 0 outside
    assert np.all(discrete_gaussian(0.01, 50, np.random.default_rng(0)) == 0)
    assert np.all(discrete_gaussian(0.05, 10_000, np.random.default_rng(0)) == 0)
    with pytest.raises(ValueError, match="sigma"):
        discrete_gaussian(2.0**60, 1, np.random.default_rng(0))
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="sigma"):
            discrete_gaussian(bad, 1, np.random.default_rng(0))


def test_discrete_laplace_matches_its_pmf():
    for scale in (1, 3, 40):
        draws = _exact._discrete_laplace(scale, 200_000, np.random.default_rng(scale))
        support = np.arange(-60 * scale - 10, 60 * scale + 11)
        weights = np.exp(-np.abs(support) / scale)
        assert _chi_square_pvalue(draws, support, weights / weights.sum()) > P_PASS


@pytest.mark.parametrize("numerator, denominator", [
    (0, 1), (1, 3), (1, 1), (2, 3), (7, 2), (22, 7), (5, 1), (10**15, 3 * 10**14 + 1)])
def test_bernoulli_exp_frequencies(numerator, denominator):
    size = 10**6
    draws = bernoulli_exp(np.full(size, numerator), denominator, np.random.default_rng(9))
    probability = math.exp(-numerator / denominator)
    if probability == 1.0:
        assert draws.all()
        return
    assert stats.binomtest(int(draws.sum()), size, probability).pvalue > P_PASS
    # power: a probability eight standard errors off is rejected
    shift = 8 * math.sqrt(probability * (1 - probability) / size)
    assert stats.binomtest(int(draws.sum()), size, probability + shift).pvalue < 1e-6


def test_bernoulli_exp_arrays_of_denominators_and_python_integers():
    rng = np.random.default_rng(1)
    numerators = np.tile(np.array([3, 1, 9, 0]), 100_000)
    denominators = np.tile(np.array([4, 7, 2, 5]), 100_000)
    draws = bernoulli_exp(numerators, denominators, rng).reshape(-1, 4)
    for column, (n, d) in enumerate([(3, 4), (1, 7), (9, 2), (0, 5)]):
        hits = int(draws[:, column].sum())
        if n == 0:
            assert hits == 100_000
        else:
            assert stats.binomtest(hits, 100_000, math.exp(-n / d)).pvalue > P_PASS
    # beyond int64: object arrays of Python ints, drawn element by element
    big = np.array([10**30] * 20_000, dtype=object)
    draws = bernoulli_exp(big, 3 * 10**29, rng)
    assert stats.binomtest(int(draws.sum()), 20_000, math.exp(-10 / 3)).pvalue > P_PASS
    # and a uniform below a bound past 2**62
    values = [_exact._uniform_below(3 * 2**70, rng) for _ in range(20_000)]
    thirds = np.bincount([v // 2**70 for v in values], minlength=3)
    assert max(values) < 3 * 2**70
    assert stats.chisquare(thirds).pvalue > P_PASS


def test_bernoulli_exp_rejects_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="numerator"):
        bernoulli_exp(np.array([-1]), 2, rng)
    with pytest.raises(ValueError, match="denominator"):
        bernoulli_exp(np.array([1]), 0, rng)
    with pytest.raises(TypeError, match="numerator"):
        bernoulli_exp(np.array([0.5]), 2, rng)
    assert bernoulli_exp(np.array([10**6]), 1, rng).tolist() == [False]


def _grid_law(scores, epsilon, sensitivity):
    """The selection weights on the grid, computed from the definitions."""
    step = Fraction(sensitivity) / 2**10
    units = [math.floor(Fraction(s) / step) for s in scores]
    mantissa, exponent = math.frexp(epsilon)
    epsilon_rounded = Fraction(math.floor(mantissa * 2**30)) * Fraction(2) ** (exponent - 30)
    rate = epsilon_rounded / (2 * (2**10 + 1))
    top = max(units)
    return np.array([math.exp(-float(rate * (top - u))) for u in units])


def _permute_and_flip_law(weights):
    """Brute force over all visiting orders."""
    law = np.zeros(len(weights))
    orders = list(itertools.permutations(range(len(weights))))
    for order in orders:
        survive = 1.0
        for index in order:
            law[index] += survive * weights[index] / len(orders)
            survive *= 1 - weights[index]
    return law


SELECTION_CASES = [
    ([0.0, 1.3, 2.7, 2.7, -5.0], 1.5, 1.0),   # ties at the top
    ([10.0, 10.0, 10.0], 0.7, 2.0),           # all tied: uniform
    ([0.1, -0.4, 3.9, 1.0], 2.0, 0.5),
    ([1e6, 1e6 - 3, 1e6 - 700], 1.0, 1.0),    # large scores, one far below
]


@pytest.mark.parametrize("scores, epsilon, sensitivity", SELECTION_CASES)
def test_exponential_choice_law(scores, epsilon, sensitivity):
    weights = _grid_law(scores, epsilon, sensitivity)
    law = weights / weights.sum()
    rng = np.random.default_rng(21)
    draws = [exponential_choice(scores, epsilon, sensitivity, rng) for _ in range(20_000)]
    _assert_law(np.bincount(draws, minlength=len(scores)), law)


@pytest.mark.parametrize("scores, epsilon, sensitivity", SELECTION_CASES)
def test_permute_and_flip_law(scores, epsilon, sensitivity):
    law = _permute_and_flip_law(_grid_law(scores, epsilon, sensitivity))
    assert law.sum() == pytest.approx(1.0)
    rng = np.random.default_rng(22)
    draws = [permute_and_flip_choice(scores, epsilon, sensitivity, rng) for _ in range(20_000)]
    _assert_law(np.bincount(draws, minlength=len(scores)), law)


def _assert_law(counts, law):
    support = law > 0
    expected = law[support] * counts.sum()
    keep = expected > 1e-9 * counts.sum()
    assert counts[support][~keep].sum() == 0
    assert stats.chisquare(counts[support][keep], expected[keep]
                           * counts.sum() / expected[keep].sum()).pvalue > P_PASS


def test_selection_law_tests_have_power():
    scores, epsilon, sensitivity = SELECTION_CASES[0]
    rng = np.random.default_rng(21)
    draws = np.bincount([exponential_choice(scores, epsilon, sensitivity, rng)
                         for _ in range(20_000)], minlength=5)
    # the permute-and-flip law is not the exponential mechanism's
    wrong = _permute_and_flip_law(_grid_law(scores, epsilon, sensitivity))
    assert stats.chisquare(draws, wrong * draws.sum()).pvalue < 1e-6


def test_single_candidate():
    for choose in (exponential_choice, permute_and_flip_choice):
        assert choose([4.2], 1.0, 1.0, np.random.default_rng(0)) == 0
        with pytest.raises(ValueError, match="candidate"):
            choose([], 1.0, 1.0, np.random.default_rng(0))
        with pytest.raises(ValueError, match="finite"):
            choose([0.0, float("nan")], 1.0, 1.0, np.random.default_rng(0))
        with pytest.raises(ValueError, match="epsilon"):
            choose([0.0], 0.0, 1.0, np.random.default_rng(0))


def test_grid_floor_is_exact():
    rng = np.random.default_rng(8)
    for sensitivity in (1.0, 0.3, 7.25, 1e-3):
        step = Fraction(sensitivity) / 2**10
        scores = np.concatenate([
            rng.normal(0, 1e4, 500),
            [float(step * j) for j in (-3, 0, 5, 123457)],           # on the grid
            [math.nextafter(float(step * j), -math.inf) for j in (1, 77, -9)],  # just below
        ])
        gaps = _exact._grid_gaps(scores, sensitivity)
        units = [math.floor(Fraction(s) / step) for s in scores]
        assert gaps.tolist() == [max(units) - u for u in units]
    # scores too large for the float floor go through fractions, also exactly
    huge = np.array([2.0**70, 2.0**70 - 2.0**20, 3.3])
    gaps = _exact._grid_gaps(huge, 1.0)
    units = [math.floor(Fraction(s) * 2**10) for s in huge]
    assert [int(g) for g in gaps] == [max(units) - u for u in units]


@pytest.mark.parametrize("choose", ["exponential", "permute_and_flip"])
def test_selection_is_epsilon_dp_on_neighbouring_scores(choose):
    """Scores moved by at most the sensitivity change each probability by <= e^epsilon."""
    rng = np.random.default_rng(30)
    epsilon, sensitivity = 0.8, 1.0
    # near-worst cases: one candidate against many (exponential), against one (permute-and-flip)
    many = 300 if choose == "exponential" else 2
    pairs = [(np.zeros(many), np.r_[-sensitivity, np.full(many - 1, sensitivity)])]
    for _ in range(200):
        scores = rng.normal(0, 3, 5)
        moved = scores + rng.uniform(-sensitivity, sensitivity, 5)
        edge = rng.integers(0, 5)  # one score moved by exactly the sensitivity
        moved[edge] = scores[edge] + sensitivity * rng.choice([-1.0, 1.0])
        pairs.append((scores, moved))
    ratios = []
    for pair in pairs:
        laws = []
        for vector in pair:
            weights = _grid_law(vector, epsilon, sensitivity)
            laws.append(weights / weights.sum() if choose == "exponential"
                        else _permute_and_flip_law(weights))
        ratios.append(np.max(np.abs(np.log(laws[0]) - np.log(laws[1]))))
    assert max(ratios) <= epsilon * (1 + 1e-12)
    # and the grid costs little: the near-worst case comes within 1% of epsilon
    assert ratios[0] >= epsilon * 0.99


def _exact_tail(variance: Fraction, k: int) -> Decimal:
    """``P(Z >= k)`` in 40-digit decimal arithmetic over a support of +-60 sigma."""
    getcontext().prec = 40
    s2 = Decimal(variance.numerator) / Decimal(variance.denominator)
    half = int(60 * math.sqrt(float(variance))) + 10
    weights = {j: (-(Decimal(j) ** 2) / (2 * s2)).exp() for j in range(0, half + 1)}
    total = weights[0] + 2 * sum(weights[j] for j in range(1, half + 1))
    if k >= 0:
        return sum(weights[j] for j in range(k, half + 1)) / total
    return 1 - sum(weights[j] for j in range(1 - k, half + 1)) / total


@pytest.mark.parametrize("sigma", [0.4, 1.0, 4.53, 37.2])
def test_tail_bound_is_above_and_close_to_the_exact_tail(sigma):
    variance = discrete_gaussian_variance(sigma)
    for k in [-5, -1, 0, 1, 2, int(2 * sigma), int(5 * sigma) + 1, int(9 * sigma) + 3]:
        exact = _exact_tail(variance, k)
        bound = discrete_gaussian_tail(sigma, k)
        assert Decimal(bound) >= exact
        if exact > Decimal(1e-300):
            assert Decimal(bound) <= exact * Decimal(1 + 1e-8)
    assert discrete_gaussian_tail(sigma, 10**9) > 0
    with pytest.raises(TypeError, match="k"):
        discrete_gaussian_tail(sigma, 2.5)


def test_tail_bound_large_sigma_against_the_empirical_tail():
    sigma = 1000.0
    variance = discrete_gaussian_variance(sigma)
    bound = discrete_gaussian_tail(sigma, 2500)
    assert bound == pytest.approx(float(_exact_tail(variance, 2500)), rel=1e-6)
    assert bound >= float(_exact_tail(variance, 2500))


@pytest.mark.parametrize("sigma", [1.0, 6.0])
def test_the_audits_distinguisher_sees_nothing(sigma):
    """Empty cell vs a cell of one: the float pattern and the law of y - c agree.

    With float noise, ``y = c + N(0, sigma)`` with ``|y| < 0.5`` is a
    multiple of ``2**-53`` when ``c = 1`` (the sum cancels) but keeps low bits
    when ``c = 0``; the integer noise leaves no such trace.
    """
    size = 300_000

    def fires(y):
        y = np.asarray(y, dtype=float)
        small = np.abs(y) < 0.5
        return bool(np.any(small & (y * 2.0**53 != np.round(y * 2.0**53))))

    released = {c: c + discrete_gaussian(sigma, size, np.random.default_rng(40 + c))
                for c in (0, 1)}
    assert not fires(released[0]) and not fires(released[1])
    shifted = [released[c] - c for c in (0, 1)]
    low = min(s.min() for s in shifted)
    table = np.array([np.bincount(s - low, minlength=max(t.max() for t in shifted) - low + 1)
                      for s in shifted])
    table = table[:, table.sum(axis=0) >= 20]
    assert stats.chi2_contingency(table).pvalue > P_PASS
    # the guard has power: float Gaussian noise trips it on the empty cell only
    rng = np.random.default_rng(7)
    assert fires(0 + rng.normal(0, sigma, size))
    assert not fires(1 + rng.normal(0, sigma, size))
