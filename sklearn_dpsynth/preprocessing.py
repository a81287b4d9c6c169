"""Turning a mixed-type table into integer codes, privately, and back.

Three ways to get a column's domain, in order of preference:

1. **Declared** (``domain=``): public, costs nothing.
2. **Learned privately** (the default, ``preprocessing="private"``): a small
   share of the budget is spent, each access recorded in the ledger:

   * numeric bounds: one Gaussian-noised histogram over the cells of a
     fixed, data-independent grid (0 and ``±m·10^k``), plus a cell for
     missing values (L2 sensitivity 1).  The bounds are the outer edges of
     the lowest and highest cells whose noisy count exceeds four noise
     standard deviations; values outside are clipped into that range, which
     is cut into ``n_bins`` uniform bins;
   * categorical supports: a thresholded Gaussian histogram over the
     observed values (Gaussian partition selection): a value is kept when
     its noisy count exceeds ``1 + sigma * z`` where ``z`` is the
     ``1 - delta_col`` normal quantile, so a value present in only one of
     two neighbouring tables is released with probability at most
     ``delta_col`` -- this is where the budget's ``delta`` is used.  At
     most ``max_categories`` values are kept (largest noisy counts); every
     other value maps to an ``"other"`` code.
3. **Read from the data** (``preprocessing="non-private"``): bounds and
   category lists are read exactly; a
   :class:`~sklearn_dpsynth.exceptions.PrivacyWarning` names them.

Column *types* (numeric vs categorical, integer vs float, bool) are read
from the dtypes: they are schema, not data.  So is the missing-value code
of a learned column: it is reserved whenever the dtype can hold a missing
value (float, object, string, nullable dtypes), whether or not the data
has one, so that its presence is never revealed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .domain import ColumnSpec, Domain, spec_from_declaration
from .exceptions import PrivacyWarning
from .privacy import PrivacyLedger, epsilon_to_rho

__all__ = [
    "TableDiscretizer",
    "domain_from_public_data",
    "InputForm",
    "learn_domain",
    "candidate_grid",
    "check_table",
]

#: A cell of the private range histogram counts as occupied when its noisy
#: count exceeds this many noise standard deviations (a false positive
#: among the ~290 cells then has probability about 1e-2).
_BOUND_THRESHOLD = 4.0


def candidate_grid() -> np.ndarray:
    """The public grid of values that private numeric bounds are chosen from.

    Returns
    -------
    grid : ndarray
        0 and ``±m·10^k`` for ``m`` in {1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9}
        and ``k`` in -3..9, sorted.
    """
    mantissas = np.array([1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9])
    positive = (mantissas[None, :] * 10.0 ** np.arange(-3, 10)[:, None]).ravel()
    return np.unique(np.concatenate([-positive, [0.0], positive]))


# --------------------------------------------------------------------- input
@dataclass
class InputForm:
    """What the caller passed to ``fit``: enough to give rows back in kind.

    Attributes
    ----------
    columns : list
        Column names (positions for arrays).
    dtypes : list
        Column dtypes (for a DataFrame) or the array dtype repeated.
    is_frame : bool
        Whether ``fit`` received a DataFrame.
    """

    columns: list
    dtypes: list
    is_frame: bool

    def restore(self, decoded: pd.DataFrame) -> pd.DataFrame | np.ndarray:
        """Cast decoded columns back to the input's dtypes and container."""
        out = {}
        for name, dtype in zip(self.columns, self.dtypes):
            out[name] = _cast(decoded[name], dtype)
        frame = pd.DataFrame(out, columns=pd.Index(self.columns, dtype=object))
        if self.is_frame:
            frame.columns = pd.Index(self.columns)
            return frame
        return frame.to_numpy(dtype=self.dtypes[0] if self.dtypes else None)


def _cast(values: pd.Series, dtype: Any) -> pd.Series:
    if isinstance(dtype, pd.CategoricalDtype):
        present = [v for v in pd.unique(values) if not pd.isna(v)]
        categories = list(dtype.categories) + [v for v in present if v not in set(dtype.categories)]
        return pd.Series(pd.Categorical(values, categories=categories))
    if pd.api.types.is_bool_dtype(dtype) and not values.isna().any():
        return values.astype(bool)
    if pd.api.types.is_integer_dtype(dtype) and values.isna().any():
        return values.astype("Int64" if isinstance(dtype, np.dtype) else dtype)
    try:
        return values.astype(dtype)
    except (TypeError, ValueError):
        return values


def check_table(X: Any) -> tuple[pd.DataFrame, InputForm]:
    """Validate a table and return it as a DataFrame with its input form.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n_samples, n_features)

    Returns
    -------
    frame : pandas.DataFrame
    form : InputForm

    Raises
    ------
    ValueError
        On an empty table, duplicate column names, a non-2-D array or an
        all-missing column (named).
    """
    if isinstance(X, pd.DataFrame):
        frame = X
        form = InputForm(list(X.columns), list(X.dtypes), True)
    else:
        if hasattr(X, "toarray"):
            raise TypeError("sparse input is not supported; pass a dense table.")
        array = np.asarray(X)
        if array.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {array.shape}.")
        frame = pd.DataFrame(array, columns=list(range(array.shape[1])))
        if array.dtype != object:
            frame = frame.astype(array.dtype)
        form = InputForm(list(range(array.shape[1])), [array.dtype] * array.shape[1], False)
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError(f"X is empty: got shape {frame.shape}; need at least one row and column.")
    if frame.columns.duplicated().any():
        dup = list(frame.columns[frame.columns.duplicated()])
        raise ValueError(f"X has duplicate column names: {dup}.")
    all_missing = [c for c in frame.columns if frame[c].isna().all()]
    if all_missing:
        raise ValueError(f"column(s) {all_missing} contain only missing values.")
    return frame, form


def _is_numeric(series: pd.Series) -> bool:
    return (pd.api.types.is_numeric_dtype(series.dtype)
            and not pd.api.types.is_bool_dtype(series.dtype))


def _is_integer(series: pd.Series) -> bool:
    return pd.api.types.is_integer_dtype(series.dtype)


def _public_spec(series: pd.Series) -> ColumnSpec | None:
    """Specs known from the dtype alone (booleans)."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return ColumnSpec(series.name, "categorical", categories=[False, True],
                          missing=bool(series.dtype == object))
    return None


# ------------------------------------------------------- private learning
def _private_numeric(name, series, ledger, rng, rho, n_bins) -> ColumnSpec:
    """Bounds from one noisy histogram over the cells of the public grid."""
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    grid = candidate_grid()
    cells = np.searchsorted(grid, values[~np.isnan(values)], side="right")  # 0..len(grid)
    counts = np.bincount(cells, minlength=len(grid) + 1).astype(float)
    sigma = ledger.sigma_for(rho)
    noisy = ledger.gaussian(counts, sigma=sigma, rng=rng, target=f"range of {name!r}",
                            n_cells=counts.size)
    passing = np.flatnonzero(noisy > _BOUND_THRESHOLD * sigma)
    if passing.size == 0:
        passing = np.array([int(np.argmax(noisy))])
    low, high = _cell_edges(grid, passing[0])[0], _cell_edges(grid, passing[-1])[1]
    return ColumnSpec(name, "numeric", edges=np.linspace(low, high, n_bins + 1),
                      integer=_is_integer(series), missing=_can_hold_missing(series),
                      clip=True)


def _can_hold_missing(series: pd.Series) -> bool:
    """Whether the column's dtype admits missing values (schema, not data)."""
    dtype = series.dtype
    return not (isinstance(dtype, np.dtype) and dtype.kind in "biu")


def _cell_edges(grid: np.ndarray, cell: int) -> tuple[float, float]:
    """Finite edges of histogram cell ``cell`` (cell i is [grid[i-1], grid[i]))."""
    if cell == 0:
        return float(grid[0]) * 10.0, float(grid[0])
    if cell == len(grid):
        return float(grid[-1]), float(grid[-1]) * 10.0
    return float(grid[cell - 1]), float(grid[cell])


def _private_categorical(name, series, ledger, rng, rho, delta, max_categories) -> ColumnSpec:
    counts = series.value_counts(dropna=True, sort=False)
    sigma = ledger.sigma_for(rho)
    threshold = 1.0 + sigma * norm.isf(delta)
    ledger.spend(target=f"categories of {name!r}", mechanism="thresholded gaussian histogram",
                 rho=0.5 / sigma**2, delta=delta, noise_scale=sigma, sensitivity=1.0,
                 threshold=threshold)
    noisy = counts.to_numpy(dtype=float) + rng.normal(0.0, sigma, size=len(counts))
    keep = np.flatnonzero(noisy > threshold)
    keep = keep[np.argsort(-noisy[keep], kind="stable")][:max_categories]
    categories = [counts.index[i] for i in sorted(keep, key=lambda i: str(counts.index[i]))]
    return ColumnSpec(name, "categorical", categories=categories, other=True,
                      missing=_can_hold_missing(series))


def _nonprivate_spec(name, series, n_bins, max_categories) -> ColumnSpec:
    has_missing = bool(series.isna().any())
    present = series.dropna()
    if _is_numeric(series):
        low, high = float(present.min()), float(present.max())
        if high <= low:
            high = low + 1.0
        return ColumnSpec(name, "numeric", edges=np.linspace(low, high, n_bins + 1),
                          integer=_is_integer(series), missing=has_missing, clip=True)
    counts = present.value_counts()
    top = list(counts.index[:max_categories])
    try:
        top = sorted(top)
    except TypeError:
        top = sorted(top, key=str)
    return ColumnSpec(name, "categorical", categories=top,
                      other=len(counts) > max_categories, missing=has_missing)


def learn_domain(
    frame: pd.DataFrame,
    declared: Mapping[Hashable, Any] | None,
    *,
    n_bins: int = 32,
    preprocessing: str = "private",
    ledger: PrivacyLedger | None = None,
    rng: np.random.Generator | None = None,
    rho: float = 0.0,
    delta: float = 0.0,
    max_categories: int = 99,
) -> Domain:
    """Complete a (possibly partial) declared domain for the columns of ``frame``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The private table.
    declared : mapping or None
        Public entries ``{column: entry}``; see
        :func:`~sklearn_dpsynth.domain.spec_from_declaration`.
    n_bins : int, default=32
        Uniform bins for numeric columns.
    preprocessing : {"private", "non-private"}, default="private"
        How undeclared columns are learned.
    ledger : PrivacyLedger, optional
        Required when a column is learned privately.
    rng : numpy.random.Generator, optional
        Noise source for private learning.
    rho : float, default=0.0
        zCDP budget for all privately learned columns together.
    delta : float, default=0.0
        Additive delta for all thresholded category histograms together.
    max_categories : int, default=99
        Categories kept per learned column; the rest merge into "other".

    Returns
    -------
    Domain
        In the column order of ``frame``.
    """
    declared = dict(declared or {})
    unknown = [c for c in declared if c not in set(frame.columns)]
    if unknown:
        raise ValueError(f"domain names columns not in X: {unknown}.")
    specs: dict[Hashable, ColumnSpec | None] = {}
    for name in frame.columns:
        series = frame[name]
        if name in declared:
            specs[name] = spec_from_declaration(name, declared[name], n_bins,
                                                _is_integer(series))
        else:
            specs[name] = _public_spec(series)
    todo = [name for name, spec in specs.items() if spec is None]
    if todo and preprocessing == "non-private":
        _warn_nonprivate(frame, todo)
        for name in todo:
            specs[name] = _nonprivate_spec(name, frame[name], n_bins, max_categories)
    elif todo:
        if ledger is None or rng is None or rho <= 0 or delta <= 0:
            raise ValueError(
                f"columns {todo} have no declared domain: declare them with domain=, "
                "give a privacy budget to learn them, or set preprocessing='non-private'.")
        n_cat = sum(not _is_numeric(frame[c]) for c in todo)
        for name in todo:
            series = frame[name]
            if _is_numeric(series):
                specs[name] = _private_numeric(name, series, ledger, rng, rho / len(todo), n_bins)
            else:
                specs[name] = _private_categorical(name, series, ledger, rng, rho / len(todo),
                                                   delta / n_cat, max_categories)
    return Domain([specs[name] for name in frame.columns])


def _warn_nonprivate(frame: pd.DataFrame, columns: Sequence[Hashable]) -> None:
    numeric = [c for c in columns if _is_numeric(frame[c])]
    categorical = [c for c in columns if c not in set(numeric)]
    leaked = []
    if numeric:
        leaked.append(f"the exact minimum and maximum of {numeric}")
    if categorical:
        leaked.append(f"the exact category lists of {categorical}")
    warnings.warn(
        "preprocessing='non-private': " + " and ".join(leaked)
        + " were read from the private data without privacy protection; the result "
        "is not differentially private. Declare them with domain= to avoid this.",
        PrivacyWarning, stacklevel=3)


# --------------------------------------------------------------- public data
def domain_from_public_data(
    public: pd.DataFrame,
    *,
    n_bins: int = 32,
    strategy: str = "uniform",
    max_categories: int = 99,
) -> dict:
    """Build a domain declaration from a *public* table (costs no budget).

    Bin edges come from scikit-learn's ``KBinsDiscretizer`` fitted on the
    public table, so every strategy it offers can be used; category lists
    are the public table's most frequent values.  Pass the result as
    ``domain=`` to a synthesizer or :class:`TableDiscretizer`.

    Parameters
    ----------
    public : pandas.DataFrame
        A table that is not private (e.g. an older release, or a public
        split); its columns should be those of the private table.
    n_bins : int, default=32
        Bins per numeric column (fewer when the public column has fewer
        distinct values).
    strategy : {"uniform", "quantile", "kmeans"}, default="uniform"
        Binning strategy of ``KBinsDiscretizer``.
    max_categories : int, default=99
        Categories kept per column; rarer public values and values unseen
        in the public table map to "other".

    Returns
    -------
    declaration : dict
        ``{column: entry}`` with ``{"edges": ..., "clip": True}`` for numeric
        columns (private values outside the public range are clipped) and
        ``{"categories": ..., "other": True}`` for the others.
    """
    from sklearn.preprocessing import KBinsDiscretizer

    if strategy not in ("uniform", "quantile", "kmeans"):
        raise ValueError(f"strategy must be 'uniform', 'quantile' or 'kmeans', got {strategy!r}.")
    frame, _ = check_table(public)
    declaration: dict = {}
    for name in frame.columns:
        series = frame[name]
        present = series.dropna()
        missing = _can_hold_missing(series)
        if _is_numeric(series):
            n_distinct = present.nunique()
            bins = max(1, min(n_bins, n_distinct))
            edges = np.unique(_public_edges(present, bins, strategy, KBinsDiscretizer))
            if edges.size < 2:
                edges = np.array([edges[0], edges[0] + 1.0])
            declaration[name] = {"kind": "numeric", "edges": edges, "clip": True,
                                 "integer": _is_integer(series), "missing": missing}
        else:
            categories = list(present.value_counts().index[:max_categories])
            declaration[name] = {"categories": sorted(categories, key=str), "other": True,
                                 "missing": missing}
    return declaration


def _public_edges(values: pd.Series, bins: int, strategy: str, kbins) -> np.ndarray:
    if bins < 2:
        return np.array([values.min(), values.max()], dtype=float)
    options = {"quantile_method": "averaged_inverted_cdf"} if strategy == "quantile" else {}
    model = kbins(n_bins=bins, encode="ordinal", strategy=strategy, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # merged near-duplicate edges
        model.fit(values.to_numpy(dtype=float).reshape(-1, 1))
    return np.asarray(model.bin_edges_[0], dtype=float)


# ------------------------------------------------------------- transformer
class TableDiscretizer(TransformerMixin, BaseEstimator):
    """Map a mixed-type table to integer codes and back.

    Parameters
    ----------
    domain : dict, optional
        Public entries ``{column: entry}``: an int ``k`` (codes
        ``0..k-1``), a list of categories, a ``(low, high)`` tuple (numeric,
        ``n_bins`` uniform bins) or a dict (see
        ``sklearn_dpsynth.domain.spec_from_declaration``).  Columns
        not declared are learned as ``preprocessing`` says.
    n_bins : int, default=32
        Uniform bins of numeric columns.
    preprocessing : {"private", "non-private"}, default="private"
        ``"private"`` learns undeclared columns under DP and needs
        ``epsilon``/``delta`` in :meth:`fit`; ``"non-private"`` reads them
        from the data and emits a :class:`PrivacyWarning`.
    max_categories : int, default=99
        Categories kept per learned column; the rest map to "other".
    bin_value : {"midpoint", "uniform"}, default="midpoint"
        Where :meth:`inverse_transform` places a numeric value in its bin.
    random_state : int, Generator or None, default=None
        Noise for private learning and uniform placement in bins.

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

    _parameter_constraints: dict = {
        "domain": [dict, None],
        "n_bins": [int],
        "preprocessing": [str],
        "max_categories": [int],
        "bin_value": [str],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(self, domain=None, *, n_bins=32, preprocessing="private",
                 max_categories=99, bin_value="midpoint", random_state=None):
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
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : ignored
        epsilon, delta : float, optional
            Budget for learning undeclared columns privately; all of it is
            spent on that (half of ``delta`` on the category thresholds).

        Returns
        -------
        self
        """
        from ._validation import check_common_params, check_rng
        check_common_params(self)
        frame, self._form = check_table(X)
        self._rng = check_rng(self.random_state)
        ledger = None
        if epsilon is not None or delta is not None:
            ledger = PrivacyLedger(epsilon, 1e-9 if delta is None else delta)
        self.domain_ = learn_domain(
            frame, self.domain, n_bins=self.n_bins, preprocessing=self.preprocessing,
            ledger=ledger, rng=self._rng,
            rho=0.0 if ledger is None else epsilon_to_rho(ledger.epsilon, ledger.delta / 2),
            delta=0.0 if ledger is None else ledger.delta / 2,
            max_categories=self.max_categories)
        self.privacy_ledger_ = ledger if ledger is not None and len(ledger) else None
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
        frame = align_columns(X, self._form)
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
        return self._form.restore(decoded)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of the encoded columns (the input's)."""
        check_is_fitted(self, "domain_")
        return np.asarray([str(c) for c in self._form.columns], dtype=object)


def _set_feature_info(estimator: BaseEstimator, form: InputForm) -> None:
    estimator.n_features_in_ = len(form.columns)
    if form.is_frame and all(isinstance(c, str) for c in form.columns):
        estimator.feature_names_in_ = np.asarray(form.columns, dtype=object)


def align_columns(X: Any, form: InputForm) -> pd.DataFrame:
    """Check that ``X`` has the fitted columns and return them in fitted order.

    Parameters
    ----------
    X : DataFrame or array-like
    form : InputForm
        The fitted input's form.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        Naming missing or unexpected columns, or a wrong column count.
    """
    if isinstance(X, pd.DataFrame) and form.is_frame:
        missing = [c for c in form.columns if c not in set(X.columns)]
        extra = [c for c in X.columns if c not in set(form.columns)]
        if missing or extra:
            raise ValueError(f"X's columns do not match those seen in fit: missing {missing}, "
                             f"unexpected {extra}.")
        frame = X[form.columns]
    else:
        array = X.to_numpy() if isinstance(X, pd.DataFrame) else np.asarray(X)
        if array.ndim != 2 or array.shape[1] != len(form.columns):
            raise ValueError(f"X must have {len(form.columns)} columns as in fit, got shape "
                             f"{array.shape}.")
        frame = pd.DataFrame(array, columns=form.columns)
    if len(frame) == 0:
        raise ValueError("X is empty: need at least one row.")
    return frame
