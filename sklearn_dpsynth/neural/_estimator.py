"""What DP-TBART and SynLM share: a DP-SGD-trained transformer behind the estimator API.

:class:`TransformerSynthesizer` implements the
:class:`~sklearn_dpsynth.BaseSynthesizer` hooks; a subclass only says how a
row becomes a token sequence (its layout), which field orders it trains on
and which conditions it can honour.  torch and opacus are imported inside
the methods that need them, so this module imports without them.
"""

from __future__ import annotations

import contextlib
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._base import BaseSynthesizer, PublicDataSynthesizer
from .._progress import Progress
from ..backends import EncodedTable
from ..exceptions import PrivacyWarning
from ..privacy import PrivacyLedger
from ._optional import require_torch

__all__ = ["NEURAL_CONSTRAINTS", "PUBLIC_AUTO_BATCH", "EpochProgress", "PublicProgress",
           "TorchSynthesizer", "TransformerSynthesizer", "resolve_device", "torch_threads",
           "warn_private_loss"]

#: Expected batch of non-private training on public rows when ``batch_size="auto"``.
PUBLIC_AUTO_BATCH = 256

#: Hyperparameter constraints shared by the transformer synthesizers.
NEURAL_CONSTRAINTS: dict = {
    "d_model": [Interval(Integral, 1, None, closed="left")],
    "n_layers": [Interval(Integral, 1, None, closed="left")],
    "n_heads": [Interval(Integral, 1, None, closed="left")],
    "d_ff": [Interval(Integral, 1, None, closed="left"), None],
    "dropout": [Interval(Real, 0, 1, closed="left")],
    "epochs": [Interval(Real, 0, None, closed="neither")],
    "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
    "lr": [Interval(Real, 0, None, closed="neither")],
    "warmup_steps": [Interval(Integral, 0, None, closed="left")],
    "weight_decay": [Interval(Real, 0, None, closed="left")],
    "grad_sample_mode": [StrOptions({"auto", "ghost", "hooks"})],
    "device": [StrOptions({"cpu", "cuda", "auto"})],
    "n_threads": [Interval(Integral, 1, None, closed="left"), None],
}


def resolve_device(device: str):
    """The torch device for ``"cpu"``, ``"cuda"`` or ``"auto"`` (CUDA when available).

    Raises
    ------
    ValueError
        For ``"cuda"`` when no CUDA device is available.
    """
    torch = require_torch()
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but torch sees no CUDA device; "
                         "use device='cpu' or 'auto'.")
    return torch.device(device)


@contextlib.contextmanager
def torch_threads(n_threads: int | None):
    """Run with ``n_threads`` torch intra-op threads (None: leave as is), then restore."""
    torch = require_torch()
    previous = torch.get_num_threads()
    if n_threads is not None:
        torch.set_num_threads(int(n_threads))
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class TorchSynthesizer(BaseSynthesizer):
    """What the synthesizers trained with DP-SGD share, whatever their model.

    Parameter checks, the device and torch threads of inference, and the
    two private accesses of a fit: the noisy row count and the DP-SGD run
    planned from it (recorded in the ledger by the training loop,
    :func:`~sklearn_dpsynth.neural.dpsgd.train_dpsgd`, as it starts).
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("model_", "n_records_", "expected_batch_size_", "sample_rate_",
                         "steps_", "noise_multiplier_")

    def _persisted_module(self, name: str, seq_len: int, n_tensors: int, n_values: int):
        """An untrained ``model_`` of the saved shape, for :func:`~sklearn_dpsynth.load` to fill.

        Built from the hyperparameters and the fitted layout; ``n_tensors``
        and ``n_values`` (what the file holds) bound the hyperparameters
        first, so that a damaged file cannot ask for a huge model.
        """
        self._check_saved_size(n_tensors, n_values, seq_len)
        return self._build_model(0)

    def _check_saved_size(self, n_tensors: int, n_values: int, seq_len: int) -> None:
        sizes = {"d_model": self.d_model, "n_layers": self.n_layers, "n_heads": self.n_heads,
                 "d_ff": self.d_ff if self.d_ff is not None else 1, "seq_len": seq_len}
        if not all(isinstance(v, Integral) and not isinstance(v, bool) and 0 < v <= n_values
                   for v in sizes.values()) or self.n_layers > n_tensors:
            raise ValueError("the saved hyperparameters do not match the saved tensors")

    def _validate_params(self) -> None:
        """Check the hyperparameters, torch and the device before any data is touched."""
        super()._validate_params()
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads "
                             f"({self.n_heads}).")
        require_torch()
        resolve_device(self.device)

    def _plan_private_run(self, n_rows: int, ledger: PrivacyLedger,
                          rng: np.random.Generator):
        """Release the row count (``n_records_``) and plan the DP-SGD run from it."""
        from ..privacy import noisy_row_count
        from .calibration import COUNT_BUDGET_SHARE, plan_dpsgd, suggest_batch_size

        count = noisy_row_count(ledger, n_rows, COUNT_BUDGET_SHARE * ledger.rho_remaining(), rng)
        self.n_records_ = max(count, 1.0)
        batch = self.batch_size
        if batch == "auto":
            batch = suggest_batch_size(ledger, self.n_records_, self.epochs)
        return plan_dpsgd(ledger, self.n_records_, self.epochs, batch)

    def _keep_private_run(self, plan) -> None:
        """Keep the planned DP-SGD run's public parameters as fitted attributes."""
        self.expected_batch_size_ = plan.expected_batch_size
        self.sample_rate_ = plan.sample_rate
        self.steps_ = plan.steps
        self.noise_multiplier_ = plan.noise_multiplier

    def _training_configs(self, plan, grad_sample_mode: str, ledger: PrivacyLedger,
                          target: str, **options):
        """The ``TrainingConfig``, ``DPSGDConfig`` and ``PrivacyRecord`` of the planned run.

        The record makes the training loop enter the run in ``ledger`` (the
        Poisson-subsampled Gaussian on the plan's Renyi orders) as it starts.
        """
        from .dpsgd import DPSGDConfig, PrivacyRecord, TrainingConfig

        config = TrainingConfig(
            steps=plan.steps, sample_rate=plan.sample_rate,
            expected_batch_size=plan.expected_batch_size, lr=self.lr,
            warmup_steps=min(self.warmup_steps, max(plan.steps // 10, 1)),
            weight_decay=float(self.weight_decay), **options)
        dp = DPSGDConfig(noise_multiplier=plan.noise_multiplier,
                         max_grad_norm=self.max_grad_norm, grad_sample_mode=grad_sample_mode)
        return config, dp, PrivacyRecord(ledger, plan.orders, target)

    @contextlib.contextmanager
    def _model_on_device(self):
        """The fitted model on the inference device (kept on the CPU in between)."""
        device = resolve_device(self.device)
        try:
            with torch_threads(self.n_threads):
                yield self.model_.to(device).eval(), device
        finally:
            self.model_.to("cpu")

    def _estimated_n_records(self) -> float:
        return self.n_records_


class TransformerSynthesizer(TorchSynthesizer, PublicDataSynthesizer):
    """Base of the synthesizers that train a transformer on rows with DP-SGD.

    Fitting (see :mod:`sklearn_dpsynth.neural.calibration` for the privacy
    argument) reads the private table in memory (``table.to_numpy()``):
    release the row count with a small share of the budget, fix
    the expected batch, the sampling rate and the number of steps from it,
    calibrate the noise multiplier so that the DP-SGD run spends exactly the
    rest, record the run in the ledger, then train (Opacus, Poisson
    sampling, per-sample clipping, AdamW with linear warm-up and decay).
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("layout_",)

    _parameter_constraints: dict = {**BaseSynthesizer._parameter_constraints,
                                    **NEURAL_CONSTRAINTS,
                                    "pretrain_epochs": [Interval(Real, 0, None, closed="left")],
                                    "pretrain_lr": [Interval(Real, 0, None, closed="neither")],
                                    "verbose": ["verbose"]}

    # ----------------------------------------------------------- subclass API
    def _make_layout(self, sizes):
        """The :class:`~sklearn_dpsynth.neural.layout.RowLayout` of the method."""
        raise NotImplementedError

    def _training_options(self) -> dict:
        """``augmult`` and ``random_order`` of the training loop."""
        return {"augmult": 1, "random_order": False}

    def _sampling_order(self, conditions: dict[int, int]) -> np.ndarray:
        """Field order used to sample under ``conditions``: the natural one.

        Raises
        ------
        ValueError
            If the conditioned columns are not a prefix of the column order.
        """
        d = len(self.domain_.sizes)
        if conditions and sorted(conditions) != list(range(len(conditions))):
            columns = list(self.domain_.columns)
            raise ValueError(
                f"conditions: {type(self).__name__} generates the columns in their fixed "
                f"order {columns}, so it can only condition on a prefix of that order; got "
                f"{[columns[c] for c in sorted(conditions)]}. "
                "SynLMSynthesizer(field_order='random') conditions on any subset.")
        return np.arange(d)

    # ------------------------------------------------------------------- fit
    def _fit_encoded(self, table: EncodedTable, ledger: PrivacyLedger,
                     rng: np.random.Generator, public: EncodedTable | None) -> None:
        if public is not None and not self.pretrain_epochs > 0:
            raise ValueError(f"public_data: {type(self).__name__} uses a public table only for "
                             "non-private pre-training; set pretrain_epochs > 0 to use it.")
        device = resolve_device(self.device)
        self.layout_ = self._make_layout(self.domain_.sizes)
        plan = self._plan_private_run(table.n_rows, ledger, rng)
        progress = EpochProgress.create(self, ledger, plan)
        self._keep_private_run(plan)
        self.model_ = self._build_model(int(rng.integers(0, 2**62)))
        if public is not None:
            self._pretrain(public.to_numpy(), rng, device)
        self._train(table.to_numpy(), plan, ledger, rng, device, progress)

    def _pretrain(self, public: np.ndarray, rng: np.random.Generator, device) -> None:
        """Non-private pre-training on public codes (no ledger entry: no private data)."""
        from .pretraining import pretrain_transformer

        options = self._training_options()
        batch = PUBLIC_AUTO_BATCH if self.batch_size == "auto" else self.batch_size
        try:
            with torch_threads(self.n_threads):
                pretrain_transformer(self.model_, self.layout_, public,
                                     epochs=self.pretrain_epochs, batch_size=batch,
                                     lr=self.pretrain_lr, warmup_steps=self.warmup_steps,
                                     rng=rng, device=device, augmult=options["augmult"],
                                     random_order=options["random_order"],
                                     weight_decay=float(self.weight_decay),
                                     progress=PublicProgress.create(
                                         self, f"{type(self).__name__} pre-training"))
        finally:
            self.model_.to("cpu")

    def _build_model(self, seed: int):
        torch = require_torch()
        from .transformer import TabularTransformer

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            vocabulary = self.layout_.vocabulary
            return TabularTransformer(
                vocabulary.n_tokens, self.layout_.seq_len, self.domain_.sizes,
                d_model=self.d_model, n_layers=self.n_layers, n_heads=self.n_heads,
                d_ff=self.d_ff, dropout=self.dropout)

    def _train(self, codes: np.ndarray, plan, ledger: PrivacyLedger, rng: np.random.Generator,
               device, progress=None) -> None:
        """The DP-SGD run on the private codes (entered in ``ledger`` as it starts)."""
        from .training import train_transformer

        options = self._training_options()
        config, dp, record = self._training_configs(
            plan, self._grad_sample_mode(options["augmult"]), ledger, "transformer weights",
            **options)
        try:
            with torch_threads(self.n_threads):
                train_transformer(self.model_, self.layout_, codes, config, dp=dp, rng=rng,
                                  device=device, record=record, progress=progress)
        finally:
            self.model_.to("cpu").eval()

    def _grad_sample_mode(self, augmult: int) -> str:
        """``"auto"``: ghost clipping for single presentations, hooks with AugMult.

        Measured on Adult (CPU): ghost clipping is ~1.5x faster than
        materialised per-sample gradients for one presentation per row, but
        its per-sample norms cost ``(copies * length)^2`` per layer, and with
        two or more copies the hooks mode is faster.
        """
        if self.grad_sample_mode != "auto":
            return self.grad_sample_mode
        return "ghost" if augmult == 1 else "hooks"

    # ------------------------------------------------------ sample and score
    def _sample_encoded(self, n_samples: int, rng: np.random.Generator,
                        conditions: dict[int, int] | None) -> np.ndarray:
        from .sampling import sample_codes

        conditions = conditions or {}
        order = self._sampling_order(conditions)
        with self._model_on_device() as (model, device):
            return sample_codes(model, self.layout_, n_samples, rng, orders=order,
                                conditions=conditions, device=device)

    def _log_likelihood_encoded(self, codes: np.ndarray) -> np.ndarray:
        from .scoring import log_likelihood_codes

        order = np.arange(len(self.domain_.sizes))
        with self._model_on_device() as (model, device):
            return log_likelihood_codes(model, self.layout_, codes, order, device)



class EpochProgress:
    """Per-epoch lines on stderr: step and epsilon spent so far (and, loudly, the loss).

    ``verbose=1`` prints only public quantities: the epoch, the step and the
    epsilon spent so far (functions of the public plan).  ``verbose >= 2``
    adds the mean training loss of the epoch's batches, which is computed on
    the private rows *without noise*: it raises a
    :class:`~sklearn_dpsynth.exceptions.PrivacyWarning` once per fit.
    """

    def __init__(self, name: str, ledger: PrivacyLedger, plan, epochs: float,
                 show_loss: bool = False) -> None:
        from ..privacy import dpsgd_rdp

        # the ledger before the DP-SGD entry: "spent so far" adds the steps done
        root = getattr(ledger, "root", ledger)
        self.before = PrivacyLedger(root.epsilon, root.delta)
        self.before.entries = list(root.entries)
        self.name, self.plan, self.rdp = name, plan, dpsgd_rdp
        self.show_loss = show_loss
        # the step ending each (last possibly partial) epoch
        n_epochs = max(int(np.ceil(epochs - 1e-9)), 1)
        ends = [min(int(round(k * plan.steps / epochs)), plan.steps)
                for k in range(1, n_epochs + 1)]
        self.epoch_of_step = {end: k for k, end in enumerate(ends, start=1)}
        self.epoch_of_step[plan.steps] = n_epochs
        self.n_epochs = n_epochs
        self.losses: list[float] = []
        self.reporter = Progress(True, name)

    @classmethod
    def create(cls, estimator, ledger: PrivacyLedger, plan, name: str | None = None
               ) -> "EpochProgress | None":
        """A progress callback when ``estimator.verbose``, else None.

        With ``verbose >= 2`` it warns (:class:`PrivacyWarning`) that the
        printed loss is an un-noised statistic of the private rows.
        """
        if not estimator.verbose:
            return None
        show_loss = int(estimator.verbose) >= 2
        if show_loss:
            warn_private_loss(type(estimator).__name__)
        return cls(name or type(estimator).__name__, ledger, plan, float(estimator.epochs),
                   show_loss=show_loss)

    def epsilon_after(self, steps: int) -> float:
        """Epsilon of the entries before training plus ``steps`` DP-SGD steps."""
        orders = np.asarray(self.plan.orders, dtype=float)
        curve = self.rdp(self.plan.sample_rate, self.plan.noise_multiplier, steps, orders)
        return self.before.epsilon_if(rdp=(orders, curve))

    def __call__(self, step: int, steps: int, loss: float) -> None:
        if self.show_loss and np.isfinite(loss):
            self.losses.append(loss)
        epoch = self.epoch_of_step.get(step)
        if epoch is None:
            return
        line = f"epoch {epoch}/{self.n_epochs} (step {step}/{steps}): "
        if self.show_loss:
            mean = float(np.mean(self.losses)) if self.losses else float("nan")
            self.losses = []
            line += f"training loss {mean:.4f} nats/row (private, not noised), "
        line += f"epsilon spent so far {self.epsilon_after(step):.4g}"
        self.reporter.line(line)


class PublicProgress:
    """About ten lines on stderr over a non-private run on public rows, with its loss.

    The rows are public (a public table, DP-2Stage's pseudo rows), so the
    mean training loss since the previous line is printed at any
    ``verbose`` level.
    """

    def __init__(self, name: str, rows: str = "public rows") -> None:
        self.rows = rows
        self.losses: list[float] = []
        self.reporter = Progress(True, name)

    @classmethod
    def create(cls, estimator, name: str, rows: str = "public rows"
               ) -> "PublicProgress | None":
        """A progress callback when ``estimator.verbose``, else None."""
        return cls(name, rows) if estimator.verbose else None

    def __call__(self, step: int, steps: int, loss: float) -> None:
        if np.isfinite(loss):
            self.losses.append(loss)
        if step == steps or step % max(steps // 10, 1) == 0:
            mean = float(np.mean(self.losses)) if self.losses else float("nan")
            self.losses = []
            self.reporter.line(f"step {step}/{steps}: training loss {mean:.4f} nats/row "
                               f"({self.rows})")


def warn_private_loss(name: str) -> None:
    """Warn that ``verbose >= 2`` prints an un-noised statistic of the private rows."""
    warnings.warn(
        f"{name}(verbose>=2) prints the training loss of the private batches, computed "
        "on the private rows without noise: it is not covered by the DP guarantee, so the "
        "log must stay private. Use verbose=1 for epsilon and steps only.",
        PrivacyWarning, stacklevel=4)
