"""The transformer, its column-masked head and its per-sample gradient rules."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

pytestmark = pytest.mark.neural

from opacus import GradSampleModule  # noqa: E402
from opacus.grad_sample import GradSampleModuleFastGradientClipping  # noqa: E402

from sklearn_dpsynth.neural.column_head import column_log_softmax_gather  # noqa: E402
from sklearn_dpsynth.neural.layout import FieldLayout, PlainLayout  # noqa: E402
from sklearn_dpsynth.neural.dpsgd import (  # noqa: E402
    DPSGDConfig,
    TrainingConfig,
    linear_schedule,
    poisson_batch,
)
from sklearn_dpsynth.neural.training import (  # noqa: E402
    copies_log_likelihood,
    presentation_orders,
    train_transformer,
)
from sklearn_dpsynth.neural.transformer import TabularTransformer  # noqa: E402

SIZES = [3, 4, 2, 5]
DEVICE = torch.device("cpu")


@pytest.fixture(autouse=True)
def float64_one_thread():
    """Exact comparisons in float64; one thread (tiny ops, shared machines)."""
    dtype, threads = torch.get_default_dtype(), torch.get_num_threads()
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    yield
    torch.set_default_dtype(dtype)
    torch.set_num_threads(threads)


def _model(layout, head="column", seed=0, layers=2):
    torch.manual_seed(seed)
    model = TabularTransformer(layout.vocabulary.n_tokens, layout.seq_len, SIZES, d_model=8,
                               n_layers=layers, n_heads=2, head=head)
    for parameter in model.head.parameters():  # non-zero head so that every grad is non-trivial
        torch.nn.init.normal_(parameter)
    return model


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, k, n) for k in SIZES]), rng


def _per_row_reference(model, layout, codes, orders):
    """Per-row gradients of the row loss (mean over copies), one row at a time."""
    grads = []
    for b in range(len(codes)):
        model.zero_grad()
        loss = -copies_log_likelihood(model, layout, codes[b:b + 1], orders[b:b + 1],
                                      DEVICE).mean()
        loss.backward()
        grads.append({name: p.grad.clone() for name, p in model.named_parameters()})
    model.zero_grad()
    return grads


CASES = [(PlainLayout, 1, "column"), (PlainLayout, 1, "full"), (PlainLayout, 3, "column"),
         (FieldLayout, 1, "column"), (FieldLayout, 3, "column"), (FieldLayout, 2, "full")]


@pytest.mark.parametrize("layout_cls, copies, head", CASES)
def test_per_sample_gradients_and_ghost_norms_are_exact(layout_cls, copies, head):
    layout = layout_cls(SIZES)
    codes, rng = _data(5)
    orders = presentation_orders(5, copies, layout, layout_cls is FieldLayout, rng)
    model = _model(layout, head)
    reference = _per_row_reference(model, layout, codes, orders)

    warnings.filterwarnings("ignore", message="Full backward hook is firing")
    hooks = GradSampleModule(model, loss_reduction="sum")
    (-copies_log_likelihood(hooks, layout, codes, orders, DEVICE).mean(1)).sum().backward()
    for name, p in model.named_parameters():
        for b in range(5):
            torch.testing.assert_close(p.grad_sample[b], reference[b][name])
    hooks.cleanup()
    model.zero_grad()

    ghost = GradSampleModuleFastGradientClipping(model, loss_reduction="sum",
                                                 max_grad_norm=1.0)
    (-copies_log_likelihood(ghost, layout, codes, orders, DEVICE).mean(1)).sum().backward()
    expected = torch.stack([torch.sqrt(sum((g ** 2).sum() for g in r.values()))
                            for r in reference])
    torch.testing.assert_close(ghost.get_norm_sample(), expected)
    ghost.cleanup()


@pytest.mark.parametrize("layout_cls", [PlainLayout, FieldLayout])
def test_column_head_is_the_masked_full_head(layout_cls):
    layout = layout_cls(SIZES)
    codes, rng = _data(6)
    orders = presentation_orders(6, 1, layout, layout_cls is FieldLayout, rng)[:, 0]
    model = _model(layout).eval()
    tokens, positions, targets = (torch.as_tensor(a) for a in
                                  layout.copies_inputs(codes, orders[:, None]))
    with torch.no_grad():
        hidden = model.hidden(tokens)
        masked = model.head.masked_logits(hidden, positions)  # (rows, columns, vocabulary)
        reference = masked.log_softmax(-1).gather(2, targets[:, 0, :, None])[..., 0]
        ours = column_log_softmax_gather(model(tokens, positions), targets, model.head.starts)
        # outside a column's range the masked logits are -inf
        owner = torch.as_tensor(layout.vocabulary.column_of_token)
        assert torch.isinf(masked[:, 1, owner != 1]).all()
        assert torch.isfinite(masked[:, 1, owner == 1]).all()
    torch.testing.assert_close(ours[:, 0], reference)


def test_full_head_variant_gives_the_same_logits_with_the_same_weights():
    layout = PlainLayout(SIZES)
    codes, _ = _data(4)
    column, full = _model(layout, "column"), _model(layout, "full")
    full.load_state_dict({**{k: v for k, v in column.state_dict().items()
                             if not k.startswith("head.")},
                          "head.proj.weight": column.head.weight.detach(),
                          "head.proj.bias": column.head.bias.detach()})
    tokens, positions, _ = (torch.as_tensor(a) for a in
                            layout.copies_inputs(codes, np.zeros((4, 1, 4), int) + np.arange(4)))
    with torch.no_grad():
        torch.testing.assert_close(column(tokens, positions), full(tokens, positions))
        hidden = torch.randn(3, 8)
        for c in range(len(SIZES)):
            torch.testing.assert_close(column.head.column_logits(hidden, c),
                                       full.head.column_logits(hidden, c))


def test_copies_are_independent_presentations():
    layout = FieldLayout(SIZES)
    codes, rng = _data(3)
    orders = presentation_orders(3, 3, layout, True, rng)
    model = _model(layout).eval()
    with torch.no_grad():
        together = copies_log_likelihood(model, layout, codes, orders, DEVICE)
        alone = torch.stack([copies_log_likelihood(model, layout, codes, orders[:, j:j + 1],
                                                   DEVICE)[:, 0] for j in range(3)], dim=1)
    torch.testing.assert_close(together, alone)


def test_incremental_decoding_with_cache_matches_the_full_pass():
    layout = FieldLayout(SIZES)
    codes, rng = _data(4)
    orders = presentation_orders(4, 1, layout, True, rng)[:, 0]
    model = _model(layout).eval()
    tokens = torch.as_tensor(layout.tokens(codes, orders))
    with torch.no_grad():
        full = model.hidden(tokens)
        caches = model.new_caches()
        parts = [model.hidden(tokens[:, slice(*layout.chunk(s))], start=layout.chunk(s)[0],
                              caches=caches) for s in range(len(SIZES))]
    torch.testing.assert_close(torch.cat(parts, dim=1), full)


def test_ghost_and_hooks_modes_take_the_same_private_step():
    layout = PlainLayout(SIZES)
    codes, _ = _data(40)
    config = TrainingConfig(steps=2, sample_rate=0.5, expected_batch_size=20, lr=1e-2)
    states = []
    for mode in ("ghost", "hooks"):
        model = _model(layout, layers=1)
        train_transformer(model, layout, codes, config,
                          dp=DPSGDConfig(noise_multiplier=0.7, max_grad_norm=0.5,
                                         grad_sample_mode=mode),
                          rng=np.random.default_rng(3), device=DEVICE)
        states.append(model.state_dict())
        for parameter in model.parameters():
            assert not vars(parameter) and parameter.grad is None
        assert not any(hasattr(m, "activations") for m in model.modules())
    for key in states[0]:
        torch.testing.assert_close(states[0][key], states[1][key])


def test_training_leaves_the_global_torch_rng_alone_and_is_reproducible():
    layout = PlainLayout(SIZES)
    codes, _ = _data(50)
    config = TrainingConfig(steps=3, sample_rate=0.3, expected_batch_size=15)
    dp = DPSGDConfig(noise_multiplier=1.0, max_grad_norm=1.0)
    torch.manual_seed(123)
    before = torch.get_rng_state()
    results = []
    for _ in range(2):
        model = _model(layout, layers=1)
        torch.set_rng_state(before)
        train_transformer(model, layout, codes, config, dp=dp, rng=np.random.default_rng(7),
                          device=DEVICE)
        assert torch.equal(torch.get_rng_state(), before)
        results.append(model.state_dict())
    for key in results[0]:
        torch.testing.assert_close(results[0][key], results[1][key], rtol=0, atol=0)


def test_schedule_and_sampler():
    multiplier = linear_schedule(10, 3)
    values = [multiplier(s) for s in range(10)]
    assert values[:3] == [0.25, 0.5, 0.75] and values[3] == 1.0
    assert all(a >= b for a, b in zip(values[3:], values[4:])) and values[-1] > 0
    rng = np.random.default_rng(0)
    sizes = [len(poisson_batch(1000, 0.1, rng)) for _ in range(200)]
    assert abs(np.mean(sizes) - 100) < 3 and np.std(sizes) > 5


@pytest.mark.parametrize("kwargs, match", [
    (dict(noise_multiplier=0.0, max_grad_norm=1.0), "noise_multiplier"),
    (dict(noise_multiplier=1.0, max_grad_norm=-1.0), "max_grad_norm"),
    (dict(noise_multiplier=1.0, max_grad_norm=1.0, grad_sample_mode="x"), "grad_sample_mode"),
])
def test_bad_dp_settings_name_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DPSGDConfig(**kwargs)


def test_bad_model_settings_name_the_parameter():
    with pytest.raises(ValueError, match="n_heads"):
        TabularTransformer(5, 3, [2, 2], d_model=6, n_heads=4)
    with pytest.raises(ValueError, match="head"):
        TabularTransformer(5, 3, [2, 2], d_model=8, n_heads=2, head="big")


def test_small_clipping_norms_do_not_stall_adam():
    """Adam's eps scales with max_grad_norm: when every row is clipped, the run is the same."""
    layout = PlainLayout(SIZES)
    codes, _ = _data(60)
    config = TrainingConfig(steps=4, sample_rate=0.5, expected_batch_size=30, lr=1e-2)
    states = []
    for norm in (1e-2, 1e-5):
        model = _model(layout, layers=1)
        train_transformer(model, layout, codes, config,
                          dp=DPSGDConfig(noise_multiplier=1.0, max_grad_norm=norm),
                          rng=np.random.default_rng(4), device=DEVICE)
        states.append(model.state_dict())
    for key in states[0]:
        torch.testing.assert_close(states[0][key], states[1][key], rtol=1e-4, atol=1e-6)
