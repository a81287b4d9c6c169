"""Accounting formulas against independent numeric computations; the ledger."""

import math

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from sklearn_dpsynth import BudgetExceededError, PrivacyLedger
from sklearn_dpsynth.privacy import (
    DPSGD_MECHANISM,
    LedgerShare,
    calibrate_dpsgd,
    calibrate_noise_multiplier,
    dpsgd_rdp,
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
    rdp_orders,
    rdp_to_epsilon,
    rho_to_epsilon,
    spend_dpsgd,
    subsampled_gaussian_rdp,
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
    ledger.gaussian(np.ones(3), sigma=gaussian_sigma(budget / 3), rng=rng, target="a")
    ledger.select(np.arange(4.0), rho=budget / 3, rng=rng, target="b")
    ledger.gaussian(np.ones(3), sigma=gaussian_sigma(ledger.rho_remaining(), 2.0),
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
        ledger.gaussian(np.ones(2), sigma=gaussian_sigma(ledger.rho_budget * 0.2), rng=rng,
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


# ------------------------------------------------------------- DP-SGD accounting
def _integrated_rdp(q, sigma, alpha):
    """One subsampled-Gaussian step's RDP by adaptive quadrature of its definition.

    ``A - 1 = E[(1 + x)^alpha - 1 - alpha x]`` with ``x = ratio - 1`` of mean 0
    under ``N(0, sigma^2)``; beyond 12 sigma of the mass the integrand is negligible.
    """
    def excess(z):
        x = q * math.expm1((2 * z - 1) / (2 * sigma**2))
        log_power = alpha * math.log1p(x)
        if abs(log_power) < 1:  # small x: keep the relative precision
            return stats.norm.pdf(z, scale=sigma) * (math.expm1(log_power) - alpha * x)
        return (math.exp(stats.norm.logpdf(z, scale=sigma) + log_power)
                - stats.norm.pdf(z, scale=sigma) * (1 + alpha * x))

    points = [-12 * sigma, -3 * sigma, 0.0, 1.0, alpha, alpha + 3 * sigma, alpha + 12 * sigma]
    total = sum(integrate.quad(excess, a, b, epsabs=0, epsrel=1e-12, limit=200)[0]
                for a, b in zip(points[:-1], points[1:]) if b > a)
    return math.log1p(total) / (alpha - 1)


@pytest.mark.parametrize("q, sigma", [(0.01, 1.0), (0.05, 0.7), (0.3, 2.0), (0.001, 5.0)])
@pytest.mark.parametrize("alpha", [1.1, 1.5, 2.0, 3.5, 8.0, 11.5])
def test_subsampled_gaussian_rdp_matches_quadrature(q, sigma, alpha):
    assert subsampled_gaussian_rdp(q, sigma, [alpha])[0] == pytest.approx(
        _integrated_rdp(q, sigma, alpha), rel=1e-8)


def test_integer_sum_and_fractional_integral_agree_at_integers():
    orders = np.array([2.0, 5.0, 30.0])
    exact = subsampled_gaussian_rdp(0.02, 0.9, orders)
    near = subsampled_gaussian_rdp(0.02, 0.9, orders * (1 + 1e-10))  # the integral path
    np.testing.assert_allclose(near, exact, rtol=1e-7)


def test_rdp_of_the_full_batch_is_the_gaussian_and_curves_grow_with_the_order():
    orders = np.array([1.5, 2.0, 7.0, 100.0])
    assert np.array_equal(subsampled_gaussian_rdp(1.0, 2.0, orders), orders / 8.0)
    curve = subsampled_gaussian_rdp(0.05, 1.1, rdp_orders(5.0, 1e-6))
    assert np.all(np.diff(curve) >= 0)
    assert np.all(subsampled_gaussian_rdp(0.05, 1.1, orders) < orders / (2 * 1.1**2))
    np.testing.assert_allclose(dpsgd_rdp(0.05, 1.1, 30, orders),
                               30 * subsampled_gaussian_rdp(0.05, 1.1, orders))


@pytest.mark.parametrize("args, match", [((0.0, 1.0, [2.0]), "sample_rate"),
                                         ((0.1, 0.0, [2.0]), "noise_multiplier"),
                                         ((0.1, 1.0, [1.0]), "orders")])
def test_subsampled_gaussian_rdp_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        subsampled_gaussian_rdp(*args)


@pytest.mark.neural
def test_opacus_analysis_agrees_where_its_series_converges():
    rdp = pytest.importorskip("opacus.accountants.analysis.rdp")
    orders = np.concatenate([[1.5, 2.5, 5.5, 11.5], np.arange(2.0, 12.0), [20.0, 64.0, 300.0]])
    for q, sigma in [(0.01, 1.0), (0.05, 0.8), (0.3, 3.0)]:
        reference = rdp.compute_rdp(q=q, noise_multiplier=sigma, steps=7, orders=list(orders))
        integer = orders == np.round(orders)
        ours = dpsgd_rdp(q, sigma, 7, orders)
        np.testing.assert_allclose(ours[integer], np.asarray(reference)[integer], rtol=1e-10)
        # fractional orders: Opacus truncates a slowly converging series (~1e-9 relative)
        np.testing.assert_allclose(ours[~integer], np.asarray(reference)[~integer], rtol=1e-7)


@pytest.mark.parametrize("epsilon, delta, rate, steps", [
    (1.0, 1e-9, 0.02, 500), (3.0, 1e-6, 0.1, 50), (0.3, 1e-9, 0.05, 100), (8.0, 1e-9, 0.3, 20)])
def test_calibrated_run_spends_exactly_the_budget(epsilon, delta, rate, steps):
    ledger = PrivacyLedger(epsilon, delta)
    orders = rdp_orders(epsilon, delta)
    sigma = calibrate_noise_multiplier(ledger, rate, steps, orders)
    spend_dpsgd(ledger, sample_rate=rate, noise_multiplier=sigma, steps=steps,
                max_grad_norm=1.0, orders=orders, target="weights")
    assert ledger.spent()[0] == pytest.approx(epsilon, rel=1e-9)
    # a slightly smaller noise would not fit
    smaller = dpsgd_rdp(rate, sigma * (1 - 1e-6), steps, orders)
    assert not PrivacyLedger(epsilon, delta).fits(rdp=(orders, smaller))


def test_dpsgd_entry_and_its_epsilon_by_an_independent_conversion():
    epsilon, delta, rate, steps = 1.0, 1e-6, 0.05, 200
    ledger = PrivacyLedger(epsilon, delta)
    orders = rdp_orders(epsilon, delta)
    sigma = calibrate_noise_multiplier(ledger, rate, steps, orders)
    entry = spend_dpsgd(ledger, sample_rate=rate, noise_multiplier=sigma, steps=steps,
                        max_grad_norm=2.0, orders=orders, target="weights")
    curve = steps * np.array([_integrated_rdp(rate, sigma, a) for a in orders[:40]])
    bound = curve + np.log1p(-1 / orders[:40]) - (math.log(delta) + np.log(orders[:40])) / (
        orders[:40] - 1)
    assert bound.min() == pytest.approx(ledger.spent()[0], rel=1e-7)
    assert entry.mechanism == DPSGD_MECHANISM
    assert entry.details == {"steps": steps, "sample_rate": rate, "noise_multiplier": sigma,
                             "max_grad_norm": 2.0}
    assert entry.noise_scale == pytest.approx(2.0 * sigma)


def test_calibration_returns_a_grid_with_the_best_order_inside():
    ledger = PrivacyLedger(0.05, 1e-9)
    sigma, orders = calibrate_dpsgd(ledger, 0.01, 50)
    curve = dpsgd_rdp(0.01, sigma, 50, orders)
    assert rdp_to_epsilon(orders, curve, 1e-9)[1] < orders[-1]
    assert ledger.epsilon_if(rdp=(orders, curve)) == pytest.approx(0.05, rel=1e-9)


def test_spending_more_than_the_budget_raises():
    ledger = PrivacyLedger(1.0, 1e-9)
    orders = rdp_orders(1.0, 1e-9)
    sigma = calibrate_noise_multiplier(ledger, 0.01, 100, orders)
    with pytest.raises(BudgetExceededError):
        spend_dpsgd(ledger, sample_rate=0.01, noise_multiplier=0.9 * sigma, steps=100,
                    max_grad_norm=1.0, orders=orders, target="weights")
    assert len(ledger) == 0


def test_budget_too_small_for_any_noise_is_a_clear_error():
    ledger = PrivacyLedger(1e-6, 1e-12)
    with pytest.raises(ValueError, match="too small"):
        calibrate_noise_multiplier(ledger, 1.0, 1000, rdp_orders(1e-6, 1e-12))


def test_orders_reach_further_for_small_budgets():
    assert rdp_orders(0.1, 1e-9).max() > rdp_orders(1.0, 1e-9).max()
    orders = rdp_orders(1.0, 1e-9)
    assert np.all(np.diff(orders) > 0) and orders.min() > 1


def test_privacy_package_does_not_import_torch():
    import subprocess
    import sys
    code = ("import sys, sklearn_dpsynth.privacy as p, sklearn_dpsynth.neural.calibration; "
            "p.calibrate_dpsgd(p.PrivacyLedger(1.0, 1e-9), 0.01, 100); "
            "assert 'torch' not in sys.modules and 'opacus' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------- unsorted curves
def test_unsorted_renyi_orders_give_the_sorted_epsilon():
    orders = rdp_orders(1.0, 1e-9)
    curve = dpsgd_rdp(0.02, 3.0, 300, orders)
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
    share.gaussian(np.ones(3), sigma=gaussian_sigma(0.001), rng=rng, target="a")
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


def test_share_charges_a_renyi_curve_its_equivalent_rho():
    ledger = PrivacyLedger(3.0, 1e-6)
    orders = rdp_orders(3.0, 1e-6)
    curve = dpsgd_rdp(0.05, 2.0, 100, orders)
    alone = rdp_to_epsilon(orders, curve, 1e-6)[0]
    charge = epsilon_to_rho(alone, 1e-6)
    share = ledger.share(rho=1.5 * charge, label="sgd")
    spend_dpsgd(share, sample_rate=0.05, noise_multiplier=2.0, steps=100, max_grad_norm=1.0,
                orders=orders, target="weights")
    assert share.rho_spent == pytest.approx(charge)
    assert rho_to_epsilon(share.rho_spent, 1e-6) == pytest.approx(alone)
    with pytest.raises(BudgetExceededError, match="share sgd"):
        spend_dpsgd(share, sample_rate=0.05, noise_multiplier=2.0, steps=100,
                    max_grad_norm=1.0, orders=orders, target="weights again")
    assert ledger.entries[0].rdp_values == tuple(curve)  # the parent keeps the curve
    assert ledger.spent()[0] == pytest.approx(alone)


# ---------------------------------------------------------------------- summary
def test_summary_shows_each_cost_and_the_cumulative_guarantee():
    delta = 1e-9
    ledger = PrivacyLedger(2.0, delta)
    rng = np.random.default_rng(0)
    ledger.gaussian(np.ones(2), sigma=4.0, rng=rng, target="count")
    ledger.spend(target="categories", mechanism="thresholded", rho=0.002, delta=2e-10)
    orders = rdp_orders(2.0, delta)
    curve = dpsgd_rdp(0.02, 3.0, 200, orders)
    ledger.spend(target="weights", mechanism="curve", rdp=(orders, curve))
    table = ledger.summary()
    assert list(table.columns) == ["target", "mechanism", "share", "noise_scale",
                                   "sensitivity", "rho", "epsilon", "order", "delta",
                                   "cumulative_epsilon", "cumulative_delta"]
    assert table["rho"].iloc[0] == gaussian_rho(4.0)
    assert math.isnan(table["rho"].iloc[2])  # DP-SGD is not zCDP: no rho
    assert table["epsilon"].iloc[0] == pytest.approx(_independent_epsilon(1 / 32, delta),
                                                     rel=1e-7)
    assert table["epsilon"].iloc[1] == pytest.approx(
        _independent_epsilon(0.002, delta - 2e-10), rel=1e-7)
    own, best = rdp_to_epsilon(orders, curve, delta)
    assert (table["epsilon"].iloc[2], table["order"].iloc[2]) == (own, best)
    assert math.isnan(table["order"].iloc[0])
    assert list(table["delta"]) == [0.0, 2e-10, 0.0]
    assert list(table["cumulative_delta"]) == [delta] * 3
    assert table["cumulative_epsilon"].iloc[0] == pytest.approx(table["epsilon"].iloc[0])
    assert table["cumulative_epsilon"].iloc[1] == pytest.approx(
        _independent_epsilon(1 / 32 + 0.002, delta - 2e-10), rel=1e-7)
    assert table["cumulative_epsilon"].iloc[-1] == ledger.spent()[0]
    assert table["cumulative_epsilon"].is_monotonic_increasing
