"""Row generators for Private Evolution: the public protocol and offline generators.

Private Evolution only talks to a generator through two calls (the
paper's ``random_api`` and ``variation_api``)::

    class RowGenerator(Protocol):
        def random_rows(self, n: int, rng) -> ndarray: ...
        def variations(self, rows: ndarray, rng) -> ndarray: ...

Both return integer codes of shape ``(n, n_columns)`` on the fitted domain
(``variations`` one varied row per input row).  A generator never sees the
private data, so anything may implement it: the offline generators below,
or a client of a language model that prompts with ``domain.decode(rows)``
and encodes its answers with ``domain.encode``.  The ``generator``
parameter of :class:`~sklearn_dpsynth.evolution.PrivateEvolutionSynthesizer`
takes a name, a generator, or a factory ``factory(domain, public)`` called
at fit time with the fitted :class:`~sklearn_dpsynth.Domain` and the public
rows (codes, or None).
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from ..public.base import uniform_rows

__all__ = ["RowGenerator", "UniformGenerator", "MutationGenerator", "PublicBootstrapGenerator",
           "SynthesizerGenerator", "make_generator"]


@runtime_checkable
class RowGenerator(Protocol):
    """What Private Evolution needs from a generator (never sees private data)."""

    def random_rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` fresh rows of codes, shape ``(n, n_columns)``."""

    def variations(self, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One variation of every row (codes, same shape as ``rows``)."""


def _check_n_resample(n_resample: int) -> int:
    if isinstance(n_resample, bool) or not isinstance(n_resample, (int, np.integer)) \
            or n_resample < 1:
        raise ValueError(f"n_resample must be an int >= 1, got {n_resample!r}.")
    return int(n_resample)


def _resample_columns(rows: np.ndarray, n_resample: int, rng: np.random.Generator,
                      draw: Callable[[int, int], np.ndarray]) -> np.ndarray:
    """Copy of ``rows`` with ``n_resample`` random columns of every row redrawn.

    ``draw(column, count)`` returns ``count`` new codes for ``column``.
    """
    out = np.array(rows, dtype=np.int64, copy=True)
    n_rows, n_columns = out.shape
    k = min(n_resample, n_columns)
    chosen = np.argsort(rng.random((n_rows, n_columns)), axis=1)[:, :k]
    for j in range(n_columns):
        hit = np.flatnonzero((chosen == j).any(axis=1))
        if hit.size:
            out[hit, j] = draw(j, hit.size)
    return out


class UniformGenerator:
    """Uniform rows of the domain; variations redraw a few columns uniformly.

    Parameters
    ----------
    sizes : sequence of int
        Number of codes of every column.
    n_resample : int, default=1
        Columns redrawn per variation.
    """

    def __init__(self, sizes, n_resample: int = 1) -> None:
        self.sizes = [int(k) for k in sizes]
        self.n_resample = _check_n_resample(n_resample)

    def random_rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` rows drawn uniformly from the domain."""
        return uniform_rows(self.sizes, n, rng)

    def variations(self, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Every row with ``n_resample`` random columns redrawn uniformly."""
        return _resample_columns(rows, self.n_resample, rng,
                                 lambda j, count: rng.integers(0, self.sizes[j], size=count))


class MutationGenerator:
    """Uniform rows; variations mutate every cell at a rate that decays over the rounds.

    The no-public generator of Tab-PE (Private Evolution for tables): the
    ``t``-th call of :meth:`variations` (``t = 0, 1, ...``) replaces every
    cell, independently with probability ``rate(t)``, by a code drawn
    uniformly from its column, where

        rate(t) = start - (start - end) * min(t / n_variations, 1) ** power

    falls from ``start`` at the first variation to ``end`` after
    ``n_variations`` calls.  With ``power < 1`` (Tab-PE's 0.2) the rate
    drops fast and then lingers near ``end``: a few rounds explore, most
    make small corrections to the rows the votes kept.  The counter
    restarts with :meth:`random_rows`, which a fit calls first.

    Parameters
    ----------
    sizes : sequence of int
        Number of codes of every column.
    n_variations : int
        Calls of :meth:`variations` the schedule spans (``rounds - 1``);
        later calls keep ``end``.
    start : float, default=0.5
        Mutation rate of the first variation.
    end : float, default=0.01
        Mutation rate from call ``n_variations`` on.
    power : float, default=0.2
        Exponent of the polynomial decay (1 is linear; below 1 decays
        fast early).
    """

    def __init__(self, sizes, n_variations: int, start: float = 0.5, end: float = 0.01,
                 power: float = 0.2) -> None:
        if not (0.0 <= end <= start <= 1.0) or power <= 0:
            raise ValueError("need 0 <= end <= start <= 1 and power > 0, got "
                             f"start={start!r}, end={end!r}, power={power!r}.")
        self.sizes = [int(k) for k in sizes]
        self.n_variations = max(int(n_variations), 1)
        self.start, self.end, self.power = float(start), float(end), float(power)
        self.calls = 0

    def rate(self, call: int) -> float:
        """Mutation rate of the ``call``-th variation (0-based)."""
        done = min(max(call, 0) / self.n_variations, 1.0)
        return self.start - (self.start - self.end) * done ** self.power

    def random_rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` rows drawn uniformly from the domain (and the schedule restarts)."""
        self.calls = 0
        return uniform_rows(self.sizes, n, rng)

    def variations(self, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Every cell replaced by a uniform code with probability ``rate(t)``."""
        rate = self.rate(self.calls)
        self.calls += 1
        out = np.array(rows, dtype=np.int64, copy=True)
        hit = rng.random(out.shape) < rate
        for j, k in enumerate(self.sizes):
            rows_hit = np.flatnonzero(hit[:, j])
            out[rows_hit, j] = rng.integers(0, k, size=rows_hit.size)
        return out


class PublicBootstrapGenerator:
    """Bootstrap of a public table; variations redraw columns from its 1-way marginals.

    Parameters
    ----------
    public : ndarray of int, shape (n_public, n_columns)
        Public rows (codes).
    sizes : sequence of int
        Number of codes of every column.
    n_resample : int, default=1
        Columns redrawn per variation.
    smoothing : float, default=0.5
        Pseudocount added to the public 1-way counts, so that variations can
        reach codes the public table lacks.
    """

    def __init__(self, public: np.ndarray, sizes, n_resample: int = 1,
                 smoothing: float = 0.5) -> None:
        public = np.asarray(public, dtype=np.int64)
        if public.ndim != 2 or public.shape[0] == 0 or public.shape[1] != len(sizes):
            raise ValueError("public must be a non-empty (n, n_columns) table of codes.")
        self.public = public
        self.sizes = [int(k) for k in sizes]
        self.n_resample = _check_n_resample(n_resample)
        self.marginals = [(np.bincount(public[:, j], minlength=k) + smoothing)
                          for j, k in enumerate(self.sizes)]
        self.marginals = [m / m.sum() for m in self.marginals]

    def random_rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` public rows drawn with replacement."""
        return self.public[rng.integers(0, self.public.shape[0], size=n)].copy()

    def variations(self, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Every row with ``n_resample`` columns redrawn from the public 1-way marginal."""
        return _resample_columns(rows, self.n_resample, rng,
                                 lambda j, count: rng.choice(self.sizes[j], size=count,
                                                             p=self.marginals[j]))


class SynthesizerGenerator:
    """A fitted synthesizer of this library as generator.

    ``random_rows`` samples the synthesizer; ``variations`` redraws
    ``n_resample`` random columns of every row from the synthesizer's
    conditional distribution given the row's other columns (one Gibbs step
    per column, from the synthesizer's log-likelihood of the row with each
    possible code), so varied rows stay likely under the model.

    Parameters
    ----------
    synthesizer : BaseSynthesizer
        Fitted on the same columns, with the same domain sizes as the
        Private Evolution fit (e.g. trained on public data, or a
        differentially private model whose budget is accounted elsewhere).
    n_resample : int, default=1
        Columns redrawn per variation.
    """

    def __init__(self, synthesizer: Any, n_resample: int = 1) -> None:
        if not hasattr(synthesizer, "domain_"):
            raise ValueError("synthesizer must be fitted before it can generate rows.")
        self.synthesizer = synthesizer
        self.sizes = list(synthesizer.domain_.sizes)
        self.n_resample = _check_n_resample(n_resample)

    def random_rows(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` rows sampled from the synthesizer (codes)."""
        return np.asarray(self.synthesizer._sample_encoded(n, rng, None), dtype=np.int64)

    def variations(self, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Every row with ``n_resample`` columns redrawn from the model's conditionals."""
        out = np.array(rows, dtype=np.int64, copy=True)
        n_rows, n_columns = out.shape
        k = min(self.n_resample, n_columns)
        chosen = np.argsort(rng.random((n_rows, n_columns)), axis=1)[:, :k]
        for step in range(k):
            for j in range(n_columns):
                hit = np.flatnonzero(chosen[:, step] == j)
                if hit.size:
                    out[hit, j] = self._conditional_draw(out[hit], j, rng)
        return out

    def _conditional_draw(self, rows: np.ndarray, column: int,
                          rng: np.random.Generator) -> np.ndarray:
        size = self.sizes[column]
        trial = np.repeat(rows, size, axis=0)
        trial[:, column] = np.tile(np.arange(size), rows.shape[0])
        logp = np.asarray(self.synthesizer._log_likelihood_encoded(trial), dtype=float)
        logp = logp.reshape(rows.shape[0], size)
        logp -= logp.max(axis=1, keepdims=True)
        probs = np.exp(logp)
        probs /= probs.sum(axis=1, keepdims=True)
        draws = rng.random(rows.shape[0])[:, None]
        return np.minimum((np.cumsum(probs, axis=1) < draws).sum(axis=1), size - 1)


def make_generator(spec: Any, domain: Any, public: np.ndarray | None,
                   n_resample: int = 1, rounds: int = 1) -> RowGenerator:
    """The generator a Private Evolution fit uses.

    Parameters
    ----------
    spec : {"auto", "uniform", "mutation", "public"}, RowGenerator or callable
        ``"auto"``: ``"public"`` when ``public`` is given, else
        ``"mutation"``; ``"uniform"``: :class:`UniformGenerator`;
        ``"mutation"``: :class:`MutationGenerator` over ``rounds - 1``
        variations (uniform rows when ``rounds`` is 1); ``"public"``:
        :class:`PublicBootstrapGenerator` of the public rows (required); a
        fitted synthesizer (anything with ``domain_``): a
        :class:`SynthesizerGenerator`; an object with ``random_rows`` and
        ``variations``: used as is; a callable: ``spec(domain, public)``
        must return such an object.
    domain : Domain
        The fitted public domain.
    public : ndarray of int or None
        The public rows (codes).
    n_resample : int, default=1
        Columns redrawn per variation by the offline generators.
    rounds : int, default=1
        Rounds of the fit (the span of ``"mutation"``'s schedule).

    Returns
    -------
    RowGenerator
    """
    if isinstance(spec, str):
        if spec == "auto":
            spec = "mutation" if public is None else "public"
        if spec == "uniform":
            return UniformGenerator(domain.sizes, n_resample)
        if spec == "mutation":
            return MutationGenerator(domain.sizes, max(int(rounds) - 1, 1))
        if spec == "public":
            if public is None:
                raise ValueError("generator='public' needs public_data in fit.")
            return PublicBootstrapGenerator(public, domain.sizes, n_resample)
        raise ValueError(f"generator must be 'auto', 'uniform', 'mutation', 'public', a "
                         f"fitted synthesizer, a RowGenerator or a factory; got {spec!r}.")
    if hasattr(spec, "domain_") and hasattr(spec, "_sample_encoded"):
        if list(spec.domain_.sizes) != list(domain.sizes):
            raise ValueError("generator: the synthesizer's domain sizes "
                             f"{list(spec.domain_.sizes)} differ from the fit's "
                             f"{list(domain.sizes)}.")
        return SynthesizerGenerator(spec, n_resample)
    if isinstance(spec, RowGenerator) and not isinstance(spec, type):
        return spec
    if callable(spec):
        made = spec(domain, public)
        if not isinstance(made, RowGenerator) or isinstance(made, type):
            raise ValueError("generator: the factory must return an object with "
                             "random_rows(n, rng) and variations(rows, rng).")
        return made
    raise ValueError(f"generator must be 'auto', 'uniform', 'mutation', 'public', a fitted "
                     f"synthesizer, a RowGenerator or a factory; got {type(spec).__name__}.")
