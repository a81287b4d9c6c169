"""DP-TBART: a DP-SGD-trained transformer over one token per column."""

from __future__ import annotations

from .._docstrings import fill_doc
from ._estimator import TransformerSynthesizer

__all__ = ["DPTBARTSynthesizer"]


@fill_doc
class DPTBARTSynthesizer(TransformerSynthesizer):
    """Differentially private transformer synthesizer (Castellon et al., DP-TBART).

    Every row is a sequence ``<bos> v_1 ... v_d`` of *level* tokens, one per
    column in the table's column order; each column owns its own token
    range.  A decoder-only transformer is trained with DP-SGD (Opacus,
    Poisson sampling, per-sample clipping, Adam) to predict each column from
    the previous ones; at every position the logits outside the column's
    range are masked (computed only for that range), so the likelihood is
    normalised over valid rows and every sampled row is valid.  Numeric
    columns are discretised into ``n_bins`` uniform bins between public (or
    privately learned) bounds and decoded to bin midpoints (integers
    rounded) by the library's domain layer.

    The defaults are scaled to a CPU (a fit on the 44k-row Adult table takes
    minutes); the paper's model (3 layers of width 768) is reachable with
    ``d_model=768, n_layers=3, n_heads=12`` on a GPU (``device="cuda"``).

    Parameters
    ----------
    %(domain)s
    n_bins : int, default=100
        Uniform bins of numeric columns, as in DP-TBART; an integer column whose bounds hold at most
        ``INTEGER_RESOLUTION_MAX`` (100) integers gets one code per integer
        instead (see :func:`~sklearn_dpsynth.domain.numeric_edges`).
    %(domain_learning)s
    %(d_model)s
    %(n_layers)s
    %(n_heads)s
    %(d_ff)s
    dropout : float, default=0.0
        Dropout rate.
    epochs : float, default=10.0
        Expected passes over the data (steps = ``ceil(epochs * n / batch)``
        with the noisy row count ``n``).
    batch_size : int or "auto", default=1024
        Expected (Poisson) batch size.  ``"auto"``: the smallest batch whose
        calibrated noise multiplier reaches 2 for ``epochs``
        (``sklearn_dpsynth.neural.calibration.suggest_batch_size``).
    max_grad_norm : float, default=1.0
        Per-sample clipping norm.  Adam's ``eps`` is scaled by it, so small
        norms do not stall Adam; when (nearly) every row's gradient is
        clipped, as with the summed per-row NLL here, training is then
        invariant to its value.
    lr : float, default=1e-2
        Peak learning rate (linear warm-up, then linear decay to 0).  With a
        few hundred noisy steps a high rate is needed: Adam moves a
        parameter by about ``lr`` per step, and the output biases of rare
        codes must travel several units (measured on Adult: 3e-3 gave
        19.45 nats/row and 2-way TVD 0.081, 1e-2 gave 18.93 and 0.057).
    warmup_steps : int, default=10
        Warm-up steps (at most a tenth of the run).
    weight_decay : float, default=0.0
        AdamW decoupled weight decay (0: Adam, as in the paper).
    grad_sample_mode : {"auto", "ghost", "hooks"}, default="auto"
        How Opacus computes the clipped per-sample gradients
        (``sklearn_dpsynth.neural.dpsgd``); "auto" uses ghost
        clipping (faster here).
    device : {"cpu", "cuda", "auto"}, default="auto"
        Where to train and sample ("auto": CUDA when available).
    %(verbose_dpsgd)s
    %(n_threads)s
    %(pretrain)s
    random_state : int, RandomState, Generator or None, default=None
        Seeds the noise, the batches, the initialisation and sampling.
        %(seed_warning)s

    Attributes
    ----------
    domain_ : Domain
    model_ : TabularTransformer
        The trained network (on the CPU between calls).
    layout_ : PlainLayout
        Row-to-token layout and vocabulary.
    n_records_ : float
        DP estimate of the training row count.
    expected_batch_size_, sample_rate_ : float
        Poisson sampling of DP-SGD (from the noisy count).
    steps_ : int
    noise_multiplier_ : float
        Calibrated so that the fit spends exactly ``(epsilon, delta)``.
    privacy_ledger_ : PrivacyLedger
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    **Privacy argument.** Two accesses: the row count with the Gaussian
    mechanism (sensitivity 1, a 2% share of the zCDP budget left) and the
    DP-SGD run: ``steps`` compositions of the Poisson-subsampled Gaussian
    mechanism with sampling rate ``q = batch / n_noisy`` (each row is used
    or not independently, add/remove-one-row neighbours, every row's
    gradient clipped to ``max_grad_norm``), whose Renyi curve (Mironov et
    al. 2019) is added to the ledger; the noise multiplier is the smallest
    for which the composed total is ``(epsilon, delta)``.  Sampling and
    scoring are post-processing.  Nothing else is read from the data: the
    batch size, steps and normalisation use the noisy count.

    **Conditional sampling.** ``sample(conditions=...)`` supports only a
    prefix of the column order (the first ``k`` columns), drawn exactly from
    the model's conditional by teacher-forcing the fixed values; other
    subsets raise a ValueError (see ``SynLMSynthesizer(field_order="random")``).

    References
    ----------
    Castellon, Gopalakrishnan, Feldman, Rosenthal, Rudin, Talwar (2023).
    DP-TBART: A Transformer-based Autoregressive Model for Differentially
    Private Tabular Data Generation.

    Examples
    --------
    >>> from sklearn_dpsynth.neural import DPTBARTSynthesizer
    >>> from sklearn_dpsynth.datasets import make_bayesnet
    >>> data = make_bayesnet(n_samples=500, n_features=3, random_state=0)
    >>> synth = DPTBARTSynthesizer(domain=data.domain, d_model=16, n_layers=1,
    ...                            n_heads=2, epochs=1, batch_size=64, random_state=0)
    >>> synth = synth.fit(data.frame, epsilon=1.0)  # doctest: +SKIP
    >>> synth.sample(5).shape  # doctest: +SKIP
    (5, 3)
    """

    _parameter_constraints: dict = {**TransformerSynthesizer._parameter_constraints}

    def __init__(self, *, domain=None, n_bins=100, preprocessing="private",
                 preprocessing_budget=0.1, max_categories=99,
                 bin_value="uniform", d_model=64, n_layers=2,
                 n_heads=4, d_ff=None, dropout=0.0, epochs=10.0, batch_size=1024,
                 max_grad_norm=1.0, lr=1e-2, warmup_steps=10, weight_decay=0.0,
                 grad_sample_mode="auto", device="auto", n_threads=1, verbose=0,
                 pretrain_epochs=0.0, pretrain_lr=3e-3,
                 random_state=None):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.preprocessing_budget = preprocessing_budget
        self.max_categories = max_categories
        self.bin_value = bin_value
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
        from .layout import PlainLayout

        return PlainLayout(sizes)

