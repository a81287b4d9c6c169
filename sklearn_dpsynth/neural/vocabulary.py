"""Level tokens: one token per (column, code) pair, plus special tokens.

Each column owns a contiguous range of token ids (its *level* tokens); no id
is shared between columns, so a token identifies both its column and its
value.  Value tokens come first, column after column, so the id of a value
token is also its index in the output head of
:class:`~sklearn_dpsynth.neural.transformer.TabularTransformer`.  Special
tokens (a begin-of-row token, the ``BEGIN_{col}`` field markers of SynLM)
follow the value tokens; they are only ever *fed* to the model, never
predicted.

This module uses numpy only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["LevelVocabulary"]


class LevelVocabulary:
    """Token ids of a table's codes and of a method's special tokens.

    Parameters
    ----------
    sizes : sequence of int
        Number of codes of each column (column ``j`` takes codes
        ``0..sizes[j]-1``); every size must be ``>= 1``.
    specials : sequence of str, default=()
        Names of the special tokens, unique.

    Attributes
    ----------
    sizes : ndarray of int
        Codes per column.
    offsets : ndarray of int
        ``offsets[j]`` is the token id of code 0 of column ``j``;
        ``offsets[-1]`` is the number of value tokens.
    n_value_tokens : int
        Total number of level tokens (``sum(sizes)``).
    n_tokens : int
        Value tokens plus special tokens.
    column_of_token : ndarray of int
        Column of every value token.

    Examples
    --------
    >>> vocab = LevelVocabulary([2, 3], specials=["<bos>"])
    >>> vocab.encode(np.array([[1, 2]])).tolist()
    [[1, 4]]
    >>> vocab.special("<bos>"), vocab.n_tokens
    (5, 6)
    """

    def __init__(self, sizes: Sequence[int], specials: Sequence[str] = ()) -> None:
        sizes = np.asarray(list(sizes), dtype=np.int64)
        if sizes.ndim != 1 or sizes.size == 0 or np.any(sizes < 1):
            raise ValueError(f"sizes must be a non-empty list of ints >= 1, got {sizes!r}.")
        specials = list(specials)
        if len(set(specials)) != len(specials):
            raise ValueError(f"specials must be unique, got {specials!r}.")
        self.sizes = sizes
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.n_value_tokens = int(self.offsets[-1])
        self._specials = {name: self.n_value_tokens + i for i, name in enumerate(specials)}
        self.n_tokens = self.n_value_tokens + len(specials)
        self.column_of_token = np.repeat(np.arange(sizes.size), sizes)

    @property
    def n_columns(self) -> int:
        """Number of columns."""
        return int(self.sizes.size)

    @property
    def specials(self) -> list[str]:
        """Names of the special tokens, in id order."""
        return list(self._specials)

    def special(self, name: str) -> int:
        """Token id of a special token.

        Parameters
        ----------
        name : str
            One of :attr:`specials`.

        Returns
        -------
        int
        """
        if name not in self._specials:
            raise ValueError(f"name must be one of {self.specials}, got {name!r}.")
        return self._specials[name]

    def column_range(self, column: int) -> tuple[int, int]:
        """Half-open id range ``[start, stop)`` of a column's level tokens."""
        return int(self.offsets[column]), int(self.offsets[column + 1])

    def encode(self, codes: np.ndarray) -> np.ndarray:
        """Level tokens of a table of codes.

        Parameters
        ----------
        codes : ndarray of shape (n_rows, n_columns), int
            Codes, column ``j`` in ``0..sizes[j]-1``.

        Returns
        -------
        tokens : ndarray of shape (n_rows, n_columns), int64
        """
        codes = self._check_codes(codes)
        return codes + self.offsets[:-1]

    def decode(self, tokens: np.ndarray) -> np.ndarray:
        """Codes of a table of level tokens (inverse of :meth:`encode`).

        Parameters
        ----------
        tokens : ndarray of shape (n_rows, n_columns), int
            Token ``tokens[:, j]`` must lie in column ``j``'s range.

        Returns
        -------
        codes : ndarray of shape (n_rows, n_columns), int64
        """
        return self._check_codes(np.asarray(tokens, dtype=np.int64) - self.offsets[:-1])

    def _check_codes(self, codes: np.ndarray) -> np.ndarray:
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != self.n_columns:
            raise ValueError(f"codes must have shape (n_rows, {self.n_columns}), "
                             f"got {codes.shape}.")
        codes = codes.astype(np.int64, copy=False)
        if codes.size and (np.any(codes < 0) or np.any(codes >= self.sizes)):
            raise ValueError("codes must lie in 0..sizes[j]-1 in every column j.")
        return codes

    def __repr__(self) -> str:
        return (f"LevelVocabulary(n_columns={self.n_columns}, "
                f"n_value_tokens={self.n_value_tokens}, specials={self.specials})")
