"""Domain compression: merging rare codes of each column into one code.

Marginal-based synthesizers (MST, AIM) measure noisy 1-way marginals first
and then model the table on a *compressed* domain in which the codes whose
noisy count is small are merged, so that higher-order marginals have fewer
cells to measure and the graphical model stays small.

A :class:`DomainCompression` is a public object: it is built only from
noisy (already privatised) counts and the public domain sizes, so using it
is post-processing.  It maps codes both ways, re-expresses a noisy 1-way
measurement on the compressed codes, and spreads compressed
probabilities back over the original codes.

Everything is generic in the mapping: a compressed code may stand for any
group of original codes (the group sizes ``k`` are kept), and a code that
stands for ``k`` original codes is expanded uniformly over them.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["DomainCompression", "weighted_simplex_projection"]


def _merge_rare(noisy: np.ndarray, threshold: float) -> np.ndarray:
    """Mapping of one column: codes below ``threshold`` share the last code.

    Codes whose noisy count is at least ``threshold`` keep their own code
    (in their original order).  The others are merged into one extra code
    only when there are at least two of them: merging a single code would
    only rename it.
    """
    keep = np.asarray(noisy, dtype=float) >= threshold
    if np.count_nonzero(~keep) < 2:
        return np.arange(keep.size, dtype=np.int64)
    mapping = np.empty(keep.size, dtype=np.int64)
    n_kept = int(np.count_nonzero(keep))
    mapping[keep] = np.arange(n_kept)
    mapping[~keep] = n_kept
    return mapping


class DomainCompression:
    """Per-column maps from original codes to compressed codes.

    Parameters
    ----------
    mappings : sequence of ndarray of int
        ``mappings[j][v]`` is the compressed code of original code ``v`` of
        column ``j``; the compressed codes of a column must be exactly
        ``0..m_j-1`` (every compressed code stands for at least one original
        code).

    Attributes
    ----------
    mappings : list of ndarray
        The maps, as int64 arrays.
    sizes : list of int
        Number of compressed codes of every column.
    original_sizes : list of int
        Number of original codes of every column.
    group_sizes : list of ndarray
        ``group_sizes[j][c]``: how many original codes compressed code ``c``
        of column ``j`` stands for.

    Examples
    --------
    >>> import numpy as np
    >>> comp = DomainCompression.from_noisy_counts([np.array([50., 2., 40., 1.])], [10.0])
    >>> comp.sizes, comp.mappings[0].tolist()
    ([3], [0, 2, 1, 2])
    """

    def __init__(self, mappings: Sequence[np.ndarray]) -> None:
        self.mappings = [np.asarray(m, dtype=np.int64).ravel() for m in mappings]
        for j, mapping in enumerate(self.mappings):
            _check_mapping(j, mapping)
        self.original_sizes = [int(m.size) for m in self.mappings]
        self.group_sizes = [np.bincount(m) for m in self.mappings]
        self.sizes = [int(g.size) for g in self.group_sizes]
        self._members = [np.argsort(m, kind="stable") for m in self.mappings]
        self._starts = [np.concatenate([[0], np.cumsum(g)[:-1]]) for g in self.group_sizes]

    # ------------------------------------------------------------ builders
    @classmethod
    def identity(cls, sizes: Sequence[int]) -> "DomainCompression":
        """No compression: every code maps to itself.

        Parameters
        ----------
        sizes : sequence of int
            Number of codes of every column.

        Returns
        -------
        DomainCompression
        """
        return cls([np.arange(int(k)) for k in sizes])

    @classmethod
    def from_noisy_counts(
        cls, noisy: Sequence[np.ndarray], thresholds: Sequence[float]
    ) -> "DomainCompression":
        """Merge, in every column, the codes whose noisy count is below a threshold.

        Parameters
        ----------
        noisy : sequence of ndarray
            Noisy 1-way counts of every column on its original codes.
        thresholds : sequence of float
            One threshold per column (e.g. three noise standard deviations).

        Returns
        -------
        DomainCompression
            Kept codes first, in their original order, then one merged code
            when at least two codes fall below the threshold.
        """
        if len(noisy) != len(thresholds):
            raise ValueError("noisy and thresholds must have one entry per column.")
        return cls([_merge_rare(y, t) for y, t in zip(noisy, thresholds)])

    # ----------------------------------------------------------- properties
    @property
    def is_identity(self) -> bool:
        """Whether no column is compressed."""
        return all(s == k for s, k in zip(self.sizes, self.original_sizes))

    def merged_codes(self, column: int) -> list[np.ndarray]:
        """Original codes of every compressed code standing for several.

        Parameters
        ----------
        column : int
            Column position.

        Returns
        -------
        list of ndarray
            One array of original codes per merged compressed code.
        """
        groups = np.flatnonzero(self.group_sizes[column] > 1)
        return [np.flatnonzero(self.mappings[column] == c) for c in groups]

    # --------------------------------------------------------------- codes
    def compress(self, codes: np.ndarray) -> np.ndarray:
        """Compressed codes of an encoded table.

        Parameters
        ----------
        codes : ndarray of int, shape (n_samples, n_columns)
            Original codes.

        Returns
        -------
        ndarray of int64, same shape
        """
        codes = np.asarray(codes, dtype=np.int64)
        out = np.empty_like(codes)
        for j, mapping in enumerate(self.mappings):
            out[:, j] = mapping[codes[:, j]]
        return out

    def expand(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Original codes for compressed ones, uniform within each merged group.

        Parameters
        ----------
        codes : ndarray of int, shape (n_samples, n_columns)
            Compressed codes.
        rng : numpy.random.Generator
            Draws the original code of rows whose compressed code stands for
            several (one uniform draw per row and compressed column).

        Returns
        -------
        ndarray of int64, same shape
        """
        codes = np.asarray(codes, dtype=np.int64)
        out = np.empty_like(codes)
        for j in range(codes.shape[1]):
            out[:, j] = self._expand_column(j, codes[:, j], rng)
        return out

    def _expand_column(self, j: int, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        groups = self.group_sizes[j]
        if np.all(groups == 1):
            return self._members[j][codes]
        offset = np.floor(rng.random(codes.size) * groups[codes]).astype(np.int64)
        offset = np.minimum(offset, groups[codes] - 1)
        return self._members[j][self._starts[j][codes] + offset]

    def log_expansion(self, codes: np.ndarray) -> np.ndarray:
        """Log-probability of the uniform expansion of compressed rows.

        ``log P(original row) = log P(compressed row) + log_expansion``.

        Parameters
        ----------
        codes : ndarray of int, shape (n_samples, n_columns)
            Compressed codes.

        Returns
        -------
        ndarray of shape (n_samples,)
            ``-sum_j log(k_j)`` with ``k_j`` the group size of the row's
            code in column ``j``.
        """
        codes = np.asarray(codes, dtype=np.int64)
        out = np.zeros(codes.shape[0])
        for j, groups in enumerate(self.group_sizes):
            if np.any(groups > 1):
                out -= np.log(groups[codes[:, j]])
        return out

    def expand_marginal(self, probs: np.ndarray, columns: Sequence[int]) -> np.ndarray:
        """Spread a marginal on compressed codes over the original codes.

        Parameters
        ----------
        probs : ndarray
            Marginal on the compressed codes of ``columns`` (one axis per
            column, in that order).
        columns : sequence of int
            Column positions of the axes.

        Returns
        -------
        ndarray
            Shape ``tuple(original_sizes[c] for c in columns)``; each
            original code receives its group's mass divided by the group
            size, so the total is unchanged.
        """
        columns = list(columns)
        if not columns:
            return np.asarray(probs, dtype=float)
        index = np.ix_(*[self.mappings[c] for c in columns])
        out = np.asarray(probs, dtype=float)[index]
        for axis, c in enumerate(columns):
            shape = [1] * len(columns)
            shape[axis] = -1
            out = out / self.group_sizes[c][self.mappings[c]].reshape(shape)
        return out

    # --------------------------------------------------------- measurements
    def project_counts(self, column: int, noisy: np.ndarray, total: float) -> np.ndarray:
        """Least-squares compressed counts of a column from its noisy 1-way counts.

        The generalised least-squares fit of the compressed counts to the
        noisy counts of :meth:`compress_measurement` (noise variance
        proportional to the group sizes), constrained to be non-negative
        and to sum to ``total``: the optimum of the Private-PGM loss of an
        independent model on the 1-way measurements, in closed form.

        Parameters
        ----------
        column : int
            Column position.
        noisy : ndarray of shape (original_sizes[column],)
            Noisy counts on the original codes.
        total : float
            Number of records, ``> 0``.

        Returns
        -------
        ndarray of shape (sizes[column],)
        """
        summed = np.bincount(self.mappings[column], weights=np.asarray(noisy, dtype=float),
                             minlength=self.sizes[column])
        return weighted_simplex_projection(summed, self.group_sizes[column], total)

    def compress_measurement(
        self, column: int, noisy: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Re-express a noisy 1-way count vector on the compressed codes.

        With i.i.d. noise of variance ``sigma^2`` on the original counts, the
        summed count of a group of ``k`` codes has variance ``k sigma^2``.
        Dividing the group's sum by ``sqrt(k)`` *whitens* it: the returned
        vector ``z = W A y`` (``A`` sums the groups, ``W = diag(1/sqrt(k))``)
        measures the compressed counts through the query ``W`` with i.i.d.
        noise of the *same* ``sigma``, so a least-squares fit weighs it
        exactly as generalised least squares on ``A y`` would.  This is
        post-processing of ``y``.

        Parameters
        ----------
        column : int
            Column position.
        noisy : ndarray of shape (original_sizes[column],)
            Noisy counts on the original codes.

        Returns
        -------
        noisy : ndarray of shape (sizes[column],)
            The whitened compressed measurement.
        query : ndarray of shape (sizes[column],) or None
            Diagonal of ``W``, or None when no code of the column is merged
            (identity query).
        """
        noisy = np.asarray(noisy, dtype=float)
        if noisy.shape != (self.original_sizes[column],):
            raise ValueError(f"noisy must have shape ({self.original_sizes[column]},), "
                             f"got {noisy.shape}.")
        groups = self.group_sizes[column]
        summed = np.bincount(self.mappings[column], weights=noisy, minlength=groups.size)
        if np.all(groups == 1):
            return summed, None
        scale = 1.0 / np.sqrt(groups)
        return summed * scale, scale


def weighted_simplex_projection(
    values: np.ndarray, weights: np.ndarray, total: float
) -> np.ndarray:
    """Closest non-negative vector with a given sum in a weighted L2 norm.

    Minimises ``sum_c (x_c - v_c)^2 / w_c`` subject to ``x >= 0`` and
    ``sum(x) = total``.  The solution is ``x_c = max(v_c - t w_c, 0)`` for
    the unique ``t`` that gives the right sum, found exactly by sorting the
    breakpoints ``v_c / w_c`` (with unit weights this is the Euclidean
    projection onto the scaled simplex).

    Parameters
    ----------
    values : ndarray of shape (k,)
        The vector to project (e.g. noisy counts).
    weights : ndarray of shape (k,)
        Positive weights (e.g. noise variances).
    total : float
        Required sum, ``> 0``.

    Returns
    -------
    ndarray of shape (k,)
    """
    values = np.asarray(values, dtype=float)
    weights = np.asarray(weights, dtype=float)
    if not total > 0:
        raise ValueError(f"total must be > 0, got {total!r}.")
    order = np.argsort(-values / weights, kind="stable")
    cum_values = np.cumsum(values[order])
    cum_weights = np.cumsum(weights[order])
    shifts = (cum_values - total) / cum_weights
    active = values[order] - shifts * weights[order] > 0
    last = np.flatnonzero(active)[-1] if active.any() else 0
    return np.maximum(values - shifts[last] * weights, 0.0)


def _check_mapping(j: int, mapping: np.ndarray) -> None:
    """A column map must be onto ``0..m-1``."""
    if mapping.size == 0:
        raise ValueError(f"mappings[{j}] is empty.")
    if mapping.min() < 0 or not np.all(np.bincount(mapping) > 0):
        raise ValueError(f"mappings[{j}] must map onto every code 0..m-1.")
