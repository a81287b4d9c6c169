"""benchmarks/mst_ordered.py: the tree ceiling against the engine and brute force."""

import itertools

import numpy as np
import pytest

from benchmarks.mst_ordered import tree_ceiling, valid_rows
from benchmarks.reference import make_ordered
from sklearn_dpsynth.pgm import Measurement, ModelDomain, estimate


def _brute_force(frame, edges):
    """Valid rows' probability under the tree model, every row enumerated."""
    codes = frame.to_numpy()
    where = {c: k for k, c in enumerate(frame.columns)}
    n, width = codes.shape
    degree = np.zeros(width, dtype=int)
    for a, b in edges:
        degree[[where[a], where[b]]] += 1
    total, on_valid = 0.0, 0.0
    for row in itertools.product([0, 1], repeat=width):
        p = 1.0
        for a, b in edges:
            i, j = where[a], where[b]
            p *= np.mean((codes[:, i] == row[i]) & (codes[:, j] == row[j]))
        for k in range(width):
            p /= np.mean(codes[:, k] == row[k]) ** (degree[k] - 1) if degree[k] > 1 else 1.0
        total += p
        on_valid += p if all(x >= y for x, y in zip(row, row[1:])) else 0.0
    return total, on_valid


@pytest.mark.parametrize("edges", [
    [("b00", "b01"), ("b01", "b02"), ("b02", "b03"), ("b03", "b04")],   # the chain
    [("b00", "b01"), ("b01", "b02"), ("b02", "b04"), ("b02", "b03")],   # b02 - b04 skips one
    [("b00", "b02"), ("b00", "b01"), ("b01", "b03"), ("b03", "b04")],
])
def test_tree_ceiling_matches_brute_force_and_the_engine(edges):
    frame = make_ordered(n_samples=3000, n_columns=5, seed=1)
    total, brute = _brute_force(frame, edges)
    assert total == pytest.approx(1.0, abs=1e-9)
    ceiling = tree_ceiling(frame, edges)
    assert ceiling == pytest.approx(brute, rel=1e-9)
    chain = all(int(b[1:]) - int(a[1:]) == 1 for a, b in edges)
    assert (ceiling == pytest.approx(1.0)) == chain
    # the engine fitted to the exact marginals of the edges gives the same probability
    domain = ModelDomain.from_mapping({c: 2 for c in frame.columns})
    codes = frame.to_numpy()
    where = {c: k for k, c in enumerate(frame.columns)}
    measured = [Measurement((a, b), np.bincount(2 * codes[:, where[a]] + codes[:, where[b]],
                                                minlength=4).astype(float), 1.0)
                for a, b in edges]
    model, _ = estimate(domain, measured, total=len(frame), max_iter=5000, tol=0.0)
    valid = valid_rows(list(frame.columns)).to_numpy()
    probability = sum(model.marginal(tuple(frame.columns))[tuple(row)] for row in valid)
    assert probability / len(frame) == pytest.approx(ceiling, abs=2e-3)
