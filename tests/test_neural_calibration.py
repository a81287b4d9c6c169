"""DP-SGD planning of the neural synthesizers: the noisy count, the plan, the batch helper.

The accounting itself (the Renyi curve, the calibration, the ledger entry)
is tested in ``test_privacy.py``; nothing here needs torch.
"""

import numpy as np
import pytest

from sklearn_dpsynth.neural.calibration import COUNT_BUDGET_SHARE, plan_dpsgd, suggest_batch_size
from sklearn_dpsynth.privacy import (
    PrivacyLedger,
    noisy_row_count,
    calibrate_noise_multiplier,
    dpsgd_rdp,
    rdp_orders,
    rdp_to_epsilon,
    spend_dpsgd,
)


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
    assert [e.target for e in ledger.entries] == ["row count", "weights"]
    # the best order lies inside the grid
    curve = dpsgd_rdp(plan.sample_rate, plan.noise_multiplier, plan.steps, plan.orders)
    assert rdp_to_epsilon(plan.orders, curve, 1e-9)[1] < plan.orders[-1]


def test_batch_helper_returns_the_smallest_batch_with_enough_noise():
    ledger = PrivacyLedger(1.0, 1e-9)
    n, epochs = 20_000, 5
    batch = suggest_batch_size(ledger, n, epochs, min_noise_multiplier=2.0)
    orders = rdp_orders(1.0, 1e-9)

    def sigma(b):
        return calibrate_noise_multiplier(ledger, b / n, int(np.ceil(epochs * n / b)), orders)

    assert sigma(batch) >= 2.0
    assert sigma(0.9 * batch) < 2.0
