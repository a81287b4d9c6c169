"""The estimator contract shared by every synthesizer."""

from __future__ import annotations

import os
import warnings
from abc import ABCMeta, abstractmethod
from typing import Any, Hashable, Mapping

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._column_kinds import KIND_SHARE, annotate_domain, read_like
from ._tableio import ChunkWriter, output_format
from ._validation import COMMON_CONSTRAINTS, check_n_samples, check_rng
from .backends import EncodedTable, TableSource, encode_public_table, open_source
from .preprocessing import InputForm, _set_feature_info, align_columns, check_table, learn_domain
from .privacy import DEFAULT_DELTA, PrivacyLedger, check_budget

__all__ = ["BaseSynthesizer", "PublicDataSynthesizer", "DEFAULT_DELTA"]


class BaseSynthesizer(BaseEstimator, metaclass=ABCMeta):
    """Base class of all synthesizers: fit privately, sample, score.

    Subclasses implement four hooks on the *encoded* table (integer codes,
    one column per input column, ``domain_.sizes[j]`` codes in column
    ``j``); a subclass missing one cannot be instantiated:

    * ``_fit_encoded(table, ledger, rng, public)`` -- read the private
      rows only through ``table`` (a
      :class:`~sklearn_dpsynth.backends.EncodedTable`: ``table.counts``,
      ``table.iter_chunks``, ``table.to_numpy``), spend at most
      ``ledger.rho_remaining()`` (or fit within ``ledger.fits``) and learn
      the model; ``public`` is the encoded ``public_data`` (a
      :class:`~sklearn_dpsynth.backends.NumpyTable`) or None, and is
      given only to a :class:`~sklearn_dpsynth.public.PublicDataSynthesizer`
      (the one declaration that a method takes ``public_data``; ``fit``
      refuses it for the others);
    * ``_sample_encoded(n_samples, rng, conditions)`` -- return
      ``(n_samples, n_features)`` codes; ``conditions`` maps column
      positions to fixed codes (or is None);
    * ``_log_likelihood_encoded(codes)`` -- log-probability (nats) of each
      row on the encoded domain;
    * ``_estimated_n_records()`` -- a differentially private estimate of the
      number of training rows (the count itself is private under
      add/remove-one-row neighbours).

    The base class validates hyperparameters and inputs, builds the privacy
    ledger, completes the domain (declared, learned privately with a
    ``preprocessing_budget`` share of the budget, or read non-privately with
    a :class:`~sklearn_dpsynth.exceptions.PrivacyWarning`), encodes and
    decodes rows, and guards sample/score with ``check_is_fitted``.

    Fitting inside a budget: ``_fit_in_budget(X, ledger, public_data=None)``
    is ``fit`` spending only what remains of ``ledger`` (a
    :class:`~sklearn_dpsynth.PrivacyLedger` that earlier steps may have
    spent from, kept as ``privacy_ledger_``).  It is the contract pipelines
    use (:class:`~sklearn_dpsynth.pipeline.SynthesizerPipeline` fits its
    private steps with their own ``_fit_in_budget`` on shares of that
    ledger, then the synthesizer); a subclass does not override it.

    Fitted state read outside the class: ``feature_dtypes_in_`` (the input
    columns' dtypes, which ``sample`` restores); the private attributes a
    model file keeps are declared in ``_persisted_state_``.

    Common parameters (every subclass lists them in its ``__init__``):
    ``domain``, ``n_bins``, ``preprocessing``, ``preprocessing_budget``,
    ``max_categories``, ``random_state``.

    One call of :meth:`sample` draws at most ``max_sample_cells`` cells
    (rows times columns; a class attribute, ``2**28`` by default: 2 GiB of
    int64 codes before decoding) and refuses more with a ValueError naming
    ``n_samples``; :meth:`sample_to` writes any number of rows in chunks
    under that limit.
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("domain_", "privacy_ledger_", "_form", "_sampling_rng",
                         "n_features_in_", "feature_names_in_", "_kinds")

    _parameter_constraints: dict = dict(COMMON_CONSTRAINTS)

    #: Most cells (rows x columns) one :meth:`sample` call generates at once.
    max_sample_cells: int = 2**28

    #: Renamed hyperparameters, ``{old: new}``: the old name stays a parameter
    #: (default ``"deprecated"``) for one release; set, it wins and ``fit``
    #: warns with a FutureWarning.  Read such a parameter with :meth:`_param`.
    _renamed_params_: dict = {}

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None, *, epsilon: float, delta: float = DEFAULT_DELTA,
            public_data: Any = None):
        """Fit the synthesizer on the private table ``X`` within ``(epsilon, delta)``.

        Parameters
        ----------
        X : pandas.DataFrame, array-like, path, duckdb relation, Spark DataFrame or TableSource
            The private table.  Missing values are modelled as their own
            code where the domain allows them.  A path or glob of Parquet
            or CSV files, or a DuckDB relation, is counted in DuckDB
            without loading it (``pip install 'sklearn-dpsynth[duckdb]'``);
            a pyspark DataFrame is counted in Spark, only contingency
            tables reaching the driver (``pip install
            'sklearn-dpsynth[spark]'``); a container of a registered
            backend is read through its source
            (:func:`~sklearn_dpsynth.backends.open_source`).
        y : None
            Ignored; present for scikit-learn API consistency.
        epsilon : float
            Privacy budget, finite and ``> 0``.
        delta : float, default=1e-9
            Privacy parameter in (0, 1); pick it well below ``1 / n_samples``.
        public_data : pandas.DataFrame or array-like, default=None
            A table that is *not* private, with the same columns as ``X``
            (in any order for DataFrames), for the methods that can use one
            (those that cannot raise a ValueError).  It is encoded once on
            the fitted domain and costs no budget; its values must lie in
            the domain (learned columns clip or map to "other" as for
            ``X``).  The guarantee holds only if it really is public.

        Returns
        -------
        self
        """
        epsilon, delta = check_budget(epsilon, delta)
        return self._fit_in_budget(X, PrivacyLedger(epsilon, delta), public_data)

    def _fit_in_budget(self, X: Any, ledger: PrivacyLedger, public_data: Any = None):
        """Fit spending only what remains of ``ledger`` (the contract pipelines use).

        Parameters
        ----------
        X, public_data
            As in :meth:`fit`.
        ledger : PrivacyLedger
            The budget to spend from; it becomes ``privacy_ledger_``.

        Returns
        -------
        self
        """
        self._validate_params()
        self._warn_renamed_params()
        delta = ledger.delta
        self._check_public_allowed(public_data)
        source = open_source(X)  # in memory, or counted where a backend holds it
        form = source.input_form()
        rng = check_rng(self.random_state)
        declared = self._declared_domain(form)
        form, kinds, budget = self._read_kinds(source, form, declared, ledger, rng)
        public_frame = self._align_public(public_data, form)
        if public_frame is not None and kinds:  # read by the same kinds, at no cost
            public_frame = read_like(public_frame, kinds)
        self.domain_ = annotate_domain(learn_domain(
            source, declared, n_bins=self.n_bins,
            preprocessing=self.preprocessing, rng=rng, budget=budget,
            max_categories=self.max_categories), kinds)
        table = source.encode(self.domain_)
        public = (None if public_frame is None
                  else encode_public_table(public_frame, self.domain_))
        self._fit_encoded(table, ledger, rng, public)
        self.privacy_ledger_ = ledger
        self._form = form
        self._kinds = kinds
        self._sampling_rng = self._new_sampling_rng(rng)
        _set_feature_info(self, form)
        return self

    def _warn_renamed_params(self) -> None:
        """FutureWarning for each deprecated parameter name that is set."""
        for old, new in self._renamed_params_.items():
            if getattr(self, old) != "deprecated":
                warnings.warn(f"{old} was renamed {new}; {old} is deprecated and will be removed "
                              f"in the next release: use {new}={getattr(self, old)!r}.",
                              FutureWarning)

    def _param(self, name: str) -> Any:
        """Hyperparameter ``name``, or its deprecated old name's value when that is set."""
        for old, new in self._renamed_params_.items():
            if new == name and getattr(self, old) != "deprecated":
                return getattr(self, old)
        return getattr(self, name)

    @property
    def feature_dtypes_in_(self) -> dict:
        """``{column: dtype}`` of the fitted input table, as :meth:`sample` restores it.

        Raises AttributeError before ``fit`` (so ``hasattr`` tells whether
        the model is fitted).
        """
        if "_form" not in vars(self):
            raise AttributeError(f"{type(self).__name__} is not fitted: no feature_dtypes_in_.")
        return dict(zip(self._form.columns, self._form.dtypes))

    def _read_kinds(self, source: TableSource, form: InputForm, declared: dict,
                    ledger: PrivacyLedger, rng: np.random.Generator) -> tuple:
        """Read the source's text columns by kind; its form, the kinds and the
        domain-learning share (see ``sklearn_dpsynth._column_kinds``).

        A ``"column kinds"`` share of ``KIND_SHARE`` of the preprocessing
        budget is taken when some columns' kinds (or datetime units) are
        learned: a public fact of the schema and the declaration.
        """
        share = self.preprocessing_budget
        rho, delta = share * ledger.rho_budget, share * ledger.delta
        kinds_budget = None
        if source.columns_to_measure(declared) and self.preprocessing != "non-private":
            kinds_budget = ledger.share(KIND_SHARE * rho, label="column kinds")
            rho -= kinds_budget.rho
        kinds = source.read_column_kinds(declared, budget=kinds_budget, rng=rng,
                                         preprocessing=self.preprocessing)
        form = InputForm(form.columns, list(source.schema_frame().dtypes), form.is_frame)
        return form, kinds, ledger.share(rho, delta, label="domain learning")

    def _check_public_allowed(self, public_data: Any) -> None:
        """ValueError naming ``public_data`` for methods that cannot use it."""
        if public_data is not None and not isinstance(self, PublicDataSynthesizer):
            raise ValueError(f"public_data: {type(self).__name__} does not use public data; "
                             "fit it without public_data=.")

    @staticmethod
    def _align_public(public_data: Any, form: InputForm) -> pd.DataFrame | None:
        """``public_data`` checked and in the columns order of ``X``, or None.

        Raises
        ------
        ValueError
            Naming ``public_data`` and the missing or unexpected columns.
        """
        if public_data is None:
            return None
        try:
            frame, public_form = check_table(public_data)
        except (TypeError, ValueError) as error:
            raise ValueError(f"public_data: {error}") from None
        if public_form.is_frame and form.is_frame:
            missing = [c for c in form.columns if c not in set(frame.columns)]
            extra = [c for c in frame.columns if c not in set(form.columns)]
            if missing or extra:
                raise ValueError(f"public_data must have the columns of X: missing {missing}, "
                                 f"unexpected {extra}.")
            return frame[form.columns]
        if frame.shape[1] != len(form.columns):
            raise ValueError(f"public_data must have the {len(form.columns)} columns of X, "
                             f"got {frame.shape[1]}.")
        return frame.set_axis(form.columns, axis=1)

    def _new_sampling_rng(self, noise_rng: np.random.Generator) -> np.random.Generator:
        """The generator that ``sample`` continues, kept in the fitted model.

        Without a seed it draws fresh OS entropy, independent of the
        generator that drew the privacy noise: the fitted model (and its
        pickle) then holds no state from which that noise could be
        recovered.  With a seed it is derived from the noise generator, so a
        fixed seed reproduces fits and samples (and must stay secret).
        """
        if self.random_state is None:
            return np.random.default_rng()
        return np.random.default_rng(noise_rng.integers(0, 2**63 - 1))

    def _declared_domain(self, form: InputForm) -> dict:
        """The ``domain`` hyperparameter as ``{column: entry}``."""
        domain = self.domain
        if domain is None:
            return {}
        if isinstance(domain, (int, np.integer)):
            return {column: int(domain) for column in form.columns}
        if isinstance(domain, list):
            if len(domain) != len(form.columns):
                raise ValueError(f"domain is a list of {len(domain)} entries but X has "
                                 f"{len(form.columns)} columns.")
            return dict(zip(form.columns, domain))
        return dict(domain)

    # --------------------------------------------------------------- sample
    def sample(
        self,
        n_samples: int | None = None,
        *,
        random_state: Any = None,
        conditions: Mapping[Hashable, Any] | None = None,
    ) -> pd.DataFrame | np.ndarray:
        """Generate synthetic rows in the form of the table seen in ``fit``.

        Parameters
        ----------
        n_samples : int, optional
            Number of rows.  ``None`` uses the model's differentially
            private estimate of the training row count (the exact count is
            private and never read).
        random_state : int, Generator, RandomState or None, default=None
            ``None`` continues the generator seeded at fit time, so a fixed
            fit ``random_state`` makes a sequence of ``sample`` calls
            reproducible.
        conditions : dict, optional
            ``{column: value}`` to fix; supported only by estimators that
            say so.  Anything but a mapping raises a TypeError naming
            ``conditions``.

        Returns
        -------
        DataFrame or ndarray
            Same column names, order and dtypes as the fitted table (an
            ndarray when ``fit`` received one).

        Raises
        ------
        ValueError
            When ``n_samples`` times the number of columns exceeds
            ``max_sample_cells`` (``2**28`` by default): the rows would not
            fit in memory at once; write them with :meth:`sample_to`, which
            generates them in chunks, or draw several smaller samples.
        """
        check_is_fitted(self, "privacy_ledger_")
        if n_samples is None:
            n_samples = max(int(round(self._estimated_n_records())), 1)
        n_samples = check_n_samples(n_samples)
        self._check_sample_size(n_samples)
        rng = self._sampling_rng if random_state is None else check_rng(random_state)
        encoded_conditions = self._encode_conditions(conditions)
        codes = self._sample_encoded(n_samples, rng, encoded_conditions)
        decoded = self.domain_.decode(codes, rng, self.bin_value)
        return self._form.restore(decoded, self.domain_)

    def sample_to(
        self,
        path: str | os.PathLike,
        n_samples: int,
        *,
        chunk_size: int = 100_000,
        format: str | None = None,
        random_state: Any = None,
        conditions: Mapping[Hashable, Any] | None = None,
    ) -> int:
        """Write synthetic rows to a CSV or Parquet file, one chunk at a time.

        For outputs larger than memory: at most ``chunk_size`` rows are
        generated, decoded and held at once, then appended to the file
        (CSV rows, or one Parquet row group per chunk), so memory stays
        bounded whatever ``n_samples``.  Sampling is post-processing of the
        fitted model: it costs no privacy budget.

        Parameters
        ----------
        path : str or os.PathLike
            The file to (over)write.
        n_samples : int
            Number of rows, ``>= 0``.
        chunk_size : int, default=100_000
            Largest number of rows generated at once, ``>= 1`` and at most
            ``max_sample_cells`` cells (rows times columns).
        format : {"csv", "parquet"}, optional
            Inferred from the suffix (``.csv``, ``.csv.gz``, ``.parquet``,
            ``.pq``) when omitted.  Parquet needs pyarrow
            (``pip install 'sklearn-dpsynth[parquet]'``).
        random_state : int, Generator, RandomState or None, default=None
            As for :meth:`sample`: a fixed seed writes the same file.
        conditions : dict, optional
            As for :meth:`sample`.

        Returns
        -------
        int
            Number of chunks written.
        """
        check_is_fitted(self, "privacy_ledger_")
        n_samples = check_n_samples(n_samples)
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) \
                or chunk_size < 1:
            raise ValueError(f"chunk_size must be an int >= 1, got {chunk_size!r}.")
        self._check_sample_size(min(chunk_size, n_samples), "chunk_size")
        writer = ChunkWriter(path, output_format(path, format))
        rng = self._sampling_rng if random_state is None else check_rng(random_state)
        sizes = [chunk_size] * (n_samples // chunk_size)
        if n_samples % chunk_size or not sizes:
            sizes.append(n_samples % chunk_size)
        try:
            for size in sizes:
                rows = self.sample(size, random_state=rng, conditions=conditions)
                writer.write(rows if isinstance(rows, pd.DataFrame)
                             else pd.DataFrame(rows, columns=[str(c) for c in self._form.columns]))
        finally:
            writer.close()
        return len(sizes)

    def _check_sample_size(self, n_rows: int, parameter: str = "n_samples") -> None:
        """ValueError naming ``parameter`` above :attr:`max_sample_cells` cells at once."""
        advice = ("pass a smaller chunk_size" if parameter == "chunk_size" else
                  "write larger outputs with sample_to(path, n_samples, chunk_size=...), "
                  "which generates them in chunks, or call sample several times")
        self._check_cells(n_rows, len(self._form.columns), f"{parameter}={n_rows}", advice)

    def _check_cells(self, n_rows: int, n_columns: int, subject: str, advice: str) -> None:
        """ValueError when ``n_rows`` rows of ``n_columns`` exceed :attr:`max_sample_cells`.

        ``subject`` names the parameters asking for the rows, ``advice`` the
        fix; the check reads only sizes chosen by the user or public.
        """
        n_columns = max(n_columns, 1)
        if n_rows * n_columns > self.max_sample_cells:
            raise ValueError(f"{subject} asks for {n_rows} rows of {n_columns} columns at once, "
                             f"more than max_sample_cells={self.max_sample_cells} cells "
                             f"(at most {self.max_sample_cells // n_columns} rows) held in "
                             f"memory; {advice}.")

    def _encode_conditions(self, conditions: Mapping | None) -> dict[int, int] | None:
        if conditions is not None and not isinstance(conditions, Mapping):
            raise TypeError("conditions must be a dict {column: value}, got a "
                            f"{type(conditions).__name__}.")
        if not conditions:
            return None
        encoded = {}
        for column, value in conditions.items():
            index = self.domain_.index(column)
            spec = self.domain_.specs[index]
            value = read_like(pd.DataFrame({column: pd.Series([value], dtype=object)}),
                              getattr(self, "_kinds", {}))[column].astype(object).to_numpy()
            encoded[index] = int(spec.encode(value)[0])
        return encoded

    # ---------------------------------------------------------------- score
    def score_samples(self, X: Any) -> np.ndarray:
        """Log-density (nats) of each row under the fitted model, in the input's units.

        The model gives each row's codes a probability; within a numeric
        bin it is spread uniformly, so a row's score is ``log P(codes)``
        minus, for every numeric column, the log of its bin's width (for an
        integer column, of the number of integers in the bin).  Categorical,
        code, ``other``, missing and point-mass values count as
        probabilities.  Scores are therefore comparable across binnings of
        the same columns (e.g. over ``n_bins`` in a grid search): on a
        continuous column the score is a log-density per unit of the
        column, and ``exp(score_samples)`` sums/integrates to 1 over the
        domain.  Values outside a declared domain raise a ValueError naming
        the column; numeric values outside privately learned bounds are
        clipped into them, as in ``fit``, and scored as clipped.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Same columns as in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "privacy_ledger_")
        frame = align_columns(X, self._form)
        codes = self.domain_.encode(read_like(frame, getattr(self, "_kinds", {})))
        log_probs = np.asarray(self._log_likelihood_encoded(codes), dtype=float)
        return log_probs - self.domain_.log_widths(codes)

    def score(self, X: Any, y: Any = None) -> float:
        """Mean log-density (nats per row) of ``X`` (see :meth:`score_samples`); higher is better.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))

    # ---------------------------------------------------------------- hooks
    @abstractmethod
    def _fit_encoded(self, table: EncodedTable, ledger: PrivacyLedger,
                     rng: np.random.Generator, public: EncodedTable | None) -> None:
        """Learn the model from the encoded private ``table``, spending through ``ledger``."""

    @abstractmethod
    def _sample_encoded(self, n_samples: int, rng: np.random.Generator,
                        conditions: dict[int, int] | None) -> np.ndarray:
        """Draw encoded rows."""

    @abstractmethod
    def _log_likelihood_encoded(self, codes: np.ndarray) -> np.ndarray:
        """Log-probability of each encoded row."""

    @abstractmethod
    def _estimated_n_records(self) -> float:
        """DP estimate of the training row count."""

    def _reject_conditions(self, conditions: dict | None) -> None:
        """Raise a clear error for estimators without conditional sampling."""
        if conditions:
            raise ValueError(f"{type(self).__name__} does not support conditions= in sample.")


class PublicDataSynthesizer(BaseSynthesizer):
    """Base class of the synthesizers that take a public table in ``fit``.

    Subclassing it is the one declaration that a method accepts
    ``fit(X, y=None, *, epsilon, delta=1e-9, public_data=None)``: the public
    table (same columns as ``X``) is encoded once with the fitted domain
    ``domain_`` and handed to ``_fit_encoded`` as an encoded table (None
    without one).  It is public: reading it costs nothing, and anything
    derived from it alone is public too.  :meth:`fit` of any other
    :class:`~sklearn_dpsynth.BaseSynthesizer` refuses ``public_data`` with
    a ValueError.
    """
