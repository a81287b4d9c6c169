"""Junction trees and exact inference against brute-force enumeration."""

import itertools
import os
import subprocess
import sys
from functools import partial

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_dpsynth.pgm import (
    Factor,
    GraphicalModel,
    JunctionTree,
    ModelDomain,
    CalibratedBeliefs,
    belief_propagation,
    model_size,
    model_size_mb,
)

from ._brute_force import brute_log_joint, brute_marginal, random_potentials

DOMAIN = ModelDomain.from_mapping({"a": 2, "b": 3, "c": 2, "d": 3, "e": 2, "f": 4})
NAMES = list(DOMAIN)

STRUCTURES = {
    "tree": [("a", "b"), ("b", "c"), ("c", "d"), ("b", "e"), ("e", "f")],
    "cycle": [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "a"), ("f",)],
    "triangle": [("a", "b"), ("b", "c"), ("c", "a"), ("d", "e"), ("e", "f")],
    "overlapping": [("a", "b", "c"), ("b", "c", "d"), ("c", "d", "e"), ("e", "f", "a")],
    "disconnected": [("a", "b"), ("c", "d"), ("e",)],
}


_potentials = partial(random_potentials, DOMAIN)
_brute_log_joint = partial(brute_log_joint, DOMAIN)
_brute_marginal = partial(brute_marginal, DOMAIN)


def _all_rows():
    return np.array(list(itertools.product(*[range(DOMAIN[a]) for a in NAMES])))


@pytest.fixture(params=sorted(STRUCTURES), scope="module")
def case(request):
    cliques = STRUCTURES[request.param]
    pots = _potentials(cliques, seed=len(request.param))
    return GraphicalModel(DOMAIN, cliques, pots, total=7.0), _brute_log_joint(pots)


def test_log_partition_matches_enumeration(case):
    model, log_joint = case
    np.testing.assert_allclose(model.log_partition, logsumexp(log_joint))


def test_clique_marginals_match_enumeration(case):
    model, log_joint = case
    for clique in model.cliques:
        np.testing.assert_allclose(model.marginal(clique, normalize=True),
                                   _brute_marginal(log_joint, clique), atol=1e-12)


def test_every_subset_marginal_matches_enumeration(case):
    model, log_joint = case
    rng = np.random.default_rng(0)
    for r in (1, 2, 3, 4):
        for subset in itertools.combinations(NAMES, r):
            attrs = tuple(rng.permutation(subset))
            expected = _brute_marginal(log_joint, attrs)
            np.testing.assert_allclose(model.marginal(attrs, normalize=True), expected,
                                       atol=1e-12)
            np.testing.assert_allclose(model.marginal(attrs), 7.0 * expected, atol=1e-10)


def test_log_likelihood_matches_enumeration(case):
    model, log_joint = case
    rows = _all_rows()
    ll = model.log_likelihood(rows)
    expected = log_joint[tuple(rows.T)] - logsumexp(log_joint)
    np.testing.assert_allclose(ll, expected, atol=1e-10)
    np.testing.assert_allclose(np.exp(ll).sum(), 1.0)


def test_non_tree_models_need_triangulation():
    tree = JunctionTree(DOMAIN, STRUCTURES["cycle"])
    assert max(len(c) for c in tree.cliques) == 3
    tree = JunctionTree(DOMAIN, STRUCTURES["triangle"])
    assert {"a", "b", "c"} in [set(c) for c in tree.cliques]


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_junction_tree_properties(name):
    tree = JunctionTree(DOMAIN, STRUCTURES[name])
    cliques = tree.cliques
    # every input clique and every attribute is covered by a maximal clique
    for c in STRUCTURES[name] + [(a,) for a in NAMES]:
        covering = tree.index_containing(c)
        assert covering is not None and set(c) <= set(cliques[covering])
    # maximal cliques are not nested, and the tree spans them
    for c1, c2 in itertools.permutations(cliques, 2):
        assert not set(c1) <= set(c2)
    assert len(tree.edges) == len(cliques) - 1
    # running intersection: cliques holding an attribute form a subtree
    for a in NAMES:
        holding = {c for c in cliques if a in c}
        inner = [(u, v) for u, v in tree.edges if u in holding and v in holding]
        assert len(inner) == len(holding) - 1
    # the model size is the cell count of the tree
    cells = sum(int(np.prod([DOMAIN[a] for a in c])) for c in cliques)
    assert model_size(DOMAIN, STRUCTURES[name]) == cells == tree.size
    assert model_size_mb(DOMAIN, STRUCTURES[name]) == cells * 8 / 2**20


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_breadth_first_order_gives_a_valid_message_schedule(name):
    # belief propagation sends upward along reversed(order[1:]) and downward
    # along order[1:]: valid iff every parent comes before its children and
    # the parent links are exactly the tree's edges
    tree = JunctionTree(DOMAIN, STRUCTURES[name])
    assert sorted(tree.order) == list(range(len(tree.cliques)))
    assert tree.order[0] == 0 and tree.parent[0] == -1
    position = {i: k for k, i in enumerate(tree.order)}
    for i in tree.order[1:]:
        assert position[tree.parent[i]] < position[i]
        assert tree.parent[i] in tree.neighbor_indices(i)
    links = {frozenset((i, tree.parent[i])) for i in tree.order[1:]}
    adjacent = {frozenset((i, j)) for i in tree.order for j in tree.neighbor_indices(i)}
    assert links == adjacent and len(links) == len(tree.edges)


def test_index_containing_returns_none_when_uncovered():
    tree = JunctionTree(DOMAIN, STRUCTURES["tree"])
    assert tree.index_containing(("a", "f")) is None
    covering = tree.cliques[tree.index_containing(("b",))]
    assert set(covering) in [{"a", "b"}, {"b", "c"}, {"b", "e"}]


def test_tree_is_deterministic_across_hash_seeds():
    # junction_tree.py and domain.py need only the standard library: load
    # them as a bare package (without pgm/__init__) so that the
    # subprocesses stay cheap
    import sklearn_dpsynth.pgm.junction_tree as jt

    code = (
        "import importlib, sys, types;"
        "p = types.ModuleType('bare'); "
        f"p.__path__ = [{os.path.dirname(jt.__file__)!r}]; sys.modules['bare'] = p;"
        "m = importlib.import_module('bare.junction_tree');"
        "d = importlib.import_module('bare.domain');"
        f"dom = d.ModelDomain({DOMAIN.attributes!r}, {DOMAIN.shape!r});"
        f"t = m.JunctionTree(dom, {STRUCTURES['overlapping'] + STRUCTURES['cycle']!r});"
        "print(t.cliques, t.edges, t.order, t.parent)"
    )
    outputs = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outputs.add(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    assert len(outputs) == 1


def test_model_size_counts_fill_in():
    dom = ModelDomain(("a", "b", "c", "d"), (10, 10, 10, 10))
    # a 4-cycle is triangulated into two 3-cliques
    assert model_size(dom, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]) == 2000
    assert model_size(dom, [("a", "b")]) == 100 + 10 + 10


def test_belief_propagation_and_calibrated_beliefs_agree():
    tree = JunctionTree(DOMAIN, STRUCTURES["overlapping"])
    rng = np.random.default_rng(3)
    tables = [rng.normal(size=[DOMAIN[a] for a in c]) for c in tree.cliques]
    log_beliefs, beliefs, log_z = belief_propagation(tree, tables)
    cal = CalibratedBeliefs(tree, tables)
    assert cal.log_partition == pytest.approx(log_z, rel=0, abs=1e-12)
    for lb, b in zip(log_beliefs, beliefs):
        np.testing.assert_allclose(np.exp(lb), b)
        np.testing.assert_allclose(b.sum(), 1.0)
    # calibration: adjacent cliques agree on their separator
    for i in tree.order[1:]:
        u, v = tree.cliques[tree.parent[i]], tree.cliques[i]
        sep = tuple(a for a in u if a in v)
        np.testing.assert_allclose(cal.marginal(sep),
                                   Factor(u, cal.beliefs[tree.parent[i]]).sum(sep).values)
        np.testing.assert_allclose(cal.marginal(sep), Factor(v, cal.beliefs[i]).sum(sep).values)


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_belief_propagation_leaves_its_input_untouched(name):
    tree = JunctionTree(DOMAIN, STRUCTURES[name])
    rng = np.random.default_rng(5)
    tables = [rng.normal(size=[DOMAIN[a] for a in c]) for c in tree.cliques]
    tables[0].flat[0] = -np.inf  # a structural zero travels through the messages
    before = [t.copy() for t in tables]
    logs, beliefs, log_z = belief_propagation(tree, tables)
    none, beliefs_only, log_z_only = belief_propagation(tree, tables, keep_log=False)
    for t, b in zip(tables, before):
        np.testing.assert_array_equal(t, b)
    assert none == [None] * len(tables)
    assert log_z_only == pytest.approx(log_z, rel=0, abs=1e-12)
    pots = {c: Factor(c, t) for c, t in zip(tree.cliques, tables)}
    log_joint = _brute_log_joint(pots)
    np.testing.assert_allclose(log_z, logsumexp(log_joint), atol=1e-12)
    for clique, lb, b, b_only in zip(tree.cliques, logs, beliefs, beliefs_only):
        np.testing.assert_allclose(b_only, b, rtol=1e-12, atol=0)  # zeros stay exact
        np.testing.assert_allclose(b, _brute_marginal(log_joint, clique), atol=1e-12)
        with np.errstate(divide="ignore"):
            np.testing.assert_allclose(lb, np.log(b), atol=1e-12)


def test_zero_potentials_are_exact():
    cliques = STRUCTURES["overlapping"]
    pots = _potentials(cliques, 11)
    pots[cliques[0]].values[0, 1, :] = -np.inf
    pots[cliques[2]].values[:, 0, 1] = -np.inf
    model = GraphicalModel(DOMAIN, cliques, pots)
    log_joint = _brute_log_joint(pots)
    for attrs in [("a", "b"), ("a", "d"), ("b", "f"), ("c", "d", "e")]:
        np.testing.assert_allclose(model.marginal(attrs, normalize=True),
                                   _brute_marginal(log_joint, attrs), atol=1e-12)


def test_large_potentials_do_not_overflow():
    cliques = STRUCTURES["tree"]
    pots = {c: f * 400.0 for c, f in _potentials(cliques, 5).items()}
    model = GraphicalModel(DOMAIN, cliques, pots)
    log_joint = _brute_log_joint(pots)
    np.testing.assert_allclose(model.log_partition, logsumexp(log_joint))
    np.testing.assert_allclose(model.marginal(("a", "f"), normalize=True),
                               _brute_marginal(log_joint, ("a", "f")), atol=1e-12)


def test_model_pickles():
    import pickle

    model = GraphicalModel(DOMAIN, STRUCTURES["cycle"], _potentials(STRUCTURES["cycle"], 2))
    before = model.marginal(("a", "c"))
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_allclose(clone.marginal(("a", "c")), before)


@pytest.mark.parametrize(
    "call",
    [
        lambda: JunctionTree(DOMAIN, [("a", "z")]),
        lambda: JunctionTree(DOMAIN, ["ab"]),
        lambda: JunctionTree(DOMAIN, [("a", "a")]),
        lambda: GraphicalModel(DOMAIN, [("a", "b")], {("a", "c"): np.zeros((2, 2))}),
        lambda: GraphicalModel(DOMAIN, [("a", "b")], total=-1),
        lambda: GraphicalModel(DOMAIN, [("a", "b")]).marginal(("a", "a")),
        lambda: GraphicalModel(DOMAIN, [("a", "b")]).log_likelihood(np.zeros((2, 3), int)),
        lambda: GraphicalModel(DOMAIN, [("a", "b")]).log_likelihood(np.full((2, 6), 5)),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: JunctionTree({"a": 2, "b": 3}, []),
        lambda: GraphicalModel({"a": 2, "b": 3}, [("a", "b")]),
        lambda: model_size({"a": 2, "b": 3}, [("a", "b")]),
    ],
)
def test_engine_takes_only_a_model_domain(call):
    with pytest.raises(TypeError, match="ModelDomain"):
        call()


@pytest.mark.parametrize("root_first", [True, False])
def test_grouped_messages_match_enumeration(root_first):
    """Small messages into a large clique are summed together before being added."""
    from sklearn_dpsynth.pgm.inference import message_plan

    cliques = [("a", "b", "c", "d"), ("a", "e"), ("b", "f")]
    if not root_first:
        cliques = cliques[1:] + cliques[:1]
    tree = JunctionTree(DOMAIN, cliques)
    plan = message_plan(tree)
    grouped = [g for groups in plan.upward_groups + plan.downward_groups for g in groups]
    assert max(len(g) for g in grouped) == 2
    rng = np.random.default_rng(6)
    tables = [rng.normal(scale=2.0, size=[DOMAIN[a] for a in c]) for c in tree.cliques]
    tables[1].flat[1] = -np.inf
    logs, beliefs, log_z = belief_propagation(tree, tables)
    log_joint = _brute_log_joint({c: Factor(c, t) for c, t in zip(tree.cliques, tables)})
    np.testing.assert_allclose(log_z, logsumexp(log_joint), atol=1e-12)
    for clique, b in zip(tree.cliques, beliefs):
        np.testing.assert_allclose(b, _brute_marginal(log_joint, clique), atol=1e-12)


@pytest.mark.parametrize("name", ["tree", "overlapping"])
def test_underflowing_separators_without_log_beliefs(name):
    """Beliefs of 1e-300 and below: exact with and without kept log-beliefs.

    With ``keep_log`` the log-beliefs are recomputed when a separator
    entry underflows; without it the downward pass runs in probability
    space with one shift per separator slice.  Both must stay exact.
    """
    tree = JunctionTree(DOMAIN, STRUCTURES[name])
    rng = np.random.default_rng(11)
    tables = [rng.normal(size=[DOMAIN[a] for a in c]) for c in tree.cliques]
    for t in tables:
        t[0] -= 800.0  # a whole slice below double precision: separators underflow
    logs, beliefs, log_z = belief_propagation(tree, tables)
    _, beliefs_only, log_z_only = belief_propagation(tree, tables, keep_log=False)
    assert log_z_only == pytest.approx(log_z, rel=0, abs=1e-12)
    log_joint = _brute_log_joint({c: Factor(c, t) for c, t in zip(tree.cliques, tables)})
    for clique, lb, b, b_only in zip(tree.cliques, logs, beliefs, beliefs_only):
        np.testing.assert_allclose(b_only, b, rtol=1e-12, atol=0)
        expected = _brute_log_marginal(log_joint, clique)
        np.testing.assert_allclose(lb, expected, rtol=1e-9)
        representable = expected > -700.0  # the rest is below double precision
        np.testing.assert_allclose(np.log(b_only[representable]), expected[representable],
                                   rtol=1e-9)
        assert np.all(b_only[~representable] < 1e-300)


def _brute_log_marginal(log_joint, attrs):
    axes = tuple(k for k, a in enumerate(NAMES) if a not in attrs)
    out = logsumexp(log_joint - logsumexp(log_joint), axis=axes)
    kept = [a for a in NAMES if a in attrs]
    return np.transpose(out, [kept.index(a) for a in attrs])


@pytest.mark.parametrize("name", ["tree", "overlapping"])
@pytest.mark.parametrize("keep_log", [True, False])
def test_shifts_that_cancel_across_an_edge_leave_the_beliefs_alone(name, keep_log):
    """-900 on a child's separator slice and +900 on its parent's: same joint, same beliefs.

    The child's table alone spans 900 nats, beyond what one shift of
    ``exp`` can hold; the beliefs are ordinary numbers and must come out
    exactly as without the shifts (the downward pass without ``keep_log``
    shifts every separator slice by its own maximum).
    """
    tree = JunctionTree(DOMAIN, STRUCTURES[name])
    rng = np.random.default_rng(4)
    tables = [rng.normal(size=[DOMAIN[a] for a in c]) for c in tree.cliques]
    _, expected, log_z = belief_propagation(tree, tables, keep_log=keep_log)
    for i in tree.order[1:]:
        parent = tree.parent[i]
        shared = next(a for a in tree.cliques[i] if a in tree.cliques[parent])
        child_slice = [slice(None)] * len(tree.cliques[i])
        child_slice[tree.cliques[i].index(shared)] = 0
        parent_slice = [slice(None)] * len(tree.cliques[parent])
        parent_slice[tree.cliques[parent].index(shared)] = 0
        tables[i][tuple(child_slice)] -= 900.0
        tables[parent][tuple(parent_slice)] += 900.0
    _, got, got_log_z = belief_propagation(tree, tables, keep_log=keep_log)
    assert got_log_z == pytest.approx(log_z, rel=1e-12)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=0)


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_calibrate_reads_requested_marginals_off_the_beliefs(name):
    """``calibrate``'s requested marginals are sums of the enumerated clique marginals."""
    from sklearn_dpsynth.pgm import calibrate, reduction_plan

    tree = JunctionTree(DOMAIN, STRUCTURES[name])
    rng = np.random.default_rng(8)
    tables = [rng.normal(scale=2.0, size=[DOMAIN[a] for a in c]) for c in tree.cliques]
    # every proper subset of every clique's axes, so requests share passes with separators
    requests = [[kept for r in range(len(c)) for kept in itertools.combinations(range(len(c)), r)
                 if kept] for c in tree.cliques]
    plan = reduction_plan(tree, requests)
    beliefs, log_z, marginals = calibrate(tree, tables, plan)
    log_joint = _brute_log_joint({c: Factor(c, t) for c, t in zip(tree.cliques, tables)})
    np.testing.assert_allclose(log_z, logsumexp(log_joint), atol=1e-12)
    for clique, belief, wanted, got in zip(tree.cliques, beliefs, requests, marginals):
        np.testing.assert_allclose(belief, _brute_marginal(log_joint, clique), atol=1e-12)
        assert len(got) == len(wanted)
        for kept, marginal in zip(wanted, got):
            attrs = tuple(clique[k] for k in kept)
            np.testing.assert_allclose(marginal, _brute_marginal(log_joint, attrs), atol=1e-12)


def test_reduction_plan_groups_separators_with_requests_and_checks_them():
    from sklearn_dpsynth.pgm import reduction_plan

    tree = JunctionTree(DOMAIN, [("a", "b", "c", "d"), ("a", "e"), ("b", "f")])
    big = max(range(len(tree.cliques)), key=lambda i: len(tree.cliques[i]))
    clique = tree.cliques[big]
    requests = [[] for _ in tree.cliques]
    requests[big] = [(clique.index("a"), clique.index("b"))]
    passes = reduction_plan(tree, requests).reductions[big]
    # the request and the separators on a and on b share one pass over the big clique
    assert len(passes) == 1 and len(passes[0].members) == 3
    requests[big] = [tuple(range(len(clique)))]
    with pytest.raises(ValueError, match="at least one axis"):
        reduction_plan(tree, requests)
    with pytest.raises(ValueError, match="one list per maximal clique"):
        reduction_plan(tree, requests[:1])


def test_junction_tree_declares_its_plan_caches():
    """The plans inference caches are declared (None) on a new tree, then built once."""
    from sklearn_dpsynth.pgm.inference import _separators_only, message_plan

    tree = JunctionTree(DOMAIN, STRUCTURES["cycle"])
    assert tree._message_plan is None and tree._separator_plan is None
    plan = message_plan(tree)
    assert message_plan(tree) is plan is tree._message_plan
    separators = _separators_only(tree)
    assert _separators_only(tree) is separators is tree._separator_plan
    fresh = JunctionTree(DOMAIN, STRUCTURES["cycle"])
    assert message_plan(fresh).shapes == plan.shapes


def test_scope_cells_past_float_range_is_infinite():
    """The greedy elimination's size of a huge scope is inf (ranked last), not an error."""
    from sklearn_dpsynth.pgm.inference import _scope_cells

    attrs = tuple(f"a{i}" for i in range(1100))
    sizes = dict.fromkeys(attrs, 2)
    assert _scope_cells([(attrs, None), (("b",), None)], "a0", sizes) == np.inf
    assert _scope_cells([(attrs[:10], None)], "a0", sizes) == 2.0**10


def test_fill_in_counts_the_missing_edges_among_neighbours():
    """The elimination heuristic's fill-in equals a brute-force count of the
    non-adjacent pairs of a vertex's neighbours, on random graphs."""
    import itertools

    from sklearn_dpsynth.pgm.junction_tree import _adjacency, _fill_in

    rng = np.random.default_rng(11)
    for _ in range(100):
        n = int(rng.integers(2, 12))
        edges = [e for e in itertools.combinations(range(n), 2) if rng.random() < 0.4]
        adjacency = _adjacency(n, edges)
        for v in range(n):
            missing = sum(b not in adjacency[a]
                          for a, b in itertools.combinations(sorted(adjacency[v]), 2))
            assert _fill_in(adjacency, v) == missing


@pytest.mark.parametrize("name", sorted(STRUCTURES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_calibrate_with_remembered_shifts_matches_enumeration(name, dtype):
    """Shifts guessed from the previous call: same beliefs, marginals and partition.

    A sequence of tables as an optimisation produces them (small steps),
    then tables far from the last (every table moved by +-60 nats: the
    guessed shifts overflow or underflow and must be rejected), then
    tables with a whole separator slice of structural zeros (-inf: the
    guess is rejected every time, then no longer tried).  Every call is
    compared with enumeration; ``scale`` multiplies beliefs and marginals.
    """
    from sklearn_dpsynth.pgm import calibrate, reduction_plan
    from sklearn_dpsynth.pgm.inference import ShiftGuesses

    tree = JunctionTree(DOMAIN, STRUCTURES[name])
    rng = np.random.default_rng(5)
    requests = [[kept for r in range(len(c)) for kept in itertools.combinations(range(len(c)), r)
                 if kept] for c in tree.cliques]
    plan = reduction_plan(tree, requests)
    guesses = ShiftGuesses()
    tables = [rng.normal(scale=2.0, size=[DOMAIN[a] for a in c]) for c in tree.cliques]
    zero_slice = [t.copy() for t in tables]
    for t in zero_slice:
        t[0] = -np.inf
    sequence = [[t + 0.01 * k * rng.normal(size=t.shape) for t in tables] for k in range(4)]
    sequence += [[t + 60.0 for t in tables], [t - 60.0 for t in tables]] + [zero_slice] * 5
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for k, step in enumerate(sequence):
        scale = 1.0 + 0.5 * k
        beliefs, log_z, marginals = calibrate(tree, [t.astype(dtype) for t in step], plan,
                                              dtype, guesses, scale)
        log_joint = _brute_log_joint({c: Factor(c, t) for c, t in zip(tree.cliques, step)})
        assert log_z == pytest.approx(logsumexp(log_joint), rel=tol, abs=tol)
        for clique, belief, wanted, got in zip(tree.cliques, beliefs, requests, marginals):
            assert belief.dtype == dtype
            np.testing.assert_allclose(belief / scale, _brute_marginal(log_joint, clique),
                                       atol=tol)
            for kept, marginal in zip(wanted, got):
                attrs = tuple(clique[j] for j in kept)
                np.testing.assert_allclose(marginal / scale, _brute_marginal(log_joint, attrs),
                                           atol=tol)
    # the +-60 jumps were rejected (for the root at least); the zero slices stopped guessing
    assert guesses.failures.get("root", 0) >= 2
    assert any(guesses.get(i) is None for i in tree.order[1:]) or name == "disconnected"
