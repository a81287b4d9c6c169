"""Accounting formulas against independent numeric computations; the ledger."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from sklearn_dpsynth import BudgetExceededError, PrivacyLedger
from sklearn_dpsynth.privacy import (
    LedgerShare,
    epsilon_to_rho,
    exponential_epsilon,
    exponential_mechanism,
    exponential_rho,
    gaussian_mechanism,
    gaussian_rho,
    gaussian_sigma,
    permute_and_flip,
    pure_dp_epsilon,
    pure_dp_rho,
    rdp_to_epsilon,
    rho_to_epsilon,
)


def _independent_epsilon(rho, delta):
    """Minimise the RDP->DP bound of rho-zCDP over a dense grid, then polish."""
    alphas = 1 + np.logspace(-6, 7, 200_001)
    bound = alphas * rho + np.log1p(-1 / alphas) - (np.log(delta) + np.log(alphas)) / (alphas - 1)
    best = alphas[np.argmin(bound)]
    res = optimize.minimize_scalar(
        lambda a: a * rho + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1),
        bounds=(max(1 + 1e-9, best / 2), best * 2), method="bounded", options={"xatol": 1e-12})
    return min(res.fun, bound.min())


@pytest.mark.parametrize("rho", [1e-5, 1e-3, 0.05, 0.5, 3.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5])
def test_rho_to_epsilon_matches_numeric_minimisation(rho, delta):
    assert rho_to_epsilon(rho, delta) == pytest.approx(_independent_epsilon(rho, delta), rel=1e-7)


@pytest.mark.parametrize("rho", [1e-4, 0.01, 1.0])
def test_conversion_is_tighter_than_classic_bound(rho):
    delta = 1e-6
    classic = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    assert rho_to_epsilon(rho, delta) < classic


@pytest.mark.parametrize("epsilon", [0.05, 0.3, 1.0, 3.0, 10.0])
def test_epsilon_to_rho_inverts(epsilon):
    rho = epsilon_to_rho(epsilon, 1e-9)
    assert rho_to_epsilon(rho, 1e-9) == pytest.approx(epsilon, rel=1e-9)
    assert _independent_epsilon(rho, 1e-9) == pytest.approx(epsilon, rel=1e-7)


def test_known_value_of_epsilon_to_rho():
    # eps=1, delta=1e-9: the CKS conversion gives rho ~ 0.01497 (vs 0.0106 with the
    # classic rho + 2 sqrt(rho log 1/delta) bound).
    assert epsilon_to_rho(1.0, 1e-9) == pytest.approx(0.014973, rel=1e-4)


def test_rdp_to_epsilon_of_linear_curve_equals_zcdp():
    orders = 1 + np.logspace(-3, 5, 100_000)
    eps, _ = rdp_to_epsilon(orders, 0.01 * orders, 1e-8)
    assert eps == pytest.approx(rho_to_epsilon(0.01, 1e-8), rel=1e-5)


def test_mechanism_costs():
    assert gaussian_rho(2.0, 1.0) == 0.125
    assert gaussian_sigma(0.125, 1.0) == pytest.approx(2.0)
    assert gaussian_rho(gaussian_sigma(0.3, 2.5), 2.5) == pytest.approx(0.3)
    assert exponential_rho(0.4) == pytest.approx(0.02)
    assert exponential_rho(exponential_epsilon(0.3)) == pytest.approx(0.3)
    assert pure_dp_rho(0.4) == pytest.approx(0.08)
    assert pure_dp_rho(pure_dp_epsilon(0.3)) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_rho(0.0)


def test_gaussian_mechanism_noise_scale():
    rng = np.random.default_rng(0)
    noisy = gaussian_mechanism(np.zeros(200_000), 3.0, rng)
    assert noisy.std() == pytest.approx(3.0, rel=0.01)
    assert abs(noisy.mean()) < 0.05


def test_exponential_mechanism_distribution():
    rng = np.random.default_rng(1)
    scores = np.array([0.0, 1.0, 3.0])
    epsilon = 1.2
    draws = np.array([exponential_mechanism(scores, epsilon, rng) for _ in range(20_000)])
    expected = np.exp(epsilon * scores / 2)
    expected /= expected.sum()
    observed = np.bincount(draws, minlength=3)
    assert stats.chisquare(observed, expected * len(draws)).pvalue > 1e-3


def test_permute_and_flip_distribution_two_candidates():
    # With scores (0, s) the best is accepted first w.p. 1/2 + 1/2 (1 - p)... :
    # P(pick worse) = 1/2 * p / (1 - (1-p)... ) computed exactly below.
    rng = np.random.default_rng(2)
    epsilon, gap = 1.0, 2.0
    p = math.exp(-epsilon * gap / 2)  # acceptance probability of the worse candidate
    # Order (worse, best): worse accepted w.p. p, else best. Order (best, ...): best.
    expected_worse = 0.5 * p
    draws = np.array([permute_and_flip(np.array([0.0, gap]), epsilon, rng) for _ in range(20_000)])
    assert np.mean(draws == 0) == pytest.approx(expected_worse, abs=0.01)


def test_ledger_totals_equal_budget():
    ledger = PrivacyLedger(epsilon=0.7, delta=1e-7)
    rng = np.random.default_rng(0)
    budget = ledger.rho_budget
    ledger.gaussian(np.ones(3), sigma=ledger.sigma_for(budget / 3), rng=rng, target="a")
    ledger.select(np.arange(4.0), rho=budget / 3, rng=rng, target="b")
    ledger.gaussian(np.ones(3), sigma=ledger.sigma_for(ledger.rho_remaining(), 2.0),
                    sensitivity=2.0, rng=rng, target="c")
    assert ledger.rho_spent == pytest.approx(budget, rel=1e-9)
    eps, delta = ledger.spent()
    assert eps == pytest.approx(0.7, rel=1e-9) and eps <= 0.7
    assert delta == 1e-7
    table = ledger.summary()
    assert list(table["target"]) == ["a", "b", "c"]
    assert table["cumulative_epsilon"].is_monotonic_increasing
    assert "spent epsilon" in repr(ledger)


def test_ledger_refuses_overspending_and_records_nothing():
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-9)
    rng = np.random.default_rng(0)
    ledger.spend(target="x", mechanism="gaussian", rho=ledger.rho_budget * 0.9)
    with pytest.raises(BudgetExceededError, match="would exceed"):
        ledger.gaussian(np.ones(2), sigma=ledger.sigma_for(ledger.rho_budget * 0.2), rng=rng,
                        target="too much")
    assert len(ledger) == 1
    assert ledger.spent()[0] <= 1.0


def test_additive_delta_shrinks_rho_budget():
    ledger = PrivacyLedger(epsilon=1.0, delta=1e-6)
    full = ledger.rho_budget
    ledger.spend(target="support", mechanism="thresholded", rho=0.0, delta=5e-7)
    assert ledger.rho_budget < full
    assert ledger.rho_budget == pytest.approx(epsilon_to_rho(1.0, 5e-7))


def test_rdp_entry_composes_with_rho_entries():
    ledger = PrivacyLedger(epsilon=2.0, delta=1e-6)
    orders = np.concatenate([1 + np.arange(1, 100) / 10, np.arange(11, 1000)]).astype(float)
    ledger.spend(target="sgd", mechanism="curve", rdp=(orders, 0.05 * orders))
    rest = ledger.rho_remaining()
    # A linear RDP curve is zCDP: the remainder is the rho budget minus 0.05 (up to the grid).
    assert rest == pytest.approx(epsilon_to_rho(2.0, 1e-6) - 0.05, rel=5e-3)
    assert rest <= epsilon_to_rho(2.0, 1e-6) - 0.05  # a grid can only be more conservative
    ledger.spend(target="gauss", mechanism="gaussian", rho=rest)
    assert ledger.spent()[0] == pytest.approx(2.0, rel=1e-6)


@pytest.mark.parametrize("epsilon, delta", [(0, 1e-9), (-1, 1e-9), (math.inf, 1e-9),
                                            (math.nan, 1e-9), (1.0, 0.0), (1.0, 1.0)])
def test_ledger_rejects_bad_budgets(epsilon, delta):
    with pytest.raises(ValueError, match="epsilon|delta"):
        PrivacyLedger(epsilon, delta)


# --------------------------------------------------------------- unsorted curves
def test_unsorted_renyi_orders_give_the_sorted_epsilon():
    orders = np.concatenate([np.arange(2.0, 12.0), np.geomspace(12, 400, 30).round()])
    orders = np.unique(orders)
    curve = 0.002 * orders + 0.001 * np.sqrt(orders)
    shuffled = np.random.default_rng(0).permutation(len(orders))
    ledger = PrivacyLedger(1.0, 1e-9)
    ledger.spend(target="count", mechanism="gaussian", rho=0.001)
    expected = ledger.epsilon_if(rdp=(orders, curve))
    assert ledger.epsilon_if(rdp=(orders[shuffled], curve[shuffled])) == expected
    assert ledger.fits(rdp=(list(orders[::-1]), list(curve[::-1])))
    entry = ledger.spend(target="sgd", mechanism="curve",
                         rdp=(orders[shuffled], curve[shuffled]))
    assert list(entry.rdp_orders) == sorted(orders)
    assert ledger.spent()[0] == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("rdp", [([2.0, 3.0], [0.1]), ([2.0, 0.5], [0.1, 0.2]),
                                 ([2.0, 2.0], [0.1, 0.2]), ([2.0, 3.0], [0.1, np.nan]),
                                 ([3.0, 2.0], [0.1, -1.0]), (np.ones((2, 2)), np.ones((2, 2)))])
def test_invalid_renyi_curves_are_named(rdp):
    ledger = PrivacyLedger(1.0, 1e-9)
    with pytest.raises(ValueError, match="rdp"):
        ledger.epsilon_if(rdp=rdp)
    with pytest.raises(ValueError, match="rdp"):
        ledger.spend(target="x", mechanism="curve", rdp=rdp)
    assert len(ledger) == 0


# ----------------------------------------------------------------------- shares
def test_share_records_in_the_parent_and_cannot_overspend():
    ledger = PrivacyLedger(1.0, 1e-6)
    rng = np.random.default_rng(0)
    ledger.spend(target="first", mechanism="gaussian", rho=0.001)
    share = ledger.share(rho=0.004, delta=2e-7, label="domain")
    assert isinstance(share, LedgerShare)
    share.gaussian(np.ones(3), sigma=share.sigma_for(0.001), rng=rng, target="a")
    share.spend(target="b", mechanism="thresholded", rho=0.002, delta=1.5e-7)
    assert share.rho_remaining() == pytest.approx(0.001)
    assert share.delta_remaining() == pytest.approx(0.5e-7)
    with pytest.raises(BudgetExceededError, match="share domain"):
        share.select(np.arange(3.0), rho=0.0011, rng=rng, target="too much rho")
    with pytest.raises(BudgetExceededError, match="share domain"):
        share.spend(target="too much delta", mechanism="thresholded", rho=0.0, delta=1e-7)
    share.select(np.arange(3.0), rho=share.rho_remaining(), rng=rng, target="c")
    assert share.rho_remaining() == pytest.approx(0.0, abs=1e-15)
    ledger.spend(target="last", mechanism="gaussian", rho=ledger.rho_remaining())
    # the parent shows every entry, in order, and its totals are an exact composition
    assert [e.target for e in ledger.entries] == ["first", "a", "b", "c", "last"]
    assert [e.target for e in share.entries] == ["a", "b", "c"]
    assert share.rho_spent == pytest.approx(0.004, rel=1e-12)
    assert ledger.rho_spent == pytest.approx(sum(e.rho for e in ledger.entries))
    assert ledger.spent()[0] == pytest.approx(_independent_epsilon(
        ledger.rho_spent, 1e-6 - 1.5e-7), rel=1e-7)
    assert ledger.spent()[0] == pytest.approx(1.0, rel=1e-9)
    assert list(ledger.summary()["share"]) == ["", "domain", "domain", "domain", ""]


def test_share_refuses_what_its_parent_no_longer_has():
    ledger = PrivacyLedger(1.0, 1e-9)
    share = ledger.share(rho=0.5 * ledger.rho_budget)
    ledger.spend(target="parent", mechanism="gaussian", rho=0.8 * ledger.rho_budget)
    with pytest.raises(BudgetExceededError, match="would exceed the budget epsilon"):
        share.spend(target="child", mechanism="gaussian", rho=0.3 * ledger.rho_budget)
    assert share.rho_remaining() == pytest.approx(0.2 * ledger.rho_budget)
    assert len(share) == 0 and len(ledger) == 1
    with pytest.raises(BudgetExceededError, match="exceeds what remains"):
        ledger.share(rho=0.5 * ledger.rho_budget)
    with pytest.raises(ValueError, match="rho"):
        ledger.share(rho=-1.0)
    with pytest.raises(ValueError, match="delta"):
        ledger.share(rho=0.0, delta=1.0)


def test_share_of_a_share():
    ledger = PrivacyLedger(2.0, 1e-8)
    outer = ledger.share(rho=0.01, delta=4e-9, label="domain")
    inner = outer.share(rho=0.004, delta=1e-9, label="age")
    inner.spend(target="range of 'age'", mechanism="gaussian", rho=0.003, delta=1e-9)
    with pytest.raises(BudgetExceededError, match="share domain/age"):
        inner.spend(target="more", mechanism="gaussian", rho=0.002)
    with pytest.raises(BudgetExceededError, match="exceeds what remains"):
        outer.share(rho=0.008)
    outer.spend(target="categories of 'sex'", mechanism="gaussian", rho=0.006)
    assert outer.rho_remaining() == pytest.approx(0.001)
    assert inner.rho_remaining() == pytest.approx(0.001)  # limited by the outer share
    assert outer.rho_spent == pytest.approx(0.009)
    assert [e.details.get("share") for e in ledger.entries] == ["domain/age", "domain"]
    assert ledger.rho_spent == pytest.approx(0.009)
    assert ledger.additive_delta_spent == pytest.approx(1e-9)


# ---------------------------------------------------------------------- summary
