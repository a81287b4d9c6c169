"""DP-SGD accounting through the ledger: calibration, spending, the batch helper."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("opacus")

pytestmark = pytest.mark.neural

from opacus.accountants import RDPAccountant  # noqa: E402

from sklearn_dpsynth.exceptions import BudgetExceededError  # noqa: E402
from sklearn_dpsynth.neural.calibration import (  # noqa: E402
    COUNT_BUDGET_SHARE,
    DPSGD_MECHANISM,
    calibrate_noise_multiplier,
    dpsgd_rdp,
    noisy_row_count,
    plan_dpsgd,
    rdp_orders,
    spend_dpsgd,
    suggest_batch_size,
)
from sklearn_dpsynth.privacy import PrivacyLedger, rdp_to_epsilon  # noqa: E402


@pytest.mark.parametrize("epsilon, delta, rate, steps", [
    (1.0, 1e-9, 0.02, 500), (3.0, 1e-6, 0.1, 50), (0.3, 1e-9, 0.05, 100)])
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


def test_opacus_accountant_agrees_on_the_same_run():
    epsilon, delta, rate, steps = 1.0, 1e-6, 0.05, 200
    ledger = PrivacyLedger(epsilon, delta)
    orders = rdp_orders(epsilon, delta)
    sigma = calibrate_noise_multiplier(ledger, rate, steps, orders)
    entry = spend_dpsgd(ledger, sample_rate=rate, noise_multiplier=sigma, steps=steps,
                        max_grad_norm=2.0, orders=orders, target="weights")
    accountant = RDPAccountant()
    accountant.history = [(sigma, rate, steps)]
    assert accountant.get_epsilon(delta) == pytest.approx(ledger.spent()[0], rel=1e-3)
    assert entry.mechanism == DPSGD_MECHANISM
    assert entry.details == {"steps": steps, "sample_rate": rate, "noise_multiplier": sigma,
                             "max_grad_norm": 2.0}
    assert entry.noise_scale == pytest.approx(2.0 * sigma)


def test_count_then_dpsgd_meets_the_budget_together():
    ledger = PrivacyLedger(1.0, 1e-9)
    rng = np.random.default_rng(0)
    n_noisy = noisy_row_count(ledger, 40_000, COUNT_BUDGET_SHARE * ledger.rho_remaining(), rng)
    assert abs(n_noisy - 40_000) < 1_000
    plan = plan_dpsgd(ledger, n_noisy, epochs=3, batch_size=1000)
    assert plan.sample_rate == pytest.approx(1000 / n_noisy)
    assert plan.steps == int(np.ceil(3 * n_noisy / 1000))
    spend_dpsgd(ledger, sample_rate=plan.sample_rate, noise_multiplier=plan.noise_multiplier,
                steps=plan.steps, max_grad_norm=1.0, orders=plan.orders, target="weights")
    assert ledger.spent()[0] == pytest.approx(1.0, rel=1e-9)
    assert [e.target for e in ledger.entries] == ["number of rows", "weights"]
    # the best order lies inside the grid
    curve = dpsgd_rdp(plan.sample_rate, plan.noise_multiplier, plan.steps, plan.orders)
    assert rdp_to_epsilon(plan.orders, curve, 1e-9)[1] < plan.orders[-1]


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


def test_batch_helper_returns_the_smallest_batch_with_enough_noise():
    ledger = PrivacyLedger(1.0, 1e-9)
    n, epochs = 20_000, 5
    batch = suggest_batch_size(ledger, n, epochs, min_noise_multiplier=2.0)
    orders = rdp_orders(1.0, 1e-9)

    def sigma(b):
        return calibrate_noise_multiplier(ledger, b / n, int(np.ceil(epochs * n / b)), orders)

    assert sigma(batch) >= 2.0
    assert sigma(0.9 * batch) < 2.0
