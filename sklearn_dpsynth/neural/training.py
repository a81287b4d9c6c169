"""The tabular transformer's loss for the DP-SGD loop, and its training entry point.

DP-TBART and SynLM train through :func:`~sklearn_dpsynth.neural.dpsgd.train_dpsgd`,
the one loop of the neural models (Opacus, Poisson sampling, the ledger
entry); this module plugs in their per-row loss, :class:`TabularRowLoss`:
minus the log-likelihood of the row's tokens under the column-masked
softmax of :mod:`~sklearn_dpsynth.neural.column_head`.

**AugMult** (De et al. 2022): each sampled row is presented ``augmult``
times (different random field orders when ``random_order``, different
dropout draws).  The copies are placed side by side in one input (the model
keeps them independent, see
:class:`~sklearn_dpsynth.neural.transformer.TabularTransformer`) and the
row's loss is their mean, so Opacus sees one sample per row whose gradient
is the average of the copies' gradients *before* clipping; the sampling
rate of the accountant stays the per-row one.

Importing this module imports torch and opacus.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from .column_head import column_log_softmax_gather
from .dpsgd import DPSGDConfig, PrivacyRecord, TrainingConfig, TrainingReport, train_dpsgd
from .layout import RowLayout, natural_orders, random_orders

__all__ = [
    "TabularRowLoss",
    "copies_log_likelihood",
    "presentation_orders",
    "row_log_likelihood",
    "train_transformer",
]


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


class TabularRowLoss:
    """Per-row loss of the tabular transformer: minus the mean log-likelihood of its copies.

    Parameters
    ----------
    layout : RowLayout
        How rows become token sequences.
    codes : ndarray of shape (n_rows, n_columns), int
        The encoded rows.
    augmult : int
        Presentations of each row (AugMult).
    random_order : bool
        Draw a random field order for every presentation.
    rng : numpy.random.Generator
        Source of the field orders (the training loop's generator, drawn
        after each batch).
    """

    def __init__(self, layout: RowLayout, codes: np.ndarray, *, augmult: int,
                 random_order: bool, rng: np.random.Generator) -> None:
        self.layout, self.codes = layout, np.asarray(codes, dtype=np.int64)
        self.augmult, self.random_order, self.rng = augmult, random_order, rng
        self.n_rows = len(self.codes)

    def __call__(self, model: torch.nn.Module, index: np.ndarray,
                 device: torch.device) -> torch.Tensor:
        """Loss of each row ``index``, shape ``(len(index),)``."""
        orders = presentation_orders(len(index), self.augmult, self.layout, self.random_order,
                                     self.rng)
        return -copies_log_likelihood(model, self.layout, self.codes[index], orders,
                                      device).mean(dim=1)

    def activation_floats(self, model: torch.nn.Module) -> int:
        """Floats one row holds during a ghost-clipping pass."""
        width = model.final_norm.normalized_shape[0]
        return 20 * self.augmult * self.layout.seq_len * width * max(len(model.blocks), 1)


def train_transformer(model: torch.nn.Module, layout: RowLayout, codes: np.ndarray,
                      config: TrainingConfig, *, dp: DPSGDConfig | None,
                      rng: np.random.Generator, device: torch.device,
                      record: PrivacyRecord | None = None, record_loss: bool = False,
                      progress: Callable[[int, int, float], None] | None = None
                      ) -> TrainingReport:
    """Train ``model`` in place on encoded rows, with DP-SGD or without.

    The run is :func:`~sklearn_dpsynth.neural.dpsgd.train_dpsgd` with the
    loss :class:`TabularRowLoss`.

    Parameters
    ----------
    model : TabularTransformer
        Trained in place; no Opacus hooks remain afterwards.
    layout : RowLayout
        How rows become token sequences.
    codes : ndarray of shape (n_rows, n_columns), int
        The (private) encoded rows.
    config : TrainingConfig
        Optimisation settings, ``augmult`` and ``random_order`` included.
    dp : DPSGDConfig or None
        DP-SGD noise and clipping; ``None`` trains without privacy (tests,
        public pre-training and benchmarks only).
    rng : numpy.random.Generator
        Source of the batches, the field orders and the torch seeds (dropout
        and DP noise), so that runs are reproducible.
    device : torch.device
    record : PrivacyRecord, optional
        Where the DP-SGD run is recorded (the ledger, the Renyi orders and
        the target) before it starts; None leaves the accounting to the
        caller.
    record_loss : bool, default=False
        Keep the mean training NLL of every step in the report.  These are
        computed on private batches without noise: never release them from
        a private fit.
    progress : callable, optional
        ``progress(step, steps, loss)`` after every step, ``loss`` the
        batch's mean training NLL per row (``nan`` for an empty batch),
        computed without noise: for the operator's eyes, never for release.

    Returns
    -------
    TrainingReport
    """
    loss = TabularRowLoss(layout, codes, augmult=config.augmult,
                          random_order=config.random_order, rng=rng)
    return train_dpsgd(model, loss, config, dp=dp, rng=rng, device=device, record=record,
                       record_loss=record_loss, progress=progress)
