"""The estimator contract, checked for every synthesizer available."""

import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import KBinsDiscretizer, OrdinalEncoder

from sklearn_dpsynth import BaseSynthesizer, IndependentSynthesizer, PrivacyWarning
from sklearn_dpsynth.backends import EncodedTable, NumpyTable
from sklearn_dpsynth.public import PublicDataSynthesizer

from .conftest import MIXED_DOMAIN, SYNTHESIZERS, make_synthesizer

NAMES = list(SYNTHESIZERS)


@pytest.fixture(params=NAMES)
def name(request):
    return request.param


def _fit(name, frame, domain, epsilon=1.0, **params):
    return make_synthesizer(name, domain=domain, random_state=0, **params).fit(
        frame, epsilon=epsilon, delta=1e-6)


def test_clone_and_params_are_stored_unchanged(name):
    synth = make_synthesizer(name, domain={"a": 3}, random_state=3)
    params = synth.get_params()
    twin = clone(synth)
    assert twin.get_params() == params
    twin.set_params(random_state=5)
    assert twin.random_state == 5 and synth.random_state == 3


def test_not_fitted_guards(name):
    synth = make_synthesizer(name)
    with pytest.raises(NotFittedError):
        synth.sample(3)
    with pytest.raises(NotFittedError):
        synth.score(pd.DataFrame({"a": [1]}))


def test_sample_has_the_input_form(name, mixed_frame):
    synth = _fit(name, mixed_frame, {**MIXED_DOMAIN})
    out = synth.sample(50)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(mixed_frame.columns)
    assert len(out) == 50
    for column in ["age", "income", "city", "member"]:
        assert out[column].dtype == mixed_frame[column].dtype, column
    assert out["age"].between(18, 80).all()
    assert out["income"].between(0, 100_000).all()
    assert set(out["city"]) <= {"Lyon", "Nice", "Paris"}
    assert out["score"].isna().any() or True  # missing is a modelled code, may be rare
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(1.0, rel=1e-9)


def test_ndarray_in_ndarray_out(name):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(300, 3))
    synth = _fit(name, X, 3)
    out = synth.sample(20)
    assert isinstance(out, np.ndarray) and out.shape == (20, 3) and out.dtype == X.dtype
    assert np.isfinite(synth.score(X))


def test_default_n_samples_is_a_private_estimate(name, bayesnet):
    synth = _fit(name, bayesnet.frame, bayesnet.domain, epsilon=5.0)
    n = len(synth.sample())
    assert abs(n - len(bayesnet.frame)) < 0.2 * len(bayesnet.frame)


def test_reproducible_fit_and_sample(name, bayesnet):
    a = _fit(name, bayesnet.frame, bayesnet.domain)
    b = _fit(name, bayesnet.frame, bayesnet.domain)
    pd.testing.assert_frame_equal(a.sample(40), b.sample(40))
    pd.testing.assert_frame_equal(a.sample(40, random_state=7), b.sample(40, random_state=7))
    np.testing.assert_allclose(a.score_samples(bayesnet.frame), b.score_samples(bayesnet.frame))


def test_pickle_round_trip(name, bayesnet):
    synth = _fit(name, bayesnet.frame, bayesnet.domain)
    restored = pickle.loads(pickle.dumps(synth))
    pd.testing.assert_frame_equal(synth.sample(30, random_state=1),
                                  restored.sample(30, random_state=1))
    assert restored.score(bayesnet.frame) == pytest.approx(synth.score(bayesnet.frame))


def test_score_is_mean_of_score_samples(name, bayesnet):
    synth = _fit(name, bayesnet.frame, bayesnet.domain)
    per_row = synth.score_samples(bayesnet.frame)
    assert per_row.shape == (len(bayesnet.frame),)
    assert np.all(per_row <= 0)
    assert synth.score(bayesnet.frame) == pytest.approx(per_row.mean())


def test_pipeline_and_grid_search(name, bayesnet):
    pipe = Pipeline([("synth", make_synthesizer(name, domain=bayesnet.domain, random_state=0))])
    pipe.fit(bayesnet.frame, synth__epsilon=1.0)
    assert pipe.named_steps["synth"].privacy_ledger_.spent()[0] == pytest.approx(1.0)
    grid = GridSearchCV(make_synthesizer(name, domain=bayesnet.domain, random_state=0),
                        {"random_state": [0, 1]}, cv=2)
    grid.fit(bayesnet.frame, epsilon=1.0)
    result = cross_validate(make_synthesizer(name, domain=bayesnet.domain, random_state=0),
                            bayesnet.frame, params={"epsilon": 1.0}, cv=2)
    scores = np.concatenate([grid.cv_results_["mean_test_score"], result["test_score"]])
    assert np.all(np.isfinite(scores))


def test_sklearn_discretizers_as_earlier_steps(name):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=300), rng.normal(size=300)])
    pipe = Pipeline([
        ("bins", KBinsDiscretizer(n_bins=4, encode="ordinal", strategy="uniform",
                                  quantile_method="averaged_inverted_cdf")),
        ("synth", make_synthesizer(name, domain=4, random_state=0)),
    ])
    pipe.fit(X, synth__epsilon=1.0)
    codes = pipe.named_steps["synth"].sample(10)
    assert codes.shape == (10, 2) and set(np.unique(codes)) <= {0.0, 1.0, 2.0, 3.0}
    back = pipe.named_steps["bins"].inverse_transform(codes)
    assert back.shape == (10, 2)
    cats = np.array([["a", "x"], ["b", "y"], ["a", "y"]] * 50, dtype=object)
    pipe = Pipeline([("enc", OrdinalEncoder()),
                     ("synth", make_synthesizer(name, domain=[2, 2], random_state=0))])
    pipe.fit(cats, synth__epsilon=1.0)
    assert pipe.named_steps["synth"].sample(5).shape == (5, 2)


@pytest.mark.parametrize("epsilon, delta, error", [
    (0.0, 1e-9, ValueError), (-1.0, 1e-9, ValueError), (np.inf, 1e-9, ValueError),
    (np.nan, 1e-9, ValueError), (1.0, 0.0, ValueError), (1.0, 1.5, ValueError),
    ("1", 1e-9, TypeError),
])
def test_bad_budgets_name_the_parameter(name, bayesnet, epsilon, delta, error):
    synth = make_synthesizer(name, domain=bayesnet.domain)
    with pytest.raises(error, match="epsilon|delta"):
        synth.fit(bayesnet.frame, epsilon=epsilon, delta=delta)


def test_bad_tables_get_clear_errors(name, bayesnet):
    synth = make_synthesizer(name)
    with pytest.raises(ValueError, match="empty"):
        synth.fit(pd.DataFrame({"a": []}), epsilon=1.0)
    with pytest.raises(ValueError, match="'c2'"):
        bad = bayesnet.frame.copy()
        bad.loc[0, "c2"] = "never-declared"
        make_synthesizer(name, domain=bayesnet.domain).fit(bad, epsilon=1.0)
    with pytest.raises(ValueError, match="n_bins"):
        make_synthesizer(name, n_bins=0).fit(bayesnet.frame, epsilon=1.0)


def test_score_with_mismatched_columns(name, bayesnet):
    synth = _fit(name, bayesnet.frame, bayesnet.domain)
    with pytest.raises(ValueError, match="missing \\['c2'\\]"):
        synth.score(bayesnet.frame.drop(columns="c2"))


def test_missing_values_are_a_category_not_dropped(name):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"kind": rng.choice(["a", "b", None], 2000, p=[0.5, 0.3, 0.2]),
                          "n": rng.integers(0, 4, 2000)})
    synth = _fit(name, frame, {"kind": ["a", "b", None], "n": 4}, epsilon=5.0)
    out = synth.sample(2000)
    share = out["kind"].isna().mean()
    assert 0.1 < share < 0.3
    assert np.isfinite(synth.score(frame))


def test_private_domain_learning_is_in_the_ledger(name, mixed_frame):
    synth = make_synthesizer(name, random_state=0).fit(mixed_frame, epsilon=2.0, delta=1e-6)
    targets = list(synth.privacy_ledger_.summary()["target"])
    assert any("range of 'age'" in t for t in targets)
    assert any("categories of 'city'" in t for t in targets)
    eps, delta = synth.privacy_ledger_.spent()
    assert eps == pytest.approx(2.0, rel=1e-9) and delta == 1e-6


def test_non_private_preprocessing_warns_naming_what_leaked(name, mixed_frame):
    synth = make_synthesizer(name, preprocessing="non-private", random_state=0)
    with pytest.warns(PrivacyWarning) as warned:  # the text column's kind, then the domain
        synth.fit(mixed_frame, epsilon=1.0)
    messages = " ".join(str(w.message) for w in warned)
    assert "kinds (and datetime units) of columns ['city']" in messages
    assert re.search("'age'.*'city'|'city'.*'age'", messages)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        make_synthesizer(name, domain=MIXED_DOMAIN, random_state=0).fit(
            mixed_frame, epsilon=1.0)


# ----------------------------------------------------- hooks and public data
def test_a_subclass_missing_a_hook_cannot_be_instantiated():
    class NoSampler(BaseSynthesizer):
        def _fit_encoded(self, table, ledger, rng, public):
            pass

        def _log_likelihood_encoded(self, codes):
            return np.zeros(len(codes))

        def _estimated_n_records(self):
            return 1.0

    with pytest.raises(TypeError, match="abstract.*_sample_encoded"):
        NoSampler()
    with pytest.raises(TypeError, match="abstract"):
        BaseSynthesizer()


def test_public_data_is_refused_by_methods_that_cannot_use_it(name, bayesnet):
    synth = make_synthesizer(name, domain=bayesnet.domain, random_state=0)
    if "pretrain_epochs" in synth.get_params():  # public data pre-trains the network
        synth.set_params(pretrain_epochs=1)
    if isinstance(synth, PublicDataSynthesizer):
        synth.fit(bayesnet.frame, epsilon=1.0, public_data=bayesnet.frame.iloc[:100])
        assert synth.privacy_ledger_.spent()[0] == pytest.approx(1.0)
        return
    with pytest.raises(ValueError, match=f"public_data: {type(synth).__name__} does not use public data"):
        synth.fit(bayesnet.frame, epsilon=1.0, public_data=bayesnet.frame.iloc[:100])


class _Recorder(IndependentSynthesizer, PublicDataSynthesizer):
    """Keeps what the base passes to the hook (for the tests below)."""

    def _fit_encoded(self, table, ledger, rng, public):
        self.seen_ = (table, public)
        super()._fit_encoded(table, ledger, rng, None)


def test_the_hook_receives_encoded_tables_of_the_fitted_domain(bayesnet):
    frame = bayesnet.frame
    public = frame.iloc[:50][list(reversed(frame.columns))]  # any column order
    synth = _Recorder(domain=bayesnet.domain, random_state=0).fit(
        frame, epsilon=1.0, public_data=public)
    table, encoded = synth.seen_
    assert isinstance(table, EncodedTable) and isinstance(encoded, NumpyTable)
    assert table.columns == encoded.columns == list(frame.columns)
    assert table.sizes == encoded.sizes == synth.domain_.sizes
    np.testing.assert_array_equal(table.to_numpy(), synth.domain_.encode(frame))
    np.testing.assert_array_equal(encoded.to_numpy(), synth.domain_.encode(frame.iloc[:50]))
    # an array X takes an array (or any frame with as many columns) as public data
    X = synth.domain_.encode(frame)
    synth = _Recorder(domain=3, random_state=0).fit(X % 3, epsilon=1.0, public_data=X[:5] % 3)
    np.testing.assert_array_equal(synth.seen_[1].to_numpy(), X[:5] % 3)


@pytest.mark.parametrize("public, message", [
    (lambda f: f.drop(columns="c2"), r"public_data must have the columns of X: missing \['c2'\]"),
    (lambda f: f.assign(extra=1), r"unexpected \['extra'\]"),
    (lambda f: f.iloc[:0], "public_data: X is empty"),
    (lambda f: f.to_numpy()[:, :2], "public_data must have the 5 columns of X, got 2"),
])
def test_bad_public_tables_get_clear_errors_before_any_spending(bayesnet, public, message,
                                                                monkeypatch):
    def no_domain_learning(*args, **kwargs):
        raise AssertionError("the private table was read before public_data was checked")

    monkeypatch.setattr("sklearn_dpsynth._base.learn_domain", no_domain_learning)
    synth = _Recorder(random_state=0)  # nothing declared: the domain would be learned
    with pytest.raises(ValueError, match=message):
        synth.fit(bayesnet.frame, epsilon=1.0, public_data=public(bayesnet.frame))


@pytest.mark.parametrize("name", ["aim", "jam", "mst"])
def test_renamed_parameters_warn_and_act_as_the_new_name(name, bayesnet):
    """An old parameter name (kept one release) warns and fits exactly as the new name."""
    renamed = type(make_synthesizer(name))._renamed_params_
    values = {new: 2 + i for i, new in enumerate(renamed.values())}
    old = make_synthesizer(name, domain=bayesnet.domain, random_state=0,
                           **{o: values[n] for o, n in renamed.items()})
    with pytest.warns(FutureWarning, match=" was renamed "):
        old.fit(bayesnet.frame, epsilon=1.0)
    new = make_synthesizer(name, domain=bayesnet.domain, random_state=0, **values).fit(
        bayesnet.frame, epsilon=1.0)
    default = make_synthesizer(name, domain=bayesnet.domain, random_state=0).fit(
        bayesnet.frame, epsilon=1.0)
    pd.testing.assert_frame_equal(old.sample(100, random_state=0), new.sample(100, random_state=0))
    assert not old.sample(100, random_state=0).equals(default.sample(100, random_state=0))


@pytest.mark.parametrize("name", sorted(SYNTHESIZERS))
def test_verbose_is_an_int_level(name, bayesnet):
    """Every ``verbose`` takes an int >= 0 (bools too) and refuses a negative level by name."""
    synth = make_synthesizer(name, domain=bayesnet.domain)
    if "verbose" not in synth.get_params():
        pytest.skip(f"{name} has no verbose parameter")
    constraints = type(synth)._parameter_constraints["verbose"]
    assert constraints == ["verbose"]
    with pytest.raises(ValueError, match="'verbose'"):
        synth.set_params(verbose=-1).fit(bayesnet.frame, epsilon=1.0)


def test_feature_dtypes_in_are_the_input_dtypes(mixed_frame):
    """``feature_dtypes_in_`` maps each input column to the dtype ``sample`` restores."""
    synth = IndependentSynthesizer(domain=MIXED_DOMAIN, random_state=0)
    assert not hasattr(synth, "feature_dtypes_in_")
    synth.fit(mixed_frame, epsilon=1.0)
    assert synth.feature_dtypes_in_ == dict(synth.sample(20).dtypes.items())
    assert list(synth.feature_dtypes_in_) == list(mixed_frame.columns)
