"""The in-memory backend: codes held in one numpy array."""

from __future__ import annotations

from typing import Hashable, Iterator, Sequence

import numpy as np

from .._marginals import contingency_counts
from ..domain import code_dtype
from ._table import DEFAULT_CHUNK_ROWS, EncodedTable

__all__ = ["NumpyTable"]


class NumpyTable(EncodedTable):
    """An encoded table held in memory as one compact array of codes.

    The codes are kept in ``sklearn_dpsynth.domain.code_dtype`` of the
    largest column size (``uint8`` when every column has at most 256
    codes): one byte per cell instead of eight.  Counting builds its int64
    cell index one block of rows at a time; :meth:`iter_chunks` and
    :meth:`to_numpy` hand out int64 codes as before.

    Parameters
    ----------
    codes : array-like of int, shape (n_rows, n_columns)
        Column ``j`` in ``0..sizes[j]-1``.  Copied only when it is not
        already a C-contiguous array of the compact dtype.
    columns : sequence of hashable
        Column names.
    sizes : sequence of int
        Number of codes of every column.

    Examples
    --------
    >>> import numpy as np
    >>> table = NumpyTable(np.array([[0, 1], [1, 1], [0, 0]]), ["a", "b"], [2, 2])
    >>> table.counts([0, 1]).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """

    def __init__(self, codes: np.ndarray, columns: Sequence[Hashable],
                 sizes: Sequence[int]) -> None:
        super().__init__(columns, sizes)
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != self.n_columns:
            raise ValueError(f"codes must be a 2-D array with {self.n_columns} columns.")
        if codes.dtype.kind not in "iub":
            codes = np.asarray(codes, dtype=np.int64)
        if codes.shape[0] and (np.any(codes.min(axis=0) < 0)
                               or np.any(codes.max(axis=0) >= np.asarray(self._sizes))):
            raise ValueError("codes must lie in 0..sizes[j]-1 in every column j.")
        dtype = code_dtype(max(self._sizes)) if self._sizes else np.dtype(np.uint8)
        codes = np.ascontiguousarray(codes, dtype=dtype).view()
        codes.flags.writeable = False
        self._codes = codes

    @property
    def n_rows(self) -> int:
        """Exact number of rows: private for the table passed to ``fit``."""
        return int(self._codes.shape[0])

    @property
    def codes_dtype(self) -> str:
        """Name of the dtype the codes are held in, e.g. ``"uint8"`` (public: from
        the sizes)."""
        return self._codes.dtype.name

    def _count(self, columns: tuple[int, ...], weights: np.ndarray | None) -> np.ndarray:
        if weights is not None and weights.shape[0] != self._codes.shape[0]:
            raise ValueError("weights must be a 1-D array of finite numbers, one per row "
                             "of the table.")
        return contingency_counts(self._codes, self._sizes, columns, weights)

    def iter_chunks(self, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[np.ndarray]:
        """Consecutive read-only blocks of at most ``chunk_rows`` rows.

        Parameters
        ----------
        chunk_rows : int, default=65536
            Largest number of rows per block, ``>= 1``.

        Yields
        ------
        ndarray of int64, shape (rows_in_block, n_columns)
        """
        chunk_rows = self._check_chunk_rows(chunk_rows)
        for start in range(0, self._codes.shape[0], chunk_rows):
            yield _read_only(self._codes[start:start + chunk_rows].astype(np.int64))

    def to_numpy(self) -> np.ndarray:
        """All codes: a read-only int64 array of shape (n_rows, n_columns) (a copy
        of the compact codes, made on each call)."""
        return _read_only(self._codes.astype(np.int64))

    def remap(self, mappings: Sequence[np.ndarray]) -> "NumpyTable":
        """A new in-memory table of ``mappings[j][codes[:, j]]`` (see the base class),
        built column by column in the compact dtype of the new sizes."""
        mappings = self._check_mappings(mappings)
        sizes = [int(m.max()) + 1 for m in mappings]
        out = np.empty(self._codes.shape, dtype=code_dtype(max(sizes)) if sizes else np.uint8)
        for j, mapping in enumerate(mappings):
            out[:, j] = mapping[self._codes[:, j]]
        return NumpyTable(out, self._columns, sizes)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array
