"""MSTSynthesizer: budget accounting, recovery of tree marginals, compression, options."""

import copy
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from sklearn_dpsynth._marginals import contingency_counts
from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.marginal.mst import MSTSynthesizer


@pytest.fixture(scope="module")
def tree_data():
    """Rows of a tree-structured network: a training half and a held-out half."""
    data = make_bayesnet(n_samples=40_000, n_features=6, max_parents=1, random_state=0)
    data.train = data.frame.iloc[:20_000].reset_index(drop=True)
    data.test = data.frame.iloc[20_000:].reset_index(drop=True)
    return data


@pytest.fixture(scope="module")
def fitted(tree_data):
    return MSTSynthesizer(domain=tree_data.domain, random_state=0).fit(
        tree_data.train, epsilon=1.0)


def _rare_frame(n=3000, seed=0):
    """Column "a" has 3 common and 5 rare codes; "b" depends on "a"."""
    rng = np.random.default_rng(seed)
    probs = np.array([0.33, 0.32, 0.32, 0.006, 0.006, 0.006, 0.006, 0.006])
    a = rng.choice(8, size=n, p=probs / probs.sum())
    b = np.where(rng.random(n) < 0.8, a % 2, rng.integers(0, 2, n))
    c = rng.integers(0, 3, n)
    return pd.DataFrame({"a": a, "b": b, "c": c}), {"a": 8, "b": 2, "c": 3}


def _entries(synth, mechanism, prefix=""):
    return [e for e in synth.privacy_ledger_.entries
            if e.mechanism == mechanism and e.target.startswith(prefix)]


# ------------------------------------------------------------------ budget
def test_ledger_spends_the_whole_budget_in_three_eighths_a_quarter_three_eighths(fitted):
    ledger = fitted.privacy_ledger_
    assert ledger.spent()[0] == pytest.approx(1.0, rel=1e-9)
    rho = ledger.rho_budget
    d = len(fitted.domain_)
    one_way = _entries(fitted, "gaussian", "1-way")
    selections = _entries(fitted, "exponential")
    two_way = _entries(fitted, "gaussian", "2-way")
    # the default stop measures every marginal as two halves of its budget
    assert (len(one_way), len(selections), len(two_way)) == (2 * d, d - 1, 2 * (d - 1))
    for group, share in ((one_way, 3 / 8), (selections, 1 / 4), (two_way, 3 / 8)):
        assert sum(e.rho for e in group) == pytest.approx(share * rho, rel=1e-9)
    # each selection round is the exponential mechanism at epsilon^2 / 8 = rho / (4 (d - 1))
    for entry in selections:
        assert entry.rho == pytest.approx(rho / (4 * (d - 1)), rel=1e-9)
    # every half of a 1-way marginal gets noise sqrt(2) sqrt(d / (2 * 3 rho / 8)): the two
    # halves' mean has the noise of one release at 3 rho / (8 d), and costs the same
    sigma = np.sqrt(d / (2 * 3 * rho / 8))
    for entry in one_way:
        assert entry.noise_scale == pytest.approx(np.sqrt(2) * sigma)
        assert entry.rho == pytest.approx(1 / (2 * 2 * sigma**2), rel=1e-12)
    assert [e.target for e in one_way[:2]] == [f"1-way marginal {fitted.domain_.columns[0]!r}"
                                               f", half {k} of 2" for k in (1, 2)]


def test_selected_edges_form_a_spanning_tree(fitted):
    columns = list(fitted.domain_.columns)
    parent = {c: c for c in columns}

    def root(c):
        while parent[c] != c:
            c = parent[c]
        return c

    for a, b in fitted.tree_edges_:
        assert root(a) != root(b)
        parent[root(a)] = root(b)
    assert len({root(c) for c in columns}) == 1
    assert fitted.cliques_ == fitted.tree_edges_


# ---------------------------------------------------------------- recovery
def _edge_error(synth, frame, network):
    """Largest TVD between the model and the data on the network's edges."""
    codes = synth.domain_.encode(frame)
    columns = list(frame.columns)
    worst = 0.0
    for child, parents in enumerate(network.parents):
        for parent in parents:
            truth = contingency_counts(codes, synth.domain_.sizes, [child, parent])
            model = synth.marginal([columns[child], columns[parent]])
            worst = max(worst, 0.5 * np.abs(model - truth / truth.sum()).sum())
    return worst


def test_large_epsilon_recovers_the_tree_and_the_entropy(tree_data):
    gaps, errors = [], []
    best_possible = tree_data.log_likelihood(tree_data.test).mean()
    for epsilon in [0.1, 1.0, 1e4]:
        synth = MSTSynthesizer(domain=tree_data.domain, random_state=0).fit(
            tree_data.train, epsilon=epsilon)
        gaps.append(best_possible - synth.score(tree_data.test))
        errors.append(_edge_error(synth, tree_data.train, tree_data.network))
    # held-out likelihood approaches the true distribution's from below
    assert gaps[0] > gaps[1] > gaps[2] > -2e-3, gaps
    assert gaps[2] < 5e-3
    assert -synth.score(tree_data.test) == pytest.approx(tree_data.entropy, abs=0.02)
    # the measured edges are recovered nearly exactly
    assert errors[0] > errors[2] and errors[2] < 1e-3, errors


def _n_measured_entries(synth):
    """Entries of all the noisy measurements (on the compressed domain)."""
    sizes = synth.compression_.sizes
    cliques = [[synth.domain_.index(c) for c in clique] for clique in synth.cliques_]
    return sum(sizes) + sum(int(np.prod([sizes[j] for j in c])) for c in cliques)


def test_early_stopping_stops_at_the_expected_loss(tree_data):
    kwargs = dict(domain=tree_data.domain, random_state=0)
    early = MSTSynthesizer(early_stopping=0.7, **kwargs).fit(tree_data.train, epsilon=1.0)
    full = MSTSynthesizer(early_stopping=None, **kwargs).fit(tree_data.train, epsilon=1.0)
    info, info_full = early.estimation_info_, full.estimation_info_
    # same measurements (same noise), different stopping points
    assert early.tree_edges_ == full.tree_edges_
    assert info["iterations"] < info_full["iterations"]
    assert info_full["loss_history"][-1] < info["loss_history"][-1]
    # the first step whose loss is at most 0.7 times its expected value at the truth
    history = info["loss_history"]
    assert history[-1] <= 0.7 * _n_measured_entries(early) < min(history[1:-1])
    classical = MSTSynthesizer(early_stopping=1.0, **kwargs).fit(tree_data.train, epsilon=1.0)
    history = classical.estimation_info_["loss_history"]
    assert history[-1] <= _n_measured_entries(early) < min(history[1:-1])
    assert classical.estimation_info_["iterations"] <= info["iterations"]


def test_holdout_stop_applies_the_cross_validated_factor(fitted):
    """The default stop: the first step whose loss is at most the chosen factor times
    the expected loss (the factor read off the two halves of every measurement)."""
    info = fitted.estimation_info_
    holdout = info["holdout"]
    assert len(holdout["folds"]) == 2
    history = info["loss_history"]
    if any(f["best_at_end"] for f in holdout["folds"]):
        # a fold's held-out loss still fell when it converged: run to convergence
        assert holdout["factor"] is None
        assert info["converged"] or info["iterations"] == fitted.max_iter
        return
    _assert_stopped_at_the_lower_fold_factor(fitted)


def test_holdout_stop_applies_the_lower_fold_factor(tree_data):
    """Where both folds' held-out losses turned up before their ends (this seed at
    epsilon=3; at epsilon=1, the ``fitted`` fixture, a fold's was lowest at its end),
    the estimation stops at the lower of the two folds' factors."""
    synth = MSTSynthesizer(domain=tree_data.domain, random_state=0).fit(
        tree_data.train, epsilon=3.0)
    assert not any(f["best_at_end"] for f in synth.estimation_info_["holdout"]["folds"])
    _assert_stopped_at_the_lower_fold_factor(synth)


def _assert_stopped_at_the_lower_fold_factor(synth):
    info = synth.estimation_info_
    holdout, history = info["holdout"], info["loss_history"]
    assert holdout["factor"] == min(f["factor"] for f in holdout["folds"])
    target = holdout["factor"] * _n_measured_entries(synth)
    assert target < min(history[:-1])
    assert history[-1] <= target or info["converged"] or info["iterations"] == synth.max_iter


def test_holdout_ledger_is_the_same_for_neighbouring_tables(tree_data):
    """The halves' costs and noise scales never depend on the rows: D and D' one row
    apart, same seed, release the same number of halves at the same costs (which pairs
    are measured is the exponential mechanism's output and may differ)."""
    small = tree_data.train.iloc[:3000]
    ledgers = [MSTSynthesizer(domain=tree_data.domain, random_state=5).fit(
        frame, epsilon=1.0).privacy_ledger_ for frame in (small, small.iloc[:-1])]
    recorded = [[(e.mechanism, e.rho, e.noise_scale) for e in ledger.entries]
                for ledger in ledgers]
    assert recorded[0] == recorded[1]
    for ledger in ledgers:
        halves = [e.target[-len("half 1 of 2"):] for e in ledger.entries
                  if e.mechanism == "gaussian"]
        assert halves == ["half 1 of 2", "half 2 of 2"] * (len(halves) // 2)
    assert ledgers[0].spent() == ledgers[1].spent()
    assert ledgers[0].spent()[0] == pytest.approx(1.0, rel=1e-9)


def test_holdout_stop_in_float32(tree_data):
    synth = MSTSynthesizer(domain=tree_data.domain, random_state=0, model_dtype="float32")
    synth.fit(tree_data.train.iloc[:5000], epsilon=3.0)
    factor = synth.estimation_info_["holdout"]["factor"]
    assert factor is None or factor >= 0
    assert synth.model_.tables[0].dtype == np.float32


# ------------------------------------------------------------- determinism
def test_same_random_state_gives_identical_rows(tree_data):
    runs = [MSTSynthesizer(domain=tree_data.domain, random_state=3).fit(
        tree_data.train.iloc[:3000], epsilon=1.0) for _ in range(2)]
    pd.testing.assert_frame_equal(runs[0].sample(500), runs[1].sample(500))
    other = MSTSynthesizer(domain=tree_data.domain, random_state=4).fit(
        tree_data.train.iloc[:3000], epsilon=1.0)
    assert not runs[0].sample(500, random_state=0).equals(other.sample(500, random_state=0))


def test_default_sample_size_is_the_model_total(fitted):
    rows = fitted.sample()
    assert len(rows) == round(fitted.model_.total)
    assert abs(len(rows) - 20_000) < 200


def test_lowvar_rows_match_the_model_closer_than_iid_rows(fitted):
    a, b = fitted.tree_edges_[0]
    model = fitted.marginal([a, b])
    errors = {}
    for method in ("lowvar", "iid"):
        synth = copy.copy(fitted).set_params(sampling=method)  # same fitted model
        rows = synth.sample(20_000, random_state=0)
        codes = synth.domain_.encode(rows)
        counts = contingency_counts(codes, synth.domain_.sizes,
                                    [synth.domain_.index(a), synth.domain_.index(b)])
        errors[method] = 0.5 * np.abs(counts / len(rows) - model).sum()
    assert errors["lowvar"] < errors["iid"] < 0.03, errors
    assert errors["lowvar"] < 2e-3


def test_conditions_fix_columns(fitted):
    # exactness against brute force: tests/test_conditional.py
    rows = fitted.sample(10, conditions={"c2": "v1"})
    assert (rows["c2"] == "v1").all()


# ------------------------------------------------------------- compression
def test_rare_codes_are_merged_and_spread_back():
    frame, domain = _rare_frame()
    synth = MSTSynthesizer(domain=domain, random_state=0).fit(frame, epsilon=1.0)
    comp = synth.compression_
    assert comp.sizes[0] == 4  # three kept codes + one merged code
    assert comp.mappings[0].tolist() == [0, 1, 2, 3, 3, 3, 3, 3]
    assert comp.sizes[1:] == [2, 3]
    # the merged code's mass is shared equally by the rare codes
    probs = synth.marginal("a")
    assert np.ptp(probs[3:]) < 1e-12
    # samples spread the merged code over all of its original codes
    rows = synth.sample(40_000, random_state=0)
    rare = rows["a"][rows["a"] >= 3]
    assert set(rare.unique()) == {3, 4, 5, 6, 7}
    counts = rare.value_counts().to_numpy()
    assert counts.min() > 0.7 * counts.mean()


def test_scores_use_the_merged_probability_divided_by_the_group_size():
    frame, domain = _rare_frame()
    synth = MSTSynthesizer(domain=domain, random_state=0).fit(frame, epsilon=1.0)
    joint = synth.marginal(["a", "b", "c"])
    assert joint.sum() == pytest.approx(1.0)
    every = np.indices(joint.shape).reshape(3, -1).T
    table = pd.DataFrame(every, columns=["a", "b", "c"])
    np.testing.assert_allclose(np.exp(synth.score_samples(table)), joint.ravel(), rtol=1e-9)


def test_compress_false_keeps_the_domain():
    frame, domain = _rare_frame()
    synth = MSTSynthesizer(domain=domain, compress=False, random_state=0).fit(
        frame, epsilon=1.0)
    assert synth.compression_.is_identity
    assert synth.compression_.sizes == [8, 2, 3]


# ----------------------------------------------------------------- options
def test_public_data_tree_spends_nothing_on_selection(tree_data):
    public = tree_data.test.iloc[:2000]
    synth = MSTSynthesizer(domain=tree_data.domain, random_state=0).fit(
        tree_data.train, epsilon=1.0, public_data=public)
    ledger = synth.privacy_ledger_
    assert not _entries(synth, "exponential")
    assert ledger.spent()[0] == pytest.approx(1.0, rel=1e-9)
    rho = ledger.rho_budget
    assert sum(e.rho for e in _entries(synth, "gaussian", "1-way")) == pytest.approx(rho / 2)
    assert sum(e.rho for e in _entries(synth, "gaussian", "2-way")) == pytest.approx(rho / 2)
    # the tree is the Chow-Liu tree of the public rows: it holds the true edges
    edges = {frozenset(e) for e in synth.tree_edges_}
    columns = list(tree_data.frame.columns)
    for child, parents in enumerate(tree_data.network.parents):
        for parent in parents:
            assert frozenset((columns[child], columns[parent])) in edges


def test_public_data_with_wrong_columns_names_the_parameter(tree_data):
    bad = tree_data.test.drop(columns="c2")
    with pytest.raises(ValueError, match=r"public_data.*missing \['c2'\]"):
        MSTSynthesizer(domain=tree_data.domain).fit(tree_data.train, epsilon=1.0,
                                                    public_data=bad)


def test_public_values_outside_the_domain_name_the_column_and_count(tree_data):
    public = tree_data.test.iloc[:100].copy()
    public["c2"] = public["c2"].astype(object)
    public.iloc[[3, 7], public.columns.get_loc("c2")] = "secret-value"
    with pytest.raises(ValueError, match=r"public_data: column 'c2' has 2 of 100 rows") as error:
        MSTSynthesizer(domain=tree_data.domain).fit(tree_data.train, epsilon=1.0,
                                                    public_data=public)
    assert "secret-value" not in str(error.value)


def test_public_data_is_a_fit_argument_not_a_parameter():
    assert "public_data" not in MSTSynthesizer().get_params()
    with pytest.raises(TypeError):
        MSTSynthesizer(public_data=None)


def test_public_tree_is_the_same_for_neighbouring_private_tables(tree_data):
    """The tree is read from the public table only: D and D' (one row apart) agree."""
    public = tree_data.test.iloc[:2000]
    # columns in another order: the base puts them back in X's order
    shuffled = public[list(reversed(public.columns))]
    trees = []
    for private in (tree_data.train, tree_data.train.iloc[1:]):
        synth = MSTSynthesizer(domain=tree_data.domain, compress=False, random_state=0).fit(
            private, epsilon=1.0, public_data=shuffled)
        trees.append(synth.tree_edges_)
    assert trees[0] == trees[1]
    reference = MSTSynthesizer(domain=tree_data.domain, compress=False, random_state=0).fit(
        tree_data.train, epsilon=1.0, public_data=public)
    assert reference.tree_edges_ == trees[0]


def test_initial_cliques_are_measured_and_grown_around(tree_data):
    synth = MSTSynthesizer(domain=tree_data.domain, random_state=0,
                           initial_cliques=[("x0", "c2", "c5"), ("c5", "x0")]).fit(
        tree_data.train, epsilon=1.0)
    targets = [e.target for e in synth.privacy_ledger_.entries]
    assert "3-way marginal ('x0', 'c2', 'c5'), half 1 of 2" in targets
    assert "2-way marginal ('c5', 'x0'), half 2 of 2" in targets
    assert synth.cliques_[:2] == [("x0", "c2", "c5"), ("c5", "x0")]
    # 6 columns, 3 already connected: 3 more edges, none inside the clique
    assert len(synth.tree_edges_) == 3 == len(_entries(synth, "exponential"))
    assert not any(set(e) <= {"x0", "c2", "c5"} for e in synth.tree_edges_)
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(1.0, rel=1e-9)
    model_cliques = [set(c) for c in synth.model_.cliques]
    assert any({"x0", "c2", "c5"} <= c for c in model_cliques)


def test_initial_cliques_connecting_everything_skip_selection():
    frame, domain = _rare_frame()
    synth = MSTSynthesizer(domain=domain, initial_cliques=[("a", "b"), ("b", "c")],
                           random_state=0).fit(frame, epsilon=1.0)
    assert synth.tree_edges_ == [] and not _entries(synth, "exponential")
    rho = synth.privacy_ledger_.rho_budget
    assert sum(e.rho for e in _entries(synth, "gaussian", "2-way")) == pytest.approx(rho / 2)


def test_single_column_spends_everything_on_its_histogram():
    frame = pd.DataFrame({"a": np.random.default_rng(0).integers(0, 4, 500)})
    synth = MSTSynthesizer(domain={"a": 4}, random_state=0).fit(frame, epsilon=1.0)
    assert [e.mechanism for e in synth.privacy_ledger_.entries] == ["gaussian"] * 2
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(1.0, rel=1e-9)
    assert synth.sample(10).shape == (10, 1)


def test_weights_scale_the_noise_and_keep_the_budget(tree_data):
    synth = MSTSynthesizer(domain=tree_data.domain, random_state=0,
                           weights={"x0": 2.0, ("c2", "x0"): 3.0}).fit(
        tree_data.train, epsilon=1.0)
    one_way = {e.target: e for e in _entries(synth, "gaussian", "1-way")}
    assert one_way["1-way marginal 'x1', half 1 of 2"].noise_scale == pytest.approx(
        2 * one_way["1-way marginal 'x0', half 2 of 2"].noise_scale)
    rho = synth.privacy_ledger_.rho_budget
    assert sum(e.rho for e in one_way.values()) == pytest.approx(3 * rho / 8, rel=1e-9)
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(1.0, rel=1e-9)


def test_ndarray_input_with_integer_columns():
    frame, domain = _rare_frame()
    synth = MSTSynthesizer(domain=list(domain.values()), initial_cliques=[(0, 1)],
                           random_state=0).fit(frame.to_numpy(), epsilon=1.0)
    out = synth.sample(20)
    assert isinstance(out, np.ndarray) and out.shape == (20, 3)
    assert synth.marginal([2, 0]).shape == (3, 8)


# ----------------------------------------------------------------- marginal
def test_marginal_sums_to_one_and_matches_the_model(fitted):
    a, b = fitted.tree_edges_[0]
    probs = fitted.marginal([a, b])
    assert probs.shape == (fitted.domain_[a].size, fitted.domain_[b].size)
    assert probs.sum() == pytest.approx(1.0)
    positions = [fitted.domain_.index(c) for c in (a, b)]
    model = fitted.model_.marginal([fitted.attributes_[j] for j in positions], normalize=True)
    np.testing.assert_allclose(probs, fitted.compression_.expand_marginal(model, positions))
    # merged codes share their group's probability equally
    for axis, j in enumerate(positions):
        for codes in fitted.compression_.merged_codes(j):
            shares = np.take(probs, codes, axis=axis)
            assert np.ptp(shares, axis=axis).max() < 1e-12
    # an unmeasured 3-way marginal, answered from the model, agrees with its 2-way ones
    three = fitted.marginal(["x0", "c3", "c5"])
    np.testing.assert_allclose(three.sum(axis=2), fitted.marginal(["x0", "c3"]), atol=1e-12)


def test_marginal_as_frame_decodes_values(fitted):
    frame = fitted.marginal(["c2", "x1"], as_frame=True)
    assert list(frame.columns) == ["c2", "x1", "probability"]
    assert frame["probability"].sum() == pytest.approx(1.0)
    assert set(frame["c2"]) == set(fitted.domain_["c2"].categories)


def test_marginal_unknown_column_is_named(fitted):
    with pytest.raises(ValueError, match="columns: unknown column 'nope'"):
        fitted.marginal(["x0", "nope"])


# ------------------------------------------------------------------ sklearn
def test_clone_and_pickle_round_trip(fitted, tree_data):
    copy = clone(fitted)
    assert copy.get_params() == {**fitted.get_params()}
    assert not hasattr(copy, "model_")
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.score_samples(tree_data.test.iloc[:200]),
                                  fitted.score_samples(tree_data.test.iloc[:200]))
    pd.testing.assert_frame_equal(restored.sample(100, random_state=1),
                                  fitted.sample(100, random_state=1))


# -------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("cliques, message", [
    ([("x0", "nope")], "initial_cliques: unknown column 'nope'"),
    (["x0"], "initial_cliques must be a list of tuples"),
    ([("x0", "x0")], "initial_cliques: repeated column"),
    ([()], "initial_cliques: a marginal needs at least one column"),
])
def test_bad_initial_cliques_name_the_parameter(tree_data, cliques, message):
    with pytest.raises(ValueError, match=message):
        MSTSynthesizer(domain=tree_data.domain, initial_cliques=cliques).fit(
            tree_data.train, epsilon=1.0)


@pytest.mark.parametrize("weights, message", [
    ({("x0", "zz"): 1.0}, "weights: unknown column 'zz'"),
    ({"x0": 0.0}, "weights: the weight of 'x0'"),
    ({"x0": float("nan")}, "weights: the weight of 'x0'"),
])
def test_bad_weights_name_the_parameter(tree_data, weights, message):
    with pytest.raises(ValueError, match=message):
        MSTSynthesizer(domain=tree_data.domain, weights=weights).fit(
            tree_data.train, epsilon=1.0)


@pytest.mark.parametrize("param, value", [
    ("max_iter", 0), ("tol", -1.0), ("sampling", "exact"), ("compress", "yes"),
    ("early_stopping", 0.0),
])
def test_bad_hyperparameters_name_the_parameter(tree_data, param, value):
    with pytest.raises(ValueError, match=param):
        MSTSynthesizer(domain=tree_data.domain, **{param: value}).fit(
            tree_data.train, epsilon=1.0)


def test_two_columns_need_no_selection():
    frame, domain = _rare_frame()
    synth = MSTSynthesizer(domain={"a": 8, "b": 2}, random_state=0).fit(
        frame[["a", "b"]], epsilon=1.0)
    assert synth.tree_edges_ == [("a", "b")] and not _entries(synth, "exponential")
    rho = synth.privacy_ledger_.rho_budget
    assert sum(e.rho for e in _entries(synth, "gaussian", "1-way")) == pytest.approx(rho / 2)
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(1.0, rel=1e-9)
