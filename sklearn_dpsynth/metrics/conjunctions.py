"""High-order conjunction queries in the style of the NIST 2018 DP synthetic-data challenge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from .tables import check_choice, encode_tables, prepare_tables, reduce_values

__all__ = ["conjunction_error", "random_conjunctions", "conjunction_answers"]


def random_conjunctions(
    sizes: list[int], n_queries: int, column_fraction: float, random_state: Any = None
) -> list[dict[int, np.ndarray]]:
    """Draw random conjunctive predicates over coded columns.

    Each query picks ``max(1, round(column_fraction * n_columns))`` distinct
    columns; for each picked column ``i`` with ``s_i`` codes it draws a subset
    ``S_i`` of ``m`` codes, ``m`` uniform in ``1..max(1, s_i - 1)`` (so the
    predicate is not trivially true when ``s_i > 1``).

    Parameters
    ----------
    sizes : list of int
        Number of codes of every column.
    n_queries : int
        Number of queries.
    column_fraction : float
        Fraction of the columns constrained by every query, in ``(0, 1]``.
    random_state : int, RandomState or None
        Seed.

    Returns
    -------
    queries : list of dict
        ``{column position: sorted array of allowed codes}`` per query.
    """
    rng = check_random_state(random_state)
    n_columns = len(sizes)
    width = min(n_columns, max(1, int(round(column_fraction * n_columns))))
    queries = []
    for _ in range(n_queries):
        columns = rng.choice(n_columns, size=width, replace=False)
        query = {}
        for column in sorted(columns.tolist()):
            size = sizes[column]
            m = rng.randint(1, max(1, size - 1) + 1)
            query[column] = np.sort(rng.choice(size, size=m, replace=False))
        queries.append(query)
    return queries


def conjunction_answers(codes: np.ndarray, sizes: list[int], queries: list[dict]) -> np.ndarray:
    """Fraction of rows satisfying ``AND_i [x_i in S_i]`` for every query.

    Parameters
    ----------
    codes : ndarray of int of shape (n_rows, n_columns)
        Coded table.
    sizes : list of int
        Number of codes of every column.
    queries : list of dict
        As returned by :func:`random_conjunctions`.

    Returns
    -------
    answers : ndarray of shape (n_queries,)
        Values in ``[0, 1]``.
    """
    answers = np.empty(len(queries))
    for q, query in enumerate(queries):
        satisfied = np.ones(len(codes), dtype=bool)
        for column, allowed in query.items():
            member = np.zeros(sizes[column], dtype=bool)
            member[allowed] = True
            satisfied &= member[codes[:, column]]
        answers[q] = satisfied.mean()
    return answers


def conjunction_error(
    real: Any,
    synth: Any,
    domain: Mapping | None = None,
    *,
    n_queries: int = 100,
    column_fraction: float = 0.1,
    bins: int = 20,
    reduce: str = "mean",
    random_state: Any = None,
) -> float | pd.Series:
    """Error on random high-order conjunction (counting) queries.

    Each query is a predicate ``AND_i [x_i in S_i]`` over about 10% of the
    columns (at least one), each ``S_i`` a random subset of the column's
    categories (numeric columns: of its bins); the error of a query is the
    absolute difference between the fractions of real and synthetic rows
    that satisfy it, as in the NIST 2018 Differential Privacy Synthetic Data
    Challenge scoring.

    Parameters
    ----------
    real, synth : DataFrame or 2-D array
        Real and synthetic tables with the same columns.
    domain : mapping, default=None
        Column domain (int codes are used as is; see
        :func:`~sklearn_dpsynth.metrics.workload_error`).
    n_queries : int, default=100
        Number of random queries.
    column_fraction : float, default=0.1
        Fraction of the columns in each query, in ``(0, 1]``.
    bins : int, default=20
        Equal-width bins of numeric columns (edges from the real range).
    reduce : {"mean", "max", "none"}, default="mean"
        Mean or worst error, or the Series of per-query errors.
    random_state : int, RandomState or None, default=None
        Seed of the queries.

    Returns
    -------
    error : float or Series
        Absolute differences of fractions, in ``[0, 1]``; 0 is best.
    """
    check_choice(reduce, "reduce", ("mean", "max", "none"))
    if not isinstance(n_queries, (int, np.integer)) or n_queries < 1:
        raise ValueError(f"n_queries must be a positive integer, got {n_queries!r}.")
    if not 0 < column_fraction <= 1:
        raise ValueError(f"column_fraction must be in (0, 1], got {column_fraction!r}.")
    real_df, synth_df = prepare_tables(real, ("synth", synth))
    encoded = encode_tables([real_df, synth_df], domain, bins)
    queries = random_conjunctions(encoded.sizes, int(n_queries), column_fraction, random_state)
    real_answers = conjunction_answers(encoded.codes[0], encoded.sizes, queries)
    synth_answers = conjunction_answers(encoded.codes[1], encoded.sizes, queries)
    errors = pd.Series(np.abs(real_answers - synth_answers), name="conjunction_error")
    return reduce_values(errors, reduce)
