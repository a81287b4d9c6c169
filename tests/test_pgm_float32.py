"""float32 beliefs and tables in the Private-PGM engine, against float64."""

import itertools
from functools import partial

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_dpsynth.pgm import (
    Factor,
    GraphicalModel,
    JunctionTree,
    Measurement,
    ModelDomain,
    belief_propagation,
    estimate,
)
from sklearn_dpsynth.pgm.measurement import Objective
from sklearn_dpsynth.pgm.model import tables_from_potentials

from ._brute_force import brute_log_joint, brute_marginal, random_potentials

DOMAIN = ModelDomain.from_mapping({"a": 3, "b": 4, "c": 2, "d": 5, "e": 3})
NAMES = list(DOMAIN)
STRUCTURES = {
    "tree": [("a", "b"), ("b", "c"), ("b", "d"), ("d", "e")],
    "loopy": [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "a")],
    "overlapping": [("a", "b", "c"), ("b", "c", "d"), ("c", "d", "e")],
}
TOTAL = 10_000.0


_potentials = partial(random_potentials, DOMAIN, scale=2.0)
_brute_log_joint = partial(brute_log_joint, DOMAIN)
_brute_marginal = partial(brute_marginal, DOMAIN)


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_float32_inference_matches_enumeration(name):
    pots = _potentials(STRUCTURES[name], seed=len(name))
    tree = JunctionTree(DOMAIN, STRUCTURES[name])
    tables = tables_from_potentials(tree, pots)
    joint = _brute_log_joint(pots)
    _, beliefs, log_z = belief_propagation(tree, [t.astype(np.float32) for t in tables],
                                           keep_log=False)
    assert all(b.dtype == np.float32 for b in beliefs)
    assert log_z == pytest.approx(logsumexp(joint), rel=1e-6)
    for clique, belief in zip(tree.cliques, beliefs):
        np.testing.assert_allclose(belief, _brute_marginal(joint, clique), rtol=0, atol=1e-6)
    # float64 tables with float32 messages and beliefs: the same answers
    _, mixed, mixed_z = belief_propagation(tree, tables, keep_log=False, dtype=np.float32)
    assert all(b.dtype == np.float32 for b in mixed)
    assert mixed_z == pytest.approx(logsumexp(joint), rel=1e-6)
    for clique, belief in zip(tree.cliques, mixed):
        np.testing.assert_allclose(belief, _brute_marginal(joint, clique), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_float32_model_answers_every_marginal_in_float64(name):
    pots = _potentials(STRUCTURES[name], seed=7)
    joint = _brute_log_joint(pots)
    tree = JunctionTree(DOMAIN, STRUCTURES[name])
    tables = [t.astype(np.float32) for t in tables_from_potentials(tree, pots)]
    model = GraphicalModel.from_tables(tree, tables, total=TOTAL)
    for size in (1, 2, 3):
        for attrs in itertools.combinations(NAMES, size):
            answer = model.marginal(attrs, normalize=True)
            assert answer.dtype == np.float64
            np.testing.assert_allclose(answer, _brute_marginal(joint, attrs), rtol=0,
                                       atol=1e-6)
    rows = np.array(list(itertools.product(*[range(DOMAIN[a]) for a in NAMES])))
    exact = joint[tuple(rows.T)] - logsumexp(joint)
    np.testing.assert_allclose(model.log_likelihood(rows), exact, rtol=0, atol=1e-5)


def test_float32_sampling_is_reproducible_and_follows_the_model():
    pots = _potentials(STRUCTURES["overlapping"], seed=3, scale=1.0)
    joint = _brute_log_joint(pots)
    tree = JunctionTree(DOMAIN, STRUCTURES["overlapping"])
    tables = [t.astype(np.float32) for t in tables_from_potentials(tree, pots)]
    model = GraphicalModel.from_tables(tree, tables, total=TOTAL)
    rows = model.sample(200_000, rng=0, method="iid")
    np.testing.assert_array_equal(rows, model.sample(200_000, rng=0, method="iid"))
    counts = np.zeros([DOMAIN[a] for a in ("b", "d")])
    np.add.at(counts, (rows[:, 1], rows[:, 3]), 1)
    # 200k draws: every cell's frequency within 5 standard errors
    expected = _brute_marginal(joint, ("b", "d"))
    se = np.sqrt(expected * (1 - expected) / rows.shape[0])
    assert np.all(np.abs(counts / rows.shape[0] - expected) <= 5 * se + 1e-12)


def _measurements(name, sigma, seed):
    truth = GraphicalModel(DOMAIN, STRUCTURES[name], _potentials(STRUCTURES[name], seed=1,
                                                                  scale=1.0), total=TOTAL)
    rng = np.random.default_rng(seed)
    cliques = STRUCTURES[name] + [(a,) for a in NAMES] + [("a", "c", "e")]
    out = []
    for clique in cliques:
        y = truth.marginal(clique).ravel()
        out.append(Measurement(clique, y + rng.normal(scale=sigma, size=y.shape), sigma))
    return out


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_float32_loss_at_the_same_model_matches_float64(name):
    """Counts from float32 inference give the float64 loss to 1e-5 (relative).

    float32 log-beliefs of magnitude ~8 carry ~5e-7 relative error in every
    probability; with counts of 10^4 and noise 20 that moves this loss by
    about 2e-6 relative, so 1e-6 is out of float32's reach here.
    """
    measurements = _measurements(name, 20.0, seed=2)
    model, _ = estimate(DOMAIN, measurements, max_iter=50)
    tree = model.tree
    objective = Objective(tree, measurements, model.total)
    exact = objective.loss(objective.counts(belief_propagation(tree, model.tables)[1]))
    # mirror descent's setting: float64 log-potentials, float32 inference
    counts = objective.counts(belief_propagation(tree, model.tables, keep_log=False,
                                                 dtype=np.float32)[1])
    assert objective.loss(counts) == pytest.approx(exact, rel=1e-5)
    # float32 log-potentials: the model itself is rounded, the loss follows
    single = [t.astype(np.float32) for t in model.tables]
    counts = objective.counts(belief_propagation(tree, single, keep_log=False)[1])
    assert objective.loss(counts) == pytest.approx(exact, rel=1e-4)


@pytest.mark.parametrize("name", sorted(STRUCTURES))
@pytest.mark.parametrize("tol", [1e-4, 1e-6])
def test_float32_estimation_matches_float64(name, tol):
    """Same problem, both dtypes: the optimisation paths differ only by rounding.

    Marginal probabilities are as close to the optimum's as float64's, within
    1e-4 (the two stop at different points); the final loss is no more
    than 1e-3 (relative) above float64's (it may be lower: float32 stops
    as converged, float64 checks and may go on).  The loss history is
    non-increasing (across the switch to float64 up to float32's rounding
    of the loss) and the model's tables are float32.
    """
    measurements = _measurements(name, 20.0, seed=3)
    m64, i64 = estimate(DOMAIN, measurements, tol=tol)
    m32, i32 = estimate(DOMAIN, measurements, tol=tol, dtype=np.float32)
    assert all(t.dtype == np.float64 for t in m64.tables)
    assert all(t.dtype == np.float32 for t in m32.tables)
    history = np.asarray(i32["loss_history"])
    assert np.all(np.diff(history) <= 1e-6 * history[1:])
    switch = i32["float64_from"]
    if switch is not None:
        assert np.all(np.diff(history[:switch]) <= 0)
        assert np.all(np.diff(history[switch:]) <= 0)
    assert i32["loss_history"][-1] <= i64["loss_history"][-1] * (1 + 1e-3)
    optimum, _ = estimate(DOMAIN, measurements, tol=1e-10, max_iter=20000)
    for size in (1, 2, 3):
        for attrs in itertools.combinations(NAMES, size):
            best = optimum.marginal(attrs, normalize=True)
            error64 = np.abs(m64.marginal(attrs, normalize=True) - best).max()
            error32 = np.abs(m32.marginal(attrs, normalize=True) - best).max()
            assert error32 <= error64 + 1e-4, attrs


def test_float64_is_the_default_and_float32_warm_starts_take_either():
    measurements = _measurements("tree", 20.0, seed=4)
    m64, _ = estimate(DOMAIN, measurements, max_iter=20)
    again, _ = estimate(DOMAIN, measurements, max_iter=20, dtype="float64")
    for a, b in zip(m64.tables, again.tables):
        np.testing.assert_array_equal(a, b)
    m32, _ = estimate(DOMAIN, measurements, max_iter=20, dtype="float32")
    assert m64.dtype is np.float64 and m32.dtype is np.float32
    # projection onto a refined tree keeps the model and its dtype
    refined = m32.project(list(m32.cliques) + [("a", "c", "d")])
    assert refined.dtype is np.float32
    for attrs in itertools.combinations(NAMES, 2):
        np.testing.assert_allclose(refined.marginal(attrs, normalize=True),
                                   m32.marginal(attrs, normalize=True), rtol=0, atol=1e-6)
    for start in (m64, m32):
        warm, info = estimate(DOMAIN, measurements, potentials=start, dtype=np.float32)
        assert all(t.dtype == np.float32 for t in warm.tables)
        assert info["loss_history"][-1] <= info["loss_history"][0]


def test_float32_structural_zeros_stay_exact():
    measurements = _measurements("tree", 20.0, seed=5)
    mask = np.zeros((DOMAIN["b"], DOMAIN["d"]))
    mask[1, 2] = mask[3, :2] = -np.inf
    start = {("b", "d"): Factor(("b", "d"), mask)}
    model, info = estimate(DOMAIN, measurements, potentials=start, dtype=np.float32)
    bd = model.marginal(("b", "d"))
    assert bd[1, 2] == 0 and np.all(bd[3, :2] == 0)
    assert np.all(bd[np.isfinite(mask)] > 0)
    assert np.all(np.diff(info["loss_history"]) <= 0)


@pytest.mark.parametrize("dtype", [np.float16, np.int64, "float", "complex128", None, "x"])
def test_bad_dtype_is_a_value_error_naming_it(dtype):
    measurements = _measurements("tree", 20.0, seed=6)
    if dtype == "float":  # numpy reads "float" as float64: accepted
        estimate(DOMAIN, measurements, max_iter=2, dtype=dtype)
        return
    with pytest.raises(ValueError, match="dtype"):
        estimate(DOMAIN, measurements, max_iter=2, dtype=dtype)


def test_mst_model_dtype_float32_matches_float64():
    """MST's engine precision: float64 by default, float32 on request, same model here."""
    from sklearn_dpsynth import MSTSynthesizer
    from sklearn_dpsynth.datasets import make_bayesnet

    net = make_bayesnet(n_samples=3000, n_features=5, random_state=1)
    single = MSTSynthesizer(domain=net.domain, random_state=0,
                            model_dtype="float32").fit(net.frame, epsilon=2.0)
    double = MSTSynthesizer(domain=net.domain, random_state=0).fit(net.frame, epsilon=2.0)
    assert double.get_params()["model_dtype"] == "float64"
    assert all(t.dtype == np.float32 for t in single.model_.tables)
    assert all(t.dtype == np.float64 for t in double.model_.tables)
    assert single.cliques_ == double.cliques_
    for pair in itertools.combinations(single.domain_.columns, 2):
        np.testing.assert_allclose(single.marginal(list(pair)), double.marginal(list(pair)),
                                   rtol=0, atol=2e-4)
    assert single.score(net.frame) == pytest.approx(double.score(net.frame), abs=2e-4)
    with pytest.raises(ValueError, match="model_dtype"):
        MSTSynthesizer(domain=net.domain, model_dtype="half").fit(net.frame, epsilon=1.0)


def test_auto_dtype_compares_count_rounding_with_the_smallest_noise():
    """float32 exactly when total * 2**-23 <= 1% of min(sigma / sqrt(weight))."""
    from sklearn_dpsynth.pgm import auto_dtype
    from sklearn_dpsynth.pgm.estimation import AUTO_FLOAT32_RATIO

    def noisy(sigma, weight=1.0):
        return Measurement(("a",), np.zeros(3), sigma, weight=weight)

    edge = AUTO_FLOAT32_RATIO * 2.0 * 2.0**23  # total at which sigma = 2 is the limit
    assert auto_dtype([noisy(2.0), noisy(5.0)], edge) == np.float32
    assert auto_dtype([noisy(2.0), noisy(5.0)], edge * 1.01) == np.float64
    assert auto_dtype([noisy(5.0, weight=6.25)], edge) == np.float32  # 5 / 2.5 = 2
    assert auto_dtype([noisy(5.0, weight=6.26)], edge) == np.float64
    measurements = _measurements("tree", 20.0, seed=3)  # total 1e4: float32
    model, info = estimate(DOMAIN, measurements, dtype="auto", max_iter=30)
    assert info["dtype"] == "float32" and model.dtype is np.float32
    tight = [Measurement(m.clique, m.noisy, 1e-4) for m in measurements]
    model, info = estimate(DOMAIN, tight, dtype="auto", max_iter=30)
    assert info["dtype"] == "float64" and model.dtype is np.float64


def test_stalled_float32_estimation_is_finished_in_float64():
    """Near-deterministic potentials, 10^6 records: float32 stalls, float64 finishes.

    The float32 estimation reaches the float64 loss (within 3%: its float64
    finish starts about 100 steps in and has 1,400 steps left, and float32
    rounding moves where it starts; seen: 1.3-2.05% above) instead of
    stopping thousands above it, and its tables stay float32.
    """
    truth = GraphicalModel(DOMAIN, STRUCTURES["tree"],
                           _potentials(STRUCTURES["tree"], seed=1, scale=8.0), total=1e6)
    rng = np.random.default_rng(0)
    measurements = [Measurement(c, truth.marginal(c).ravel()
                                + rng.normal(size=DOMAIN.size(c)), 1.0)
                    for c in STRUCTURES["tree"] + [(a,) for a in NAMES]]
    _, i64 = estimate(DOMAIN, measurements, tol=1e-8, max_iter=1500)
    with pytest.warns(RuntimeWarning, match="float32 rounding of the counts"):
        m32, i32 = estimate(DOMAIN, measurements, tol=1e-8, max_iter=1500, dtype=np.float32)
    assert i32["float64_from"] is not None and i32["float64_from"] < 1500
    assert i32["loss_history"][i32["float64_from"]] > 100 * i64["loss_history"][-1]
    assert i32["loss_history"][-1] <= 1.03 * i64["loss_history"][-1]
    assert i64["float64_from"] is None and m32.dtype is np.float32


def test_explicit_float32_warns_where_auto_would_run_float64():
    """float32 asked for where its count rounding is not small next to the noise: a warning."""
    import re
    import warnings

    from sklearn_dpsynth.pgm.estimation import FLOAT32_TOO_COARSE

    measurements = _measurements("tree", 20.0, seed=3)
    tight = [Measurement(m.clique, m.noisy, 1e-4) for m in measurements]
    with pytest.warns(RuntimeWarning, match="float32 rounding of the counts"):
        estimate(DOMAIN, tight, dtype=np.float32, max_iter=5)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=re.escape(FLOAT32_TOO_COARSE))
        estimate(DOMAIN, tight, dtype="auto", max_iter=5)
        estimate(DOMAIN, measurements, dtype=np.float32, max_iter=5)
