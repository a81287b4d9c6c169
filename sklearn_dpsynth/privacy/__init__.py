"""Differential-privacy accounting, mechanisms and the ledger.

Every privacy formula of the library lives here: the zCDP / Renyi-DP /
``(epsilon, delta)`` conversions and mechanism costs (:mod:`.accounting`),
the DP-SGD accounting (:mod:`.dpsgd`), the mechanisms, each a class with
its privacy map and its release (:mod:`.mechanisms`, drawing exactly with
:mod:`._exact`), the ledger that records every cost before releasing
(:mod:`.ledger`) and the budget's validation and defaults (:mod:`.budget`).  Nothing in this package needs torch.
"""

from .accounting import (
    epsilon_to_rho,
    exponential_epsilon,
    exponential_rho,
    gaussian_rho,
    gaussian_sigma,
    pure_dp_epsilon,
    pure_dp_rho,
    rdp_to_epsilon,
    rho_to_epsilon,
)
from .dpsgd import (
    DPSGD_MECHANISM,
    calibrate_dpsgd,
    calibrate_noise_multiplier,
    dpsgd_rdp,
    rdp_orders,
    spend_dpsgd,
    subsampled_gaussian_rdp,
)
from .budget import DEFAULT_DELTA, MAX_EPSILON, check_budget
from .ledger import ROW_COUNT_TARGET, LedgerEntry, LedgerShare, PrivacyLedger, noisy_row_count
from .mechanisms import (
    Cost,
    DiscreteGaussian,
    ExponentialMechanism,
    Mechanism,
    PermuteAndFlip,
    SubsampledGaussian,
    ThresholdedHistogram,
    exponential_mechanism,
    gaussian_mechanism,
    permute_and_flip,
)

__all__ = [
    "PrivacyLedger",
    "LedgerShare",
    "LedgerEntry",
    "Mechanism",
    "Cost",
    "DiscreteGaussian",
    "ExponentialMechanism",
    "PermuteAndFlip",
    "ThresholdedHistogram",
    "SubsampledGaussian",
    "noisy_row_count",
    "ROW_COUNT_TARGET",
    "DEFAULT_DELTA",
    "MAX_EPSILON",
    "check_budget",
    "epsilon_to_rho",
    "rho_to_epsilon",
    "rdp_to_epsilon",
    "gaussian_rho",
    "gaussian_sigma",
    "exponential_rho",
    "exponential_epsilon",
    "pure_dp_rho",
    "pure_dp_epsilon",
    "gaussian_mechanism",
    "exponential_mechanism",
    "permute_and_flip",
    "subsampled_gaussian_rdp",
    "dpsgd_rdp",
    "rdp_orders",
    "calibrate_noise_multiplier",
    "calibrate_dpsgd",
    "spend_dpsgd",
    "DPSGD_MECHANISM",
]
