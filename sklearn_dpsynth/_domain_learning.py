"""Completing a table's domain: declared, learned privately, or read non-privately.

Three ways to get a column's domain, in order of preference:

1. **Declared** (``domain=``): public, costs nothing.
2. **Learned privately** (the default, ``preprocessing="private"``): the
   zCDP budget ``rho`` is split over the undeclared columns, a categorical
   column weighing ``_CATEGORICAL_WEIGHT`` (3) numeric or datetime ones (its
   one histogram must clear about seven noise standard deviations where a
   range needs four), and ``delta`` evenly over the categorical columns;
   the split depends on the schema and the declaration only.  Each access
   is recorded in the ledger:

   * numeric bounds: three Gaussian-noised histograms (each of L2
     sensitivity 1 under add/remove-one-row: a row falls in one cell of
     each) on a fixed, data-independent, nested grid -- 0 and ``±m·10^k``
     for numbers, calendar years for datetimes -- spending half, a quarter
     and a quarter of the column's ``rho``:

     1. the **blocks** (a decade of numbers, a decade of years; the cells
        touching 0 alone) locate the mass: scanning from each end, the
        first block whose noisy count, or the noisy count of all blocks
        scanned so far, exceeds four of its noise standard deviations
        (``sigma`` or ``sigma·sqrt(k)``) is where the bound falls.  Nothing
        significant from either end means *no signal*;
     2. the **cells** of each outermost block may narrow the bound to a
        cell (:func:`_narrowed`): only when the cells with signal of their
        own (four standard deviations) hold the block's noisy count but for
        10% of it or two standard deviations of the remainder, to the
        outermost such cell (or the next one out), when the noisy mass
        beyond it is below three of its standard deviations.  In a float
        column's *bulk* block (:func:`_holds_bulk`: a quarter or more of the
        column's noisy count, the decade of a temperature or a wind speed,
        whose neighbour outward shows no evidence of mass) the bound stops at
        the first cell, from the outermost cell with signal of its own
        outward, beyond which the noisy mass is below two of its standard
        deviations and whose outward neighbour's noisy count is below 1.5
        (:func:`_bulk_end`): a lone outer cell whose noise passes two
        standard deviations no longer holds the bound there, and mass beyond
        moves it out one cell at a time, never straight to the decade's edge
        (a gust ending at 62 was learned up to 100 in a fifth of the draws);
        past a bulk block, a tail block towards 0 wider than 5% of the span
        must also hold 10% of the block's noisy count (:func:`_tail_block`: the empty
        decade below a temperature no longer widens ``[10, 100]`` to
        ``[1, 100]``).  The bulk rule trades overshoot for clipping: a tail
        below the noise is clipped (the top percents of a normal column, a
        sparse column's thin tail) rather than the range widened past the
        data.  An amount spread over decades (its end block a tail decade,
        or one whose neighbour holds a tail) keeps the rules that follow.
        A spread mass in a block wider than 5% of the range stops at the
        outermost cell
        with *evidence* of mass (:func:`_outermost_evidence`: its noisy
        count, or that of the cells scanned so far, above two standard
        deviations) when the noisy mass beyond that cell is below one of
        its standard deviations: a decade that the data fill only in part
        no longer widens the range tenfold.  Otherwise the bound stays at
        the block's edge, and a spread mass reaching that edge takes in the
        next block outward when its noisy count exceeds one standard
        deviation (the thin tail of a lognormal towards 0), or three for a
        wider block (a decade away from 0, where a false tail would widen
        the range tenfold);
     3. the **sub-cells** of the two cells the bounds end in (50 equal parts
        of a number cell, or one per integer for an integer column whose
        cell holds at most 500 integers -- a year column is learned to the
        year, a constant one to its one value; 12 of a year) narrow them
        the same way (a part needs more than four standard deviations in a
        cell of more than 50 parts, so that the chance of a false part
        stays that of 50); a datetime column's selection (below) reads its
        end cells cut in days.  Every ranged column spends this third
        histogram, with signal or not, so that the ledger's entries never
        depend on the noise.  An integer or datetime column spends only 30%
        of the third level's share on it and 70% on
     4. the **selection of its bounds** (:func:`_select_ends`): one
        exponential mechanism (sensitivity 1) per integer or datetime column
        (a fact of the dtype: the ledger never depends on the values) picks
        the pair of bounds that clips the fewest rows, less a public
        penalty per *span* of distance outward (the span from the innermost
        low candidate's cell to the innermost high candidate's cell: the
        learned range less the quiet cells the selection may remove, so that
        a decade of empty cells does not dilute its own penalty; at least
        ``_SPAN_FLOOR`` (half) of the learned range, so that a long thin tail
        does not shrink it either).  Its candidates
        (:func:`_end_candidates`) are, for each end, the edges of the cells
        from the end cell inward through the *quiet* cells of its block
        (:func:`_inward_limits`: up to the first cell whose noisy count, or
        that of the cells scanned so far, exceeds two noise standard
        deviations), and the sub-cell edges of an end cell that is a lattice
        (below) or is cut in parts wider than one (a cell of more than 500
        integers).  A heavy tail whose histograms kept a block's edge a decade
        past the data (delays up to 500 minutes learned up to 1,000, flight
        numbers up to 6,177 up to 10,000) then ends at the last cells that
        hold rows (the shipped flights table, whose whole-valued columns a
        CSV gives as integers).  The penalty is ``_ACROSS_PRIOR`` (10) noise
        units per span across cells and within an end cell that is
        not a lattice, so that a thin tail is clipped only
        where its cells hold much less than the range's average, and among
        the bounds clipping nothing the one nearest the data wins; within an
        integer end cell cut one part per integer of a column whose noisy
        number of values is at least ``_LATTICE_ROWS`` (50) noise units of
        the selection it is ``_RANGE_PRIOR`` (50) (odds about ``exp(-50 f)``
        for ``f`` of the range beyond the last value), ``f`` measured over
        the span the end cells *enclose* (:func:`_enclosed_span`: from the
        low end cell's inner edge to the high one's, at least
        ``_LATTICE_STEP_PULL`` (2) noise units per integer; in a column whose
        ends lie in one cell, the histograms' bounds): a lattice such as
        wind directions in tens or days of the month, whose per-integer
        counts are below the histogram's bar, ends at its last value (or,
        when the value beyond the penalty is thin, one lattice step inside:
        the last values are clipped into the range, never widened past it).
        Over the cells' outer edges the pull was too weak where the end cell
        reaches far past the data: days of the month (cells [1, 1.5) and
        [30, 40)) ended past the 32nd in 6.5% of the selections at 10,000
        rows (now 2%, at the price of clipping the 31st in 44% instead of
        31%), and a constant year (one cell, [2000, 2500)) whose sub-cell
        histogram kept a false part 30 years out ended at its value in 10%
        (now 80%).
        The ``m`` sub-cell candidates of an end cell share the odds of one
        cell edge (``log m`` more penalty each).  The selected end is used
        when the column's noisy number of values is at least
        ``_SELECTION_ROWS`` (20) noise units of the selection; of an end
        narrowed by the histogram too (which may stop one part beyond the
        mass) the more inward one is kept.  An end whose cell's outward
        neighbour has a noisy count above ``_OUTSIDE_EVIDENCE`` (2) noise
        standard deviations keeps the histograms' end (the data may reach
        past the cell, a spread mass the selection's penalty would clip).
        Every integer column spends it, used or not.  A datetime column is a
        lattice of days (:func:`_lattice_step`): its candidates are the day
        edges (UTC midnights) of its end cells (calendar years), counted
        exactly in one more pass, and, in a column holding at least
        ``_LATTICE_ROWS`` noise units, its score aims each end at clipping
        ``_DAY_AIM`` (2) noise units: ``-|clipped - aim|`` instead of
        ``-clipped``.  A bound past the last day clips nothing, as one on it
        does, so that without the aim the two tie (a year of hourly records
        missing its last day ended on the year's edge in half the draws at
        50,000 rows); with it the bound lies past the data with odds about
        ``exp(-2)`` and clips about two noise units per end (about 2.5% of
        a 10,000-row year at epsilon 1 over 15 columns, 0.5% of 50,000).
        No private mechanism can do much better: two tables a day of rows
        apart are told apart with probability bounded by the selection's
        budget, so a bound that excludes an empty last day almost surely
        also clips a real one often.  The aim and the penalty are public;
        ``|clipped - aim|`` moves by at most 1 when a row is added or
        removed (the clipped count moves by at most 1, and a row lies below
        the low bound or above the high one, never both), so the sensitivity
        stays 1; an aimed end is used whatever the noisy count of the cell
        outside it (the guard of ``_OUTSIDE_EVIDENCE`` would keep the year's
        edge in about 2% of the draws per end).  A float column selects
        nothing: at 5% of its share (taken from its histograms) the
        selection's noise unit was about as large as a cell's noise, so it
        could not tell a thin tail from empty cells -- it clipped a
        lognormal's top percents and a uniform column's last cell -- and
        the noisier histograms narrowed ends past real mass; its heavy tail
        may still end at a decade edge past the data.

     An integer column's bounds are then the first and last integers of the
     learned cells (cells are ``[left, right)``); values outside the bounds
     are clipped into them.  Bins within the bounds follow
     :func:`~sklearn_dpsynth.domain.numeric_edges`: log-spaced, with a point
     at 0 for a float column, when the learned bounds span two orders of
     magnitude (:func:`_learned_scale`: they then hold decades of mass),
     else as ``scale="auto"`` says.  The false-positive rate of a bound is about ``1e-3`` per
     scan;
   * categorical supports: a thresholded Gaussian histogram over the
     observed values (Gaussian partition selection): a value is kept when
     its noisy count exceeds ``1 + sigma * z`` where ``z`` is the
     ``1 - delta_col`` normal quantile, so a value present in only one of
     two neighbouring tables is released with probability at most
     ``delta_col``.  At most ``max_categories`` values are kept (largest
     noisy counts); every other value maps to an ``"<other>"`` code.  Every
     learned categorical column also releases its number of present values
     (discrete Gaussian, sensitivity 1, ``_PRESENT_COUNT_SHARE`` = 5% of its
     share), whatever is kept: when no value is kept but that noisy count
     is at least ``_LONG_TAIL_RATIO`` (5) times the count a value needs to
     be kept almost surely (the threshold plus two noise standard
     deviations), no value can hold a fifth of the column (it would have
     been kept with probability about 98%): the column is identifier-like
     or long-tailed, and it is modelled as ``"<other>"`` alone (plus its
     missing code) with a
     :class:`~sklearn_dpsynth.exceptions.DomainInferenceWarning` naming it
     ("drop it or declare its categories").  A table of a few thousand
     rows is therefore fitted whatever its identifiers hold; a table of a
     few hundred rows is refused as below.

   **No signal, no fit.**  When a column has no significant block, or no
   category is kept and its noisy present count is below the long-tail
   rule's, a
   :class:`~sklearn_dpsynth.exceptions.DomainInferenceError` names the
   columns, the budget spent so far and the fix, *before* the synthesizer
   measures anything else (and before the sub-cell histograms).  The
   decision reads the noisy counts only, and the message holds only
   column names and data-independent costs: neighbouring tables whose
   noise leads to the same decision get the same error.  The opt-in
   ``preprocessing="private-lenient"`` fits anyway: such bounds fall back to
   the whole grid (nothing can be ruled out), no category is kept, and one
   :class:`~sklearn_dpsynth.exceptions.DomainInferenceWarning` names the
   columns.  The same warning names a column whose bounds lie in a cell
   touching 0 (e.g. ``[0, 0.001]`` for a zero-inflated amount whose
   non-zero values are all below the noise): everything else is clipped
   into it.

   Every decision, warning and error is computed from the noisy counts:
   post-processing, at no further cost.
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

import math
import warnings
from statistics import NormalDist
from dataclasses import dataclass, replace
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from ._input import as_numbers, is_datetime
from .backends import open_source
from .domain import ColumnSpec, Domain, spec_from_declaration
from .domain import datetimes_as_seconds as _datetimes_as_seconds
from .exceptions import DomainInferenceError, DomainInferenceWarning, PrivacyWarning
from .privacy import LedgerShare, ThresholdedHistogram, exponential_epsilon, gaussian_sigma

__all__ = ["learn_domain", "candidate_grid", "year_grid"]

#: A cell (or block of cells) of a private range histogram carries signal
#: when its noisy count exceeds this many of its noise standard deviations.
_BOUND_THRESHOLD = 4.0

#: A bound moves inward past part of a unit only when the noisy mass beyond
#: stays below this many of its noise standard deviations ...
_BEYOND_THRESHOLD = 3.0
#: ... and only in a unit whose parts with signal hold all but this share of
#: its noisy count.
_SPREAD_SHARE = 0.1
#: ... or whose remainder (its noisy count less its parts with signal) stays
#: below this many of the remainder's noise standard deviations.
_SPREAD_NOISE = 2.0
#: ... moving past at most this many parts without signal of their own.
_OUTWARD_STEPS = 1

#: A bound that stays at a block's edge takes in the next block outward when
#: that block's noisy count exceeds this many noise standard deviations.
_TAIL_THRESHOLD = 1.0
#: ... or this many, when the next block is wider than the block itself (a
#: decade away from 0): a false tail there would widen the range tenfold.
_WIDE_TAIL_THRESHOLD = 3.0

#: A bound in a block whose mass is spread (not narrowed to a cell) stops at
#: the outermost cell whose noisy count exceeds this many noise standard
#: deviations, when there is one.
_EVIDENCE_THRESHOLD = 2.0
#: ... when the noisy mass beyond that cell stays below this many of its noise
#: standard deviations, and only in a block wider than this share of the
#: range (an empty part of it would widen the range much; a block near 0 at
#: the end of a right-skewed column would not).
_EVIDENCE_BEYOND = 1.0
_EVIDENCE_WIDTH = 0.05
#: A float column's end block holding at least this share of the noisy total
#: holds its bulk (:func:`_holds_bulk`): ...
_BULK_SHARE = 0.25
#: ... and stops at the first part, from its outermost significant part
#: outward, beyond which the noisy mass stays below this many of its standard
#: deviations (:func:`_bulk_end`) ...
_WALK_BEYOND = 2.0
#: ... or while the next part outward has a noisy count above this many noise
#: standard deviations.
_WALK_NEXT = 1.5
#: ... and takes in a tail decade towards 0 past it only when the tail's noisy
#: count is at least this share of its own (:func:`_tail_block`).
_BULK_TAIL_SHARE = 0.1

#: Shares of a numeric or datetime column's budget spent on its three noisy
#: histograms: of the blocks (decades), of the cells, and of the sub-cells of
#: the two outermost cells.
_LEVEL_SHARES = (0.5, 0.25, 0.25)

#: The public penalty, in noise units of the bound selection (``2 / epsilon``),
#: of a bound further out by the whole span (see :func:`_with_selected_ends`)
#: within a lattice's end cell (see :func:`_select_ends` and :func:`_is_lattice`) ...
_RANGE_PRIOR = 50.0
#: ... and elsewhere (across the cells inward of an end cell, see
#: :func:`_inward_limits`, and within a non-lattice end cell): a
#: weaker pull, so that a stretch of cells is clipped only when it holds fewer
#: rows than this many noise units times its share of the span.
_ACROSS_PRIOR = 10.0
#: The span of the penalty is at least this share of the learned range.
_SPAN_FLOOR = 0.5
#: Part of the third level's share an integer column spends on the sub-cell
#: histogram (the rest on the selection of the bounds).
_SUBCELL_HISTOGRAM_SHARE = 0.3
#: The selected end is used only for a column whose noisy number of values is
#: at least this many of the selection's noise units ...
_SELECTION_ROWS = 20.0
#: ... and only for an end whose cell's outward neighbour has a noisy count
#: below this many noise standard deviations (no evidence that the data
#: reaches past the cell, so that the selection does not clip a spread mass).
_OUTSIDE_EVIDENCE = 2.0
#: An integer end cell cut one part per integer is a lattice, pulled by
#: ``_RANGE_PRIOR``, in a column holding at least this many noise units of the
#: selection: the pull then clips a part holding less than about
#: ``1 / _LATTICE_ROWS`` of the rows.
_LATTICE_ROWS = 50.0
#: The pull of a lattice end cell is ``_RANGE_PRIOR`` per span enclosed by the
#: end cells (:func:`_enclosed_span`), at most this many noise units per
#: integer where the end cells lie apart (a day of the month, whose 31st holds
#: about 1.7 noise units in a 10,000-row table, is clipped about as often as
#: a bound past it is avoided).
_LATTICE_STEP_PULL = 2.0

#: Equal parts of a grid cell in the sub-cell histogram (a month, roughly,
#: for a calendar year).
_SUBCELLS = {"numeric": 50, "datetime": 12}
#: A day in seconds: the lattice of a datetime column's selection of its bounds.
_DAY = 86_400.0
#: A datetime end cell cut in days aims its bound at clipping this many noise
#: units of the selection (a private quantile): the empty days past the data
#: then score this many units below the days that clip as much, so that the
#: bound lies past the last day with odds about ``exp(-_DAY_AIM)`` (a bound
#: clipping nothing cannot tell the last day from the next one).
_DAY_AIM = 2.0
#: An integer column's cell holding at most this many integers is cut into one
#: sub-cell per integer (a year column in [2000, 2500) is learned to the year).
_INTEGER_SUBCELLS = 500

#: A learned categorical column's share of the domain-learning budget, relative
#: to a numeric or datetime column's: its one thresholded histogram must clear
#: about seven noise standard deviations (a value present in one table only is
#: released with probability ``delta``), where a range needs four.
_CATEGORICAL_WEIGHT = 3.0

#: Part of a categorical column's budget spent on the noisy number of its
#: present values (the rest on its thresholded histogram).
_PRESENT_COUNT_SHARE = 0.05

#: A categorical column with no kept value is modelled as ``"<other>"`` alone
#: (not refused) when its noisy number of present values is at least this many
#: times the count a value needs to be kept almost surely (the selection
#: threshold plus ``_KEPT_MARGIN`` noise standard deviations): a value
#: holding ``1 / _LONG_TAIL_RATIO`` of them would have been kept (with
#: probability about 98%), so the column is identifier-like or long-tailed.
_LONG_TAIL_RATIO = 5
_KEPT_MARGIN = 2.0

#: The ``preprocessing`` values that learn undeclared columns privately.
PRIVATE_MODES = ("private", "private-lenient")

#: Learned bounds get log-spaced bins from this many orders of magnitude on.
_LEARNED_LOG_SPAN = 2

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
    block: np.ndarray  # block index of every cell, increasing with the cells' values
    cuts: np.ndarray  # the inner cut points (cell i is [cuts[i-1], cuts[i]))
    n_sub: int = 1  # equal parts of a cell in the sub-cell histogram

    def cell_of(self, values: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.cuts, values, side="right")

    def cells_of_block(self, block: int) -> np.ndarray:
        """Indices of the cells of ``block`` (a contiguous run)."""
        return np.flatnonzero(self.block == block)

    def sub_edges(self, cell: int, step: float | None = None) -> np.ndarray:
        """The edges of the equal sub-cells of ``cell``: ``n_sub`` of them, or
        one per ``step`` (an integer, a day: see :func:`_lattice_step`) when the
        cell holds at most ``_INTEGER_SUBCELLS`` of them (a grid cell starts and
        ends on an integer whenever it is at least 1 wide, a calendar year on
        a day)."""
        width = math.ceil((self.right[cell] - self.left[cell]) / (step or 1.0))
        if step is not None and width <= max(self.n_sub, _INTEGER_SUBCELLS):
            n_sub = max(1, width)
        else:
            n_sub = self.n_sub
        return np.linspace(self.left[cell], self.right[cell], n_sub + 1)


def _in_value_order(block: np.ndarray) -> np.ndarray:
    """Block labels renumbered 0, 1, ... along the cells (blocks are contiguous runs)."""
    return np.concatenate([[0], np.cumsum(block[1:] != block[:-1])])


def _numeric_grid() -> _Grid:
    cuts = candidate_grid()
    left = np.concatenate([[cuts[0] * 10.0], cuts])
    right = np.concatenate([cuts, [cuts[-1] * 10.0]])
    # block = (sign, decade of the edge nearer zero); the cells touching 0 alone
    near_zero = np.where(right <= 0, -right, left)
    sign = np.where(right <= 0, -1, 1)
    decade = np.where(near_zero > 0, np.floor(np.log10(np.maximum(near_zero, 1e-300))), -99)
    _, block = np.unique(np.stack([sign, decade], axis=1), axis=0, return_inverse=True)
    return _Grid(left, right, _in_value_order(block.ravel()), cuts, _SUBCELLS["numeric"])


def _datetime_grid() -> _Grid:
    cuts = year_grid()
    limits = _datetimes_as_seconds([pd.Timestamp(year=y, month=1, day=1) for y in _YEAR_LIMITS])
    left = np.concatenate([[limits[0]], cuts])
    right = np.concatenate([cuts, [limits[1]]])
    years = np.arange(_YEARS[0] - 1, _YEARS[1] + 1)  # year of each cell (outer ones apart)
    block = np.concatenate([[0], 1 + (years[1:] - _YEARS[0]) // 10])
    block[-1] = block[-2] + 1
    return _Grid(left, right, block, cuts, _SUBCELLS["datetime"])


# ------------------------------------------------------------------ budget
@dataclass
class _Budget:
    """Every private access of domain learning goes through here.

    Three noisy histograms per numeric or datetime column, spending
    ``rho_per_column``; per categorical column a thresholded histogram and
    the noisy number of its present values, spending
    ``_CATEGORICAL_WEIGHT * rho_per_column`` and ``delta_per_categorical``.
    """

    share: LedgerShare
    rng: np.random.Generator
    rho_per_column: float
    delta_per_categorical: float

    def part(self, share: float) -> "_Budget":
        """The budget of one release that spends ``share`` of ``rho_per_column``."""
        return replace(self, rho_per_column=self.rho_per_column * share)

    def categorical(self) -> "_Budget":
        """The budget of a categorical column's thresholded histogram."""
        return self.part(_CATEGORICAL_WEIGHT).part(1 - _PRESENT_COUNT_SHARE)

    def noisy_present_count(self, n_present: float, target: str) -> float:
        """The number of a categorical column's present values, with discrete
        Gaussian noise (sensitivity 1), on its ``_PRESENT_COUNT_SHARE``."""
        sigma = self.part(_CATEGORICAL_WEIGHT).part(_PRESENT_COUNT_SHARE).sigma
        return float(self.share.gaussian(np.array([int(n_present)]), sigma=sigma, rng=self.rng,
                                         target=target, n_cells=1)[0])

    @property
    def sigma(self) -> float:
        return gaussian_sigma(self.rho_per_column)

    def noisy_histogram(self, counts: np.ndarray, target: str) -> np.ndarray:
        """Exact discrete Gaussian noise of scale ``sigma`` on every count (sensitivity 1)."""
        return self.share.gaussian(counts, sigma=self.sigma, rng=self.rng, target=target,
                                    n_cells=counts.size)

    @property
    def threshold(self) -> int:
        """The smallest noisy count :meth:`thresholded_histogram` keeps (public)."""
        return ThresholdedHistogram(self.sigma, self.delta_per_categorical).threshold

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
    """``"datetime"``, ``"numeric"`` or ``"categorical"``, from the dtype alone
    (durations are numeric, in seconds)."""
    if is_datetime(series.dtype):
        return "datetime"
    if pd.api.types.is_timedelta64_dtype(series.dtype):
        return "numeric"
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


def _public_spec(series: pd.Series) -> ColumnSpec | None:
    """Specs known from the dtype alone (booleans)."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return ColumnSpec(series.name, "categorical", categories=[False, True],
                          missing=can_hold_missing(series))
    return None


def _numeric_spec(name: Hashable, series: pd.Series, low: float, high: float,
                  n_bins: int, scale: str = "auto") -> ColumnSpec:
    if column_kind(series) == "datetime":  # seconds since 1970: no orders of magnitude
        scale = "linear"
    entry = {"bounds": (low, high), "integer": is_integer(series),
             "missing": can_hold_missing(series), "clip": True, "scale": scale}
    if entry["integer"] and low == high:  # one integer: its own bin
        del entry["bounds"], entry["scale"]
        entry["edges"] = [low - 0.5, low + 0.5]
    return spec_from_declaration(name, entry, n_bins)


def _learned_scale(low: float, high: float) -> str:
    """``"log"`` for learned bounds ``_LEARNED_LOG_SPAN`` orders of magnitude apart
    (``high >= 100 * max(low, 1)``, a negative part within 1% of ``high``): they
    span blocks of the decade grid, so the noisy counts put mass across decades
    (a length of stay learned as ``[1, 999]``); else ``"auto"``."""
    wide = high >= 10.0 ** _LEARNED_LOG_SPAN * max(low, 1.0) and -low <= high / 100
    return "log" if wide else "auto"


# ------------------------------------------------------- private learning
def _range_counts(table: Any, name: Hashable, grid: _Grid) -> np.ndarray:
    """Exact counts of a column's present values in the cells of ``grid``
    (a bincount in memory, a GROUP BY in an engine: the same integers)."""
    return _range_counts_many(table, [(name, grid)])[0]


def _range_counts_many(table: Any, requests: Sequence[tuple[Hashable, _Grid]]
                       ) -> list[np.ndarray]:
    """:func:`_range_counts` of several ``(name, grid)``: one pass in an engine
    (:meth:`~sklearn_dpsynth.backends.TableSource.range_counts_many`)."""
    return open_source(table).range_counts_many([(name, grid.cuts) for name, grid in requests])


def _category_counts(table: Any, name: Hashable) -> tuple[list, np.ndarray]:
    """Present values and exact counts, in order of first appearance."""
    return _category_counts_many(table, [name])[0]


def _category_counts_many(table: Any, names: Sequence[Hashable]
                          ) -> list[tuple[list, np.ndarray]]:
    """:func:`_category_counts` of several columns: one pass in an engine
    (:meth:`~sklearn_dpsynth.backends.TableSource.category_counts_many`)."""
    return open_source(table).category_counts_many(list(names))


def _grid_of(series: pd.Series) -> _Grid:
    """The public grid of a numeric or datetime column."""
    return _datetime_grid() if column_kind(series) == "datetime" else _numeric_grid()


@dataclass(frozen=True)
class _Range:
    """Learned bounds of a column, the grid cells they end in, those cells'
    noisy counts, and whether anything had signal (else: the whole grid)."""

    low: float
    high: float
    low_cell: int
    high_cell: int
    low_count: float
    high_count: float
    signal: bool = True
    total: float = 0.0  # the noisy number of present values (sum of the noisy blocks)
    # noisy counts of the cells just outside the low and high cells (0 past the grid)
    outside: tuple[float, float] = (0.0, 0.0)
    # the innermost cells the selection of the bounds may move the low and the
    # high bound to (:func:`_inward_limits`); the end cells themselves by default
    limits: tuple[int, int] | None = None

    @property
    def inward_limits(self) -> tuple[int, int]:
        """``limits``, or the end cells themselves when none were learned."""
        return self.limits or (self.low_cell, self.high_cell)


def _significant(noisy: np.ndarray, sigma: float, from_top: bool) -> int | None:
    """The first unit, scanning ``noisy`` from one end, where significant mass starts.

    A unit is significant when its own noisy count, or the noisy count of
    all units scanned so far (itself included, ``k`` of them), exceeds
    ``_BOUND_THRESHOLD`` of its noise standard deviation (``sigma`` or
    ``sigma * sqrt(k)``): everything beyond it holds less than that,
    give or take the noise.  Returns its index, or None.
    """
    order = noisy[::-1] if from_top else noisy
    first = _first_above(order, sigma, _BOUND_THRESHOLD)
    if first is None:
        return None
    return order.size - 1 - first if from_top else first


def _first_above(order: np.ndarray, sigma: float, threshold: float) -> int | None:
    """The first unit of ``order`` whose noisy count, or the noisy count of all
    units up to it (``k`` of them), exceeds ``threshold`` of its noise
    standard deviation (``sigma`` or ``sigma * sqrt(k)``); None if none does."""
    k = np.arange(1, order.size + 1)
    hit = (order > threshold * sigma) | (np.cumsum(order) > threshold * sigma * np.sqrt(k))
    return int(np.argmax(hit)) if hit.any() else None


def _narrowed(noisy: np.ndarray, sigma: float, total: float, sigma_total: float,
              from_top: bool) -> int | None:
    """The outermost part of a unit the bound may stop at, or None (keep the unit's edge).

    ``noisy`` holds the noisy counts of the unit's parts (noise ``sigma``
    each) and ``total`` the unit's own noisy count (noise ``sigma_total``).
    Scanning inward, the first part that is significant on its own (above
    ``_BOUND_THRESHOLD * sigma``) shows where the mass is; the bound stops
    at the outer edge of the innermost part, up to that one and at most
    ``_OUTWARD_STEPS`` parts further out, beyond which the mass is *not*
    significant (:func:`_mass_beyond` below
    ``_BEYOND_THRESHOLD`` of its standard deviation).  Only a concentrated
    unit is narrowed: its significant parts must hold at least
    ``1 - _SPREAD_SHARE`` of ``total``.  A mass in a few parts (years in one
    cell, a latitude band, months) gets a tight bound; a tail spread thin
    over many parts, or a unit whose parts the noise blurs, keeps its edge.
    """
    order = noisy[::-1] if from_top else noisy
    single = np.flatnonzero(order > _part_threshold(order.size) * sigma)
    if not single.size:
        return None
    remainder = total - order[single].sum()
    remainder_sd = math.sqrt(sigma_total ** 2 + single.size * sigma ** 2)
    if remainder > max(_SPREAD_SHARE * total, _SPREAD_NOISE * remainder_sd):
        return None
    first = int(single[0])
    for j in range(first, max(first - _OUTWARD_STEPS, 0) - 1, -1):
        beyond, spread = _mass_beyond(order, j, sigma, total, sigma_total)
        if beyond <= _BEYOND_THRESHOLD * spread:
            return order.size - 1 - j if from_top else j
    return None


def _part_threshold(n_parts: int) -> float:
    """Standard deviations a part's noisy count must exceed to have signal of its
    own, in a unit of ``n_parts`` parts: ``_BOUND_THRESHOLD`` up to
    ``_SUBCELLS["numeric"]`` parts, beyond that raised to keep the chance that
    some empty part passes (about ``n_parts`` times a part's tail) as it is
    at that many parts (an integer cell of up to ``_INTEGER_SUBCELLS``)."""
    usual = _SUBCELLS["numeric"]
    if n_parts <= usual:
        return _BOUND_THRESHOLD
    normal = NormalDist()
    return normal.inv_cdf(1 - (1 - normal.cdf(_BOUND_THRESHOLD)) * usual / n_parts)


def _mass_beyond(order: np.ndarray, j: int, sigma: float, total: float,
                 sigma_total: float) -> tuple[float, float]:
    """Noisy mass of the parts before ``j`` in scan order, and its standard deviation.

    Estimated twice, as their sum and as ``total`` minus the parts from
    ``j`` on, and combined by inverse variance (the two are independent).
    """
    if j == 0:
        return 0.0, 0.0
    var_outside = j * sigma ** 2
    var_inside = sigma_total ** 2 + (order.size - j) * sigma ** 2
    weight = var_inside / (var_outside + var_inside)
    beyond = weight * order[:j].sum() + (1 - weight) * (total - order[j:].sum())
    return float(beyond), float(np.sqrt(var_outside * var_inside / (var_outside + var_inside)))


def _ends(noisy: np.ndarray, sigma: float) -> tuple[int, int] | None:
    """``(low, high)`` units where significant mass starts from each end, or None.

    When the two scans cross (thin mass, each scan significant only past
    the other's end) the pair is swapped: the bounds then hold the core.
    """
    low = _significant(noisy, sigma, from_top=False)
    high = _significant(noisy, sigma, from_top=True)
    if low is None or high is None:
        return None
    return (low, high) if low <= high else (high, low)


def _coarse_range(name, grid: _Grid, budget: _Budget, counts: np.ndarray,
                  is_float: bool = False) -> _Range:
    """Bounds from the noisy histograms of the blocks and of the cells.

    The blocks locate the outermost significant mass (e.g. a decade); the
    cells of each outermost block narrow it to a cell or keep the block's
    edge (:func:`_end_cell`, the same rule at either end).  Without signal: the whole grid,
    ``signal=False``.
    """
    sigmas = [budget.sigma * share ** -0.5 for share in _LEVEL_SHARES]
    blocks = budget.part(_LEVEL_SHARES[0]).noisy_histogram(
        np.bincount(grid.block, weights=counts), target=f"range of {name!r}: blocks")
    cells = budget.part(_LEVEL_SHARES[1]).noisy_histogram(
        counts, target=f"range of {name!r}: cells")
    ends = _ends(blocks, sigmas[0])
    if ends is None:
        last = grid.left.size - 1
        return _Range(grid.left[0], grid.right[last], 0, last, cells[0], cells[last], False)
    span = (grid.right[grid.cells_of_block(ends[1])[-1]]
            - grid.left[grid.cells_of_block(ends[0])[0]])
    low_cell, in_low = _end_cell(grid, blocks, cells, ends[0], sigmas, span, from_top=False,
                                 is_float=is_float)
    high_cell, in_high = _end_cell(grid, blocks, cells, ends[1], sigmas, span, from_top=True,
                                   is_float=is_float)
    if low_cell > high_cell:  # crossed inside one block: keep its edges
        low_cell, high_cell = int(in_low[0]), int(in_high[-1])
    outside = (float(cells[low_cell - 1]) if low_cell > 0 else 0.0,
               float(cells[high_cell + 1]) if high_cell + 1 < cells.size else 0.0)
    return _Range(grid.left[low_cell], grid.right[high_cell], low_cell, high_cell,
                  float(cells[low_cell]), float(cells[high_cell]), total=float(blocks.sum()),
                  outside=outside,
                  limits=_inward_limits(grid, cells, low_cell, high_cell, sigmas[1]))


def _inward_limits(grid: _Grid, cells: np.ndarray, low_cell: int, high_cell: int,
                   sigma: float) -> tuple[int, int]:
    """The innermost cells the selection of the bounds may move each bound to.

    From each end cell inward, within its block and short of the other end
    cell: up to the first cell with evidence of mass (:func:`_first_above`
    at ``_EVIDENCE_THRESHOLD``: its noisy count, or that of the cells
    scanned so far, above two of its noise standard deviations ``sigma``).
    Read from the noisy cell counts only.
    """
    low_run = grid.cells_of_block(grid.block[low_cell])
    low_run = low_run[(low_run >= low_cell) & (low_run <= high_cell)]
    high_run = grid.cells_of_block(grid.block[high_cell])
    high_run = high_run[(high_run <= high_cell) & (high_run >= low_cell)][::-1]
    limits = []
    for run in (low_run, high_run):
        first = _first_above(cells[run], sigma, _EVIDENCE_THRESHOLD)
        limits.append(int(run[-1 if first is None else first]))
    return limits[0], limits[1]


def _holds_bulk(blocks: np.ndarray, block: int) -> bool:
    """Whether the end ``block`` holds the column's bulk: its noisy count is at
    least ``_BULK_SHARE`` of the noisy total of the blocks (the end lies in the
    decade of a temperature or a wind speed, not in a tail decade of an
    amount spread over decades).  Reads the noisy blocks only."""
    return bool(blocks[block] >= _BULK_SHARE * max(float(blocks.sum()), 0.0))


def _end_cell(grid: _Grid, blocks: np.ndarray, cells: np.ndarray, block: int,
              sigmas: Sequence[float], span: float, from_top: bool,
              is_float: bool = False) -> tuple[int, np.ndarray]:
    """The cell one bound ends in, and the cells it was chosen from.

    ``block`` is where significant mass starts from that end.  Its cells
    narrow the bound (:func:`_narrowed`); in a float column's bulk block
    (:func:`_holds_bulk`) with no evidence of mass in its neighbour outward
    (a noisy count of at most ``_EVIDENCE_THRESHOLD`` noise standard
    deviations) the bound stops where the mass beyond it is not significant
    (:func:`_bulk_end`); else a spread mass in a block wider than
    ``_EVIDENCE_WIDTH`` of ``span`` stops at its outermost cell with
    evidence of mass (:func:`_outermost_evidence`); otherwise the bound
    stays at the block's edge, or the edge of its neighbour outward when
    that one holds a tail (:func:`_tail_block`).
    """
    in_block = grid.cells_of_block(block)
    step = +1 if from_top else -1
    bulk = is_float and _holds_bulk(blocks, block)
    tail = _tail_block(grid, blocks, block, step, sigmas[0], span if bulk else None)
    part = _narrowed(cells[in_block], sigmas[1], blocks[block], sigmas[0], from_top)
    if part is None and bulk and tail is None and _quiet(blocks, block + step, sigmas[0]):
        part = _bulk_end(cells[in_block], sigmas[1], blocks[block], sigmas[0], from_top)
    if part is None and _block_width(grid, block) > _EVIDENCE_WIDTH * span:
        part = _outermost_evidence(cells[in_block], sigmas[1], blocks[block], sigmas[0],
                                   from_top)
    if part is not None:
        return int(in_block[part]), in_block
    with_tail = in_block if tail is None else np.union1d(in_block, grid.cells_of_block(tail))
    return int(with_tail[-1] if from_top else with_tail[0]), with_tail


def _quiet(blocks: np.ndarray, block: int, sigma: float) -> bool:
    """Whether ``block`` (possibly past the grid) shows no evidence of mass: a
    noisy count of at most ``_EVIDENCE_THRESHOLD`` noise standard deviations."""
    return not 0 <= block < blocks.size or bool(blocks[block] <= _EVIDENCE_THRESHOLD * sigma)


def _outermost_evidence(noisy: np.ndarray, sigma: float, total: float, sigma_total: float,
                        from_top: bool) -> int | None:
    """Where a spread unit's bound may stop short of its edge, or None.

    Scanning ``noisy`` (parts of noise ``sigma``) from one end, the first
    part whose noisy count, or the noisy count of all parts scanned so far
    (``k`` of them), exceeds ``_EVIDENCE_THRESHOLD`` of its noise
    standard deviation (``sigma`` or ``sigma * sqrt(k)``) shows some
    evidence of mass, short of significance.  The bound stops there only when the noisy
    mass beyond it (:func:`_mass_beyond`, ``total`` being the unit's own
    noisy count) stays below ``_EVIDENCE_BEYOND`` of its standard deviation:
    the parts beyond look empty, not merely thin.
    """
    order = noisy[::-1] if from_top else noisy
    first = _first_above(order, sigma, _EVIDENCE_THRESHOLD)
    if first is None:
        return None
    beyond, spread = _mass_beyond(order, first, sigma, total, sigma_total)
    if beyond > _EVIDENCE_BEYOND * spread:
        return None
    return order.size - 1 - first if from_top else first


def _bulk_end(noisy: np.ndarray, sigma: float, total: float, sigma_total: float,
              from_top: bool) -> int | None:
    """Where the bound stops in a float column's bulk block (:func:`_holds_bulk`), or None.

    Scanning inward, the first part significant on its own (above
    ``_BOUND_THRESHOLD`` of ``sigma``, as in :func:`_narrowed`) holds mass;
    the bound stops at the outer edge of the first part, from that one
    outward, beyond which the noisy mass (:func:`_mass_beyond`) stays below
    ``_WALK_BEYOND`` of its standard deviation and whose outward neighbour
    has no evidence of its own (a noisy count of at most ``_WALK_NEXT`` of
    ``sigma``).  Unlike the evidence rule (:func:`_outermost_evidence`), one
    outer part whose noise alone passes two standard deviations does not
    hold the bound there, and a bound that the mass beyond moves out moves
    one part at a time, not to the block's edge.  None when no part is
    significant (a mass spread thin, such as an amount's decade at a few
    thousand rows: the evidence rule decides) or the mass reaches the
    outermost part (the block's edge then holds).  Post-processing of
    the noisy counts ``noisy`` and ``total`` only.
    """
    order = noisy[::-1] if from_top else noisy
    single = np.flatnonzero(order > _part_threshold(order.size) * sigma)
    if not single.size:
        return None
    for j in range(int(single[0]), 0, -1):
        beyond, spread = _mass_beyond(order, j, sigma, total, sigma_total)
        if beyond <= _WALK_BEYOND * spread and order[j - 1] <= _WALK_NEXT * sigma:
            return order.size - 1 - j if from_top else j
    return None


def _tail_block(grid: _Grid, blocks: np.ndarray, block: int, step: int, sigma: float,
                bulk_span: float | None = None) -> int | None:
    """The neighbour of ``block`` outward (``block + step``) when it holds a tail,
    else None.

    A tail of a spread mass (e.g. the lowest percent of a lognormal), below
    the significance of a bound: a noisy count above ``_TAIL_THRESHOLD *
    sigma``, or ``_WIDE_TAIL_THRESHOLD * sigma`` for a neighbour wider than
    ``block``.  Past a bulk block (:func:`_holds_bulk`; ``bulk_span`` is then
    the span of the blocks with signal) a narrower tail (towards 0) wider
    than ``_EVIDENCE_WIDTH`` of that span must also hold ``_BULK_TAIL_SHARE``
    of the block's noisy count: a decade whose noise alone passes one standard deviation no
    longer widens a temperature's range from ``[10, 100]`` to ``[1, 100]``,
    while a narrow one (``[0.1, 1)`` below ``[1, 10)``) is taken as before.
    """
    neighbour = block + step
    if not 0 <= neighbour < blocks.size:
        return None
    wide = _block_width(grid, neighbour) > _block_width(grid, block)
    if blocks[neighbour] <= (_WIDE_TAIL_THRESHOLD if wide else _TAIL_THRESHOLD) * sigma:
        return None
    thin = blocks[neighbour] < _BULK_TAIL_SHARE * blocks[block]
    if bulk_span is not None and not wide and thin and \
            _block_width(grid, neighbour) > _EVIDENCE_WIDTH * bulk_span:
        return None
    return neighbour


def _block_width(grid: _Grid, block: int) -> float:
    cells = grid.cells_of_block(block)
    return float(grid.right[cells[-1]] - grid.left[cells[0]])


def _sub_grid(grid: _Grid, found: _Range,
              step: float | None) -> tuple[_Grid, np.ndarray, np.ndarray]:
    """The sub-cells of the outermost cells of ``found`` as one grid (one per
    ``step`` where :meth:`_Grid.sub_edges` cuts so), and the indices of its
    low cell's and high cell's sub-cells in that grid.

    The grid is also cut at the edges of the cells between each end cell and
    its inward limit (``found.limits``, :func:`_inward_limits`): whole cells,
    never measured by the sub-cell histogram, whose exact counts the
    selection of the bounds reads (:func:`_end_candidates`).
    """
    cells = sorted({found.low_cell, found.high_cell})
    low_limit, high_limit = found.inward_limits
    between = np.concatenate([grid.left[found.low_cell + 1:low_limit + 1],
                              grid.right[high_limit:found.high_cell]])
    cuts = np.unique(np.concatenate([grid.sub_edges(c, step) for c in cells] + [between]))
    left = np.concatenate([[-np.inf], cuts])
    right = np.concatenate([cuts, [np.inf]])

    def inside(cell: int) -> np.ndarray:
        return np.flatnonzero((left >= grid.left[cell]) & (right <= grid.right[cell]))
    return (_Grid(left, right, np.zeros(left.size, dtype=np.int64), cuts),
            inside(found.low_cell), inside(found.high_cell))


def _end_candidates(grid: _Grid, found: _Range, sub: _Grid, low_part: np.ndarray,
                    high_part: np.ndarray, lattice: tuple[bool, bool] = (True, True)
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Parts of ``sub`` whose left (low bound) or right (high bound) edges the
    selection of the bounds chooses from: the edges of the cells from each
    end cell inward up to its limit (``found.limits``), and the sub-cell
    edges of an end cell that is a ``lattice`` (:func:`_is_lattice`; of
    another only its outer edge, where the histograms' bound lies)."""
    low_limit, high_limit = found.inward_limits
    low = np.flatnonzero((sub.left >= grid.right[found.low_cell])
                         & (sub.left <= grid.left[low_limit]))
    high = np.flatnonzero((sub.right <= grid.left[found.high_cell])
                          & (sub.right >= grid.right[high_limit]))
    low_cell = low_part if lattice[0] else low_part[:1]
    high_cell = high_part if lattice[1] else high_part[-1:]
    return np.union1d(low_cell, low), np.union1d(high_cell, high)


def _refined_ranges(found: dict, grids: dict, budget: _Budget, table: Any,
                    frame: pd.DataFrame) -> dict:
    """Bounds narrowed to sub-cells of the cells they end in: one more noisy
    histogram per column, of those sub-cells, narrowing a concentrated end as
    :func:`_narrowed` does (one pass over an engine for every column).  An
    integer column (a fact of the schema) spends ``_SUBCELL_HISTOGRAM_SHARE``
    (30%) of that level on it and the rest on one exponential-mechanism
    selection of both ends among the cell edges inward of its end cells and,
    for some end cells, their sub-cell edges (:func:`_select_ends`, on the
    same exact counts), which moves an end inward past cells the histograms
    left quiet, or narrows one the histogram stops beyond the mass
    (:func:`_with_selected_ends`); a float or datetime column spends the
    whole level on the histogram.  Every column
    spends its releases, with signal or not, so that the ledger holds the
    same entries (set by the dtypes) whatever the noise decided."""
    todo = list(found)
    subs = {n: _sub_grid(grids[n], found[n], 1.0 if is_integer(frame[n]) else None)
            for n in todo}
    # a datetime column's selection reads its end cells cut in days (its
    # histogram, in 12 parts); an integer column's reads the histogram's grid
    daily = [n for n in todo if column_kind(frame[n]) == "datetime"]
    lattices = {n: subs[n] for n in todo}
    lattices.update({n: _sub_grid(grids[n], found[n], _lattice_step(frame[n])) for n in daily})
    exact = _range_counts_many(table, [(n, subs[n][0]) for n in todo]
                               + [(n, lattices[n][0]) for n in daily])
    counts = dict(zip(todo, exact))
    lattice_counts = {**counts, **dict(zip(daily, exact[len(todo):]))}
    sigma_cell = budget.part(_LEVEL_SHARES[1]).sigma
    out = dict(found)
    for name in todo:
        sub, low_part, high_part = subs[name]
        histogram = _subcell_budget(budget, frame[name])
        selection = _selection_budget(budget, frame[name])
        measured = np.union1d(low_part, high_part)
        noisy = np.zeros(sub.left.size)
        noisy[measured] = histogram.noisy_histogram(
            counts[name][measured], target=f"range of {name!r}: sub-cells")
        first = _narrowed(noisy[low_part], histogram.sigma, out[name].low_count, sigma_cell,
                          False)
        last = _narrowed(noisy[high_part], histogram.sigma, out[name].high_count, sigma_cell,
                         True)
        low = out[name].low if first is None else sub.left[low_part[first]]
        high = out[name].high if last is None else sub.right[high_part[last]]
        if selection is not None:
            low, high = _with_selected_ends(name, low, high, grids[name], out[name],
                                            lattices[name], lattice_counts[name], selection,
                                            sigma_cell, _lattice_step(frame[name]))
        if out[name].signal and low < high:  # scans crossing inside one cell keep its edges
            out[name] = replace(out[name], low=float(low), high=float(high))
    return out


def _with_selected_ends(name: Hashable, low: float, high: float, grid: _Grid, found: _Range,
                        parts: tuple, counts: np.ndarray, selection: _Budget,
                        sigma_cell: float, step: float) -> tuple[float, float]:
    """``(low, high)``, each moved to the selected end when that one is more
    inward (the histogram may stop a part beyond the mass) and may be used
    (:func:`_selected_end`); the selection is spent in every case.  ``parts``
    and ``counts`` are the end cells cut by the column's ``step`` (an integer,
    a day: :func:`_lattice_step`) and their exact counts."""
    sub, low_part, high_part = parts
    lattice = tuple(_is_lattice(sub, part, found.total, selection, step)
                    for part in (low_part, high_part))
    in_cell = tuple(end or _coarse_parts(sub, part, step)
                    for end, part in zip(lattice, (low_part, high_part)))
    low_candidates, high_candidates = _end_candidates(grid, found, sub, low_part, high_part,
                                                      in_cell)
    # the span of the penalty: from the low limit's cell to the high limit's
    # (the learned range less the quiet cells the selection may remove), at
    # least half the learned range (a long thin tail would otherwise shrink the
    # scale of its own penalty and be clipped whole)
    low_limit, high_limit = found.inward_limits
    width = max(grid.right[high_limit] - grid.left[low_limit],
                _SPAN_FLOOR * (found.high - found.low), 1.0)
    # an integer lattice end pulls per integer of what its end cells enclose
    lattice_prior = _RANGE_PRIOR * max(width / _enclosed_span(grid, found, low, high), 1.0)
    chosen = _select_ends(counts, low_candidates, high_candidates, sub, width, selection,
                          target=f"range of {name!r}: bounds",
                          cell_edges=(grid.right[found.low_cell], grid.left[found.high_cell]),
                          priors=tuple(lattice_prior if end and step == 1.0 else _ACROSS_PRIOR
                                       for end in lattice),
                          aims=tuple(_DAY_AIM * _selection_unit(selection)
                                     if end and step == _DAY else 0.0 for end in lattice))
    if not _selected_end(found.total, selection):
        return low, high
    # an aimed end (a datetime lattice) is used whatever its neighbour shows: the
    # aim already weighs the rows past it, and a year of noise above two standard
    # deviations would otherwise keep the year's edge a day past the data
    reaches = [count > _OUTSIDE_EVIDENCE * sigma_cell and not (end and step == _DAY)
               for count, end in zip(found.outside, lattice)]
    if not reaches[0]:
        low = max(low, sub.left[low_candidates[chosen[0]]])
    if not reaches[1]:
        high = min(high, sub.right[high_candidates[chosen[1]]])
    return low, high


def _enclosed_span(grid: _Grid, found: _Range, low: float, high: float) -> float:
    """The span over which a lattice end cell's pull ``_RANGE_PRIOR`` is spread.

    From the inner edge of the low end cell to that of the high one (the
    range the selected bounds keep whatever they clip: days of the month
    [1.5, 30), not the cells' outer edges [1, 40)), at least
    ``_RANGE_PRIOR / _LATTICE_STEP_PULL`` integers; when both ends lie in one
    cell, the histograms' bounds ``low`` and ``high`` (a constant year in
    the cell [2000, 2500) spans one integer, not 500), at least 1.  Reads the
    public grid and noisy outputs only, so the selection's sensitivity stays
    1."""
    if found.low_cell == found.high_cell:
        return max(high - low, 1.0)
    return max(grid.left[found.high_cell] - grid.right[found.low_cell],
               _RANGE_PRIOR / _LATTICE_STEP_PULL)


def _coarse_parts(sub: _Grid, parts: np.ndarray, step: float) -> bool:
    """Whether an end cell's parts are wider than ``step`` (an integer cell
    holding more than ``_INTEGER_SUBCELLS`` integers, cut in 50 parts; a
    datetime cell of more than that many days, in 12)."""
    return bool(np.all(sub.right[parts] - sub.left[parts] > step))


def _is_lattice(sub: _Grid, parts: np.ndarray, total: float, selection: _Budget,
                step: float) -> bool:
    """Whether the selection chooses among the sub-cell edges of an end cell, with
    the strong pull ``_RANGE_PRIOR``: a cell cut one part per integer (a
    lattice such as days of the month, whose last value the pull finds) of a
    column whose noisy number of values is at least ``_LATTICE_ROWS`` noise
    units of the selection (a part the pull clips then holds less than about
    ``1 / _LATTICE_ROWS`` of the rows).  Else the selection only moves the
    bound inward past whole cells, pulled by ``_ACROSS_PRIOR``.  Reads the
    learned cells and noisy counts only."""
    one_step = bool(np.all(sub.right[parts] - sub.left[parts] <= step))
    return one_step and total >= _LATTICE_ROWS * _selection_unit(selection)


def _selected_end(total: float, selection: _Budget) -> bool:
    """Whether a selected end is used: when the column's noisy number of values
    (the sum of its noisy blocks) is at least ``_SELECTION_ROWS`` noise units
    of the selection (``2 / epsilon``), so that a part the selection's pull
    towards the data clips holds less than about ``1 / _SELECTION_ROWS`` of
    the rows."""
    return total >= _SELECTION_ROWS * _selection_unit(selection)


def _selection_unit(selection: _Budget) -> float:
    """The noise unit of the selection of the bounds, ``2 / epsilon`` (sensitivity
    1): its odds are ``exp(score / unit)``."""
    return 2.0 / exponential_epsilon(selection.rho_per_column)


def _lattice_step(series: pd.Series) -> float | None:
    """The lattice a column's values lie on, from its dtype alone: 1 for an
    integer column, a day (in seconds) for a datetime column, None for a
    float column (which selects no bounds)."""
    if is_integer(series):
        return 1.0
    return _DAY if column_kind(series) == "datetime" else None


def _subcell_budget(budget: _Budget, series: pd.Series) -> _Budget:
    """The budget of a column's sub-cell histogram: the third level's share, of
    which an integer or datetime column spends only
    ``_SUBCELL_HISTOGRAM_SHARE`` (the rest on the selection of its bounds)."""
    selects = _lattice_step(series) is not None
    return budget.part(_LEVEL_SHARES[2] * (_SUBCELL_HISTOGRAM_SHARE if selects else 1.0))


def _selection_budget(budget: _Budget, series: pd.Series) -> _Budget | None:
    """The budget of an integer or datetime column's selection of its bounds
    (from its dtype alone); None for a float column, which selects none."""
    if _lattice_step(series) is None:
        return None
    return budget.part(_LEVEL_SHARES[2]).part(1 - _SUBCELL_HISTOGRAM_SHARE)


def _select_ends(counts: np.ndarray, low_part: np.ndarray, high_part: np.ndarray,
                 sub: _Grid, width: float, budget: _Budget, target: str,
                 cell_edges: tuple[float, float], priors: tuple[float, float],
                 aims: tuple[float, float]) -> tuple[int, int]:
    """The candidates (indices into ``low_part`` and ``high_part``) the bounds
    end at, chosen together by one exponential mechanism.

    ``low_part`` and ``high_part`` index parts of ``sub`` (:func:`_end_candidates`):
    sub-cells of the end cells and whole cells inward of them.  A candidate
    is a pair: a low bound at the left edge of a low part and a high bound
    at the right edge of a high part, the first below the second.  Its score
    is minus the rows it clips (exact counts below the low bound and from the
    high bound on; with ``aims``, minus ``|clipped - aim|`` per end, the
    rows each end aims at clipping, public) minus a public penalty, in noise units ``2 / epsilon``
    (nats of the mechanism's odds) per ``width`` (the span between the
    innermost candidates' cells, at least half the learned range, from noisy
    counts only) of distance outward: ``priors``
    (one per end) within its end cell, ``_ACROSS_PRIOR`` across the cells
    inward of ``cell_edges`` (the end cells' inner edges), and ``log m`` more for each of the ``m``
    candidates inside an end cell (:func:`_shared_weight`).  Among bounds
    that clip the same rows (every empty part beyond the data) the one
    nearest the data wins: a bound lies ``f * width`` beyond the last value
    with odds about ``exp(-prior * f)``; it moves outward past a gap only
    when the rows beyond outweigh the gap's penalty.

    Privacy: adding or removing a row changes the clipped count of every
    candidate by at most 1 (a row lies below the low bound or above the high
    one, never both), and so ``|clipped - aim|`` of at most one end by at
    most 1 (triangle inequality), so the score's sensitivity is 1; the aims,
    the penalty, the
    candidates and ``width`` are read from the public grid and the noisy
    counts already released (post-processing), never from the exact
    counts; the mechanism is charged in the ledger at its zCDP cost
    (:func:`~sklearn_dpsynth.privacy.exponential_epsilon`), whatever it
    picks and whether its pick is used.
    """
    noise = _selection_unit(budget)
    below = np.concatenate([[0.0], np.cumsum(counts)])  # below[k]: rows in sub-cells < k
    unit = noise / width  # a noise unit per span
    low_edges, high_edges = sub.left[low_part], sub.right[high_part]
    inner_low, inner_high = cell_edges
    low_score = -(np.abs(below[low_part] - aims[0])
                  + unit * _outward(inner_low - low_edges, low_edges[-1] - inner_low, priors[0]))
    high_score = -(np.abs(below[-1] - below[high_part + 1] - aims[1])
                   + unit * _outward(high_edges - inner_high, inner_high - high_edges[0],
                                     priors[1]))
    # an end cell weighs as much as one cell edge inward
    low_score -= noise * _shared_weight(low_edges < inner_low)
    high_score -= noise * _shared_weight(high_edges > inner_high)
    pairs_low, pairs_high = np.meshgrid(np.arange(low_part.size), np.arange(high_part.size),
                                        indexing="ij")
    valid = low_edges[pairs_low] < high_edges[pairs_high]
    pairs_low, pairs_high = pairs_low[valid], pairs_high[valid]
    chosen = budget.share.select(low_score[pairs_low] + high_score[pairs_high],
                                 rho=budget.rho_per_column, rng=budget.rng, target=target,
                                 sensitivity=1.0)
    return int(pairs_low[chosen]), int(pairs_high[chosen])


def _shared_weight(in_cell: np.ndarray) -> np.ndarray:
    """``log(m)`` for each of the ``m`` candidates inside the end cell, 0 for the
    others: the selection's odds (``exp(score / noise unit)``) of the end
    cell's ``m`` sub-cell edges add up to those of one cell edge, so that the
    many sub-cells of an empty end cell do not outweigh the cells inward."""
    return np.where(in_cell, math.log(max(int(in_cell.sum()), 1)), 0.0)


def _outward(in_cell: np.ndarray, across: float, prior: float) -> np.ndarray:
    """The selection's penalty, in noise units per span, of bounds lying
    ``in_cell`` outward of their end cell's inner edge (negative: inward of it,
    across cells): ``prior`` per range within the end cell, and
    ``_ACROSS_PRIOR`` per range across the ``across`` (at least 0) of cells
    inward of it."""
    inside = np.maximum(in_cell, 0.0)
    return prior * inside + _ACROSS_PRIOR * (np.minimum(in_cell, 0.0) + across)


def _private_categories(name, series, budget: _Budget, max_categories: int,
                        observed: tuple[list, np.ndarray]) -> tuple[ColumnSpec, str]:
    """Categories kept by a thresholded histogram; ``(spec, outcome)``.

    ``observed`` holds the present values and their exact counts (observed
    values only: a Categorical's unused categories are not candidates).
    The outcome is ``"found"`` when some value is kept; else ``"long tail"``
    when the noisy number of present values is at least ``_LONG_TAIL_RATIO``
    times :func:`_surely_kept` (the column is modelled as ``"<other>"``
    alone), ``"none"`` otherwise.  Both releases happen for every column,
    whatever the data, and the outcome reads their noisy outputs only.
    """
    values, counts = observed
    histogram = budget.categorical()
    keep = histogram.thresholded_histogram(counts, target=f"categories of {name!r}")
    present = budget.noisy_present_count(counts.sum(), target=f"present values of {name!r}")
    categories = sorted((values[i] for i in keep[:max_categories]), key=str)
    spec = ColumnSpec(name, "categorical", categories=categories, other=True,
                      missing=can_hold_missing(series))
    if categories:
        return spec, "found"
    return spec, "long tail" if present >= _LONG_TAIL_RATIO * _surely_kept(histogram) else "none"


def _surely_kept(histogram: _Budget) -> float:
    """A count kept with probability about 98% by ``histogram``'s selection: its
    threshold plus ``_KEPT_MARGIN`` noise standard deviations (public)."""
    return histogram.threshold + _KEPT_MARGIN * histogram.sigma


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
                     n_bins: int, max_categories: int, table: Any,
                     lenient: bool) -> tuple[dict, list, dict, list]:
    """Specs of ``todo``, the columns with no signal, ``{column: cell}`` of those
    learned inside one of the two grid cells at 0 (the cell as text) and the
    categorical columns modelled as ``"<other>"`` alone (long-tailed).

    Raises
    ------
    DomainInferenceError
        Unless ``lenient``, when a column has no signal: after the blocks,
        cells and categories of every column are measured, before the
        sub-cells are.
    """
    specs, no_signal, found, grids, long_tail = {}, [], {}, {}, []
    counts = _exact_histograms(frame, todo, table)
    for name in todo:
        series = frame[name]
        if column_kind(series) == "categorical":
            specs[name], kept = _private_categories(name, series, budget, max_categories,
                                                    counts[name])
            if kept == "none":
                no_signal.append(name)
            elif kept == "long tail":
                long_tail.append(name)
            continue
        grids[name] = _grid_of(series)
        found[name] = _coarse_range(name, grids[name], budget, counts[name],
                                    _lattice_step(series) is None)
        if not found[name].signal:
            no_signal.append(name)
    if no_signal and not lenient:
        raise DomainInferenceError(_refusal(no_signal, budget))
    at_zero = {}
    for name, learned in _refined_ranges(found, grids, budget, table, frame).items():
        low, high = learned.low, learned.high
        scale = "auto"
        if learned.signal:
            low, high = _integer_range(frame[name], low, high)
            scale = _learned_scale(low, high)
            if _at_zero(grids[name], learned):
                at_zero[name] = _as_text(frame[name], learned.low, learned.high)
        specs[name] = _numeric_spec(name, frame[name], low, high, n_bins, scale)
    return specs, no_signal, at_zero, long_tail


def _integer_range(series: pd.Series, low: float, high: float) -> tuple[float, float]:
    """For an integer column, the first and last integers of the learned cells
    (each cell is ``[left, right)``: its last integer is ``ceil(right) - 1``;
    the two are equal for a column learned to one integer)."""
    if not is_integer(series):
        return low, high
    first, last = math.ceil(low), math.ceil(high) - 1
    return (float(first), float(last)) if last >= first else (low, high)


def _at_zero(grid: _Grid, learned: _Range) -> bool:
    """Whether the bounds lie in one of the two grid cells that touch 0."""
    cell = grid.cell_of(np.array([learned.low]))[0]
    touches = grid.left[cell] == 0 or grid.right[cell] == 0
    return bool(touches and learned.high <= grid.right[cell])


def _as_text(series: pd.Series, low: float, high: float) -> str:
    """``[low, high]``, as dates for a datetime column."""
    if column_kind(series) == "datetime":
        low, high = (pd.Timestamp(v, unit="s").date() for v in (low, high))
        return f"[{low}, {high}]"
    return f"[{low:g}, {high:g}]"


def _refusal(no_signal: list, budget: _Budget) -> str:
    """The message of the :class:`DomainInferenceError` naming ``no_signal``."""
    ledger = budget.share.root
    spent, _ = ledger.spent()
    return (
        f"private domain learning found no signal above the noise for column(s) "
        f"{no_signal} (no category kept, or no numeric range whose noisy count clears the "
        f"noise), so the fit stops before measuring anything else: epsilon={spent:.4g} of "
        f"the budget epsilon={ledger.epsilon:g} is spent, on domain learning only "
        f"({_costs(budget)}). Declare these columns with domain= (dpsynth "
        "fit --domain; 'dpsynth describe' or describe_domain drafts a declaration to "
        "edit down to public knowledge), or give more budget (epsilon, "
        "preprocessing_budget) or rows; preprocessing='private-lenient' (--param "
        "preprocessing=private-lenient) fits anyway, with these columns carrying no "
        "information.")


def _costs(budget: _Budget) -> str:
    """What each learned column spent, and its noise (data-independent)."""
    histogram = budget.categorical()
    sigmas = [budget.sigma * share ** -0.5 for share in _LEVEL_SHARES]
    return (f"zCDP rho={budget.rho_per_column:.3g} per numeric or datetime column, noise "
            f"standard deviation {min(sigmas):.3g} to {max(sigmas):.3g} per count; "
            f"rho={budget.rho_per_column * _CATEGORICAL_WEIGHT:.3g} per categorical column, "
            f"whose categories need a noisy count of {histogram.threshold} to be kept")


def _warn_weak_signal(no_signal: list, one_cell: dict, budget: _Budget,
                      long_tail: Sequence[Hashable] = ()) -> None:
    """One warning per fit for the columns whose learned domain the noise swamped."""
    parts = []
    if long_tail:
        parts.append(
            f"private domain inference kept no category of column(s) {list(long_tail)}, "
            f"although they hold more than {_LONG_TAIL_RATIO} times the noisy count a "
            "category needs to be kept: they look identifier-like or long-tailed (no "
            f"value holds more than about 1/{_LONG_TAIL_RATIO} of their values), so every "
            "value maps to '<other>' and their synthetic values carry no information; "
            "drop them or declare their categories.")
    if no_signal:
        grid = _numeric_grid()
        parts.append(
            f"preprocessing='private-lenient': private domain inference found no signal "
            f"above the noise for column(s) {no_signal}: their numeric bounds fell back to "
            f"the whole public grid (e.g. [{grid.left[0]:g}, {grid.right[-1]:g}]) and no "
            "category was kept (all map to '<other>'), so their synthetic values carry no "
            "information.")
    if one_cell:
        bounds = ", ".join(f"{name!r}: {cell}" for name, cell in one_cell.items())
        parts.append(
            f"private domain inference found signal at 0 only for column(s) "
            f"{list(one_cell)} ({bounds}): any values away from 0 (e.g. the non-zero "
            "amounts of a zero-inflated column) were below the noise and are clipped into "
            "that range.")
    if parts:
        warnings.warn(
            " ".join(parts) + f" Spent: {_costs(budget)}. Declare these "
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
    frame : pandas.DataFrame or backends.TableSource
        The private table (see :func:`~sklearn_dpsynth.backends.open_source`),
        read only through its schema and its exact histograms
        (``range_counts_many``, ``category_counts_many``: one pass per kind
        in an engine).
    declared : mapping or None
        Public entries ``{column: entry}``; see
        :func:`~sklearn_dpsynth.domain.spec_from_declaration`.
    n_bins : int, default=32
        Uniform bins for numeric columns.
    preprocessing : {"private", "private-lenient", "non-private"}, default="private"
        How undeclared columns are learned: privately, refusing columns
        without signal (:class:`~sklearn_dpsynth.exceptions.DomainInferenceError`)
        or, with ``"private-lenient"``, falling back to the whole public grid
        for them with a warning; or read from the data.
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

    Raises
    ------
    DomainInferenceError
        With ``preprocessing="private"``, naming the privately learned
        columns whose noisy histograms carried no signal, before anything
        else is measured.

    Warns
    -----
    DomainInferenceWarning
        Once, naming the columns learned in a grid cell touching 0, the
        categorical columns modelled as ``"<other>"`` alone (no category
        kept, many values: identifier-like or long-tailed) and, with
        ``preprocessing="private-lenient"``, those without signal (see the
        module docstring for their fallback).
    """
    table = open_source(frame)
    frame = table.schema_frame()  # column kinds come from the dtypes alone
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
    if preprocessing not in PRIVATE_MODES + ("non-private",):
        raise ValueError(f"preprocessing must be one of {PRIVATE_MODES + ('non-private',)}, "
                         f"got {preprocessing!r}.")
    if todo and preprocessing == "non-private":
        rows = table.rows_in_memory()
        if rows is None:
            raise ValueError(f"preprocessing='non-private' reads a table in memory; for "
                             f"{type(table).__name__} input declare columns {todo} with "
                             "domain= or learn them privately.")
        _warn_nonprivate(frame, todo)
        for name in todo:
            specs[name] = _nonprivate_spec(name, rows[name], n_bins, max_categories)
    elif todo:
        if budget is None or rng is None or budget.rho <= 0 or budget.delta <= 0:
            raise ValueError(
                f"columns {todo} have no declared domain: declare them with domain=, "
                "give a privacy budget to learn them, or set preprocessing='non-private'.")
        n_categorical = sum(column_kind(frame[c]) == "categorical" for c in todo)
        weights = len(todo) + (_CATEGORICAL_WEIGHT - 1) * n_categorical
        spender = _Budget(budget, rng, budget.rho / weights,
                          budget.delta / max(n_categorical, 1))
        learned, no_signal, one_cell, long_tail = _learn_privately(
            frame, todo, spender, n_bins, max_categories, table,
            lenient=preprocessing == "private-lenient")
        specs.update(learned)
        _warn_weak_signal(no_signal, one_cell, spender, long_tail)
    return Domain([specs[name] for name in frame.columns])
