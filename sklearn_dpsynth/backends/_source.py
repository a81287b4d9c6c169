"""The source interface: a private table before it is encoded.

Everything that touches the private rows before encoding goes through a
:class:`TableSource`: its schema (column names and modelled dtypes, never
values), the exact histograms that private domain learning releases through
its mechanisms (counts of present values over public grids, present values
and their counts), the kind histograms of text and datetime columns, and
encoding into an :class:`~sklearn_dpsynth.backends.EncodedTable`.  The
estimators and domain learning see only this interface; which container a
table is held in is decided once, by
:func:`~sklearn_dpsynth.backends.open_source`.

Privacy: a source's methods return exact counts (sensitivity 1 under
add/remove-one-row neighbours) that the callers release only through a
mechanism of the ledger; the schema is public; an error a source raises
names columns or the container, never values or row counts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from .._column_kinds import (columns_to_measure, engine_dtypes, is_text,
                             naive_datetime_columns, read_engine_kinds)
from .._input import InputForm
from ..domain import Domain
from ._table import EncodedTable

__all__ = ["TableSource"]


class TableSource(ABC):
    """A private table before encoding, read only through exact counts.

    Subclasses implement :attr:`columns`, :meth:`schema_frame`,
    :meth:`range_counts_many`, :meth:`category_counts_many` and
    :meth:`encode`.  A source whose schema has text columns (whose kind is
    declared or chosen privately, as in memory), or undeclared datetime
    columns, also implements the kind hooks (:meth:`text_columns`,
    :meth:`untyped_columns`, :meth:`read_by_kinds`,
    :meth:`kind_counts_many`); without them its text columns must be
    declared, as categories (:meth:`read_by_kinds` refuses any other kind).
    ``docs/contributing.rst`` ("Adding a backend") lists everything a new
    backend touches.

    No method may raise an error, or return anything but exact counts,
    that depends on the rows: messages name columns or the container only.
    """

    # ------------------------------------------------------------- schema
    @property
    @abstractmethod
    def columns(self) -> list:
        """Column names, in the table's order (public)."""

    @abstractmethod
    def schema_frame(self) -> pd.DataFrame:
        """An empty DataFrame whose columns carry the modelled pandas dtypes.

        The dtypes are schema, not data: domain learning reads a column's
        kind (numeric, integer, datetime, categorical) and whether it can
        hold a missing value from them.  Text columns read by kind
        (:meth:`read_by_kinds`) carry the dtype of that kind.

        Returns
        -------
        pandas.DataFrame
            With :attr:`columns` and no rows.
        """

    def input_form(self) -> InputForm:
        """What ``sample`` gives back: the columns and modelled dtypes, as a DataFrame.

        Returns
        -------
        InputForm
        """
        return InputForm(self.columns, list(self.schema_frame().dtypes), True)

    def rows_in_memory(self) -> pd.DataFrame | None:
        """The rows as a DataFrame, for ``preprocessing="non-private"`` only
        (which reads exact bounds and category lists); None for a source
        that does not hold its rows in memory (the default)."""
        return None

    # -------------------------------------------------------------- kinds
    def text_columns(self) -> list:
        """Columns held as text that may be read as numbers or dates: by default
        those of a text dtype in :meth:`schema_frame` (object or a pandas
        string), so that a declaration reading one as numbers or dates reaches
        :meth:`read_by_kinds` (which refuses it by default) instead of being
        ignored."""
        schema = self.schema_frame()
        return [name for name in self.columns if is_text(schema[name].dtype)]

    def wall_clock_columns(self) -> list:
        """Datetime columns of no time zone (wall clocks, read as UTC): by
        default those of a naive ``datetime64`` dtype in :meth:`schema_frame`.
        A declared ``tz`` on one is refused (schema only), as in memory."""
        return naive_datetime_columns(dict(self.schema_frame().dtypes.items()))

    def untyped_columns(self) -> list:
        """Text columns, whose kinds are declared or chosen privately: by default
        every one of :meth:`text_columns`, as in memory (text carries no public
        kind, whatever the engine calls its type).  A source without
        :meth:`kind_counts_many` then asks for them to be declared."""
        return self.text_columns()

    def read_by_kinds(self, kinds: dict) -> None:
        """Read text columns as numbers or dates: ``{column: (ColumnKind, strict)}``
        (only ever :meth:`text_columns`; text read as categories stays text).

        Raises
        ------
        ValueError
            By default, naming the columns asked to be read as numbers, dates
            or durations: this source reads no text so.
        """
        reading = [name for name, (kind, _) in kinds.items() if kind.kind != "category"]
        if reading:
            raise ValueError(f"columns {reading}: a {type(self).__name__} cannot read text as "
                             "numbers, dates or durations; declare them as categories or hold "
                             "them in a typed column.")

    def kind_counts_many(self, zones: dict) -> dict:
        """Exact kind histograms (``sklearn_dpsynth._column_kinds``) of the columns
        ``{column: time zone or None}``: of :meth:`untyped_columns` and of
        undeclared datetime columns (their units).

        Raises
        ------
        ValueError
            By default, naming the columns: declare their kinds and units.
        """
        raise ValueError(f"columns {list(zones)}: a {type(self).__name__} cannot measure "
                         "column kinds or datetime units; declare them with domain= (e.g. "
                         "{'kind': 'datetime', 'unit': 'day'}).")

    def columns_to_measure(self, declared: Mapping[Hashable, Any]) -> list:
        """Columns whose kind or datetime unit is learned privately (public facts only).

        Parameters
        ----------
        declared : mapping
            The domain declaration.

        Returns
        -------
        list
        """
        return columns_to_measure(engine_dtypes(self), declared)

    def read_column_kinds(self, declared: Mapping[Hashable, Any], *, budget: Any,
                          rng: np.random.Generator | None,
                          preprocessing: str = "private") -> dict:
        """Read the columns by their declared or privately chosen kinds, from now on.

        Spends ``budget`` (the ``"column kinds"`` share, or None) on the
        noisy kind histograms of :meth:`columns_to_measure`; afterwards
        :meth:`schema_frame` carries the dtypes of the kinds read.

        Parameters
        ----------
        declared : mapping
            The domain declaration.
        budget : LedgerShare or None
        rng : numpy.random.Generator or None
        preprocessing : str, default="private"

        Returns
        -------
        dict
            Column name -> ``ColumnKind``.
        """
        return read_engine_kinds(self, declared, budget=budget, rng=rng,
                                 preprocessing=preprocessing)

    # ----------------------------------------------------- domain learning
    @abstractmethod
    def range_counts_many(self, requests: Sequence[tuple[Hashable, np.ndarray]]
                          ) -> list[np.ndarray]:
        """Exact counts of the present values of columns in the cells of public cuts.

        Parameters
        ----------
        requests : sequence of (column, cuts)
            ``cuts`` is a sorted float array; cell ``i`` is
            ``[cuts[i-1], cuts[i])`` (as ``searchsorted(cuts, v,
            side="right")``), ``len(cuts) + 1`` cells.  A column is read as
            a number: datetimes in seconds since 1970-01-01 UTC, durations
            in seconds; missing values (and NaN) are not counted.

        Returns
        -------
        list of ndarray of float
            One histogram per request, in order.
        """

    def range_counts(self, name: Hashable, cuts: np.ndarray) -> np.ndarray:
        """:meth:`range_counts_many` of one column."""
        return self.range_counts_many([(name, cuts)])[0]

    @abstractmethod
    def category_counts_many(self, names: Sequence[Hashable]
                             ) -> list[tuple[list, np.ndarray]]:
        """Present values of columns and their exact counts.

        Parameters
        ----------
        names : sequence of hashable
            Columns.

        Returns
        -------
        list of (values, counts)
            Per column, its distinct present values in order of first
            appearance (the order of ``pandas.Series.value_counts(sort=False)``,
            so that a seeded fit is the same on every backend) and their
            counts as floats.
        """

    def category_counts(self, name: Hashable) -> tuple[list, np.ndarray]:
        """:meth:`category_counts_many` of one column."""
        return self.category_counts_many([name])[0]

    # ------------------------------------------------------------ encoding
    @abstractmethod
    def encode(self, domain: Domain) -> EncodedTable:
        """The table as codes on a complete (public) domain.

        Parameters
        ----------
        domain : Domain
            With this source's columns, in its order.

        Returns
        -------
        EncodedTable
            The same codes as ``domain.encode`` of the rows in memory.

        Raises
        ------
        ValueError
            Naming a column whose values the domain cannot encode (never the
            values, nor how many).
        """
