"""The in-memory source: a pandas DataFrame or a numpy array, counted in numpy."""

from __future__ import annotations

from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from .._column_kinds import columns_to_measure, read_kinds
from .._input import InputForm, as_frame, as_numbers, check_frame
from ..domain import Domain, code_dtype
from ._numpy import NumpyTable
from ._source import TableSource

__all__ = ["InMemorySource", "encode_in_blocks"]

#: Rows per block when a DataFrame is encoded (its temporaries: a few MB per column).
ENCODE_BLOCK_ROWS = 1 << 18

#: Rows factorized at once when a DataFrame's category counts are computed.
CATEGORY_BLOCK_ROWS = 1 << 18


class InMemorySource(TableSource):
    """A private table held in memory: a pandas DataFrame or a 2-D array-like.

    Counting is numpy's (a bincount over the public cells, a blockwise
    factorization of categories) and encoding gives a
    :class:`~sklearn_dpsynth.backends.NumpyTable`; the counts are the same
    integers an engine backend computes.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        An array becomes a DataFrame with columns named by position (text
        held as objects; sparse or non-2-D input is an error); emptiness
        and duplicate names are checked by :meth:`input_form`.

    Examples
    --------
    >>> import pandas as pd
    >>> source = InMemorySource(pd.DataFrame({"a": [1.0, 5.0, None]}))
    >>> source.range_counts("a", np.array([0.0, 2.0])).tolist()
    [0.0, 1.0, 1.0]
    """

    def __init__(self, X: Any) -> None:
        # the input as given, and the table as read (its text columns cast by kind
        # once a fit has read them): every fit reads its kinds from the input
        self._input, self._form = as_frame(X)
        self.frame = self._input

    @property
    def columns(self) -> list:
        """Column names (positions for an array)."""
        return list(self.frame.columns)

    def schema_frame(self) -> pd.DataFrame:
        """The table's first zero rows: its columns and dtypes."""
        return self.frame.iloc[:0]

    def input_form(self) -> InputForm:
        """The input's columns, dtypes and container (DataFrame or array).

        Raises
        ------
        ValueError
            On an empty table or duplicate column names.
        """
        check_frame(self._input)
        return InputForm(self._form.columns, list(self._input.dtypes), self._form.is_frame)

    def rows_in_memory(self) -> pd.DataFrame:
        """The table itself (its text columns read by kind, once read)."""
        return self.frame

    def columns_to_measure(self, declared: Mapping[Hashable, Any]) -> list:
        """Text (object) and datetime columns of the input whose kind or unit is learned."""
        return columns_to_measure(dict(self._input.dtypes.items()), declared)

    def read_column_kinds(self, declared: Mapping[Hashable, Any], *, budget: Any,
                          rng: np.random.Generator | None,
                          preprocessing: str = "private") -> dict:
        """Cast the input's text columns by their kinds (``sklearn_dpsynth._column_kinds.read_kinds``);
        the table held from now on is the cast one.  The input is neither
        modified nor replaced: a later fit on the same source reads (and
        pays for) its kinds again, as an engine source does."""
        self.frame, kinds = read_kinds(self._input, declared, budget=budget, rng=rng,
                                       preprocessing=preprocessing)
        return kinds

    def range_counts_many(self, requests: Sequence[tuple[Hashable, np.ndarray]]
                          ) -> list[np.ndarray]:
        """One bincount of the present values' cells per ``(column, cuts)``."""
        out = []
        for name, cuts in requests:
            values = as_numbers(self.frame[name])
            cells = np.searchsorted(cuts, values[~np.isnan(values)], side="right")
            out.append(np.bincount(cells, minlength=len(cuts) + 1).astype(float))
        return out

    def category_counts_many(self, names: Sequence[Hashable]
                             ) -> list[tuple[list, np.ndarray]]:
        """Present values in first-appearance order and their counts, per column.

        ``value_counts(sort=False)`` of the values as objects, without an
        object per row: blocks of ``CATEGORY_BLOCK_ROWS`` rows are
        factorized (temporaries of a block, not of the column), then their
        distinct values, in order, give the column's in first-appearance
        order (``1``, ``1.0`` and ``True`` merge under the first one seen).
        """
        return [self._category_counts_of(self.frame[name]) for name in names]

    @staticmethod
    def _category_counts_of(column: pd.Series) -> tuple[list, np.ndarray]:
        distincts, block_counts = [pd.Series([], dtype=column.dtype)], []
        for start in range(0, len(column), CATEGORY_BLOCK_ROWS):
            row_codes, distinct = pd.factorize(column.iloc[start:start + CATEGORY_BLOCK_ROWS],
                                               use_na_sentinel=True)
            block_counts.append(np.bincount(row_codes[row_codes >= 0], minlength=len(distinct)))
            distincts.append(pd.Series(distinct))
        position, distinct = pd.factorize(pd.concat(distincts, ignore_index=True))
        counts = np.bincount(position, np.concatenate([[]] + block_counts),
                             minlength=len(distinct))
        return list(pd.Series(distinct).astype(object)), counts.astype(float)

    def encode(self, domain: Domain) -> NumpyTable:
        """The codes in memory, in the smallest dtype (``encode_in_blocks``)."""
        return NumpyTable(encode_in_blocks(self.frame, domain), domain.columns, domain.sizes)


def encode_in_blocks(frame: pd.DataFrame, domain: Domain,
                     block_rows: int = ENCODE_BLOCK_ROWS) -> np.ndarray:
    """A DataFrame's codes in the smallest dtype, one column and one block of rows
    at a time (:meth:`Domain.encode` with ``block_rows``).

    The same codes and errors as ``domain.encode(frame)``, but the int64 and
    float temporaries of the encoding span at most ``block_rows`` rows, so
    that encoding a table adds its compact codes and a few MB to the memory
    the frame already takes, whatever its number of rows.

    Parameters
    ----------
    frame : pandas.DataFrame
        With the domain's columns.
    domain : Domain
    block_rows : int, default=ENCODE_BLOCK_ROWS
        Rows encoded at once, ``>= 1``.

    Returns
    -------
    ndarray of shape (n_rows, n_columns)
        In ``code_dtype(max(domain.sizes))`` (``uint8`` when every column
        has at most 256 codes).
    """
    dtype = code_dtype(max(domain.sizes)) if len(domain) else np.dtype(np.uint8)
    return domain.encode(frame, dtype=dtype, block_rows=block_rows)
