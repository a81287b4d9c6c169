"""Which source holds a table: the one dispatch on the container a caller passes."""

from __future__ import annotations

from typing import Any, Callable

from ._memory import InMemorySource
from ._source import TableSource

__all__ = ["open_source", "register_source"]

#: ``(accepts, opener)`` of every registered backend, in registration order.
_OPENERS: list[tuple[Callable[[Any], bool], Callable[[Any], TableSource]]] = []


def register_source(accepts: Callable[[Any], bool],
                    opener: Callable[[Any], TableSource]) -> None:
    """Register a backend: :func:`~sklearn_dpsynth.backends.open_source` gives
    ``opener(X)`` for every ``X`` that ``accepts(X)`` is true of.

    A backend calls this once, when its module is imported; the built-in
    DuckDB and Spark backends register themselves so.  Backends are tried
    in registration order; the in-memory source takes whatever none
    accepts.

    Parameters
    ----------
    accepts : callable
        ``accepts(X) -> bool`` from the container's type alone (never its
        rows), e.g. ``lambda X: isinstance(X, MyTable)``.
    opener : callable
        ``opener(X) -> TableSource``; its errors name the container, never
        values.
    """
    if not (callable(accepts) and callable(opener)):
        raise TypeError("register_source takes two callables: accepts(X) -> bool and "
                        "opener(X) -> TableSource.")
    _OPENERS.append((accepts, opener))


def open_source(X: Any) -> TableSource:
    """The :class:`~sklearn_dpsynth.backends.TableSource` of a private table.

    Parameters
    ----------
    X : TableSource, registered container, pandas.DataFrame or array-like
        ``X`` itself when it is a source; else the source of the first
        registered backend that accepts it (a path or glob of Parquet/CSV
        files or a DuckDB relation, a pyspark DataFrame); else an
        :class:`~sklearn_dpsynth.backends.InMemorySource`.

    Returns
    -------
    TableSource

    Raises
    ------
    TypeError, ValueError
        From the backend's opener (e.g. sparse input, a path DuckDB
        cannot read); naming the container, never values.
    """
    if isinstance(X, TableSource):
        return X
    for accepts, opener in _OPENERS:
        if accepts(X):
            return opener(X)
    return InMemorySource(X)
