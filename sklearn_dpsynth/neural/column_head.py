"""The column-masked output head, computing only each column's own logits.

A full-vocabulary head followed by the column mask (logits outside the
predicted column's token range set to ``-inf``) is mathematically the same
model as multiplying the hidden state of the position that predicts column
``c`` by the head rows of column ``c``'s token range only.
:class:`ColumnHead` does the latter: the logits of every column are computed
once per row, at the position that predicts it, and returned side by side in
a ``(batch, copies, n_value_tokens)`` tensor whose slice ``[starts[c],
starts[c+1])`` is column ``c``'s distribution (up to normalisation).  This
saves a factor of the sequence length over the masked full head in the
forward pass and in the per-sample gradients (rules in
:mod:`sklearn_dpsynth.neural.grad_rules`).

*Copies*: a batch element may hold several presentations of the same row
(AugMult), concatenated along the sequence axis; ``positions`` then has
``copies * n_columns`` entries per element, copy after copy.

:class:`MaskedFullHead` is the plain alternative (kept for throughput
comparisons), and :meth:`ColumnHead.masked_logits` the reference
computation of the column mask on a full-vocabulary head.

Importing this module imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["ColumnHead", "MaskedFullHead", "column_log_softmax_gather", "gather_positions"]


def _starts(sizes: Sequence[int]) -> list[int]:
    starts = [0]
    for k in sizes:
        starts.append(starts[-1] + int(k))
    return starts


def gather_positions(hidden: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Hidden states at given positions: ``out[b, j] = hidden[b, positions[b, j]]``.

    Parameters
    ----------
    hidden : Tensor of shape (batch, length, d_model)
    positions : LongTensor of shape (batch, m)

    Returns
    -------
    Tensor of shape (batch, m, d_model)
    """
    index = positions.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])
    return hidden.gather(1, index)


class ColumnHead(nn.Module):
    """Output head producing each column's logits at its prediction position.

    Parameters
    ----------
    sizes : sequence of int
        Number of codes (level tokens) of each column.
    d_model : int
        Width of the hidden states.

    Attributes
    ----------
    weight : Parameter of shape (n_value_tokens, d_model)
    bias : Parameter of shape (n_value_tokens,)
    starts : list of int
        Column offsets in the value-token range (``n_columns + 1`` entries).
    """

    def __init__(self, sizes: Sequence[int], d_model: int) -> None:
        super().__init__()
        self.sizes = [int(k) for k in sizes]
        self.starts = _starts(self.sizes)
        self.weight = nn.Parameter(torch.zeros(self.starts[-1], d_model))
        self.bias = nn.Parameter(torch.zeros(self.starts[-1]))

    def column_of_token(self, device: torch.device) -> torch.Tensor:
        """Column index of every value token, as a tensor on ``device``."""
        sizes = torch.tensor(self.sizes, device=device)
        return torch.repeat_interleave(torch.arange(len(self.sizes), device=device), sizes)

    def selected(self, hidden: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Hidden states at the prediction positions, shape (batch, copies, n_columns, d)."""
        batch, width = hidden.shape[0], hidden.shape[-1]
        return gather_positions(hidden, positions).view(batch, -1, len(self.sizes), width)

    def forward(self, hidden: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Logits of every column, each computed at its prediction position.

        Parameters
        ----------
        hidden : Tensor of shape (batch, length, d_model)
        positions : LongTensor of shape (batch, copies * n_columns)
            ``positions[b, j * n_columns + c]``: the position whose hidden
            state predicts column ``c`` of copy ``j`` in element ``b``.

        Returns
        -------
        logits : Tensor of shape (batch, copies, n_value_tokens)
            Column ``c``'s logits in the slice ``[starts[c], starts[c+1])``.
        """
        selected = self.selected(hidden, positions)
        parts = [self.column_logits(selected[:, :, c], c) for c in range(len(self.sizes))]
        return torch.cat(parts, dim=-1)

    def column_logits(self, hidden: torch.Tensor, column: int) -> torch.Tensor:
        """Logits of one column from hidden states of shape (..., d_model)."""
        start, stop = self.starts[column], self.starts[column + 1]
        return hidden @ self.weight[start:stop].t() + self.bias[start:stop]

    def masked_logits(self, hidden: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Reference computation: full-vocabulary logits with the column mask.

        Parameters
        ----------
        hidden : Tensor of shape (batch, length, d_model)
        positions : LongTensor of shape (batch, n_columns)

        Returns
        -------
        logits : Tensor of shape (batch, n_columns, n_value_tokens)
            Row ``[b, c]`` holds the full head's logits at the position that
            predicts column ``c``, ``-inf`` outside column ``c``'s range.
        """
        full = gather_positions(hidden, positions) @ self.weight.t() + self.bias
        owner = self.column_of_token(hidden.device)
        columns = torch.arange(len(self.sizes), device=hidden.device)
        return full.masked_fill(owner[None, :] != columns[:, None], float("-inf"))


class MaskedFullHead(nn.Module):
    """The plain alternative: a full-vocabulary ``nn.Linear`` at every position.

    Same inputs, outputs and model as :class:`ColumnHead`, but the linear map
    is applied at all positions to all value tokens, and the column mask
    then keeps, for each column, the logits at its prediction position.
    Opacus computes its per-sample gradients with the generic ``nn.Linear``
    rules, at a cost proportional to ``length * n_value_tokens * d_model``
    per row.  Kept for throughput comparisons (``head="full"``).

    Parameters
    ----------
    sizes : sequence of int
        Number of codes of each column.
    d_model : int
        Width of the hidden states.
    """

    def __init__(self, sizes: Sequence[int], d_model: int) -> None:
        super().__init__()
        self.sizes = [int(k) for k in sizes]
        self.starts = _starts(self.sizes)
        self.proj = nn.Linear(d_model, self.starts[-1])

    def forward(self, hidden: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Column logits, as :meth:`ColumnHead.forward`."""
        full = self.proj(hidden)
        batch = positions.shape[0]
        per_column = positions.view(batch, -1, len(self.sizes))
        sizes = torch.tensor(self.sizes, device=hidden.device)
        per_token = torch.repeat_interleave(per_column, sizes, dim=2)
        return full.gather(1, per_token)

    def column_logits(self, hidden: torch.Tensor, column: int) -> torch.Tensor:
        """Logits of one column from hidden states of shape (..., d_model)."""
        start, stop = self.starts[column], self.starts[column + 1]
        return hidden @ self.proj.weight[start:stop].t() + self.proj.bias[start:stop]


def column_log_softmax_gather(logits: torch.Tensor, targets: torch.Tensor,
                              starts: Sequence[int]) -> torch.Tensor:
    """Log-probability of each target under its column's softmax.

    Parameters
    ----------
    logits : Tensor of shape (..., n_value_tokens)
        Column slices side by side (output of a head).
    targets : LongTensor of shape (..., n_columns)
        Target value-token ids (column ``c``'s target inside its slice).
    starts : sequence of int
        Column offsets, ``len(starts) == n_columns + 1``.

    Returns
    -------
    log_probs : Tensor of shape (..., n_columns)
    """
    n_columns = len(starts) - 1
    widths = [starts[c + 1] - starts[c] for c in range(n_columns)]
    pad = logits.new_full((*logits.shape[:-1], 1), float("-inf"))
    padded = torch.cat([logits, pad], dim=-1)
    index = torch.full((n_columns, max(widths)), starts[-1], dtype=torch.long,
                       device=logits.device)
    for c, k in enumerate(widths):
        index[c, :k] = torch.arange(starts[c], starts[c] + k, device=logits.device)
    grouped = padded[..., index]
    return logits.gather(-1, targets) - torch.logsumexp(grouped, dim=-1)
