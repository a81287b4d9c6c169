"""The ledger as a table: each entry's own cost, then the guarantee so far.

What :meth:`sklearn_dpsynth.PrivacyLedger.summary` returns, built here from
the ledger's entries; it reads only recorded costs (public), never data.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .accounting import rdp_to_epsilon, rho_to_epsilon

if TYPE_CHECKING:  # pragma: no cover
    from .ledger import LedgerEntry, PrivacyLedger

__all__ = ["SUMMARY_COLUMNS", "entry_epsilon", "ledger_summary"]

#: The columns of the summary, in order.
SUMMARY_COLUMNS = ["target", "mechanism", "share", "noise_scale", "sensitivity", "rho",
                   "epsilon", "order", "delta", "cumulative_epsilon", "cumulative_delta"]


def entry_epsilon(entry: LedgerEntry, delta: float) -> tuple[float, float]:
    """An entry's own epsilon at the ledger's ``delta``, and the Renyi order attaining it.

    Parameters
    ----------
    entry : LedgerEntry
    delta : float
        The ledger's delta (the entry's additive delta is taken from it).

    Returns
    -------
    epsilon : float
        ``inf`` when the entry's additive delta leaves none to convert with.
    order : float
        NaN for a zCDP entry.
    """
    conv_delta = delta - entry.delta
    if conv_delta <= 0:
        return math.inf, math.nan
    if entry.rdp_orders:
        orders = np.asarray(entry.rdp_orders, dtype=float)
        return rdp_to_epsilon(orders, entry.rdp_at(orders), conv_delta)
    return rho_to_epsilon(entry.rho, conv_delta), math.nan


def ledger_summary(ledger: PrivacyLedger) -> pd.DataFrame:
    """One row per entry of ``ledger`` with the columns :data:`SUMMARY_COLUMNS`.

    See :meth:`sklearn_dpsynth.PrivacyLedger.summary` for what each column
    holds; the cumulative columns replay the entries into a fresh ledger of
    the same budget, so they compose exactly as ``spent()`` does.

    Parameters
    ----------
    ledger : PrivacyLedger

    Returns
    -------
    table : pandas.DataFrame
    """
    from .ledger import PrivacyLedger  # the ledger delegates its summary here

    rows = []
    running = PrivacyLedger(ledger.epsilon, ledger.delta)
    for entry in ledger.entries:
        running.entries.append(entry)
        own_epsilon, order = entry_epsilon(entry, ledger.delta)
        curve_only = bool(entry.rdp_orders) and entry.rho == 0
        rows.append({
            "target": entry.target,
            "mechanism": entry.mechanism,
            "share": entry.details.get("share", ""),
            "noise_scale": entry.noise_scale,
            "sensitivity": entry.sensitivity,
            "rho": math.nan if curve_only else entry.rho,
            "epsilon": own_epsilon,
            "order": order,
            "delta": entry.delta,
            "cumulative_epsilon": running.epsilon_if(),
            "cumulative_delta": running.delta,
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
