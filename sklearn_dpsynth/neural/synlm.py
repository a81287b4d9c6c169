"""SynLM: rows as ``BEGIN_{col} value`` fields for a DP-SGD-trained language model."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._docstrings import fill_doc
from ._estimator import TransformerSynthesizer

__all__ = ["SynLMSynthesizer"]


@fill_doc
class SynLMSynthesizer(TransformerSynthesizer):
    """Language-model synthesizer of Sablayrolles, Wang & Karrer, trained with DP-SGD.

    Every field of a row is framed as ``BEGIN_{col} value``: the ``BEGIN``
    token says which column comes next and is only fed, never predicted (no
    loss on it); the value is a *level* token of that column (one token
    range per column, no sharing).  Because a level token already identifies
    its column, the paper's ``END_{col}`` token would be predicted with
    probability one: it is implied by the value and dropped.  At each
    ``BEGIN_{col}`` position the logits outside ``col``'s range are masked
    (computed only for that range), so likelihoods are normalised over
    valid rows and every sampled row is valid.

    With ``field_order="random"`` every training presentation uses a fresh
    random order of the fields, so the model learns all the conditionals it
    needs to condition on *any* subset of columns.  **AugMult** (De et al.
    2022) presents each sampled row ``augmult`` times per step (different
    field orders when random, different dropout draws); the copies'
    gradients are averaged *before* per-sample clipping, so the privacy
    accounting is unchanged (sampling rate per row).  The optimizer is AdamW
    with a linear warm-up (100 steps, as in the paper, capped at a tenth of
    the run) then linear decay to 0; the peak rate is higher than the
    paper's ``5e-4`` (see ``lr``).

    Parameters
    ----------
    %(common_parameters)s
    field_order : {"fixed", "random"}, default="fixed"
        Train on the table's column order only, or on random orders.
    augmult : int, default=1
        Presentations of each sampled row per step (AugMult).
    %(d_model)s
    %(n_layers)s
    %(n_heads)s
    %(d_ff)s
    dropout : float, default=0.0
        Dropout rate (a different draw for every AugMult copy).
    epochs : float, default=6.0
        Expected passes over the data (a SynLM row is twice as long as a
        DP-TBART row, so it trains about half as fast).
    batch_size : int or "auto", default=1024
        Expected (Poisson) batch size, or ``"auto"`` (TAN-style helper,
        see :class:`~sklearn_dpsynth.DPTBARTSynthesizer`).
    max_grad_norm : float, default=1.0
        Per-sample clipping norm (Adam's ``eps`` is scaled by it, so that
        small norms do not stall Adam).
    lr : float, default=1e-2
        Peak learning rate.  The paper's 5e-4 suits its long GPU runs; with
        the few hundred noisy steps a CPU affords, Adam needs a higher rate
        to move the output biases of rare codes (see
        :class:`~sklearn_dpsynth.DPTBARTSynthesizer`).
    warmup_steps : int, default=100
        Linear warm-up steps as in the paper, capped at a tenth of the run.
    weight_decay : float, default=0.01
        AdamW decoupled weight decay.
    grad_sample_mode : {"auto", "ghost", "hooks"}, default="auto"
        How Opacus computes the clipped per-sample gradients; "auto" uses
        ghost clipping with ``augmult=1`` and materialised per-sample
        gradients (hooks) with AugMult, where they are faster.
    device : {"cpu", "cuda", "auto"}, default="auto"
        Where to train and sample.
    %(verbose_dpsgd)s
    %(n_threads)s
    %(pretrain)s
    random_state : int, RandomState, Generator or None, default=None
        Seeds the noise, the batches, the field orders, the initialisation
        and sampling.
        %(seed_warning)s

    Attributes
    ----------
    domain_ : Domain
    model_ : TabularTransformer
    layout_ : FieldLayout
    n_records_ : float
        DP estimate of the training row count.
    expected_batch_size_, sample_rate_ : float
    steps_ : int
    noise_multiplier_ : float
    privacy_ledger_ : PrivacyLedger
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    **Privacy argument.** As for
    :class:`~sklearn_dpsynth.DPTBARTSynthesizer`: a noisy row count
    (Gaussian, 2% of the zCDP budget left) and ``steps`` Poisson-subsampled
    Gaussian steps whose Renyi curve is added to the ledger, the noise
    calibrated to spend exactly the budget.  With AugMult each row still
    contributes one clipped gradient per step (the mean over its copies).

    **Likelihood and sampling order.** ``score_samples`` and unconditional
    ``sample`` use the natural column order: the model's distribution is
    ``p(x) = prod_j p(x_j | x_<j)`` in that order, normalised over the
    encoded domain.  A model trained on random orders defines one such
    factorisation per order; they agree only approximately.

    **Conditional sampling.** With ``field_order="random"``, any subset of
    columns can be conditioned on: the conditioned fields are placed first
    (teacher-forced), the others follow in natural order and are sampled
    from the model's conditional given them.  With ``field_order="fixed"``
    only a prefix of the column order can be conditioned on (other subsets
    raise a ValueError).

    References
    ----------
    Sablayrolles, Wang, Karrer (2023). Privately generating tabular data
    using language models.  De, Berrada, Hayes, Smith, Balle (2022).
    Unlocking high-accuracy differentially private image classification
    through scale (AugMult).
    """

    _parameter_constraints: dict = {
        **TransformerSynthesizer._parameter_constraints,
        "field_order": [StrOptions({"fixed", "random"})],
        "augmult": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, domain=None, n_bins=100, preprocessing="private",
                 preprocessing_budget=0.1, max_categories=99,
                 bin_value="uniform", field_order="fixed",
                 augmult=1, d_model=64, n_layers=2, n_heads=4, d_ff=None, dropout=0.0,
                 epochs=6.0, batch_size=1024, max_grad_norm=1.0, lr=1e-2,
                 warmup_steps=100, weight_decay=0.01, grad_sample_mode="auto",
                 device="auto", n_threads=1, verbose=0, pretrain_epochs=0.0, pretrain_lr=3e-3,
                 random_state=None):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.preprocessing_budget = preprocessing_budget
        self.max_categories = max_categories
        self.bin_value = bin_value
        self.field_order = field_order
        self.augmult = augmult
        self.d_model = d_model
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.d_ff = d_ff
        self.dropout = dropout
        self.epochs = epochs
        self.batch_size = batch_size
        self.max_grad_norm = max_grad_norm
        self.lr = lr
        self.warmup_steps = warmup_steps
        self.weight_decay = weight_decay
        self.grad_sample_mode = grad_sample_mode
        self.device = device
        self.n_threads = n_threads
        self.verbose = verbose
        self.pretrain_epochs = pretrain_epochs
        self.pretrain_lr = pretrain_lr
        self.random_state = random_state

    def _make_layout(self, sizes):
        from .layout import FieldLayout

        return FieldLayout(sizes)

    def _training_options(self) -> dict:
        return {"augmult": int(self.augmult), "random_order": self.field_order == "random"}

    def _sampling_order(self, conditions: dict[int, int]) -> np.ndarray:
        """Conditioned fields first when the model was trained on random orders."""
        if self.field_order == "fixed":
            return super()._sampling_order(conditions)
        from .layout import conditioned_first_orders

        return conditioned_first_orders(1, len(self.domain_.sizes), list(conditions))[0]
