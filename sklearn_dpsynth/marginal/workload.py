"""Workloads and AIM's candidates: which marginals matter and how much.

Marginals are tuples of column positions in increasing order (the domain's
order, which is also the order of the graphical model's attributes).

* :func:`parse_workload` -- the user's ``workload`` parameter, validated.
* :func:`default_workload` -- every 2-way marginal of at most ``max_cells``
  cells (the 1-way marginals when there is no such pair).
* :func:`default_aim_workload` -- AIM's default: :func:`default_workload`,
  plus every 3-way marginal on a binary table whose 3-way marginals have at
  most ``max_cells`` cells in all (up to 20 binary columns).
* :func:`candidate_weights` -- the workload's downward closure, each
  candidate ``C`` weighted by ``sum_W w_W |C & W|`` (AIM, section 4).
* :func:`workload_positions` -- a ``workload`` parameter given by column
  names (or None) as positions and weights, for the methods that take the
  columns from a table (PMW-pub, JAM, Private Evolution).
"""

from __future__ import annotations

import itertools
import math
from numbers import Real
from typing import Any, Callable, Hashable, Sequence

__all__ = ["parse_workload", "default_workload", "default_aim_workload", "candidate_weights",
           "n_cells",
           "workload_positions", "column_positions"]

Marginal = tuple[int, ...]


def n_cells(sizes: Sequence[int], marginal: Sequence[int]) -> int:
    """Number of cells of a marginal (exact Python int)."""
    return math.prod(int(sizes[j]) for j in marginal)


def _is_weight(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _split_entry(entry: Any) -> tuple[Sequence[Hashable], Any]:
    """``(columns, weight)`` of one workload entry (a bare column list weighs 1)."""
    if (isinstance(entry, (list, tuple)) and len(entry) == 2
            and isinstance(entry[0], (list, tuple)) and _is_weight(entry[1])):
        return entry[0], entry[1]
    if isinstance(entry, (list, tuple)):
        return entry, 1.0
    raise ValueError("workload must be a list of (columns, weight) pairs or of column "
                     f"tuples; got the entry {entry!r}.")


def parse_workload(
    workload: Sequence[Any],
    positions: Callable[[Sequence[Hashable], str], Marginal],
) -> list[tuple[Marginal, float]]:
    """Validate a workload and express it with sorted column positions.

    Parameters
    ----------
    workload : sequence
        Entries ``(columns, weight)`` with ``columns`` a list or tuple of
        column names and ``weight`` a finite number ``> 0``; a bare list or
        tuple of column names stands for weight 1.
    positions : callable
        ``positions(columns, parameter)`` returns the columns' positions and
        raises a ValueError naming ``parameter`` and any unknown column.

    Returns
    -------
    list of (tuple of int, float)
        One entry per distinct marginal (weights of repeats are added), in
        order of first appearance.
    """
    if isinstance(workload, (str, bytes)) or not isinstance(workload, (list, tuple)):
        raise ValueError(f"workload must be a list of (columns, weight) pairs, got {workload!r}.")
    if not workload:
        raise ValueError("workload must contain at least one marginal.")
    merged: dict[Marginal, float] = {}
    for entry in workload:
        columns, weight = _split_entry(entry)
        if not _is_weight(weight) or not math.isfinite(weight) or weight <= 0:
            raise ValueError(f"workload: the weight of {tuple(columns)!r} must be a finite "
                             f"number > 0, got {weight!r}.")
        key = tuple(sorted(positions(columns, "workload")))
        merged[key] = merged.get(key, 0.0) + float(weight)
    return list(merged.items())


def default_workload(sizes: Sequence[int], max_cells: int) -> list[tuple[Marginal, float]]:
    """Every 2-way marginal with at most ``max_cells`` cells, weight 1.

    Parameters
    ----------
    sizes : sequence of int
        Number of codes of every column.
    max_cells : int
        Largest number of cells of a workload marginal.

    Returns
    -------
    list of (tuple of int, float)
        The pairs in lexicographic order; the 1-way marginals when no pair
        qualifies (e.g. a single column).
    """
    pairs = [p for p in itertools.combinations(range(len(sizes)), 2)
             if n_cells(sizes, p) <= max_cells]
    if not pairs:
        return [((j,), 1.0) for j in range(len(sizes))]
    return [(p, 1.0) for p in pairs]


def default_aim_workload(sizes: Sequence[int], max_cells: int) -> list[tuple[Marginal, float]]:
    """AIM's default workload: the 2-way one, plus the 3-way layer on small binary tables.

    Every 2-way marginal of at most ``max_cells`` cells (``default_workload``)
    and, when every column is binary and all 3-way marginals together have
    at most ``max_cells`` cells (``8 * C(d, 3) <= max_cells``: up to 20
    columns at the default 10,000), every 3-way marginal too, all of
    weight 1.  In a binary table the interactions are the structure: a
    constraint that ties many columns (a fixed row sum, an XOR) is invisible
    to, or only faintly seen by, 2-way marginals, and the 3-way layer of
    such a table is cheap to score.  On tables with larger columns the
    3-way layer is both costly and, on ``make_bayesnet`` tables at small
    budgets, less accurate on 2-way marginals, so it stays off there.

    The rule reads only ``sizes`` and ``max_cells`` (the public domain and
    a parameter), never the rows: the workload of two neighbouring tables
    is the same.

    Parameters
    ----------
    sizes : sequence of int
        Number of codes of every column.
    max_cells : int
        Largest number of cells of a 2-way workload marginal, and of the
        3-way layer in all.

    Returns
    -------
    list of (tuple of int, float)
        The pairs, then (when added) the triples, in lexicographic order.
    """
    workload = default_workload(sizes, max_cells)
    triples = list(itertools.combinations(range(len(sizes)), 3))
    binary = all(int(size) == 2 for size in sizes)
    if triples and binary and 8 * len(triples) <= max_cells:
        workload += [(t, 1.0) for t in triples]
    return workload


def candidate_weights(workload: Sequence[tuple[Marginal, float]]) -> dict[Marginal, float]:
    """The workload's downward closure with AIM's candidate weights.

    Parameters
    ----------
    workload : sequence of (tuple of int, float)
        Workload marginals (sorted positions) and their weights.

    Returns
    -------
    dict of tuple of int to float
        Every non-empty subset ``C`` of a workload marginal, with weight
        ``sum_W w_W * |C & W|`` over all workload marginals ``W``; ordered
        by size, then lexicographically.
    """
    closure: set[Marginal] = set()
    for marginal, _ in workload:
        for k in range(1, len(marginal) + 1):
            closure.update(itertools.combinations(marginal, k))
    ordered = sorted(closure, key=lambda c: (len(c), c))
    return {c: sum(w * len(set(c) & set(m)) for m, w in workload) for c in ordered}


#: Largest 2-way marginal of the default workload.
DEFAULT_MAX_CELLS = 10_000


def column_positions(columns: Sequence[Hashable], all_columns: Sequence[Hashable],
                     parameter: str) -> tuple[int, ...]:
    """Positions of distinct known columns; ValueError naming ``parameter``.

    Parameters
    ----------
    columns : sequence of hashable
        Column names.
    all_columns : sequence of hashable
        The table's columns, in order.
    parameter : str
        Named in error messages.

    Returns
    -------
    tuple of int
    """
    index = {c: j for j, c in enumerate(all_columns)}
    unknown = [c for c in columns if c not in index]
    if unknown:
        raise ValueError(f"{parameter}: unknown column(s) {unknown}; the columns are "
                         f"{list(all_columns)}.")
    positions = tuple(index[c] for c in columns)
    if not positions or len(set(positions)) != len(positions):
        raise ValueError(f"{parameter}: a marginal needs distinct columns, got "
                         f"{tuple(columns)!r}.")
    return positions


def workload_positions(workload: Any, columns: Sequence[Hashable], sizes: Sequence[int],
                       parameter: str = "workload") -> list[tuple[Marginal, float]]:
    """A workload parameter as sorted column positions and weights.

    Parameters
    ----------
    workload : list or None
        Entries ``(columns, weight)`` or bare tuples of column names (weight
        1); ``None`` is every 2-way marginal of at most 10,000 cells.
    columns : sequence of hashable
        The table's columns.
    sizes : sequence of int
        Number of codes of every column.
    parameter : str, default="workload"
        Named in error messages.

    Returns
    -------
    list of (tuple of int, float)
    """
    if workload is None:
        return default_workload(sizes, DEFAULT_MAX_CELLS)
    try:
        return parse_workload(workload, lambda c, p: column_positions(c, columns, p))
    except ValueError as error:
        message = str(error)
        if not message.startswith(parameter):
            message = f"{parameter}: {message}"
        raise ValueError(message) from None
