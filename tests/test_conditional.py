"""Exact conditioning of the graphical models: engine, MST and AIM.

Every conditional is checked against brute force: the joint of a small
model is enumerated cell by cell (from the potentials for the engine, from
``score_samples``-style row log-probabilities for the estimators, a path
that never conditions), sliced at the evidence and renormalised.
"""

import copy
import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_dpsynth._marginals import contingency_counts
from sklearn_dpsynth.marginal.aim import AIMSynthesizer
from sklearn_dpsynth.marginal.mst import MSTSynthesizer
from sklearn_dpsynth.pgm import Factor, GraphicalModel, ModelDomain, ZeroProbabilityEvidence

DOMAIN = ModelDomain.from_mapping({"a": 3, "b": 4, "c": 2, "d": 3, "e": 2})
STRUCTURES = {
    "tree": [("a", "b"), ("b", "c"), ("b", "d"), ("d", "e")],
    # a 4-cycle a-b-c-d plus e: triangulation gives 3-way cliques
    "cyclic": [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("d", "e")],
}
EVIDENCE = [{"c": 1}, {"a": 2, "e": 0}, {"b": 3, "d": 1}]


def _model(structure, seed=0):
    rng = np.random.default_rng(seed)
    cliques = STRUCTURES[structure]
    pots = {c: Factor(c, rng.normal(scale=1.2, size=[DOMAIN[x] for x in c]))
            for c in cliques}
    return GraphicalModel(DOMAIN, cliques, pots, total=500.0)


def _engine_joint(model):
    """Joint probabilities over all cells, from the potentials alone."""
    cells = np.array(list(itertools.product(*[range(s) for s in DOMAIN.shape])))
    log_p = np.zeros(len(cells))
    for clique, table in zip(model.cliques, model.tables):
        log_p += table[tuple(cells[:, DOMAIN.axes([a])[0]] for a in clique)]
    p = np.exp(log_p - log_p.max())
    return (p / p.sum()).reshape(DOMAIN.shape)


def _brute_conditional(joint, names, evidence, keep):
    """Slice ``joint`` (axes ``names``) at ``evidence``; marginal of ``keep``."""
    index = tuple(evidence.get(a, slice(None)) for a in names)
    rest = [a for a in names if a not in evidence]
    sliced = joint[index]
    summed = sliced.sum(axis=tuple(k for k, a in enumerate(rest) if a not in keep))
    kept = [a for a in rest if a in keep]
    out = np.transpose(summed, [kept.index(a) for a in keep])
    return out / out.sum()


# ------------------------------------------------------------------ engine
@pytest.mark.parametrize("structure", sorted(STRUCTURES))
@pytest.mark.parametrize("evidence", EVIDENCE)
def test_engine_conditional_marginals_are_exact(structure, evidence):
    model = _model(structure)
    joint = _engine_joint(model)
    conditioned = model.condition(evidence)
    free = [a for a in DOMAIN if a not in evidence]
    for keep in [(a,) for a in free] + list(itertools.combinations(free, 2)) + [tuple(free)]:
        expected = _brute_conditional(joint, list(DOMAIN), evidence, keep)
        np.testing.assert_allclose(conditioned.marginal(keep, normalize=True), expected,
                                   atol=1e-12)
    for attr, code in evidence.items():
        point = np.zeros(DOMAIN[attr])
        point[code] = 1.0
        np.testing.assert_allclose(conditioned.marginal([attr], normalize=True), point)


@pytest.mark.parametrize("structure", sorted(STRUCTURES))
@pytest.mark.parametrize("method", ["iid", "lowvar"])
def test_engine_conditional_sampling_frequencies(structure, method):
    model = _model(structure, seed=3)
    evidence = {"a": 2, "e": 0}
    joint = _engine_joint(model)
    n = 20_000
    rows = model.condition(evidence).sample(n, np.random.default_rng(0), method=method)
    assert np.all(rows[:, 0] == 2) and np.all(rows[:, 4] == 0)
    keep = ("b", "c", "d")
    expected = _brute_conditional(joint, list(DOMAIN), evidence, keep).ravel() * n
    observed = contingency_counts(rows, DOMAIN.shape, DOMAIN.axes(keep)).ravel()
    mask = expected > 0
    assert observed[~mask].sum() == 0
    chi2 = float(np.sum((observed[mask] - expected[mask]) ** 2 / expected[mask]))
    # i.i.d. draws: chi-square with (cells - 1) degrees of freedom; the
    # low-variance generator is far tighter, so the same bound holds
    assert chi2 < stats.chi2.ppf(0.999, mask.sum() - 1), chi2


def test_engine_zero_probability_evidence_names_attributes():
    model = _model("tree")
    tables = [t.copy() for t in model.tables]
    # forbid b = 1 everywhere: a structural zero
    clique = model.tree.index_containing(("b",))
    axis = model.cliques[clique].index("b")
    index = [slice(None)] * tables[clique].ndim
    index[axis] = 1
    tables[clique][tuple(index)] = -np.inf
    model = GraphicalModel.from_tables(model.tree, tables)
    with pytest.raises(ZeroProbabilityEvidence, match=r"\['b', 'c'\]") as info:
        model.condition({"b": 1, "c": 0})
    assert isinstance(info.value, ValueError)
    conditioned = model.condition({"b": 2}).marginal(["b"], normalize=True)
    assert conditioned[2] == pytest.approx(1.0, rel=0, abs=1e-12) and conditioned.sum() == conditioned[2]


@pytest.mark.parametrize("evidence, match", [({"z": 0}, "unknown attribute 'z'"),
                                             ({"a": 3}, r"evidence\['a'\]"),
                                             ({"a": -1}, r"evidence\['a'\]"),
                                             ({"a": 1.5}, r"evidence\['a'\]")])
def test_engine_bad_evidence(evidence, match):
    with pytest.raises(ValueError, match=match):
        _model("tree").condition(evidence)


def test_engine_empty_evidence_is_the_model():
    model = _model("cyclic")
    assert model.condition({}) is model


# -------------------------------------------------------------- estimators
def _table(n=6000, seed=0):
    """Column "a" has common and rare codes (merged by MST); a cycle a-b-c-d."""
    rng = np.random.default_rng(seed)
    probs = np.array([0.33, 0.33, 0.33, 0.0025, 0.0025, 0.0025, 0.0025])
    a = rng.choice(7, size=n, p=probs / probs.sum())
    b = np.where(rng.random(n) < 0.7, a % 3, rng.integers(0, 3, n))
    c = np.where(rng.random(n) < 0.7, (b + 1) % 2, rng.integers(0, 2, n))
    d = np.where(rng.random(n) < 0.7, (a + c) % 3, rng.integers(0, 3, n))
    frame = pd.DataFrame({"a": a, "b": b, "c": c, "d": d})
    return frame, {"a": 7, "b": 3, "c": 2, "d": 3}


def _estimator_joint(synth):
    """Joint over all original codes from the row log-likelihoods (no conditioning)."""
    sizes = synth.domain_.sizes
    cells = np.array(list(itertools.product(*[range(s) for s in sizes])))
    return np.exp(synth._log_likelihood_encoded(cells)).reshape(sizes)


@pytest.fixture(scope="module")
def fitted():
    frame, domain = _table()
    mst_compressed = MSTSynthesizer(domain=domain, random_state=0).fit(frame, epsilon=0.5)
    mst_plain = MSTSynthesizer(domain=domain, compress=False, random_state=0).fit(
        frame, epsilon=2.0)
    aim = AIMSynthesizer(domain=domain, max_iter=30, final_max_iter=100, rounds=10,
                         random_state=0).fit(frame, epsilon=3.0)
    return {"mst_compressed": mst_compressed, "mst_plain": mst_plain, "aim": aim}


def test_fixtures_cover_compression_and_cycles(fitted):
    assert not fitted["mst_compressed"].compression_.is_identity
    assert len(fitted["mst_compressed"].compression_.merged_codes(0)[0]) >= 2
    assert fitted["mst_plain"].compression_.is_identity
    assert max(len(c) for c in fitted["aim"].model_.cliques) >= 3


@pytest.mark.parametrize("name", ["mst_compressed", "mst_plain", "aim"])
@pytest.mark.parametrize("given", [{"a": 4}, {"a": 0}, {"b": 1, "c": 0}, {"a": 5, "d": 2}])
def test_marginal_given_is_the_brute_force_conditional(fitted, name, given):
    synth = fitted[name]
    joint = _estimator_joint(synth)
    names = list(synth.domain_.columns)
    free = [c for c in names if c not in given]
    for keep in [[c] for c in free] + [list(p) for p in itertools.combinations(free, 2)]:
        expected = _brute_conditional(joint, names, given, tuple(keep))
        np.testing.assert_allclose(synth.marginal(keep, given=given), expected, atol=1e-10)
    # a conditioned column asked for is a point mass on its value
    column = next(iter(given))
    both = synth.marginal([column, free[0]], given=given)
    assert both.sum() == pytest.approx(1.0)
    assert both[given[column]].sum() == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["mst_compressed", "aim"])
@pytest.mark.parametrize("sampling", ["iid", "lowvar"])
def test_sample_with_conditions_follows_the_conditional(fitted, name, sampling):
    synth = fitted[name]
    if "sampling" in synth.get_params():
        synth.set_params(sampling=sampling)
    given = {"a": 4} if name == "mst_compressed" else {"a": 4, "c": 1}
    n = 20_000
    rows = synth.sample(n, random_state=1, conditions=given)
    for column, value in given.items():
        assert np.all(rows[column] == value)
    free = [c for c in synth.domain_.columns if c not in given]
    joint = _estimator_joint(synth)
    expected = _brute_conditional(joint, list(synth.domain_.columns), given,
                                  tuple(free)).ravel() * n
    codes = synth.domain_.encode(rows)
    observed = contingency_counts(codes, synth.domain_.sizes,
                                  [synth.domain_.index(c) for c in free]).ravel()
    mask = expected > 1e-9
    assert observed[~mask].sum() == 0
    chi2 = float(np.sum((observed[mask] - expected[mask]) ** 2 / expected[mask]))
    assert chi2 < stats.chi2.ppf(0.999, mask.sum() - 1), chi2


def test_conditioned_sampling_is_reproducible(fitted):
    synth = fitted["aim"]
    first = synth.sample(300, random_state=5, conditions={"b": 2})
    second = synth.sample(300, random_state=5, conditions={"b": 2})
    pd.testing.assert_frame_equal(first, second)


def test_conditioning_leaves_scores_and_unconditioned_samples_alone(fitted):
    frame, _ = _table(n=500, seed=1)
    for synth in fitted.values():
        before_score = synth.score(frame)
        before_rows = synth.sample(200, random_state=3)
        synth.sample(50, random_state=4, conditions={"a": 1})
        synth.marginal(["b"], given={"a": 1})
        assert synth.score(frame) == before_score
        pd.testing.assert_frame_equal(synth.sample(200, random_state=3), before_rows)
        joint = _estimator_joint(synth)
        np.testing.assert_allclose(synth.marginal(["a", "b"]), joint.sum(axis=(2, 3)),
                                   atol=1e-10)


def test_zero_probability_conditions_name_the_columns(fitted):
    # give the fitted model a structural zero: no row has (a, b) = (1, 2)
    synth = copy.deepcopy(fitted["aim"])
    model = synth.model_
    tables = [t.copy() for t in model.tables]
    index = model.tree.index_containing(("a", "b"))
    clique = model.cliques[index]
    cell = [slice(None)] * len(clique)
    cell[clique.index("a")], cell[clique.index("b")] = 1, 2
    tables[index][tuple(cell)] = -np.inf
    synth.model_ = GraphicalModel.from_tables(model.tree, tables, model.total)
    assert _estimator_joint(synth)[1, 2].sum() == 0
    for call in (lambda: synth.sample(10, conditions={"b": 2, "a": 1}),
                 lambda: synth.marginal(["c"], given={"a": 1, "b": 2})):
        with pytest.raises(ValueError, match=r"columns \['a', 'b'\].*probability zero"):
            call()
    assert synth.marginal(["c"], given={"a": 1, "b": 1}).sum() == pytest.approx(1.0)


@pytest.mark.parametrize("given, match", [({"nope": 1}, "given: unknown column 'nope'"),
                                          ([("a", 1)], "given must be a dict")])
def test_bad_given(fitted, given, match):
    with pytest.raises(ValueError, match=match):
        fitted["aim"].marginal(["b"], given=given)
