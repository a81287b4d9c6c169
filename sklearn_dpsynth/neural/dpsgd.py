"""The one training loop of the neural models, with or without DP-SGD.

Every neural model (the tabular transformer of DP-TBART and SynLM, the text
language model of DP-2Stage) trains through :func:`train_dpsgd` and plugs
in only its per-row loss, a :class:`RowLoss`.  The loop owns everything
else: the seeds, Poisson sampling, the optimizer and its schedule, the
Opacus machinery, physical chunks, empty batches, clean-up, the progress
callback and, for a private run, the ledger entry.

The DP path is DP-SGD (Abadi et al. 2016) with Opacus: Poisson-sampled
batches (each row independently with probability ``sample_rate``),
per-sample gradients of the row's loss clipped to ``max_grad_norm``,
Gaussian noise of standard deviation ``noise_multiplier * max_grad_norm``
added to their sum, and division by the *expected* batch size.  The
optimizer runs in Opacus's ``secure_mode`` (each noise value the scaled sum
of four Gaussian draws, Holohan & Braghin 2021, against the floating-point
attack on one draw), with our seeded generator: ``torchcsprng`` is not
needed, since the optimizer is built directly, not through
``PrivacyEngine``.  The privacy cost of a run is that of ``steps``
compositions of the Poisson-subsampled Gaussian mechanism: given a
:class:`PrivacyRecord`, the loop records the run in its ledger
(:func:`~sklearn_dpsynth.privacy.spend_dpsgd`: a
:class:`~sklearn_dpsynth.privacy.SubsampledGaussian` release) before it
starts, and trains only when it fits; the Renyi curve is computed by
:mod:`sklearn_dpsynth.privacy.dpsgd`, not here.

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

The non-private path (``dp=None``) is for public data (pre-training,
DP-2Stage's stage 1), tests and throughput comparisons; it uses the same
sampler with plain gradients.  The public estimators always train their
private rows with DP.

Adam's ``eps`` is multiplied by ``max_grad_norm``: with (nearly) all
gradients clipped, the noisy gradient scales with ``max_grad_norm`` and this
keeps the optimizer's update invariant to that scale (DP-TBART observed that
small clipping norms otherwise stall Adam).

The model must have ``token_embedding`` and ``position_embedding`` layers
(the inputs of the ghost-clipping backward pass) and a per-sample gradient
rule for each of its layers (:mod:`~sklearn_dpsynth.neural.grad_rules`).

Importing this module imports torch and opacus.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
from opacus import GradSampleModule
from opacus.grad_sample import GradSampleModuleFastGradientClipping
from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping

from ..privacy import PrivacyLedger, spend_dpsgd

__all__ = [
    "DPSGDConfig",
    "GRAD_SAMPLE_MODES",
    "PrivacyRecord",
    "RowLoss",
    "TrainingConfig",
    "TrainingReport",
    "linear_schedule",
    "poisson_batch",
    "train_dpsgd",
]

#: Floats held at once by one physical batch (per-sample gradients or
#: activations); bounds the memory of a step.
FLOATS_PER_CHUNK = 2**26

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
        Presentations of each sampled row per step (used by the tabular
        loss, :class:`~sklearn_dpsynth.neural.training.TabularRowLoss`).
    random_order : bool
        Draw an independent random field order for every presentation
        (tabular loss only).
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


@dataclass(frozen=True)
class PrivacyRecord:
    """Where and how a private run is recorded: its ledger entry's other half.

    With the run's :class:`TrainingConfig` and :class:`DPSGDConfig` (the
    sampling rate, steps, noise multiplier and clipping norm) this makes
    the :class:`~sklearn_dpsynth.privacy.SubsampledGaussian` recorded by
    :func:`train_dpsgd`.

    Attributes
    ----------
    ledger : PrivacyLedger or LedgerShare
        The ledger of the fit.
    orders : sequence of float
        Renyi orders of the recorded curve (those of the calibration).
    target : str
        What the run releases (e.g. ``"transformer weights"``).
    """

    ledger: PrivacyLedger
    orders: Sequence[float]
    target: str


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
        Mean training loss per row of each non-empty step (only when recorded).
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


class RowLoss(Protocol):
    """What a model plugs into :func:`train_dpsgd`: the loss of each row.

    Attributes
    ----------
    n_rows : int
        Rows of the training table (the population of Poisson sampling).
    """

    n_rows: int

    def __call__(self, model: torch.nn.Module, index: np.ndarray,
                 device: torch.device) -> torch.Tensor:
        """Loss of each row ``index`` (shape ``(len(index),)``), differentiable.

        ``model`` may be wrapped by Opacus.  Under DP each row's gradient of
        its loss is clipped: the row is the unit of privacy, so a row's loss
        must depend on no other row.
        """

    def activation_floats(self, model: torch.nn.Module) -> int:
        """Floats one row holds during a ghost-clipping pass (sizes the chunks)."""


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


def train_dpsgd(model: torch.nn.Module, loss: RowLoss, config: TrainingConfig, *,
                dp: DPSGDConfig | None, rng: np.random.Generator, device: torch.device,
                record: PrivacyRecord | None = None, record_loss: bool = False,
                progress: Callable[[int, int, float], None] | None = None
                ) -> TrainingReport:
    """Train ``model`` in place on the rows of ``loss``, with DP-SGD or without.

    Parameters
    ----------
    model : torch.nn.Module
        Trained in place; no Opacus state remains afterwards, and it is
        left on ``device`` in evaluation mode.
    loss : RowLoss
        The model's per-row loss and the number of rows.
    config : TrainingConfig
        Optimisation settings.
    dp : DPSGDConfig or None
        DP-SGD noise and clipping; ``None`` trains without privacy (public
        rows, tests and benchmarks only).
    rng : numpy.random.Generator
        Source of the batches and the torch seeds (dropout and DP noise),
        so that runs are reproducible; ``loss`` may draw from it too.
    device : torch.device
    record : PrivacyRecord, optional
        Records the DP-SGD run in ``record.ledger`` before it starts (a
        :class:`~sklearn_dpsynth.privacy.SubsampledGaussian` release; raises
        :class:`~sklearn_dpsynth.exceptions.BudgetExceededError`, without
        training, when it does not fit).  Only with ``dp``; without it the
        caller accounts for the run.
    record_loss : bool, default=False
        Keep the mean training loss of every non-empty step in the report.
        Under DP these are computed on private batches without noise:
        never release them from a private fit.
    progress : callable, optional
        ``progress(step, steps, loss)`` after every step (1-based ``step``;
        ``loss`` the batch's mean training loss per row, ``nan`` for an
        empty batch).  The loss is computed without noise: for the
        operator's eyes, never for release.

    Returns
    -------
    TrainingReport
    """
    if record is not None and dp is None:
        raise ValueError("record: only a DP-SGD run (dp given) is recorded in a ledger.")
    run = _TrainingRun(model, loss, config, dp, rng, device, record_loss, progress)
    if record is None:
        return run.run()
    # recorded first: nothing trains (no private row is read) when it does not fit
    spend_dpsgd(record.ledger, sample_rate=config.sample_rate,
                noise_multiplier=dp.noise_multiplier, steps=config.steps,
                max_grad_norm=dp.max_grad_norm, orders=record.orders, target=record.target)
    return run.run()


class _TrainingRun:
    """One run of :func:`train_dpsgd`: its frame, plain loop and private loop."""

    def __init__(self, model, loss: RowLoss, config: TrainingConfig, dp: DPSGDConfig | None,
                 rng: np.random.Generator, device: torch.device, record_loss: bool,
                 progress: Callable[[int, int, float], None] | None) -> None:
        self.model, self.loss, self.config, self.dp = model, loss, config, dp
        self.rng, self.device = rng, device
        self.record_loss, self.progress = record_loss, progress
        # the loss of a step costs a device sync: computed only when it is used
        self.want_loss = record_loss or progress is not None
        self.report = TrainingReport()

    def run(self) -> TrainingReport:
        """Seeds, device, warnings and timing around the plain or private loop.

        Draws the torch seed and the DP noise seed from ``rng``, forks
        torch's RNG state, moves the model to the device in training mode,
        runs the loop, and leaves the model in evaluation mode.
        """
        seed_torch, seed_noise = (int(s) for s in self.rng.integers(0, 2**62, size=2))
        with torch.random.fork_rng(devices=_cuda_indices(self.device)), \
                warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            torch.manual_seed(seed_torch)
            self.model.to(self.device).train()
            start, cpu_start = time.perf_counter(), time.process_time()
            if self.dp is None:
                self._plain()
            else:
                self._private(torch.Generator(device=self.device).manual_seed(seed_noise))
            self.model.eval()
        self.report.steps = self.config.steps
        self.report.seconds = time.perf_counter() - start
        self.report.cpu_seconds = time.process_time() - cpu_start
        return self.report

    def _end_step(self, step: int, scheduler, n_sampled: int, loss: float) -> None:
        """After an optimizer step: schedule, counts, recorded loss, progress."""
        scheduler.step()
        self.report.rows_seen += n_sampled
        if self.record_loss and n_sampled:
            self.report.losses.append(loss)
        if self.progress is not None:
            self.progress(step + 1, self.config.steps, loss)

    def _plain(self) -> None:
        config = self.config
        optimizer = _adamw(self.model, config, config.adam_eps)
        scheduler = _scheduler(optimizer, config)
        for step in range(config.steps):
            index = poisson_batch(self.loss.n_rows, config.sample_rate, self.rng)
            optimizer.zero_grad(set_to_none=True)
            loss = float("nan")
            if len(index):
                losses = self.loss(self.model, index, self.device)
                (losses.sum() / config.expected_batch_size).backward()
                optimizer.step()
                loss = float(losses.detach().mean()) if self.want_loss else loss
            self._end_step(step, scheduler, len(index), loss)
        self.model.zero_grad(set_to_none=True)

    def _private(self, generator: torch.Generator) -> None:
        config, dp, model = self.config, self.dp, self.model
        wrapped, optimizer = _wrap(model, config, dp, generator)
        scheduler = _scheduler(optimizer, config)
        chunk_rows = self._chunk_rows()
        embedded = _EmbeddingOutputs(model)
        try:
            for step in range(config.steps):
                index = poisson_batch(self.loss.n_rows, config.sample_rate, self.rng)
                total = self._private_step(wrapped, optimizer, index, chunk_rows, embedded)
                loss = total / len(index) if len(index) else float("nan")
                self._end_step(step, scheduler, len(index), loss)
        finally:
            embedded.remove()
            wrapped.cleanup()
            _strip_opacus_state(model)

    def _chunk_rows(self) -> int:
        """Rows per forward/backward pass, so that one pass holds ~FLOATS_PER_CHUNK floats."""
        if self.dp.grad_sample_mode == "hooks":
            per_row = sum(p.numel() for p in self.model.parameters())
        else:
            per_row = self.loss.activation_floats(self.model)
        return max(FLOATS_PER_CHUNK // per_row, 1)

    def _private_step(self, wrapped, optimizer, index: np.ndarray, chunk_rows: int,
                      embedded: _EmbeddingOutputs) -> float:
        """One DP-SGD step over a Poisson batch, in physical chunks.

        Returns the summed row loss when the loss is wanted (a device sync
        per chunk), else 0.
        """
        mode = self.dp.grad_sample_mode
        total = 0.0
        bounds = list(range(0, len(index), chunk_rows)) or [0]
        for i, lo in enumerate(bounds):
            part = index[lo:lo + chunk_rows]
            if len(part):
                losses = self.loss(wrapped, part, self.device)
                if self.want_loss:
                    total += float(losses.detach().sum())
                _clipped_backward(wrapped, optimizer, losses, mode, embedded.pop())
            else:
                _empty_batch(optimizer, mode)
            optimizer.signal_skip_step(do_skip=i < len(bounds) - 1)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        return total


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


def _wrap(model, config: TrainingConfig, dp: DPSGDConfig, generator):
    """Opacus module and optimizer (``secure_mode``, seeded noise) for the chosen mode."""
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
