"""Detection: how well a classifier tells real rows from synthetic ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.utils import check_random_state

from .tables import Features, check_choice, mixed_features, prepare_tables
from .threads import check_n_jobs, thread_limit

__all__ = ["detection_score"]

# HistGradientBoosting treats a feature natively as categorical only up to
# this many categories; larger ones are given to it as ordinal codes.
_MAX_NATIVE_CATEGORIES = 255


def _subsample(matrix: np.ndarray, max_samples: int | None, rng: np.random.RandomState) -> np.ndarray:
    """At most ``max_samples`` rows of ``matrix``, drawn without replacement."""
    if max_samples is None or len(matrix) <= max_samples:
        return matrix
    return matrix[rng.choice(len(matrix), size=max_samples, replace=False)]


def _make_classifier(model: str, features: Features, seed: int) -> Any:
    """The real-vs-synthetic classifier."""
    if model == "xgboost":
        try:
            from xgboost import XGBClassifier
        except ImportError as exc:
            raise ImportError(
                "detection_score(model='xgboost') needs the xgboost package; "
                "install it or use model='hgb'."
            ) from exc
        return XGBClassifier(n_estimators=200, tree_method="hist", random_state=seed)
    native = features.categorical & (np.array(features.sizes) <= _MAX_NATIVE_CATEGORIES)
    return HistGradientBoostingClassifier(
        categorical_features=native if native.any() else None, random_state=seed
    )


def detection_score(
    real: Any,
    synth: Any,
    domain: Mapping | None = None,
    *,
    model: str = "hgb",
    cv: int = 5,
    max_samples: int | None = 20_000,
    form: str = "auc",
    random_state: Any = None,
    n_jobs: int | None = 1,
) -> float | dict:
    """Cross-validated ROC-AUC of a classifier trained to tell real from synthetic.

    Real rows are labelled 0 and synthetic rows 1; categorical columns are
    given to the classifier as category codes (native categorical splits when
    they have at most 255 categories) and numeric columns as raw values.  The
    AUC is averaged over the folds of a shuffled stratified K-fold split.

    Parameters
    ----------
    real, synth : DataFrame or 2-D array
        Real and synthetic tables with the same columns.
    domain : mapping, default=None
        Column domain (decides which columns are categorical).
    model : {"hgb", "xgboost"}, default="hgb"
        scikit-learn's HistGradientBoostingClassifier, or xgboost's
        XGBClassifier (only if xgboost is installed).
    cv : int, default=5
        Number of stratified folds (>= 2).
    max_samples : int or None, default=20_000
        Each table is subsampled to at most this many rows (None: all rows).
    form : {"auc", "1-auc", "both"}, default="auc"
        Return the AUC (0.5 = indistinguishable, 1 = perfectly detected;
        lower is better), ``1 - AUC`` (higher is better, 0.5 at best up to
        fold noise), or a dict ``{"auc": AUC, "1-auc": 1 - AUC}``.
    random_state : int, RandomState or None, default=None
        Seed of the subsampling, the folds and the classifier.
    n_jobs : int or None, default=1
        Threads of the classifier (OpenMP and BLAS pools, limited with
        threadpoolctl); -1 uses every core, None the libraries' defaults
        (one thread per core, which oversubscribes a shared machine).

    Returns
    -------
    score : float or dict
        See ``form``; the AUC lies in ``[0, 1]`` and is about 0.5 when the
        synthetic rows cannot be told apart from the real ones.
    """
    check_choice(model, "model", ("hgb", "xgboost"))
    check_choice(form, "form", ("auc", "1-auc", "both"))
    check_n_jobs(n_jobs)
    if not isinstance(cv, (int, np.integer)) or cv < 2:
        raise ValueError(f"cv must be an integer >= 2, got {cv!r}.")
    real_df, synth_df = prepare_tables(real, ("synth", synth))
    features = mixed_features([real_df, synth_df], domain)
    rng = check_random_state(random_state)
    seed = int(rng.randint(np.iinfo(np.int32).max))
    X_real = _subsample(features.matrices[0], max_samples, rng)
    X_synth = _subsample(features.matrices[1], max_samples, rng)
    if min(len(X_real), len(X_synth)) < cv:
        raise ValueError(f"Each table needs at least cv={cv} rows for detection_score.")
    X = np.vstack([X_real, X_synth])
    y = np.r_[np.zeros(len(X_real), dtype=int), np.ones(len(X_synth), dtype=int)]
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    classifier = _make_classifier(model, features, seed)
    with thread_limit(n_jobs):
        auc = float(np.mean(cross_val_score(classifier, X, y, cv=folds, scoring="roc_auc")))
    if form == "auc":
        return auc
    if form == "1-auc":
        return 1.0 - auc
    return {"auc": auc, "1-auc": 1.0 - auc}
