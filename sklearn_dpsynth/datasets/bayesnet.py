"""Random discrete Bayesian networks: data with a known ground truth.

:func:`make_bayesnet` draws a random DAG over discrete variables, random
conditional probability tables, and rows from it.  Some variables are shown
as numbers (each discrete value is a public bin of a numeric range and rows
carry a value drawn uniformly inside the bin), the others as string
categories.  Because the returned public ``domain`` encodes each column
back to exactly the network's discrete values, the network's
log-likelihood of a row *is* the log-likelihood on the encoded domain (less
``log 10`` per numeric column for the density in the frame's units), and
its entropy is the floor that any model's held-out NLL can reach.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from .._validation import check_rng

__all__ = ["make_bayesnet", "BayesianNetwork"]

#: Largest joint table for which the entropy is computed by enumeration.
_MAX_ENUMERATION = 20_000_000


@dataclass
class BayesianNetwork:
    """A discrete Bayesian network over variables ``0..d-1`` in topological order.

    Attributes
    ----------
    cardinalities : list of int
        Number of values of each variable.
    parents : list of tuple of int
        Parents of each variable (all earlier in the order).
    cpts : list of ndarray
        ``cpts[i]`` has shape ``[cardinalities[p] for p in parents[i]] +
        [cardinalities[i]]``; the last axis sums to one.
    """

    cardinalities: list
    parents: list
    cpts: list

    def sample_codes(self, n_samples: int, rng: np.random.Generator) -> np.ndarray:
        """Ancestral sampling of ``n_samples`` rows of discrete values."""
        codes = np.empty((n_samples, len(self.cardinalities)), dtype=np.int64)
        for i, (parents, cpt) in enumerate(zip(self.parents, self.cpts)):
            rows = cpt[tuple(codes[:, p] for p in parents)] if parents else \
                np.broadcast_to(cpt, (n_samples, cpt.size))
            cumulative = np.cumsum(rows, axis=1)
            u = rng.random((n_samples, 1)) * cumulative[:, -1:]
            codes[:, i] = np.minimum((u > cumulative).sum(axis=1), cpt.shape[-1] - 1)
        return codes

    def log_likelihood_codes(self, codes: np.ndarray) -> np.ndarray:
        """Exact log-probability (nats) of each row of discrete values."""
        codes = np.asarray(codes, dtype=np.int64)
        total = np.zeros(len(codes))
        for i, (parents, cpt) in enumerate(zip(self.parents, self.cpts)):
            index = tuple(codes[:, p] for p in parents) + (codes[:, i],)
            total += np.log(cpt[index])
        return total

    def joint(self) -> np.ndarray:
        """The full joint probability table (only for small networks)."""
        size = int(np.prod(self.cardinalities, dtype=np.int64))
        if size > _MAX_ENUMERATION:
            raise ValueError(f"the joint table has {size} cells; too large to enumerate.")
        joint = np.ones(())
        for i, (parents, cpt) in enumerate(zip(self.parents, self.cpts)):
            joint = joint[..., None] * _align_cpt(cpt, parents, i)
        return joint

    def entropy(self) -> float:
        """Exact entropy (nats) of the network's distribution.

        Uses the chain rule ``H = sum_i H(X_i | parents_i)`` with the exact
        marginal of each family, obtained by summing the enumerated joint.
        """
        joint = self.joint()
        total = 0.0
        d = len(self.cardinalities)
        for i, (parents, cpt) in enumerate(zip(self.parents, self.cpts)):
            keep = tuple(sorted(parents + (i,)))
            family = joint.sum(axis=tuple(a for a in range(d) if a not in keep))
            family = np.moveaxis(family, [keep.index(p) for p in parents] + [keep.index(i)],
                                 list(range(len(keep))))
            with np.errstate(divide="ignore"):
                logs = np.where(cpt > 0, np.log(cpt), 0.0)
            total -= float(np.sum(family * logs))
        return total


def _align_cpt(cpt: np.ndarray, parents: tuple, child: int) -> np.ndarray:
    """Reshape a CPT to broadcast against a joint over variables ``0..child``."""
    axes = list(parents) + [child]
    order = np.argsort(axes)
    moved = np.transpose(cpt, order)
    shape = [1] * (child + 1)
    for axis, size in zip(sorted(axes), moved.shape):
        shape[axis] = size
    return moved.reshape(shape)


def _random_network(n_features, cardinality, max_parents, concentration, rng) -> BayesianNetwork:
    low, high = cardinality
    cards = [int(rng.integers(low, high + 1)) for _ in range(n_features)]
    parents, cpts = [], []
    for i in range(n_features):
        k = int(rng.integers(0, min(max_parents, i) + 1))
        pa = tuple(sorted(int(p) for p in rng.choice(i, size=k, replace=False))) if k else ()
        shape = [cards[p] for p in pa]
        cpt = rng.dirichlet(np.full(cards[i], concentration), size=int(np.prod(shape, dtype=int)))
        parents.append(pa)
        cpts.append(np.maximum(cpt, 1e-12).reshape(shape + [cards[i]]) /
                    np.maximum(cpt, 1e-12).sum(axis=-1).reshape(shape + [1]))
    return BayesianNetwork(cards, parents, cpts)


def make_bayesnet(
    n_samples: int = 1000,
    n_features: int = 6,
    *,
    n_numeric: int | None = None,
    cardinality: tuple[int, int] = (2, 5),
    max_parents: int = 2,
    concentration: float = 0.5,
    random_state=None,
) -> Bunch:
    """Sample a mixed-type table from a random Bayesian network with known entropy.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=6
        Number of columns (variables).
    n_numeric : int, optional
        How many columns are shown as numbers (default: a third, rounded
        down).  Numeric column ``x{i}`` takes values uniform inside bin
        ``v`` of ``k`` equal bins of ``[0, 10 k)``; odd-numbered numeric
        columns are integers.
    cardinality : (int, int), default=(2, 5)
        Inclusive range of the number of discrete values per variable.
    max_parents : int, default=2
        Largest in-degree of the DAG.
    concentration : float, default=0.5
        Dirichlet concentration of each CPT row (smaller: more skewed).
    random_state : int, RandomState, Generator or None
        Seeds the structure, the tables and the rows.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``frame`` (DataFrame), ``domain`` (public domain: category lists and
        ``{"edges"}`` entries that encode the frame exactly to the network's
        values), ``network`` (:class:`BayesianNetwork`), ``codes`` (the
        discrete values), ``entropy`` (exact, nats per row, of the frame's
        distribution in its own units -- ``network.entropy()`` plus
        ``log 10`` per numeric column, whose values are uniform over a width
        of 10 or 10 integers -- or None if the network is too large to
        enumerate) and ``log_likelihood`` (a function of a DataFrame with the
        frame's columns returning the exact per-row log-density in the same
        units, what a synthesizer's ``score_samples`` estimates).

    Examples
    --------
    >>> data = make_bayesnet(n_samples=500, n_features=4, random_state=0)
    >>> data.frame.shape
    (500, 4)
    >>> bool(data.entropy > 0)
    True
    """
    if n_samples < 1 or n_features < 1:
        raise ValueError("n_samples and n_features must be >= 1.")
    if not (1 <= cardinality[0] <= cardinality[1]):
        raise ValueError(f"cardinality must satisfy 1 <= low <= high, got {cardinality}.")
    n_numeric = n_features // 3 if n_numeric is None else n_numeric
    if not 0 <= n_numeric <= n_features:
        raise ValueError(f"n_numeric must lie in [0, n_features], got {n_numeric}.")
    rng = check_rng(random_state)
    network = _random_network(n_features, cardinality, max_parents, concentration, rng)
    codes = network.sample_codes(n_samples, rng)
    frame, domain = _present(codes, network.cardinalities, n_numeric, rng)
    from ..domain import Domain
    public = Domain.from_declaration(domain)
    # values are uniform inside their bin: the density in the frame's units is
    # P(values) / width for every numeric column (width 10, or 10 integers)
    log_width = float(np.log(10.0)) * n_numeric
    entropy = (network.entropy() + log_width if np.prod(network.cardinalities, dtype=float)
               <= _MAX_ENUMERATION else None)

    def log_likelihood(table: pd.DataFrame) -> np.ndarray:
        return network.log_likelihood_codes(public.encode(table)) - log_width

    return Bunch(frame=frame, domain=domain, network=network, codes=codes, entropy=entropy,
                 log_likelihood=log_likelihood)


def _present(codes, cards, n_numeric, rng):
    columns, domain = {}, {}
    for i, k in enumerate(cards):
        if i < n_numeric:
            name = f"x{i}"
            integer = i % 2 == 1
            width = 10.0
            values = (codes[:, i] + rng.random(len(codes))) * width
            if integer:
                values = np.floor(values).astype(np.int64)
            columns[name] = values
            edges = width * np.arange(k + 1.0)
            if integer:  # the top bin holds the integers 10(k-1)..10k-1
                edges[-1] -= 1.0
            domain[name] = {"edges": edges.tolist(), "integer": integer}
        else:
            name = f"c{i}"
            labels = np.array([f"v{v}" for v in range(k)], dtype=object)
            columns[name] = pd.array(labels[codes[:, i]], dtype="str")
            domain[name] = [f"v{v}" for v in range(k)]
    return pd.DataFrame(columns), domain
