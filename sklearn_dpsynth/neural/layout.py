"""How a row of codes becomes a token sequence (the "sentence" of a row).

A layout turns encoded rows and a *field order* (a permutation of the
columns per row) into the teacher-forced input tokens of the transformer,
and says at which position each column is predicted.  The model's output
at the prediction position of column ``c`` is the distribution of column
``c`` only (the column mask).

Two layouts are provided:

* :class:`PlainLayout` (DP-TBART): ``<bos> v_0 v_1 ... v_{d-2}``; the value
  of the ``i``-th field is predicted at position ``i``.  The field order
  carries no marker, so only one order (the natural one) may be used.
* :class:`FieldLayout` (SynLM): ``BEGIN_{c_0} v_{c_0} BEGIN_{c_1} v_{c_1}
  ... BEGIN_{c_{d-1}}``; the value of field ``i`` is predicted at the
  ``BEGIN`` token of position ``2 i``.  ``BEGIN`` tokens are fed, never
  predicted.  With level tokens the value token already identifies its
  column, so the paper's ``END_{c}`` token is implied by the value and
  dropped (it would be predicted with probability one).

This module uses numpy only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .vocabulary import LevelVocabulary

__all__ = [
    "FieldLayout",
    "PlainLayout",
    "RowLayout",
    "conditioned_first_orders",
    "natural_orders",
    "random_orders",
]


def natural_orders(n_rows: int, n_columns: int) -> np.ndarray:
    """The natural field order ``0..d-1`` for every row.

    Returns
    -------
    orders : ndarray of shape (n_rows, n_columns), int64
    """
    return np.broadcast_to(np.arange(n_columns, dtype=np.int64), (n_rows, n_columns)).copy()


def random_orders(n_rows: int, n_columns: int, rng: np.random.Generator) -> np.ndarray:
    """An independent uniformly random field order for every row.

    Returns
    -------
    orders : ndarray of shape (n_rows, n_columns), int64
    """
    return np.argsort(rng.random((n_rows, n_columns)), axis=1).astype(np.int64)


def conditioned_first_orders(n_rows: int, n_columns: int, conditioned: Sequence[int]
                             ) -> np.ndarray:
    """Field order with the conditioned columns first, each group in natural order.

    Parameters
    ----------
    n_rows, n_columns : int
    conditioned : sequence of int
        Columns whose values are fixed.

    Returns
    -------
    orders : ndarray of shape (n_rows, n_columns), int64
    """
    fixed = sorted({int(c) for c in conditioned})
    rest = [c for c in range(n_columns) if c not in fixed]
    return np.broadcast_to(np.array(fixed + rest, dtype=np.int64), (n_rows, n_columns)).copy()


class RowLayout:
    """Common interface of the row layouts.

    Parameters
    ----------
    sizes : sequence of int
        Codes per column.
    """

    #: Whether the layout can present the fields in any order.
    supports_any_order = False

    def __init__(self, sizes: Sequence[int]) -> None:
        self.vocabulary = LevelVocabulary(sizes, specials=self._special_names(len(sizes)))

    @staticmethod
    def _special_names(n_columns: int) -> list[str]:
        raise NotImplementedError

    @property
    def n_columns(self) -> int:
        """Number of columns (fields) per row."""
        return self.vocabulary.n_columns

    @property
    def seq_len(self) -> int:
        """Length of the input sequence."""
        raise NotImplementedError

    def slot_position(self, slot: int) -> int:
        """Input position whose output predicts the ``slot``-th field."""
        raise NotImplementedError

    def tokens(self, codes: np.ndarray, orders: np.ndarray) -> np.ndarray:
        """Teacher-forced input tokens.

        Parameters
        ----------
        codes : ndarray of shape (n_rows, n_columns), int
        orders : ndarray of shape (n_rows, n_columns), int
            ``orders[r, i]`` is the column presented ``i``-th in row ``r``.

        Returns
        -------
        tokens : ndarray of shape (n_rows, seq_len), int64
        """
        raise NotImplementedError

    def prediction_positions(self, orders: np.ndarray) -> np.ndarray:
        """Where each column is predicted.

        Parameters
        ----------
        orders : ndarray of shape (n_rows, n_columns), int

        Returns
        -------
        positions : ndarray of shape (n_rows, n_columns), int64
            ``positions[r, c]`` is the input position whose output is the
            distribution of column ``c`` in row ``r``.
        """
        orders = self.check_orders(orders)
        slots = np.array([self.slot_position(i) for i in range(self.n_columns)], np.int64)
        positions = np.empty_like(orders)
        np.put_along_axis(positions, orders, np.broadcast_to(slots, orders.shape), axis=1)
        return positions

    def copies_inputs(self, codes: np.ndarray, orders: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Inputs of rows presented ``copies`` times each, copies side by side.

        Parameters
        ----------
        codes : ndarray of shape (n_rows, n_columns), int
        orders : ndarray of shape (n_rows, copies, n_columns), int
            Field order of every copy of every row.

        Returns
        -------
        tokens : ndarray of shape (n_rows, copies * seq_len), int64
            The copies' token sequences one after the other.
        positions : ndarray of shape (n_rows, copies * n_columns), int64
            Prediction position of column ``c`` of copy ``j`` at index
            ``j * n_columns + c``, counted from the start of the row's input.
        targets : ndarray of shape (n_rows, copies, n_columns), int64
            Value token of every column (the same for every copy).
        """
        orders = np.asarray(orders, dtype=np.int64)
        if orders.ndim != 3 or orders.shape[0] != len(codes):
            raise ValueError("orders must have shape (n_rows, copies, n_columns).")
        n_rows, copies, d = orders.shape
        flat = orders.reshape(n_rows * copies, d)
        repeated = np.repeat(np.asarray(codes), copies, axis=0)
        tokens = self.tokens(repeated, flat).reshape(n_rows, copies * self.seq_len)
        offsets = (np.arange(copies) * self.seq_len)[:, None]
        positions = (self.prediction_positions(flat).reshape(n_rows, copies, d)
                     + offsets).reshape(n_rows, copies * d)
        targets = np.repeat(self.vocabulary.encode(codes)[:, None, :], copies, axis=1)
        return tokens, positions, targets

    def chunk(self, slot: int) -> tuple[int, int]:
        """Input positions ``[start, stop)`` to feed before predicting ``slot``.

        Feeding the chunks of slots ``0, 1, ...`` in turn feeds the whole
        sequence once; the last position of each chunk predicts the slot.
        """
        start = 0 if slot == 0 else self.slot_position(slot - 1) + 1
        return start, self.slot_position(slot) + 1

    def check_orders(self, orders: np.ndarray) -> np.ndarray:
        """Validate field orders (each row a permutation) and return them as int64."""
        orders = np.asarray(orders, dtype=np.int64)
        d = self.n_columns
        if orders.ndim != 2 or orders.shape[1] != d:
            raise ValueError(f"orders must have shape (n_rows, {d}), got {orders.shape}.")
        if orders.size and not np.array_equal(np.sort(orders, axis=1),
                                              natural_orders(len(orders), d)):
            raise ValueError("orders must hold a permutation of the columns in every row.")
        if not self.supports_any_order and orders.size and not np.array_equal(
                orders, natural_orders(len(orders), d)):
            raise ValueError(f"{type(self).__name__} supports the natural field order only.")
        return orders


class PlainLayout(RowLayout):
    """DP-TBART's layout: a begin-of-row token then one level token per column.

    Examples
    --------
    >>> layout = PlainLayout([2, 3])
    >>> codes = np.array([[1, 2]])
    >>> layout.tokens(codes, natural_orders(1, 2)).tolist()
    [[5, 1]]
    """

    @staticmethod
    def _special_names(n_columns: int) -> list[str]:
        return ["<bos>"]

    @property
    def seq_len(self) -> int:
        return self.n_columns

    def slot_position(self, slot: int) -> int:
        return slot

    def tokens(self, codes: np.ndarray, orders: np.ndarray) -> np.ndarray:
        orders = self.check_orders(orders)
        values = self.vocabulary.encode(codes)
        bos = np.full((len(values), 1), self.vocabulary.special("<bos>"), dtype=np.int64)
        return np.concatenate([bos, values[:, :-1]], axis=1)


class FieldLayout(RowLayout):
    """SynLM's layout: ``BEGIN_{c} value`` per field, in any field order.

    Examples
    --------
    >>> layout = FieldLayout([2, 3])
    >>> codes = np.array([[1, 2]])
    >>> layout.tokens(codes, np.array([[1, 0]])).tolist()
    [[6, 4, 5]]
    """

    supports_any_order = True

    @staticmethod
    def _special_names(n_columns: int) -> list[str]:
        return [f"<begin:{c}>" for c in range(n_columns)]

    @property
    def seq_len(self) -> int:
        return 2 * self.n_columns - 1

    def slot_position(self, slot: int) -> int:
        return 2 * slot

    def tokens(self, codes: np.ndarray, orders: np.ndarray) -> np.ndarray:
        orders = self.check_orders(orders)
        values = np.take_along_axis(self.vocabulary.encode(codes), orders, axis=1)
        begins = self.vocabulary.n_value_tokens + orders
        tokens = np.empty((len(orders), 2 * self.n_columns), dtype=np.int64)
        tokens[:, 0::2] = begins
        tokens[:, 1::2] = values
        return tokens[:, :-1]
