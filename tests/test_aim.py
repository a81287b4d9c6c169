"""AIMSynthesizer: budget accounting, workloads, structural zeros, size cap, quality."""

import itertools

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.pgm import JunctionTree, ModelDomain
from sklearn_dpsynth.marginal import IndependentSynthesizer
from sklearn_dpsynth.marginal.aim._budget import BudgetSchedule
from sklearn_dpsynth.marginal.aim._model import MeasurementBank, ZeroMasks, holdout_factor
from sklearn_dpsynth.marginal.workload import candidate_weights, default_workload
from sklearn_dpsynth.marginal.aim import AIMSynthesizer
from sklearn_dpsynth.privacy import exponential_rho, gaussian_rho

FAST = {"max_iter": 30, "final_max_iter": 100, "rounds": 20}


@pytest.fixture(scope="module")
def net():
    return make_bayesnet(n_samples=4000, n_features=5, random_state=0)


def _aim(net, **params):
    return AIMSynthesizer(domain=net.domain, **{**FAST, "random_state": 0, **params})


def _pair_error(synth, frame, domain) -> float:
    """Mean TVD between the model's and the table's 2-way marginals."""
    codes = synth.domain_.encode(frame)
    sizes = synth.domain_.sizes
    errors = []
    for i, j in itertools.combinations(range(len(sizes)), 2):
        true = np.zeros((sizes[i], sizes[j]))
        np.add.at(true, (codes[:, i], codes[:, j]), 1.0)
        model = synth.marginal([synth.domain_.columns[i], synth.domain_.columns[j]])
        errors.append(0.5 * np.abs(model - true / len(codes)).sum())
    return float(np.mean(errors))


# ------------------------------------------------------------------ budget
@pytest.mark.parametrize("epsilon", [0.05, 0.5, 4.0])
def test_ledger_spends_exactly_the_budget(net, epsilon):
    synth = _aim(net).fit(net.frame, epsilon=epsilon, delta=1e-7)
    spent, delta = synth.privacy_ledger_.spent()
    assert spent == pytest.approx(epsilon, rel=1e-9) and delta == 1e-7
    assert synth.privacy_ledger_.rho_remaining() == pytest.approx(0.0, abs=1e-12)
    assert synth.history_[-1]["final"] and not any(h["final"] for h in synth.history_[:-1])
    assert synth.n_rounds_ == len(synth.history_) >= 1
    targets = list(synth.privacy_ledger_.summary()["target"])
    assert sum("selection" in t for t in targets) == synth.n_rounds_


def test_annealing_path_is_taken_and_accounted(net):
    synth = _aim(net, rounds=200).fit(net.frame, epsilon=1.0)
    annealed = [h for h in synth.history_ if h["annealed"]]
    assert annealed, "no round annealed"
    for before, after in zip(synth.history_, synth.history_[1:]):
        if before["annealed"] and not after["final"]:
            assert after["sigma"] == pytest.approx(before["sigma"] / 2)
            assert after["epsilon"] == pytest.approx(before["epsilon"] * 2)
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(1.0, rel=1e-9)


def test_final_round_takes_the_remainder():
    schedule = BudgetSchedule.start(rho=1.0, rounds=10, n_initial=3)
    assert 10 * schedule.round_cost == pytest.approx(1.0)
    schedule.begin_round(remaining=1.5 * schedule.round_cost)
    assert schedule.final
    assert gaussian_rho(schedule.sigma) + exponential_rho(schedule.epsilon) == pytest.approx(
        1.5 / 10)
    tiny = BudgetSchedule.start(rho=1.0, rounds=1, n_initial=5)
    assert 5 * gaussian_rho(tiny.sigma) < 1.0  # rounds raised to leave room


def test_budget_after_private_domain_learning():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 4, 800), "b": rng.choice(["x", "y"], 800)})
    synth = AIMSynthesizer(**FAST, random_state=0).fit(frame, epsilon=2.0, delta=1e-6)
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(2.0, rel=1e-9)


# --------------------------------------------------------------- workloads
def test_candidate_weights_follow_the_paper():
    weights = candidate_weights([((0, 1), 1.0), ((1, 2), 2.0)])
    assert weights == {(0,): 1.0, (1,): 3.0, (2,): 2.0, (0, 1): 4.0, (1, 2): 5.0}
    assert default_workload([2, 3, 50], max_cells=100) == [((0, 1), 1.0), ((0, 2), 1.0)]
    assert default_workload([5], max_cells=100) == [((0,), 1.0)]


def test_three_way_workload(net):
    columns = list(net.frame.columns)
    workload = [(tuple(columns[:3]), 2.0), tuple(columns[2:5])]
    synth = _aim(net, workload=workload).fit(net.frame, epsilon=2.0)
    assert synth.workload_ == [(tuple(columns[:3]), 2.0), (tuple(columns[2:5]), 1.0)]
    assert all(h["n_candidates"] <= 13 for h in synth.history_)  # 2 * 7 - 1 in the closure
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(2.0, rel=1e-9)
    probs = synth.marginal(columns[:3])
    assert probs.shape == tuple(synth.domain_[c].size for c in columns[:3])
    assert probs.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("workload, match", [
    ([("c2", "nope")], "workload.*'nope'"),
    ([(("c2", "c3"), -1.0)], "workload.*weight"),
    ([], "workload"),
    ([("c2", "c2")], "workload.*repeated"),
])
def test_bad_workload_is_a_value_error_naming_it(net, workload, match):
    with pytest.raises(ValueError, match=match):
        _aim(net, workload=workload).fit(net.frame, epsilon=1.0)


def test_bad_structural_zeros_and_initial_cliques(net):
    with pytest.raises(ValueError, match="structural_zeros.*'zz'"):
        _aim(net, structural_zeros={("c2", "zz"): []}).fit(net.frame, epsilon=1.0)
    with pytest.raises(ValueError, match="initial_cliques.*'zz'"):
        _aim(net, initial_cliques=[("zz",)]).fit(net.frame, epsilon=1.0)


# -------------------------------------------------------- structural zeros
def test_structural_zeros_are_exactly_zero_and_never_sampled(net):
    frame = net.frame
    c2_values = sorted(frame["c2"].unique())
    c3_values = sorted(frame["c3"].unique())
    impossible = [(c2_values[0], c3_values[0]), (c2_values[-1], c3_values[-1])]
    synth = _aim(net, structural_zeros={("c2", "c3"): impossible}).fit(frame, epsilon=1.0)
    probs = synth.marginal(["c2", "c3"])
    for a, b in impossible:
        i = synth.domain_["c2"].encode(np.array([a], dtype=object))[0]
        j = synth.domain_["c3"].encode(np.array([b], dtype=object))[0]
        assert probs[i, j] == 0.0
    rows = synth.sample(20000)
    pairs = set(zip(rows["c2"], rows["c3"]))
    assert not pairs & set(impossible)
    assert np.isneginf(synth.score_samples(pd.DataFrame(
        [{**frame.iloc[0].to_dict(), "c2": impossible[0][0], "c3": impossible[0][1]}]))[0])


def test_structural_zeros_as_a_boolean_mask(net):
    shape = (len(net.domain["c3"]), len(net.domain["c2"]))
    mask = np.zeros(shape, dtype=bool)
    mask[0, 1] = True
    synth = _aim(net, structural_zeros={("c3", "c2"): mask}).fit(net.frame, epsilon=1.0)
    assert synth.marginal(["c3", "c2"])[0, 1] == 0.0
    assert synth.marginal(["c2", "c3"])[1, 0] == 0.0


# ---------------------------------------------------------------- size cap
def test_model_size_cap_is_never_exceeded(net):
    seen = []
    cap = 0.0015  # MiB: about 200 cells, binding for this domain
    synth = _aim(net, max_model_size=cap, callback=seen.append).fit(net.frame, epsilon=3.0)
    assert len(seen) == synth.n_rounds_
    for info in seen:
        assert info["model_size_mb"] <= info["size_limit_mb"] + 1e-12
        assert info["size_limit_mb"] <= cap * (1 + 1e-9)
    assert synth.model_.size_mb <= cap
    n_all = len(candidate_weights(default_workload(synth.domain_.sizes, 10000)))
    assert min(info["n_candidates"] for info in seen) < n_all


# ----------------------------------------------------------------- quality
def test_error_falls_with_epsilon_and_beats_independent():
    net = make_bayesnet(n_samples=6000, n_features=5, random_state=1)
    errors = {}
    for epsilon in (0.05, 0.5, 5.0):
        errors[epsilon] = np.mean([
            _pair_error(AIMSynthesizer(domain=net.domain, **FAST, random_state=seed).fit(
                net.frame, epsilon=epsilon), net.frame, net.domain) for seed in (0, 1)])
    assert errors[0.05] > errors[0.5] > errors[5.0]
    independent = IndependentSynthesizer(domain=net.domain, random_state=0).fit(
        net.frame, epsilon=1.0)
    aim = AIMSynthesizer(domain=net.domain, **FAST, random_state=0).fit(net.frame, epsilon=1.0)
    codes = aim.domain_.encode(net.frame)
    real = aim.domain_.encode(net.frame)
    ind_rows = independent.domain_.encode(independent.sample(len(net.frame)))
    aim_rows = aim.domain_.encode(aim.sample(len(net.frame)))
    assert _rows_error(aim_rows, real, aim.domain_.sizes) < _rows_error(
        ind_rows, codes, aim.domain_.sizes)


def _rows_error(rows, real, sizes) -> float:
    errors = []
    for i, j in itertools.combinations(range(len(sizes)), 2):
        a = np.zeros((sizes[i], sizes[j]))
        b = np.zeros((sizes[i], sizes[j]))
        np.add.at(a, (rows[:, i], rows[:, j]), 1.0 / len(rows))
        np.add.at(b, (real[:, i], real[:, j]), 1.0 / len(real))
        errors.append(0.5 * np.abs(a - b).sum())
    return float(np.mean(errors))


# ------------------------------------------------------ reproducibility / UX
def test_reproducible_with_random_state(net):
    a = _aim(net, random_state=3).fit(net.frame, epsilon=1.0)
    b = _aim(net, random_state=3).fit(net.frame, epsilon=1.0)
    assert a.cliques_ == b.cliques_
    pd.testing.assert_frame_equal(a.sample(100), b.sample(100))
    c = _aim(net, random_state=4).fit(net.frame, epsilon=1.0)
    assert not c.sample(100).equals(_aim(net, random_state=3).fit(
        net.frame, epsilon=1.0).sample(100))


def test_verbose_progress_and_callback(net, capsys):
    calls = []
    synth = _aim(net, verbose=True, callback=calls.append).fit(net.frame, epsilon=1.0)
    err = capsys.readouterr().err
    assert "AIM" in err and "% of budget" in err
    assert len(calls) == synth.n_rounds_
    assert [c["round"] for c in calls] == list(range(1, synth.n_rounds_ + 1))
    assert all(0 < c["budget_used"] <= 1 for c in calls)
    assert calls[-1]["budget_used"] == pytest.approx(1.0)
    quiet = _aim(net).fit(net.frame, epsilon=1.0)
    assert quiet.n_rounds_ >= 1 and capsys.readouterr().err == ""


def test_marginal_answers_without_budget(net):
    synth = _aim(net).fit(net.frame, epsilon=1.0)
    entries = len(synth.privacy_ledger_)
    probs = synth.marginal(["c2", "x0"])
    assert probs.shape == (synth.domain_["c2"].size, synth.domain_["x0"].size)
    assert probs.sum() == pytest.approx(1.0) and np.all(probs >= 0)
    frame = synth.marginal("c2", as_frame=True)
    assert list(frame.columns) == ["c2", "probability"]
    assert len(synth.privacy_ledger_) == entries
    with pytest.raises(ValueError, match="columns.*'nope'"):
        synth.marginal(["nope"])


def test_the_model_works_on_the_domain_codes(net):
    synth = _aim(net).fit(net.frame, epsilon=1.0)
    assert synth.compression_.is_identity
    assert synth.compression_.sizes == synth.domain_.sizes
    codes = synth.domain_.encode(net.frame)
    np.testing.assert_allclose(synth.score_samples(net.frame),
                               synth.model_.log_likelihood(codes)
                               - synth.domain_.log_widths(codes))


def test_initial_cliques_are_measured_first(net):
    synth = _aim(net, initial_cliques=[("c3", "c2")]).fit(net.frame, epsilon=1.0)
    d = len(net.frame.columns)
    assert synth.cliques_[d] == ("c2", "c3")
    assert synth.cliques_[:d] == [(c,) for c in net.frame.columns]


def test_merged_measurements_are_inverse_variance_weighted():
    bank = MeasurementBank(["a"])
    bank.add((0,), np.array([10.0, 0.0]), 1.0)
    bank.add((0,), np.array([0.0, 10.0]), 2.0)
    (m,) = bank.measurements()
    assert m.sigma == pytest.approx((1 + 0.25) ** -0.5)
    np.testing.assert_allclose(m.noisy, [10 / 1.25, 2.5 / 1.25])


def test_final_estimation_stops_by_the_discrepancy_rule(net):
    synth = _aim(net, final_max_iter=2000, early_stopping=0.7).fit(net.frame, epsilon=2.0)
    sizes = dict(zip(synth.domain_.columns, synth.domain_.sizes))
    entries = sum(int(np.prod([sizes[c] for c in clique])) for clique in set(synth.cliques_))
    info = synth.estimation_info_
    assert info["iterations"] < 2000
    assert info["loss_history"][-1] <= 0.7 * entries < info["loss_history"][-2]
    assert info["stopped_by"] == "target"
    warm = _aim(net, early_stopping=None).fit(net.frame, epsilon=2.0)
    assert warm.cliques_ == synth.cliques_  # same rounds; only the last estimation differs
    assert np.isfinite(warm.score(net.frame)) and np.isfinite(synth.score(net.frame))


def test_holdout_halves_are_accounted_against_the_schedule(net):
    """``early_stopping="holdout"``: every measurement is two releases at
    ``sqrt(2) sigma`` costing ``1 / (4 sigma^2)`` each (recomputed here from the
    recorded sigmas), the 1-way marginals first, then one pair per round; the ledger
    totals the budget."""
    synth = _aim(net, rounds=40, early_stopping="holdout").fit(net.frame, epsilon=1.5,
                                                                 delta=1e-7)
    entries = [e for e in synth.privacy_ledger_.entries if e.mechanism == "gaussian"]
    assert len(entries) == 2 * (len(net.domain) + synth.n_rounds_)
    pairs = list(zip(entries[0::2], entries[1::2]))
    for first, second in pairs:
        assert first.target.endswith("half 1 of 2") and second.target.endswith("half 2 of 2")
        assert first.target[:-len("1 of 2")] == second.target[:-len("2 of 2")]
        assert first.noise_scale == second.noise_scale and first.rho == second.rho
    rho_total = synth.history_[0]["rho_total"]
    sigmas = [np.sqrt(40 / (2 * 0.9 * rho_total))] * len(net.domain)  # T = 40 planned rounds
    sigmas += [h["sigma"] for h in synth.history_]
    for (first, second), sigma in zip(pairs, sigmas):
        assert first.noise_scale == pytest.approx(np.sqrt(2.0) * sigma, rel=1e-12)
        assert first.rho + second.rho == pytest.approx(1.0 / (2.0 * sigma**2), rel=1e-12)
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(1.5, rel=1e-9)
    assert synth.privacy_ledger_.rho_remaining() == pytest.approx(0.0, abs=1e-12)
    holdout = synth.estimation_info_["holdout"]
    if not any(f["best_at_end"] for f in holdout["folds"]):
        assert holdout["factor"] == min(f["factor"] for f in holdout["folds"])
    # the final estimation stops at the chosen factor times the measured entries
    sizes = dict(zip(synth.domain_.columns, synth.domain_.sizes))
    target = (holdout["factor"] or 0.0) * sum(int(np.prod([sizes[c] for c in clique]))
                                     for clique in set(synth.cliques_))
    info = synth.estimation_info_
    assert info.get("stopped_by") != "target" or info["loss_history"][-1] <= target
    assert np.isfinite(synth.score(net.frame))


def test_holdout_ledger_for_neighbouring_tables(net):
    """D and D' one row apart, same seed: the same initial releases at the same costs,
    halves in pairs, and the same total; the choice of the stopping factor spends
    nothing (as many Gaussian releases as measurements, one selection per round)."""
    ledgers = []
    for frame in (net.frame, net.frame.iloc[:-1]):
        synth = _aim(net, early_stopping="holdout").fit(frame, epsilon=1.0)
        ledger = synth.privacy_ledger_
        kinds = [e.mechanism for e in ledger.entries]
        assert kinds.count("gaussian") == 2 * len(synth.cliques_)
        assert kinds.count("exponential") == synth.n_rounds_
        ledgers.append(ledger)
    d = len(net.domain)
    first = [[(e.mechanism, e.rho, e.noise_scale, e.target) for e in ledger.entries[:2 * d]]
             for ledger in ledgers]
    assert first[0] == first[1]
    assert ledgers[0].spent() == pytest.approx(ledgers[1].spent(), rel=1e-12)
    assert ledgers[0].spent()[0] == pytest.approx(1.0, rel=1e-9)


def test_holdout_halves_average_to_the_merged_measurement():
    """The rounds fit the mean of the two halves (noise sigma), which is what merging
    each half's repeats and then averaging gives."""
    halves = (MeasurementBank(["a"]), MeasurementBank(["a"]))
    merged = MeasurementBank(["a"])
    rng = np.random.default_rng(0)
    for sigma in (1.0, 0.5, 2.0):
        parts = rng.normal(size=(2, 3)) * np.sqrt(2.0) * sigma + 10.0
        for bank, part in zip(halves, parts):
            bank.add((0,), part, np.sqrt(2.0) * sigma)
        merged.add((0,), parts.mean(axis=0), sigma)
    (a,), (b,), (m,) = (bank.measurements() for bank in (*halves, merged))
    np.testing.assert_allclose((a.noisy + b.noisy) / 2.0, m.noisy)
    assert m.sigma == pytest.approx(a.sigma / np.sqrt(2.0))


def test_final_estimation_stops_once_its_target_is_out_of_reach(net):
    # a target of 1% of the entries: far below the least-squares minimum
    cap = 400
    synth = _aim(net, final_max_iter=cap, early_stopping=0.01).fit(net.frame, epsilon=2.0)
    sizes = dict(zip(synth.domain_.columns, synth.domain_.sizes))
    target = 0.01 * sum(int(np.prod([sizes[c] for c in clique]))
                        for clique in set(synth.cliques_))
    info = synth.estimation_info_
    losses, stop = info["loss_history"], info["iterations"]
    assert info["stopped_by"] == "out of reach" and 25 <= stop < cap
    assert losses[-1] > target

    def out_of_reach(t):  # the rule: the last 25 steps' rate cannot close the gap in time
        drop = losses[t - 25] - losses[t]
        return drop <= 0 or (losses[t] - target) * 25 > drop * (cap - t)

    assert out_of_reach(stop) and not any(out_of_reach(t) for t in range(25, stop))
    assert np.isfinite(synth.score(net.frame))


def test_round_atol_stops_each_round_estimation(net):
    """A huge ``round_atol`` stops every round after one step; 0 runs them to max_iter."""
    loose = _aim(net, round_atol=1e12).fit(net.frame, epsilon=2.0)
    assert all(h["estimation_iterations"] == 1 for h in loose.history_[:-1])
    assert loose.history_[-1]["estimation_iterations"] == 0  # left to the final estimation
    full = _aim(net, round_atol=0.0, tol=0.0, round_settle=None).fit(net.frame, epsilon=2.0)
    assert any(h["estimation_iterations"] == FAST["max_iter"] for h in full.history_)
    assert loose.privacy_ledger_.spent()[0] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="round_atol"):
        _aim(net, round_atol=-1.0).fit(net.frame, epsilon=2.0)


def test_round_settle_stops_rounds_that_cannot_change_the_annealing_test(net, monkeypatch):
    """With a huge ``round_settle`` a round stops at the first step from its 10-step
    window on where its new answer has moved past the annealing threshold: rounds that
    anneal run to ``max_iter`` (their test is decided as without the rule), the others
    stop early.  None or 0 leave every round to ``max_iter``; the budget is spent.
    Models under ``SETTLE_MIN_MB`` (all of this table's) are left to ``max_iter``."""
    from sklearn_dpsynth.marginal.aim import _estimator
    from sklearn_dpsynth.marginal.aim._estimator import SETTLE_WINDOW

    small = _aim(net, round_atol=0.0, tol=0.0, round_settle=1e12).fit(net.frame, epsilon=2.0)
    assert all(h["model_size_mb"] < _estimator.SETTLE_MIN_MB for h in small.history_)
    assert all(h["estimation_iterations"] == FAST["max_iter"] for h in small.history_[:-1])
    monkeypatch.setattr(_estimator, "SETTLE_MIN_MB", 0.0)
    loose = _aim(net, round_atol=0.0, tol=0.0, round_settle=1e12).fit(net.frame, epsilon=2.0)
    rounds = loose.history_[:-1]
    assert all(SETTLE_WINDOW <= h["estimation_iterations"] <= FAST["max_iter"] for h in rounds)
    assert all(h["estimation_iterations"] == FAST["max_iter"] for h in rounds if h["annealed"])
    assert sum(h["estimation_iterations"] < FAST["max_iter"] for h in rounds) >= len(rounds) // 2
    for off in (None, 0.0):
        full = _aim(net, round_atol=0.0, tol=0.0, round_settle=off).fit(net.frame, epsilon=2.0)
        assert all(h["estimation_iterations"] == FAST["max_iter"] for h in full.history_[:-1])
        assert full.privacy_ledger_.spent()[0] == pytest.approx(2.0)
    assert loose.privacy_ledger_.spent()[0] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="round_settle"):
        _aim(net, round_settle=-1.0).fit(net.frame, epsilon=2.0)


# ------------------------------------------------------------ model dtype
@pytest.mark.parametrize("epsilon, same_selections", [(0.5, True), (4.0, False)])
def test_model_dtype_float32_matches_float64(net, epsilon, same_selections):
    """float32 beliefs and tables: same budget; same rounds and a near-identical model.

    The exact exponential mechanism rounds the scores down to a grid of
    ``sensitivity / 1024`` and its draws consume the random stream according
    to the rounded scores.  float32 and float64 models give scores a few
    1e-3 apart, so a selection may take another branch of the stream and the
    two runs part (at epsilon 4 on this table, from round 7); there the two
    fits must be as close to the data as each other.
    """
    single = _aim(net, model_dtype="float32").fit(net.frame, epsilon=epsilon)
    double = _aim(net, model_dtype="float64").fit(net.frame, epsilon=epsilon)
    assert all(t.dtype == np.float32 for t in single.model_.tables)
    assert all(t.dtype == np.float64 for t in double.model_.tables)
    assert single.privacy_ledger_.spent()[0] == pytest.approx(epsilon)
    assert double.privacy_ledger_.spent()[0] == pytest.approx(epsilon)
    if not same_selections:
        errors = [_pair_error(s, net.frame, net.domain) for s in (single, double)]
        assert errors[0] == pytest.approx(errors[1], abs=2e-3)
        assert single.score(net.frame) == pytest.approx(double.score(net.frame), abs=5e-3)
        return
    assert single.cliques_ == double.cliques_
    columns = single.domain_.columns
    for pair in itertools.combinations(columns, 2):
        np.testing.assert_allclose(single.marginal(list(pair)), double.marginal(list(pair)),
                                   rtol=0, atol=2e-4)
    assert single.score(net.frame) == pytest.approx(double.score(net.frame), abs=2e-4)


def test_auto_model_dtype_follows_the_counts_rounding_against_the_noise(net):
    """"auto" (the default): float32 where float32 rounding of the counts is 1% of the noise.

    On this small table every estimation qualifies, so "auto" fits the
    float32 model bit for bit.
    """
    assert AIMSynthesizer().get_params()["model_dtype"] == "auto"
    auto = _aim(net).fit(net.frame, epsilon=4.0)
    single = _aim(net, model_dtype="float32").fit(net.frame, epsilon=4.0)
    assert auto.estimation_info_["dtype"] == "float32"
    for a, b in zip(auto.model_.tables, single.model_.tables):
        np.testing.assert_array_equal(a, b)


def test_bad_model_dtype_is_a_value_error_naming_it(net):
    with pytest.raises(ValueError, match="model_dtype"):
        _aim(net, model_dtype="float16").fit(net.frame, epsilon=1.0)


def test_history_holds_no_timing(net):
    """A round's wall-clock time grows with the private row count and is not a DP
    output: it must not be kept in ``history_`` (nor in saved models)."""
    synth = _aim(net).fit(net.frame, epsilon=1.0)
    keys = {key for info in synth.history_ for key in info}
    assert keys and not {key for key in keys if "elapsed" in key or "time" in key
                         or key.endswith("_s")}


def _halves_of(joint: np.ndarray, sigma: float, seed: int, ks: tuple) -> tuple:
    """Both halves (noise ``sqrt(2) sigma``) of every ``k``-way marginal of ``joint``."""
    rng = np.random.default_rng(seed)
    names = [f"x{j}" for j in range(joint.ndim)]
    halves = (MeasurementBank(names), MeasurementBank(names))
    for marginal in [m for k in ks for m in itertools.combinations(range(joint.ndim), k)]:
        others = tuple(j for j in range(joint.ndim) if j not in marginal)
        counts = joint.sum(axis=others).ravel()
        for bank in halves:
            noisy = counts + rng.normal(0.0, np.sqrt(2.0) * sigma, counts.size)
            bank.add(marginal, noisy, np.sqrt(2.0) * sigma)
    return halves


def _three_of_six(n: int) -> np.ndarray:
    """Six binary columns, every row holding exactly three ones (uniform over them)."""
    joint = np.zeros((2,) * 6)
    for cell in itertools.product((0, 1), repeat=6):
        joint[cell] = n / 20 if sum(cell) == 3 else 0.0
    return joint


@pytest.mark.parametrize("joint, ks, sigma", [
    # a deterministic constraint seen by every 2- and 3-way marginal, little noise
    (_three_of_six(20_000), (1, 2, 3), 5.0),
    # three independent 8-code columns: the 2-way measurements hold only noise to fit
    (np.full((8, 8, 8), 4000 / 512), (1, 2), 30.0),
])
def test_holdout_verdict_follows_the_folds(joint, ks, sigma):
    """``holdout_factor``: None (run to convergence) where a fold's held-out loss was
    lowest at its last step, else the lower fold factor; pure noise is always stopped."""
    names = [f"x{j}" for j in range(joint.ndim)]
    tree = JunctionTree(ModelDomain(tuple(names), joint.shape), [tuple(names)])
    verdicts = []
    for seed in range(3):
        factor, info = holdout_factor(tree, _halves_of(joint, sigma, seed, ks),
                                      ZeroMasks({}, names), total=float(joint.sum()),
                                      max_iters=300, tol=1e-8)
        if any(f["best_at_end"] for f in info["folds"]):
            assert factor is None
        else:
            assert factor == min(f["factor"] for f in info["folds"]) > 0
        verdicts.append(factor is None)
    if joint.shape == (8, 8, 8):
        assert verdicts == [False] * 3


def test_last_round_leaves_its_estimation_to_the_final_one(net):
    """With ``early_stopping`` the last round does not re-estimate: the final estimation does.

    The final model still lives on the last round's tree (every measured
    marginal, the last one included, is inside one of its cliques) and the
    record's model size is that tree's; without ``early_stopping`` the last
    round is re-estimated as every other.
    """
    synth = _aim(net).fit(net.frame, epsilon=2.0)
    last = synth.history_[-1]
    assert last["final"] and last["estimation_iterations"] == 0
    assert all(h["estimation_iterations"] >= 1 for h in synth.history_[:-1])
    assert last["model_size_mb"] == synth.model_.size_mb
    assert last["clique"] == synth.cliques_[-1]
    attribute = dict(zip(synth.domain_.columns, synth.attributes_))
    for clique in set(synth.cliques_):
        assert synth.model_.tree.index_containing([attribute[c] for c in clique]) is not None
    plain = _aim(net, early_stopping=None).fit(net.frame, epsilon=2.0)
    assert plain.history_[-1]["estimation_iterations"] >= 1



def _check_holdout_trees(net, monkeypatch, rounds, epsilon) -> bool:
    """Fit with ``early_stopping="holdout"``; assert the folds and the final model live
    on the last round's tree; return whether the folds ran on to convergence (None)."""
    from sklearn_dpsynth.marginal.aim import _estimator

    seen = []

    def spy(tree, *args, **kwargs):
        seen.append(tree)
        return holdout_factor(tree, *args, **kwargs)

    monkeypatch.setattr(_estimator, "holdout_factor", spy)
    # rounds run to max_iter: the settings below were chosen to reach both verdicts so
    params = {"round_settle": None} if rounds is None else {"rounds": rounds,
                                                            "round_settle": None}
    synth = _aim(net, early_stopping="holdout", **params).fit(net.frame, epsilon=epsilon,
                                                              delta=1e-7)
    assert len(seen) == 1 and synth.history_[-1]["estimation_iterations"] == 0
    attribute = dict(zip(synth.domain_.columns, synth.attributes_))
    for tree in (seen[0], synth.model_.tree):
        for clique in set(synth.cliques_):
            assert tree.index_containing([attribute[c] for c in clique]) is not None
    assert seen[0].size_mb == synth.history_[-1]["model_size_mb"]
    return synth.estimation_info_["holdout"]["factor"] is None


@pytest.mark.parametrize("rounds, epsilon", [(40, 1.5), (None, 1.0), (None, 20.0)])
def test_holdout_folds_and_final_model_use_the_last_rounds_tree(net, monkeypatch, rounds,
                                                                 epsilon):
    """``early_stopping="holdout"`` with the last round's re-estimation left out: the folds
    are fitted on the last round's tree (not on the tree of the round before, which may
    lack the last measured marginal) and so is the final model, whether the folds chose
    a factor or continue to convergence."""
    _check_holdout_trees(net, monkeypatch, rounds, epsilon)


def test_holdout_tree_settings_reach_both_verdicts(net, monkeypatch):
    """The settings above reach both of ``finish``'s branches (a factor, and None)."""
    assert {_check_holdout_trees(net, monkeypatch, rounds, epsilon)
            for rounds, epsilon in [(40, 1.5), (None, 1.0)]} == {True, False}
