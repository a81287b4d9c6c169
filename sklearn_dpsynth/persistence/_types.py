"""The library's registry of persisted types: the only classes a model file can name.

A model file names classes by their short name (``"MSTSynthesizer"``,
``"Domain"``); :func:`persisted_types` maps those names to classes of this
library, built from code only: the method registry's installed estimators
(their own ``_persisted_state_`` declarations say which fitted attributes
they hold), the pipeline and the library's internal value classes listed
below.  Loading never imports a module because a file names it.

Estimators are stored as their constructor parameters plus the fitted
attributes their classes declare (``_persisted_state_``, collected along
the class hierarchy); value classes as the attributes listed here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ..registry import available_methods, get_method

__all__ = ["ValueType", "persisted_types", "fitted_attributes", "is_estimator"]


@dataclass(frozen=True)
class ValueType:
    """A value class of the library stored as a fixed list of attributes.

    Attributes
    ----------
    cls : type
    attributes : tuple of str
        Every attribute an instance may hold (saving refuses others).
    caches : tuple of str
        Attributes saved as None (recomputed on use).
    """

    cls: type
    attributes: tuple[str, ...]
    caches: tuple[str, ...] = ()


def _core_value_types() -> list[ValueType]:
    from .._column_kinds import ColumnKind
    from .._input import InputForm
    from ..domain import ColumnSpec, Domain
    from ..evolution.generators import (MutationGenerator, PublicBootstrapGenerator,
                                        SynthesizerGenerator, UniformGenerator)
    from ..marginal.compression import DomainCompression
    from ..pgm.domain import ModelDomain
    from ..pgm.junction_tree import JunctionTree
    from ..pgm.model import GraphicalModel
    from ..privacy import LedgerEntry, PrivacyLedger
    from ..public.base import WeightedRecords

    return [
        ValueType(InputForm, ("columns", "dtypes", "is_frame")),
        ValueType(Domain, ("specs",)),
        ValueType(ColumnSpec, ("name", "kind", "n_codes", "categories", "edges", "points",
                               "integer", "missing", "other", "clip", "value_type", "unit",
                               "tz", "_lookup"),
                  caches=("_lookup",)),
        ValueType(ColumnKind, ("kind", "unit", "tz")),
        ValueType(PrivacyLedger, ("epsilon", "delta", "entries")),
        ValueType(LedgerEntry, ("target", "mechanism", "rho", "delta", "sensitivity",
                                "noise_scale", "details", "rdp_orders", "rdp_values")),
        ValueType(DomainCompression, ("original_sizes", "sizes", "mappings", "group_sizes",
                                      "_members", "_starts")),
        ValueType(ModelDomain, ("attributes", "shape", "_position")),
        ValueType(JunctionTree, ("domain", "input_cliques", "cliques", "edges", "order",
                                 "parent", "_neighbors", "_rank", "_cells", "_message_plan",
                                 "_separator_plan"),
                  caches=("_message_plan", "_separator_plan")),
        ValueType(GraphicalModel, ("domain", "tree", "cliques", "total", "_tables", "_beliefs"),
                  caches=("_beliefs",)),
        ValueType(WeightedRecords, ("codes", "probabilities", "smoothing", "base")),
        ValueType(MutationGenerator, ("sizes", "n_variations", "start", "end", "power",
                                      "calls")),
        ValueType(UniformGenerator, ("sizes", "n_resample")),
        ValueType(PublicBootstrapGenerator, ("public", "sizes", "n_resample", "marginals")),
        ValueType(SynthesizerGenerator, ("synthesizer", "sizes", "n_resample")),
    ]


def _neural_value_types() -> list[ValueType]:
    from ..neural.constrained import RowAutomaton
    from ..neural.layout import FieldLayout, PlainLayout
    from ..neural.text import RowText, WordVocabulary
    from ..neural.vocabulary import LevelVocabulary

    return [
        ValueType(LevelVocabulary, ("sizes", "offsets", "n_value_tokens", "n_tokens",
                                    "column_of_token", "_specials")),
        ValueType(PlainLayout, ("vocabulary",)),
        ValueType(FieldLayout, ("vocabulary",)),
        ValueType(WordVocabulary, ("tokens", "_ids", "_whole")),
        ValueType(RowText, ("vocabulary", "order", "keys", "values", "key_tokens",
                            "value_tokens", "max_length")),
        ValueType(RowAutomaton, ("n_columns", "start", "final", "allowed", "next_state",
                                 "emit_code", "state_column")),
    ]


def _estimator_classes(methods: tuple[str, ...]) -> list[type]:
    from ..pipeline import SynthesizerPipeline
    from ..preprocessing import TableDiscretizer

    return [SynthesizerPipeline, TableDiscretizer, *(get_method(name) for name in methods)]


def _neural_installed() -> bool:
    return bool(available_methods(family="neural", installed_only=True))


def persisted_types() -> dict[str, type | ValueType]:
    """Every class a model file may name, by short name.

    Follows the method registry: a method registered later (by code, never
    by a file) is persisted too.

    Returns
    -------
    dict
        ``name -> estimator class`` or ``name -> ValueType``.
    """
    return _persisted_types(tuple(available_methods(installed_only=True)))


@functools.lru_cache(maxsize=4)
def _persisted_types(methods: tuple[str, ...]) -> dict[str, type | ValueType]:
    table: dict[str, type | ValueType] = {}
    values = _core_value_types() + (_neural_value_types() if _neural_installed() else [])
    entries = [(value.cls.__name__, value) for value in values]
    entries += [(cls.__name__, cls) for cls in _estimator_classes(methods)]
    for name, entry in entries:
        if name in table and table[name] is not entry:
            raise RuntimeError(f"two persisted types are named {name!r}")
        table[name] = entry
    return table


def value_type_of(obj: Any, table: dict | None = None) -> ValueType | None:
    """The registered value type of ``obj`` (exact class), or None."""
    entry = (table or persisted_types()).get(type(obj).__name__)
    return entry if isinstance(entry, ValueType) and entry.cls is type(obj) else None


def is_estimator(obj: Any, table: dict | None = None) -> bool:
    """Whether ``obj`` is an instance of a persisted estimator class (exact class)."""
    entry = (table or persisted_types()).get(type(obj).__name__)
    return isinstance(entry, type) and entry is type(obj)


def fitted_attributes(cls: type) -> tuple[str, ...]:
    """The fitted attributes ``cls`` declares (``_persisted_state_`` along its MRO)."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        for name in vars(klass).get("_persisted_state_", ()):
            if name not in names:
                names.append(name)
    return tuple(names)
