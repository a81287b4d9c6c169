"""Batched marginals (``subset_marginals``, ``marginals``) against one-by-one answers."""

import itertools

import numpy as np
import pytest

from sklearn_dpsynth.pgm import GraphicalModel, JunctionTree, ModelDomain
from sklearn_dpsynth.pgm import inference
from sklearn_dpsynth.pgm.factor import sum_axes
from sklearn_dpsynth.pgm.inference import subset_marginals

from ._brute_force import brute_log_joint, brute_marginal, random_potentials


@pytest.mark.parametrize("seed", range(4))
def test_subset_marginals_equal_sum_axes(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 4, size=rng.integers(1, 11)))
    table = rng.random(shape)
    ndim = len(shape)
    wanted = [()] + [tuple(range(ndim))]
    for r in (1, 2, 3):
        wanted += list(itertools.combinations(range(ndim), r))
    rng.shuffle(wanted)
    got = subset_marginals(table, wanted)
    for kept, values in zip(wanted, got):
        expected = sum_axes(table, tuple(a for a in range(ndim) if a not in kept))
        assert values.shape == tuple(shape[a] for a in kept)
        np.testing.assert_allclose(values, expected, rtol=1e-12, atol=1e-15)


def test_subset_marginals_reject_unsorted_axes():
    with pytest.raises(ValueError, match="increasing"):
        subset_marginals(np.ones((2, 2)), [(1, 0)])
    with pytest.raises(ValueError, match="increasing"):
        subset_marginals(np.ones((2, 2)), [(2,)])


def _random_model(n_attrs, n_cliques, width, seed, sizes=(2,)):
    rng = np.random.default_rng(seed)
    domain = ModelDomain.from_mapping(
        {f"x{k:02d}": int(rng.choice(sizes)) for k in range(n_attrs)})
    names = list(domain)
    cliques = [(a,) for a in names]
    for _ in range(n_cliques):
        cliques.append(tuple(rng.choice(names, size=width, replace=False)))
    pots = random_potentials(domain, cliques, seed=seed)
    return GraphicalModel(domain, cliques, pots, total=123.0), pots, domain


def _queries(names, seed, count=300):
    rng = np.random.default_rng(seed)
    out = [()]
    for _ in range(count):
        r = int(rng.integers(1, 5))
        out.append(tuple(rng.permutation(rng.choice(names, size=r, replace=False))))
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("tiny_joint", [False, True])
def test_batched_marginals_equal_one_by_one(seed, tiny_joint, monkeypatch):
    """Covered queries, uncovered ones through the joint and (tiny_joint) one by one."""
    if tiny_joint:  # no joint multiplied out, and a cache of 4 cells
        monkeypatch.setattr(inference, "_JOINT_CELLS", 4)
        monkeypatch.setattr(inference, "_CACHE_CELLS", 4)
    model, pots, domain = _random_model(11, 6, 4, seed, sizes=(2, 3))
    queries = _queries(list(domain), seed)
    assert any(model.tree.index_containing(q) is None for q in queries)
    assert any(q and model.tree.index_containing(q) is not None for q in queries)
    batched = model.marginals(queries)
    fresh = GraphicalModel(domain, model.cliques, pots, total=123.0)
    log_joint = brute_log_joint(domain, pots)
    for attrs, values in zip(queries, batched):
        one = fresh.marginal(attrs)
        assert values.shape == one.shape and values.flags.c_contiguous
        np.testing.assert_allclose(values, one, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(values / 123.0, brute_marginal(domain, log_joint, attrs),
                                   atol=1e-12)
    probs = model.marginals(queries[:20], normalize=True)
    for attrs, values in zip(queries[:20], probs):
        np.testing.assert_allclose(values, fresh.marginal(attrs, normalize=True), rtol=1e-10,
                                   atol=1e-14)


def test_batched_marginals_on_large_binary_cliques():
    """Cliques of more than 8 axes (the path where sum_axes copies)."""
    model, pots, domain = _random_model(16, 3, 11, 7)
    queries = [q for r in (1, 2, 3) for q in itertools.combinations(list(domain), r)]
    batched = model.marginals(queries)
    for attrs, values in zip(queries, batched):
        np.testing.assert_allclose(values, model.marginal(attrs), rtol=1e-10, atol=1e-12)


def test_batched_marginals_bad_queries():
    model, _, _ = _random_model(4, 1, 2, 0)
    with pytest.raises(ValueError, match="not a str"):
        model.marginals(["x00"])
    with pytest.raises(ValueError, match="repeated"):
        model.marginals([("x00", "x00")])
