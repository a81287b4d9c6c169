"""Tests of the model-based metrics, the privacy sanity check, evaluate, scorers and plots."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV
from threadpoolctl import threadpool_limits

from sklearn_dpsynth.metrics import (
    detection_score,
    distance_to_closest_record,
    evaluate,
    fidelity_scorer,
    heldout_log_likelihood,
    make_fidelity_scorer,
    ml_efficacy,
    plot_marginals,
    plot_metric_vs_epsilon,
    workload_error,
)


@pytest.fixture(autouse=True)
def _single_thread():
    """OpenMP models oversubscribe a busy shared machine; one thread is fastest here."""
    with threadpool_limits(limits=1):
        yield

def _table(n, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(shift, 1.0, size=n)
    colour = rng.choice(["red", "green", "blue"], size=n)
    label = np.where(x + 0.5 * (colour == "red") + rng.normal(scale=0.3, size=n) > 0.2, ">50K", "<=50K")
    return pd.DataFrame({"x": x, "colour": colour, "z": rng.integers(0, 5, size=n), "label": label})


# ------------------------------------------------------------------ detection
def test_detection_score_separates_shifted_data_only():
    real = _table(400, 0)
    same = _table(400, 1)
    shifted = _table(400, 2, shift=3.0)
    scores = detection_score(real, same, form="both", cv=3, random_state=0)
    assert set(scores) == {"auc", "1-auc"}
    assert scores["auc"] == pytest.approx(1 - scores["1-auc"])
    assert abs(scores["auc"] - 0.5) < 0.12
    assert detection_score(real, shifted, cv=3, random_state=0) > 0.95
    assert detection_score(real, shifted, cv=3, form="1-auc", random_state=0) < 0.05


def test_detection_score_bad_parameters():
    real = _table(50, 0)
    with pytest.raises(ValueError, match="form"):
        detection_score(real, real, form="gini")
    with pytest.raises(ValueError, match="cv"):
        detection_score(real, real, cv=1)
    with pytest.raises(ValueError, match="model"):
        detection_score(real, real, model="forest")


# ----------------------------------------------------------------- ML efficacy
def test_ml_efficacy_classification_table_and_values():
    synth, test = _table(600, 0), _table(300, 1)
    result = ml_efficacy(synth, test, "label", random_state=0)
    assert list(result.columns) == ["model", "metric", "value"]
    assert set(result.model) == {"logistic", "boosting", "mean"}
    assert set(result.metric) == {"f1", "roc_auc", "accuracy"}
    values = result.set_index(["model", "metric"])["value"]
    assert values["logistic", "roc_auc"] > 0.9 and values["logistic", "accuracy"] > 0.8
    mean_acc = (values["logistic", "accuracy"] + values["boosting", "accuracy"]) / 2
    assert values["mean", "accuracy"] == pytest.approx(mean_acc)


def test_ml_efficacy_single_class_synthetic_is_graceful():
    test = _table(200, 1)
    synth = _table(100, 0).assign(label="<=50K")
    with pytest.warns(UserWarning, match="single class"):
        result = ml_efficacy(synth, test, "label")
    values = result.set_index(["model", "metric"])["value"]
    share = (test.label == "<=50K").mean()
    assert values["logistic", "accuracy"] == pytest.approx(share)
    assert values["boosting", "roc_auc"] == pytest.approx(0.5)
    # the positive class (">50K", last in sorted order) is never predicted
    assert values["mean", "f1"] == 0.0


def test_ml_efficacy_accuracy_matches_sklearn_on_own_predictions():
    synth, test = _table(300, 0), _table(150, 1)
    result = ml_efficacy(synth, test, "label", models=["boosting"], random_state=0)
    from sklearn.ensemble import HistGradientBoostingClassifier

    def encode(df):
        return np.column_stack([df.x, df.colour.map({"blue": 0, "green": 1, "red": 2}), df.z])

    model = HistGradientBoostingClassifier(categorical_features=[False, True, False],
                                           random_state=np.random.RandomState(0).randint(2**31 - 1))
    model.fit(encode(synth), synth.label)
    expected = accuracy_score(test.label, model.predict(encode(test)))
    got = result.query("model == 'boosting' and metric == 'accuracy'").value.iloc[0]
    assert got == pytest.approx(expected)


def test_ml_efficacy_regression():
    rng = np.random.default_rng(0)

    def make(n):
        x = rng.normal(size=n)
        c = rng.choice(["a", "b"], size=n)
        return pd.DataFrame({"x": x, "c": c, "y": 3 * x + 2 * (c == "a") + rng.normal(scale=0.1, size=n)})

    result = ml_efficacy(make(400), make(200), "y", random_state=0)
    assert set(result.metric) == {"r2"}
    assert (result.value > 0.9).all()


def test_ml_efficacy_bad_parameters():
    table = _table(50, 0)
    with pytest.raises(ValueError, match="target"):
        ml_efficacy(table, table, "nope")
    with pytest.raises(ValueError, match="models"):
        ml_efficacy(table, table, "label", models=["svm"])
    with pytest.raises(ValueError, match="task"):
        ml_efficacy(table, table, "label", task="ranking")


# ------------------------------------------------------------ privacy sanity
def test_distance_to_closest_record_hand_computed():
    train = pd.DataFrame({"x": [0.0, 10.0], "c": ["a", "b"]})
    copy = distance_to_closest_record(train, train)
    assert copy == {"exact_match_rate": 1.0, "dcr_median": 0.0, "dcr_p5": 0.0}
    # (5, "a"): |5 - 0| / 10 = 0.5 on x, match on c -> 0.25 (Gower, 2 columns)
    # (0, "z"): match on x, mismatch on c -> 0.5
    synth = pd.DataFrame({"x": [5.0, 0.0], "c": ["a", "z"]})
    holdout = pd.DataFrame({"x": [10.0, 1.0], "c": ["b", "a"]})
    result = distance_to_closest_record(train, synth, holdout)
    assert result["exact_match_rate"] == 0.0
    assert result["dcr_median"] == pytest.approx(np.median([0.25, 0.5]))
    assert result["dcr_p5"] == pytest.approx(np.percentile([0.25, 0.5], 5))
    assert result["holdout_exact_match_rate"] == 0.5
    assert result["holdout_dcr_median"] == pytest.approx(np.median([0.0, 0.05]))


def test_distance_to_closest_record_subsamples():
    train, synth = _table(300, 0), _table(300, 1)
    result = distance_to_closest_record(train, synth, max_samples=50, random_state=0)
    assert 0 < result["dcr_median"] <= 1
    assert result["dcr_p5"] <= result["dcr_median"]


# ---------------------------------------------------------------- likelihood
class _FittedScore(BaseEstimator):
    def fit(self, X, y=None):
        self.value_ = -1.5
        return self

    def score(self, X, y=None):
        return self.value_


def test_heldout_log_likelihood_is_estimator_score():
    assert heldout_log_likelihood(_FittedScore().fit(None), None) == -1.5
    with pytest.raises(ValueError, match="score"):
        heldout_log_likelihood(object(), None)


# ------------------------------------------------------------------ evaluate
def test_evaluate_tidy_table():
    train, test, synth = _table(300, 0), _table(150, 1), _table(300, 2)
    result = evaluate(train, test, synth, target="label", estimator=_FittedScore().fit(None),
                      random_state=0, n_queries=20)
    assert list(result.columns) == ["metric", "value", "k", "model", "detail"]
    assert set(result.metric) == {
        "workload_error", "histogram_intersection", "pair_similarity", "correlation_accuracy",
        "ks_score", "chi_square_score", "conjunction_error", "detection_score", "ml_efficacy",
        "distance_to_closest_record", "heldout_log_likelihood"}
    workload = result[result.metric == "workload_error"].set_index("k")["value"]
    assert list(workload.index) == [1, 2, 3]
    assert workload[2] == pytest.approx(workload_error(train, synth, k=2))
    assert result.loc[result.metric == "heldout_log_likelihood", "value"].iloc[0] == -1.5


def test_evaluate_skips_and_refuses_inapplicable_metrics():
    train, test, synth = _table(100, 0), _table(50, 1), _table(100, 2)
    result = evaluate(train, test, synth, metrics=None, random_state=0, n_queries=5)
    assert "ml_efficacy" not in set(result.metric)
    assert "heldout_log_likelihood" not in set(result.metric)
    with pytest.raises(ValueError, match="no target"):
        evaluate(train, test, synth, metrics=["ml_efficacy"])
    with pytest.raises(ValueError, match="unknown metric"):
        evaluate(train, test, synth, metrics=["fid"])
    only = evaluate(train, test, synth, metrics=["workload_error"], workload_k=(2,))
    assert len(only) == 1 and only.k.iloc[0] == 2


# ------------------------------------------------------------------- scorers
class _NoisyResampler(BaseEstimator):
    """Tiny test synthesizer: resamples training rows, replacing a share by noise."""

    def __init__(self, noise=0.0, domain=None, random_state=None):
        self.noise = noise
        self.domain = domain
        self.random_state = random_state

    def fit(self, X, y=None, *, epsilon, delta=1e-9):
        self.data_ = pd.DataFrame(X).reset_index(drop=True)
        self.epsilon_ = epsilon
        return self

    def sample(self, n_samples=None, *, random_state=None):
        rng = np.random.default_rng(random_state)
        rows = self.data_.iloc[rng.integers(0, len(self.data_), n_samples)].reset_index(drop=True)
        replace = rng.random(n_samples) < self.noise
        for column, k in self.domain.items():
            rows.loc[replace, column] = rng.integers(0, k, replace.sum())
        return rows


def _coded(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    return pd.DataFrame({"a": a, "b": (a + rng.integers(0, 2, n)) % 4, "c": rng.integers(0, 3, n)})


def test_scorer_value_is_negated_error_on_sampled_rows():
    X = _coded(200, 0)
    domain = {"a": 4, "b": 4, "c": 3}
    model = _NoisyResampler(noise=0.5, domain=domain).fit(X, epsilon=1.0)
    expected = -workload_error(X, model.sample(len(X), random_state=0), k=2, domain=domain)
    assert fidelity_scorer(model, X) == pytest.approx(expected)
    hist = make_fidelity_scorer("histogram_intersection")
    assert 0 < hist(model, X) <= 1


def test_grid_search_ranks_less_noisy_synthesizer_first():
    X = _coded(300, 0)
    domain = {"a": 4, "b": 4, "c": 3}
    for scoring in (fidelity_scorer, make_fidelity_scorer("correlation_accuracy"),
                    make_fidelity_scorer("conjunction_error", column_fraction=1.0, random_state=0)):
        search = GridSearchCV(_NoisyResampler(domain=domain), {"noise": [0.9, 0.0]},
                              scoring=scoring, cv=2)
        search.fit(X, epsilon=1.0)
        assert search.best_params_ == {"noise": 0.0}
        assert search.best_estimator_.epsilon_ == 1.0


def test_make_fidelity_scorer_validation():
    with pytest.raises(ValueError, match="metric must be one of"):
        make_fidelity_scorer("accuracy")
    with pytest.raises(ValueError, match="greater_is_better"):
        make_fidelity_scorer(lambda real, synth: 0.0)
    with pytest.raises(ValueError, match="contradicts"):
        make_fidelity_scorer("workload_error", greater_is_better=True)
    custom = make_fidelity_scorer(lambda real, synth: 2.0, greater_is_better=False)
    X = _coded(20, 0)
    assert custom(_NoisyResampler(domain={"a": 4}).fit(X, epsilon=1.0), X) == -2.0
    assert "workload_error" in repr(fidelity_scorer)


# --------------------------------------------------------------------- plots
def test_plots_return_figures():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    real, synth = _table(100, 0), _table(100, 1)
    figure = plot_marginals(real, synth, columns=["x", "colour", "z"], n_cols=2)
    assert isinstance(figure, Figure)
    assert sum(ax.get_visible() for ax in figure.axes) == 3
    with pytest.raises(ValueError, match="unknown"):
        plot_marginals(real, synth, columns=["nope"])
    results = pd.DataFrame({
        "method": ["a", "a", "a", "a", "b", "b"],
        "epsilon": [0.1, 0.1, 1.0, 1.0, 0.1, 1.0],
        "metric": ["tvd2"] * 6,
        "value": [0.3, 0.5, 0.1, 0.2, 0.4, 0.2],
    })
    figure2 = plot_metric_vs_epsilon(results, "tvd2")
    assert isinstance(figure2, Figure)
    line = figure2.axes[0].lines[0]
    np.testing.assert_allclose(np.asarray(line.get_ydata(), dtype=float), [0.4, 0.15])
    with pytest.raises(ValueError, match="tvd3"):
        plot_metric_vs_epsilon(results, "tvd3")
    plt.close("all")
