"""Non-private pre-training of the tabular transformer on a public table.

The two-stage idea of DP-2Stage beyond text: before DP-SGD, DP-TBART and
SynLM can be trained without privacy on a *public* table whose columns
match the private one (encoded with the same domain, e.g.
``../shared/data/adult_public_split/public.csv``).  The public rows are not
private, so this costs nothing in the ledger; DP-SGD then starts from the
pre-trained weights instead of the random initialisation.

Importing this module imports torch and opacus.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from .dpsgd import TrainingConfig, TrainingReport
from .layout import RowLayout
from .training import train_transformer

__all__ = ["pretrain_transformer", "public_training_config"]


def public_training_config(n_rows: int, *, epochs: float, batch_size: int, lr: float,
                           warmup_steps: int, weight_decay: float = 0.0,
                           **options) -> TrainingConfig:
    """The non-private run of ``epochs`` expected passes over ``n_rows`` public rows.

    The expected (Poisson) batch is capped at ``n_rows`` and the warm-up at
    a tenth of the run; ``options`` (``augmult``, ``random_order``) go to
    :class:`~sklearn_dpsynth.neural.dpsgd.TrainingConfig`.
    """
    batch = min(int(batch_size), n_rows)
    steps = max(math.ceil(epochs * n_rows / batch), 1)
    return TrainingConfig(steps=steps, sample_rate=batch / n_rows, expected_batch_size=batch,
                          lr=lr, warmup_steps=min(warmup_steps, max(steps // 10, 1)),
                          weight_decay=weight_decay, **options)


def pretrain_transformer(model: torch.nn.Module, layout: RowLayout, public_codes: np.ndarray,
                         *, epochs: float, batch_size: int, lr: float, warmup_steps: int,
                         rng: np.random.Generator, device: torch.device, augmult: int = 1,
                         random_order: bool = False, weight_decay: float = 0.0,
                         progress: Callable[[int, int, float], None] | None = None
                         ) -> TrainingReport:
    """Train ``model`` in place, without privacy, on public encoded rows.

    Parameters
    ----------
    model : TabularTransformer
    layout : RowLayout
    public_codes : ndarray of shape (n_public, n_columns), int
        Public rows encoded with the private table's domain.
    epochs : float
        Expected passes over the public rows (> 0).
    batch_size : int
        Expected (Poisson) batch, capped at the number of public rows.
    lr : float
        Peak learning rate (linear warm-up, then linear decay).
    warmup_steps : int
        Capped at a tenth of the run.
    rng : numpy.random.Generator
    device : torch.device
    augmult : int, default=1
    random_order : bool, default=False
        As in :class:`~sklearn_dpsynth.neural.dpsgd.TrainingConfig`.
    weight_decay : float, default=0.0
    progress : callable, optional
        ``progress(step, steps, loss)`` after every step (public rows: the
        loss may be printed).

    Returns
    -------
    TrainingReport

    Raises
    ------
    ValueError
        If the public table is empty or its codes do not fit the layout.
    """
    public_codes = np.asarray(public_codes, dtype=np.int64)
    if public_codes.ndim != 2 or len(public_codes) == 0 or \
            public_codes.shape[1] != layout.n_columns:
        raise ValueError(f"public_codes must be a non-empty (n, {layout.n_columns}) table "
                         "encoded with the private table's domain.")
    layout.vocabulary.encode(public_codes)  # codes in range, or a ValueError
    config = public_training_config(len(public_codes), epochs=epochs, batch_size=batch_size,
                                    lr=lr, warmup_steps=warmup_steps,
                                    weight_decay=weight_decay, augmult=augmult,
                                    random_order=random_order)
    return train_transformer(model, layout, public_codes, config, dp=None, rng=rng,
                             device=device, progress=progress)
