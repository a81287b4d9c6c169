"""Discrete undirected graphical model on a junction tree."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np

from .domain import ModelDomain, require_model_domain
from .factor import Factor
from .inference import CalibratedBeliefs, message_plan, potentials_from_marginals
from .junction_tree import JunctionTree, validate_cliques

__all__ = ["GraphicalModel", "ZeroProbabilityEvidence", "tables_from_potentials"]


class ZeroProbabilityEvidence(ValueError):
    """Evidence that the model gives probability zero (no conditional exists).

    Parameters
    ----------
    attributes : sequence of str
        The attributes fixed by the evidence (named in the message; their
        values are not).
    """

    def __init__(self, attributes: Sequence[str]) -> None:
        self.attributes = tuple(attributes)
        super().__init__(f"the values fixed for {list(self.attributes)} have probability "
                         "zero under the model: there is no conditional distribution")


def tables_from_potentials(
    tree: JunctionTree, potentials: Mapping[Sequence[str], Factor | np.ndarray] | None
) -> list[np.ndarray]:
    """Sum potentials into one log table per maximal clique of ``tree``.

    Parameters
    ----------
    tree : JunctionTree
        The junction tree.
    potentials : mapping of tuple of str to Factor or ndarray, or None
        Log-potentials keyed by clique (an ndarray's axes follow the key);
        each is added to the smallest maximal clique covering it.

    Returns
    -------
    tables : list of ndarray
        One log table per maximal clique (zeros where nothing was added).
    """
    shapes = message_plan(tree).shapes
    tables = [np.zeros(shape) for shape in shapes]
    if potentials is None:
        return tables
    if not isinstance(potentials, Mapping):
        raise ValueError("potentials must be a mapping clique -> Factor or ndarray")
    for clique, value in potentials.items():
        (clique,) = validate_cliques(tree.domain, [clique], "potentials")
        factor = value if isinstance(value, Factor) else Factor(clique, value)
        if set(factor.attributes) != set(clique):
            raise ValueError(f"potentials[{clique}] is a factor over {factor.attributes}")
        expected = tuple(tree.domain[a] for a in factor.attributes)
        if factor.shape != expected:
            raise ValueError(f"potentials[{clique}] has shape {factor.shape}, "
                             f"expected {expected}")
        index = tree.index_containing(clique)
        if index is None:
            raise ValueError(f"potentials clique {clique} is inside no maximal clique")
        tables[index] += factor.broadcast_view(tree.cliques[index])
    return tables


def _check_data(data: np.ndarray, domain: ModelDomain) -> np.ndarray:
    """Validate an integer-coded table against the domain."""
    data = np.asarray(data)
    if data.ndim != 2 or data.shape[1] != len(domain):
        raise ValueError(f"data must have shape (n, {len(domain)}), got {data.shape}")
    if data.size and not np.issubdtype(data.dtype, np.integer):
        if not np.all(np.equal(np.mod(data, 1), 0)):
            raise ValueError("data must contain integer codes")
        data = data.astype(np.int64)
    sizes = np.array(domain.shape)
    if data.size and (np.any(data < 0) or np.any(data >= sizes)):
        raise ValueError("data has codes outside the domain")
    return data


class GraphicalModel:
    """Undirected graphical model whose maximal cliques form a junction tree.

    The joint distribution is ``p(x) = exp(sum_C theta_C(x_C) - A)`` over
    the maximal cliques ``C`` of the tree, and the model represents
    ``total * p`` records.

    Parameters
    ----------
    domain : ModelDomain
        Attribute sizes; data columns follow its attribute order.
    cliques : JunctionTree or iterable of sequence of str
        The junction tree, or cliques from which it is built.
    potentials : mapping of tuple of str to Factor or ndarray, default=None
        Log-potentials; each is added to a maximal clique covering it.
        ``None`` gives the uniform distribution.
    total : float, default=1.0
        Number of records the model stands for (scales :meth:`marginal`).

    Attributes
    ----------
    domain : ModelDomain
    tree : JunctionTree
    cliques : list of tuple of str
        Maximal cliques of the tree.
    total : float
    """

    def __init__(
        self,
        domain: ModelDomain,
        cliques: JunctionTree | Iterable[Sequence[str]],
        potentials: Mapping[Sequence[str], Factor | np.ndarray] | None = None,
        total: float = 1.0,
    ) -> None:
        domain = require_model_domain(domain)
        if isinstance(cliques, JunctionTree):
            if cliques.domain != domain:
                raise ValueError("cliques is a JunctionTree over another domain")
            tree = cliques
        else:
            tree = JunctionTree(domain, cliques)
        self._setup(tree, tables_from_potentials(tree, potentials), total)

    @classmethod
    def from_tables(
        cls, tree: JunctionTree, tables: Sequence[np.ndarray], total: float = 1.0
    ) -> "GraphicalModel":
        """Model from one log table per maximal clique (no copy, no checks).

        Parameters
        ----------
        tree : JunctionTree
            The junction tree.
        tables : sequence of ndarray
            Log-potentials aligned with ``tree.cliques``.
        total : float, default=1.0
            Number of records.

        Returns
        -------
        model : GraphicalModel
        """
        model = cls.__new__(cls)
        model._setup(tree, list(tables), total)
        return model

    def _setup(self, tree: JunctionTree, tables: list[np.ndarray], total: float) -> None:
        """Set the state shared by the constructors."""
        if not np.isfinite(total) or total <= 0:
            raise ValueError(f"total must be a positive finite number, got {total!r}")
        self.tree = tree
        self.domain = tree.domain
        self.cliques = tree.cliques
        self.total = float(total)
        self._tables = tables
        self._beliefs: CalibratedBeliefs | None = None

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_beliefs"] = None
        return state

    def __repr__(self) -> str:
        return (f"GraphicalModel(n_attributes={len(self.domain)}, "
                f"n_cliques={len(self.cliques)}, size_mb={self.size_mb:.3g}, "
                f"total={self.total:.6g})")

    # ----------------------------------------------------------- structure
    @property
    def tables(self) -> list[np.ndarray]:
        """Log-potential tables aligned with ``cliques`` (not copies)."""
        return self._tables

    @property
    def dtype(self) -> type:
        """``numpy.float32`` when every table is float32, else ``numpy.float64``."""
        if self._tables and all(t.dtype == np.float32 for t in self._tables):
            return np.float32
        return np.float64

    @property
    def potentials(self) -> dict[tuple[str, ...], Factor]:
        """Log-potentials of the maximal cliques (copies)."""
        return {c: Factor(c, t.copy()) for c, t in zip(self.cliques, self._tables)}

    @property
    def size_mb(self) -> float:
        """Memory of the potentials in MiB (8 bytes per cell)."""
        return self.tree.size_mb

    # ----------------------------------------------------------- inference
    @property
    def beliefs(self) -> CalibratedBeliefs:
        """Calibrated clique marginals (computed once, then cached)."""
        if self._beliefs is None:
            self._beliefs = CalibratedBeliefs(self.tree, self._tables)
        return self._beliefs

    def release_beliefs(self) -> None:
        """Free the cached calibrated marginals (recomputed when next needed).

        The cache holds two arrays the size of the model (log-marginals and
        marginals); a caller that keeps a model only as the warm start of
        the next estimation can drop them to lower its peak memory.
        """
        self._beliefs = None

    @property
    def log_partition(self) -> float:
        """Log of the normalising constant of the potentials."""
        return self.beliefs.log_partition

    def marginal(self, attrs: Sequence[str], normalize: bool = False) -> np.ndarray:
        """Marginal of an attribute subset.

        Parameters
        ----------
        attrs : sequence of str
            Attributes, in the output axis order.
        normalize : bool, default=False
            Return probabilities instead of counts (``total * p``).

        Returns
        -------
        marginal : ndarray
            Shape ``domain.project(attrs).shape``.
        """
        probs = self.beliefs.marginal_view(attrs)
        if normalize:
            return np.array(probs, order="C")
        return np.multiply(probs, self.total, order="C")

    def marginals(self, queries: Sequence[Sequence[str]],
                  normalize: bool = False) -> list[np.ndarray]:
        """Marginals of many attribute subsets at once.

        The answers of :meth:`marginal` on each query (up to float rounding),
        with shared passes over the calibrated beliefs
        (:meth:`sklearn_dpsynth.pgm.CalibratedBeliefs.marginals`).

        Parameters
        ----------
        queries : sequence of sequence of str
            Attribute subsets, each in its output axis order.
        normalize : bool, default=False
            Return probabilities instead of counts (``total * p``).

        Returns
        -------
        marginals : list of ndarray
        """
        probs = self.beliefs.marginals(queries)
        if not normalize:
            for values in probs:
                values *= self.total
        return probs

    def log_likelihood(self, data: np.ndarray) -> np.ndarray:
        """Exact log-probability of every row.

        Parameters
        ----------
        data : ndarray of shape (n, n_attributes), int
            Rows coded in the domain's column order.

        Returns
        -------
        log_prob : ndarray of shape (n,)
            ``sum_C theta_C(x_C) - log_partition`` in nats.
        """
        data = _check_data(data, self.domain)
        out = np.full(data.shape[0], -self.log_partition)
        for clique, table in zip(self.cliques, self._tables):
            flat = np.ravel_multi_index(tuple(data[:, k] for k in self.domain.axes(clique)),
                                        table.shape)
            out += table.ravel()[flat]
        return out

    def sample(
        self,
        n: int | None = None,
        rng: np.random.Generator | int | None = None,
        method: str = "lowvar",
    ) -> np.ndarray:
        """Generate synthetic rows.

        Parameters
        ----------
        n : int, default=None
            Number of rows; ``round(total)`` when None.
        rng : numpy Generator, int or None, default=None
            Randomness source (a seed is passed to ``default_rng``).
        method : {"lowvar", "iid"}, default="lowvar"
            ``"lowvar"``: low-variance rounding of the conditionals (the
            NIST-contest generator); ``"iid"``: exact ancestral sampling.

        Returns
        -------
        data : ndarray of shape (n, n_attributes), int64
        """
        from .sampling import sample_iid, sample_lowvar

        if n is None:
            n = int(round(self.total))
        if isinstance(n, bool) or int(n) != n or n < 0:
            raise ValueError(f"n must be a non-negative int, got {n!r}")
        rng = np.random.default_rng(rng)
        if method == "lowvar":
            return sample_lowvar(self.tree, self.beliefs, int(n), rng)
        if method == "iid":
            return sample_iid(self.tree, self.beliefs, int(n), rng)
        raise ValueError(f"method must be 'lowvar' or 'iid', got {method!r}")

    def condition(self, evidence: Mapping[str, int]) -> "GraphicalModel":
        """The model of the conditional distribution given fixed values.

        Evidence is entered in the junction tree: each fixed attribute's
        indicator (``0`` at its value, ``-inf`` elsewhere) is added to the
        log-potential of one maximal clique containing it, and the tree is
        recalibrated.  The result is exactly ``p(x | evidence)``: its
        marginals are the conditional marginals, and both generators sample
        from it (every fixed attribute takes its value with probability 1).

        Parameters
        ----------
        evidence : mapping of str to int
            ``{attribute: code}``; an empty mapping returns ``self``.

        Returns
        -------
        model : GraphicalModel
            Same tree and ``total`` (the number of records it stands for is
            not rescaled), new potentials.

        Raises
        ------
        ZeroProbabilityEvidence
            When the evidence has probability zero under this model.
        ValueError
            For an unknown attribute or a code outside its attribute's size.
        """
        evidence = dict(evidence)
        if not evidence:
            return self
        tables = list(self._tables)
        for attr, code in evidence.items():
            index = self._evidence_clique(attr, code)
            clique = self.cliques[index]
            indicator = np.full(self.domain[attr], -np.inf)
            indicator[int(code)] = 0.0
            shape = [1] * len(clique)
            shape[clique.index(attr)] = -1
            tables[index] = tables[index] + indicator.reshape(shape)
        model = GraphicalModel.from_tables(self.tree, tables, self.total)
        try:
            model.beliefs
        except ValueError:
            raise ZeroProbabilityEvidence(sorted(evidence)) from None
        return model

    def _evidence_clique(self, attr: str, code: int) -> int:
        """Index of the maximal clique that receives the evidence on ``attr``."""
        if attr not in self.domain:
            raise ValueError(f"evidence: unknown attribute {attr!r}")
        size = self.domain[attr]
        if isinstance(code, (bool, np.bool_)) or not isinstance(code, (int, np.integer)) \
                or not 0 <= code < size:
            raise ValueError(f"evidence[{attr!r}] must be an int code in 0..{size - 1}")
        return self.tree.index_containing((attr,))

    def project(self, cliques: JunctionTree | Iterable[Sequence[str]]) -> "GraphicalModel":
        """Closest model on another junction tree (moment matching).

        The new potentials are the junction-tree factorisation of this
        model's marginals on the new maximal cliques, so the result equals
        this model whenever it factorises over the new tree.

        Parameters
        ----------
        cliques : JunctionTree or iterable of sequence of str
            Target structure over the same domain.

        Returns
        -------
        model : GraphicalModel
        """
        tree = cliques if isinstance(cliques, JunctionTree) else JunctionTree(self.domain, cliques)
        if tree.domain != self.domain:
            raise ValueError("cliques is a JunctionTree over another domain")
        dtype = self.dtype
        margs = [np.asarray(self.beliefs.marginal(c), dtype=dtype) for c in tree.cliques]
        return GraphicalModel.from_tables(tree, potentials_from_marginals(tree, margs, dtype),
                                          self.total)
