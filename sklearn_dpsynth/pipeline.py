"""Preprocessing steps in front of a synthesizer, with honest privacy.

:class:`SynthesizerPipeline` fits a list of transformers, fits a
synthesizer on their output within the same budget and ledger, and maps
samples back through the steps' ``inverse_transform`` to the input's form.

A scikit-learn transformer fitted on the private table reads it without
protection (``KBinsDiscretizer`` its quantiles or min/max,
``StandardScaler`` its means, ``OrdinalEncoder`` its categories), and
whatever it learned travels with the synthetic rows.  A function run on the
whole table can mix its rows (centring by a column mean, sorting,
duplicating rows), and one changed row then moves many outputs: the
synthesizer's sensitivity is no longer the one it charges.  The pipeline
therefore fits a step on the private table only when that is safe, and a
step's privacy is declared, never guessed:

* the library's differentially private transformers (``TableDiscretizer``)
  spend a share of the pipeline's budget, recorded in its ledger;
* ``"passthrough"`` (or ``None``) reads nothing;
* a ``FunctionTransformer`` wrapped in :class:`RowWise` is the user's
  declaration that its function maps each row on its own and keeps the
  row count; it is fitted on a public probe table, never on the rows, and
  checked there (an undeclared ``FunctionTransformer`` is refused, even
  frozen: its function runs on the private table whatever it was fitted on);
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
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import FunctionTransformer, KBinsDiscretizer, OrdinalEncoder
from sklearn.utils.validation import check_is_fitted

from ._base import DEFAULT_DELTA, BaseSynthesizer
from .exceptions import PrivacyWarning
from .preprocessing import TableDiscretizer
from .privacy import PrivacyLedger, check_budget

__all__ = ["RowWise", "SynthesizerPipeline", "step_privacy"]

#: How a step may be fitted on the private table (see :func:`step_privacy`).
STEP_KINDS = ("private", "data-independent", "prefitted", "non-private")


def step_privacy(step: Any) -> str:
    """How a preprocessing step may be fitted on the private table.

    The answer comes from what the step *is*, never from what its code is
    guessed to do: only the vetted kinds below are fitted on private rows.

    Parameters
    ----------
    step : estimator or "passthrough"
        A transformer (fitted or not).

    Returns
    -------
    kind : str
        ``"private"`` (a differentially private transformer of this library:
        it spends a budget share), ``"data-independent"`` (``"passthrough"``,
        ``None`` or a :class:`RowWise` declaration: fitting reads nothing from
        the rows), ``"prefitted"`` (already fitted, used as it is: private
        only if it was fitted on public data) or ``"non-private"`` (fitting
        would read the private rows, or the step runs a function that is not
        declared row-wise, such as a bare ``FunctionTransformer``).
    """
    if _is_passthrough(step) or isinstance(step, RowWise):
        return "data-independent"
    if isinstance(step, TableDiscretizer):
        return "private"
    if _runs_undeclared_function(step):
        return "non-private"
    if _is_fitted(step):
        return "prefitted"
    return "non-private"


def _runs_undeclared_function(step: Any) -> bool:
    """Whether ``step`` holds a ``FunctionTransformer`` outside a :class:`RowWise`.

    Looks through meta-estimators (``FrozenEstimator``, ``Pipeline``,
    ``ColumnTransformer``, ...) by their parameters: freezing a function
    does not make it row-wise.
    """
    if isinstance(step, RowWise):
        return False
    if isinstance(step, FunctionTransformer):
        return True
    if isinstance(step, (list, tuple)):
        return any(_runs_undeclared_function(item) for item in step)
    if isinstance(step, BaseEstimator):
        return any(_runs_undeclared_function(value)
                   for value in step.get_params(deep=False).values())
    return False


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


#: Values of the public probe table: distinct and out of order, so that a
#: function that sorts, centres or otherwise mixes rows changes some row.
_PROBE_ORDER = (3, 0, 5, 1, 6, 2, 4)


class RowWise(TransformerMixin, BaseEstimator):
    """Declare that a ``FunctionTransformer`` maps each row on its own.

    A :class:`SynthesizerPipeline` refuses a bare ``FunctionTransformer``:
    its function runs on the whole private table, and a function that mixes
    rows (centring by a column mean, sorting, duplicating rows) lets one
    changed row move many rows of the synthesizer's input, so the
    synthesizer's charged sensitivity, and the ledger's epsilon, would be
    false.  Wrapping it, ``RowWise(FunctionTransformer(func, inverse_func))``,
    is your declaration that ``func`` computes each output row from the
    same input row alone (no statistic of other rows, no global state) and
    returns exactly one row per input row.  The step is then
    ``"data-independent"`` (see :func:`step_privacy`) and costs nothing.

    The declaration cannot be proven; what can be checked cheaply and
    publicly is checked:

    * ``fit`` never reads the values of ``X``: the function transformer is
      fitted (including its ``check_inverse`` test) on a *probe* table,
      ``probe`` or one built from the schema of ``X`` (column names and
      dtypes, public) with made-up values;
    * on the probe, the function must keep the number of rows and map every
      row alone exactly as it maps it among the others; otherwise ``fit``
      raises a ``ValueError`` (this catches centring, sorting, duplicating
      or dropping rows, on the probe only);
    * ``transform`` raises a ``ValueError`` if the output's row count differs
      from the input's.  For a function that really is row-wise this never
      happens, so the check reveals nothing about the rows; when it fires the
      declaration was false and no guarantee held.

    A function that passes these checks can still mix rows on other values
    or sizes, and one that raises or warns depending on values (``np.log``
    of a negative number) reveals them: the declaration is yours.

    Parameters
    ----------
    transformer : sklearn.preprocessing.FunctionTransformer
        The function step.  Its ``inverse_func`` is used by ``sample`` only
        (post-processing: it need not be row-wise for privacy).
    probe : DataFrame or array-like, optional
        A few (at least two) public rows with the schema of the step's input,
        to fit and check the function on.  By default a table of seven rows
        is built from the schema (numbers, booleans, dates, durations and
        strings made up by the library); pass public rows when the function
        needs particular values (a category list, a range).

    Attributes
    ----------
    transformer_ : sklearn.preprocessing.FunctionTransformer
        A clone of ``transformer`` fitted on the probe table.

    Notes
    -----
    A model file holds no code: a pipeline with a ``RowWise`` step (a
    function) cannot be saved with :func:`~sklearn_dpsynth.save`, which
    names the step.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.preprocessing import FunctionTransformer
    >>> step = RowWise(FunctionTransformer(np.log1p, np.expm1))
    >>> step_privacy(step)
    'data-independent'
    """

    def __init__(self, transformer, *, probe=None):
        self.transformer = transformer
        self.probe = probe

    def fit(self, X: Any, y: Any = None) -> RowWise:
        """Fit the function transformer on a public probe table, never on ``X``'s rows.

        Parameters
        ----------
        X : DataFrame or array-like
            The step's input; only its schema (columns, dtypes) is read.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        if not isinstance(self.transformer, FunctionTransformer):
            raise TypeError("RowWise wraps a sklearn.preprocessing.FunctionTransformer, got "
                            f"{type(self.transformer).__name__}.")
        probe = self._probe_like(X)
        fitted = clone(self.transformer).fit(probe)
        _check_row_wise(fitted, probe, self._label())
        self.transformer_ = fitted
        return self

    def transform(self, X: Any) -> Any:
        """Apply the function, refusing an output with another number of rows.

        Parameters
        ----------
        X : DataFrame or array-like
            Rows to transform (during the pipeline's ``fit``, the private
            table or the previous step's output of it).

        Returns
        -------
        The function's output, one row per row of ``X``.
        """
        check_is_fitted(self, "transformer_")
        out = self.transformer_.transform(X)
        if _n_rows(out) != _n_rows(X):
            raise ValueError(f"{self._label()} changed the number of rows of the table it "
                             "transformed: the function is not row-wise, and the pipeline's "
                             "privacy guarantee would not hold.")
        return out

    def inverse_transform(self, X: Any) -> Any:
        """Apply the inverse function (post-processing of synthetic rows).

        Parameters
        ----------
        X : DataFrame or array-like
            Rows in the function's output space, e.g. synthetic ones.

        Returns
        -------
        The inverse function's output.
        """
        check_is_fitted(self, "transformer_")
        return self.transformer_.inverse_transform(X)

    def _label(self) -> str:
        func = getattr(self.transformer, "func", None)
        name = "identity" if func is None else getattr(func, "__name__", type(func).__name__)
        return f"RowWise(FunctionTransformer({name}))"

    def _probe_like(self, X: Any) -> Any:
        """The public probe table: ``probe`` checked against ``X``'s schema, or made up."""
        if self.probe is None:
            return _schema_probe(X)
        probe = self.probe
        if _n_rows(probe) < 2:
            raise ValueError("probe must hold at least two public rows, to check that "
                             "rows are mapped independently.")
        if np.ndim(probe) != np.ndim(X) or np.shape(probe)[1:] != np.shape(X)[1:] or (
                hasattr(X, "columns") and list(getattr(probe, "columns", [])) != list(X.columns)):
            raise ValueError(f"probe must have the columns of the input of {self._label()}.")
        return probe


def _n_rows(table: Any) -> int:
    return int(table.shape[0]) if hasattr(table, "shape") else len(table)


def _schema_probe(X: Any) -> Any:
    """A table with ``X``'s columns and dtypes and made-up values (reads no row)."""
    if isinstance(X, pd.DataFrame):
        columns = [_probe_values(dtype, f"column {name!r}") for name, dtype in X.dtypes.items()]
        return pd.DataFrame(dict(enumerate(columns))).set_axis(X.columns, axis=1)
    if isinstance(X, pd.Series):
        return pd.Series(_probe_values(X.dtype, "the input"), name=X.name)
    if not hasattr(X, "dtype"):
        raise TypeError("RowWise builds its probe table from a DataFrame's or an array's "
                        "dtypes; pass probe=<a few public rows> for other inputs.")
    values = np.asarray(_probe_values(X.dtype, "the input"))
    shape = (len(values),) + tuple(np.shape(X)[1:])
    return np.broadcast_to(values.reshape((-1,) + (1,) * (len(shape) - 1)), shape).copy()


def _probe_values(dtype: Any, where: str) -> Any:
    """Seven distinct, unsorted values of ``dtype``, none read from any row."""
    order = np.array(_PROBE_ORDER)
    if pd.api.types.is_bool_dtype(dtype):
        return pd.array(order % 2 == 1, dtype=dtype)
    if pd.api.types.is_integer_dtype(dtype):
        return pd.array(order, dtype=dtype)
    if pd.api.types.is_float_dtype(dtype):
        return pd.array(order + 0.5, dtype=dtype)
    if pd.api.types.is_datetime64_any_dtype(dtype):
        days = pd.Timestamp("2000-01-01") + pd.to_timedelta(order, unit="D")
        tz = getattr(dtype, "tz", None)
        return pd.Series(days if tz is None else days.tz_localize(tz)).astype(dtype).array
    if pd.api.types.is_timedelta64_dtype(dtype):
        return pd.Series(pd.to_timedelta(order, unit="D")).astype(dtype).array
    words = [f"value{k}" for k in order]
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.Categorical(words)
    if isinstance(dtype, pd.StringDtype):
        return pd.array(words, dtype=dtype)
    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        return np.array(words, dtype=object)
    raise TypeError(f"RowWise cannot make up probe values for {where} (dtype {dtype}); "
                    "pass probe=<a few public rows>.")


def _check_row_wise(fitted: FunctionTransformer, probe: Any, label: str) -> None:
    """Refuse a function that, on the public probe, changes the row count or mixes rows."""
    try:
        whole = fitted.transform(probe)
        alone = [fitted.transform(_rows(probe, [i])) for i in range(_n_rows(probe))]
    except Exception as error:  # the user's function on made-up values
        raise ValueError(f"{label} failed on its public probe table ({type(error).__name__}: "
                         f"{error}); pass probe=<a few public rows> that it accepts.") from error
    if _n_rows(whole) != _n_rows(probe):
        raise ValueError(f"{label} turned the {_n_rows(probe)} rows of its public probe table "
                         f"into {_n_rows(whole)}: it does not keep the number of rows, so it "
                         "is not row-wise.")
    for i, row in enumerate(alone):
        if not _same_rows(_rows(whole, [i]), row):
            raise ValueError(f"{label} maps row {i} of its public probe table differently "
                             "alone than among the other rows: it mixes rows (a column "
                             "statistic, an order, ...), so it is not row-wise.")


def _rows(table: Any, index: list[int]) -> Any:
    if isinstance(table, (pd.DataFrame, pd.Series)):
        return table.iloc[index]
    if hasattr(table, "tocsr"):
        return table.tocsr()[index]
    return np.asarray(table)[index]


def _same_rows(left: Any, right: Any) -> bool:
    """Whether two outputs hold the same values (numbers up to float rounding)."""
    left, right = _as_frame(left), _as_frame(right)
    if left.shape != right.shape:
        return False
    return all(_same_column(left.iloc[:, j], right.iloc[:, j]) for j in range(left.shape[1]))


def _as_frame(out: Any) -> pd.DataFrame:
    if hasattr(out, "toarray"):
        out = out.toarray()
    if isinstance(out, pd.Series):
        out = out.to_frame()
    if not isinstance(out, pd.DataFrame):
        values = np.asarray(out)
        out = pd.DataFrame(values.reshape(len(values), -1) if values.ndim else [[values]])
    return out.reset_index(drop=True)


def _same_column(left: pd.Series, right: pd.Series) -> bool:
    numeric = all(pd.api.types.is_numeric_dtype(c) and not pd.api.types.is_bool_dtype(c)
                  for c in (left, right))
    if numeric:
        return bool(np.allclose(left.to_numpy(float, na_value=np.nan),
                                right.to_numpy(float, na_value=np.nan),
                                rtol=1e-9, atol=1e-12, equal_nan=True))
    left, right = left.astype(object), right.astype(object)
    return bool(((left == right) | (left.isna() & right.isna())).all())


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
        (or run a function not declared :class:`RowWise` on them) anyway,
        with a :class:`~sklearn_dpsynth.exceptions.PrivacyWarning` naming
        them.  The output is then *not* differentially private.

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
    on data that is not private and every :class:`RowWise` declaration is
    true.  A row-wise step maps neighbouring tables (one row apart) to
    neighbouring tables, so the synthesizer's sensitivity still holds;
    ``"passthrough"`` and ``RowWise`` steps are fitted on no private row.
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
        synthesizer._fit_in_budget(data, ledger)
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
            if isinstance(step, RowWise) and not isinstance(step.transformer,
                                                            FunctionTransformer):
                raise TypeError(f"step {name!r}: RowWise wraps a "
                                "sklearn.preprocessing.FunctionTransformer, got "
                                f"{type(step.transformer).__name__}.")
            kind = step_privacy(step)
            if kind == "non-private" and not self.allow_non_private:
                raise ValueError(_refusal(name, step))
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
            warnings.warn(_leak_warning(name, step), PrivacyWarning, stacklevel=3)
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


def _refusal(name: str, step: Any) -> str:
    """Why a non-private step is refused (names the step, never a value)."""
    what = f"step {name!r} ({type(step).__name__})"
    if _runs_undeclared_function(step):
        return (f"{what} runs a function on the private table that is not declared "
                "row-wise: a function that mixes rows (centring, sorting, duplicating rows) "
                "breaks the privacy guarantee. If it maps each row on its own and keeps the "
                "row count, wrap the FunctionTransformer in "
                "sklearn_dpsynth.pipeline.RowWise; otherwise pass allow_non_private=True "
                "to accept the leak.")
    return (f"{what} would be fitted on the private table and reads it without "
            "protection. Fit it on public data first (wrap it in "
            "sklearn.frozen.FrozenEstimator), use a data-independent or differentially "
            "private step (TableDiscretizer), or pass allow_non_private=True to accept "
            "the leak.")


def _leak_warning(name: str, step: Any) -> str:
    """The PrivacyWarning of a non-private step fitted anyway."""
    what = f"step {name!r} ({type(step).__name__})"
    if _runs_undeclared_function(step):
        return (f"{what} runs a function not declared row-wise on the private table: if "
                "it mixes rows, one row moves many and the model is not differentially "
                "private.")
    return (f"{what} is fitted on the private table without differential privacy: what "
            "it learns (bounds, categories, statistics) is released with the model.")


def _is_passthrough(step: Any) -> bool:
    return step is None or (isinstance(step, str) and step == "passthrough")
