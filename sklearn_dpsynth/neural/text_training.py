"""Training loop of the text language model, with a per-token weighted loss.

The per-row loss of DP-2Stage (Afonja et al.) weights the next-token
negative log-likelihoods by token type:

``loss(row) = lambda * sum_{value tokens} nll + (1 - lambda) * sum_{key and
template tokens} nll``

(:func:`token_weights`; ``lambda=None`` is the plain unweighted sum).
:class:`TextRowLoss` plugs it into
:func:`~sklearn_dpsynth.neural.dpsgd.train_dpsgd`, the loop the tabular
models train with too (Opacus, ghost clipping or per-sample hooks, Poisson
batches, empty batches, clean-up, the ledger entry): under DP-SGD each
row's gradient of its loss is clipped, so the row is the unit of privacy
exactly as for the tabular models.  The non-private path (``dp=None``) is
stage 1 (template learning on public pseudo data) and public pre-training.

Importing this module imports torch and opacus.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from .dpsgd import DPSGDConfig, PrivacyRecord, TrainingConfig, TrainingReport, train_dpsgd
from .text import KEY, OTHER_TOKEN, VALUE

__all__ = ["TextRowLoss", "row_losses", "token_weights", "train_text_model"]


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


class TextRowLoss:
    """Per-row weighted next-token NLL of the text model (:func:`row_losses`).

    Parameters
    ----------
    tokens : ndarray of shape (n_rows, length), int
        Padded rows (``<bos>`` first).
    lengths : ndarray of shape (n_rows,), int
    weights : ndarray of shape (n_rows, length - 1)
        Loss weight of every predicted token (:func:`token_weights`).
    batch_rows : callable, optional
        ``batch_rows(index)`` returns ``(tokens, lengths, weights)`` of the
        rows ``index`` written afresh; by default the rows of the arrays.
    """

    def __init__(self, tokens: np.ndarray, lengths: np.ndarray, weights: np.ndarray,
                 batch_rows: Callable[[np.ndarray], tuple] | None = None) -> None:
        self.tokens = np.asarray(tokens, np.int64)
        self.lengths = np.asarray(lengths, np.int64)
        self.weights = np.asarray(weights, np.float32)
        self.batch_rows = batch_rows
        self.n_rows = len(self.tokens)

    def __call__(self, model: torch.nn.Module, index: np.ndarray,
                 device: torch.device) -> torch.Tensor:
        """Loss of each row ``index``, shape ``(len(index),)``."""
        return row_losses(model, *self._batch(index, device))

    def _batch(self, index: np.ndarray, device: torch.device
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """A batch's tokens and weights, trimmed to its longest row."""
        if self.batch_rows is None:
            tokens, lengths = self.tokens[index], self.lengths[index]
            weights = self.weights[index]
        else:
            tokens, lengths, weights = self.batch_rows(index)
        width = int(lengths.max())
        return (torch.as_tensor(np.asarray(tokens[:, :width], np.int64), device=device),
                torch.as_tensor(np.asarray(weights[:, :width - 1], np.float32), device=device))

    def activation_floats(self, model: torch.nn.Module) -> int:
        """Floats one row (at full length) holds during a ghost-clipping pass."""
        width = model.final_norm.normalized_shape[0]
        return self.tokens.shape[1] * (20 * width * max(len(model.blocks), 1)
                                       + 3 * model.head.out_features)


def train_text_model(model: torch.nn.Module, tokens: np.ndarray, lengths: np.ndarray,
                     weights: np.ndarray, config: TrainingConfig, *,
                     dp: DPSGDConfig | None, rng: np.random.Generator,
                     device: torch.device,
                     record: PrivacyRecord | None = None,
                     progress: Callable[[int, int, float], None] | None = None,
                     batch_rows: Callable[[np.ndarray], tuple] | None = None
                     ) -> TrainingReport:
    """Train ``model`` in place on token rows, with DP-SGD or without.

    The run is ``sklearn_dpsynth.neural.dpsgd.train_dpsgd``, the loop of
    every neural model, with the loss ``TextRowLoss``.

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
    record : PrivacyRecord, optional
        Where the DP-SGD run is recorded (the ledger, the Renyi orders and
        the target) before it starts; None leaves the accounting to the
        caller.
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
    loss = TextRowLoss(tokens, lengths, weights, batch_rows)
    return train_dpsgd(model, loss, config, dp=dp, rng=rng, device=device, record=record,
                       progress=progress)
