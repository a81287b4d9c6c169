"""Preprocessing steps in front of a synthesizer, with honest privacy.

:class:`SynthesizerPipeline` fits a list of transformers, fits a
synthesizer on their output within the same budget and ledger, and maps
samples back through the steps' ``inverse_transform`` to the input's form.

A scikit-learn transformer fitted on the private table reads it without
protection (``KBinsDiscretizer`` its quantiles or min/max,
``StandardScaler`` its means, ``OrdinalEncoder`` its categories), and
whatever it learned travels with the synthetic rows.  The pipeline
therefore fits a step on the private table only when that is safe:

* the library's differentially private transformers (``TableDiscretizer``)
  spend a share of the pipeline's budget, recorded in its ledger;
* data-independent steps (``"passthrough"``, ``FunctionTransformer``
  without ``check_inverse``) learn nothing from the rows;
* steps already fitted (on public data) are used as they are, never refit;
  wrap them in ``sklearn.frozen.FrozenEstimator`` so that ``clone``
  (and ``GridSearchCV``) keeps them fitted;
* any other step is refused before anything is read, unless
  ``allow_non_private=True``, which fits it on the private rows with a
  :class:`~sklearn_dpsynth.exceptions.PrivacyWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import FunctionTransformer, KBinsDiscretizer, OrdinalEncoder
from sklearn.utils.validation import check_is_fitted

from ._base import DEFAULT_DELTA, BaseSynthesizer
from .exceptions import PrivacyWarning
from .preprocessing import TableDiscretizer
from .privacy import PrivacyLedger, check_budget

__all__ = ["SynthesizerPipeline", "step_privacy"]

#: How a step may be fitted on the private table (see :func:`step_privacy`).
STEP_KINDS = ("private", "data-independent", "prefitted", "non-private")


def step_privacy(step: Any) -> str:
    """How a preprocessing step may be fitted on the private table.

    Parameters
    ----------
    step : estimator or "passthrough"
        A transformer (fitted or not).

    Returns
    -------
    kind : str
        ``"private"`` (a differentially private transformer of this library:
        it spends a budget share), ``"data-independent"`` (fitting reads
        nothing from the rows), ``"prefitted"`` (already fitted, used as it
        is: private only if it was fitted on public data) or
        ``"non-private"`` (fitting would read the private rows).
    """
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return "data-independent"
    if isinstance(step, TableDiscretizer):
        return "private"
    if isinstance(step, FunctionTransformer):
        # with check_inverse (and both functions) fit runs them on some rows
        # and warns when they do not invert: a data-dependent message
        checks = step.check_inverse and step.func is not None and step.inverse_func is not None
        return "non-private" if checks else "data-independent"
    if _is_fitted(step):
        return "prefitted"
    return "non-private"


def _is_fitted(step: Any) -> bool:
    try:
        check_is_fitted(step)
    except (NotFittedError, TypeError):
        return False
    return True


def _unwrap(step: Any) -> Any:
    """The estimator inside a ``FrozenEstimator`` (or the step itself)."""
    inner = getattr(step, "estimator", None)
    return inner if type(step).__name__ == "FrozenEstimator" and inner is not None else step


def _code_sizes(step: Any) -> list[int] | None:
    """Number of integer codes per output column of a discretizing step, if known."""
    step = _unwrap(step)
    if isinstance(step, TableDiscretizer):
        return list(step.domain_.sizes)
    if isinstance(step, KBinsDiscretizer) and step.encode == "ordinal":
        return [int(k) for k in step.n_bins_]
    if isinstance(step, OrdinalEncoder) and step.handle_unknown == "error":
        sizes = [len(c) for c in step.categories_]
        has_missing = any(np.any(_is_missing(c)) for c in step.categories_)
        return None if has_missing else sizes
    return None


def _is_missing(categories: np.ndarray) -> np.ndarray:
    return np.array([c is None or (isinstance(c, float) and np.isnan(c)) for c in categories])


class SynthesizerPipeline(BaseEstimator):
    """Transformers in front of a synthesizer, within one privacy budget.

    ``fit`` fits the steps in order (each on the previous one's output),
    then the synthesizer on the last output, all within ``(epsilon,
    delta)`` and recorded in one :class:`~sklearn_dpsynth.PrivacyLedger`;
    ``sample`` draws rows from the synthesizer and maps them back through
    the steps' ``inverse_transform`` (last step first).

    Parameters
    ----------
    steps : list of (str, transformer) tuples
        Preprocessing steps; a transformer may be ``"passthrough"``.  Each
        must have ``inverse_transform`` (except ``"passthrough"``).  See
        :func:`step_privacy` for which steps are fitted on the private rows.
    synthesizer : BaseSynthesizer
        The synthesizer fitted on the last step's output.  When the last
        step outputs integer codes with a known number per column (a
        :class:`~sklearn_dpsynth.TableDiscretizer`, an ordinal
        ``KBinsDiscretizer`` or an ``OrdinalEncoder`` fitted on public
        data), those columns are declared to the synthesizer as ``k``
        codes, so they are modelled as categories, not as numbers.
    preprocessing_budget : float, default=0.1
        Fraction of the zCDP budget (and of ``delta``) offered to the
        library's private transformers, split evenly between them; what
        they do not spend stays with the synthesizer.
    allow_non_private : bool, default=False
        Fit steps that would read the private rows without protection
        anyway, with a :class:`~sklearn_dpsynth.exceptions.PrivacyWarning`
        naming them.  The output is then *not* differentially private.

    Attributes
    ----------
    steps_ : list of (str, transformer) tuples
        The fitted steps.
    synthesizer_ : BaseSynthesizer
        The fitted synthesizer.
    privacy_ledger_ : PrivacyLedger
        Every access of every step and of the synthesizer, and the total.

    Notes
    -----
    Privacy: the private steps and the synthesizer spend shares of one
    ledger created with ``(epsilon, delta)``; by sequential composition
    (zCDP and Renyi curves composed in the ledger) the fitted pipeline is
    ``(epsilon, delta)``-DP, provided every ``"prefitted"`` step was fitted
    on data that is not private.  Data-independent steps read nothing.
    Validation of the steps happens before any row is read, and its errors
    name steps, never values.  Sampling and inverse transforms are
    post-processing.

    ``score`` is the synthesizer's score of the transformed rows: a
    log-likelihood in the *transformed* space, comparable between
    pipelines whose steps are the same.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_dpsynth import MSTSynthesizer, TableDiscretizer
    >>> X = pd.DataFrame({"age": [23, 45, 67, 30] * 50, "sex": ["F", "M", "F", "M"] * 50})
    >>> pipe = SynthesizerPipeline(
    ...     [("codes", TableDiscretizer({"age": (0, 100), "sex": ["F", "M"]}, n_bins=10))],
    ...     MSTSynthesizer(random_state=0))
    >>> rows = pipe.fit(X, epsilon=1.0).sample(5)
    >>> list(rows.columns)
    ['age', 'sex']
    """

    #: Fitted attributes saved in model files (sklearn_dpsynth.save), besides the parameters.
    _persisted_state_ = ("steps_", "synthesizer_", "privacy_ledger_")

    def __init__(self, steps, synthesizer, *, preprocessing_budget=0.1,
                 allow_non_private=False):
        self.steps = steps
        self.synthesizer = synthesizer
        self.preprocessing_budget = preprocessing_budget
        self.allow_non_private = allow_non_private

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None, *, epsilon: float, delta: float = DEFAULT_DELTA):
        """Fit the steps and the synthesizer on the private table ``X``.

        Parameters
        ----------
        X : DataFrame or array-like
            The private table.
        y : None
            Ignored.
        epsilon : float
            Total privacy budget, finite and ``> 0``.
        delta : float, default=1e-9
            Total delta, in (0, 1).

        Returns
        -------
        self
        """
        kinds = self._validate()
        epsilon, delta = check_budget(epsilon, delta)
        ledger = PrivacyLedger(epsilon, delta)
        n_private = sum(kind == "private" for kind in kinds)
        rho_each = self.preprocessing_budget * ledger.rho_budget / max(n_private, 1)
        delta_each = self.preprocessing_budget * delta / max(n_private, 1)
        data, fitted = X, []
        for (name, step), kind in zip(self.steps, kinds):
            step = self._fit_step(name, step, kind, data, ledger, rho_each, delta_each)
            fitted.append((name, step))
            data = data if _is_passthrough(step) else step.transform(data)
        synthesizer = clone(self.synthesizer)
        self._declare_codes(synthesizer, fitted, data)
        synthesizer._fit_in_ledger(data, ledger)
        self.steps_, self.synthesizer_, self.privacy_ledger_ = fitted, synthesizer, ledger
        return self

    def _validate(self) -> list[str]:
        """Check every parameter and step before any row is read; the kinds."""
        if not isinstance(self.synthesizer, BaseSynthesizer):
            raise TypeError("synthesizer must be a sklearn_dpsynth synthesizer "
                            f"(a BaseSynthesizer), got {type(self.synthesizer).__name__}.")
        budget = self.preprocessing_budget
        if not (isinstance(budget, (int, float)) and 0 <= budget < 1):
            raise ValueError(f"preprocessing_budget must lie in [0, 1), got {budget!r}.")
        if not isinstance(self.steps, (list, tuple)) or not all(
                isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], str)
                for s in self.steps):
            raise TypeError("steps must be a list of (name, transformer) tuples.")
        names = [name for name, _ in self.steps]
        if len(set(names)) != len(names):
            raise ValueError(f"step names must be unique, got {names}.")
        kinds = []
        for name, step in self.steps:
            if not _is_passthrough(step) and not (hasattr(step, "transform")
                                                  and hasattr(step, "inverse_transform")):
                raise TypeError(f"step {name!r} ({type(step).__name__}) needs transform and "
                                "inverse_transform to map samples back.")
            kind = step_privacy(step)
            if kind == "non-private" and not self.allow_non_private:
                raise ValueError(
                    f"step {name!r} ({type(step).__name__}) would be fitted on the private "
                    "table and reads it without protection. Fit it on public data first "
                    "(wrap it in sklearn.frozen.FrozenEstimator), use a data-independent "
                    "or differentially private step (TableDiscretizer), or pass "
                    "allow_non_private=True to accept the leak.")
            kinds.append(kind)
        return kinds

    def _fit_step(self, name: str, step: Any, kind: str, data: Any, ledger: PrivacyLedger,
                  rho: float, delta: float) -> Any:
        """The fitted step (a clone; prefitted steps as they are)."""
        if kind == "prefitted" or _is_passthrough(step):
            return step
        step = clone(step)
        if kind == "private":
            return step._fit_in_budget(data, ledger.share(rho, delta, label=name))
        if kind == "non-private":
            warnings.warn(f"step {name!r} ({type(step).__name__}) is fitted on the private "
                          "table without differential privacy: what it learns (bounds, "
                          "categories, statistics) is released with the model.",
                          PrivacyWarning, stacklevel=3)
        return step.fit(data)

    @staticmethod
    def _declare_codes(synthesizer: BaseSynthesizer, fitted: list, data: Any) -> None:
        """Declare the last step's integer codes to the synthesizer (columns by position)."""
        last = next((step for _, step in reversed(fitted) if not _is_passthrough(step)), None)
        sizes = None if last is None else _code_sizes(last)
        if sizes is None or np.ndim(data) != 2 or np.shape(data)[1] != len(sizes):
            return
        columns = list(data.columns) if hasattr(data, "columns") else list(range(len(sizes)))
        declared = dict(synthesizer.domain or {})
        for column, size in zip(columns, sizes):
            declared.setdefault(column, int(size))
        synthesizer.set_params(domain=declared)

    # ------------------------------------------------------ sample and score
    def transform(self, X: Any) -> Any:
        """Apply the fitted steps to ``X`` (what the synthesizer models).

        Parameters
        ----------
        X : DataFrame or array-like

        Returns
        -------
        The last step's output.
        """
        check_is_fitted(self, "synthesizer_")
        for _, step in self.steps_:
            X = X if _is_passthrough(step) else step.transform(X)
        return X

    def inverse_transform(self, X: Any) -> Any:
        """Map rows of the synthesizer's space back through the steps (last first).

        Parameters
        ----------
        X : array-like or DataFrame

        Returns
        -------
        Rows in the form of the pipeline's input.
        """
        check_is_fitted(self, "synthesizer_")
        for _, step in reversed(self.steps_):
            X = X if _is_passthrough(step) else step.inverse_transform(X)
        return X

    def sample(self, n_samples: int | None = None, *, random_state: Any = None) -> Any:
        """Draw synthetic rows in the input's form.

        Parameters
        ----------
        n_samples : int, optional
            Number of rows; by default the synthesizer's (private) estimate
            of the training row count.
        random_state : int, Generator or None, optional
            Passed to the synthesizer's ``sample``.

        Returns
        -------
        rows : DataFrame or ndarray
        """
        check_is_fitted(self, "synthesizer_")
        kwargs = {} if random_state is None else {"random_state": random_state}
        return self.inverse_transform(self.synthesizer_.sample(n_samples, **kwargs))

    def score_samples(self, X: Any) -> np.ndarray:
        """Log-likelihood of each row of ``X`` in the transformed space.

        Parameters
        ----------
        X : DataFrame or array-like

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self.synthesizer_.score_samples(self.transform(X))

    def score(self, X: Any, y: Any = None) -> float:
        """Mean log-likelihood of ``X`` in the transformed space (higher is better).

        Parameters
        ----------
        X : DataFrame or array-like
        y : None
            Ignored.

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))


def _is_passthrough(step: Any) -> bool:
    return step is None or (isinstance(step, str) and step == "passthrough")
