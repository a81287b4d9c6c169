"""Exact, seeded, vectorised samplers for the library's privacy noise.

Every sampler here draws only integers from a :class:`numpy.random.Generator`
(``rng.integers``, ``rng.permutation``; never ``rng.random`` or
``rng.normal``) and computes only with integers and fractions: the law of what
it returns is exactly the one stated, with no floating-point rounding on the
sampling path.  This matters for privacy: floating-point noise leaks through
the low bits of its result (an empty cell plus float Gaussian noise does not
round like a cell of count one plus the same noise), which voids the
guarantee; an integer drawn exactly cannot.

The algorithms are those of Canonne, Kamath & Steinke, "The Discrete
Gaussian for Differential Privacy" (NeurIPS 2020): Bernoulli(exp(-gamma))
from Bernoulli(gamma / k) draws, the discrete Laplace by rejection from a
uniform and a geometric, and the discrete Gaussian by rejection from the
discrete Laplace.  They run on numpy ``int64`` arrays, element-wise in
lockstep, with every product asserted below ``2**62``; the rare elements (and
the extreme scales) whose integers would not fit go through the same
algorithms written with Python integers, which is slow but exact.

Selection (:func:`exponential_choice`, :func:`permute_and_flip_choice`)
rounds the float scores down to a public grid and samples the exact law on
that grid; see their docstrings for what the grid costs.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral

import numpy as np

__all__ = [
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_gaussian_tail",
    "discrete_gaussian_variance",
    "exponential_choice",
    "permute_and_flip_choice",
]

#: Every integer the vectorised path forms stays strictly below this.
_INT64_BOUND = 2**62
#: Relative excess of the discrete Gaussian's variance over ``sigma**2``:
#: below ``2**-VARIANCE_BITS``.
VARIANCE_BITS = 24
#: The acceptance exponent's numerator ``e**2`` needs ``|e| < 2**31``.
_EXPONENT_ROOT_BOUND = 2**31
#: Selection grid: scores are rounded down to multiples of
#: ``sensitivity * 2**-GRID_BITS``.
GRID_BITS = 10
#: Selection epsilons are rounded down to this many significant bits.
EPSILON_BITS = 30
#: Outputs the vectorised discrete Gaussian draws per round.
_CHUNK = 2**16
#: Larger noise scales are refused: their draws could leave int64.
_LARGEST_SIGMA = 2**50
#: ``20!``: one draw below it decides Bernoulli(exp(-1)) for almost every
#: element (see :func:`_bernoulli_exp_one`).
_FACTORIAL_20 = math.factorial(20)
#: ``20! / k!`` for ``k = 20, 19, ..., 1`` (ascending).
_EXP1_THRESHOLDS = np.array(
    [_FACTORIAL_20 // math.factorial(k) for k in range(20, 0, -1)], dtype=np.int64)


# --------------------------------------------------------------------------
# Python-integer primitives (exact at any size; the fallback path)
# --------------------------------------------------------------------------

def _uniform_below(bound: int, rng: np.random.Generator) -> int:
    """One uniform integer in ``[0, bound)``, for a Python int of any size."""
    if bound <= _INT64_BOUND:
        return int(rng.integers(0, bound))
    bits = (bound - 1).bit_length()
    chunks = -(-bits // 62)
    while True:  # uniform on [0, 2**bits), accepted below bound (rate > 1/2)
        value = 0
        for chunk in rng.integers(0, _INT64_BOUND, size=chunks):
            value = (value << 62) | int(chunk)
        value >>= chunks * 62 - bits
        if value < bound:
            return value


def _bernoulli_exp_fraction_python(numerator: int, denominator: int,
                                   rng: np.random.Generator) -> bool:
    """Bernoulli(exp(-n/d)) for Python ints ``0 <= n <= d`` (CKS 2020, Alg. 1)."""
    k = 1
    while _uniform_below(denominator * k, rng) < numerator:
        k += 1
    return k % 2 == 1


def _bernoulli_exp_python(numerator: int, denominator: int,
                          rng: np.random.Generator) -> bool:
    """Bernoulli(exp(-n/d)) for Python ints ``n >= 0, d > 0`` of any size."""
    whole, rest = divmod(numerator, denominator)
    if not _bernoulli_exp_fraction_python(rest, denominator, rng):
        return False
    for _ in range(whole):  # ends at the first failure: ~1.6 rounds expected
        if not _bernoulli_exp_fraction_python(1, 1, rng):
            return False
    return True


def _discrete_laplace_python(scale: int, rng: np.random.Generator) -> int:
    """One draw of the discrete Laplace with integer scale (CKS 2020, Alg. 2)."""
    while True:
        uniform = _uniform_below(scale, rng)
        if not _bernoulli_exp_fraction_python(uniform, scale, rng):
            continue
        geometric = 0
        while _bernoulli_exp_fraction_python(1, 1, rng):
            geometric += 1
        magnitude = uniform + scale * geometric
        negative = _uniform_below(2, rng) == 1
        if negative and magnitude == 0:
            continue
        return -magnitude if negative else magnitude


def _discrete_gaussian_python(variance: Fraction, scale: int, count: int,
                              rng: np.random.Generator) -> np.ndarray:
    """``count`` draws of N_Z(0, variance) with Python ints (CKS 2020, Alg. 3).

    Proposals are discrete Laplace of scale ``scale`` (any ``scale > 0`` is
    exact; ``floor(sigma) + 1`` is fast).  Slow (tens of microseconds a
    draw) but exact for every variance; used where the ``int64`` path's
    bounds do not hold, and by the tests.
    """
    draws = []
    while len(draws) < count:
        candidate = _discrete_laplace_python(scale, rng)
        exponent = (abs(candidate) - variance / scale) ** 2 / (2 * variance)
        if _bernoulli_exp_python(exponent.numerator, exponent.denominator, rng):
            draws.append(candidate)
    return np.array(draws, dtype=np.int64)


# --------------------------------------------------------------------------
# Vectorised int64 primitives
# --------------------------------------------------------------------------

def _bernoulli_ratio(numerator: np.ndarray, denominator, k: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(n / (d k)) element-wise, for ``0 <= n <= d < 2**62``.

    One draw below ``d k`` when that fits; otherwise the exact equivalent
    ``[uniform below k is 0] and [uniform below d < n]`` (as ``n <= d``).
    """
    size = numerator.shape[0]
    if isinstance(denominator, np.ndarray):
        if int(denominator.max()) * k < _INT64_BOUND:
            return rng.integers(0, denominator * k) < numerator
        return (rng.integers(0, k, size=size) == 0) & (rng.integers(0, denominator) < numerator)
    if denominator * k < _INT64_BOUND:
        return rng.integers(0, denominator * k, size=size) < numerator
    return ((rng.integers(0, k, size=size) == 0)
            & (rng.integers(0, denominator, size=size) < numerator))


def _bernoulli_exp_fraction(numerator: np.ndarray, denominator,
                            rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-n/d)) element-wise for int64 ``0 <= n <= d < 2**62``.

    CKS 2020, Algorithm 1, all elements in lockstep: at round ``k`` every
    element still running draws ``A ~ Bernoulli(n / (d k))``; an element
    stops at the first ``A = 0`` and returns whether ``k`` is odd.  A round
    keeps about ``n/(d k)`` of the elements, so few rounds run.
    """
    per_element = isinstance(denominator, np.ndarray)
    if not per_element:
        denominator = int(denominator)
    going = _bernoulli_ratio(numerator, denominator, 1, rng)
    result = ~going  # stopped at k = 1 (odd): True
    index = going.nonzero()[0]
    numerator = numerator[index]
    if per_element:
        denominator = denominator[index]
    k = 2
    while index.size:
        going = _bernoulli_ratio(numerator, denominator, k, rng)
        if k % 2:
            result[index[~going]] = True
        index = index[going]
        numerator = numerator[going]
        if per_element:
            denominator = denominator[going]
        k += 1
    return result


def _bernoulli_exp_one(size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of Bernoulli(exp(-1)), one integer draw each (almost).

    Algorithm 1 at ``gamma = 1`` stops at the first ``k`` with
    ``A_k ~ Bernoulli(1/k)`` failing and returns ``k`` odd;
    ``P(K > k) = 1/k!``.  With ``U`` uniform below ``20!`` the events
    ``U < 20!/k!`` (``k <= 20``) are nested with exactly those
    probabilities, so ``K = min{k : U >= 20!/k!}``; only ``U = 0``
    (probability ``1/20!``) runs on with Bernoulli(1/k) rounds from
    ``k = 21``.
    """
    uniform = rng.integers(0, _FACTORIAL_20, size=size)
    over_2, over_6 = _FACTORIAL_20 // 2, _FACTORIAL_20 // 6  # 20!/2!, 20!/3!
    result = (uniform < over_2) & (uniform >= over_6)  # K = 3 (K = 2 from 20!/2! up)
    rare = (uniform < over_6).nonzero()[0]  # K >= 4, probability 1/6
    if not rare.size:
        return result
    # the number of thresholds 20!/k! (k = 20..1) that are <= U is 21 - K
    passed = np.searchsorted(_EXP1_THRESHOLDS, uniform[rare], side="right")
    result[rare] = (passed % 2) == 0  # K = 21 - passed is odd
    tail = rare[passed == 0]
    k = 21
    while tail.size:
        going = rng.integers(0, k, size=tail.size) == 0
        if k % 2:
            result[tail[~going]] = True
        else:
            result[tail[~going]] = False
        tail = tail[going]
        k += 1
    return result


def _all_exp_one(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Whether ``counts[i]`` independent Bernoulli(exp(-1)) draws all succeed."""
    result = np.ones(counts.shape[0], dtype=bool)
    index = (counts > 0).nonzero()[0]
    remaining = counts[index]
    while index.size:
        success = _bernoulli_exp_one(index.size, rng)
        result[index[~success]] = False
        remaining = remaining[success] - 1
        index = index[success]
        left = remaining > 0
        index = index[left]
        remaining = remaining[left]
    return result


def _bernoulli_exp_int64(numerator: np.ndarray, denominator,
                         rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-n/d)) for int64 ``n >= 0``, ``0 < d < 2**62``.

    ``n/d = m + r/d`` exactly (``m = n // d``); the draw is
    Bernoulli(exp(-r/d)) and ``m`` Bernoulli(exp(-1)), all succeeding.
    """
    whole = numerator // denominator
    rest = numerator - whole * denominator
    result = _bernoulli_exp_fraction(rest, denominator, rng)
    index = (result & (whole > 0)).nonzero()[0]
    if index.size:
        result[index] = _all_exp_one(whole[index], rng)
    return result


def _geometric_exp_one(size: int, rng: np.random.Generator) -> np.ndarray:
    """Successes of Bernoulli(exp(-1)) before the first failure, ``size`` times."""
    counts = np.zeros(size, dtype=np.int64)
    index = np.arange(size)
    while index.size:
        index = index[_bernoulli_exp_one(index.size, rng)]
        counts[index] += 1
    return counts


def _discrete_laplace_batch(scale: int, proposals: int,
                            rng: np.random.Generator) -> np.ndarray:
    """I.i.d. discrete Laplace draws, ``P(y) ∝ exp(-|y|/scale)``, from ``proposals`` tries.

    CKS 2020, Algorithm 2, vectorised: ``U`` uniform below ``scale`` kept
    with probability ``exp(-U/scale)``, ``V`` geometric, ``X = U + scale
    V``, a sign bit, and ``-0`` rejected.  Returns the accepted draws (about
    ``0.63 proposals`` for large scales), which are i.i.d.
    """
    uniform = rng.integers(0, scale, size=proposals)
    uniform = uniform[_bernoulli_exp_fraction(uniform, scale, rng)]
    magnitude = uniform + scale * _geometric_exp_one(uniform.size, rng)
    negative = rng.integers(0, 2, size=magnitude.size, dtype=np.bool_)
    np.negative(magnitude, out=magnitude, where=negative)
    negative_zero = negative & (magnitude == 0)
    if negative_zero.any():
        magnitude = magnitude[~negative_zero]
    return magnitude


def _discrete_laplace(scale: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Exactly ``size`` i.i.d. discrete Laplace draws (the first accepted ones).

    The discrete Gaussian consumes :func:`_discrete_laplace_batch` directly;
    this fixed-size form is the one whose law the tests check.
    """
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        wanted = size - filled
        draws = _discrete_laplace_batch(scale, 2 * wanted + 16, rng)
        taken = min(draws.size, wanted)
        out[filled:filled + taken] = draws[:taken]
        filled += taken
    return out


# --------------------------------------------------------------------------
# The discrete Gaussian
# --------------------------------------------------------------------------

def _check_sigma(sigma: float) -> Fraction:
    if isinstance(sigma, bool) or not isinstance(sigma, (float, int, np.floating, np.integer)):
        raise TypeError(f"sigma must be a real number, got {type(sigma).__name__}.")
    sigma = float(sigma)
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be finite and > 0, got {sigma!r}.")
    return Fraction(sigma)


def _laplace_scale(variance: Fraction) -> int:
    """``floor(sqrt(variance)) + 1``, exactly (CKS 2020's ``t``)."""
    return math.isqrt(variance.numerator // variance.denominator) + 1


@dataclass(frozen=True)
class _GaussianPlan:
    """The integers of one discrete Gaussian: ``variance = scale * level / grid``.

    ``scale`` is the discrete Laplace scale ``t = floor(sigma) + 1``,
    ``grid`` a power of two ``q`` and ``level`` the integer ``C``.  The
    acceptance exponent of a proposal ``y`` is
    ``(|y| - variance/t)**2 / (2 variance) = (q|y| - C)**2 / (2 q t C)``.
    ``fits_int64`` says whether the vectorised path may run; it then
    computes the exponent of ``|y| <= max_magnitude`` in int64.  A larger
    ``|y|`` has exponent at least :attr:`outside_whole` (the exponent grows
    beyond ``variance/t``), so its Bernoulli(exp(-exponent)) is drawn as that
    many vectorised Bernoulli(exp(-1)) draws and, for the rare survivors,
    Bernoulli(exp(-rest)) in Python ints: the product of independent draws.
    """

    variance: Fraction
    scale: int
    grid: int
    level: int
    denominator: int
    max_magnitude: int
    fits_int64: bool

    @classmethod
    @functools.lru_cache(maxsize=256)
    def for_sigma(cls, sigma: float) -> "_GaussianPlan":
        """The plan of ``sigma`` (cached: fits call it once per marginal)."""
        sigma_squared = _check_sigma(sigma) ** 2
        scale = _laplace_scale(sigma_squared)
        # smallest grid = 2**k (k >= 0) with grid * sigma**2 >= 2**24 * scale,
        # so that the rounding up of level costs < 2**-24 of sigma**2
        target = Fraction(2**VARIANCE_BITS * scale) / sigma_squared
        grid = 1 if target <= 1 else 2 ** (math.ceil(target) - 1).bit_length()
        level = math.ceil(sigma_squared * grid / scale)
        variance = Fraction(scale * level, grid)
        denominator = 2 * grid * scale * level
        # |q y - C| < 2**31 for |y| <= max_magnitude, so its square is < 2**62
        max_magnitude = (_EXPONENT_ROOT_BOUND - 1 + level) // grid
        plan = cls(variance, scale, grid, level, denominator, max_magnitude, False)
        if (denominator < _INT64_BOUND and level < _EXPONENT_ROOT_BOUND
                and plan.outside_whole >= 16):
            # the int64 path's bounds, derived above, checked
            assert abs(grid * max_magnitude - level) < _EXPONENT_ROOT_BOUND
            assert scale < 2**40  # so U + scale * V stays far inside int64
            plan = dataclasses.replace(plan, fits_int64=True)
        return plan

    @property
    def outside_whole(self) -> int:
        """``floor`` of the smallest exponent of a ``|y| > max_magnitude``.

        ``(q (max_magnitude + 1) - C) > 0``, and the exponent increases with
        ``|y|`` from there on.
        """
        root = self.grid * (self.max_magnitude + 1) - self.level
        assert root > 0
        return root * root // self.denominator

    def accept(self, proposals: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Bernoulli(exp(-(|y| - variance/t)**2 / (2 variance))) for each proposal."""
        magnitude = np.abs(proposals)
        inside = magnitude <= self.max_magnitude
        result = np.empty(proposals.shape[0], dtype=bool)
        if inside.all():
            result = self._accept_int64(magnitude, rng)
        else:
            result[inside] = self._accept_int64(magnitude[inside], rng)
            outside = (~inside).nonzero()[0]
            whole = self.outside_whole
            survived = _all_exp_one(np.full(outside.size, whole, dtype=np.int64), rng)
            result[outside] = False
            for position in outside[survived]:
                root = self.grid * int(magnitude[position]) - self.level
                result[position] = _bernoulli_exp_python(
                    root * root - whole * self.denominator, self.denominator, rng)
        return result

    def _accept_int64(self, magnitude: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        root = self.grid * magnitude - self.level
        return _bernoulli_exp_int64(root * root, self.denominator, rng)


def discrete_gaussian_variance(sigma: float) -> Fraction:
    """The variance parameter that :func:`discrete_gaussian` samples with.

    It is ``t * C / q`` with ``t = floor(sigma) + 1``, ``q`` the smallest
    power of two (at least 1) with ``q * sigma**2 >= 2**24 * t`` and
    ``C = ceil(q * sigma**2 / t)``: the smallest value of that grid that is
    ``>= sigma**2`` (``sigma`` is taken exactly, as the binary fraction its
    float is).  Its relative excess over ``sigma**2`` is below ``2**-24``.
    Because it is never below ``sigma**2``, the discrete Gaussian's cost
    ``Delta**2 / (2 s2)`` is at most the ``Delta**2 / (2 sigma**2)`` that a
    ledger records for ``sigma``.

    Parameters
    ----------
    sigma : float
        The requested noise scale, finite and ``> 0``.

    Returns
    -------
    fractions.Fraction
        The variance parameter ``s2 >= sigma**2``, exactly.
    """
    return _GaussianPlan.for_sigma(sigma).variance


def _discrete_gaussian_int64(plan: _GaussianPlan, count: int,
                             rng: np.random.Generator) -> np.ndarray:
    """``count`` draws of N_Z(0, plan.variance) on the vectorised path.

    Works through chunks of ``2**16`` outputs (cache-sized arrays).  Each
    round proposes discrete Laplace draws and keeps the accepted ones, in
    order, up to the number still wanted: accepted draws are i.i.d. with
    the target law, so the batch sizes (tuned on the observed acceptance
    rate) change only the running time.
    """
    out = np.empty(count, dtype=np.int64)
    filled = 0
    rate = 0.45  # outputs per proposal: about 0.63 * 0.76 for large sigma
    proposed = accepted_total = 0
    while filled < count:
        wanted = min(count - filled, _CHUNK)
        batch = int(wanted / rate * 1.05) + 16
        proposals = _discrete_laplace_batch(plan.scale, batch, rng)
        accepted = proposals[plan.accept(proposals, rng)]
        proposed += batch
        accepted_total += accepted.size
        rate = max(accepted_total / proposed, 0.05)
        taken = min(accepted.size, wanted)
        out[filled:filled + taken] = accepted[:taken]
        filled += taken
    return out


def discrete_gaussian(sigma: float, size, rng: np.random.Generator) -> np.ndarray:
    """I.i.d. draws of the discrete Gaussian ``N_Z(0, s2)``, exactly.

    ``P(Z = z) ∝ exp(-z**2 / (2 s2))`` on the integers, with
    ``s2 = discrete_gaussian_variance(sigma) >= sigma**2`` (relative excess
    below ``2**-24``).  Adding it to an integer-valued query of L2
    sensitivity ``Delta`` is ``Delta**2 / (2 s2)``-zCDP (Canonne, Kamath &
    Steinke 2020, Theorem 4 and its multivariate corollary), so at most the
    ``Delta**2 / (2 sigma**2)`` recorded for ``sigma``.

    The sampler is CKS 2020's Algorithm 3 (rejection from the discrete
    Laplace of scale ``floor(sigma) + 1``) in integer arithmetic only,
    vectorised over ``int64`` arrays.  A proposal too far out for ``int64``
    arithmetic (beyond about 30 to 100 sigma for ``0.5 <= sigma <= 2**26``)
    has acceptance exponent at least 16 (in practice hundreds): it is
    rejected by vectorised Bernoulli(exp(-1)) draws and finished in Python
    integers in the rare case they all succeed.  Scales outside the
    ``int64`` path's bounds (``sigma`` below about 0.015 or above about
    ``2**28``) are drawn entirely with Python integers, exactly and slowly.

    Parameters
    ----------
    sigma : float
        Noise scale, finite and ``> 0``.
    size : int or tuple of int
        Shape of the output.
    rng : numpy.random.Generator
        Source of randomness; only its integer output is used, so a seeded
        generator reproduces the draws.

    Returns
    -------
    ndarray of int64, shape ``size``
    """
    plan = _GaussianPlan.for_sigma(sigma)
    if plan.scale > _LARGEST_SIGMA:
        raise ValueError(f"sigma must be at most 2**50 (int64 output), got {sigma!r}.")
    shape = (int(size),) if isinstance(size, Integral) else tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        raise ValueError(f"size must be non-negative, got {size!r}.")
    count = math.prod(shape)
    if plan.fits_int64:
        draws = _discrete_gaussian_int64(plan, count, rng)
    else:
        draws = _discrete_gaussian_python(plan.variance, plan.scale, count, rng)
    return draws.reshape(shape)


def discrete_gaussian_tail(sigma: float, k: int) -> float:
    """An upper bound on ``P(Z >= k)`` for ``Z ~ N_Z(0, s2)``.

    ``s2`` is :func:`discrete_gaussian_variance` of ``sigma`` and
    ``w_j = exp(-j**2 / (2 s2))``.  ``P(Z >= k) = sum_{j >= k} w_j / T``
    with ``T = sum_j w_j``.  The numerator is summed term by term over a
    window of up to ``2**16`` integers and bounded beyond it by a Gaussian
    integral (midpoint rule, an upper bound where ``w`` is convex, i.e.
    beyond ``sqrt(s2)``; otherwise the cruder ``w_end + integral``).  ``T``
    is bounded below by ``sqrt(2 pi s2)`` (Poisson summation: ``T =
    sqrt(2 pi s2) sum_m exp(-2 pi**2 m**2 s2)``, every term positive) and
    by its own window sum.  For ``k <= 0``, ``P(Z >= k) = 1 - P(Z >= 1 - k)``
    with the subtracted part bounded below.  The result is multiplied by
    ``1 + 2**-30`` (the float arithmetic's relative error is below
    ``2**-40`` here) and never returned as 0.  Used for the delta of
    thresholded histograms, where a key is released iff ``count + Z``
    passes a threshold.

    Parameters
    ----------
    sigma : float
        Noise scale, finite and ``> 0``.
    k : int
        The threshold.

    Returns
    -------
    float
        ``>= P(Z >= k)``, in ``(0, 1]``.
    """
    if isinstance(k, bool) or not isinstance(k, Integral):
        raise TypeError(f"k must be an integer, got {type(k).__name__}.")
    variance = float(discrete_gaussian_variance(sigma))
    k = int(k)
    if k >= 1:
        bound = _tail_sum_upper(variance, k) / _total_lower(variance)
    else:
        bound = 1.0 - _tail_sum_lower(variance, 1 - k) / _total_upper(variance)
    return min(1.0, max(bound * (1.0 + 2.0**-30), 5e-324))


#: Most terms a tail bound sums one by one.
_TAIL_WINDOW = 2**16


def _weight(variance: float, j: float) -> float:
    return math.exp(-j * j / (2.0 * variance))


def _gaussian_integral(variance: float, start: float) -> float:
    """``integral_start^inf exp(-x**2 / (2 variance)) dx`` for ``start >= 0``."""
    return math.sqrt(math.pi * variance / 2.0) * math.erfc(start / math.sqrt(2.0 * variance))


def _window_sum(variance: float, start: int) -> tuple[float, int]:
    """``sum_{start <= j < end} w_j`` and ``end``: the window past ``start``."""
    end = start + min(_TAIL_WINDOW, int(40 * math.sqrt(variance)) + 2)
    terms = np.arange(start, end, dtype=float)
    return math.fsum(np.exp(-terms * terms / (2.0 * variance))), end


def _tail_sum_upper(variance: float, start: int) -> float:
    """Upper bound on ``sum_{j >= start} w_j``, ``start >= 1`` (float-rounded)."""
    window, end = _window_sum(variance, start)
    if end - 0.5 >= math.sqrt(variance):  # convex beyond: w_j <= integral over j +- 1/2
        return window + _gaussian_integral(variance, end - 0.5)
    return window + _weight(variance, end) + _gaussian_integral(variance, end)


def _tail_sum_lower(variance: float, start: int) -> float:
    """Lower bound on ``sum_{j >= start} w_j``, ``start >= 1`` (float-rounded).

    Beyond the window ``w`` decreases, so ``w_j >= integral_j^{j+1} w``.
    """
    window, end = _window_sum(variance, start)
    return window + _gaussian_integral(variance, end)


def _total_lower(variance: float) -> float:
    """Lower bound on ``T = sum_j w_j``."""
    return max(math.sqrt(2.0 * math.pi * variance), 1.0 + 2.0 * _tail_sum_lower(variance, 1))


def _total_upper(variance: float) -> float:
    """Upper bound on ``T`` (Poisson summation, or the window bound)."""
    window = 1.0 + 2.0 * _tail_sum_upper(variance, 1)
    ratio = math.exp(-2.0 * math.pi**2 * variance)
    if ratio > 0.5:
        return window
    return min(window, math.sqrt(2.0 * math.pi * variance) * (1.0 + 2.0 * ratio / (1.0 - ratio)))


# --------------------------------------------------------------------------
# Exact Bernoulli(exp(-n/d)), public
# --------------------------------------------------------------------------

def _as_int_array(values, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.dtype == object:
        if not all(isinstance(v, Integral) and not isinstance(v, bool) for v in array.flat):
            raise TypeError(f"{name} must hold integers.")
        return array
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must be an integer array, got dtype {array.dtype}.")
    return array


def _smallest(array: np.ndarray) -> int:
    return int(min(array.flat)) if array.dtype == object else int(array.min())


def _largest(array: np.ndarray) -> int:
    return int(max(array.flat)) if array.dtype == object else int(array.max())


def bernoulli_exp(numerator: np.ndarray, denominator, rng: np.random.Generator) -> np.ndarray:
    """Exact Bernoulli(exp(-n/d)) draws, element-wise.

    For ``n/d`` in ``[0, 1]`` it is Canonne, Kamath & Steinke (2020),
    Algorithm 1; a larger ``n/d = m + r/d`` is ``m`` Bernoulli(exp(-1))
    draws and one Bernoulli(exp(-r/d)), all succeeding.  Arrays whose
    values fit the ``int64`` bounds are drawn vectorised; others (object
    arrays of Python ints of any size) element by element, exactly.

    Parameters
    ----------
    numerator : array-like of int
        ``n >= 0``.
    denominator : array-like of int or int
        ``d > 0``, broadcastable against ``numerator``.
    rng : numpy.random.Generator
        Source of randomness (its integer output only).

    Returns
    -------
    ndarray of bool, the broadcast shape
    """
    numerator = _as_int_array(numerator, "numerator")
    denominator = _as_int_array(denominator, "denominator")
    numerator, denominator = np.broadcast_arrays(numerator, denominator)
    shape = numerator.shape
    if numerator.size == 0:
        return np.zeros(shape, dtype=bool)
    if _smallest(numerator) < 0:
        raise ValueError("numerator must be >= 0.")
    if _smallest(denominator) <= 0:
        raise ValueError("denominator must be > 0.")
    if _largest(numerator) < _INT64_BOUND and _largest(denominator) < _INT64_BOUND:
        flat_denominator = denominator.astype(np.int64).ravel()
        if np.all(flat_denominator == flat_denominator[0]):
            flat_denominator = int(flat_denominator[0])
        return _bernoulli_exp_int64(numerator.astype(np.int64).ravel(),
                                    flat_denominator, rng).reshape(shape)
    result = [_bernoulli_exp_python(int(n), int(d), rng)
              for n, d in zip(numerator.flat, denominator.flat)]
    return np.array(result, dtype=bool).reshape(shape)


# --------------------------------------------------------------------------
# Exact selection on a public grid
# --------------------------------------------------------------------------

def _check_positive(name: str, value: float) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}.")
    return value


@dataclass(frozen=True)
class _GridSelection:
    """Scores on the selection grid and the exact rate of the weights.

    ``gaps[i] = z_max - z_i`` (integers, ``z_i = floor(score_i / g)``,
    ``g = sensitivity * 2**-10``); candidate ``i`` has weight
    ``exp(-rate * gaps[i])`` with ``rate = epsilon' / (2 (2**10 + 1))`` and
    ``epsilon'`` epsilon rounded down to 30 significant bits.  Weights go to
    :func:`bernoulli_exp` as ``rate_numerator * gap / rate_denominator``.
    """

    numerators: np.ndarray
    rate_denominator: int

    @classmethod
    def from_scores(cls, scores, epsilon: float, sensitivity: float) -> "_GridSelection":
        epsilon = _check_positive("epsilon", epsilon)
        sensitivity = _check_positive("sensitivity", sensitivity)
        scores = np.asarray(scores, dtype=float).ravel()
        if scores.size == 0:
            raise ValueError("scores must contain at least one candidate.")
        if not np.all(np.isfinite(scores)):
            raise ValueError("scores must be finite.")
        rate = _selection_rate(epsilon)
        gaps = _grid_gaps(scores, sensitivity)
        largest = rate.numerator * max(int(gaps.max()), 1)
        if gaps.dtype != object and largest < _INT64_BOUND:
            numerators = gaps.astype(np.int64) * rate.numerator
        else:
            numerators = np.array([rate.numerator * int(g) for g in gaps], dtype=object)
        return cls(numerators, rate.denominator)

    def accept(self, candidates: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Exact Bernoulli(weight) of each candidate in ``candidates``."""
        numerators = self.numerators[candidates]
        if numerators.dtype != object and self.rate_denominator < _INT64_BOUND:
            return _bernoulli_exp_int64(numerators, self.rate_denominator, rng)
        return np.array([_bernoulli_exp_python(int(n), self.rate_denominator, rng)
                         for n in numerators], dtype=bool)


@functools.lru_cache(maxsize=64)
def _selection_rate(epsilon: float) -> Fraction:
    """``epsilon'/(2 (2**10 + 1))``, ``epsilon'`` = epsilon rounded down to 30 bits."""
    mantissa, exponent = math.frexp(epsilon)  # epsilon = mantissa * 2**exponent
    rounded = Fraction(math.floor(mantissa * 2**EPSILON_BITS)) * Fraction(2) ** (
        exponent - EPSILON_BITS)
    return rounded / (2 * (2**GRID_BITS + 1))


def _grid_gaps(scores: np.ndarray, sensitivity: float) -> np.ndarray:
    """``max(z) - z`` for ``z = floor(score / g)``, exact; int64 or Python ints.

    The float floor division (fmod-based, as Python's ``//``) is the exact
    floor of the quotient of the two floats while that quotient is well
    below ``2**52`` in magnitude; beyond, it is computed with fractions.
    """
    step_exact = Fraction(sensitivity) / 2**GRID_BITS
    if sensitivity >= 2.0**-1000:  # then step is a normal float, exactly step_exact
        step = sensitivity * 2.0**-GRID_BITS
        if float(np.max(np.abs(scores))) / step < 2.0**50:
            units = np.floor_divide(scores, step).astype(np.int64)
            return units.max() - units
    units = [math.floor(Fraction(float(s)) / step_exact) for s in scores]
    top = max(units)
    return np.array([top - u for u in units], dtype=object)


def exponential_choice(scores, epsilon: float, sensitivity: float,
                       rng: np.random.Generator) -> int:
    """The exponential mechanism, sampled exactly on a public score grid.

    Each score is rounded down (exactly) to a whole number ``z_i`` of grid
    units ``g = sensitivity * 2**-10``.  Scores within ``sensitivity`` of
    each other floor to ``z`` within ``2**10``; the mechanism is calibrated
    to ``2**10 + 1`` so that float error in computing the scores is
    absorbed as long as, between two neighbouring data sets, it adds up to
    at most one unit ``g`` (each score within ``g/2`` of its real value):
    then ``|z - z'| < 2**10 + 2``.  Candidate ``i`` is returned with
    probability proportional to ``exp(lambda z_i)``, ``lambda =
    epsilon' / (2 (2**10 + 1))``, where ``epsilon' <= epsilon`` is epsilon
    rounded down to 30 significant bits: the exponential mechanism at
    ``epsilon'`` for integer scores of sensitivity ``2**10 + 1``, which is
    ``epsilon'``-DP and ``epsilon'**2/8``-zCDP (bounded range), so it costs
    at most what the real-arithmetic mechanism at ``(epsilon,
    sensitivity)`` is recorded for.  Utility: epsilon acts as
    ``epsilon / (1 + 2**-10)`` on scores perturbed by less than ``g``.

    Sampling is by rejection: a uniform candidate is accepted with the
    exact probability ``exp(-lambda (z_max - z_i))`` (:func:`bernoulli_exp`);
    the accepted one follows the exponential mechanism's law exactly.
    Proposals are drawn in growing batches and the first accepted one in
    proposal order is returned, as a one-at-a-time loop would.

    Parameters
    ----------
    scores : array-like of float
        Quality of each candidate (higher is better), finite.
    epsilon : float
        Privacy parameter, ``> 0``.
    sensitivity : float
        Largest change of any score between neighbouring data sets, ``> 0``.
    rng : numpy.random.Generator
        Source of randomness (its integer output only).

    Returns
    -------
    int
        The index of the selected candidate.
    """
    selection = _GridSelection.from_scores(scores, epsilon, sensitivity)
    count = selection.numerators.shape[0]
    if count == 1:
        return 0
    batch = min(64, 2 * count)
    while True:
        proposals = rng.integers(0, count, size=batch)
        accepted = np.flatnonzero(selection.accept(proposals, rng))
        if accepted.size:
            return int(proposals[accepted[0]])
        batch = min(batch * 4, 2**16)


def permute_and_flip_choice(scores, epsilon: float, sensitivity: float,
                            rng: np.random.Generator) -> int:
    """Permute-and-flip (McKenna & Sheldon 2020), sampled exactly on a grid.

    Same grid and same ``lambda`` as :func:`exponential_choice`: it is
    permute-and-flip at ``epsilon' <= epsilon`` for integer scores of
    sensitivity ``2**10 + 1``, hence ``epsilon'``-DP and within the
    ``epsilon**2 / 2``-zCDP that pure epsilon-DP implies (what a ledger
    records for the real-arithmetic mechanism).  Candidates are visited in a
    uniformly random order (``rng.permutation``, exact Fisher-Yates on
    integers) and the first one that passes its exact Bernoulli(exp(-lambda
    (z_max - z_i))) is returned; a best candidate passes with probability 1,
    so one pass always ends.  The Bernoulli draws are made for blocks of the
    order at once; the first success in visiting order is the result, as in
    the one-at-a-time loop.

    Parameters
    ----------
    scores : array-like of float
        Finite quality scores, one a candidate; the highest is always
        accepted when visited.
    epsilon : float
        The mechanism's pure-DP parameter, ``> 0``.
    sensitivity : float
        Bound on how far one row can move any score, ``> 0``.
    rng : numpy.random.Generator
        Draws the visiting order and the acceptances (integer output only).

    Returns
    -------
    int
        Position in ``scores`` of the first candidate accepted.
    """
    selection = _GridSelection.from_scores(scores, epsilon, sensitivity)
    order = rng.permutation(selection.numerators.shape[0])
    start, block = 0, 64
    while start < order.size:  # ends: a best candidate passes with probability 1
        candidates = order[start:start + block]
        accepted = np.flatnonzero(selection.accept(candidates, rng))
        if accepted.size:
            return int(candidates[accepted[0]])
        start += block
        block *= 4
    raise AssertionError("permute-and-flip passed over a best candidate")
