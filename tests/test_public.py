"""Public-data methods: PMW-pub reweighting, MST+public, JAM and the DP workload."""

import itertools
import pickle

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import nnls
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from sklearn_dpsynth.privacy import epsilon_to_rho
from sklearn_dpsynth.public import (JAMSynthesizer, MSTPublicSynthesizer, PMWPubSynthesizer,
                                    measure_workload, reweight_records)
from sklearn_dpsynth.public import WeightedRecords
from sklearn_dpsynth.public._reweight import one_way_estimates, query_matrix

COLUMNS = ["a", "b", "c", "d"]
SIZES = [3, 2, 4, 3]
DOMAIN = dict(zip(COLUMNS, SIZES))
PAIRS = list(itertools.combinations(range(4), 2))


def _sample(n, seed):
    """A small table with strong 2-way dependencies (known generator)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a == 0).astype(int) ^ (rng.random(n) < 0.1)
    c = np.minimum(a + rng.integers(0, 2, n), 3)
    d = (c + rng.integers(0, 2, n)) % 3
    return pd.DataFrame(np.column_stack([a, b, c, d]), columns=COLUMNS)


@pytest.fixture(scope="module")
def private():
    return _sample(3000, 0)


@pytest.fixture(scope="module")
def public():
    return _sample(800, 1)


def _tvd(real, fake, pair):
    return _tvd_named(real, fake, [COLUMNS[j] for j in pair])


# ------------------------------------------------------------------ reweighting
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reweighting_matches_a_nnls_solver(seed):
    rng = np.random.default_rng(seed)
    records = np.column_stack([rng.integers(0, k, 12) for k in SIZES])
    answers = [rng.normal(20, 10, (SIZES[a], SIZES[b])) for a, b in PAIRS[:3]]
    sigmas = [1.0, 2.0, 0.5]
    weights, info = reweight_records(records, SIZES, PAIRS[:3], answers, sigmas, tol=1e-12,
                                     max_iter=200_000)
    scale = np.concatenate([np.full(a.size, 1 / s) for a, s in zip(answers, sigmas)])
    matrix = query_matrix(records, SIZES, PAIRS[:3]).toarray() * scale[:, None]
    target = np.concatenate([a.ravel() for a in answers]) * scale
    reference, norm = nnls(matrix, target, maxiter=10_000)
    assert info["cost"] == pytest.approx(0.5 * norm**2, rel=1e-6)
    assert (weights >= 0).all()


def test_reweighting_recovers_exact_weights_without_noise():
    rng = np.random.default_rng(0)
    cells = rng.choice(np.prod(SIZES), size=15, replace=False)
    records = np.column_stack(np.unravel_index(cells, SIZES))
    truth = rng.integers(0, 30, 15).astype(float)
    joint = np.zeros(SIZES)
    np.add.at(joint, tuple(records.T), truth)
    pair_answers = [joint.sum(axis=tuple(k for k in range(4) if k not in p)) for p in PAIRS]
    marginals = [(0, 1, 2, 3)] + PAIRS
    weights, _ = reweight_records(records, SIZES, marginals, [joint] + pair_answers,
                                  [1.0] * len(marginals), tol=1e-13, max_iter=100_000)
    np.testing.assert_allclose(weights, truth, atol=1e-4)


# ------------------------------------------------------------------ DP workload
def test_measure_workload_costs_and_noise(private):
    noisy = measure_workload(private, domain=DOMAIN, epsilon=1.0, delta=1e-9, random_state=0)
    rho = epsilon_to_rho(1.0, 1e-9)
    assert len(noisy.answers) == 6 and noisy.answers[0].shape == (3, 2)
    np.testing.assert_allclose(noisy.sigmas, np.sqrt(6 / (2 * rho)))
    assert noisy.privacy_ledger.spent()[0] == pytest.approx(1.0, rel=1e-9)
    assert sum(e.rho for e in noisy.privacy_ledger.entries) == pytest.approx(rho)
    for dist in noisy.distributions():
        assert dist.min() >= 0 and dist.sum() == pytest.approx(1.0)
    weighted = measure_workload(private, domain=DOMAIN, workload=[(("a", "b"), 2.0), ("c",)],
                                epsilon=1.0, random_state=0)
    np.testing.assert_allclose(weighted.sigmas[1] / weighted.sigmas[0], 2.0)
    with pytest.raises(ValueError, match="workload: unknown column"):
        measure_workload(private, domain=DOMAIN, workload=[("a", "zz")], epsilon=1.0)
    with pytest.raises(ValueError, match="domain: column"):
        measure_workload(private, domain={"a": 3}, epsilon=1.0)


# -------------------------------------------------------------- the estimators
ESTIMATORS = {
    "pmw": lambda **kw: PMWPubSynthesizer(**{"domain": DOMAIN, **kw}),
    "mst": lambda **kw: MSTPublicSynthesizer(**{"domain": DOMAIN, **kw}),
    "jam": lambda **kw: JAMSynthesizer(**{"domain": DOMAIN, "rounds": 6, **kw}),
}


@pytest.fixture(params=list(ESTIMATORS))
def make(request):
    return ESTIMATORS[request.param]


def test_ledger_totals_the_budget_and_rows_have_the_input_form(make, private, public):
    synth = make(random_state=0).fit(private, epsilon=1.0, delta=1e-6, public_data=public)
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(1.0, rel=1e-9)
    rows = synth.sample(40)
    assert list(rows.columns) == COLUMNS and rows.dtypes.tolist() == private.dtypes.tolist()
    assert len(synth.sample()) == pytest.approx(len(private), rel=0.2)


def test_converges_to_the_truth_with_large_budget_and_good_public_data(make, private, public):
    synth = make(random_state=0).fit(private, epsilon=1e4, public_data=public)
    rows = synth.sample(30000, random_state=1)
    for pair in PAIRS:
        assert _tvd(private, rows, pair) < 0.03, pair


def test_reproducible_pickle_and_clone(make, private, public):
    a = make(random_state=3)
    b = clone(a)
    a.fit(private, epsilon=1.0, public_data=public)
    b.fit(private, epsilon=1.0, public_data=public)
    pd.testing.assert_frame_equal(a.sample(30), b.sample(30))
    restored = pickle.loads(pickle.dumps(a))
    pd.testing.assert_frame_equal(a.sample(30, random_state=1),
                                  restored.sample(30, random_state=1))
    np.testing.assert_array_equal(a.score_samples(public), b.score_samples(public))


def test_without_public_data_and_with_arrays(make, private):
    X = private.to_numpy()
    synth = make(random_state=0, domain=SIZES).fit(X, epsilon=1.0)
    out = synth.sample(20)
    assert isinstance(out, np.ndarray) and out.shape == (20, 4) and out.dtype == X.dtype


def test_not_fitted_and_bad_public_data(make, private):
    with pytest.raises(NotFittedError):
        make().sample(3)
    with pytest.raises(ValueError, match="public_data.*columns"):
        make().fit(private, epsilon=1.0, public_data=private[["a", "b"]])
    with pytest.raises(ValueError, match="public_data: .*'a'"):
        make().fit(private, epsilon=1.0, public_data=private.assign(a=9))


def test_neighbouring_tables_spend_alike(make, private, public):
    spent = []
    for table in (private, private.iloc[1:]):
        synth = make(random_state=0).fit(table, epsilon=1.0, public_data=public)
        ledger = synth.privacy_ledger_
        spent.append((ledger.spent(), ledger.entries[0].target, ledger.entries[0].rho))
    assert spent[0][1:] == spent[1][1:]
    assert spent[0][0][0] == pytest.approx(spent[1][0][0])


def _all_codes(sizes):
    return np.array(list(itertools.product(*[range(k) for k in sizes])), dtype=np.int64)


def _mixture_by_hand(records, row):
    """``(1 - lam) * (mass of the equal records) + lam * prod_j q_j(x_j)``, from the parts."""
    lam = records.smoothing
    in_records = sum(p for code, p in zip(records.codes, records.probabilities)
                     if tuple(code) == tuple(row))
    base = np.prod([q[c] for q, c in zip(records.base, row)])
    return (1 - lam) * in_records + lam * base


def test_records_likelihood_is_exact(private, public):
    synth = PMWPubSynthesizer(domain=DOMAIN, random_state=0).fit(private, epsilon=1.0,
                                                                 public_data=public)
    keys = {tuple(r) for r in synth.records_.codes}
    for row in [public.to_numpy()[0], np.array([2, 1, 0, 2])]:
        frame = pd.DataFrame([row], columns=COLUMNS)
        expected = _mixture_by_hand(synth.records_, row)
        assert synth.score_samples(frame)[0] == pytest.approx(np.log(expected))
    unseen = np.array([2, 1, 0, 2])
    if tuple(unseen) not in keys:
        assert np.isfinite(synth.score_samples(pd.DataFrame([unseen], columns=COLUMNS))[0])
        bare = PMWPubSynthesizer(domain=DOMAIN, smoothing=0.0, random_state=0).fit(
            private, epsilon=1.0, public_data=public)
        assert bare.score_samples(pd.DataFrame([unseen], columns=COLUMNS))[0] == -np.inf


@pytest.mark.parametrize("lam", [0.05, 0.3])
@pytest.mark.parametrize("given_one_way", [True, False])
def test_smoothed_records_are_a_distribution_on_the_whole_domain(lam, given_one_way):
    rng = np.random.default_rng(0)
    codes = np.column_stack([rng.integers(0, k, 9) for k in SIZES])
    codes[3] = codes[0]  # a repeated record adds up
    weights = rng.random(9)
    one_way = [rng.random(k) * (rng.random(k) < 0.7) for k in SIZES] if given_one_way else None
    records = WeightedRecords(codes, weights, one_way=one_way, smoothing=lam, sizes=SIZES)
    domain = _all_codes(SIZES)
    log_p = records.log_likelihood(domain)
    assert np.all(np.isfinite(log_p))
    assert np.exp(log_p).sum() == pytest.approx(1.0, abs=1e-12)
    probs = weights / weights.sum()
    masses = [(np.asarray(m, float) / np.sum(m)) if given_one_way else
              np.bincount(codes[:, j], weights=probs, minlength=k) for j, (m, k) in
              enumerate(zip(one_way or [None] * 4, SIZES))]
    for row, value in zip(domain, log_p):
        in_records = probs[(codes == row).all(axis=1)].sum()
        base = np.prod([(1 - lam) * m[c] + lam / k for m, c, k in zip(masses, row, SIZES)])
        assert value == pytest.approx(np.log((1 - lam) * in_records + lam * base), rel=1e-12)
    bare = WeightedRecords(codes, weights).log_likelihood(domain)
    assert np.exp(bare).sum() == pytest.approx(1.0) and np.isinf(bare).sum() == len(domain) - 8


@pytest.mark.parametrize("conditions", [None, {1: 0}, {0: 2, 2: 3}])
def test_smoothed_records_sampler_follows_the_exact_distribution(conditions):
    rng = np.random.default_rng(1)
    codes = np.column_stack([rng.integers(0, k, 6) for k in SIZES])
    records = WeightedRecords(codes, rng.random(6), smoothing=0.2, sizes=SIZES)
    domain = _all_codes(SIZES)
    exact = np.exp(records.log_likelihood(domain))
    if conditions:
        keep = np.all([domain[:, j] == c for j, c in conditions.items()], axis=0)
        exact = np.where(keep, exact, 0.0) / exact[keep].sum()
    draws = records.sample(200_000, np.random.default_rng(2), conditions)
    index = np.ravel_multi_index(draws.T, SIZES)
    empirical = np.bincount(index, minlength=len(domain)) / len(draws)
    assert 0.5 * np.abs(empirical - exact).sum() < 0.01


def test_one_way_estimates_are_the_noisy_marginals_projected():
    records = np.array([[0, 0, 0, 0], [1, 1, 3, 2]])
    answers = [np.array([30.0, -5.0, 10.0]), np.full((2, 4), 5.0)]
    out = one_way_estimates([(0,), (1, 2)], answers, [1.0, 1.0], SIZES, records,
                            np.array([3.0, 1.0]))
    # projection of (30, -5, 10) onto the non-negative vectors summing to 35:
    # (30 - t, 0, 10 - t) with 40 - 2 t = 35
    np.testing.assert_allclose(out[0], [27.5 / 35, 0, 7.5 / 35])
    np.testing.assert_allclose(out[1], [0.5, 0.5])
    np.testing.assert_allclose(out[2], [0.25] * 4)
    np.testing.assert_allclose(out[3], [0.75, 0, 0.25])  # in no marginal: the records'


@pytest.mark.parametrize("name", ["pmw", "mst"])
def test_estimator_density_sums_to_one_and_is_finite_off_the_records(name, private, public):
    synth = ESTIMATORS[name](random_state=0).fit(private, epsilon=1.0,
                                                 public_data=public.iloc[:40])
    domain = pd.DataFrame(_all_codes(SIZES), columns=COLUMNS)
    log_p = synth.score_samples(domain)
    assert np.all(np.isfinite(log_p))
    assert np.exp(log_p).sum() == pytest.approx(1.0, abs=1e-9)
    keys = {tuple(r) for r in synth.records_.codes}
    outside = [row for row in domain.to_numpy() if tuple(row) not in keys]
    assert outside
    for row in [outside[0], synth.records_.codes[0]]:
        frame = pd.DataFrame([row], columns=COLUMNS)
        assert synth.score_samples(frame)[0] == pytest.approx(
            np.log(_mixture_by_hand(synth.records_, row)))
    assert np.isfinite(synth.score(private))


def test_records_conditional_sampling(private, public):
    synth = MSTPublicSynthesizer(domain=DOMAIN, random_state=0).fit(private, epsilon=1.0,
                                                                    public_data=public)
    rows = synth.sample(200, conditions={"a": 1})
    assert (rows["a"] == 1).all()


# ----------------------------------------------------------------------- MST+public
def test_mst_public_spends_thirds_and_public_selection_halves(private, public):
    rho = epsilon_to_rho(1.0, 1e-9)
    synth = MSTPublicSynthesizer(domain=DOMAIN, random_state=0).fit(private, epsilon=1.0,
                                                                    public_data=public)
    kinds = [e.mechanism for e in synth.privacy_ledger_.entries]
    assert kinds == ["gaussian"] * 4 + ["exponential"] * 3 + ["gaussian"] * 3
    entries = synth.privacy_ledger_.entries
    assert sum(e.rho for e in entries[:4]) == pytest.approx(rho / 3)
    assert sum(e.rho for e in entries[4:7]) == pytest.approx(rho / 3)
    assert len(synth.tree_edges_) == 3
    free = MSTPublicSynthesizer(domain=DOMAIN, public_selection=True, random_state=0).fit(
        private, epsilon=1.0, public_data=public)
    assert all(e.mechanism == "gaussian" for e in free.privacy_ledger_.entries)
    assert sum(e.rho for e in free.privacy_ledger_.entries[:4]) == pytest.approx(rho / 2)


# ------------------------------------------------------------------------------ JAM
def test_jam_choices_cost_what_the_ledger_says(private, public):
    synth = JAMSynthesizer(domain=DOMAIN, rounds=6, random_state=0).fit(
        private, epsilon=1.0, public_data=public)
    rho = epsilon_to_rho(1.0, 1e-9)
    entries = synth.privacy_ledger_.entries
    assert entries[0].target == "row count" and entries[0].rho == pytest.approx(0.9 * rho / 7)
    position = 1
    for info in synth.history_:
        select = entries[position]
        assert select.mechanism == "exponential"
        assert select.rho == pytest.approx(info["selection_rho"])
        position += 1
        if info["source"] == "private":
            assert entries[position].rho == pytest.approx(info["measurement_rho"])
            assert entries[position].mechanism == "gaussian"
            position += 1
        else:
            assert info["measurement_rho"] == 0
    assert position == len(entries)
    assert sum(e.rho for e in entries) == pytest.approx(rho)
    assert len(synth.history_) == 6 and synth.history_[-1]["source"] == "private"


def test_jam_takes_good_public_marginals_and_not_bad_ones(private):
    # A public copy of the private table is right on every marginal.
    good = JAMSynthesizer(domain=DOMAIN, rounds=6, random_state=0).fit(
        private, epsilon=1.0, public_data=private.copy())
    assert good.n_public_ >= 2
    rng = np.random.default_rng(0)  # each column shuffled alone: right 1-way, wrong 2-way
    shuffled = private.apply(lambda col: rng.permutation(col.to_numpy()))
    bad = JAMSynthesizer(domain=DOMAIN, rounds=6, random_state=0).fit(
        private, epsilon=1.0, public_data=shuffled)
    two_way_public = [h for h in bad.history_ if h["source"] == "public" and len(h["clique"]) > 1]
    assert not two_way_public


@pytest.mark.slow
def test_adult_public_split_reweighting_improves_on_the_public_table():
    from .conftest import DATA_DIR
    folder = DATA_DIR / "adult_public_split"
    if not folder.exists():
        pytest.skip("adult_public_split not available")
    import json
    domain = json.loads((folder / "domain.json").read_text())
    private = pd.read_csv(folder / "private.csv")[list(domain)]
    public = pd.read_csv(folder / "public.csv")[list(domain)]
    pairs = list(itertools.combinations(range(len(domain)), 2))

    def tvd(rows):
        cols = list(domain)
        return np.mean([_tvd_named(private, rows, [cols[a], cols[b]]) for a, b in pairs])

    synth = PMWPubSynthesizer(domain=domain, random_state=0).fit(private, epsilon=10.0,
                                                                 public_data=public)
    assert tvd(synth.sample(len(private))) < 0.8 * tvd(public)


def _tvd_named(real, fake, cols):
    p = real.value_counts(cols, normalize=True)
    q = fake.value_counts(cols, normalize=True).reindex(p.index, fill_value=0)
    return 0.5 * (np.abs(p - q).sum() + (1 - q.sum()))


def test_reweighting_warns_when_the_records_cannot_reproduce_the_data(private, public):
    # records whose b always contradicts a (the data ties b to a == 0 in 90% of rows)
    # cannot be reweighted into the measured marginals: noise does not explain it
    wrong = public[public["b"] != (public["a"] == 0).astype(int)]
    with pytest.warns(UserWarning, match="cannot reproduce the measured marginals"):
        bad = PMWPubSynthesizer(domain=DOMAIN, random_state=0).fit(
            private, epsilon=10.0, public_data=wrong)
    assert bad.reweight_info_["excess_misfit"] > 0.1
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        good = PMWPubSynthesizer(domain=DOMAIN, random_state=0).fit(
            private, epsilon=10.0, public_data=public)
    assert good.reweight_info_["excess_misfit"] < 0.1
