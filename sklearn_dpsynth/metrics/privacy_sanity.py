"""Privacy sanity checks for the data owner: exact copies and distance to closest record.

These are *not* a differential privacy guarantee (only the mechanism's
accounting is); they catch gross failures such as a synthesizer that copies
training rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state

from .tables import Features, mixed_features, prepare_tables

__all__ = ["distance_to_closest_record", "exact_match_rate"]


def exact_match_rate(reference: np.ndarray, queries: np.ndarray) -> float:
    """Fraction of query rows identical to some reference row.

    Parameters
    ----------
    reference, queries : ndarray of float of shape (n, d)
        Feature matrices with the same columns (NaN equals NaN).

    Returns
    -------
    rate : float
        In ``[0, 1]``.
    """
    def keys(matrix: np.ndarray) -> list[bytes]:
        clean = np.where(np.isnan(matrix), np.inf, matrix) + 0.0  # -0.0 -> 0.0
        return [row.tobytes() for row in np.ascontiguousarray(clean)]

    known = set(keys(reference))
    return float(np.mean([key in known for key in keys(queries)]))


def _scaling(features: Features, reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Offset and range of numeric columns over the reference (range 1 if constant)."""
    numeric = ~features.categorical
    low = np.zeros(reference.shape[1])
    span = np.ones(reference.shape[1])
    if numeric.any():
        values = reference[:, numeric]
        with np.errstate(all="ignore"):
            low[numeric] = np.nanmin(np.where(np.isnan(values), np.inf, values), axis=0)
            high = np.nanmax(np.where(np.isnan(values), -np.inf, values), axis=0)
        width = high - low[numeric]
        span[numeric] = np.where(np.isfinite(width) & (width > 0), width, 1.0)
    low = np.where(np.isfinite(low), low, 0.0)
    return low, span


def _gower_space(
    matrix: np.ndarray, features: Features, low: np.ndarray, span: np.ndarray
) -> sparse.csr_matrix:
    """Embedding where the L1 distance divided by the column count is Gower-like.

    Numeric columns are scaled to ``[0, 1]`` by the reference range (missing
    values at ``-1``); categorical columns are one-hot encoded with entries
    0.5, so a mismatch costs 1.
    """
    blocks = []
    for j, size in enumerate(features.sizes):
        column = matrix[:, j]
        if features.categorical[j]:
            rows = np.arange(len(column))
            blocks.append(sparse.csr_matrix((np.full(len(column), 0.5), (rows, column.astype(int))),
                                            shape=(len(column), size)))
        else:
            scaled = (column - low[j]) / span[j]
            blocks.append(sparse.csr_matrix(np.where(np.isnan(scaled), -1.0, scaled)[:, None]))
    return sparse.hstack(blocks, format="csr")


def _subsample(matrix: np.ndarray, max_samples: int | None, rng: np.random.RandomState) -> np.ndarray:
    """At most ``max_samples`` rows drawn without replacement."""
    if max_samples is None or len(matrix) <= max_samples:
        return matrix
    return matrix[rng.choice(len(matrix), size=max_samples, replace=False)]


def _closest_distances(
    reference: sparse.csr_matrix, queries: sparse.csr_matrix, n_columns: int
) -> np.ndarray:
    """Gower-like distance from every query row to its nearest reference row."""
    neighbours = NearestNeighbors(n_neighbors=1, metric="manhattan", algorithm="brute")
    neighbours.fit(reference)
    distances, _ = neighbours.kneighbors(queries)
    return distances[:, 0] / n_columns


def _summary(prefix: str, exact: float, distances: np.ndarray) -> dict:
    """Exact-match rate and DCR quantiles under a key prefix."""
    return {
        f"{prefix}exact_match_rate": exact,
        f"{prefix}dcr_median": float(np.median(distances)),
        f"{prefix}dcr_p5": float(np.percentile(distances, 5)),
    }


def distance_to_closest_record(
    train: Any,
    synth: Any,
    holdout: Any = None,
    *,
    domain: Mapping | None = None,
    max_samples: int | None = 5_000,
    random_state: Any = None,
) -> dict:
    """Exact-match rate and distance to closest record (DCR) of synthetic rows.

    * ``exact_match_rate``: fraction of (all) synthetic rows that are exact
      copies of some training row.
    * DCR: for each synthetic row, the distance to the closest training row,
      a Gower-like distance in ``[0, 1]`` for in-range values: the mean over
      columns of ``|x - y| / range`` (numeric, range of the training data)
      or ``[x != y]`` (categorical), computed with scikit-learn's
      NearestNeighbors (Manhattan metric) on one-hot + scaled features.
      Reported as the median and the 5th percentile.

    With a ``holdout`` table of real rows not used for training, the same
    figures are computed for the holdout rows (``holdout_`` keys): real data
    from the same population is the baseline to compare with.  Synthetic
    rows much closer to the training rows than holdout rows are (or many
    more exact matches) hint at memorisation.  This is a sanity check, not a
    proof of privacy.

    Parameters
    ----------
    train : DataFrame or 2-D array
        Real training table.
    synth : DataFrame or 2-D array
        Synthetic table with the same columns.
    holdout : DataFrame or 2-D array, default=None
        Real rows not used for training.
    domain : mapping, default=None
        Column domain (decides which columns are categorical).
    max_samples : int or None, default=5_000
        The training table (reference) and the synthetic/holdout tables
        (queries) are each subsampled to at most this many rows for the DCR
        (exact matches always use all rows).  Subsampling the reference makes
        distances larger, equally for synthetic and holdout queries.
    random_state : int, RandomState or None, default=None
        Seed of the subsampling.

    Returns
    -------
    summary : dict
        ``exact_match_rate``, ``dcr_median``, ``dcr_p5`` (and the same with
        a ``holdout_`` prefix), all in ``[0, 1]`` for in-range values;
        higher distances and lower match rates mean fewer near-copies.
    """
    others = [("synth", synth)] + ([("holdout", holdout)] if holdout is not None else [])
    frames = prepare_tables(train, *others)
    features = mixed_features(frames, domain)
    rng = check_random_state(random_state)
    train_matrix = features.matrices[0]
    low, span = _scaling(features, train_matrix)
    reference = _gower_space(_subsample(train_matrix, max_samples, rng), features, low, span)
    n_columns = train_matrix.shape[1]
    result = {}
    for prefix, matrix in zip(["", "holdout_"], features.matrices[1:], strict=False):
        queries = _gower_space(_subsample(matrix, max_samples, rng), features, low, span)
        distances = _closest_distances(reference, queries, n_columns)
        result.update(_summary(prefix, exact_match_rate(train_matrix, matrix), distances))
    return result
