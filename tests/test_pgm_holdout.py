"""The held-out stop of the estimation: noise-split cross-validation of the discrepancy factor."""

import numpy as np
import pytest

from sklearn_dpsynth.marginal.measure import measure_marginal_halves, measure_marginals
from sklearn_dpsynth.pgm import Factor, GraphicalModel, Measurement, ModelDomain, estimate
from sklearn_dpsynth.pgm.estimation import (HeldOutLoss, estimation_tree, expected_loss,
                                            holdout_stop_factor)
from sklearn_dpsynth.pgm.measurement import Objective
from sklearn_dpsynth.privacy import PrivacyLedger

DOMAIN = ModelDomain.from_mapping({"a": 6, "b": 8, "c": 5, "d": 10, "e": 6, "f": 7})
TREE = [("a", "b"), ("b", "c"), ("b", "d"), ("d", "e"), ("e", "f")]
CLIQUES = [(x,) for x in DOMAIN] + TREE
TOTAL = 5000.0


def _problem(seed, sigma, scale):
    """True tree marginals, and two noisy halves (noise sqrt(2) sigma) of each."""
    rng = np.random.default_rng(seed)
    potentials = {c: Factor(c, scale * rng.normal(size=[DOMAIN[x] for x in c])) for c in TREE}
    truth = GraphicalModel(DOMAIN, TREE, potentials, total=TOTAL)
    true = [truth.marginal(c).ravel() for c in CLIQUES]
    halves = [tuple(Measurement(c, x + rng.normal(scale=np.sqrt(2) * sigma, size=x.shape),
                                np.sqrt(2) * sigma) for _ in range(2))
              for c, x in zip(CLIQUES, true)]
    return true, halves


def _error_path(true, combined, sigma):
    """Losses and true errors ||mu - x||^2 / sigma^2 of every step of a run to convergence."""
    tree = estimation_tree(DOMAIN, combined)
    oracle = HeldOutLoss(Objective(tree, [Measurement(c, x, sigma)
                                          for c, x in zip(CLIQUES, true)], TOTAL),
                         patience=10**6)
    estimate(DOMAIN, combined, total=TOTAL, max_iter=1000, tol=1e-7, callback=oracle)
    history = np.array(oracle.history)
    return history[:, 1], history[:, 2]


def _first_below(losses, target):
    hits = np.nonzero(losses <= target)[0]
    return hits[0] if len(hits) else len(losses) - 1


@pytest.mark.parametrize("sigma, scale", [(20.0, 1.0), (50.0, 2.0), (5.0, 1.0)])
def test_holdout_stop_lands_near_the_best_step(sigma, scale):
    """Against ground truth: the chosen stop's error is near the path's best, better on
    average than a fixed factor of 0.7, and not behind running to convergence."""
    chosen, fixed, converged = [], [], []
    for seed in range(4):
        true, halves = _problem(seed, sigma, scale)
        combined = [Measurement(a.clique, (a.noisy + b.noisy) / 2, sigma) for a, b in halves]
        factor, folds = holdout_stop_factor(DOMAIN, halves, total=TOTAL, max_iter=1000,
                                            tol=1e-7)
        assert len(folds) == 2
        losses, errors = _error_path(true, combined, sigma)
        best = errors.min()
        expected = expected_loss(combined)
        if factor is None:  # a fold's held-out loss was lowest at its end
            assert any(f["best_at_end"] for f in folds)
            chosen.append(errors[-1] / best)
        else:
            assert factor == min(f["factor"] for f in folds) >= 0
            chosen.append(errors[_first_below(losses, factor * expected)] / best)
        fixed.append(errors[_first_below(losses, 0.7 * expected)] / best)
        converged.append(errors[-1] / best)
    assert max(chosen) < 1.25, chosen
    assert np.mean(chosen) < 1.1, chosen
    # never behind the fixed factor; at most a few percent behind convergence where
    # the noise is small enough for convergence to be best (sigma=5)
    assert np.mean(chosen) < np.mean(fixed), (chosen, fixed)
    assert np.mean(chosen) < np.mean(converged) + 0.03, (chosen, converged)


def test_heldout_loss_sees_the_start_and_every_step():
    true, halves = _problem(0, 20.0, 1.0)
    first = [a for a, _ in halves]
    tree = estimation_tree(DOMAIN, first)
    heldout = [b for _, b in halves]
    monitor = HeldOutLoss(Objective(tree, heldout, TOTAL), patience=10**6)
    _, info = estimate(DOMAIN, first, total=TOTAL, max_iter=30, tol=0.0, callback=monitor)
    assert [h[0] for h in monitor.history] == list(range(info["iterations"] + 1))
    np.testing.assert_allclose([h[1] for h in monitor.history], info["loss_history"])
    # the held-out loss of the final model, computed independently
    model = estimate(DOMAIN, first, total=TOTAL, max_iter=30, tol=0.0)[0]
    direct = sum(np.sum((model.marginal(m.clique).ravel() - m.noisy) ** 2) / m.sigma**2
                 for m in heldout)
    assert monitor.history[-1][2] == pytest.approx(direct, rel=1e-6)


def test_heldout_loss_stops_after_its_patience():
    monitor = HeldOutLoss(objective=None, patience=3)
    monitor.objective = type("Fixed", (), {"loss": staticmethod(lambda counts: counts)})()
    path = [5.0, 4.0, 3.0, 3.5, 3.6, 3.7, 3.8]  # best at step 2: stop 4 steps past it
    stops = [monitor(k, 0.0, value) for k, value in enumerate(path)]
    assert stops == [False] * 6 + [True]
    assert monitor.history[monitor.best][0] == 2 and not monitor.best_at_end


def test_halves_must_measure_the_same_marginals():
    _, halves = _problem(0, 20.0, 1.0)
    swapped = [(halves[0][0], halves[1][1])] + halves[1:]
    with pytest.raises(ValueError, match="same marginal"):
        holdout_stop_factor(DOMAIN, swapped, total=TOTAL)


class _Table:
    """The counts interface of an encoded table, for the measurement functions."""

    columns = ["a", "b"]

    def __init__(self):
        self.codes = np.random.default_rng(1).integers(0, 3, size=(200, 2))

    def counts(self, clique):
        return np.histogramdd(self.codes[:, list(clique)],
                              bins=[np.arange(4)] * len(clique))[0].astype(np.int64)


def test_halves_cost_what_one_release_costs():
    """Ledger: two halves at sqrt(2) sigma compose to the cost of one release at sigma."""
    sigmas = np.array([3.0, 5.0, 7.0])
    cliques = [(0,), (1,), (0, 1)]
    split, whole = PrivacyLedger(10.0, 1e-6), PrivacyLedger(10.0, 1e-6)
    pairs = measure_marginal_halves(_Table(), cliques, sigmas, split,
                                    np.random.default_rng(0))
    measure_marginals(_Table(), cliques, sigmas, whole, np.random.default_rng(0))
    independent = sum(1 / (2 * s**2) for s in sigmas)
    assert sum(e.rho for e in split.entries) == pytest.approx(independent, rel=1e-12)
    assert sum(e.rho for e in whole.entries) == pytest.approx(independent, rel=1e-12)
    assert len(split.entries) == 2 * len(cliques)
    for entry in split.entries:
        assert entry.rho == pytest.approx(1 / (2 * entry.noise_scale**2), rel=1e-12)
    assert split.spent() == whole.spent()
    for (a, b), clique in zip(pairs, cliques):
        assert a.shape == b.shape == (3 ** len(clique),)
        assert not np.array_equal(a, b)  # independent noise
        assert np.all(a == np.round(a))  # integer releases


def _independent_start(measurements):
    """Log-potentials of the independent model of the 1-way measurements (clipped counts)."""
    return {m.clique: np.log(np.maximum(m.noisy, 0.01))
            for m in measurements if len(m.clique) == 1}


def test_fold_starts_keep_the_heldout_half_unseen():
    """With one start per fold computed from its own half, a fold's whole path (its losses
    and held-out losses) depends on the held-out half only through the held-out loss: two
    problems that share the first halves give fold 0 the same fitted losses.  A start from
    the mean of both halves (the leak) moves fold 0's path with the second halves."""
    _, halves = _problem(0, 20.0, 1.0)
    _, other = _problem(1, 20.0, 1.0)
    # same first halves, other second halves (same marginals, other noise and signal)
    mixed = [(a, Measurement(b.clique, b.noisy, b.sigma)) for (a, _), (_, b) in zip(halves, other)]

    def fold0_losses(pairs, shared):
        first, second = [a for a, _ in pairs], [b for _, b in pairs]
        if shared:
            mean = [Measurement(a.clique, (a.noisy + b.noisy) / 2, a.sigma / np.sqrt(2))
                    for a, b in pairs]
            starts = [_independent_start(mean)] * 2
        else:
            starts = [_independent_start(first), _independent_start(second)]
        _, folds = holdout_stop_factor(DOMAIN, pairs, total=TOTAL, max_iter=60, tol=0.0,
                                       fold_potentials=starts, patience=10**6)
        return np.array([h[1] for h in folds[0]["history"]])

    np.testing.assert_array_equal(fold0_losses(halves, False), fold0_losses(mixed, False))
    assert not np.allclose(fold0_losses(halves, True), fold0_losses(mixed, True))


def test_fold_potentials_default_to_the_shared_start():
    _, halves = _problem(2, 20.0, 1.0)
    start = _independent_start([a for a, _ in halves])
    shared = holdout_stop_factor(DOMAIN, halves, total=TOTAL, max_iter=40, potentials=start)
    both = holdout_stop_factor(DOMAIN, halves, total=TOTAL, max_iter=40,
                               fold_potentials=[start, start])
    assert shared[0] == both[0]
    with pytest.raises(ValueError, match="two warm starts"):
        holdout_stop_factor(DOMAIN, halves, total=TOTAL, fold_potentials=[start])


def test_fold_potentials_and_potentials_are_exclusive():
    """A shared start and per-fold starts together: one would be ignored, so it refuses."""
    _, halves = _problem(2, 20.0, 1.0)
    start = _independent_start([a for a, _ in halves])
    with pytest.raises(ValueError, match="not both"):
        holdout_stop_factor(DOMAIN, halves, total=TOTAL, potentials=start,
                            fold_potentials=[start, start])
