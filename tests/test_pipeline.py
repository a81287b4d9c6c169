"""SynthesizerPipeline: steps in front of a synthesizer, one budget, one ledger."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import (FunctionTransformer, KBinsDiscretizer, Normalizer,
                                   StandardScaler)

from sklearn_dpsynth import IndependentSynthesizer, MSTSynthesizer, TableDiscretizer
from sklearn_dpsynth.exceptions import PrivacyWarning
from sklearn_dpsynth.pipeline import SynthesizerPipeline, step_privacy
from sklearn_dpsynth.privacy import epsilon_to_rho, rho_to_epsilon

DOMAIN = {"age": (0, 100), "sex": ["F", "M"]}


def _table(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    age = np.where(sex == "F", rng.integers(20, 40, n), rng.integers(60, 80, n))
    return pd.DataFrame({"age": age, "sex": sex})


def _neighbours() -> tuple[pd.DataFrame, pd.DataFrame]:
    table = _table()
    extra = pd.DataFrame({"age": [99], "sex": ["M"]})
    return table, pd.concat([table, extra], ignore_index=True)


def test_step_privacy_kinds():
    assert step_privacy("passthrough") == "data-independent"
    assert step_privacy(FunctionTransformer(np.log1p, np.expm1, check_inverse=False)) \
        == "data-independent"
    # check_inverse runs both functions on private rows and warns on failure
    assert step_privacy(FunctionTransformer(np.log1p, np.expm1)) == "non-private"
    assert step_privacy(TableDiscretizer()) == "private"
    assert step_privacy(StandardScaler()) == "non-private"
    assert step_privacy(KBinsDiscretizer()) == "non-private"
    public = np.arange(20.0).reshape(-1, 1)
    assert step_privacy(StandardScaler().fit(public)) == "prefitted"
    assert step_privacy(FrozenEstimator(StandardScaler().fit(public))) == "prefitted"


@pytest.mark.parametrize("step", [KBinsDiscretizer(n_bins=4, encode="ordinal"),
                                  StandardScaler()])
def test_unsafe_step_refused_with_same_message_on_neighbours(step):
    messages = []
    for table in _neighbours():
        X = table[["age"]].to_numpy(float)
        pipe = SynthesizerPipeline([("scale", step)], IndependentSynthesizer())
        with pytest.raises(ValueError, match="'scale'") as info:
            pipe.fit(X, epsilon=1.0)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "99" not in messages[0]


def test_opt_out_warns_and_fits():
    X = _table()[["age"]].to_numpy(float)
    pipe = SynthesizerPipeline([("bins", KBinsDiscretizer(n_bins=4, encode="ordinal",
                                                          strategy="uniform"))],
                               IndependentSynthesizer(random_state=0), allow_non_private=True)
    with pytest.warns(PrivacyWarning, match="'bins'"):
        pipe.fit(X, epsilon=1.0)
    # ordinal codes are declared as 4 categories, not treated as numbers
    assert pipe.synthesizer_.domain == {0: 4}
    assert set(np.unique(pipe.transform(X))) <= {0, 1, 2, 3}
    rows = pipe.sample(50)
    assert rows.shape == (50, 1)
    assert rows.min() >= X.min() and rows.max() <= X.max()


def test_private_discretizer_shares_one_ledger():
    X = _table()
    disc = TableDiscretizer({"sex": ["F", "M"]}, n_bins=8, random_state=0)
    pipe = SynthesizerPipeline([("codes", disc)], MSTSynthesizer(random_state=0),
                               preprocessing_budget=0.2)
    pipe.fit(X, epsilon=1.0, delta=1e-8)
    ledger = pipe.privacy_ledger_
    shares = list(ledger.summary()["share"])
    assert shares[0] == "codes"  # the discretizer's range of 'age' comes first
    step_rho = sum(e.rho for e, s in zip(ledger.entries, shares) if s == "codes")
    assert step_rho == pytest.approx(0.2 * epsilon_to_rho(1.0, 1e-8), rel=1e-9)
    # independent total: zCDP composes additively
    total_rho = sum(e.rho for e in ledger.entries)
    assert total_rho == pytest.approx(epsilon_to_rho(1.0, 1e-8), rel=1e-6)
    assert rho_to_epsilon(total_rho, 1e-8) == pytest.approx(1.0, rel=1e-6)
    assert ledger.spent() == pytest.approx((1.0, 1e-8))
    assert pipe.steps_[0][1].privacy_ledger_ is ledger


def test_round_trip_and_reproducible():
    X = _table()
    pipe = SynthesizerPipeline([("codes", TableDiscretizer(DOMAIN, n_bins=10, random_state=0))],
                               MSTSynthesizer(random_state=0))
    rows = pipe.fit(X, epsilon=2.0).sample(300)
    assert list(rows.columns) == ["age", "sex"] and rows.dtypes.equals(X.dtypes)
    assert set(rows["sex"]) <= {"F", "M"}
    # the strong sex/age dependence survives the round trip
    assert rows.loc[rows["sex"] == "F", "age"].mean() < rows.loc[rows["sex"] == "M", "age"].mean()
    again = clone(pipe).fit(X, epsilon=2.0).sample(300)
    pd.testing.assert_frame_equal(rows, again)
    # a fully declared discretizer spends nothing: the synthesizer gets everything
    assert set(pipe.privacy_ledger_.summary()["share"]) <= {"", "domain learning"}
    assert np.isfinite(pipe.score(X))


def test_prefitted_and_function_steps_are_not_refit():
    X = _table()[["age"]].to_numpy(float)
    public = np.linspace(0, 100, 11).reshape(-1, 1)
    bins = KBinsDiscretizer(n_bins=5, encode="ordinal", strategy="uniform").fit(public)
    edges = bins.bin_edges_[0].copy()
    pipe = SynthesizerPipeline(
        [("log", FunctionTransformer(np.log1p, np.expm1, check_inverse=False)),
         ("exp", FunctionTransformer(np.expm1, np.log1p, check_inverse=False)),
         ("bins", FrozenEstimator(bins))],
        IndependentSynthesizer(random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        pipe.fit(X, epsilon=1.0)
    np.testing.assert_array_equal(bins.bin_edges_[0], edges)  # never refit on X
    assert pipe.synthesizer_.domain == {0: 5}
    assert len(pipe.privacy_ledger_.entries) >= 1
    assert clone(pipe).steps[2][1] is pipe.steps[2][1]  # frozen survives clone


def test_grid_search_over_public_hyperparameters():
    X = _table(400)
    pipe = SynthesizerPipeline([("codes", TableDiscretizer(DOMAIN, random_state=0))],
                               MSTSynthesizer(random_state=0))
    search = GridSearchCV(pipe, {"steps": [[("codes", TableDiscretizer(DOMAIN, n_bins=k,
                                                                        random_state=0))]
                                           for k in (4, 8)]}, cv=2)
    search.fit(X, epsilon=1.0)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_estimator_.sample(10).shape == (10, 2)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"synthesizer": StandardScaler()}, TypeError, "synthesizer"),
    ({"preprocessing_budget": 1.5}, ValueError, "preprocessing_budget"),
    ({"steps": [("a", "passthrough"), ("a", "passthrough")]}, ValueError, "unique"),
    ({"steps": [("norm", Normalizer())]}, TypeError, "'norm'"),
])
def test_bad_parameters_name_themselves(kwargs, error, match):
    params = {"steps": [("p", "passthrough")], "synthesizer": IndependentSynthesizer()}
    params.update(kwargs)
    with pytest.raises(error, match=match):
        SynthesizerPipeline(**params).fit(_table(), epsilon=1.0)


def test_neighbouring_tables_get_the_same_accounting_and_declared_codes():
    """What the pipeline carries besides DP outputs does not depend on the rows."""
    public = np.linspace(0, 100, 11).reshape(-1, 1)
    bins = FrozenEstimator(KBinsDiscretizer(n_bins=5, encode="ordinal",
                                            strategy="uniform").fit(public))
    fitted = []
    for table in _neighbours():
        X = table[["age"]].to_numpy(float)
        pipe = SynthesizerPipeline([("bins", bins)], MSTSynthesizer(random_state=0))
        fitted.append(pipe.fit(X, epsilon=1.0))
    costs = [[(e.target, e.mechanism, e.rho, e.delta, e.noise_scale)
              for e in p.privacy_ledger_.entries] for p in fitted]
    assert costs[0] == costs[1]
    assert fitted[0].synthesizer_.domain == fitted[1].synthesizer_.domain == {0: 5}
