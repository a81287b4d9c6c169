"""The encoded-table interface: the one owner of a table's integer codes.

Every synthesizer reads the private table only through an
:class:`EncodedTable`: the exact contingency tables of some columns
(:meth:`EncodedTable.counts`), row blocks for row-level mechanisms, or all
codes for the methods that train in memory.  A backend implements the
abstract methods here and those of
:class:`~sklearn_dpsynth.backends.TableSource`, and registers its source
with :func:`~sklearn_dpsynth.backends.register_source`; the page "Adding a
backend" of ``docs/contributing.rst`` lists every place it touches.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Hashable, Iterator, Sequence

import numpy as np

__all__ = ["EncodedTable"]

#: Default number of rows per block of :meth:`EncodedTable.iter_chunks`.
DEFAULT_CHUNK_ROWS = 65536


#: Grouping sets an engine answers in one pass (one query or one job).
GROUPING_SETS_PER_PASS = 256


def in_passes(items: Sequence) -> Iterator[list]:
    """``items`` in consecutive batches of at most ``GROUPING_SETS_PER_PASS``:
    one engine pass (a ``GROUPING SETS`` query or job) each."""
    for start in range(0, len(items), GROUPING_SETS_PER_PASS):
        yield list(items[start:start + GROUPING_SETS_PER_PASS])


class EncodedTable(ABC):
    """A table of integer codes, one column per domain column.

    Column ``j`` takes codes ``0..sizes[j]-1``.  The column names and sizes
    are public (they come from the domain); the rows, and their number,
    are whatever the table holds: private when it is the table passed to
    ``fit``.

    Parameters
    ----------
    columns : sequence of hashable
        Column names, in code order.
    sizes : sequence of int
        Number of codes of every column (each ``>= 1``).

    Notes
    -----
    Subclasses implement ``_count``, :attr:`n_rows`,
    :meth:`iter_chunks`, :meth:`to_numpy` and :meth:`remap`; the base class
    checks the arguments of :meth:`counts` so that every backend rejects
    the same inputs with the same messages.  No message may depend on the
    rows (their values or their number).
    """

    def __init__(self, columns: Sequence[Hashable], sizes: Sequence[int]) -> None:
        columns, sizes = list(columns), [int(k) for k in sizes]
        if len(columns) != len(sizes):
            raise ValueError(f"columns and sizes must have the same length, got "
                             f"{len(columns)} and {len(sizes)}.")
        if any(k < 1 for k in sizes):
            raise ValueError("sizes must be >= 1 for every column.")
        self._columns = columns
        self._sizes = sizes

    # ------------------------------------------------------------ public
    @property
    def columns(self) -> list:
        """Column names (public)."""
        return list(self._columns)

    @property
    def sizes(self) -> list[int]:
        """Number of codes of every column (public)."""
        return list(self._sizes)

    @property
    def n_columns(self) -> int:
        """Number of columns (public)."""
        return len(self._sizes)

    def __repr__(self) -> str:
        shown = ", ".join(f"{c!r}: {k}" for c, k in zip(self._columns, self._sizes))
        return f"{type(self).__name__}({shown})"

    # ------------------------------------------------------------ counts
    def counts(self, columns: Sequence[int], weights: np.ndarray | None = None) -> np.ndarray:
        """Exact contingency table of some columns.

        The L2 sensitivity of the result is 1 under add/remove-one-row
        neighbours (one cell changes by one; by the row's weight when
        weighted): release it only through a mechanism.

        Parameters
        ----------
        columns : sequence of int
            Distinct column positions, in the order of the output axes;
            an empty sequence counts the rows (a 0-d array).
        weights : ndarray of shape (n_rows,), default=None
            Per-row weights (e.g. to reweight a public table); counts of 1
            when omitted.

        Returns
        -------
        ndarray of float, shape ``tuple(sizes[c] for c in columns)``
        """
        columns = self._check_columns(columns)
        if weights is not None:
            weights = np.asarray(weights, dtype=float)
            if weights.ndim != 1 or not np.all(np.isfinite(weights)):
                raise ValueError("weights must be a 1-D array of finite numbers, one per "
                                 "row of the table.")
        return self._count(columns, weights)

    def counts_many(self, column_sets: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """Exact contingency tables of several column sets, batched.

        The same arrays as ``[self.counts(c) for c in column_sets]``; an
        engine backend computes them in as few passes over the data as it
        can (one ``GROUPING SETS`` aggregation per batch), so a method that
        knows several queries at once should ask for them together.  Each
        table has L2 sensitivity 1: release each only through a mechanism.

        Parameters
        ----------
        column_sets : sequence of sequence of int
            Column positions of every table (as for :meth:`counts`).

        Returns
        -------
        list of ndarray of float
            One table per entry of ``column_sets``, in that order.
        """
        checked = [self._check_columns(c) for c in column_sets]
        distinct = list(dict.fromkeys(tuple(sorted(c)) for c in checked))
        by_set = dict(zip(distinct, self._count_many(distinct))) if distinct else {}
        return [_reorder(by_set[tuple(sorted(c))], tuple(sorted(c)), c) for c in checked]

    def with_counts(self, column_sets: Sequence[Sequence[int]]) -> "EncodedTable":
        """This table with the tables of ``column_sets`` counted now, in one batch.

        The returned table answers :meth:`counts` of any permutation of
        those sets from memory (and any other call from this table), so
        code written against ``counts`` gets the batched passes of
        :meth:`counts_many` unchanged.

        Parameters
        ----------
        column_sets : sequence of sequence of int
            Column positions of the tables to count now.

        Returns
        -------
        EncodedTable
        """
        return _CountCache(self, column_sets)

    def _count_many(self, column_sets: list[tuple[int, ...]]) -> list[np.ndarray]:
        """Backend counting of distinct sorted column sets, one
        :meth:`_count_batch` per pass of at most ``GROUPING_SETS_PER_PASS``."""
        return [table for batch in in_passes(column_sets)
                for table in self._count_batch(batch)]

    def _count_batch(self, column_sets: list[tuple[int, ...]]) -> list[np.ndarray]:
        """The tables of one pass (one :meth:`_count` each by default; the
        engines answer a batch in one scan)."""
        return [self._count(c, None) for c in column_sets]

    def _check_columns(self, columns: Sequence[int]) -> tuple[int, ...]:
        """Column positions as a tuple of ints; ValueError naming ``columns``."""
        out = []
        for c in columns:
            if isinstance(c, bool) or not isinstance(c, (int, np.integer)):
                raise TypeError(f"columns: positions must be ints, got {c!r}.")
            if not 0 <= c < self.n_columns:
                raise ValueError(f"columns: position {c} outside 0..{self.n_columns - 1}.")
            out.append(int(c))
        if len(set(out)) != len(out):
            raise ValueError(f"columns: repeated position in {tuple(out)}.")
        return tuple(out)

    # ------------------------------------------------------ backend hooks
    @abstractmethod
    def _count(self, columns: tuple[int, ...], weights: np.ndarray | None) -> np.ndarray:
        """Backend counting of checked column positions (see :meth:`counts`)."""

    @property
    @abstractmethod
    def n_rows(self) -> int:
        """Exact number of rows.

        Private when the table is the one passed to ``fit``: for internal
        use only (e.g. a DP-SGD sampling rate, or a count released through
        a mechanism); never store or show it.
        """

    @abstractmethod
    def iter_chunks(self, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[np.ndarray]:
        """Consecutive blocks of rows, for row-level mechanisms.

        Parameters
        ----------
        chunk_rows : int, default=65536
            Largest number of rows per block.

        Yields
        ------
        ndarray of int64, shape (rows_in_block, n_columns)
            Read-only.
        """

    @abstractmethod
    def to_numpy(self) -> np.ndarray:
        """All codes in memory (for methods that train in memory).

        Returns
        -------
        ndarray of int64, shape (n_rows, n_columns)
            Read-only.
        """

    @abstractmethod
    def remap(self, mappings: Sequence[np.ndarray]) -> "EncodedTable":
        """A table whose codes pass through per-column lookup arrays.

        Parameters
        ----------
        mappings : sequence of ndarray of int
            One array per column: code ``v`` of column ``j`` becomes
            ``mappings[j][v]``; ``mappings[j]`` has ``sizes[j]`` entries
            (e.g. a domain compression's maps).

        Returns
        -------
        EncodedTable
            Same rows and column names; column ``j`` has
            ``max(mappings[j]) + 1`` codes.
        """

    @staticmethod
    def _check_chunk_rows(chunk_rows: int) -> int:
        """``chunk_rows`` of :meth:`iter_chunks` as an int; ValueError unless an int >= 1."""
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
                or chunk_rows < 1:
            raise ValueError(f"chunk_rows must be an int >= 1, got {chunk_rows!r}.")
        return int(chunk_rows)

    def _check_mappings(self, mappings: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Mappings as int64 arrays with one entry per code; ValueError otherwise."""
        mappings = [np.asarray(m, dtype=np.int64).ravel() for m in mappings]
        if len(mappings) != self.n_columns:
            raise ValueError(f"mappings: need one array per column ({self.n_columns}), "
                             f"got {len(mappings)}.")
        for j, (mapping, size) in enumerate(zip(mappings, self._sizes)):
            if mapping.size != size or mapping.min() < 0:
                raise ValueError(f"mappings[{j}] must hold {size} codes >= 0 (one per code "
                                 f"of column {self._columns[j]!r}).")
        return mappings


def _reorder(counts: np.ndarray, order: tuple[int, ...], wanted: tuple[int, ...]) -> np.ndarray:
    """``counts`` (axes in ``order``) with its axes in the order ``wanted``."""
    if order == wanted:
        return counts
    return np.transpose(counts, [order.index(c) for c in wanted])


class _CountCache(EncodedTable):
    """A table whose counts of some column sets were computed in one batch."""

    def __init__(self, table: EncodedTable, column_sets: Sequence[Sequence[int]]) -> None:
        super().__init__(table.columns, table.sizes)
        self._table = table
        sets = list(dict.fromkeys(tuple(sorted(table._check_columns(c))) for c in column_sets))
        self._cache = dict(zip(sets, table.counts_many(sets)))

    def _count(self, columns: tuple[int, ...], weights: np.ndarray | None) -> np.ndarray:
        key = tuple(sorted(columns))
        if weights is None and key in self._cache:
            return _reorder(self._cache[key], key, columns).copy()
        return self._table.counts(columns, weights)

    def _count_many(self, column_sets: list[tuple[int, ...]]) -> list[np.ndarray]:
        missing = [c for c in column_sets if c not in self._cache]
        self._cache.update(zip(missing, self._table.counts_many(missing) if missing else []))
        return [self._cache[c].copy() for c in column_sets]

    @property
    def n_rows(self) -> int:
        """Exact number of rows of the wrapped table (private for ``fit``'s table)."""
        return self._table.n_rows

    def iter_chunks(self, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[np.ndarray]:
        """The wrapped table's blocks of rows."""
        return self._table.iter_chunks(chunk_rows)

    def to_numpy(self) -> np.ndarray:
        """The wrapped table's codes."""
        return self._table.to_numpy()

    def remap(self, mappings: Sequence[np.ndarray]) -> EncodedTable:
        """The wrapped table remapped (counted afresh)."""
        return self._table.remap(mappings)
