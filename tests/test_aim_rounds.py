"""AIM's rounds: batched candidate scores, and the "auto" final stop."""

import itertools

import numpy as np
import pytest

from sklearn_dpsynth.backends import NumpyTable
from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.marginal.aim import AIMSynthesizer
from sklearn_dpsynth.marginal.aim import _estimator as aim_estimator
from sklearn_dpsynth.marginal.aim._estimator import AUTO_FACTOR, auto_stop_factor
from sklearn_dpsynth.marginal.candidates import CandidateScorer, _ABS_NOISE
from sklearn_dpsynth.marginal.workload import candidate_weights
from sklearn_dpsynth.pgm import GraphicalModel, Measurement, ModelDomain

from ._brute_force import random_potentials


@pytest.mark.parametrize("seed", range(3))
def test_scores_equal_the_one_by_one_scores(seed):
    """Every candidate's score and answer, batched, against ``model_counts`` and the table."""
    rng = np.random.default_rng(seed)
    sizes = [2] * 9 + [3, 3]
    names = [f"x{j}" for j in range(len(sizes))]
    codes = np.column_stack([rng.integers(0, s, size=500) for s in sizes])
    table = NumpyTable(codes, names, sizes)
    workload = [(c, 1.0) for c in itertools.combinations(range(len(sizes)), 3)]
    scorer = CandidateScorer(table, candidate_weights(workload), names)
    domain = ModelDomain.from_mapping(dict(zip(names, sizes)))
    cliques = [tuple(rng.choice(names, size=5, replace=False)) for _ in range(3)]
    cliques += [(a,) for a in names]
    model = GraphicalModel(domain, cliques, random_potentials(domain, cliques, seed),
                           total=500.0)
    candidates = list(scorer.weights)
    scores, sensitivity, answers = scorer.scores(model, candidates, sigma=3.0)
    assert sensitivity == max(scorer.weights.values())
    for k, marginal in enumerate(candidates):
        one = scorer.model_counts(model, marginal)
        np.testing.assert_allclose(answers[marginal], one, rtol=1e-10, atol=1e-9)
        true = np.zeros([sizes[j] for j in marginal])
        np.add.at(true, tuple(codes[:, j] for j in marginal), 1.0)
        error = np.abs(true.ravel() - one).sum()
        expected = scorer.weights[marginal] * (error - _ABS_NOISE * 3.0 * true.size)
        assert scores[k] == pytest.approx(expected, rel=1e-10, abs=1e-8)


def _measurement(values):
    return Measurement(("a",), np.asarray(values, dtype=float), 1.0)


def test_auto_stop_factor_reads_the_signs_of_the_noisy_counts():
    assert auto_stop_factor([_measurement([3.0, 0.0]), _measurement([1.0, 2.0])]) is None
    assert auto_stop_factor([_measurement([3.0, 1.0]),
                             _measurement([-0.5, 2.0])]) == AUTO_FACTOR
    assert auto_stop_factor([]) is None


@pytest.fixture(scope="module")
def net():
    return make_bayesnet(n_samples=3000, n_features=5, random_state=0)


def _aim(net, **params):
    return AIMSynthesizer(domain=net.domain, max_iter=30, final_max_iter=300, rounds=20,
                          random_state=0, **params)


def test_auto_stop_on_a_small_model_is_the_holdout_stop(net):
    """Sparse marginals at a small budget: some noisy count is negative and the final
    model is small, so "auto" reads its factor off the noise split: exactly
    ``early_stopping="holdout"`` (same halves, same rounds, same final model)."""
    auto = _aim(net, early_stopping="auto").fit(net.frame, epsilon=0.3)
    holdout = _aim(net, early_stopping="holdout").fit(net.frame, epsilon=0.3)
    assert auto.history_[-1]["model_size_mb"] <= aim_estimator.AUTO_HOLDOUT_MAX_MB
    assert auto.estimation_info_["holdout"] == holdout.estimation_info_["holdout"]
    assert auto.estimation_info_["factor"] == holdout.estimation_info_["holdout"]["factor"]
    assert auto.cliques_ == holdout.cliques_
    for a, b in zip(auto.model_.tables, holdout.model_.tables):
        np.testing.assert_array_equal(a, b)
    assert ([(e.rho, e.target) for e in auto.privacy_ledger_.entries]
            == [(e.rho, e.target) for e in holdout.privacy_ledger_.entries])


def _aim_seed1(net):
    return AIMSynthesizer(domain=net.domain, max_iter=30, final_max_iter=300, rounds=20,
                          random_state=1)


def test_auto_stop_compares_the_final_tree_with_the_size(net, monkeypatch):
    """A fit whose last round grows the model: a threshold between the model
    before that round and the final one keeps 0.7 (no folds), one at the final
    size folds; the rounds are the same either way."""
    small = _aim_seed1(net).fit(net.frame, epsilon=0.5)
    before, final = (h["model_size_mb"] for h in small.history_[-2:])
    assert before < final <= aim_estimator.AUTO_HOLDOUT_MAX_MB
    assert "holdout" in small.estimation_info_
    monkeypatch.setattr(aim_estimator, "AUTO_HOLDOUT_MAX_MB", (before + final) / 2)
    large = _aim_seed1(net).fit(net.frame, epsilon=0.5)
    assert large.estimation_info_["factor"] == AUTO_FACTOR
    assert "holdout" not in large.estimation_info_
    assert large.estimation_info_["stopped_by"] in ("target", "out of reach")
    assert large.cliques_ == small.cliques_
    assert large.history_ == small.history_
    monkeypatch.setattr(aim_estimator, "AUTO_HOLDOUT_MAX_MB", final)
    again = _aim_seed1(net).fit(net.frame, epsilon=0.5)
    assert again.estimation_info_["holdout"] == small.estimation_info_["holdout"]


def test_auto_stop_runs_on_for_at_most_300_steps_when_a_fold_asks(net, monkeypatch):
    """Negative counts, a small model, and folds that never saw overfitting:
    "auto" continues from the last round's model for at most ``AUTO_MAX_ITER``
    steps (where "holdout" would run to ``final_max_iter``)."""
    monkeypatch.setattr(aim_estimator, "holdout_factor",
                        lambda *args, **kwargs: (None, {"factor": None}))
    synth = AIMSynthesizer(domain=net.domain, max_iter=30, final_max_iter=1000, tol=0.0,
                           rounds=20, random_state=0).fit(net.frame, epsilon=0.3)
    info = synth.estimation_info_
    assert info["factor"] is None and info["holdout"] == {"factor": None}
    assert "stopped_by" not in info
    assert info["iterations"] <= aim_estimator.AUTO_MAX_ITER


def test_auto_stop_runs_on_from_the_last_round_without_negative_counts():
    """Two binary columns, many rows, a large budget: no noisy count is negative,
    so the final estimation continues from the last round's model (no restart
    from the independent model, no discrepancy stop) and fits the measured
    2-way marginal closely."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, size=20000)
    b = np.where(rng.random(20000) < 0.9, a, 1 - a)
    import pandas as pd
    frame = pd.DataFrame({"a": a, "b": b})
    synth = AIMSynthesizer(domain={"a": 2, "b": 2}, rounds=4, random_state=0,
                           early_stopping="auto").fit(frame, epsilon=5.0)
    info = synth.estimation_info_
    assert info["factor"] is None and "stopped_by" not in info
    assert ("a", "b") in synth.cliques_
    true = np.histogram2d(a, b, bins=2)[0] / len(a)
    np.testing.assert_allclose(synth.marginal(["a", "b"]), true, atol=0.01)


def _dense_pair(n=20000):
    import pandas as pd
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, size=n)
    return pd.DataFrame({"a": a, "b": np.where(rng.random(n) < 0.9, a, 1 - a)})


@pytest.mark.parametrize("dense", [False, True])
def test_auto_stop_ledger_for_neighbouring_tables(net, dense):
    """D and D' one row apart, same seed: the same initial releases at the same
    costs and the same total, whichever way "auto" decides; the choice spends
    nothing (two Gaussian halves per measurement, one selection per round)."""
    frame = _dense_pair() if dense else net.frame
    ledgers = []
    for table in (frame, frame.iloc[:-1]):
        if dense:
            synth = AIMSynthesizer(domain={"a": 2, "b": 2}, rounds=4, random_state=0)
        else:
            synth = _aim(net)
        synth.fit(table, epsilon=5.0 if dense else 1.0)
        assert synth.early_stopping == "auto"
        info = synth.estimation_info_
        if dense:
            assert info["factor"] is None and "holdout" not in info
        else:
            assert info["factor"] == info["holdout"]["factor"]
        ledger = synth.privacy_ledger_
        kinds = [e.mechanism for e in ledger.entries]
        assert kinds.count("gaussian") == 2 * len(synth.cliques_)
        assert kinds.count("exponential") == synth.n_rounds_
        ledgers.append(ledger)
    d = frame.shape[1]
    first = [[(e.mechanism, e.rho, e.noise_scale, e.target) for e in ledger.entries[:2 * d]]
             for ledger in ledgers]
    assert first[0] == first[1]
    assert ledgers[0].spent() == pytest.approx(ledgers[1].spent(), rel=1e-12)
