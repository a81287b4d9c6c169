"""Batched autoregressive generation of rows with the column mask.

Rows are generated field by field in a given field order.  Before the
``i``-th field, the layout's chunk of input tokens (the previous field's
value, and for SynLM the ``BEGIN`` token of the next field) is fed to the
model with a key/value cache; the hidden state of the chunk's last position
gives the logits of the next field's column only, so every sampled token is
a valid code of its column by construction.  Sampling is at temperature 1
by inverse-CDF with uniforms drawn from a numpy Generator (reproducible).

Conditioning: a conditioned field is *teacher-forced* -- its fixed value is
fed instead of a sampled one.  The result is an exact draw from the model's
conditional distribution when the conditioned fields come first in the
field order (the estimators arrange that, or refuse).

Importing this module imports torch.
"""

from __future__ import annotations

import numpy as np
import torch

from .layout import RowLayout

__all__ = ["draw_categorical", "sample_codes"]

#: Rows generated per batch.
SAMPLE_BATCH = 8192


def draw_categorical(logits: torch.Tensor, rng: np.random.Generator) -> np.ndarray:
    """One draw per row from ``softmax(logits)`` by inverse CDF.

    Parameters
    ----------
    logits : Tensor of shape (n_rows, n_codes)
    rng : numpy.random.Generator

    Returns
    -------
    codes : ndarray of shape (n_rows,), int64, in ``0..n_codes-1``
    """
    probs = torch.softmax(logits.double(), dim=-1).cpu().numpy()
    cumulative = np.cumsum(probs, axis=1)
    u = rng.random(len(probs)) * cumulative[:, -1]
    draws = (u[:, None] >= cumulative).sum(axis=1)
    return np.minimum(draws, probs.shape[1] - 1).astype(np.int64)


@torch.no_grad()
def sample_codes(model: torch.nn.Module, layout: RowLayout, n_samples: int,
                 rng: np.random.Generator, *, orders: np.ndarray,
                 conditions: dict[int, int] | None, device: torch.device) -> np.ndarray:
    """Generate encoded rows.

    Parameters
    ----------
    model : TabularTransformer
        Put in eval mode.
    layout : RowLayout
    n_samples : int
    rng : numpy.random.Generator
    orders : ndarray of shape (n_columns,), int
        Field order used for every row (a permutation of the columns).
    conditions : dict of {column: code}, optional
        Fields fixed to a code (teacher-forced).
    device : torch.device

    Returns
    -------
    codes : ndarray of shape (n_samples, n_columns), int64
    """
    model.eval()
    d = layout.n_columns
    out = np.empty((n_samples, d), dtype=np.int64)
    for start in range(0, n_samples, SAMPLE_BATCH):
        rows = min(SAMPLE_BATCH, n_samples - start)
        out[start:start + rows] = _sample_batch(model, layout, rows, rng, orders,
                                                conditions or {}, device)
    return out


def _sample_batch(model, layout, rows, rng, order, conditions, device) -> np.ndarray:
    d = layout.n_columns
    codes = np.zeros((rows, d), dtype=np.int64)
    for column, code in conditions.items():
        codes[:, column] = code
    orders = np.broadcast_to(np.asarray(order, dtype=np.int64), (rows, d))
    caches = model.new_caches()
    for slot in range(d):
        start, stop = layout.chunk(slot)
        tokens = torch.as_tensor(layout.tokens(codes, orders)[:, start:stop], device=device)
        hidden = model.hidden(tokens, start=start, caches=caches)[:, -1]
        column = int(order[slot])
        if column not in conditions:
            codes[:, column] = draw_categorical(model.head.column_logits(hidden, column), rng)
    return codes
