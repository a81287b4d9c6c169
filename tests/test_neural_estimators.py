"""DPTBARTSynthesizer and SynLMSynthesizer: masks, likelihood, privacy, sampling, API."""

import itertools
import pickle

import numpy as np
import pytest
from sklearn.base import clone

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

pytestmark = pytest.mark.neural

from opacus.accountants import RDPAccountant  # noqa: E402

from sklearn_dpsynth.datasets import make_bayesnet  # noqa: E402
from sklearn_dpsynth.neural import DPTBARTSynthesizer, SynLMSynthesizer  # noqa: E402
from sklearn_dpsynth.neural.dpsgd import TrainingConfig  # noqa: E402
from sklearn_dpsynth.neural.layout import PlainLayout  # noqa: E402
from sklearn_dpsynth.neural.scoring import log_likelihood_codes  # noqa: E402
from sklearn_dpsynth.neural.training import train_transformer  # noqa: E402
from sklearn_dpsynth.neural.transformer import TabularTransformer  # noqa: E402
from sklearn_dpsynth.privacy import DPSGD_MECHANISM  # noqa: E402

SIZES = [2, 3, 2]
FAST = dict(d_model=16, n_layers=1, n_heads=2, epochs=2, batch_size=64, lr=1e-2)
ESTIMATORS = [
    pytest.param(DPTBARTSynthesizer, {}, id="dptbart"),
    pytest.param(SynLMSynthesizer, {}, id="synlm-fixed"),
    pytest.param(SynLMSynthesizer, {"field_order": "random", "augmult": 2}, id="synlm-random"),
]
ALL_ROWS = np.array(list(itertools.product(*[range(k) for k in SIZES])))


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def table():
    """600 rows over sizes (2, 3, 2) with strong dependencies."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 600)
    b = np.where(rng.random(600) < 0.8, a + (rng.random(600) < 0.5), rng.integers(0, 3, 600))
    c = np.where(rng.random(600) < 0.9, (b > 0).astype(int), 1 - (b > 0))
    return np.column_stack([a, b, c])


@pytest.fixture(scope="module")
def fitted(table):
    """One fit per estimator configuration, shared by the read-only tests."""
    models = {}
    for param in ESTIMATORS:
        cls, extra = param.values
        models[param.id] = cls(domain=SIZES, random_state=0, **FAST, **extra).fit(
            table, epsilon=2.0, delta=1e-6)
    return models


NAMES = [p.id for p in ESTIMATORS]


@pytest.mark.parametrize("name", NAMES)
def test_probabilities_of_all_rows_sum_to_one(fitted, name):
    probabilities = np.exp(fitted[name].score_samples(ALL_ROWS))
    assert np.all(probabilities > 0)
    assert probabilities.sum() == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_score_samples_is_the_sum_of_masked_log_softmax_terms(fitted, name):
    synth = fitted[name]
    layout, model = synth.layout_, synth.model_
    orders = np.broadcast_to(np.arange(3), (len(ALL_ROWS), 3))[:, None, :]
    tokens, positions, targets = (torch.as_tensor(a) for a in
                                  layout.copies_inputs(ALL_ROWS, orders))
    with torch.no_grad():
        masked = model.head.masked_logits(model.hidden(tokens), positions).double()
        terms = masked.log_softmax(dim=-1).gather(2, targets[:, 0, :, None])[..., 0]
    np.testing.assert_allclose(synth.score_samples(ALL_ROWS), terms.sum(1).numpy(),
                               atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_samples_are_valid_and_follow_the_model(fitted, name):
    synth = fitted[name]
    rows = synth.sample(6000, random_state=1)
    assert rows.shape == (6000, 3)
    assert np.all((rows >= 0) & (rows < np.array(SIZES)))
    cells = np.ravel_multi_index(rows.T, SIZES)
    empirical = np.bincount(cells, minlength=12) / len(rows)
    model = np.exp(synth.score_samples(ALL_ROWS))
    assert 0.5 * np.abs(empirical - model).sum() < 0.04


@pytest.mark.parametrize("name", NAMES)
def test_ledger_spends_exactly_the_budget_on_count_and_dpsgd(fitted, name):
    synth = fitted[name]
    ledger = synth.privacy_ledger_
    assert ledger.spent() == (pytest.approx(2.0, rel=1e-9), 1e-6)
    assert [e.target for e in ledger.entries] == ["row count", "transformer weights"]
    entry = ledger.entries[1]
    assert entry.mechanism == DPSGD_MECHANISM
    assert entry.details["steps"] == synth.steps_
    assert entry.details["noise_multiplier"] == synth.noise_multiplier_
    assert entry.details["sample_rate"] == pytest.approx(64 / synth.n_records_)
    assert synth.steps_ == int(np.ceil(2 * synth.n_records_ / 64))
    # Opacus's own accountant on the DP-SGD entry alone gives at most the total
    accountant = RDPAccountant()
    accountant.history = [(synth.noise_multiplier_, synth.sample_rate_, synth.steps_)]
    assert 1.5 < accountant.get_epsilon(1e-6) <= 2.0 * (1 + 1e-3)
    assert abs(synth.n_records_ - 600) < 60


@pytest.mark.parametrize("cls, extra", ESTIMATORS)
def test_same_random_state_same_rows(table, cls, extra):
    a = cls(domain=SIZES, random_state=3, **FAST, **extra).fit(table, epsilon=1.0)
    b = cls(domain=SIZES, random_state=3, **FAST, **extra).fit(table, epsilon=1.0)
    np.testing.assert_array_equal(a.sample(50), b.sample(50))
    np.testing.assert_array_equal(a.score_samples(table[:20]), b.score_samples(table[:20]))
    c = cls(domain=SIZES, random_state=4, **FAST, **extra).fit(table, epsilon=1.0)
    assert not np.array_equal(a.score_samples(table[:20]), c.score_samples(table[:20]))


def test_fixed_order_conditions_on_a_prefix_exactly(fitted):
    synth = fitted["dptbart"]
    rows = synth.sample(4000, random_state=2, conditions={0: 1})
    assert np.all(rows[:, 0] == 1)
    # the draws follow the model's conditional p(x1, x2 | x0 = 1)
    joint = np.exp(synth.score_samples(ALL_ROWS))
    keep = ALL_ROWS[:, 0] == 1
    conditional = joint[keep] / joint[keep].sum()
    cells = np.ravel_multi_index(rows.T, SIZES)
    empirical = np.bincount(cells, minlength=12)[keep] / len(rows)
    assert 0.5 * np.abs(empirical - conditional).sum() < 0.04
    with pytest.raises(ValueError, match="conditions.*prefix"):
        synth.sample(5, conditions={1: 0})
    with pytest.raises(ValueError, match="conditions.*prefix"):
        fitted["synlm-fixed"].sample(5, conditions={2: 0})


def test_random_order_conditions_on_any_subset(fitted):
    synth = fitted["synlm-random"]
    rows = synth.sample(300, random_state=2, conditions={2: 1})
    assert np.all(rows[:, 2] == 1)
    rows = synth.sample(300, random_state=2, conditions={1: 2, 2: 0})
    assert np.all(rows[:, 1] == 2) and np.all(rows[:, 2] == 0)
    assert np.all((rows >= 0) & (rows < np.array(SIZES)))


@pytest.mark.parametrize("name", NAMES)
def test_clone_and_pickle(fitted, name):
    synth = fitted[name]
    twin = clone(synth)
    assert twin.get_params() == synth.get_params()
    assert not hasattr(twin, "model_")
    restored = pickle.loads(pickle.dumps(synth))
    np.testing.assert_array_equal(restored.sample(30, random_state=5),
                                  synth.sample(30, random_state=5))
    np.testing.assert_allclose(restored.score_samples(ALL_ROWS), synth.score_samples(ALL_ROWS))


def test_threads_are_restored_after_fit_sample_and_score(table):
    torch.set_num_threads(2)
    synth = DPTBARTSynthesizer(domain=SIZES, random_state=0, n_threads=1, **FAST)
    synth.fit(table, epsilon=1.0)
    synth.sample(5)
    synth.score(table)
    assert torch.get_num_threads() == 2


@pytest.mark.parametrize("params, match", [
    (dict(d_model=10, n_heads=4), "d_model"),
    (dict(epochs=0), "epochs"),
    (dict(batch_size=0), "batch_size"),
    (dict(max_grad_norm=-1.0), "max_grad_norm"),
    (dict(device="tpu"), "device"),
    (dict(grad_sample_mode="fast"), "grad_sample_mode"),
    (dict(n_threads=0), "n_threads"),
])
def test_bad_parameters_name_themselves(table, params, match):
    settings = {**FAST, **params}
    with pytest.raises(ValueError, match=match):
        DPTBARTSynthesizer(domain=SIZES, **settings).fit(table, epsilon=1.0)


def test_bad_synlm_parameters_name_themselves(table):
    with pytest.raises(ValueError, match="field_order"):
        SynLMSynthesizer(domain=SIZES, field_order="sideways", **FAST).fit(table, epsilon=1.0)
    with pytest.raises(ValueError, match="augmult"):
        SynLMSynthesizer(domain=SIZES, augmult=0, **FAST).fit(table, epsilon=1.0)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_without_a_gpu_is_a_clear_error(table):
    with pytest.raises(ValueError, match="device='cuda'"):
        DPTBARTSynthesizer(domain=SIZES, device="cuda", **FAST).fit(table, epsilon=1.0)


def test_auto_batch_size_reaches_the_noise_floor(table):
    synth = DPTBARTSynthesizer(domain=SIZES, random_state=0,
                               **{**FAST, "batch_size": "auto"}).fit(table, epsilon=1.0)
    assert synth.noise_multiplier_ >= 2.0 or synth.expected_batch_size_ == synth.n_records_


def test_non_private_training_reaches_the_true_entropy():
    """The documented non-private path (dp=None) fits a known distribution closely."""
    data = make_bayesnet(n_samples=20_000, n_features=4, cardinality=(2, 4), random_state=1)
    sizes = data.network.cardinalities
    layout = PlainLayout(sizes)
    torch.manual_seed(0)
    model = TabularTransformer(layout.vocabulary.n_tokens, layout.seq_len, sizes, d_model=32,
                               n_layers=1, n_heads=2)
    config = TrainingConfig(steps=300, sample_rate=512 / 20_000, expected_batch_size=512,
                            lr=1e-2, warmup_steps=10)
    report = train_transformer(model, layout, data.codes, config, dp=None,
                               rng=np.random.default_rng(0), device=torch.device("cpu"),
                               record_loss=True)
    assert report.steps == 300 and len(report.losses) == 300
    assert np.mean(report.losses[-20:]) < np.mean(report.losses[:20]) - 0.5
    cells = np.array(list(itertools.product(*[range(k) for k in sizes])))
    truth = data.network.joint().ravel()
    model_log_p = log_likelihood_codes(model, layout, cells, np.arange(4), torch.device("cpu"))
    assert np.exp(model_log_p).sum() == pytest.approx(1.0, abs=1e-6)
    cross_entropy = -np.sum(truth * model_log_p)
    kl = cross_entropy - data.network.entropy()
    assert 0 <= kl < 0.02


@pytest.mark.slow
@pytest.mark.parametrize("cls, extra", [ESTIMATORS[0], ESTIMATORS[2]])
def test_private_fit_approaches_the_entropy_at_a_large_budget(cls, extra):
    """End to end on a known distribution: DP training beats independent columns."""
    data = make_bayesnet(n_samples=20_000, n_features=5, cardinality=(2, 4), random_state=2)
    train, test = data.frame.iloc[:16_000], data.frame.iloc[16_000:]
    synth = cls(domain=data.domain, random_state=0, d_model=32, n_layers=1, n_heads=2,
                epochs=4, batch_size=512, lr=1e-2, **extra).fit(train, epsilon=8.0)
    nll = -synth.score(test)
    codes = data.codes[:16_000]
    independent = sum(-np.log(np.bincount(codes[:, j], minlength=k)[data.codes[16_000:, j]]
                              / len(codes)).mean()
                      for j, k in enumerate(data.network.cardinalities))
    independent += data.entropy - data.network.entropy()  # log-widths: the frame's units
    assert data.entropy - 0.02 < nll < data.entropy + 0.5 * (independent - data.entropy)


def test_random_order_conditioning_follows_the_data():
    """A column copied from another is recovered when conditioning on the copy (a later
    column in the natural order), which a fixed-order model could not do."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 3000)
    table = np.column_stack([a, rng.integers(0, 2, 3000), a])
    synth = SynLMSynthesizer(domain=[3, 2, 3], field_order="random", d_model=16, n_layers=1,
                             n_heads=2, epochs=5, batch_size=256, lr=2e-2, random_state=0)
    synth.fit(table, epsilon=10.0)
    conditioned = synth.sample(2000, random_state=1, conditions={2: 1})
    unconditioned = synth.sample(2000, random_state=1)
    assert np.mean(conditioned[:, 0] == 1) > 0.85
    assert np.mean(unconditioned[:, 0] == 1) < 0.5
    assert synth.sample(0).shape == (0, 3)
