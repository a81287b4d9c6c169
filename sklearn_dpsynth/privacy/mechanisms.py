"""The privacy mechanisms: each one states its cost and releases its output.

A mechanism is an object built from public parameters (a noise scale, an
epsilon, a sensitivity).  It declares

* ``name``: the label of its ledger entries;
* :meth:`~sklearn_dpsynth.privacy.Mechanism.cost`: its privacy map, the :class:`~sklearn_dpsynth.privacy.Cost` (zCDP ``rho``,
  additive ``delta``, or a Renyi curve) of one release on inputs of the
  declared sensitivity, with every formula taken from the accounting
  functions of ``sklearn_dpsynth.privacy``;
* :meth:`~sklearn_dpsynth.privacy.Mechanism.release`: the randomised output on the exact values;
* ``entry_fields``: what the ledger shows of it (noise scale,
  sensitivity and other public parameters).

Estimators never call :meth:`~sklearn_dpsynth.privacy.Mechanism.release` themselves: they hand the
mechanism to :meth:`~sklearn_dpsynth.PrivacyLedger.release`, which records
the cost first (and raises, releasing nothing, when it does not fit) and
only then releases.

Every release on integer data is drawn exactly (see
``sklearn_dpsynth.privacy._exact``): integer noise, selections decided
with exact Bernoulli trials, so no floating-point rounding carries
information about the data.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from . import _exact
from .accounting import (
    exponential_epsilon,
    exponential_rho,
    gaussian_rho,
    pure_dp_epsilon,
    pure_dp_rho,
)

__all__ = [
    "Cost",
    "Mechanism",
    "DiscreteGaussian",
    "ExponentialMechanism",
    "PermuteAndFlip",
    "ThresholdedHistogram",
    "SubsampledGaussian",
    "gaussian_mechanism",
    "exponential_mechanism",
    "permute_and_flip",
]


@dataclass(frozen=True)
class Cost:
    """The privacy cost of one release.

    Attributes
    ----------
    rho : float
        zCDP cost.
    delta : float
        Additive delta of an approximately-zCDP mechanism (usually 0).
    rdp : (orders, values) or None
        Renyi-DP curve of a mechanism that is not zCDP (e.g. DP-SGD).
    """

    rho: float = 0.0
    delta: float = 0.0
    rdp: tuple[np.ndarray, np.ndarray] | None = None


def _check_scale(name: str, value: float) -> float:
    if isinstance(value, bool) or not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}.")
    return float(value)


class Mechanism(ABC):
    """A differentially private release: its privacy map and its output.

    Subclasses set ``name``, ``noise_scale`` and ``sensitivity``, and
    implement ``cost`` and ``release``.
    """

    #: Label of the mechanism's ledger entries.
    name: ClassVar[str]
    #: Noise standard deviation (or the selection's epsilon), shown in the ledger.
    noise_scale: float
    #: Sensitivity the mechanism is calibrated to, shown in the ledger.
    sensitivity: float

    @abstractmethod
    def cost(self) -> Cost:
        """The privacy map: what one release costs.

        Returns
        -------
        Cost
        """

    @abstractmethod
    def release(self, values: Any, rng: np.random.Generator) -> Any:
        """The randomised output on the exact ``values``.

        Call it through :meth:`~sklearn_dpsynth.PrivacyLedger.release`,
        which records the cost first.

        Parameters
        ----------
        values
            The exact answers (private).
        rng : numpy.random.Generator
            Source of randomness.
        """

    @property
    def entry_fields(self) -> dict:
        """Public parameters the ledger entry shows besides the cost."""
        return {}


# ---------------------------------------------------------------- noise
def _as_integers(values: Any, what: str) -> np.ndarray:
    """``values`` as int64, refusing anything that is not integer-valued."""
    array = np.asarray(values)
    if array.dtype.kind in "biu":
        return array.astype(np.int64)
    array = np.asarray(array, dtype=float)
    if not np.all(np.isfinite(array)) or np.any(array != np.round(array)) \
            or np.any(np.abs(array) >= 2.0**53):
        raise ValueError(f"{what} releases integer counts; got values that are not "
                         "integers (scale weighted counts by a public weight after the "
                         "release instead).")
    return array.astype(np.int64)


class DiscreteGaussian(Mechanism):
    """The discrete Gaussian mechanism on integer-valued queries.

    Adds i.i.d. noise from the discrete Gaussian ``N_Z(0, sigma^2)``
    (probability of ``z`` proportional to ``exp(-z^2 / (2 sigma^2))`` on the
    integers), sampled exactly.  For a query with integer values and L2
    sensitivity ``Delta`` it is ``Delta^2 / (2 sigma^2)``-zCDP (Canonne,
    Kamath & Steinke 2020, Thm. 14), the cost of the continuous Gaussian
    mechanism of the same ``sigma``.  The noise's variance is at most
    ``sigma^2``, so treating ``sigma`` as its standard deviation is
    conservative.

    Parameters
    ----------
    sigma : float
        Scale of the noise, ``> 0``.
    sensitivity : float, default=1.0
        L2 sensitivity of the released integer vector.
    """

    name = "gaussian"

    def __init__(self, sigma: float, sensitivity: float = 1.0) -> None:
        self.noise_scale = _check_scale("sigma", sigma)
        self.sensitivity = _check_scale("sensitivity", sensitivity)

    @property
    def sigma(self) -> float:
        """Scale of the noise."""
        return self.noise_scale

    def cost(self) -> Cost:
        """``rho = Delta^2 / (2 sigma^2)``."""
        return Cost(rho=gaussian_rho(self.sigma, self.sensitivity))

    def release(self, values: Any, rng: np.random.Generator) -> np.ndarray:
        """Integer values plus exact discrete Gaussian noise.

        Parameters
        ----------
        values : array-like of int
            Exact integer answers (integer-valued floats are accepted).
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        noisy : ndarray of float, same shape as ``values``
            Integers (held as floats, exactly: below ``2**53``).
        """
        counts = _as_integers(values, "the discrete Gaussian mechanism")
        return (counts + _exact.discrete_gaussian(self.sigma, counts.shape, rng)).astype(float)


# ------------------------------------------------------------ selection
class _Selection(Mechanism):
    """A pure-DP selection at ``epsilon`` among scored candidates.

    A subclass names its exact sampler (``_choose``) and its privacy map
    both ways (``_rho_of``: epsilon to zCDP, ``_epsilon_of``: the inverse).
    """

    _choose: ClassVar[Callable]
    _rho_of: ClassVar[Callable[[float], float]]
    _epsilon_of: ClassVar[Callable[[float], float]]

    def __init__(self, epsilon: float, sensitivity: float = 1.0) -> None:
        self.noise_scale = _check_scale("epsilon", epsilon)
        self.sensitivity = _check_scale("sensitivity", sensitivity)

    @property
    def epsilon(self) -> float:
        """Pure-DP parameter of the selection."""
        return self.noise_scale

    def release(self, values: Any, rng: np.random.Generator) -> int:
        """The index of the selected candidate.

        Parameters
        ----------
        values : array-like of float
            Quality score of every candidate (higher is better), finite; checked
            by the sampler (``privacy._exact``), which names what is wrong.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        index : int
        """
        return int(type(self)._choose(values, self.epsilon, self.sensitivity, rng))

    @classmethod
    def from_rho(cls, rho: float, sensitivity: float = 1.0) -> "Mechanism":
        """The selection costing ``rho``.

        Parameters
        ----------
        rho : float
            zCDP budget of the selection, ``> 0``.
        sensitivity : float, default=1.0
            Largest change of any score between neighbouring tables.

        Returns
        -------
        The mechanism at the epsilon whose cost is ``rho``.
        """
        return cls(cls._epsilon_of(rho), sensitivity)

    def cost(self) -> Cost:
        """The zCDP cost of a selection at ``epsilon``."""
        return Cost(rho=type(self)._rho_of(self.epsilon))


class ExponentialMechanism(_Selection):
    """The exponential mechanism, sampled exactly.

    Selects candidate ``r`` with probability proportional to
    ``exp(epsilon * score_r / (2 Delta))`` (scores on the public grid of
    ``_exact.exponential_choice``).  It is
    epsilon-DP and, by Cesar & Rogers (2021), ``epsilon^2 / 8``-zCDP
    (:func:`~sklearn_dpsynth.privacy.exponential_rho`; ``from_rho`` uses
    :func:`~sklearn_dpsynth.privacy.exponential_epsilon`).

    Parameters
    ----------
    epsilon : float
        Pure-DP parameter, ``> 0``.
    sensitivity : float, default=1.0
        Largest change of any score between neighbouring tables.
    """

    name = "exponential"
    _choose = staticmethod(_exact.exponential_choice)
    _rho_of = staticmethod(exponential_rho)
    _epsilon_of = staticmethod(exponential_epsilon)


class PermuteAndFlip(_Selection):
    """Permute-and-flip selection (McKenna & Sheldon 2020), sampled exactly.

    Visits the candidates in random order and accepts candidate ``r`` with
    probability ``exp(epsilon * (score_r - max score) / (2 Delta))``.  It is
    epsilon-DP; it is not known to have the exponential mechanism's
    bounded-range property, so it is charged the generic pure-DP to zCDP
    cost ``epsilon^2 / 2`` (Bun & Steinke 2016, Prop. 1.4;
    :func:`~sklearn_dpsynth.privacy.pure_dp_rho`).

    Parameters
    ----------
    epsilon : float
        Pure-DP parameter, ``> 0``.
    sensitivity : float, default=1.0
        Largest change of any score between neighbouring tables.
    """

    name = "permute-and-flip"
    _choose = staticmethod(_exact.permute_and_flip_choice)
    _rho_of = staticmethod(pure_dp_rho)
    _epsilon_of = staticmethod(pure_dp_epsilon)


# ------------------------------------------------- thresholded histogram
class ThresholdedHistogram(DiscreteGaussian):
    """Keys of a histogram over an unknown key set whose noisy count clears a threshold.

    Every count (one per key present in the data) gets exact discrete
    Gaussian noise ``N_Z(0, sigma^2)``; the keys whose noisy count is at
    least ``1 + k`` are released, most frequent first.  On keys present in
    both neighbouring tables this is the discrete Gaussian mechanism
    (``1 / (2 sigma^2)``-zCDP, one count changes by 1); a key present in
    only one of them has count 1 there and is released with probability
    ``P(Z >= k)``.  The mechanism is therefore ``(rho, delta)``-approximately
    zCDP with ``delta = P(Z >= k)``, bounded above by
    ``_exact.discrete_gaussian_tail``; ``k`` is
    the smallest integer whose tail bound is at most the ``delta`` asked for.

    Parameters
    ----------
    sigma : float
        Scale of the noise, ``> 0``.
    delta : float
        Largest additive delta the release may have, in (0, 1).
    """

    name = "thresholded gaussian histogram"

    def __init__(self, sigma: float, delta: float) -> None:
        super().__init__(sigma, 1.0)
        if not (0.0 < delta < 1.0):
            raise ValueError(f"delta of a thresholded histogram must lie in (0, 1), "
                             f"got {delta!r}.")
        self.k = _smallest_tail_point(self.sigma, float(delta))
        self.delta = float(_exact.discrete_gaussian_tail(self.sigma, self.k))

    @property
    def threshold(self) -> int:
        """Smallest noisy count that is released: ``1 + k``."""
        return 1 + self.k

    def cost(self) -> Cost:
        """``rho = 1 / (2 sigma^2)``, ``delta = P(Z >= k)`` (bounded above)."""
        return Cost(rho=gaussian_rho(self.sigma), delta=self.delta)

    @property
    def entry_fields(self) -> dict:
        return {"threshold": self.threshold}

    def release(self, values: Any, rng: np.random.Generator) -> np.ndarray:
        """Indices of the released keys, by decreasing noisy count.

        Parameters
        ----------
        values : array-like of int
            Exact count of every key present in the data.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        keep : ndarray of int
            Ties keep the input order.
        """
        noisy = super().release(values, rng)
        keep = np.flatnonzero(noisy >= self.threshold)
        return keep[np.argsort(-noisy[keep], kind="stable")]


def _smallest_tail_point(sigma: float, delta: float) -> int:
    """Smallest integer ``k >= 1`` whose tail bound ``P(Z >= k)`` is at most ``delta``."""
    k = max(int(math.floor(sigma * math.sqrt(2.0 * math.log(1.0 / delta)))), 1)
    while k > 1 and _exact.discrete_gaussian_tail(sigma, k - 1) <= delta:
        k -= 1
    while _exact.discrete_gaussian_tail(sigma, k) > delta:
        k += 1
    return k


# ------------------------------------------------------------- DP-SGD
class SubsampledGaussian(Mechanism):
    """DP-SGD: ``steps`` Poisson-subsampled Gaussian releases of clipped gradient sums.

    Its privacy map is the Renyi curve of
    :func:`~sklearn_dpsynth.privacy.dpsgd_rdp` on ``orders``.  The release
    is the training run itself, handed in as a function of no argument:
    Opacus's optimizer clips every row's gradient to ``max_grad_norm`` and
    adds Gaussian noise of standard deviation ``noise_multiplier *
    max_grad_norm`` to their sum at each step, in ``secure_mode`` (the sum
    of four Gaussian draws, Holohan & Braghin 2021, which removes the
    floating-point attack on a single draw).  The noise is continuous and
    in floating point: no exact sampler is known for it (see the user
    guide's "What remains floating point").

    Parameters
    ----------
    sample_rate : float
        Poisson sampling rate in (0, 1].
    noise_multiplier : float
        Noise standard deviation over the clipping norm.
    steps : int
        Number of steps.
    max_grad_norm : float
        Clipping norm: the L2 sensitivity of one step's sum.
    orders : sequence of float
        Renyi orders of the curve.
    """

    name = "DP-SGD (Poisson-subsampled Gaussian)"

    def __init__(self, *, sample_rate: float, noise_multiplier: float, steps: int,
                 max_grad_norm: float, orders: Sequence[float]) -> None:
        self.sample_rate = float(sample_rate)
        self.noise_multiplier = _check_scale("noise_multiplier", noise_multiplier)
        self.steps = int(steps)
        self.sensitivity = _check_scale("max_grad_norm", max_grad_norm)
        self.noise_scale = self.noise_multiplier * self.sensitivity
        self.orders = np.asarray(orders, dtype=float)

    def cost(self) -> Cost:
        """The composed Renyi curve of the ``steps`` subsampled Gaussian steps."""
        from .dpsgd import dpsgd_rdp

        curve = dpsgd_rdp(self.sample_rate, self.noise_multiplier, self.steps, self.orders)
        return Cost(rdp=(self.orders, curve))

    @property
    def entry_fields(self) -> dict:
        return {"steps": self.steps, "sample_rate": self.sample_rate,
                "noise_multiplier": self.noise_multiplier,
                "max_grad_norm": self.sensitivity}

    def release(self, values: Callable[[], Any], rng: np.random.Generator | None = None
                ) -> Any:
        """Run the training (``values()``), whose optimizer draws the noise.

        Parameters
        ----------
        values : callable
            The DP-SGD run with this mechanism's parameters; ``None`` when
            the run starts after the call (the caller trains with
            ``noise_multiplier``, ``sample_rate`` and ``steps`` and nothing
            else).
        rng : numpy.random.Generator, optional
            Unused: the run holds its own seeded generator.

        Returns
        -------
        Whatever the run returns (``None`` without a run).
        """
        return None if values is None else values()


# ------------------------------------------------------- plain functions
def gaussian_mechanism(values: np.ndarray, sigma: float, rng: np.random.Generator
                       ) -> np.ndarray:
    """Add exact discrete Gaussian noise ``N_Z(0, sigma^2)`` to integer ``values``.

    :meth:`~sklearn_dpsynth.privacy.DiscreteGaussian.release` without the ledger (for tests and
    post-hoc studies; estimators go through the ledger).

    Parameters
    ----------
    values : array-like of int
        The exact integer answers.
    sigma : float
        Scale of the noise, ``> 0``.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    noisy : ndarray of float (integer-valued), same shape as ``values``
    """
    return DiscreteGaussian(sigma).release(values, rng)


def exponential_mechanism(scores: np.ndarray, epsilon: float, rng: np.random.Generator,
                          sensitivity: float = 1.0) -> int:
    """Select an index with probability ``∝ exp(epsilon * score / (2 Δ))``, exactly.

    :meth:`~sklearn_dpsynth.privacy.ExponentialMechanism.release` without the ledger.

    Parameters
    ----------
    scores : array-like of float
        Quality score of each candidate (higher is better).
    epsilon : float
        Privacy parameter, ``> 0``.
    rng : numpy.random.Generator
        Source of randomness.
    sensitivity : float, default=1.0
        Largest change of any score between neighbouring data sets.

    Returns
    -------
    index : int
    """
    return ExponentialMechanism(epsilon, sensitivity).release(scores, rng)


def permute_and_flip(scores: np.ndarray, epsilon: float, rng: np.random.Generator,
                     sensitivity: float = 1.0) -> int:
    """Permute-and-flip selection (McKenna & Sheldon, 2020), exactly.

    :meth:`~sklearn_dpsynth.privacy.PermuteAndFlip.release` without the ledger.

    Parameters
    ----------
    scores : array-like of float
        Quality score of each candidate (higher is better).
    epsilon : float
        Privacy parameter, ``> 0``.
    rng : numpy.random.Generator
        Source of randomness.
    sensitivity : float, default=1.0
        Largest change of any score between neighbouring data sets.

    Returns
    -------
    index : int
    """
    return PermuteAndFlip(epsilon, sensitivity).release(scores, rng)
