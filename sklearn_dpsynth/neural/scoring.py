"""Exact log-likelihood of encoded rows under the transformer.

The model's probability of a row presented in a field order is the product,
over the fields, of the column-masked softmax of its column at its
prediction position (the chain rule); the column mask normalises every
factor over the column's codes only, so the probabilities of all rows of the
encoded domain sum to one.  Computed with teacher forcing in batches, the
final normalisation in float64.

Importing this module imports torch.
"""

from __future__ import annotations

import numpy as np
import torch

from .column_head import column_log_softmax_gather
from .layout import RowLayout

__all__ = ["log_likelihood_codes"]

#: Rows scored per batch.
SCORE_BATCH = 8192


@torch.no_grad()
def log_likelihood_codes(model: torch.nn.Module, layout: RowLayout, codes: np.ndarray,
                         order: np.ndarray, device: torch.device) -> np.ndarray:
    """Log-probability (nats) of every row presented in one field order.

    Parameters
    ----------
    model : TabularTransformer
        Put in eval mode.
    layout : RowLayout
    codes : ndarray of shape (n_rows, n_columns), int
    order : ndarray of shape (n_columns,), int
        The field order (a permutation of the columns).
    device : torch.device

    Returns
    -------
    log_likelihood : ndarray of shape (n_rows,), float64
    """
    model.eval()
    codes = np.asarray(codes, dtype=np.int64)
    starts = [int(s) for s in layout.vocabulary.offsets]
    out = np.empty(len(codes))
    for lo in range(0, len(codes), SCORE_BATCH):
        part = codes[lo:lo + SCORE_BATCH]
        orders = np.broadcast_to(np.asarray(order, np.int64), part.shape)[:, None, :]
        tokens, positions, targets = layout.copies_inputs(part, orders)
        logits = model(torch.as_tensor(tokens, device=device),
                       torch.as_tensor(positions, device=device))
        log_probs = column_log_softmax_gather(logits.double(),
                                              torch.as_tensor(targets, device=device), starts)
        out[lo:lo + len(part)] = log_probs.sum(dim=(1, 2)).cpu().numpy()
    return out
