"""Stand-in for the encoded-table interface of the architecture refactor.

.. note::
   This module is the ONE place that wraps today's bare ``codes`` array.  It
   is a temporary stand-in for ``sklearn_dpsynth.backends.NumpyTable`` (the
   in-memory :class:`EncodedTable` being written in parallel) and will be
   replaced by it at the port: the algorithms of :mod:`sklearn_dpsynth.public`
   and :mod:`sklearn_dpsynth.evolution` only use ``columns``, ``sizes``,
   ``counts``, ``iter_chunks`` and ``to_numpy`` (duck typing), so the port
   is a change of import.

Every read of the private rows by these packages goes through an object of
this interface, passed to the function that spends the privacy budget.
"""

from __future__ import annotations

from typing import Hashable, Iterator, Sequence

import numpy as np

from .._marginals import contingency_counts

__all__ = ["CodesTable"]


class CodesTable:
    """An integer-coded table behind the ``EncodedTable`` interface.

    Parameters
    ----------
    codes : ndarray of int, shape (n_rows, n_columns)
        Column ``j`` takes codes ``0..sizes[j]-1``.
    columns : sequence of hashable
        Column names.
    sizes : sequence of int
        Number of codes of every column.
    """

    def __init__(self, codes: np.ndarray, columns: Sequence[Hashable],
                 sizes: Sequence[int]) -> None:
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(sizes) or len(columns) != len(sizes):
            raise ValueError("codes, columns and sizes do not describe the same columns.")
        self._codes = codes
        self.columns = list(columns)
        self.sizes = [int(s) for s in sizes]

    @property
    def n_rows(self) -> int:
        """Number of rows (private for a private table: internal use only)."""
        return int(self._codes.shape[0])

    def counts(self, columns: Sequence[int], weights: np.ndarray | None = None) -> np.ndarray:
        """Exact contingency table of some columns (axes in ``columns`` order)."""
        return contingency_counts(self._codes, self.sizes, columns, weights)

    def iter_chunks(self, chunk_rows: int = 65536) -> Iterator[np.ndarray]:
        """Blocks of at most ``chunk_rows`` rows of codes, in order."""
        for start in range(0, self._codes.shape[0], int(chunk_rows)):
            yield self._codes[start:start + int(chunk_rows)]

    def to_numpy(self) -> np.ndarray:
        """All rows as one ``(n_rows, n_columns)`` array of codes."""
        return self._codes
