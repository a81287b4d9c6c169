"""DP-2Stage: rows as text, template learning on pseudo data, then DP fine-tuning."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import BaseSynthesizer
from .._docstrings import fill_doc
from ..backends import EncodedTable
from ..preprocessing import align_columns
from ..privacy import PrivacyLedger
from ._estimator import (
    NEURAL_CONSTRAINTS,
    PUBLIC_AUTO_BATCH,
    EpochProgress,
    PublicProgress,
    TorchSynthesizer,
    resolve_device,
    torch_threads,
)
from ._optional import require_torch
from .text import RowText, WordVocabulary, public_table_text, value_strings

__all__ = ["DP2StageSynthesizer"]


@fill_doc
class DP2StageSynthesizer(TorchSynthesizer):
    """Two-stage language-model synthesizer (Afonja, Wang, Kerkouche & Fritz, DP-2Stage).

    Every row is written as text with the GReaT template, ``"income is >50K,
    age is 32, ..."``, in a fixed column order (the target first when
    ``target`` is given), and modelled by a small causal transformer over a
    vocabulary built from public strings only (one token per column name,
    one token per value -- shared ``<bin:k>`` tokens for numeric bins -- or,
    with ``value_tokens="pieces"``, word pieces with numbers digit by digit;
    see ``sklearn_dpsynth.neural.text``).  Training has two stages:

    1. **template learning, no privacy cost**: non-private training for
       ``stage1_epochs`` on a *pseudo* table -- ``"uniform"`` (DP-2Stage-U:
       every column drawn independently and uniformly from its domain) or a
       public DataFrame with any columns (DP-2Stage-O, out-of-distribution
       pre-training);
    2. **private content**: DP-SGD fine-tuning (Opacus, Poisson sampling,
       per-sample clipping, AdamW) on the private rows with the loss
       ``lambda * sum(value-token NLL) + (1 - lambda) * sum(key- and
       template-token NLL)``, ``lambda = value_weight``.

    ``pseudo_data=None`` skips stage 1: the DP-Standard baseline, trained
    from the same initialisation.  Sampling and scoring use trie-constrained
    decoding (``sklearn_dpsynth.neural.constrained``): the template
    tokens are forced and each value is chosen among the column's value
    strings, so every generated row is valid (nothing is rejected or
    imputed) and ``score_samples`` is a log-likelihood normalised over the
    rows of the encoded domain, comparable with the other synthesizers.
    :meth:`perplexity` gives the paper's diagnostic, the unconstrained
    model's perplexity on all, value, key and template tokens.

    Parameters
    ----------
    %(domain)s
    n_bins : int, default=100
        Uniform bins of numeric columns (a bin is written as its midpoint).
    %(domain_learning)s
    value_tokens : {"whole", "pieces"}, default="whole"
        How a value of the private table is tokenized: ``"whole"``, one
        token per value (a number is its bin's token, a category or a
        declared point its own token), so every row has the same length,
        ``1 + 4 * n_columns`` tokens; ``"pieces"``, word pieces with numbers
        digit by digit (longer rows, shared digit tokens).  A public
        ``pseudo_data`` table is always written in pieces, so its many
        distinct numbers add no tokens beyond digits.  Numeric bin ``k`` of
        every column is the shared token ``<bin:k>`` (the key before it says
        which column), which keeps the vocabulary small.  On Adult,
        ``"whole"`` gives rows of 61 tokens instead of up to 116 and DP-SGD
        steps 1.6 times cheaper (see the user guide).
    pseudo_data : "uniform", DataFrame or None, default="uniform"
        Stage-1 table: uniform pseudo rows from the (public or privately
        learned) domain, a public table (read freely: it must be public), or
        None for no stage 1.
    stage1_epochs : float, default=5.0
        Passes over the pseudo table (the paper's 5).
    stage1_rows : int, default=5000
        Uniform pseudo rows drawn (a public constant; unused with a DataFrame).
    stage1_lr : float, default=3e-3
        Peak learning rate of stage 1 (AdamW, warm-up then linear decay).
    value_weight : float in [0, 1] or None, default=0.65
        ``lambda`` of the stage-2 loss; None is the unweighted sum.
    target : column name or None, default=None
        Put this column first in the text (the paper's prompt column).
    column_order : list of column names, "shuffle" or None, default=None
        Explicit order of all columns (overrides ``target``); by default the
        table's order with ``target`` moved first.  Fixed for every row: the
        paper found per-iteration shuffling harmful under DP.  ``"shuffle"``
        is that ablation: every row of every batch (both stages) is written
        in a fresh uniformly random field order; sampling, scoring and
        :meth:`perplexity` then use the default order.
    %(d_model)s
    %(n_layers)s
    %(n_heads)s
    %(d_ff)s
    dropout : float, default=0.0
        Dropout rate.
    epochs : float, default=10.0
        Expected passes of DP-SGD over the private data (the paper's 10).
    batch_size : int or "auto", default=1024
        Expected (Poisson) batch of stage 2 (and stage 1); ``"auto"``: the
        TAN-style helper of :class:`~sklearn_dpsynth.DPTBARTSynthesizer`.
    max_grad_norm : float, default=1.0
        Per-sample clipping norm (the paper's C=1).
    lr : float, default=1e-2
        Peak learning rate of stage 2 (DP-TBART's default).  Measured on
        Adult at ``epsilon=1`` (3 seeds, default architecture): with
        ``3e-3`` the few, very noisy DP-SGD steps barely move the model
        (logistic F1 0.01-0.06, held-out log-likelihood -31.8 to -33.0
        nats/row), with ``1e-2`` it reaches F1 0.61-0.62 and -29.7 (see the
        user guide).  It does not change the fit time.
    warmup_steps : int, default=10
        Warm-up steps of each stage (at most a tenth of it).
    weight_decay : float, default=0.0
        AdamW decoupled weight decay.
    grad_sample_mode : {"auto", "ghost", "hooks"}, default="auto"
        How Opacus computes the clipped per-sample gradients ("auto": ghost).
    device : {"cpu", "cuda", "auto"}, default="auto"
        Where to train and sample.
    n_threads : int or None, default=1
        torch intra-op CPU threads during fit, sample and score.
    verbose : int, default=0
        Progress on stderr.  ``1``: stage 1 prints about ten lines with its
        training loss (public pseudo rows, nothing private), stage 2 one
        line per epoch with the step and the epsilon spent so far (public
        quantities).  ``2`` or more also prints stage 2's mean training
        loss per epoch, computed on the private rows *without noise*, and
        raises a :class:`~sklearn_dpsynth.exceptions.PrivacyWarning` once
        per fit: such a log must stay private.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the pseudo data, noise, batches, initialisation and sampling.
        %(seed_warning)s

    Attributes
    ----------
    domain_ : Domain
    text_ : RowText
        The template: vocabulary, order, key and value token sequences.
    automaton_ : RowAutomaton
        The constrained-decoding automaton of ``text_``.
    model_ : TextTransformer
        The trained network (on the CPU between calls).
    stage1_steps_ : int
        Non-private steps of stage 1 (0 without it).
    n_records_ : float
        DP estimate of the training row count.
    expected_batch_size_, sample_rate_ : float
        Poisson sampling of DP-SGD (from the noisy count).
    steps_ : int
        DP-SGD steps.
    noise_multiplier_ : float
        Calibrated so that the fit spends exactly ``(epsilon, delta)``.
    privacy_ledger_ : PrivacyLedger
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    **Privacy argument.** Stage 1 reads no private data: the vocabulary,
    the template and the uniform pseudo rows are functions of the domain
    (declared, hence public, or learned under DP with a
    ``preprocessing_budget`` share, recorded in the ledger), of public
    constants and of the public ``pseudo_data``; its training is
    post-processing and costs nothing.  The private table is then accessed
    twice, exactly as by :class:`~sklearn_dpsynth.DPTBARTSynthesizer`:
    the row count with the Gaussian mechanism (sensitivity 1, 2% of the
    zCDP budget left), and the DP-SGD run, ``steps`` compositions of the
    Poisson-subsampled Gaussian mechanism (rate ``q = batch / n_noisy``,
    add/remove-one-row neighbours, each row's gradient of its weighted loss
    clipped to ``max_grad_norm``; the loss weights are public constants),
    with the noise multiplier calibrated so that the composed total is
    ``(epsilon, delta)``.  Sampling, scoring and perplexities are
    post-processing.  The paper drew its uniform pseudo data from the
    private table's category lists and ranges, which weakens the guarantee;
    here they come from the public or DP-learned domain.

    **Conditional sampling.** ``sample(conditions=...)`` supports a prefix
    of the column order: the fixed fields are the prompt (e.g. ``"income is
    >50K, "``) and the rest is generated, an exact draw from the model's
    conditional.

    References
    ----------
    Afonja, Wang, Kerkouche, Fritz (2024). DP-2Stage: Adapting Language
    Models as Differentially Private Tabular Data Generators.

    Examples
    --------
    >>> from sklearn_dpsynth.neural import DP2StageSynthesizer
    >>> from sklearn_dpsynth.datasets import make_bayesnet
    >>> data = make_bayesnet(n_samples=500, n_features=3, random_state=0)
    >>> synth = DP2StageSynthesizer(domain=data.domain, d_model=16, n_layers=1,
    ...                             n_heads=2, epochs=1, stage1_epochs=1,
    ...                             stage1_rows=200, batch_size=64, random_state=0)
    >>> synth = synth.fit(data.frame, epsilon=1.0)  # doctest: +SKIP
    >>> synth.sample(5).shape  # doctest: +SKIP
    (5, 3)
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("text_", "automaton_", "stage1_steps_")

    def _persisted_module(self, name: str, seq_len: int, n_tensors: int, n_values: int):
        """An untrained ``model_`` of the saved shape, for :func:`~sklearn_dpsynth.load` to fill."""
        self._check_saved_size(n_tensors, n_values, seq_len)
        return self._build_model(0, seq_len)

    _parameter_constraints: dict = {
        **BaseSynthesizer._parameter_constraints,
        **NEURAL_CONSTRAINTS,
        "pseudo_data": [StrOptions({"uniform"}), pd.DataFrame, None],
        "stage1_epochs": [Interval(Real, 0, None, closed="left")],
        "stage1_rows": [Interval(Integral, 1, None, closed="left")],
        "stage1_lr": [Interval(Real, 0, None, closed="neither")],
        "value_weight": [Interval(Real, 0, 1, closed="both"), None],
        "target": "no_validation",
        "column_order": [list, tuple, StrOptions({"shuffle"}), None],
        "value_tokens": [StrOptions({"whole", "pieces"})],
        "verbose": ["verbose"],
    }

    def __init__(self, *, domain=None, n_bins=100, preprocessing="private",
                 preprocessing_budget=0.1, max_categories=99, bin_value="uniform",
                 value_tokens="whole", pseudo_data="uniform",
                 stage1_epochs=5.0, stage1_rows=5000, stage1_lr=3e-3, value_weight=0.65,
                 target=None, column_order=None, d_model=64, n_layers=2, n_heads=4,
                 d_ff=None, dropout=0.0, epochs=10.0, batch_size=1024, max_grad_norm=1.0,
                 lr=1e-2, warmup_steps=10, weight_decay=0.0, grad_sample_mode="auto",
                 device="auto", n_threads=1, verbose=0, random_state=None):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.preprocessing_budget = preprocessing_budget
        self.max_categories = max_categories
        self.bin_value = bin_value
        self.value_tokens = value_tokens
        self.pseudo_data = pseudo_data
        self.stage1_epochs = stage1_epochs
        self.stage1_rows = stage1_rows
        self.stage1_lr = stage1_lr
        self.value_weight = value_weight
        self.target = target
        self.column_order = column_order
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
        self.random_state = random_state

    # ------------------------------------------------------------------- fit
    def _fit_encoded(self, table: EncodedTable, ledger: PrivacyLedger,
                     rng: np.random.Generator, public: EncodedTable | None) -> None:
        # public tables (any columns) come in through pseudo_data; the private
        # rows are read only by stage 2
        device = resolve_device(self.device)
        order = self._resolve_order()
        pseudo_frame = self.pseudo_data if isinstance(self.pseudo_data, pd.DataFrame) else None
        self.text_, pseudo_text, pseudo_codes = self._build_text(order, pseudo_frame)
        from .constrained import RowAutomaton

        self.automaton_ = RowAutomaton(self.text_)
        length = max(self.text_.max_length, pseudo_text.max_length if pseudo_text else 0)
        self.model_ = self._build_model(int(rng.integers(0, 2**62)), length)
        # separate streams: stage 2 (noisy count, batches, noise) draws the same
        # numbers with or without stage 1, so variants with one seed are paired
        rng_stage1, rng_stage2 = (np.random.default_rng(int(seed))
                                  for seed in rng.integers(0, 2**62, size=2))
        with torch_threads(self.n_threads):
            try:
                self._stage1(pseudo_text, pseudo_codes, rng_stage1, device)
                self._stage2(table, ledger, rng_stage2, device)
            finally:
                self.model_.to("cpu").eval()

    def _resolve_order(self) -> list[int]:
        """Column positions in the order of the text; errors name the columns."""
        columns = list(self.domain_.columns)
        if self.column_order is not None and not isinstance(self.column_order, str):
            names = list(self.column_order)
            if sorted(map(repr, names)) != sorted(map(repr, columns)) or \
                    len(set(map(repr, names))) != len(names):
                raise ValueError(f"column_order must list every column once: {columns}; "
                                 f"got {names}.")
            return [self.domain_.index(name) for name in names]
        order = list(range(len(columns)))
        if self.target is not None:
            if self.target not in columns:
                raise ValueError(f"target {self.target!r} is not a column; the columns are "
                                 f"{columns}.")
            first = self.domain_.index(self.target)
            order = [first] + [j for j in order if j != first]
        return order

    def _build_text(self, order: list[int], pseudo_frame: pd.DataFrame | None):
        """Template of the private table and of a public pseudo table (public inputs only)."""
        keys = [str(name) for name in self.domain_.columns]
        specs = self.domain_.specs
        values = [value_strings(spec) for spec in specs]
        whole_mode = self.value_tokens == "whole"
        # "whole": numeric bins share <bin:k> tokens, other values are one token
        # each; "pieces": every value string is cut into word pieces
        whole = [v for spec, column in zip(specs, values) for v in column[spec.n_bins:]]
        pieces = [] if whole_mode else [v for column in values for v in column]
        names = list(keys)
        pseudo = None
        if pseudo_frame is not None:
            pseudo = public_table_text(pseudo_frame)
            pieces += [v for column in pseudo[1] for v in column]
            names += pseudo[0]
        n_bins = max((spec.n_bins for spec in specs), default=0) if whole_mode else 0
        vocabulary = WordVocabulary(pieces, keys=names, whole=whole if whole_mode else (),
                                    n_bins=n_bins)
        tokens = [self._value_token_ids(spec, column, vocabulary)
                  for spec, column in zip(specs, values)] if whole_mode else None
        text = RowText(keys, values, order, vocabulary, tokens)
        if pseudo is None:
            return text, (text if self.pseudo_data == "uniform" else None), None
        pseudo_text = RowText(pseudo[0], pseudo[1], range(len(pseudo[0])), vocabulary)
        return text, pseudo_text, pseudo[2]

    @staticmethod
    def _value_token_ids(spec, strings: list[str], vocabulary: WordVocabulary):
        """Whole-value tokens: bin ``k`` of a numeric column is the shared ``<bin:k>``."""
        return [[vocabulary.bin_token(code)] if code < spec.n_bins
                else vocabulary.encode_value(string) for code, string in enumerate(strings)]

    def _build_model(self, seed: int, length: int):
        torch = require_torch()
        from .text_model import TextTransformer

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return TextTransformer(self.text_.vocabulary.n_tokens, length,
                                   d_model=self.d_model, n_layers=self.n_layers,
                                   n_heads=self.n_heads, d_ff=self.d_ff,
                                   dropout=self.dropout)

    def _uniform_rows(self, rng: np.random.Generator) -> np.ndarray:
        """DP-2Stage-U's pseudo rows: every column uniform over its domain's codes."""
        sizes = [len(v) for v in self.text_.values]
        return np.column_stack([rng.integers(0, k, self.stage1_rows) for k in sizes])

    def _stage1(self, pseudo_text: RowText | None, pseudo_codes: np.ndarray | None,
                rng: np.random.Generator, device) -> None:
        """Template learning on public pseudo rows: non-private, no ledger entry."""
        from .pretraining import public_training_config
        from .text_training import token_weights, train_text_model

        self.stage1_steps_ = 0
        if pseudo_text is None or self.stage1_epochs == 0:
            return
        if pseudo_codes is None:
            pseudo_codes = self._uniform_rows(rng)
        tokens, types, lengths = pseudo_text.encode(pseudo_codes)
        config = public_training_config(
            len(tokens), epochs=self.stage1_epochs,
            batch_size=PUBLIC_AUTO_BATCH if self.batch_size == "auto" else self.batch_size,
            lr=self.stage1_lr, warmup_steps=self.warmup_steps,
            weight_decay=float(self.weight_decay))
        train_text_model(self.model_, tokens, lengths, token_weights(types, lengths, None),
                         config, dp=None, rng=rng, device=device,
                         progress=PublicProgress.create(
                             self, f"{type(self).__name__} stage 1 (template, non-private)",
                             rows="public pseudo rows"),
                         batch_rows=self._shuffled_rows(pseudo_text, pseudo_codes, None, rng))
        self.stage1_steps_ = config.steps

    def _stage2(self, table: EncodedTable, ledger: PrivacyLedger, rng: np.random.Generator,
                device) -> None:
        """DP fine-tuning on the private rows: noisy count, then DP-SGD (in the ledger)."""
        from .text_training import token_weights, train_text_model

        plan = self._plan_private_run(table.n_rows, ledger, rng)
        progress = EpochProgress.create(self, ledger, plan,
                                        name=f"{type(self).__name__} stage 2 (DP fine-tuning)")
        self._keep_private_run(plan)
        codes = table.to_numpy()
        tokens, types, lengths = self.text_.encode(codes)
        mode = "ghost" if self.grad_sample_mode == "auto" else self.grad_sample_mode
        config, dp, record = self._training_configs(
            plan, mode, ledger, "language-model weights (DP-2Stage stage 2)")
        shuffle_rng = np.random.default_rng(int(rng.integers(0, 2**62)))
        train_text_model(self.model_, tokens, lengths,
                         token_weights(types, lengths, self.value_weight), config, dp=dp,
                         rng=rng, device=device, record=record, progress=progress,
                         batch_rows=self._shuffled_rows(self.text_, codes, self.value_weight,
                                                        shuffle_rng))

    def _shuffled_rows(self, text: RowText, codes: np.ndarray, value_weight: float | None,
                       rng: np.random.Generator):
        """With ``column_order="shuffle"``: rows of a batch in fresh random field orders.

        The orders are drawn independently of the data (public randomness),
        so the DP-SGD analysis is unchanged; None for a fixed order.
        """
        if not (isinstance(self.column_order, str) and self.column_order == "shuffle"):
            return None
        from .text_training import token_weights

        def batch_rows(index: np.ndarray):
            orders = rng.permuted(np.tile(np.arange(text.n_columns), (len(index), 1)), axis=1)
            tokens, types, lengths = text.encode(codes[index], orders)
            return tokens, lengths, token_weights(types, lengths, value_weight)

        return batch_rows

    # ------------------------------------------------------ sample and score
    def _sample_encoded(self, n_samples: int, rng: np.random.Generator,
                        conditions: dict[int, int] | None) -> np.ndarray:
        from .constrained import sample_token_rows

        conditions = conditions or {}
        prefix = self.text_.order[:len(conditions)]
        if set(conditions) != set(prefix):
            columns = list(self.domain_.columns)
            raise ValueError(
                f"conditions: DP2StageSynthesizer writes the columns in the fixed order "
                f"{[columns[j] for j in self.text_.order]} and can only condition on a "
                f"prefix of it; got {[columns[j] for j in sorted(conditions)]}.")
        prompt = self.text_.prefix_tokens([conditions[j] for j in prefix])
        with self._model_on_device() as (model, device):
            return sample_token_rows(model, self.automaton_, n_samples, rng, prompt=prompt,
                                     device=device)

    def _token_log_probs(self, codes: np.ndarray, constrained: bool):
        from .constrained import token_log_probs

        tokens, types, lengths = self.text_.encode(codes)
        with self._model_on_device() as (model, device):
            log_probs = token_log_probs(model, self.automaton_ if constrained else None,
                                        tokens, lengths, device)
        return log_probs, types[:, 1:], lengths

    def _log_likelihood_encoded(self, codes: np.ndarray) -> np.ndarray:
        return self._token_log_probs(codes, constrained=True)[0].sum(axis=1)

    def perplexity(self, X: Any) -> dict[str, float]:
        """The paper's diagnostic: perplexity of the unconstrained LM by token type.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Rows to evaluate (held-out real rows, typically).

        Returns
        -------
        dict
            ``{"all", "value", "key", "other"}``: ``exp`` of the mean
            next-token NLL (full-vocabulary softmax) over the predicted
            tokens of that type; "other" holds the template tokens.
        """
        from .text import KEY, OTHER_TOKEN, VALUE

        check_is_fitted(self, "privacy_ledger_")
        codes = self.domain_.encode(align_columns(X, self._form))
        log_probs, types, lengths = self._token_log_probs(codes, constrained=False)
        inside = np.arange(types.shape[1])[None, :] + 1 < lengths[:, None]
        groups = {"all": inside, "value": inside & (types == VALUE),
                  "key": inside & (types == KEY), "other": inside & (types == OTHER_TOKEN)}
        return {name: float(np.exp(-log_probs[mask].mean())) if mask.any() else float("nan")
                for name, mask in groups.items()}

    def rows_as_text(self, X: Any) -> list[str]:
        """The rows of ``X`` written with the fitted template.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        list of str
            One ``"key is value, ..."`` string per row (numbers as their
            bins' strings).
        """
        check_is_fitted(self, "privacy_ledger_")
        codes = self.domain_.encode(align_columns(X, self._form))
        return self.text_.to_text(codes)
