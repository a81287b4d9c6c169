"""Differential-privacy accounting, mechanisms and the ledger."""

from .accounting import (
    epsilon_to_rho,
    exponential_epsilon,
    exponential_rho,
    gaussian_rho,
    gaussian_sigma,
    rdp_to_epsilon,
    rho_to_epsilon,
)
from .ledger import LedgerEntry, PrivacyLedger
from .mechanisms import exponential_mechanism, gaussian_mechanism, permute_and_flip

__all__ = [
    "PrivacyLedger",
    "LedgerEntry",
    "epsilon_to_rho",
    "rho_to_epsilon",
    "rdp_to_epsilon",
    "gaussian_rho",
    "gaussian_sigma",
    "exponential_rho",
    "exponential_epsilon",
    "gaussian_mechanism",
    "exponential_mechanism",
    "permute_and_flip",
]
