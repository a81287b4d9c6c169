"""The one DP-SGD loop that the tabular and the text models plug their losses into."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

pytestmark = pytest.mark.neural

from opacus.accountants.analysis.rdp import compute_rdp  # noqa: E402

import sklearn_dpsynth.neural  # noqa: E402
from sklearn_dpsynth.datasets import make_bayesnet  # noqa: E402
from sklearn_dpsynth.exceptions import BudgetExceededError  # noqa: E402
from sklearn_dpsynth.neural import DPTBARTSynthesizer  # noqa: E402
from sklearn_dpsynth.neural.dpsgd import (  # noqa: E402
    DPSGDConfig,
    PrivacyRecord,
    TrainingConfig,
    train_dpsgd,
)
from sklearn_dpsynth.neural.layout import PlainLayout  # noqa: E402
from sklearn_dpsynth.neural.text_model import TextTransformer  # noqa: E402
from sklearn_dpsynth.neural.text_training import TextRowLoss  # noqa: E402
from sklearn_dpsynth.neural.training import TabularRowLoss  # noqa: E402
from sklearn_dpsynth.neural.transformer import TabularTransformer  # noqa: E402
from sklearn_dpsynth.privacy import DPSGD_MECHANISM, PrivacyLedger, rdp_orders, spend_dpsgd  # noqa: E402,E501

SIZES = [3, 4, 2]
DEVICE = torch.device("cpu")
N_ROWS = 30


class Spy:
    """A row loss that records the rows it is asked for."""

    def __init__(self, loss) -> None:
        self.loss, self.n_rows, self.seen = loss, loss.n_rows, []

    def __call__(self, model, index, device):
        self.seen.append(np.array(index))
        return self.loss(model, index, device)

    def activation_floats(self, model):
        return self.loss.activation_floats(model)


def _tabular(seed=0, n_rows=N_ROWS):
    layout = PlainLayout(SIZES)
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, k, N_ROWS) for k in SIZES])[:n_rows]
    torch.manual_seed(seed)
    model = TabularTransformer(layout.vocabulary.n_tokens, layout.seq_len, SIZES, d_model=8,
                               n_layers=1, n_heads=2)
    return model, lambda rng: TabularRowLoss(layout, codes, augmult=1, random_order=False,
                                             rng=rng)


def _text(seed=0, n_rows=N_ROWS):
    rng = np.random.default_rng(seed)
    length, n_tokens = 6, 11
    tokens = rng.integers(0, n_tokens, (N_ROWS, length))[:n_rows]
    lengths = rng.integers(3, length + 1, N_ROWS)[:n_rows]
    weights = np.ones((n_rows, length - 1), np.float32)
    torch.manual_seed(seed)
    model = TextTransformer(n_tokens, length, d_model=8, n_layers=1, n_heads=2)
    return model, lambda rng: TextRowLoss(tokens, lengths, weights)


MODELS = {"tabular": _tabular, "text": _text}
MODES = [None, "ghost", "hooks"]
CONFIG = TrainingConfig(steps=4, sample_rate=0.3, expected_batch_size=9, lr=1e-2)


def _dp(mode, sigma=1.0):
    return None if mode is None else DPSGDConfig(noise_multiplier=sigma, max_grad_norm=1.0,
                                                 grad_sample_mode=mode)


def _state(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("kind", MODELS)
@pytest.mark.parametrize("mode", MODES)
def test_both_models_see_the_poisson_batches_in_the_documented_order(kind, mode):
    """Two torch seeds first, then one uniform per row and step: the same for every model."""
    model, make_loss = MODELS[kind]()
    rng = np.random.default_rng(5)
    spy = Spy(make_loss(rng))
    report = train_dpsgd(model, spy, CONFIG, dp=_dp(mode), rng=rng, device=DEVICE)
    replay = np.random.default_rng(5)
    replay.integers(0, 2**62, size=2)
    expected = [np.flatnonzero(replay.random(N_ROWS) < CONFIG.sample_rate)
                for _ in range(CONFIG.steps)]
    seen = np.concatenate(spy.seen) if spy.seen else np.array([], int)
    np.testing.assert_array_equal(seen, np.concatenate(expected))
    assert report.rows_seen == sum(map(len, expected)) and report.steps == CONFIG.steps
    assert not model.training and all(p.grad is None for p in model.parameters())


@pytest.mark.parametrize("kind", MODELS)
def test_the_private_run_is_entered_in_the_ledger_before_it_trains(kind):
    ledgers = []
    for n_rows in (N_ROWS, N_ROWS - 1):  # neighbouring tables: one row removed
        model, make_loss = MODELS[kind](n_rows=n_rows)
        ledger = PrivacyLedger(4.0, 1e-6)  # the run costs epsilon 3.32
        orders = rdp_orders(4.0, 1e-6)
        entries_at_step = []
        rng = np.random.default_rng(0)
        train_dpsgd(model, make_loss(rng), CONFIG, dp=_dp("ghost", sigma=1.5), rng=rng,
                    device=DEVICE, record=PrivacyRecord(ledger, orders, "weights"),
                    progress=lambda step, steps, loss: entries_at_step.append(
                        len(ledger.entries)))
        assert entries_at_step == [1] * CONFIG.steps
        ledgers.append(ledger)
    assert ledgers[0].entries == ledgers[1].entries  # nothing recorded depends on the rows
    (entry,) = ledger.entries
    assert entry.mechanism == DPSGD_MECHANISM and entry.target == "weights"
    assert entry.details == {"steps": 4, "sample_rate": 0.3, "noise_multiplier": 1.5,
                             "max_grad_norm": 1.0}
    # the curve is Opacus's own analysis of 4 Poisson-subsampled Gaussian steps
    opacus_curve = compute_rdp(q=0.3, noise_multiplier=1.5, steps=4, orders=list(orders))
    np.testing.assert_allclose(entry.rdp_values, opacus_curve, rtol=1e-6)
    # and the entry is the one the estimators recorded before the loop owned it
    before = PrivacyLedger(4.0, 1e-6)
    spend_dpsgd(before, sample_rate=0.3, noise_multiplier=1.5, steps=4, max_grad_norm=1.0,
                orders=orders, target="weights")
    assert before.entries == ledger.entries


def test_a_run_over_the_budget_trains_nothing():
    model, make_loss = _tabular()
    weights = _state(model)
    ledger = PrivacyLedger(0.05, 1e-6)
    rng = np.random.default_rng(0)
    spy = Spy(make_loss(rng))
    with pytest.raises(BudgetExceededError):
        train_dpsgd(model, spy, CONFIG, dp=_dp("ghost", sigma=0.5), rng=rng, device=DEVICE,
                    record=PrivacyRecord(ledger, rdp_orders(0.05, 1e-6), "weights"))
    assert spy.seen == [] and ledger.entries == []
    assert all(torch.equal(weights[k], v) for k, v in model.state_dict().items())


def test_only_a_private_run_is_recorded():
    model, make_loss = _tabular()
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="record"):
        train_dpsgd(model, make_loss(rng), CONFIG, dp=None, rng=rng, device=DEVICE,
                    record=PrivacyRecord(PrivacyLedger(1.0, 1e-6), [2.0], "weights"))


@pytest.mark.parametrize("kind", MODELS)
@pytest.mark.parametrize("mode", MODES)
def test_empty_batches_move_the_model_by_the_noise_only_under_dp(kind, mode):
    model, make_loss = MODELS[kind]()
    weights = _state(model)
    config = TrainingConfig(steps=2, sample_rate=1e-12, expected_batch_size=5, lr=1e-2)
    rng = np.random.default_rng(0)
    spy, losses = Spy(make_loss(rng)), []
    report = train_dpsgd(model, spy, config, dp=_dp(mode), rng=rng, device=DEVICE,
                         progress=lambda step, steps, loss: losses.append(loss))
    assert spy.seen == [] and report.rows_seen == 0 and np.isnan(losses).all()
    moved = [not torch.equal(weights[k], v) for k, v in model.state_dict().items()]
    assert all(moved) if mode is not None else not any(moved)


@pytest.mark.parametrize("mode", MODES)
def test_recorded_losses_are_the_progress_losses_and_fall(mode):
    model, make_loss = _text()
    config = TrainingConfig(steps=30, sample_rate=0.5, expected_batch_size=15, lr=3e-2)
    rng = np.random.default_rng(1)
    shown = []
    report = train_dpsgd(model, make_loss(rng), config, dp=_dp(mode, sigma=0.3), rng=rng,
                         device=DEVICE, record_loss=True,
                         progress=lambda step, steps, loss: shown.append(loss))
    assert report.losses == [loss for loss in shown if np.isfinite(loss)]
    assert len(report.losses) == config.steps  # a batch of ~15 rows is never empty here
    assert np.mean(report.losses[-5:]) < np.mean(report.losses[:5])


def test_tabular_pretraining_reports_through_the_progress_reporter(capsys):
    data = make_bayesnet(n_samples=500, n_features=3, random_state=0)
    private, public = data.frame.iloc[:300], data.frame.iloc[300:]
    params = dict(domain=data.domain, d_model=8, n_layers=1, n_heads=2, epochs=1,
                  batch_size=64, pretrain_epochs=2, device="cpu", random_state=0)
    DPTBARTSynthesizer(**params, verbose=1).fit(private, epsilon=1.0, public_data=public)
    lines = capsys.readouterr().err.splitlines()
    pre = [line for line in lines if line.startswith("[DPTBARTSynthesizer pre-training] ")]
    # 2 epochs of 200 public rows in batches of 64: 7 steps, a line for each
    assert len(pre) == 7 and pre[-1].startswith("[DPTBARTSynthesizer pre-training] step 7/7")
    assert all("training loss" in line and "(public rows)" in line for line in pre)
    assert len(lines) == len(pre) + 1 and "epsilon spent so far" in lines[-1]
    DPTBARTSynthesizer(**params).fit(private, epsilon=1.0, public_data=public)
    assert capsys.readouterr().err == ""


def test_no_neural_module_imports_a_private_name_of_another():
    """The seams are public: a module of the package uses only others' public names."""
    root = pathlib.Path(sklearn_dpsynth.neural.__file__).parent
    offences = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                offences += [f"{path.name}: {alias.name}" for alias in node.names
                             if alias.name.startswith("_")]
    assert offences == []
