"""Differential-privacy accounting, mechanisms and the ledger.

Every privacy formula of the library lives here: the zCDP / Renyi-DP /
``(epsilon, delta)`` conversions and mechanism costs (:mod:`.accounting`),
the DP-SGD accounting (:mod:`.dpsgd`), the noise mechanisms
(:mod:`.mechanisms`) and the ledger that records and enforces every cost
(:mod:`.ledger`).  Nothing in this package needs torch.
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
from .ledger import LedgerEntry, LedgerShare, PrivacyLedger
from .mechanisms import exponential_mechanism, gaussian_mechanism, permute_and_flip

__all__ = [
    "PrivacyLedger",
    "LedgerShare",
    "LedgerEntry",
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
