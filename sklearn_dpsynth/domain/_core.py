"""The table's public domain: :class:`~sklearn_dpsynth.Domain`, one
:class:`~sklearn_dpsynth.ColumnSpec` per column."""

from __future__ import annotations

from typing import Any, Hashable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from ._declaration import spec_from_declaration
from ._specs import OTHER, ColumnSpec


def _decoded_column(spec: ColumnSpec, codes: np.ndarray, rng: np.random.Generator | None,
                    bin_value: str) -> Any:
    """:meth:`ColumnSpec.decode` of one column, for a DataFrame.

    A categorical column whose labels are all strings is built directly as
    pandas' string array by one ``take`` of its labels (what the DataFrame
    would infer from the object array, without a pass over a million
    Python strings); anything else is :meth:`ColumnSpec.decode`.
    """
    labels = list(spec.categories) + ([OTHER] if spec.other else []) \
        if spec.kind == "categorical" else []
    if not labels or not all(isinstance(v, str) for v in labels) or not _infers_strings():
        return spec.decode(codes, rng, bin_value)
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size and (codes.min() < 0 or codes.max() >= spec.size):
        raise ValueError(f"column {spec.name!r}: codes outside 0..{spec.size - 1}.")
    if spec.missing:
        is_missing = codes == spec.missing_code
        if is_missing.all():  # pandas infers object for an all-missing column
            return spec.decode(codes, rng, bin_value)
        codes = np.where(is_missing, -1, codes)
    return pd.array(labels, dtype="str").take(codes, allow_fill=True)


def _infers_strings() -> bool:
    """Whether pandas makes a column of Python strings its string dtype."""
    if int(pd.__version__.split(".")[0]) >= 3:  # the default; the option is deprecated
        return True
    try:
        return bool(pd.get_option("future.infer_string"))
    except (KeyError, pd.errors.OptionError):
        return False


def _encode_into(spec: ColumnSpec, series: pd.Series, out: np.ndarray,
                 block_rows: int | None) -> None:
    """Write ``spec.encode_series(series)`` into ``out``, by blocks of ``block_rows``
    rows when given (see :meth:`Domain.encode`)."""
    if block_rows is None or (series.dtype == object and spec.kind != "categorical"):
        out[:] = spec.encode_series(series)
        return
    try:
        for start in range(0, len(series), block_rows):
            out[start:start + block_rows] = spec.encode_series(
                series.iloc[start:start + block_rows])
    except (TypeError, ValueError):
        spec.encode_series(series)  # raises the column's own error
        raise


class Domain:
    """Ordered public domain of a table: one :class:`ColumnSpec` per column.

    Parameters
    ----------
    specs : sequence of ColumnSpec
        In column order.

    Examples
    --------
    >>> dom = Domain.from_declaration({"age": (0, 100), "sex": ["F", "M"], "x": 3},
    ...                               n_bins=10)
    >>> dom.sizes
    [10, 2, 3]
    """

    def __init__(self, specs: Sequence[ColumnSpec]) -> None:
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ValueError("column names in a domain must be unique.")
        self.specs = list(specs)

    @classmethod
    def from_declaration(
        cls,
        declaration: Mapping[Hashable, Any],
        n_bins: int = 32,
        integer_columns: Sequence[Hashable] = (),
    ) -> "Domain":
        """Build a domain from ``{column: entry}`` (see ``spec_from_declaration``).

        Parameters
        ----------
        declaration : mapping
            Column name -> domain entry, in column order.
        n_bins : int, default=32
            Uniform bins for ``(low, high)`` entries.
        integer_columns : sequence, default=()
            Numeric columns whose decoded values are rounded.

        Returns
        -------
        Domain
        """
        integer = set(integer_columns)
        specs = []
        for name, entry in declaration.items():
            spec = spec_from_declaration(name, entry, n_bins, name in integer)
            if spec is None:
                raise ValueError(f"column {name!r}: the entry declares only the kind of its "
                                 "values; a complete domain needs its bounds or categories "
                                 "(fit learns them privately).")
            specs.append(spec)
        return cls(specs)

    @property
    def columns(self) -> list:
        """Column names, in order."""
        return [s.name for s in self.specs]

    @property
    def sizes(self) -> list[int]:
        """Number of codes of every column, in order."""
        return [s.size for s in self.specs]

    @property
    def shape(self) -> tuple[int, ...]:
        """``tuple(sizes)``: the shape of the full contingency table."""
        return tuple(self.sizes)

    def model_domain(
        self, sizes: Sequence[int] | None = None
    ) -> "sklearn_dpsynth.pgm.ModelDomain":
        """The domain in the graphical-model engine's form.

        Attribute names are derived from the column names alone (public):
        ``str(name)`` of every column when these are distinct, otherwise
        ``"c0", "c1", ...`` by position (e.g. for the columns ``1`` and
        ``"1"``).

        Parameters
        ----------
        sizes : sequence of int, default=None
            Number of codes the model gives every column (e.g. after a
            domain compression); :attr:`sizes` when None.

        Returns
        -------
        sklearn_dpsynth.pgm.ModelDomain
        """
        from ..pgm import ModelDomain

        names = [str(c) for c in self.columns]
        if len(set(names)) != len(names):
            names = [f"c{j}" for j in range(len(names))]
        return ModelDomain(tuple(names), tuple(self.sizes if sizes is None else sizes))

    def index(self, column: Hashable) -> int:
        """Position of ``column``; ValueError naming it when unknown."""
        for i, spec in enumerate(self.specs):
            if spec.name == column:
                return i
        raise ValueError(f"unknown column {column!r}; the domain has {self.columns}.")

    def __getitem__(self, column: Hashable) -> ColumnSpec:
        return self.specs[self.index(column)]

    def __iter__(self) -> Iterator[ColumnSpec]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)

    def __repr__(self) -> str:
        parts = ", ".join(f"{s.name!r}: {s.kind}[{s.size}]" for s in self.specs)
        return f"Domain({parts})"

    def encode(self, frame: pd.DataFrame, dtype: Any = np.int64,
               block_rows: int | None = None) -> np.ndarray:
        """Encode a DataFrame whose columns are this domain's, in order.

        Column by column (:meth:`ColumnSpec.encode_series`), so that only
        one column's temporaries are alive at a time; with ``block_rows``,
        one block of rows of a column at a time as well.

        Parameters
        ----------
        frame : pandas.DataFrame
        dtype : numpy integer dtype, default=np.int64
            Dtype of the result; ``code_dtype(max(self.sizes))``
            is the smallest that holds every code.
        block_rows : int, default=None
            Rows encoded at once (None: whole columns).  The codes and the
            errors are the same: an object column of a numeric or datetime
            spec is encoded whole (whether its values are all datetimes is
            decided over the column), and a block that fails re-encodes its
            whole column, so the error is the whole column's.

        Returns
        -------
        codes : ndarray of ``dtype``, shape (n_samples, n_columns)
        """
        dtype = np.dtype(dtype)
        if self.specs and max(self.sizes) - 1 > np.iinfo(dtype).max:
            raise ValueError(f"dtype: {dtype} cannot hold codes up to {max(self.sizes) - 1}.")
        codes = np.empty((len(frame), len(self.specs)), dtype=dtype)
        for j, spec in enumerate(self.specs):
            _encode_into(spec, frame[spec.name], codes[:, j], block_rows)
        return codes

    def decode(
        self,
        codes: np.ndarray,
        rng: np.random.Generator | None = None,
        bin_value: str = "midpoint",
    ) -> pd.DataFrame:
        """Decode integer codes into a DataFrame of values (object/float columns).

        Parameters
        ----------
        codes : ndarray of int, shape (n_samples, n_columns)
        rng : numpy.random.Generator, optional
            For ``bin_value="uniform"``.
        bin_value : {"midpoint", "uniform"}, default="midpoint"
            See :meth:`ColumnSpec.decode`.

        Returns
        -------
        pandas.DataFrame
        """
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(self.specs):
            raise ValueError(f"codes must have shape (n, {len(self.specs)}).")
        return pd.DataFrame({spec.name: _decoded_column(spec, codes[:, j], rng, bin_value)
                             for j, spec in enumerate(self.specs)},
                            columns=pd.Index(self.columns, dtype=object))

    def log_widths(self, codes: np.ndarray) -> np.ndarray:
        """Log of the measure of every encoded row: the sum of its codes' log-widths.

        ``log P(row's codes) - log_widths(codes)`` is the row's log-density
        in the input's units (see :attr:`ColumnSpec.log_widths`).

        Parameters
        ----------
        codes : ndarray of int, shape (n_samples, n_columns)

        Returns
        -------
        ndarray of float, shape (n_samples,)
        """
        codes = np.asarray(codes, dtype=np.int64)
        total = np.zeros(codes.shape[0])
        for j, spec in enumerate(self.specs):
            total += spec.log_widths[codes[:, j]]
        return total

    def to_dict(self) -> dict:
        """JSON-friendly declaration of every column."""
        return {s.name: s.to_dict() for s in self.specs}
