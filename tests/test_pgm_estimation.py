"""Private-PGM estimation: recovery, monotonicity, warm starts, queries."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpsynth.pgm import (
    Factor,
    GraphicalModel,
    Measurement,
    ModelDomain,
    estimate,
    estimate_total,
)

DOMAIN = ModelDomain.from_mapping({"a": 3, "b": 4, "c": 2, "d": 5, "e": 3})
TREE = [("a", "b"), ("b", "c"), ("b", "d"), ("d", "e")]
TOTAL = 10_000.0


@pytest.fixture(scope="module")
def truth():
    rng = np.random.default_rng(0)
    pots = {c: Factor(c, rng.normal(size=[DOMAIN[x] for x in c])) for c in TREE}
    return GraphicalModel(DOMAIN, TREE, pots, total=TOTAL)


def _measure(truth, cliques, sigma, rng=None):
    out = []
    for c in cliques:
        y = truth.marginal(c).ravel()
        if rng is not None:
            y = y + rng.normal(scale=sigma, size=y.shape)
        out.append(Measurement(c, y, sigma))
    return out


def _all_cliques():
    return TREE + [(x,) for x in DOMAIN]


def _max_relative_error(model, truth, cliques):
    return max(np.max(np.abs(model.marginal(c) - truth.marginal(c)) / truth.marginal(c))
               for c in cliques)


def test_noiseless_tree_is_recovered(truth):
    model, info = estimate(DOMAIN, _measure(truth, _all_cliques(), 1.0), tol=1e-8)
    assert model.total == pytest.approx(TOTAL)
    # measured marginals, and unmeasured ones (the truth is the max-entropy
    # model of its own tree marginals)
    assert _max_relative_error(model, truth, TREE) < 1e-3
    assert _max_relative_error(model, truth, [("a", "e"), ("c", "d", "a")]) < 1e-3
    assert info["loss_history"][-1] < 1e-6 * info["loss_history"][0]


@pytest.mark.parametrize("accelerated", [True, False])
def test_loss_history_is_non_increasing(truth, accelerated):
    meas = _measure(truth, _all_cliques(), 20.0, np.random.default_rng(1))
    model, info = estimate(DOMAIN, meas, max_iter=300, tol=0, accelerated=accelerated)
    history = np.array(info["loss_history"])
    assert len(history) == info["iterations"] + 1
    assert np.all(np.diff(history) <= 0)
    assert history[-1] < 0.1 * history[0]


def test_accelerated_and_plain_reach_the_same_optimum(truth):
    meas = _measure(truth, _all_cliques(), 20.0, np.random.default_rng(2))
    fast, info_fast = estimate(DOMAIN, meas, max_iter=3000, tol=1e-10)
    slow, info_slow = estimate(DOMAIN, meas, max_iter=3000, tol=1e-10, accelerated=False)
    assert info_fast["loss_history"][-1] == pytest.approx(info_slow["loss_history"][-1],
                                                          rel=1e-4)
    for c in TREE:
        np.testing.assert_allclose(fast.marginal(c), slow.marginal(c), atol=0.5)


def test_warm_start_from_the_solution_converges_immediately(truth):
    meas = _measure(truth, _all_cliques(), 20.0, np.random.default_rng(3))
    model, info = estimate(DOMAIN, meas, tol=1e-9, max_iter=5000)
    again, info2 = estimate(DOMAIN, meas, total=model.total, potentials=model)
    assert info2["iterations"] <= 2
    assert info2["loss_history"][0] == pytest.approx(info["loss_history"][-1], rel=1e-9)
    # a potentials mapping keyed by clique works the same way
    again2, info3 = estimate(DOMAIN, meas, total=model.total, potentials=model.potentials)
    assert info3["loss_history"][0] == pytest.approx(info["loss_history"][-1], rel=1e-9)


def test_warm_start_on_a_larger_structure_keeps_the_model(truth):
    # the truth factorises over the new tree, so the projection is exact
    meas = _measure(truth, [("a", "c", "e"), ("a", "b"), ("b", "d")], 1.0)
    model, info = estimate(DOMAIN, meas, cliques=TREE, potentials=truth,
                           total=TOTAL, max_iter=0)
    for c in [("a", "e"), ("b", "d"), ("c", "e", "d")]:
        np.testing.assert_allclose(model.marginal(c), truth.marginal(c), rtol=1e-9)
    assert info["loss_history"][0] < 1e-12


def _merge_matrix(groups, size):
    matrix = np.zeros((len(groups), size))
    for row, codes in enumerate(groups):
        matrix[row, codes] = 1.0
    return matrix


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("clique", [("b", "d"), ("d", "b")])
def test_non_identity_query(truth, sparse, clique):
    # (b, d) is measured through a compression merging some codes of d
    merge = _merge_matrix([[0, 1], [2, 3], [4]], DOMAIN["d"])
    eye = np.eye(DOMAIN["b"])
    query = np.kron(eye, merge) if clique[0] == "b" else np.kron(merge, eye)
    y = query @ truth.marginal(clique).ravel()
    meas = [m for m in _measure(truth, _all_cliques(), 1.0) if m.clique != ("b", "d")]
    meas.append(Measurement(clique, y, 1.0, sp.csr_matrix(query) if sparse else query))
    model, info = estimate(DOMAIN, meas, tol=1e-8)
    np.testing.assert_allclose(query @ model.marginal(clique).ravel(), y, rtol=1e-3)
    assert _max_relative_error(model, truth, [("a", "b"), ("d", "e")]) < 1e-3


def test_query_in_another_attribute_order(truth):
    meas = _measure(truth, [(x,) for x in DOMAIN], 1.0)
    joint = truth.marginal(("d", "b"))
    meas.append(Measurement(("d", "b"), joint.ravel(), 1.0, np.eye(joint.size)))
    meas += _measure(truth, [("a", "b"), ("b", "c"), ("e", "d")], 1.0)
    model, _ = estimate(DOMAIN, meas, tol=1e-8)
    np.testing.assert_allclose(model.marginal(("d", "b")), joint, rtol=1e-3)


def test_estimated_total_has_the_expected_error(truth):
    rng = np.random.default_rng(4)
    sigma = 50.0
    cells = [int(np.prod([DOMAIN[x] for x in c])) for c in _all_cliques()]
    std = 1.0 / np.sqrt(sum(1.0 / (sigma**2 * k) for k in cells))
    draws = np.array([estimate_total(DOMAIN, _measure(truth, _all_cliques(), sigma, rng))
                      for _ in range(300)])
    assert abs(draws.mean() - TOTAL) < 4 * std / np.sqrt(len(draws))
    assert 0.8 < draws.std() / std < 1.2


def test_total_from_general_queries(truth):
    rng = np.random.default_rng(5)
    merge = _merge_matrix([[0, 1, 2], [3, 4]], DOMAIN["d"])
    y = merge @ truth.marginal(("d",)) + rng.normal(scale=1.0, size=2)
    # a merging query preserves the total: unbiased sum of the measurement
    assert estimate_total(DOMAIN, [Measurement(("d",), y, 1.0, merge)]) == \
        pytest.approx(y.sum())
    # a query that drops cells falls back on the uniform least-squares fit
    select = np.eye(DOMAIN["d"])[:2]
    uniform = np.full(2, TOTAL / DOMAIN["d"])
    assert estimate_total(DOMAIN, [Measurement(("d",), uniform, 1.0, select)]) == \
        pytest.approx(TOTAL)
    # the estimate is floored at one record
    assert estimate_total(DOMAIN, [Measurement(("c",), [-5.0, -3.0], 1.0)]) == 1.0


def test_estimate_uses_the_estimated_total(truth):
    meas = _measure(truth, _all_cliques(), 10.0, np.random.default_rng(6))
    model, info = estimate(DOMAIN, meas, max_iter=5)
    assert info["total"] == model.total == estimate_total(DOMAIN, meas)


def test_extra_cliques_and_callback(truth):
    meas = _measure(truth, [(x,) for x in DOMAIN], 1.0)
    seen = []
    model, info = estimate(DOMAIN, meas, cliques=[("a", "e", "c")],
                           callback=lambda it, loss: seen.append(loss) or it == 3)
    assert {"a", "c", "e"} in [set(c) for c in model.cliques]
    assert info["iterations"] == 3 and len(seen) == 3


@pytest.mark.parametrize(
    "call",
    [
        lambda: Measurement(("a",), np.zeros(3), 0.0),
        lambda: Measurement(("a",), np.zeros((3, 1)), 1.0),
        lambda: Measurement("a", np.zeros(3), 1.0),
        lambda: Measurement(("a",), np.zeros(3), 1.0, np.eye(2)),
        lambda: Measurement(("a",), np.zeros(3), 1.0, weight=-1),
        lambda: estimate(DOMAIN, [Measurement(("a",), np.zeros(4), 1.0)]),
        lambda: estimate(DOMAIN, [Measurement(("z",), np.zeros(4), 1.0)]),
        lambda: estimate(DOMAIN, [Measurement(("a",), np.zeros(2), 1.0, np.eye(2))]),
        lambda: estimate(DOMAIN, [Measurement(("a",), np.ones(3), 1.0)], max_iter=-1),
        lambda: estimate(DOMAIN, [Measurement(("a",), np.ones(3), 1.0)], total=0),
        lambda: estimate(DOMAIN, [Measurement(("a",), np.ones(3), 1.0)], tol=-1),
        lambda: estimate(DOMAIN, Measurement(("a",), np.ones(3), 1.0)),
        lambda: estimate(DOMAIN, [Measurement(("a",), np.ones(3), 1.0)], potentials=3),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_objective_gradient_matches_finite_differences(truth):
    from sklearn_dpsynth.pgm import JunctionTree, Objective

    rng = np.random.default_rng(8)
    query = rng.normal(size=(4, 12))
    meas = [Measurement(("b", "a"), rng.normal(size=4), 2.0, query, weight=0.5),
            Measurement(("d",), rng.normal(size=5), 3.0)]
    tree = JunctionTree(DOMAIN, TREE)
    objective = Objective(tree, meas, TOTAL)
    counts = [rng.normal(size=12) * 100, rng.normal(size=5) * 100]
    loss, grad = objective.loss_and_gradient(counts)
    assert loss == pytest.approx(objective.loss(counts))
    eps = 1e-4
    for k in range(2):
        for j in range(len(counts[k])):
            shifted = [c.copy() for c in counts]
            shifted[k][j] += eps
            numeric = (objective.loss(shifted) - loss) / eps
            assert numeric == pytest.approx(grad[k][j], rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("accelerated", [True, False])
def test_structural_zeros_in_the_warm_start_stay_exact(truth, accelerated):
    meas = _measure(truth, _all_cliques(), 20.0, np.random.default_rng(9))
    mask = np.zeros((DOMAIN["b"], DOMAIN["d"]))
    mask[1, 2] = mask[3, :2] = -np.inf
    start = {("b", "d"): Factor(("b", "d"), mask)}
    model, info = estimate(DOMAIN, meas, potentials=start, max_iter=200,
                           accelerated=accelerated)
    bd = model.marginal(("b", "d"))
    assert bd[1, 2] == 0 and np.all(bd[3, :2] == 0)
    assert np.all(bd[np.isfinite(mask)] > 0)
    assert np.all(np.diff(info["loss_history"]) <= 0)
    # projecting on a refined tree keeps them too
    refined = model.project(TREE + [("a", "c", "d")])
    assert np.all(refined.marginal(("d", "b"))[2, 1] == 0)


def _assert_counts_are_model_marginals(tree, tables, total, measurements, counts):
    """Objective.counts equal the marginal counts of the model on the same tables and total."""
    model = GraphicalModel.from_tables(tree, tables, total)
    for m, mu in zip(measurements, counts):
        direct = model.marginal(tree.sort(m.clique)).ravel()
        np.testing.assert_allclose(mu, direct, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("measured", [
    [("c", "a"), ("a",), ("b", "a", "c"), ("c",), ("a", "c"), ("d",), ("d", "c"), ("e",),
     ("b",)],
    # several host-free measurements in one clique: ab, bc, ca in abc
    [("a", "b"), ("c", "b"), ("a",), ("c", "a"), ("a", "c"), ("e", "d"), ("b",), ("c",)],
])

def test_nested_measurements_give_the_direct_counts_and_gradients(measured):
    """Measurements folded into a larger one of their clique: same loss pieces.

    Counts and clique gradients are compared with a direct computation from
    the clique beliefs (every measurement on its own), for nested marginals
    in any attribute order, a duplicate and a measurement with a query.
    """
    from sklearn_dpsynth.pgm import JunctionTree, Objective, belief_propagation

    rng = np.random.default_rng(4)
    cliques = [("a", "b", "c"), ("c", "d"), ("d", "e")]
    measurements = []
    for k, clique in enumerate(measured):
        cells = DOMAIN.size(clique)
        query = rng.normal(size=(3, cells)) if k == 4 else None
        rows = cells if query is None else 3
        measurements.append(Measurement(clique, rng.normal(size=rows), 1.0 + k, query=query))
    tree = JunctionTree(DOMAIN, cliques)
    tables = [rng.normal(size=[DOMAIN[a] for a in c]) for c in tree.cliques]
    _, beliefs, _ = belief_propagation(tree, tables)
    objective = Objective(tree, measurements, 100.0)
    assert sum(n.host >= 0 for n in objective._nesting) >= 3
    counts = objective.counts(beliefs)
    _assert_counts_are_model_marginals(tree, tables, 100.0, measurements, counts)
    _, grads = objective.loss_and_gradient(counts)
    got = objective.clique_gradient(grads)
    expected = [np.zeros(s) for s in objective.shapes]
    for c, g in zip(objective.items, grads):
        expected[c.index] = expected[c.index] + g.reshape(c.bshape)
    for i, table in enumerate(expected):
        np.testing.assert_allclose(got.get(i, np.zeros_like(table)) + 0 * table, table,
                                   rtol=1e-12, atol=1e-12)
    # one step on the log-potentials: tables + coef * (direct clique gradient)
    stepped = objective.step_tables(tables, grads, -0.37)
    for i, table in enumerate(tables):
        np.testing.assert_allclose(stepped[i], table - 0.37 * expected[i],
                                   rtol=1e-12, atol=1e-12)
    assert all(stepped[i] is not tables[i] for i in {c.index for c in objective.items})


def test_absolute_tolerance_stops_at_the_first_small_decrease(truth):
    """``atol``: every accepted step but the last lowers the loss by more."""
    meas = _measure(truth, _all_cliques(), 5.0, np.random.default_rng(7))
    _, full = estimate(DOMAIN, meas, max_iter=400, tol=0)
    atol = 2.0
    _, info = estimate(DOMAIN, meas, max_iter=400, tol=0, atol=atol)
    decreases = -np.diff(info["loss_history"])
    assert info["converged"] and info["iterations"] < full["iterations"]
    assert decreases[-1] <= atol and np.all(decreases[:-1] > atol)
    # same path as without atol up to the stop
    np.testing.assert_allclose(info["loss_history"],
                               full["loss_history"][:len(info["loss_history"])], rtol=1e-10)


@pytest.mark.parametrize("atol", [-1.0, np.nan, np.inf])
def test_bad_atol_is_a_value_error(truth, atol):
    with pytest.raises(ValueError, match="atol"):
        estimate(DOMAIN, _measure(truth, TREE, 1.0), atol=atol)


def test_release_beliefs_keeps_the_answers(truth):
    before = truth.marginal(("a", "e"))
    truth.release_beliefs()
    np.testing.assert_allclose(truth.marginal(("a", "e")), before, rtol=1e-12)


def test_warm_start_model_is_left_untouched(truth):
    """The start is used without a copy, so estimation must never write into it."""
    meas = _measure(truth, TREE, 5.0, np.random.default_rng(8))
    warm, _ = estimate(DOMAIN, meas, max_iter=5)
    saved = [t.copy() for t in warm.tables]
    before = warm.marginal(("a", "b"))
    model, _ = estimate(DOMAIN, meas, potentials=warm, max_iter=20)
    for table, copy in zip(warm.tables, saved):
        np.testing.assert_array_equal(table, copy)
    np.testing.assert_array_equal(warm.marginal(("a", "b")), before)
    assert not np.allclose(model.marginal(("a", "b")), before)


def test_grouped_measurements_give_the_direct_counts_and_steps():
    """Small marginals of one large clique share one pass: same counts and steps.

    In a single 360-cell clique, host-free measurements whose union
    marginal is small are grouped (their counts are read from, and their
    gradients summed in, the union marginal); the counts and the stepped
    log-potentials must equal a direct computation, measurement by
    measurement.
    """
    from sklearn_dpsynth.pgm import JunctionTree, Objective, belief_propagation

    rng = np.random.default_rng(8)
    measured = [("a", "b"), ("c", "d"), ("e", "a"), ("b", "e"), ("d",), ("c", "e")]
    measurements = [Measurement(c, rng.normal(size=DOMAIN.size(c)), 1.0 + k)
                    for k, c in enumerate(measured)]
    tree = JunctionTree(DOMAIN, [tuple(DOMAIN)])
    tables = [rng.normal(size=[DOMAIN[a] for a in c]) for c in tree.cliques]
    _, beliefs, _ = belief_propagation(tree, tables)
    objective = Objective(tree, measurements, 50.0)
    sizes = sorted(len(g.members) for g in objective._groups)
    assert sum(sizes) == 5 and sizes[-1] >= 2  # ("d",) is nested in ("c", "d")
    counts = objective.counts(beliefs)
    _assert_counts_are_model_marginals(tree, tables, 50.0, measurements, counts)
    # the same counts from the group marginals that calibrate reads in its own passes
    from sklearn_dpsynth.pgm import calibrate, reduction_plan
    _, _, shared = calibrate(tree, tables, reduction_plan(tree, objective.marginal_requests()))
    assert sum(len(s) for s in shared) == sum(1 for g in objective._groups if g.axes) > 0
    np.testing.assert_allclose(objective.counts(beliefs, shared).flat, counts.flat,
                               rtol=1e-12, atol=1e-12)
    _, grads = objective.loss_and_gradient(counts)
    expected = np.zeros(objective.shapes[0])
    for c, g in zip(objective.items, grads):
        expected = expected + g.reshape(c.bshape)
    stepped = objective.step_tables(tables, grads, 0.21)
    np.testing.assert_allclose(stepped[0], tables[0] + 0.21 * expected,
                               rtol=1e-12, atol=1e-12)


def test_group_marginals_partitions_and_respects_the_share():
    from sklearn_dpsynth.pgm.factor import group_marginals

    shape = (2, 3, 4, 5, 6)
    kept = [frozenset(s) for s in ({0}, {1}, {0, 1}, {3, 4}, {2, 3, 4}, {4}, {0, 4})]
    groups = group_marginals(shape, kept, share=0.25)
    assert sorted(k for g in groups for k in g) == list(range(len(kept)))
    limit = 0.25 * np.prod(shape)
    for g in groups:
        union = frozenset().union(*(kept[k] for k in g))
        assert len(g) == 1 or np.prod([shape[a] for a in union]) <= limit
    # no two groups could still be joined under the share
    for i in range(len(groups)):
        for j in range(i + 1, len(groups)):
            union = frozenset().union(*(kept[k] for k in groups[i] + groups[j]))
            assert np.prod([shape[a] for a in union]) > limit
    assert group_marginals(shape, kept, share=0.0) == [[k] for k in range(len(kept))]


def test_estimate_from_tables_takes_over_its_start(truth):
    """Same model as estimate() from the same start; the start is freed once left."""
    import weakref

    from sklearn_dpsynth.pgm import JunctionTree
    from sklearn_dpsynth.pgm.estimation import estimate_from_tables

    measurements = _measure(truth, TREE, 5.0, np.random.default_rng(9))
    expected, _ = estimate(DOMAIN, measurements, potentials=truth, max_iter=15)
    tree = JunctionTree(DOMAIN, [m.clique for m in measurements])
    assert tree.cliques == truth.cliques
    tables = [t.copy() for t in truth.tables]
    alive = [weakref.ref(t) for t in tables]
    seen = []

    def watch(iteration, loss):
        seen.append(sum(ref() is not None for ref in alive))

    model, info = estimate_from_tables(tree, measurements, tables, max_iter=15,
                                       callback=watch)
    assert tables == [] and info["iterations"] >= 2
    assert seen[-1] == 0  # every clique is measured: no starting table is still held
    for clique in TREE:
        np.testing.assert_allclose(model.marginal(clique), expected.marginal(clique),
                                   rtol=1e-9)
    with pytest.raises(ValueError, match="one table per maximal clique"):
        estimate_from_tables(tree, measurements, [np.zeros(3)])


def test_measured_counts_mix_like_separate_vectors(truth):
    """Counts share one buffer; mixing it equals mixing every vector on its own."""
    from sklearn_dpsynth.pgm import JunctionTree, Objective, belief_propagation
    from sklearn_dpsynth.pgm.measurement import MeasuredCounts
    from sklearn_dpsynth.pgm.mirror_descent import _mix

    measurements = _measure(truth, _all_cliques(), 1.0)
    tree = JunctionTree(DOMAIN, TREE)
    objective = Objective(tree, measurements, TOTAL)
    rng = np.random.default_rng(3)
    counts = []
    for _ in range(2):
        tables = [rng.normal(size=[DOMAIN[a] for a in c]) for c in tree.cliques]
        counts.append(objective.counts(belief_propagation(tree, tables)[1]))
    x, z = counts
    assert isinstance(x, MeasuredCounts) and len(x) == len(measurements)
    for m, mu in zip(measurements, x):
        assert mu.base is x.flat and mu.size == DOMAIN.size(m.clique)
    mixed = _mix(0.3, x, z)
    for u, v, w in zip(x, z, mixed):
        np.testing.assert_array_equal(w, (v - u) * 0.3 + u)


def test_running_average_of_beliefs_equals_explicit_mixing():
    """x kept as scale * sums, also across the rescaling of a vanishing scale."""
    from sklearn_dpsynth.pgm.mirror_descent import _Average

    rng = np.random.default_rng(4)
    shapes = [(3, 4), (5,)]
    for dtype, rtol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        start = [rng.random(s).astype(dtype) for s in shapes]
        expected = [b.astype(np.float64) for b in start]
        average = _Average([b.copy() for b in start])
        for a in [0.5, 0.9, 0.999, 0.99, 0.3, 0.6]:  # the scale falls below 1e-6 on the way
            z = [rng.random(s).astype(dtype) for s in shapes]
            expected = [(1 - a) * u + a * v.astype(np.float64) for u, v in zip(expected, z)]
            average.mix(a, z)
        got = average.beliefs()
        assert average.scale == 1.0 and got[0].dtype == dtype
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=rtol)


def test_running_average_of_prescaled_beliefs_equals_explicit_mixing():
    """Beliefs computed already times ``coefficient(a)`` and given to ``mix_scaled``.

    Mirror descent asks inference for the trial's beliefs multiplied by the
    mixing coefficient (one pass fewer); across the rescaling of a vanishing
    scale the running average must equal explicit mixing.
    """
    from sklearn_dpsynth.pgm.mirror_descent import _Average

    rng = np.random.default_rng(5)
    shapes = [(3, 4), (5,)]
    start = [rng.random(s) for s in shapes]
    expected = [b.copy() for b in start]
    average = _Average([b.copy() for b in start])
    for a in [0.5, 0.9, 0.999, 0.99, 0.3, 0.6, 0.9999, 0.2]:
        z = [rng.random(s) for s in shapes]
        expected = [(1 - a) * u + a * v for u, v in zip(expected, z)]
        coef = average.coefficient(a)
        average.mix_scaled(a, [v * coef for v in z])
    for g, e in zip(average.beliefs(), expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_stepped_tables_follow_their_trials_and_leave_foreign_tables_alone():
    """Trials written in place: a rejected trial's terms are replaced, then taken back.

    Whatever sequence of trials is applied, the tables equal the start plus
    the last trial's terms (to rounding); accepting records the
    log-partition as a lag (subtracted from the root's table once it exceeds
    ``_MAX_LAG``, or when the normalised tables are asked for);
    withdrawing restores the start;
    tables that the optimisation does not own are never written into.
    """
    from sklearn_dpsynth.pgm.mirror_descent import _SteppedTables

    rng = np.random.default_rng(3)
    shapes = [(3, 4), (4, 2), (4, 5)]
    start = [rng.normal(size=s) for s in shapes]
    tables = [t.copy() for t in start]
    foreign = tables[2]
    stepped = _SteppedTables(tables, owned={0, 1})

    def trial(scale):
        return {0: [scale * np.ones((3, 1)), scale * np.arange(4.0)],
                2: [scale * np.ones((1, 5))]}

    for scale in (4.0, 2.0, 1.0):  # two rejected trials, then the third
        stepped.apply(trial(scale))
    expected = [start[0] + 1.0 + np.arange(4.0), start[1], start[2] + 1.0]
    for got, want in zip(stepped.tables, expected):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(foreign, start[2])
    assert stepped.tables[2] is not foreign and stepped.tables is tables

    stepped.accept(0.25)  # recorded as a lag, not written into a table
    np.testing.assert_allclose(stepped.tables[0], expected[0], rtol=0, atol=1e-12)
    assert stepped.relative(1.0) == pytest.approx(0.75)
    stepped.apply(trial(0.5))  # a trial from the accepted point, rejected for good
    stepped.withdraw()
    np.testing.assert_allclose(stepped.tables[2], expected[2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(stepped.normalised()[0], expected[0] - 0.25, rtol=0, atol=1e-12)
    assert stepped.lag == 0.0 and stepped.relative(1.0) == 1.0
    np.testing.assert_array_equal(stepped.tables[1], start[1])
    stepped.accept(-0.5)  # small lags accumulate ...
    np.testing.assert_allclose(stepped.tables[0], expected[0] - 0.25, rtol=0, atol=1e-12)
    stepped.accept(-0.75)  # ... until they exceed _MAX_LAG and are written in place
    np.testing.assert_allclose(stepped.tables[0], expected[0] + 1.0, rtol=0, atol=1e-12)
    assert stepped.lag == 0.0
    # a start's log-partition is its lag; past _MAX_LAG a table it does not own is copied
    caller = [t.copy() for t in start]
    small = _SteppedTables(list(caller), owned=set(), lag=0.5)
    assert small.lag == 0.5 and small.tables[0] is caller[0]
    large = _SteppedTables(list(caller), owned=set(), lag=2.0)
    assert large.lag == 0.0 and large.tables[0] is not caller[0]
    np.testing.assert_allclose(large.tables[0], start[0] - 2.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(caller[0], start[0])


# ------------------------------------------------------------ discrepancy stop
def _first_out_of_reach(losses, target, cap, window):
    """The definition, step by step (losses[i] is the loss after step i + 1)."""
    for i, loss in enumerate(losses):
        step = i + 1
        if loss <= target:
            return step, "target"
        if step > window:
            drop = losses[i - window] - loss
            if drop <= 0 or (loss - target) / (drop / window) > cap - step:
                return step, "out of reach"
    return None, None


@pytest.mark.parametrize("floor, target", [(100.0, 90.0), (100.0, 101.0), (50.0, 60.0)])
def test_discrepancy_stop_follows_its_definition(floor, target):
    from sklearn_dpsynth.pgm.estimation import DiscrepancyStop

    losses = floor + 1000.0 * 0.97 ** np.arange(1, 400)  # flattens at the floor
    stop = DiscrepancyStop(target, max_iter=1000, window=10)
    stopped = next((i + 1 for i, loss in enumerate(losses) if stop(i + 1, loss)), None)
    expected = _first_out_of_reach(losses, target, 1000, 10)
    assert (stopped, stop.reason) == expected
    if target > floor:  # reachable: the plain rule's step, never earlier
        assert stop.reason == "target"
        assert stopped == 1 + int(np.argmax(losses <= target))
    else:
        assert stop.reason == "out of reach" and losses[stopped - 1] > target


def test_discrepancy_stop_ends_an_estimation_whose_target_no_model_reaches(truth):
    from sklearn_dpsynth.pgm.estimation import DiscrepancyStop

    rng = np.random.default_rng(5)
    # two measurements of each pair that disagree: no model fits both
    measurements = _measure(truth, TREE, 1.0) + [
        Measurement(m.clique, m.noisy + rng.normal(scale=200.0, size=m.noisy.shape), 1.0)
        for m in _measure(truth, TREE, 1.0)]
    _, full = estimate(DOMAIN, measurements, total=TOTAL, max_iter=1000, tol=0.0)
    best = full["loss_history"][-1]
    n_entries = sum(m.noisy.size for m in measurements)
    assert best > 0.7 * n_entries  # the discrepancy target is out of reach
    stop = DiscrepancyStop(0.7 * n_entries, max_iter=1000, window=10)
    _, info = estimate(DOMAIN, measurements, total=TOTAL, max_iter=1000, tol=0.0,
                       callback=stop)
    assert stop.reason == "out of reach" and info["iterations"] == stop.iteration < 1000
    assert info["loss_history"] == full["loss_history"][:stop.iteration + 1]  # a prefix
    assert info["loss_history"][-1] <= best * 1.01


def test_the_old_name_max_iters_still_works_for_one_release_with_a_future_warning(truth):
    """``max_iters`` (renamed ``max_iter``) caps the steps as before, and warns."""
    from sklearn_dpsynth.pgm import JunctionTree
    from sklearn_dpsynth.pgm.estimation import DiscrepancyStop, estimate_from_tables

    measurements = _measure(truth, TREE, 5.0, np.random.default_rng(3))
    new, new_info = estimate(DOMAIN, measurements, max_iter=7, tol=0.0)
    with pytest.warns(FutureWarning, match="max_iters was renamed max_iter"):
        old, old_info = estimate(DOMAIN, measurements, max_iters=7, tol=0.0)
    assert new_info["iterations"] == old_info["iterations"] == 7
    assert old_info["loss_history"] == new_info["loss_history"]
    tree = JunctionTree(DOMAIN, [m.clique for m in measurements])
    with pytest.warns(FutureWarning, match="use max_iter=4"):
        _, info = estimate_from_tables(tree, measurements, [t.copy() for t in truth.tables],
                                       max_iters=4, tol=0.0)
    assert info["iterations"] == 4
    with pytest.warns(FutureWarning, match="max_iters was renamed max_iter"):
        assert DiscrepancyStop(1.0, max_iters=50).max_iter == 50
    with pytest.raises(TypeError, match="max_iter"):
        DiscrepancyStop(1.0)



@pytest.mark.parametrize("threshold, window, least_move",
                         [(5.0, 10, 0.0), (0.5, 3, 0.0), (150.0, 4, 700.0)])
def test_answer_stop_follows_its_definition(threshold, window, least_move):
    """``AnswerStop`` stops at the first step ``t >= window`` whose followed counts are
    within ``threshold`` (L1) of step ``t - window``'s and more than ``least_move``
    from the start's (brute force on answers converging geometrically)."""
    from sklearn_dpsynth.pgm.estimation import AnswerStop

    limit = np.array([300.0, 500.0, 200.0])
    answers = [limit - np.array([400.0, -300.0, -100.0]) * 0.85 ** t for t in range(300)]
    stop = AnswerStop(1, threshold, window=window, least_move=least_move)
    other = np.zeros(2)  # a measurement that is not followed
    stopped = next((t for t, a in enumerate(answers) if stop(t, 0.0, [other, a])), None)

    def l1(u, v):
        return np.abs(u - v).sum()

    expected = next(t for t in range(window, len(answers))
                    if l1(answers[t], answers[t - window]) <= threshold
                    and l1(answers[t], answers[0]) > least_move)
    assert stopped == stop.iteration == expected
    if least_move:  # the move from the start, not the window, decided it
        plain = next(t for t in range(window, len(answers))
                     if l1(answers[t], answers[t - window]) <= threshold)
        assert plain < expected
    for bad in ({"threshold": -1.0}, {"least_move": np.inf}, {"window": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            AnswerStop(0, **{"threshold": 1.0, **bad})


def test_answer_stop_ends_an_estimation_as_a_prefix_of_the_full_run(truth):
    """As a callback, it ends mirror descent at its step: the loss history is a prefix,
    and the stopped model's answer on the followed marginal is the one it settled on."""
    from sklearn_dpsynth.pgm.estimation import AnswerStop

    measurements = _measure(truth, TREE, 5.0, np.random.default_rng(4))
    _, full = estimate(DOMAIN, measurements, total=TOTAL, max_iter=300, tol=0.0)
    threshold = 0.5 * 5.0 * measurements[0].noisy.size
    stop = AnswerStop(0, threshold, window=5)
    model, info = estimate(DOMAIN, measurements, total=TOTAL, max_iter=300, tol=0.0,
                           callback=stop)
    assert 5 <= info["iterations"] == stop.iteration < full["iterations"]
    assert info["loss_history"] == full["loss_history"][:stop.iteration + 1]
    first = measurements[0]
    answer = model.marginal(first.clique).ravel()
    assert np.allclose(np.sort(answer), np.sort(stop._recent[stop.iteration]), rtol=1e-6)

