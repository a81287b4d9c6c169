"""Turning a mixed-type table into integer codes, privately, and back.

This module holds :class:`TableDiscretizer` and re-exports the pieces it is
built from:

* the input form (:func:`check_table`, :class:`InputForm`,
  :func:`align_columns`) from ``sklearn_dpsynth._input``;
* private domain learning (:func:`learn_domain`, :func:`candidate_grid`)
  from ``sklearn_dpsynth._domain_learning``, whose module docstring holds
  the privacy argument;
* public domain helpers (:func:`domain_from_public_data`,
  :func:`describe_domain`) from :mod:`sklearn_dpsynth.public_domain`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._column_kinds import KIND_SHARE, annotate_domain, read_like
from ._domain_learning import candidate_grid, learn_domain
from ._input import InputForm, align_columns, check_table
from ._input import set_feature_info as _set_feature_info
from ._validation import COMMON_CONSTRAINTS, check_rng
from .backends import open_source
from .privacy import DEFAULT_DELTA, LedgerShare, PrivacyLedger, check_budget, epsilon_to_rho
from .public_domain import describe_domain, domain_from_public_data

__all__ = [
    "TableDiscretizer",
    "domain_from_public_data",
    "describe_domain",
    "InputForm",
    "learn_domain",
    "candidate_grid",
    "check_table",
    "align_columns",
]


# ------------------------------------------------------------- transformer
class TableDiscretizer(TransformerMixin, BaseEstimator):
    """Map a mixed-type table to integer codes and back.

    Parameters
    ----------
    domain : dict, optional
        Public entries ``{column: entry}``: an int ``k`` (codes
        ``0..k-1``), a list of categories, a ``(low, high)`` tuple (numeric,
        ``n_bins`` bins, see :func:`~sklearn_dpsynth.domain.numeric_edges`) or a dict (see
        ``sklearn_dpsynth.domain.spec_from_declaration``).  Columns
        not declared are learned as ``preprocessing`` says.
    n_bins : int, default=32
        Bins of numeric columns (uniform, or log-spaced for a range spanning
        three orders of magnitude: :func:`~sklearn_dpsynth.domain.numeric_edges`).
    preprocessing : {"private", "private-lenient", "non-private"}, default="private"
        ``"private"`` learns undeclared columns under DP and needs
        ``epsilon``/``delta`` in :meth:`fit`; a column whose noisy
        histograms show no signal stops the fit with a
        :class:`~sklearn_dpsynth.exceptions.DomainInferenceError`.
        ``"private-lenient"`` fits anyway, such columns falling back to the
        whole public grid (no category kept) with a
        :class:`~sklearn_dpsynth.exceptions.DomainInferenceWarning`.
        ``"non-private"`` reads them from the data and emits a
        :class:`~sklearn_dpsynth.exceptions.PrivacyWarning`.
    max_categories : int, default=99
        Categories kept per learned column; the rest map to "other".
    bin_value : {"uniform", "midpoint"}, default="uniform"
        Where :meth:`inverse_transform` places a numeric value in its bin:
        a uniform draw within it (among its integers for an integer column)
        or its midpoint; per-integer codes and declared ``points`` decode
        exactly either way.
    random_state : int, RandomState, Generator or None, default=None
        Noise for private learning and uniform placement in bins.  ``None``
        (the default, and the only choice for a release) draws fresh
        operating-system entropy on every fit.  A fixed seed makes fits
        reproducible for research, but **the seed is the noise**: whoever
        knows it can re-run the fit on two neighbouring tables and tell
        them apart, and it is kept in ``get_params()`` and in a pickle of
        the transformer.
        Keep a fixed seed secret and never publish it with a release.

    Attributes
    ----------
    domain_ : Domain
        The complete domain.
    privacy_ledger_ : PrivacyLedger or None
        Budget spent learning the domain (None if nothing was learned
        privately).
    n_features_in_ : int
    feature_names_in_ : ndarray
        Only when fitted on a DataFrame with string column names.

    Notes
    -----
    scikit-learn's ``KBinsDiscretizer(encode="ordinal")`` and
    ``OrdinalEncoder`` read their edges and categories from the data they
    are fitted on; they are only private when fitted on *public* data.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"age": [23, 45, 67], "sex": ["F", "M", "F"]})
    >>> disc = TableDiscretizer(domain={"age": (0, 100), "sex": ["F", "M"]}, n_bins=4)
    >>> disc.fit_transform(X)
    array([[0, 0],
           [1, 1],
           [2, 0]])
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("domain_", "privacy_ledger_", "_form", "_rng", "n_features_in_",
                         "feature_names_in_", "_kinds")

    _parameter_constraints: dict = {
        "domain": [dict, None],
        "n_bins": COMMON_CONSTRAINTS["n_bins"],
        "preprocessing": COMMON_CONSTRAINTS["preprocessing"],
        "max_categories": COMMON_CONSTRAINTS["max_categories"],
        "bin_value": COMMON_CONSTRAINTS["bin_value"],
        "random_state": COMMON_CONSTRAINTS["random_state"],
    }

    def __init__(self, domain=None, *, n_bins=32, preprocessing="private",
                 max_categories=99, bin_value="uniform", random_state=None):
        self.domain = domain
        self.n_bins = n_bins
        self.preprocessing = preprocessing
        self.max_categories = max_categories
        self.bin_value = bin_value
        self.random_state = random_state

    def fit(self, X, y=None, *, epsilon: float | None = None, delta: float | None = None):
        """Complete the domain of ``X`` (privately when asked to).

        Parameters
        ----------
        X : DataFrame, array-like of shape (n_samples, n_features) or a source
            Anything a synthesizer's ``fit`` takes
            (:func:`~sklearn_dpsynth.backends.open_source`: a Parquet/CSV
            path, a DuckDB relation, a pyspark DataFrame are counted where
            they live; :meth:`transform` takes rows in memory).  Text
            columns (``object`` or pandas strings) are read by their
            declared kind or by one chosen privately, as in ``fit``.
        y : ignored
        epsilon, delta : float, optional
            Budget for learning undeclared columns privately; all of it is
            spent on that (half of ``delta`` on the category thresholds).
            ``delta`` defaults to 1e-9 when only ``epsilon`` is given.

        Returns
        -------
        self
        """
        ledger = None
        if epsilon is not None or delta is not None:
            epsilon, delta = check_budget(epsilon, DEFAULT_DELTA if delta is None else delta)
            ledger = PrivacyLedger(epsilon, delta)
        return self._fit_in_budget(X, None if ledger is None else ledger.share(
            epsilon_to_rho(ledger.epsilon, ledger.delta / 2), ledger.delta / 2,
            label="domain learning"))

    def _fit_in_budget(self, X, budget: LedgerShare | None):
        """Fit spending at most the share ``budget`` (also used by pipelines)."""
        self._validate_params()
        source = open_source(X)  # the one source interface, as the synthesizers' fit
        form = source.input_form()
        declared = dict(self.domain or {})
        noise_rng = check_rng(self.random_state)
        spend = budget
        kinds_budget = None
        if budget is not None and self.preprocessing != "non-private" and budget.rho > 0 and \
                source.columns_to_measure(declared):
            kinds_budget = budget.share(KIND_SHARE * budget.rho, label="column kinds")
            spend = budget.share(budget.rho - kinds_budget.rho, budget.delta)
        self._kinds = source.read_column_kinds(declared, budget=kinds_budget, rng=noise_rng,
                                               preprocessing=self.preprocessing)
        self._form = InputForm(form.columns, list(source.schema_frame().dtypes), form.is_frame)
        self.domain_ = annotate_domain(learn_domain(
            source, self.domain, n_bins=self.n_bins, preprocessing=self.preprocessing,
            rng=noise_rng, budget=spend, max_categories=self.max_categories), self._kinds)
        ledger = None if budget is None else budget.root
        self.privacy_ledger_ = ledger if ledger is not None and len(budget.entries) else None
        # The generator that drew the noise is not kept: its state would let the
        # noise be replayed from a pickle.  Uniform placement in bins gets its own.
        self._rng = (np.random.default_rng() if self.random_state is None
                     else np.random.default_rng(noise_rng.integers(0, 2**63 - 1)))
        _set_feature_info(self, self._form)
        return self

    def transform(self, X) -> np.ndarray:
        """Encode ``X`` to integer codes.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)

        Returns
        -------
        codes : ndarray of int64, shape (n_samples, n_features)
        """
        check_is_fitted(self, "domain_")
        frame = read_like(align_columns(X, self._form), getattr(self, "_kinds", {}))
        return self.domain_.encode(frame)

    def inverse_transform(self, X) -> pd.DataFrame | np.ndarray:
        """Decode integer codes back to values in the fitted input's form.

        Parameters
        ----------
        X : array-like of int, shape (n_samples, n_features)

        Returns
        -------
        DataFrame or ndarray
        """
        check_is_fitted(self, "domain_")
        codes = np.asarray(X)
        decoded = self.domain_.decode(np.rint(codes).astype(np.int64), self._rng,
                                      self.bin_value)
        return self._form.restore(decoded, self.domain_)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of the encoded columns (the input's)."""
        check_is_fitted(self, "domain_")
        return np.asarray([str(c) for c in self._form.columns], dtype=object)


