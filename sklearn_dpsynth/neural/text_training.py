"""Training loop of the text language model, with a per-token weighted loss.

The per-row loss of DP-2Stage (Afonja et al.) weights the next-token
negative log-likelihoods by token type:

``loss(row) = lambda * sum_{value tokens} nll + (1 - lambda) * sum_{key and
template tokens} nll``

(:func:`token_weights`; ``lambda=None`` is the plain unweighted sum).  Under
DP-SGD each row's gradient of that loss is clipped, so the row is the unit
of privacy exactly as in :mod:`~sklearn_dpsynth.neural.training`, whose
Opacus machinery (ghost clipping or per-sample hooks, Poisson batches,
empty-batch handling, clean-up) this loop reuses; the privacy cost is
computed and recorded by the estimator, not here.  The non-private path
(``dp=None``) is stage 1 (template learning on public pseudo data) and
public pre-training.

Importing this module imports torch and opacus.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from .text import KEY, OTHER_TOKEN, VALUE
from .training import (
    _FLOATS_PER_CHUNK,
    DPSGDConfig,
    TrainingConfig,
    TrainingReport,
    _adamw,
    _clipped_backward,
    _empty_batch,
    _EmbeddingOutputs,
    _run_training,
    _scheduler,
    _strip_opacus_state,
    _wrap,
    poisson_batch,
)

__all__ = ["row_losses", "token_weights", "train_text_model"]


def token_weights(types: np.ndarray, lengths: np.ndarray,
                  value_weight: float | None) -> np.ndarray:
    """Loss weight of every predicted token.

    Parameters
    ----------
    types : ndarray of shape (n_rows, length), int
        Token types (``sklearn_dpsynth.neural.text.KEY``,
        ``sklearn_dpsynth.neural.text.VALUE``, or
        ``sklearn_dpsynth.neural.text.OTHER_TOKEN``).
    lengths : ndarray of shape (n_rows,), int
    value_weight : float in [0, 1] or None
        ``lambda``: value tokens get ``lambda``, key and template tokens
        ``1 - lambda``; None gives every token weight 1.

    Returns
    -------
    weights : ndarray of shape (n_rows, length - 1), float32
        ``weights[r, t]`` for predicting token ``t + 1``; 0 past the end.
    """
    predicted = np.asarray(types)[:, 1:]
    inside = np.arange(predicted.shape[1])[None, :] + 1 < np.asarray(lengths)[:, None]
    if value_weight is None:
        weights = np.ones(predicted.shape)
    else:
        weights = np.where(predicted == VALUE, value_weight, 1.0 - value_weight)
        weights = np.where(np.isin(predicted, (KEY, OTHER_TOKEN, VALUE)), weights, 0.0)
    return np.where(inside, weights, 0.0).astype(np.float32)


def row_losses(model: torch.nn.Module, tokens: torch.Tensor,
               weights: torch.Tensor) -> torch.Tensor:
    """Weighted next-token NLL of every row.

    Parameters
    ----------
    model : TextTransformer (possibly wrapped by Opacus)
    tokens : LongTensor of shape (n_rows, length)
    weights : Tensor of shape (n_rows, length - 1)

    Returns
    -------
    Tensor of shape (n_rows,)
    """
    logits = model(tokens[:, :-1])
    nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), tokens[:, 1:],
                                            reduction="none")
    return (nll * weights).sum(dim=1)


def train_text_model(model: torch.nn.Module, tokens: np.ndarray, lengths: np.ndarray,
                     weights: np.ndarray, config: TrainingConfig, *,
                     dp: DPSGDConfig | None, rng: np.random.Generator,
                     device: torch.device,
                     progress: Callable[[int, int, float], None] | None = None,
                     batch_rows: Callable[[np.ndarray], tuple] | None = None
                     ) -> TrainingReport:
    """Train ``model`` in place on token rows.

    Parameters
    ----------
    model : TextTransformer
        Trained in place; no Opacus state remains afterwards.
    tokens : ndarray of shape (n_rows, length), int
        Padded rows (``<bos>`` first).
    lengths : ndarray of shape (n_rows,), int
    weights : ndarray of shape (n_rows, length - 1)
        Loss weight of every predicted token (:func:`token_weights`).
    config : TrainingConfig
        ``augmult`` and ``random_order`` are not used.
    dp : DPSGDConfig or None
        DP-SGD noise and clipping; None trains without privacy (public data
        only).
    rng : numpy.random.Generator
        Batches and torch seeds (dropout, DP noise).
    device : torch.device
    progress : callable, optional
        Called as ``progress(step, steps, loss)`` after every step, ``loss``
        the mean weighted loss of the step's rows (NaN for an empty batch;
        under DP an un-noised statistic of the private rows).
    batch_rows : callable, optional
        ``batch_rows(index)`` returns ``(tokens, lengths, weights)`` of the
        rows ``index`` written afresh (e.g. in a new random field order at
        every iteration); by default the rows of the given arrays.

    Returns
    -------
    TrainingReport
    """
    data = (np.asarray(tokens, np.int64), np.asarray(lengths, np.int64),
            np.asarray(weights, np.float32), batch_rows)
    return _run_training(
        model, config, dp, rng, device,
        plain=lambda: _train_plain(model, data, config, rng, device, progress),
        private=lambda generator: _train_private(model, data, config, dp, rng, device,
                                                 generator, progress))


def _batch(data, index, device) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch's tokens and weights, trimmed to its longest row."""
    tokens, lengths, weights, batch_rows = data
    if batch_rows is None:
        tokens, lengths, weights = tokens[index], lengths[index], weights[index]
    else:
        tokens, lengths, weights = batch_rows(index)
    width = int(lengths.max())
    return (torch.as_tensor(np.asarray(tokens[:, :width], np.int64), device=device),
            torch.as_tensor(np.asarray(weights[:, :width - 1], np.float32), device=device))


def _train_plain(model, data, config, rng, device, progress) -> TrainingReport:
    optimizer = _adamw(model, config, config.adam_eps)
    scheduler = _scheduler(optimizer, config)
    report = TrainingReport()
    n_rows = len(data[0])
    for step in range(config.steps):
        index = poisson_batch(n_rows, config.sample_rate, rng)
        optimizer.zero_grad(set_to_none=True)
        loss = float("nan")
        if len(index):
            losses = row_losses(model, *_batch(data, index, device))
            (losses.sum() / config.expected_batch_size).backward()
            optimizer.step()
            loss = float(losses.detach().mean()) if progress is not None else loss
        scheduler.step()
        report.rows_seen += len(index)
        if progress is not None:
            progress(step + 1, config.steps, loss)
    model.zero_grad(set_to_none=True)
    return report


def _chunk_rows(model, length: int, dp: DPSGDConfig) -> int:
    """Rows per forward/backward pass, so that one pass holds ~_FLOATS_PER_CHUNK floats."""
    if dp.grad_sample_mode == "hooks":
        per_row = sum(p.numel() for p in model.parameters())
    else:
        width = model.final_norm.normalized_shape[0]
        per_row = length * (20 * width * max(len(model.blocks), 1)
                            + 3 * model.head.out_features)
    return max(_FLOATS_PER_CHUNK // per_row, 1)


def _train_private(model, data, config, dp, rng, device, generator,
                   progress) -> TrainingReport:
    wrapped, optimizer = _wrap(model, config, dp, generator)
    scheduler = _scheduler(optimizer, config)
    chunk_rows = _chunk_rows(model, data[0].shape[1], dp)
    embedded = _EmbeddingOutputs(model)
    report = TrainingReport()
    n_rows = len(data[0])
    try:
        for step in range(config.steps):
            index = poisson_batch(n_rows, config.sample_rate, rng)
            total = _private_step(wrapped, optimizer, data, index, dp, device, chunk_rows,
                                  embedded, want_loss=progress is not None)
            scheduler.step()
            report.rows_seen += len(index)
            if progress is not None:
                progress(step + 1, config.steps,
                         total / len(index) if len(index) else float("nan"))
    finally:
        embedded.remove()
        wrapped.cleanup()
        _strip_opacus_state(model)
    return report


def _private_step(wrapped, optimizer, data, index, dp, device, chunk_rows, embedded,
                  want_loss: bool = False) -> float:
    """One DP-SGD step over a Poisson batch, in physical chunks.

    Returns the summed row loss when ``want_loss`` (a device sync per chunk), else 0.
    """
    total = 0.0
    bounds = list(range(0, len(index), chunk_rows)) or [0]
    for i, lo in enumerate(bounds):
        part = index[lo:lo + chunk_rows]
        if len(part):
            losses = row_losses(wrapped, *_batch(data, part, device))
            if want_loss:
                total += float(losses.detach().sum())
            _clipped_backward(wrapped, optimizer, losses, dp.grad_sample_mode, embedded.pop())
        else:
            _empty_batch(optimizer, dp.grad_sample_mode)
        optimizer.signal_skip_step(do_skip=i < len(bounds) - 1)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return total
