"""Training loop of the tabular transformer, with or without DP-SGD.

The DP path is DP-SGD (Abadi et al. 2016) with Opacus: Poisson-sampled
batches (each row independently with probability ``sample_rate``),
per-sample gradients clipped to ``max_grad_norm``, Gaussian noise of
standard deviation ``noise_multiplier * max_grad_norm`` added to their sum,
and division by the *expected* batch size.  The optimizer runs in Opacus's
``secure_mode`` (each noise value the scaled sum of four Gaussian draws,
Holohan & Braghin 2021, against the floating-point attack on one draw),
with our seeded generator: ``torchcsprng`` is not needed, since the
optimizer is built directly, not through ``PrivacyEngine``.  The privacy cost of a run is
that of ``steps`` compositions of the Poisson-subsampled Gaussian mechanism;
it is computed and recorded by :mod:`sklearn_dpsynth.privacy.dpsgd`,
not here.

Two Opacus modes compute the clipped sum (same result up to rounding):

* ``"ghost"`` (default): ``GradSampleModuleFastGradientClipping`` computes
  only the per-sample gradient *norms* layer by layer (ghost clipping, Li et
  al. 2022; Bu et al. 2023), then a second backward pass of the loss
  reweighted by the clipping factors gives the clipped sum;
  ``DPOptimizerFastGradientClipping`` adds the noise.  The first backward
  pass is restricted to the embeddings' outputs: it computes every layer's
  output gradient (all the norm rules need) but no parameter gradient.
* ``"hooks"``: ``GradSampleModule`` materialises every per-sample gradient
  and ``DPOptimizer`` clips, sums and adds noise.

**AugMult** (De et al. 2022): each sampled row is presented ``augmult``
times (different random field orders when ``random_order``, different
dropout draws).  The copies are placed side by side in one input (the model
keeps them independent, see
:class:`~sklearn_dpsynth.neural.transformer.TabularTransformer`) and the
row's loss is their mean, so Opacus sees one sample per row whose gradient
is the average of the copies' gradients *before* clipping; the sampling
rate of the accountant stays the per-row one.

The non-private path (``dp=None``) is for tests, pre-training on public data
and throughput comparisons; it uses the same sampler and model with plain
gradients.  The public estimators always train with DP.

Adam's ``eps`` is multiplied by ``max_grad_norm``: with (nearly) all
gradients clipped, the noisy gradient scales with ``max_grad_norm`` and this
keeps the optimizer's update invariant to that scale (DP-TBART observed that
small clipping norms otherwise stall Adam).

Importing this module imports torch and opacus.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from opacus import GradSampleModule
from opacus.grad_sample import GradSampleModuleFastGradientClipping
from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping

from .column_head import column_log_softmax_gather
from .layout import RowLayout, natural_orders, random_orders

__all__ = [
    "DPSGDConfig",
    "TrainingConfig",
    "TrainingReport",
    "copies_log_likelihood",
    "linear_schedule",
    "poisson_batch",
    "presentation_orders",
    "row_log_likelihood",
    "train_transformer",
]

#: Floats held at once by one physical batch (per-sample gradients or
#: activations); bounds the memory of a step.
_FLOATS_PER_CHUNK = 2**26

#: Ways of computing the clipped sum of per-sample gradients.
GRAD_SAMPLE_MODES = ("ghost", "hooks")


@dataclass(frozen=True)
class DPSGDConfig:
    """Noise and clipping of DP-SGD.

    Attributes
    ----------
    noise_multiplier : float
        Noise standard deviation divided by ``max_grad_norm`` (``> 0``).
    max_grad_norm : float
        Per-sample clipping norm (``> 0``).
    grad_sample_mode : {"ghost", "hooks"}, default="ghost"
        How Opacus computes the clipped sum (see the module docstring).
    """

    noise_multiplier: float
    max_grad_norm: float
    grad_sample_mode: str = "ghost"

    def __post_init__(self) -> None:
        if not (self.noise_multiplier > 0 and np.isfinite(self.noise_multiplier)):
            raise ValueError(f"noise_multiplier must be finite and > 0, "
                             f"got {self.noise_multiplier!r}.")
        if not (self.max_grad_norm > 0 and np.isfinite(self.max_grad_norm)):
            raise ValueError(f"max_grad_norm must be finite and > 0, got {self.max_grad_norm!r}.")
        if self.grad_sample_mode not in GRAD_SAMPLE_MODES:
            raise ValueError(f"grad_sample_mode must be one of {GRAD_SAMPLE_MODES}, "
                             f"got {self.grad_sample_mode!r}.")


@dataclass(frozen=True)
class TrainingConfig:
    """Optimisation settings shared by the private and non-private loops.

    Attributes
    ----------
    steps : int
        Optimizer steps.
    sample_rate : float
        Probability that a row is in a batch (Poisson sampling), in (0, 1].
    expected_batch_size : float
        Normaliser of the summed gradient: the expected batch size
        (under DP, computed from the noisy row count, never the true one).
    lr : float
        Peak learning rate.
    warmup_steps : int
        Linear warm-up length; then linear decay to 0 at ``steps``.
    weight_decay : float
        Decoupled (AdamW) weight decay; 0 gives Adam.
    adam_eps : float
        Adam's ``eps`` (multiplied by ``max_grad_norm`` under DP).
    augmult : int
        Presentations of each sampled row per step.
    random_order : bool
        Draw an independent random field order for every presentation.
    """

    steps: int
    sample_rate: float
    expected_batch_size: float
    lr: float = 1e-3
    warmup_steps: int = 0
    weight_decay: float = 0.0
    adam_eps: float = 1e-8
    augmult: int = 1
    random_order: bool = False

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise ValueError(f"steps must be >= 1, got {self.steps}.")
        if not (0 < self.sample_rate <= 1):
            raise ValueError(f"sample_rate must lie in (0, 1], got {self.sample_rate}.")
        if not self.expected_batch_size > 0:
            raise ValueError(f"expected_batch_size must be > 0, got {self.expected_batch_size}.")
        if self.augmult < 1:
            raise ValueError(f"augmult must be >= 1, got {self.augmult}.")


@dataclass
class TrainingReport:
    """What a training run did (private: never exposed by the estimators).

    Attributes
    ----------
    steps : int
    rows_seen : int
        Rows sampled over all steps (before AugMult copies).
    seconds : float
        Wall time of the loop.
    cpu_seconds : float
        CPU time of this process during the loop.
    losses : list of float
        Mean training NLL per row of each step (only when recorded).
    """

    steps: int = 0
    rows_seen: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    losses: list = field(default_factory=list)

    @property
    def rows_per_second(self) -> float:
        """Training throughput in sampled rows per wall-clock second."""
        return self.rows_seen / self.seconds if self.seconds > 0 else float("nan")


def poisson_batch(n_rows: int, sample_rate: float, rng: np.random.Generator) -> np.ndarray:
    """Indices of a Poisson-sampled batch: each row kept with probability ``sample_rate``."""
    return np.flatnonzero(rng.random(n_rows) < sample_rate)


def linear_schedule(steps: int, warmup_steps: int) -> Callable[[int], float]:
    """Learning-rate multiplier: linear warm-up to 1, then linear decay to 0.

    Parameters
    ----------
    steps : int
        Total number of steps.
    warmup_steps : int
        Warm-up length (clipped to ``steps - 1``).

    Returns
    -------
    callable
        ``step -> multiplier`` for :class:`torch.optim.lr_scheduler.LambdaLR`.
    """
    warmup = min(max(int(warmup_steps), 0), steps - 1)

    def multiplier(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        return max(0.0, (steps - step) / (steps - warmup))

    return multiplier


def presentation_orders(n_rows: int, copies: int, layout: RowLayout, random_order: bool,
                        rng: np.random.Generator) -> np.ndarray:
    """Field orders of ``copies`` presentations of each row, shape (n_rows, copies, d)."""
    d = layout.n_columns
    if random_order:
        flat = random_orders(n_rows * copies, d, rng)
    else:
        flat = natural_orders(n_rows * copies, d)
    return flat.reshape(n_rows, copies, d)


def copies_log_likelihood(model: torch.nn.Module, layout: RowLayout, codes: np.ndarray,
                          orders: np.ndarray, device: torch.device) -> torch.Tensor:
    """Log-probability of every presentation of every row.

    Parameters
    ----------
    model : TabularTransformer (possibly wrapped by Opacus)
    layout : RowLayout
    codes : ndarray of shape (n_rows, n_columns)
    orders : ndarray of shape (n_rows, copies, n_columns)
        Field order of each presentation.
    device : torch.device

    Returns
    -------
    Tensor of shape (n_rows, copies)
        Sum over the columns of the column-masked log-softmax of the target.
    """
    tokens, positions, targets = layout.copies_inputs(codes, orders)
    logits = model(torch.as_tensor(tokens, device=device),
                   torch.as_tensor(positions, device=device))
    starts = [int(s) for s in layout.vocabulary.offsets]
    log_probs = column_log_softmax_gather(logits, torch.as_tensor(targets, device=device),
                                          starts)
    return log_probs.sum(dim=-1)


def row_log_likelihood(model: torch.nn.Module, layout: RowLayout, codes: np.ndarray,
                       orders: np.ndarray, device: torch.device) -> torch.Tensor:
    """Log-probability of each row presented in the given field order.

    Parameters
    ----------
    model : TabularTransformer
    layout : RowLayout
    codes : ndarray of shape (n_rows, n_columns)
    orders : ndarray of shape (n_rows, n_columns)
    device : torch.device

    Returns
    -------
    Tensor of shape (n_rows,)
    """
    orders = np.asarray(orders)
    return copies_log_likelihood(model, layout, codes, orders[:, None, :], device)[:, 0]


def train_transformer(model: torch.nn.Module, layout: RowLayout, codes: np.ndarray,
                      config: TrainingConfig, *, dp: DPSGDConfig | None,
                      rng: np.random.Generator, device: torch.device,
                      record_loss: bool = False,
                      progress: Callable[[int, int, float], None] | None = None
                      ) -> TrainingReport:
    """Train ``model`` in place on encoded rows.

    Parameters
    ----------
    model : TabularTransformer
        Trained in place; no Opacus hooks remain afterwards.
    layout : RowLayout
        How rows become token sequences.
    codes : ndarray of shape (n_rows, n_columns), int
        The (private) encoded rows.
    config : TrainingConfig
        Optimisation settings.
    dp : DPSGDConfig or None
        DP-SGD noise and clipping; ``None`` trains without privacy (tests,
        public pre-training and benchmarks only).
    rng : numpy.random.Generator
        Source of the batches, the field orders and the torch seeds (dropout
        and DP noise), so that runs are reproducible.
    device : torch.device
    record_loss : bool, default=False
        Keep the mean training NLL of every step in the report.  These are
        computed on private batches without noise: never release them from
        a private fit.
    progress : callable, optional
        ``progress(step, steps, loss)`` after every step (1-based ``step``;
        ``loss`` the batch's mean training NLL per row, ``nan`` for an empty
        batch).  The loss is computed without noise: for the operator's
        eyes, never for release.

    Returns
    -------
    TrainingReport
    """
    codes = np.asarray(codes, dtype=np.int64)
    return _run_training(
        model, config, dp, rng, device,
        plain=lambda: _train_plain(model, layout, codes, config, rng, device, record_loss,
                                   progress),
        private=lambda generator: _train_private(model, layout, codes, config, dp, rng,
                                                 device, generator, record_loss, progress))


def _run_training(model: torch.nn.Module, config: TrainingConfig, dp: DPSGDConfig | None,
                 rng: np.random.Generator, device: torch.device, *,
                 plain: Callable[[], TrainingReport],
                 private: Callable[[torch.Generator], TrainingReport]) -> TrainingReport:
    """The frame of a training run around its loop: seeds, device, warnings, timing.

    Draws the torch seed and the DP noise seed from ``rng``, forks torch's
    RNG state, moves ``model`` to ``device`` in training mode, then runs
    ``plain()`` (``dp`` is None) or ``private(noise_generator)``, and leaves
    the model in evaluation mode with the steps and times in the report.
    """
    seed_torch, seed_noise = (int(s) for s in rng.integers(0, 2**62, size=2))
    with torch.random.fork_rng(devices=_cuda_indices(device)), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Full backward hook is firing")
        torch.manual_seed(seed_torch)
        model.to(device).train()
        start, cpu_start = time.perf_counter(), time.process_time()
        if dp is None:
            report = plain()
        else:
            report = private(torch.Generator(device=device).manual_seed(seed_noise))
        model.eval()
    report.steps = config.steps
    report.seconds = time.perf_counter() - start
    report.cpu_seconds = time.process_time() - cpu_start
    return report


def _cuda_indices(device: torch.device) -> list:
    """CUDA device indices whose generator state is saved and restored around training."""
    if device.type != "cuda":
        return []
    return [device.index if device.index is not None else torch.cuda.current_device()]


def _adamw(model: torch.nn.Module, config: TrainingConfig, eps: float) -> torch.optim.AdamW:
    return torch.optim.AdamW(model.parameters(), lr=config.lr, eps=eps,
                             weight_decay=config.weight_decay)


def _scheduler(optimizer, config: TrainingConfig) -> torch.optim.lr_scheduler.LambdaLR:
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, linear_schedule(config.steps, config.warmup_steps))


def _row_losses(model, layout, codes, index, config, rng, device) -> torch.Tensor:
    """Per-row loss of a batch: minus the mean log-likelihood over its copies."""
    orders = presentation_orders(len(index), config.augmult, layout, config.random_order, rng)
    return -copies_log_likelihood(model, layout, codes[index], orders, device).mean(dim=1)


def _train_plain(model, layout, codes, config, rng, device, record_loss,
                 progress=None) -> TrainingReport:
    optimizer = _adamw(model, config, config.adam_eps)
    scheduler = _scheduler(optimizer, config)
    report = TrainingReport()
    for step in range(config.steps):
        index = poisson_batch(len(codes), config.sample_rate, rng)
        optimizer.zero_grad(set_to_none=True)
        loss = float("nan")
        if len(index):
            losses = _row_losses(model, layout, codes, index, config, rng, device)
            (losses.sum() / config.expected_batch_size).backward()
            optimizer.step()
            loss = float(losses.detach().mean()) if record_loss or progress else loss
            if record_loss:
                report.losses.append(loss)
        scheduler.step()
        report.rows_seen += len(index)
        if progress is not None:
            progress(step + 1, config.steps, loss)
    model.zero_grad(set_to_none=True)
    return report


def _wrap(model, config: TrainingConfig, dp: DPSGDConfig, generator):
    """Opacus module and optimizer for the chosen mode."""
    adam = _adamw(model, config, config.adam_eps * dp.max_grad_norm)
    common = dict(noise_multiplier=dp.noise_multiplier, max_grad_norm=dp.max_grad_norm,
                  expected_batch_size=config.expected_batch_size, loss_reduction="mean",
                  generator=generator, secure_mode=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*full_backward_hook.*")
        if dp.grad_sample_mode == "ghost":
            wrapped = GradSampleModuleFastGradientClipping(
                model, batch_first=True, loss_reduction="sum", strict=True,
                max_grad_norm=dp.max_grad_norm, use_ghost_clipping=True)
            return wrapped, DPOptimizerFastGradientClipping(adam, **common)
        wrapped = GradSampleModule(model, batch_first=True, loss_reduction="sum", strict=True)
        return wrapped, DPOptimizer(adam, **common)


def _chunk_rows(model, layout: RowLayout, config: TrainingConfig, dp: DPSGDConfig) -> int:
    """Rows per forward/backward pass, so that one pass holds ~_FLOATS_PER_CHUNK floats."""
    if dp.grad_sample_mode == "hooks":
        per_row = sum(p.numel() for p in model.parameters())
    else:
        width = model.final_norm.normalized_shape[0]
        per_row = 20 * config.augmult * layout.seq_len * width * max(len(model.blocks), 1)
    return max(_FLOATS_PER_CHUNK // per_row, 1)


class _EmbeddingOutputs:
    """Forward hooks keeping the embeddings' outputs of the current pass."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.tensors: list = []
        self.handles = [layer.register_forward_hook(self._keep)
                        for layer in (model.token_embedding, model.position_embedding)]

    def _keep(self, module, inputs, output) -> None:
        if torch.is_grad_enabled():
            self.tensors.append(output)

    def pop(self) -> list:
        """The outputs kept since the last call."""
        tensors, self.tensors = self.tensors, []
        return tensors

    def remove(self) -> None:
        """Remove the hooks."""
        for handle in self.handles:
            handle.remove()


def _train_private(model, layout, codes, config, dp, rng, device, generator,
                   record_loss, progress=None) -> TrainingReport:
    wrapped, optimizer = _wrap(model, config, dp, generator)
    scheduler = _scheduler(optimizer, config)
    chunk_rows = _chunk_rows(model, layout, config, dp)
    embedded = _EmbeddingOutputs(model)
    report = TrainingReport()
    try:
        for step in range(config.steps):
            index = poisson_batch(len(codes), config.sample_rate, rng)
            total = _private_step(wrapped, optimizer, layout, codes, index, config, dp, rng,
                                  device, chunk_rows, embedded)
            scheduler.step()
            report.rows_seen += len(index)
            if record_loss and len(index):
                report.losses.append(total / len(index))
            if progress is not None:
                progress(step + 1, config.steps,
                         total / len(index) if len(index) else float("nan"))
    finally:
        embedded.remove()
        wrapped.cleanup()
        _strip_opacus_state(model)
    return report


#: Attributes Opacus leaves on parameters and layers.
_OPACUS_PARAMETER_ATTRIBUTES = ("grad_sample", "summed_grad", "_forward_counter",
                                "_current_grad_sample", "_norm_sample", "_processed")
_OPACUS_MODULE_ATTRIBUTES = ("activations", "max_batch_len")


def _strip_opacus_state(model: torch.nn.Module) -> None:
    """Remove what DP training attached to the model (per-sample state, saved inputs)."""
    for parameter in model.parameters():
        parameter.grad = None
        for name in _OPACUS_PARAMETER_ATTRIBUTES:
            if hasattr(parameter, name):
                delattr(parameter, name)
    for module in model.modules():
        for name in _OPACUS_MODULE_ATTRIBUTES:
            if name in vars(module):
                delattr(module, name)


def _private_step(wrapped, optimizer, layout, codes, index, config, dp, rng, device,
                  chunk_rows, embedded) -> float:
    """One DP-SGD step over a Poisson batch, in physical chunks; returns the loss sum."""
    bounds = list(range(0, len(index), chunk_rows)) or [0]
    total = 0.0
    for i, lo in enumerate(bounds):
        part = index[lo:lo + chunk_rows]
        if len(part):
            losses = _row_losses(wrapped, layout, codes, part, config, rng, device)
            _clipped_backward(wrapped, optimizer, losses, dp.grad_sample_mode, embedded.pop())
            total += float(losses.detach().sum())
        else:
            _empty_batch(optimizer, dp.grad_sample_mode)
        optimizer.signal_skip_step(do_skip=i < len(bounds) - 1)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return total


def _clipped_backward(wrapped, optimizer, losses: torch.Tensor, mode: str,
                      embedded: list) -> None:
    """Backward pass(es) leaving what the mode's DP optimizer clips and noises."""
    if mode == "hooks":
        losses.sum().backward()
        return
    torch.autograd.backward(losses.sum(), inputs=embedded, retain_graph=True)
    factors = wrapped.get_clipping_coef().detach()
    for p in optimizer.params:
        p.grad = None
    wrapped.disable_hooks()
    try:
        (factors * losses).sum().backward()
    finally:
        wrapped.enable_hooks()


def _empty_batch(optimizer, mode: str) -> None:
    """An empty Poisson batch contributes nothing (the noise is still added)."""
    for p in optimizer.params:
        if mode == "hooks":
            p.grad_sample = p.new_zeros((0, *p.shape))
        else:
            p.grad = torch.zeros_like(p)
