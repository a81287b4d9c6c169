"""Public domains: how each column maps to integer codes and back.

A :class:`Domain` is an ordered collection of :class:`ColumnSpec`, one per
column.  It is the *public* description of the table that every synthesizer
models: a column is either

* ``"codes"`` -- already-encoded integers ``0..k-1`` (the format of the
  ``adult-domain.json`` files), declared as an ``int`` ``k``;
* ``"categorical"`` -- a list of categories, declared as a ``list``;
* ``"numeric"`` -- a number with public bounds, declared as a ``(low, high)``
  tuple and cut into bins (uniform by default, or explicit ``edges``); an
  integer column whose range holds at most ``INTEGER_RESOLUTION_MAX`` (100)
  integers gets one code per integer instead, and declared ``points`` (such
  as 0 in a zero-inflated amount) get codes of their own.

Every spec may also reserve a code for missing values (``missing=True``) and
a categorical spec may reserve an ``"other"`` code for values outside its
list (used when categories are learned privately and rare ones merged).

The package's modules hold its concerns: ``_specs`` (:class:`ColumnSpec`:
codes, encoding, decoding), ``_declaration`` (reading a user's entry for a
column), ``_edges`` (bin edges of numeric columns), ``_datetimes`` (datetime
and duration columns: seconds, zones, calendar units) and ``_core``
(:class:`Domain`).  Import every name from ``sklearn_dpsynth.domain``.

Nothing here looks at data: a domain is either declared by the user, learned
under differential privacy, or read from data with a
:class:`~sklearn_dpsynth.exceptions.PrivacyWarning` (see
:mod:`sklearn_dpsynth.preprocessing`).
"""

from ._core import Domain
from ._datetimes import (DATETIME_UNITS, MAX_UNIT_BINS, datetimes_as_seconds, snap_seconds,
                         unit_edges)
from ._declaration import DECLARED_KINDS, declared_kind, is_kind_only, spec_from_declaration
from ._edges import (INTEGER_RESOLUTION_MAX, LOG_SCALE_SPAN, is_per_integer, numeric_edges,
                     numeric_scale, zero_point)
from ._specs import BIN_VALUES, OTHER, ColumnSpec, code_dtype

__all__ = ["ColumnSpec", "Domain", "OTHER", "BIN_VALUES", "INTEGER_RESOLUTION_MAX",
           "LOG_SCALE_SPAN", "numeric_edges", "numeric_scale", "zero_point", "unit_edges",
           "DECLARED_KINDS", "DATETIME_UNITS", "declared_kind", "spec_from_declaration",
           "is_kind_only", "code_dtype", "snap_seconds", "MAX_UNIT_BINS", "datetimes_as_seconds",
           "is_per_integer"]
