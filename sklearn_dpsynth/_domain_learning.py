"""Completing a table's domain: declared, learned privately, or read non-privately.

Three ways to get a column's domain, in order of preference:

1. **Declared** (``domain=``): public, costs nothing.
2. **Learned privately** (the default, ``preprocessing="private"``): each
   undeclared column gets an equal share of the zCDP budget ``rho`` (and
   each categorical column an equal share of ``delta``), each access
   recorded in the ledger:

   * numeric bounds: one Gaussian-noised histogram (L2 sensitivity 1 under
     add/remove-one-row) over the cells of a fixed, data-independent grid:
     0 and ``±m·10^k`` for numbers, calendar years for datetimes.  Its
     noisy counts are then read, at no further cost, at two resolutions:
     single cells, and blocks of cells (a decade of numbers, a decade of
     years).  A cell carries *signal* when its noisy count exceeds four
     noise standard deviations; a block carries signal as a whole when the
     summed noisy count of its cells *without* signal exceeds four of that
     sum's standard deviations (``sigma·sqrt(m)`` for ``m`` cells), i.e.
     when it holds mass that no single cell shows (on small tables, mass
     spread over a decade).  A false positive among the few hundred cells
     and blocks has probability about 1e-2.  The bounds are the outer
     edges of the outermost cells or blocks with signal;
     values outside are clipped into that range.  When nothing carries
     signal the bounds are **not** chosen from noise: they fall back to the
     whole grid (nothing can be ruled out) and a
     :class:`~sklearn_dpsynth.exceptions.DomainInferenceWarning` names the
     column.  The same warning names a column whose signal lies in a single
     cell (e.g. ``[0, 0.001]`` for a zero-inflated amount whose non-zero
     values are all below the noise): everything outside that cell is
     clipped into it;
   * categorical supports: a thresholded Gaussian histogram over the
     observed values (Gaussian partition selection): a value is kept when
     its noisy count exceeds ``1 + sigma * z`` where ``z`` is the
     ``1 - delta_col`` normal quantile, so a value present in only one of
     two neighbouring tables is released with probability at most
     ``delta_col``.  At most ``max_categories`` values are kept (largest
     noisy counts); every other value maps to an ``"<other>"`` code.  When
     no value is kept the column is named in the same warning.

   The warning and everything else computed from the noisy counts is
   post-processing: it costs nothing.
3. **Read from the data** (``preprocessing="non-private"``): bounds and
   category lists are read exactly; a
   :class:`~sklearn_dpsynth.exceptions.PrivacyWarning` names them.

Column *types* (numeric, datetime or categorical; integer or float; bool)
are read from the dtypes: they are schema, not data.  So is the
missing-value code of a learned column: it is reserved whenever the dtype
can hold a missing value (float, datetime, object, string and every
nullable dtype), whether or not the data has one, so that its presence is
never revealed.  Nothing here raises on the *values* of an undeclared
column (an all-missing column is learned like any other), so no exception
tells two neighbouring tables apart.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from ._input import is_datetime
from .domain import ColumnSpec, Domain, _datetimes_as_seconds, spec_from_declaration
from .exceptions import DomainInferenceWarning, PrivacyWarning
from .privacy import LedgerShare, ThresholdedHistogram, gaussian_sigma

__all__ = ["learn_domain", "candidate_grid", "year_grid"]

#: A cell (or block of cells) of a private range histogram carries signal
#: when its noisy count exceeds this many of its noise standard deviations.
_BOUND_THRESHOLD = 4.0

#: Rows factorized at once when a DataFrame's category counts are computed.
_CATEGORY_BLOCK_ROWS = 1 << 18

#: Calendar years whose starts cut the private histogram of a datetime column.
_YEARS = (1900, 2100)
#: Outer edges of the two open-ended year cells (inside datetime64[ns]'s range).
_YEAR_LIMITS = (1700, 2250)


def candidate_grid() -> np.ndarray:
    """The public grid of values that private numeric bounds are chosen from.

    Returns
    -------
    grid : ndarray
        0 and ``±m·10^k`` for ``m`` in {1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9}
        and ``k`` in -3..9, sorted.
    """
    mantissas = np.array([1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9])
    positive = (mantissas[None, :] * 10.0 ** np.arange(-3, 10)[:, None]).ravel()
    return np.unique(np.concatenate([-positive, [0.0], positive]))


def year_grid() -> np.ndarray:
    """Starts of the calendar years 1900..2100 in seconds since 1970-01-01 UTC.

    Returns
    -------
    grid : ndarray
        The public grid that private datetime bounds are chosen from.
    """
    starts = [pd.Timestamp(year=y, month=1, day=1) for y in range(_YEARS[0], _YEARS[1] + 1)]
    return _datetimes_as_seconds(starts)


@dataclass(frozen=True)
class _Grid:
    """Finite cells of a public histogram grid and their coarser blocks."""

    left: np.ndarray
    right: np.ndarray
    block: np.ndarray  # block index of every cell
    cuts: np.ndarray  # the inner cut points (cell i is [cuts[i-1], cuts[i]))

    def cell_of(self, values: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.cuts, values, side="right")


def _numeric_grid() -> _Grid:
    cuts = candidate_grid()
    left = np.concatenate([[cuts[0] * 10.0], cuts])
    right = np.concatenate([cuts, [cuts[-1] * 10.0]])
    # block = (sign, decade of the edge nearer zero); the cells touching 0 alone
    near_zero = np.where(right <= 0, -right, left)
    sign = np.where(right <= 0, -1, 1)
    decade = np.where(near_zero > 0, np.floor(np.log10(np.maximum(near_zero, 1e-300))), -99)
    _, block = np.unique(np.stack([sign, decade], axis=1), axis=0, return_inverse=True)
    return _Grid(left, right, block.ravel(), cuts)


def _datetime_grid() -> _Grid:
    cuts = year_grid()
    limits = _datetimes_as_seconds([pd.Timestamp(year=y, month=1, day=1) for y in _YEAR_LIMITS])
    left = np.concatenate([[limits[0]], cuts])
    right = np.concatenate([cuts, [limits[1]]])
    years = np.arange(_YEARS[0] - 1, _YEARS[1] + 1)  # year of each cell (outer ones apart)
    block = np.concatenate([[0], 1 + (years[1:] - _YEARS[0]) // 10])
    block[-1] = block[-2] + 1
    return _Grid(left, right, block, cuts)


# ------------------------------------------------------------------ budget
@dataclass
class _Budget:
    """Every private access of domain learning goes through here.

    One noisy histogram per numeric or datetime column, one thresholded
    histogram per categorical column, each spending ``rho_per_column``;
    each categorical column also spends ``delta_per_categorical``.
    """

    share: LedgerShare
    rng: np.random.Generator
    rho_per_column: float
    delta_per_categorical: float

    @property
    def sigma(self) -> float:
        return gaussian_sigma(self.rho_per_column)

    def noisy_histogram(self, counts: np.ndarray, target: str) -> np.ndarray:
        """Exact discrete Gaussian noise of scale ``sigma`` on every count (sensitivity 1)."""
        return self.share.gaussian(counts, sigma=self.sigma, rng=self.rng, target=target,
                                    n_cells=counts.size)

    def thresholded_histogram(self, counts: np.ndarray, target: str) -> np.ndarray:
        """Indices of the counts whose noisy value clears the selection threshold.

        :class:`~sklearn_dpsynth.privacy.ThresholdedHistogram`: its delta is
        the discrete Gaussian's tail at the threshold, at most
        ``delta_per_categorical``.
        """
        mechanism = ThresholdedHistogram(self.sigma, self.delta_per_categorical)
        return self.share.release(mechanism, counts, rng=self.rng, target=target)


# ------------------------------------------------------------ column kinds
def column_kind(series: pd.Series) -> str:
    """``"datetime"``, ``"numeric"`` or ``"categorical"``, from the dtype alone."""
    if is_datetime(series.dtype):
        return "datetime"
    if (pd.api.types.is_numeric_dtype(series.dtype)
            and not pd.api.types.is_bool_dtype(series.dtype)):
        return "numeric"
    return "categorical"


def is_integer(series: pd.Series) -> bool:
    """Whether the column's dtype is an integer dtype (numpy or nullable)."""
    return pd.api.types.is_integer_dtype(series.dtype)


def can_hold_missing(series: pd.Series) -> bool:
    """Whether the column's dtype admits missing values (schema, not data)."""
    dtype = series.dtype
    return not (isinstance(dtype, np.dtype) and dtype.kind in "biu")


def as_numbers(series: pd.Series) -> np.ndarray:
    """Values as floats (datetimes in seconds since the epoch); NaN when missing."""
    if is_datetime(series.dtype):
        out = np.full(len(series), np.nan)
        present = series.notna().to_numpy()
        out[present] = _datetimes_as_seconds(series[present])
        return out
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _public_spec(series: pd.Series) -> ColumnSpec | None:
    """Specs known from the dtype alone (booleans)."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return ColumnSpec(series.name, "categorical", categories=[False, True],
                          missing=can_hold_missing(series))
    return None


def _numeric_spec(name: Hashable, series: pd.Series, low: float, high: float,
                  n_bins: int) -> ColumnSpec:
    entry = {"bounds": (low, high), "integer": is_integer(series),
             "missing": can_hold_missing(series), "clip": True}
    return spec_from_declaration(name, entry, n_bins)


# ------------------------------------------------------- private learning
def _range_counts(table: Any, name: Hashable, grid: _Grid) -> np.ndarray:
    """Exact counts of a column's present values in the cells of ``grid``
    (a bincount in memory, a GROUP BY in an engine: the same integers)."""
    return _range_counts_many(table, [(name, grid)])[0]


def _range_counts_many(table: Any, requests: Sequence[tuple[Hashable, _Grid]]
                       ) -> list[np.ndarray]:
    """:func:`_range_counts` of several ``(name, grid)``: one pass in an engine."""
    if isinstance(table, pd.DataFrame):
        out = []
        for name, grid in requests:
            values = as_numbers(table[name])
            cells = grid.cell_of(values[~np.isnan(values)])
            out.append(np.bincount(cells, minlength=grid.left.size).astype(float))
        return out
    if not requests:
        return []
    return table.range_counts_many([(name, grid.cuts) for name, grid in requests])


def _category_counts(table: Any, name: Hashable) -> tuple[list, np.ndarray]:
    """Present values and exact counts, in order of first appearance."""
    return _category_counts_many(table, [name])[0]


def _category_counts_many(table: Any, names: Sequence[Hashable]
                          ) -> list[tuple[list, np.ndarray]]:
    """:func:`_category_counts` of several columns: one pass in an engine."""
    if isinstance(table, pd.DataFrame):
        out = []
        for name in names:
            # value_counts(sort=False) of the values as objects, without an object
            # per row: blocks of rows are factorized (temporaries of a block, not of
            # the column), then their distinct values, in order, give the column's
            # in first-appearance order
            distincts, block_counts = [pd.Series([], dtype=table[name].dtype)], []
            for start in range(0, len(table), _CATEGORY_BLOCK_ROWS):
                row_codes, distinct = pd.factorize(
                    table[name].iloc[start:start + _CATEGORY_BLOCK_ROWS], use_na_sentinel=True)
                block_counts.append(np.bincount(row_codes[row_codes >= 0],
                                                minlength=len(distinct)))
                distincts.append(pd.Series(distinct))
            position, distinct = pd.factorize(pd.concat(distincts, ignore_index=True))
            counts = np.bincount(position, np.concatenate([[]] + block_counts),
                                 minlength=len(distinct))
            out.append((list(pd.Series(distinct).astype(object)), counts.astype(float)))
        return out
    return table.category_counts_many(list(names)) if names else []


def _grid_of(series: pd.Series) -> _Grid:
    """The public grid of a numeric or datetime column."""
    return _datetime_grid() if column_kind(series) == "datetime" else _numeric_grid()


def _private_range(name, series, budget: _Budget, n_bins: int,
                   counts: np.ndarray) -> tuple[ColumnSpec, str]:
    """Bounds from one noisy histogram on a public grid; ``(spec, signal)``.

    ``signal`` is ``"none"`` (the whole-grid fallback), ``"one cell"`` (the
    bounds are a single grid cell) or ``"found"``.
    """
    grid = _grid_of(series)
    noisy = budget.noisy_histogram(counts, target=f"range of {name!r}")
    cells_with_signal = np.flatnonzero(_cells_with_signal(noisy, budget.sigma, grid.block))
    if not cells_with_signal.size:
        low, high, found = grid.left[0], grid.right[-1], "none"
    else:
        first, last = cells_with_signal[0], cells_with_signal[-1]
        low, high = grid.left[first], grid.right[last]
        found = "one cell" if first == last else "found"
    return _numeric_spec(name, series, float(low), float(high), n_bins), found


def _cells_with_signal(noisy: np.ndarray, sigma: float, block: np.ndarray) -> np.ndarray:
    """Cells whose noisy count clears the threshold, and whole blocks whose residue does.

    A block's residue is the noisy mass of its cells that carry no signal
    on their own; its noise has standard deviation ``sigma * sqrt(m)`` for
    ``m`` such cells.  A block whose residue clears the threshold holds
    mass that no single cell shows, somewhere in its range: the whole block
    is kept.
    """
    cell_signal = noisy > _BOUND_THRESHOLD * sigma
    quiet = ~cell_signal
    residue = np.bincount(block, weights=np.where(quiet, noisy, 0.0))
    n_quiet = np.bincount(block, weights=quiet.astype(float))
    block_signal = residue > _BOUND_THRESHOLD * sigma * np.sqrt(np.maximum(n_quiet, 1.0))
    return cell_signal | block_signal[block]


def _private_categories(name, series, budget: _Budget, max_categories: int,
                        observed: tuple[list, np.ndarray]) -> tuple[ColumnSpec, str]:
    """Categories kept by a thresholded histogram; ``(spec, "found" or "none")``.

    ``observed`` holds the present values and their exact counts (observed
    values only: a Categorical's unused categories are not candidates).
    """
    values, counts = observed
    keep = budget.thresholded_histogram(counts, target=f"categories of {name!r}")
    categories = sorted((values[i] for i in keep[:max_categories]), key=str)
    spec = ColumnSpec(name, "categorical", categories=categories, other=True,
                      missing=can_hold_missing(series))
    return spec, "found" if categories else "none"


def _exact_histograms(frame: pd.DataFrame, todo: Sequence[Hashable], table: Any) -> dict:
    """Every exact histogram that private learning of ``todo`` reads, batched:
    one pass over an engine's table for the range histograms and one for the
    category counts (whatever the number of columns).  Nothing is released
    here; each histogram is noised once, by its column's mechanism."""
    categorical = [n for n in todo if column_kind(frame[n]) == "categorical"]
    ranged = [n for n in todo if column_kind(frame[n]) != "categorical"]
    counts = dict(zip(ranged, _range_counts_many(
        table, [(n, _grid_of(frame[n])) for n in ranged])))
    counts.update(zip(categorical, _category_counts_many(table, categorical)))
    return counts


def _learn_privately(frame: pd.DataFrame, todo: Sequence[Hashable], budget: _Budget,
                     n_bins: int, max_categories: int,
                     table: Any) -> tuple[dict, list, list]:
    """Specs of ``todo``, the columns with no signal and ``{column: cell}`` of those
    learned as one grid cell (the cell as text, dates for a datetime column)."""
    specs, no_signal, one_cell = {}, [], {}
    counts = _exact_histograms(frame, todo, table)
    for name in todo:
        series = frame[name]
        if column_kind(series) == "categorical":
            specs[name], found = _private_categories(name, series, budget, max_categories,
                                                     counts[name])
        else:
            specs[name], found = _private_range(name, series, budget, n_bins, counts[name])
        if found == "none":
            no_signal.append(name)
        elif found == "one cell":
            low, high = specs[name].edges[[0, -1]]
            if column_kind(series) == "datetime":
                low, high = (pd.Timestamp(v, unit="s").date() for v in (low, high))
            one_cell[name] = f"[{low:g}, {high:g}]" if isinstance(low, float) else \
                f"[{low}, {high}]"
    return specs, no_signal, one_cell


def _warn_weak_signal(no_signal: list, one_cell: dict, budget: _Budget) -> None:
    """One warning per fit for the columns whose learned domain the noise swamped."""
    parts = []
    if no_signal:
        grid = _numeric_grid()
        parts.append(
            f"private domain inference found no signal above the noise for column(s) "
            f"{no_signal}: their numeric bounds fell back to the whole public grid (e.g. "
            f"[{grid.left[0]:g}, {grid.right[-1]:g}]) and no category was kept (all map to "
            "'<other>'), so their synthetic values carry no information.")
    if one_cell:
        bounds = ", ".join(f"{name!r}: {cell}" for name, cell in one_cell.items())
        parts.append(
            f"private domain inference found signal in a single grid cell only for "
            f"column(s) {list(one_cell)} ({bounds}): any values outside it (e.g. the "
            "non-zero amounts of a zero-inflated column) were below the noise and are "
            "clipped into it, so every synthetic value lies in that cell.")
    if parts:
        warnings.warn(
            " ".join(parts) + f" Each column spent rho={budget.rho_per_column:.3g} of zCDP "
            f"budget (noise standard deviation {budget.sigma:.3g} per count). Declare these "
            "columns with domain= (describe_domain gives an editable starting point from "
            "public knowledge; 'points' gives a point mass such as 0 its own code), or "
            "give more budget or rows.",
            DomainInferenceWarning, stacklevel=4)


# ------------------------------------------------------- non-private reads
def _nonprivate_spec(name, series, n_bins, max_categories) -> ColumnSpec:
    missing = can_hold_missing(series)
    if column_kind(series) != "categorical":
        values = as_numbers(series)
        values = values[~np.isnan(values)]
        low, high = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
        return _numeric_spec(name, series, low, high if high > low else low + 1.0, n_bins)
    counts = series.astype(object).value_counts(dropna=True)
    top = sorted(counts.index[:max_categories], key=str)
    return ColumnSpec(name, "categorical", categories=top,
                      other=len(counts) > max_categories or not top, missing=missing)


def _warn_nonprivate(frame: pd.DataFrame, columns: Sequence[Hashable]) -> None:
    ranged = [c for c in columns if column_kind(frame[c]) != "categorical"]
    categorical = [c for c in columns if c not in set(ranged)]
    leaked = []
    if ranged:
        leaked.append(f"the exact minimum and maximum of {ranged}")
    if categorical:
        leaked.append(f"the exact category lists of {categorical}")
    warnings.warn(
        "preprocessing='non-private': " + " and ".join(leaked)
        + " were read from the private data without privacy protection; the result "
        "is not differentially private. Declare them with domain= to avoid this.",
        PrivacyWarning, stacklevel=4)


# ------------------------------------------------------------------- entry
def _schema(table: Any) -> pd.DataFrame:
    """The table itself for a DataFrame; its (empty) schema frame for an engine
    source, whose column kinds come from the SQL types."""
    return table if isinstance(table, pd.DataFrame) else table.schema_frame()


def learn_domain(
    frame: pd.DataFrame,
    declared: Mapping[Hashable, Any] | None,
    *,
    n_bins: int = 32,
    preprocessing: str = "private",
    budget: LedgerShare | None = None,
    rng: np.random.Generator | None = None,
    max_categories: int = 99,
) -> Domain:
    """Complete a (possibly partial) declared domain for the columns of ``frame``.

    Parameters
    ----------
    frame : pandas.DataFrame or backends.DuckDBSource
        The private table; an engine source is read only through its
        exact histograms (``range_counts_many``, ``category_counts_many``: one pass
        per kind).
    declared : mapping or None
        Public entries ``{column: entry}``; see
        :func:`~sklearn_dpsynth.domain.spec_from_declaration`.
    n_bins : int, default=32
        Uniform bins for numeric columns.
    preprocessing : {"private", "non-private"}, default="private"
        How undeclared columns are learned.
    budget : LedgerShare, optional
        The share of the privacy budget (``ledger.share(rho, delta)``) that
        learning undeclared columns may spend: its ``rho`` is split evenly
        over them and its ``delta`` over the categorical ones.  Required
        when a column is learned privately; it cannot be overspent.
    rng : numpy.random.Generator, optional
        Noise source for private learning.
    max_categories : int, default=99
        Categories kept per learned column; the rest merge into "other".

    Returns
    -------
    Domain
        In the column order of ``frame``.

    Warns
    -----
    DomainInferenceWarning
        Once, naming the privately learned columns whose noisy histogram
        carried no signal (see the module docstring for their fallback) or
        signal in a single grid cell only.
    """
    table, frame = frame, _schema(frame)
    declared = dict(declared or {})
    unknown = [c for c in declared if c not in set(frame.columns)]
    if unknown:
        raise ValueError(f"domain names columns not in X: {unknown}.")
    specs: dict[Hashable, ColumnSpec | None] = {}
    for name in frame.columns:
        series = frame[name]
        if name in declared:
            specs[name] = spec_from_declaration(name, declared[name], n_bins, is_integer(series))
        else:
            specs[name] = _public_spec(series)
    todo = [name for name, spec in specs.items() if spec is None]
    if todo and preprocessing == "non-private":
        if not isinstance(table, pd.DataFrame):
            raise ValueError(f"preprocessing='non-private' reads a table in memory; for "
                             f"{type(table).__name__} input declare columns {todo} with "
                             "domain= or learn them privately.")
        _warn_nonprivate(frame, todo)
        for name in todo:
            specs[name] = _nonprivate_spec(name, frame[name], n_bins, max_categories)
    elif todo:
        if budget is None or rng is None or budget.rho <= 0 or budget.delta <= 0:
            raise ValueError(
                f"columns {todo} have no declared domain: declare them with domain=, "
                "give a privacy budget to learn them, or set preprocessing='non-private'.")
        n_categorical = sum(column_kind(frame[c]) == "categorical" for c in todo)
        spender = _Budget(budget, rng, budget.rho / len(todo),
                          budget.delta / max(n_categorical, 1))
        learned, no_signal, one_cell = _learn_privately(frame, todo, spender, n_bins,
                                                        max_categories, table)
        specs.update(learned)
        _warn_weak_signal(no_signal, one_cell, spender)
    return Domain([specs[name] for name in frame.columns])
