"""Machine-learning efficacy: train on synthetic data, test on real held-out data."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, f1_score, r2_score, roc_auc_score
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from ..domain import ColumnSpec
from .threads import check_n_jobs, thread_limit
from .tables import (
    CATEGORICAL,
    Features,
    check_choice,
    check_domain,
    column_kinds,
    encode_column,
    mixed_features,
    numeric_values,
    prepare_tables,
    sorted_if_possible,
)

__all__ = ["ml_efficacy", "MODELS"]

#: Model names understood by :func:`ml_efficacy`.
MODELS = ("logistic", "boosting", "xgboost")
_MAX_NATIVE_CATEGORIES = 255
# An integer target with more distinct values than this is a regression target.
_MAX_AUTO_CLASSES = 20


def _infer_task(train_target: pd.Series, test_target: pd.Series, kind: str) -> str:
    """``"classification"`` for categorical, boolean or few-valued integer targets."""
    if kind == CATEGORICAL:
        return "classification"
    both = pd.concat([train_target, test_target], ignore_index=True).dropna()
    integral = pd.api.types.is_integer_dtype(both.dtype) or bool(
        np.all(np.asarray(both, dtype=float) == np.round(np.asarray(both, dtype=float)))
    )
    return "classification" if integral and both.nunique() <= _MAX_AUTO_CLASSES else "regression"


def _linear_pipeline(features: Features, task: str, seed: int) -> Pipeline:
    """One-hot encoding of categories, scaling of numbers, then a linear model."""
    categorical = np.flatnonzero(features.categorical)
    numeric = np.flatnonzero(~features.categorical)
    encode = ColumnTransformer([
        ("categorical", OneHotEncoder(
            categories=[np.arange(features.sizes[j], dtype=float) for j in categorical],
            handle_unknown="ignore"), categorical),
        ("numeric", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric),
    ])
    if task == "classification":
        model = LogisticRegression(max_iter=1000, random_state=seed)
    else:
        model = Ridge(alpha=1.0)
    return Pipeline([("encode", encode), ("model", model)])


def _boosting(features: Features, task: str, seed: int) -> Any:
    """HistGradientBoosting with native categorical splits where possible."""
    native = features.categorical & (np.array(features.sizes) <= _MAX_NATIVE_CATEGORIES)
    native_arg = native if native.any() else None
    if task == "classification":
        return HistGradientBoostingClassifier(categorical_features=native_arg, random_state=seed)
    return HistGradientBoostingRegressor(categorical_features=native_arg, random_state=seed)


def _xgboost(task: str, seed: int) -> Any:
    """xgboost's classifier or regressor, if the package is installed."""
    try:
        import xgboost
    except ImportError as exc:
        raise ImportError("ml_efficacy model 'xgboost' needs the xgboost package.") from exc
    if task == "classification":
        return xgboost.XGBClassifier(n_estimators=200, tree_method="hist", random_state=seed)
    return xgboost.XGBRegressor(n_estimators=200, tree_method="hist", random_state=seed)


def _make_model(name: str, features: Features, task: str, seed: int) -> Any:
    """Estimator called ``name`` for the task."""
    if name == "logistic":
        return _linear_pipeline(features, task, seed)
    if name == "boosting":
        return _boosting(features, task, seed)
    return _xgboost(task, seed)


def _class_scores(model: Any, X: np.ndarray, n_classes: int) -> np.ndarray:
    """Predicted probabilities of every class code ``0..n_classes-1``."""
    proba = model.predict_proba(X)
    scores = np.zeros((len(X), n_classes))
    scores[:, np.asarray(model.classes_, dtype=int)] = proba
    return scores


def _auc(y_test: np.ndarray, scores: np.ndarray, positive: int | None) -> float:
    """Binary ROC-AUC, or the macro one-vs-rest AUC over the classes of ``y_test``."""
    present = np.unique(y_test)
    if present.size < 2:
        return float("nan")
    if positive is not None:
        return float(roc_auc_score(y_test == positive, scores[:, positive]))
    return float(np.mean([roc_auc_score(y_test == c, scores[:, c]) for c in present]))


def _classification_metrics(model: Any, X_test: np.ndarray, y_test: np.ndarray,
                            n_classes: int, positive: int | None) -> dict:
    """F1, ROC-AUC and accuracy of a fitted classifier on the real test set."""
    predicted = model.predict(X_test)
    scores = _class_scores(model, X_test, n_classes)
    if positive is not None:
        f1 = f1_score(y_test, predicted, pos_label=positive, average="binary", zero_division=0)
    else:
        f1 = f1_score(y_test, predicted, average="macro", zero_division=0)
    return {"f1": float(f1), "roc_auc": _auc(y_test, scores, positive),
            "accuracy": float(accuracy_score(y_test, predicted))}


def _target_codes(train: pd.Series, test: pd.Series, target: Any,
                  spec: ColumnSpec | None) -> tuple:
    """Class codes of the target in both tables and the class labels.

    Without a domain that lists the classes (codes or an exhaustive category
    list) the classes are the sorted values seen in either table, so that
    the largest code is the last class in sorted order.
    """
    if train.isna().any() or test.isna().any():
        raise ValueError(f"Target column {target!r} has missing values.")
    if spec is None or spec.kind == "numeric" or spec.other:
        seen = pd.unique(pd.concat([train, test], ignore_index=True).astype(object))
        spec = ColumnSpec(target, CATEGORICAL, categories=sorted_if_possible(list(seen)))
    (y_train, y_test), _, labels = encode_column([train, test], target, CATEGORICAL, spec, 1)
    return y_train, y_test, list(labels)


def _positive_class(labels: list, y_train: np.ndarray, y_test: np.ndarray, pos_label: Any) -> int | None:
    """Code of the positive class for binary problems, None for multiclass."""
    if pos_label is not None:
        if pos_label not in labels:
            raise ValueError(f"pos_label={pos_label!r} is not a class of the target.")
        return labels.index(pos_label)
    used = np.union1d(np.unique(y_train), np.unique(y_test))
    return int(used.max()) if used.size == 2 else None


def _classification(features: Features, y_train: np.ndarray, y_test: np.ndarray, labels: list,
                    models: Sequence[str], pos_label: Any, seed: int) -> list[dict]:
    """Rows of per-model classification metrics."""
    X_train, X_test = features.matrices
    positive = _positive_class(labels, y_train, y_test, pos_label)
    single = np.unique(y_train).size < 2
    if single:
        warnings.warn("The synthetic data has a single class: ml_efficacy predicts it "
                      "for every test row (constant scores, ROC-AUC 0.5).", UserWarning,
                      stacklevel=3)
    rows = []
    for name in models:
        if single:
            model = DummyClassifier(strategy="prior")
        else:
            model = _make_model(name, features, "classification", seed)
        model.fit(X_train, y_train)
        metrics = _classification_metrics(model, X_test, y_test, len(labels), positive)
        rows += [{"model": name, "metric": m, "value": v} for m, v in metrics.items()]
    return rows


def _regression(features: Features, y_train: np.ndarray, y_test: np.ndarray,
                models: Sequence[str], seed: int) -> list[dict]:
    """Rows of per-model R^2 on the real test set."""
    X_train, X_test = features.matrices
    rows = []
    for name in models:
        model = _make_model(name, features, "regression", seed)
        model.fit(X_train, y_train)
        rows.append({"model": name, "metric": "r2", "value": float(r2_score(y_test, model.predict(X_test)))})
    return rows


def _check_models(models: Any) -> tuple[str, ...]:
    """Validate the model names."""
    models = (models,) if isinstance(models, str) else tuple(models)
    if not models:
        raise ValueError("models must name at least one model.")
    for name in models:
        check_choice(name, "models", MODELS)
    return models


def _with_means(rows: list[dict]) -> pd.DataFrame:
    """Tidy frame of per-model rows plus ``model="mean"`` averages per metric."""
    frame = pd.DataFrame(rows, columns=["model", "metric", "value"])
    means = frame.groupby("metric", sort=False)["value"].mean().reset_index()
    means.insert(0, "model", "mean")
    return pd.concat([frame, means], ignore_index=True)


def ml_efficacy(
    synth: Any,
    real_test: Any,
    target: Any,
    *,
    task: str = "auto",
    models: Sequence[str] = ("logistic", "boosting"),
    domain: Mapping | None = None,
    pos_label: Any = None,
    random_state: Any = None,
    n_jobs: int | None = 1,
) -> pd.DataFrame:
    """Train models on synthetic data and evaluate them on real held-out data.

    Models: ``"logistic"`` is a one-hot (categorical) + standard-scaling
    (numeric) pipeline ending in LogisticRegression (Ridge regression for a
    regression task); ``"boosting"`` is HistGradientBoosting (native
    categorical splits); ``"xgboost"`` needs the xgboost package.

    Classification metrics: F1 (of the positive class for a binary target,
    macro-averaged otherwise), ROC-AUC (binary, or macro one-vs-rest over the
    classes present in the test set; NaN if the test set has a single class)
    and accuracy.  Regression metric: R^2 (``r2``).

    If the synthetic target has a single class, no model can be trained: a
    constant predictor of that class is used for every model (with a
    UserWarning), so accuracy is the test share of that class, F1 follows
    from these predictions (0 if the class is not the positive one) and
    ROC-AUC is 0.5.

    Parameters
    ----------
    synth : DataFrame or 2-D array
        Synthetic table (training set), including the target column.
    real_test : DataFrame or 2-D array
        Real held-out table with the same columns (test set).
    target : hashable
        Name (or position, for arrays) of the target column.
    task : {"auto", "classification", "regression"}, default="auto"
        ``"auto"``: classification for categorical targets and integer targets
        with at most 20 distinct values, regression otherwise.
    models : sequence of {"logistic", "boosting", "xgboost"}, default=("logistic", "boosting")
        Models to train.
    domain : mapping, default=None
        Column domain (decides which columns are categorical).
    pos_label : object, default=None
        Positive class of a binary target; by default the larger code (last
        category in sorted order, e.g. ``">50K"`` or ``1``).
    random_state : int or None, default=None
        Seed of the models.
    n_jobs : int or None, default=1
        Threads of the models (OpenMP and BLAS pools, limited with
        threadpoolctl); -1 uses every core, None the libraries' defaults
        (one thread per core, which oversubscribes a shared machine).

    Returns
    -------
    results : DataFrame
        Columns ``model``, ``metric``, ``value``: one row per model and
        metric, plus rows with ``model="mean"`` averaging over the models.
        F1, ROC-AUC, accuracy and R^2 are at most 1; higher is better.
    """
    check_choice(task, "task", ("auto", "classification", "regression"))
    models = _check_models(models)
    check_n_jobs(n_jobs)
    test_df, synth_df = prepare_tables(real_test, ("synth", synth))
    if target not in test_df.columns:
        raise ValueError(f"target {target!r} is not a column of the tables.")
    feature_columns = [c for c in test_df.columns if c != target]
    if not feature_columns:
        raise ValueError("ml_efficacy needs at least one feature column besides the target.")
    kind = column_kinds(test_df, domain)[target]
    if task == "auto":
        task = _infer_task(synth_df[target], test_df[target], kind)
    features = mixed_features([synth_df, test_df], domain, columns=feature_columns)
    seed = 0 if random_state is None else int(np.random.RandomState(random_state).randint(2**31 - 1))
    if task == "classification":
        spec = check_domain(domain, list(test_df.columns)).get(target)
        y_train, y_test, labels = _target_codes(synth_df[target], test_df[target], target, spec)
        with thread_limit(n_jobs):
            rows = _classification(features, y_train, y_test, labels, models, pos_label, seed)
    else:
        y_train = numeric_values(synth_df[target], target)
        y_test = numeric_values(test_df[target], target)
        if np.isnan(y_train).any() or np.isnan(y_test).any():
            raise ValueError(f"Target column {target!r} has missing values.")
        with thread_limit(n_jobs):
            rows = _regression(features, y_train, y_test, models, seed)
    return _with_means(rows)
