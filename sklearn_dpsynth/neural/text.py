"""Rows as text: the GReaT template and a word-level tokenizer from public strings.

A row becomes ``"<key> is <value>, <key> is <value>, ..."`` in a fixed column
order (DP-2Stage, after GReaT).  The tokens are

* *template* (non-functional) tokens: ``<bos>``, the `` is `` after a key,
  the ``, `` between fields and ``<eos>`` after the last field.  They are
  special ids, distinct from any word, so a comma or the word "is" inside a
  value or a column name is an ordinary word token and the template stays
  unambiguous;
* *key* tokens: one token per column name (a whole-name token: the names
  are few, and one token per key keeps rows short, which is what DP-SGD
  on a CPU pays for);
* *value* tokens: the word pieces of the value's string, or one whole
  token per value (``WordVocabulary(whole=...)``, or an explicit
  ``RowText(value_tokens=...)`` such as the ``<bin:k>`` tokens that
  DP-2Stage shares between numeric columns): rows of fixed length, no
  padding, a third fewer tokens on Adult.

**Tokenizer (our choice).** Word level, learned from public strings only:
the column names and the value strings of the *domain* (declared, or learned
with a share of the budget, never read from the private rows), plus those of
a public pseudo table when one is given.  :func:`split_words` cuts a string
into runs of letters, single digits and single other characters, each with
the whitespace before it; the pieces concatenate back to the string, so the
split is lossless.  Numbers are spelled digit by digit (as many modern LM
tokenizers do), which shares the digit tokens between numeric columns and
with an out-of-distribution public table.  A learned subword vocabulary
(BPE) would need a corpus; the domain's strings are few and short, and a
word-level vocabulary over them is already small (a few hundred tokens for
Adult), so we did not learn merges.

**Value strings.** Each code of a column has one string: the category
(``"<other>"`` for merged rare categories), ``"NaN"`` for the missing code,
the code itself for ``"codes"`` columns, and for a numeric bin its midpoint
written with the fewest significant digits that keep the column's strings
distinct (integers for integer columns when that suffices).  Colliding
strings (a category literally ``"NaN"`` next to the missing code) are made
distinct by appending primes.  Distinct strings give distinct token
sequences, and a value's tokens are always followed by a template token, so
the value token sequences of a column form a prefix-free code: this is what
the trie of ``sklearn_dpsynth.neural.constrained`` relies on.

This module uses numpy only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "KEY",
    "OTHER_TOKEN",
    "RowText",
    "SPECIALS",
    "VALUE",
    "WordVocabulary",
    "format_number",
    "public_table_text",
    "render_public_value",
    "split_words",
    "value_strings",
]

#: Special tokens, in id order: padding, begin and end of row, the `` is ``
#: after a key and the ``, `` between fields.
SPECIALS = ("<pad>", "<bos>", "<eos>", "<is>", "<sep>")

#: How the template tokens are written in text.
_SPECIAL_TEXT = {"<pad>": "", "<bos>": "", "<eos>": "", "<is>": " is ", "<sep>": ", "}

#: Token types (the paper's perplexity split).
OTHER_TOKEN, KEY, VALUE = 0, 1, 2

_WORD_PATTERN = re.compile(r"\s*(?:[^\W\d_]+|\d|\S)|\s+")


def split_words(text: str) -> list[str]:
    """Cut a string into word pieces that concatenate back to it.

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str
        Runs of letters, single digits and single other characters, each
        with the whitespace before it (trailing whitespace is its own piece).

    Examples
    --------
    >>> split_words("Married-civ-spouse")
    ['Married', '-', 'civ', '-', 'spouse']
    >>> split_words("42.5")
    ['4', '2', '.', '5']
    """
    return _WORD_PATTERN.findall(text)


def format_number(value: float, digits: int) -> str:
    """``value`` with ``digits`` significant digits, positional notation, no trailing zeros."""
    return np.format_float_positional(float(value), precision=digits, unique=False,
                                      fractional=False, trim="-")


def _distinct(strings: list[str]) -> list[str]:
    """Make the strings distinct by appending primes to later duplicates."""
    seen: set[str] = set()
    out = []
    for text in strings:
        while text in seen:
            text += "'"
        seen.add(text)
        out.append(text)
    return out


def _numeric_strings(edges: np.ndarray, integer: bool) -> list[str]:
    midpoints = 0.5 * (edges[:-1] + edges[1:])
    if integer:
        rounded = [str(int(v)) for v in np.rint(midpoints)]
        if len(set(rounded)) == len(rounded):
            return rounded
    for digits in range(1, 18):
        strings = [format_number(v, digits) for v in midpoints]
        if len(set(strings)) == len(strings):
            return strings
    return [repr(float(v)) for v in midpoints]


def value_strings(spec) -> list[str]:
    """One distinct string per code of a column (see the module docstring).

    Parameters
    ----------
    spec : ColumnSpec
        A public column description (from the domain layer).

    Returns
    -------
    list of str
        ``spec.size`` strings, in code order.
    """
    if spec.kind == "codes":
        strings = [str(k) for k in range(spec.n_codes)]
    elif spec.kind == "categorical":
        strings = [str(c) for c in spec.categories] + (["<other>"] if spec.other else [])
    else:
        strings = _numeric_strings(np.asarray(spec.edges, float), bool(spec.integer))
        strings += [render_public_value(float(point)) for point in spec.points]
    if spec.missing:
        strings.append("NaN")
    return _distinct(strings)


class WordVocabulary:
    """Token ids of the template specials and of word pieces.

    Parameters
    ----------
    strings : iterable of str
        Public value strings whose pieces make the vocabulary.
    keys : iterable of str, default=()
        Column names, each one whole token.
    whole : iterable of str, default=()
        Value strings that are one token each (:meth:`encode_value`).
    n_bins : int, default=0
        Number of bin tokens ``"<bin:k>"`` (:meth:`bin_token`), shared by
        the numeric columns: the ``k``-th bin of any numeric column.

    Attributes
    ----------
    tokens : list of str
        Token of every id: ``SPECIALS`` first, then the keys (as
        ``"<key:name>"``), then the pieces, sorted.
    n_tokens : int

    Examples
    --------
    >>> vocab = WordVocabulary(["42"], keys=["age"])
    >>> vocab.encode_text("24"), vocab.encode_key("age")
    ([6, 7], [5])
    """

    def __init__(self, strings: Iterable[str], keys: Iterable[str] = (),
                 whole: Iterable[str] = (), n_bins: int = 0) -> None:
        pieces = {piece for text in strings for piece in split_words(text)}
        whole = {str(text) for text in whole}
        key_tokens = sorted({self._key_token(k) for k in keys})
        bin_tokens = [f"<bin:{k}>" for k in range(n_bins)]
        self.tokens = list(SPECIALS) + key_tokens + bin_tokens + sorted(pieces | whole)
        self._ids = {token: i for i, token in enumerate(self.tokens)}
        self._whole = whole

    @staticmethod
    def _key_token(key: str) -> str:
        return f"<key:{key}>"

    def encode_key(self, key: str) -> list[int]:
        """The one token of a column name.

        Raises
        ------
        ValueError
            If the name was not given to the vocabulary.
        """
        token = self._key_token(key)
        if token not in self._ids:
            raise ValueError(f"column {key!r} is not a key of the vocabulary.")
        return [self._ids[token]]

    @property
    def n_tokens(self) -> int:
        """Number of tokens."""
        return len(self.tokens)

    def special(self, name: str) -> int:
        """Id of a special token (one of ``SPECIALS``)."""
        if name not in SPECIALS:
            raise ValueError(f"name must be one of {SPECIALS}, got {name!r}.")
        return SPECIALS.index(name)

    def bin_token(self, k: int) -> int:
        """Id of the token of bin ``k`` (shared by the numeric columns)."""
        return self._ids[f"<bin:{int(k)}>"]

    def encode_value(self, text: str) -> list[int]:
        """One token for a string given as ``whole``, else its pieces (:meth:`encode_text`)."""
        if text in self._whole:
            return [self._ids[text]]
        return self.encode_text(text)

    def encode_text(self, text: str) -> list[int]:
        """Ids of the pieces of a string.

        Raises
        ------
        ValueError
            If a piece is not in the vocabulary (only public strings are).
        """
        ids = []
        for piece in split_words(text):
            if piece not in self._ids:
                raise ValueError("a string holds a word piece outside the vocabulary, which "
                                 "is built from the public domain and pseudo table only.")
            ids.append(self._ids[piece])
        return ids

    def render(self, ids: Iterable[int]) -> str:
        """The text of a token sequence (specials as the template writes them)."""
        return "".join(self._text_of(self.tokens[i]) for i in ids)

    @staticmethod
    def _text_of(token: str) -> str:
        if token in _SPECIAL_TEXT:
            return _SPECIAL_TEXT[token]
        if token.startswith("<key:") and token.endswith(">"):
            return token[5:-1]
        return token


class RowText:
    """The template of one table: key and value token sequences, in a fixed order.

    Parameters
    ----------
    keys : sequence of str
        Column names as written in the text, in the table's column order.
    values : sequence of sequence of str
        ``values[j][k]``: the string of code ``k`` of column ``j``
        (distinct within a column).
    order : sequence of int
        The column order of the text (a permutation of the columns).
    vocabulary : WordVocabulary
        Must hold every piece of ``keys`` and ``values``.
    value_tokens : list of list of list of int, optional
        Explicit token ids of every value (e.g. shared bin tokens for
        numeric columns); by default ``vocabulary.encode_value`` of the
        strings.

    Attributes
    ----------
    key_tokens : list of list of int
        Per column.
    value_tokens : list of list of list of int
        Per column, per code.
    max_length : int
        Longest row, ``<bos>`` and ``<eos>`` included.
    """

    def __init__(self, keys: Sequence[str], values: Sequence[Sequence[str]],
                 order: Sequence[int], vocabulary: WordVocabulary,
                 value_tokens: Sequence[Sequence[Sequence[int]]] | None = None) -> None:
        order = [int(j) for j in order]
        if sorted(order) != list(range(len(keys))) or len(values) != len(keys):
            raise ValueError("order must be a permutation of the columns.")
        for strings in values:
            if len(set(strings)) != len(strings):
                raise ValueError("value strings must be distinct within a column.")
        self.keys = [str(k) for k in keys]
        self.values = [[str(v) for v in column] for column in values]
        self.order = order
        self.vocabulary = vocabulary
        self.key_tokens = [vocabulary.encode_key(k) for k in self.keys]
        if value_tokens is None:
            value_tokens = [[vocabulary.encode_value(v) for v in column]
                            for column in self.values]
        self.value_tokens = [[[int(t) for t in seq] for seq in column]
                             for column in value_tokens]
        for column, strings in zip(self.value_tokens, self.values):
            if len(column) != len(strings) or len(set(map(tuple, column))) != len(column):
                raise ValueError("value_tokens must give distinct sequences, one per value.")
        self.max_length = 1 + sum(len(self.key_tokens[j]) + 2
                                  + max(len(t) for t in self.value_tokens[j])
                                  for j in order)

    @property
    def n_columns(self) -> int:
        """Number of columns."""
        return len(self.keys)

    def field_tokens(self, column: int, code: int, last: bool) -> tuple[list[int], list[int]]:
        """Tokens and token types of one field ``key is value`` and its terminator."""
        vocab = self.vocabulary
        key, value = self.key_tokens[column], self.value_tokens[column][code]
        end = vocab.special("<eos>" if last else "<sep>")
        tokens = key + [vocab.special("<is>")] + value + [end]
        types = [KEY] * len(key) + [OTHER_TOKEN] + [VALUE] * len(value) + [OTHER_TOKEN]
        return tokens, types

    def prefix_tokens(self, codes_in_order: Sequence[int]) -> list[int]:
        """``<bos>`` and the fields of the first columns of the order (a prompt)."""
        tokens = [self.vocabulary.special("<bos>")]
        for slot, code in enumerate(codes_in_order):
            field, _ = self.field_tokens(self.order[slot], int(code),
                                         slot == self.n_columns - 1)
            tokens += field
        return tokens

    def encode(self, codes: np.ndarray, orders: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Token sequences of encoded rows, padded.

        Parameters
        ----------
        codes : ndarray of shape (n_rows, n_columns), int
            In the table's column order.
        orders : ndarray of shape (n_rows, n_columns), int, optional
            A field order per row (each a permutation of the columns, the
            last field ending with ``<eos>``); ``order`` by default.

        Returns
        -------
        tokens : ndarray of shape (n_rows, max_length), int64
            ``<bos>``, the fields in ``order``, ``<eos>``, then ``<pad>``.
        types : ndarray of shape (n_rows, max_length), int8
            ``KEY``, ``VALUE`` or ``OTHER_TOKEN`` (padding and
            ``<bos>`` included; see ``lengths``).
        lengths : ndarray of shape (n_rows,), int64
        """
        codes = self._check_codes(codes)
        tokens = np.full((len(codes), self.max_length), self.vocabulary.special("<pad>"),
                         dtype=np.int64)
        types = np.zeros(tokens.shape, dtype=np.int8)
        tokens[:, 0] = self.vocabulary.special("<bos>")
        lengths = np.ones(len(codes), dtype=np.int64)
        if orders is None:
            orders = np.broadcast_to(np.asarray(self.order, np.int64), codes.shape)
        last = self.n_columns - 1
        for slot in range(self.n_columns):
            for column in np.unique(orders[:, slot]):
                writing = orders[:, slot] == column
                fields = [self.field_tokens(column, k, slot == last)
                          for k in range(len(self.values[column]))]
                for code in np.unique(codes[writing, column]):
                    rows = np.flatnonzero(writing & (codes[:, column] == code))
                    field, kinds = fields[code]
                    span = lengths[rows][:, None] + np.arange(len(field))
                    tokens[rows[:, None], span] = field
                    types[rows[:, None], span] = kinds
                    lengths[rows] += len(field)
        return tokens, types, lengths

    def to_text(self, codes: np.ndarray) -> list[str]:
        """The rows as text, e.g. ``"income is >50K, age is 32"``."""
        codes = self._check_codes(codes)
        return [", ".join(f"{self.keys[j]} is {self.values[j][row[j]]}" for j in self.order)
                for row in codes]

    def parse(self, texts: Iterable[str]) -> np.ndarray:
        """Codes of rows written by :meth:`to_text` (the inverse map).

        Values may contain commas, spaces or the word "is": each field is
        matched against the column's known strings followed by the next
        field's key (or the end of the text).

        Returns
        -------
        codes : ndarray of shape (n_rows, n_columns), int64

        Raises
        ------
        ValueError
            If a text does not follow the template (the message names the
            column, never the text).
        """
        rows = [self._parse_one(text) for text in texts]
        return np.array(rows, dtype=np.int64).reshape(len(rows), self.n_columns)

    def _parse_one(self, text: str) -> list[int]:
        found = self._parse_from(text, 0)
        if found is None:
            raise ValueError("a text does not follow the template of the columns "
                             f"{[self.keys[j] for j in self.order]}.")
        codes = [0] * self.n_columns
        for slot, code in enumerate(found):
            codes[self.order[slot]] = code
        return codes

    def _parse_from(self, rest: str, slot: int) -> list[int] | None:
        """Codes of the fields from ``slot`` on (in order), or None; backtracks."""
        column = self.order[slot]
        head = self.keys[column] + " is "
        if not rest.startswith(head):
            return None
        rest = rest[len(head):]
        if slot == self.n_columns - 1:
            strings = self.values[column]
            return [strings.index(rest)] if rest in strings else None
        follow = ", " + self.keys[self.order[slot + 1]] + " is "
        for code, value in enumerate(self.values[column]):
            if rest.startswith(value + follow):
                tail = self._parse_from(rest[len(value) + 2:], slot + 1)
                if tail is not None:
                    return [code] + tail
        return None

    def _check_codes(self, codes: np.ndarray) -> np.ndarray:
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != self.n_columns:
            raise ValueError(f"codes must have shape (n_rows, {self.n_columns}).")
        codes = codes.astype(np.int64, copy=False)
        sizes = np.array([len(v) for v in self.values])
        if codes.size and (codes.min() < 0 or np.any(codes >= sizes)):
            raise ValueError("codes must lie in 0..size-1 in every column.")
        return codes


def render_public_value(value) -> str:
    """String of a raw value of a public table (numbers with 4 significant digits)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "NaN"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if float(value).is_integer() and abs(value) < 1e15:
            return str(int(value))
        return format_number(value, 4)
    return str(value)


def public_table_text(frame: pd.DataFrame) -> tuple[list[str], list[list[str]], np.ndarray]:
    """Keys, per-column value strings and codes of a public table, as rendered text.

    Parameters
    ----------
    frame : DataFrame
        A public table (any columns); read freely, it is public.

    Returns
    -------
    keys : list of str
    values : list of list of str
        The distinct rendered values of every column.
    codes : ndarray of shape (n_rows, n_columns), int64
        Index of every cell's string in its column's list.
    """
    keys = [str(c) for c in frame.columns]
    values, codes = [], np.empty(frame.shape, dtype=np.int64)
    for j, column in enumerate(frame.columns):
        rendered = [render_public_value(v) for v in frame[column].to_numpy(dtype=object)]
        strings, index = np.unique(np.array(rendered, dtype=object), return_inverse=True)
        values.append([str(s) for s in strings])
        codes[:, j] = index.ravel()
    return keys, values, codes
