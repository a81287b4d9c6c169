"""Renyi curves as the ledger stores them: validation, costs and common orders.

A Renyi-DP curve is a pair ``(orders, values)``: the Renyi divergence bound
``values[i]`` at order ``orders[i]`` (``inf`` where unknown).  The ledger
(:mod:`sklearn_dpsynth.privacy.ledger`) composes curves order by order, on
the orders all of them know; this module checks what it is given and finds
those orders.  The conversions to ``(epsilon, delta)`` are in
:mod:`sklearn_dpsynth.privacy.accounting`.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

__all__ = ["Curve", "RELATIVE_SLACK", "as_curve", "check_cost", "common_orders"]

#: Relative slack allowed when checking a total against the budget; it only
#: absorbs floating-point rounding of sums that are equal on paper.
RELATIVE_SLACK = 1e-9

#: A Renyi curve: (orders, values).
Curve = tuple[Sequence[float], Sequence[float]]


def as_curve(rdp: Curve) -> tuple[np.ndarray, np.ndarray]:
    """Validate a Renyi curve and return it sorted by order.

    Parameters
    ----------
    rdp : (orders, values)
        Orders, each finite, distinct and ``> 1``, in any order; values
        ``>= 0`` (``inf`` where unknown).

    Returns
    -------
    orders, values : ndarray of float
        Sorted by increasing order, each value still beside its order.

    Raises
    ------
    ValueError
        Naming ``rdp`` and what is wrong with it.
    """
    try:
        orders, values = rdp
    except (TypeError, ValueError):
        raise ValueError("rdp must be a pair (orders, values).") from None
    orders = np.asarray(orders, dtype=float)
    values = np.asarray(values, dtype=float)
    if orders.ndim != 1 or orders.shape != values.shape or orders.size == 0:
        raise ValueError("rdp: orders and values must be 1-D and of the same, non-zero "
                         "length.")
    if not np.all(np.isfinite(orders) & (orders > 1.0)):
        raise ValueError("rdp: every Renyi order must be finite and > 1.")
    if np.any(np.isnan(values) | (values < 0)):
        raise ValueError("rdp: every value must be >= 0 (inf where unknown), not NaN.")
    by_order = np.argsort(orders, kind="stable")
    orders, values = orders[by_order], values[by_order]
    if np.any(np.diff(orders) == 0):
        raise ValueError("rdp: the Renyi orders must be distinct.")
    return orders, values


def check_cost(rho: float, delta: float) -> None:
    """ValueError unless an entry's ``rho`` and additive ``delta`` are finite and ``>= 0``."""
    if not (math.isfinite(rho) and rho >= 0 and math.isfinite(delta) and delta >= 0):
        raise ValueError("rho and delta of an entry must be finite and >= 0.")


def common_orders(order_sets: Iterable[Iterable[float]]) -> np.ndarray:
    """The Renyi orders every curve knows, increasing.

    Parameters
    ----------
    order_sets : iterable of iterables of float
        The orders of each curve (at least one curve).

    Returns
    -------
    orders : ndarray of float

    Raises
    ------
    ValueError
        When the curves share no order.
    """
    orders = sorted(set.intersection(*[{float(a) for a in orders} for orders in order_sets]))
    if not orders:
        raise ValueError("Renyi curves in the ledger share no common order.")
    return np.asarray(orders, dtype=float)
