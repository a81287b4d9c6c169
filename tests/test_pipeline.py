"""SynthesizerPipeline: steps in front of a synthesizer, one budget, one ledger."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (FunctionTransformer, KBinsDiscretizer, Normalizer,
                                   StandardScaler)

from sklearn_dpsynth import (IndependentSynthesizer, MSTSynthesizer, TableDiscretizer,
                             save)
from sklearn_dpsynth.exceptions import PrivacyWarning
from sklearn_dpsynth.persistence import check_savable
from sklearn_dpsynth.pipeline import RowWise, SynthesizerPipeline, step_privacy
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
    assert step_privacy("passthrough") == step_privacy(None) == "data-independent"
    # a function is row-wise only when declared so, never guessed
    assert step_privacy(FunctionTransformer(np.log1p, np.expm1, check_inverse=False)) \
        == "non-private"
    assert step_privacy(FunctionTransformer(np.log1p, np.expm1)) == "non-private"
    assert step_privacy(RowWise(FunctionTransformer(np.log1p, np.expm1))) == "data-independent"
    # freezing (or nesting) a function does not make it row-wise
    assert step_privacy(FrozenEstimator(FunctionTransformer(np.log1p))) == "non-private"
    assert step_privacy(make_pipeline(FunctionTransformer(np.log1p))) == "non-private"
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
        [("log", RowWise(FunctionTransformer(np.log1p, np.expm1))),
         ("exp", RowWise(FunctionTransformer(np.expm1, np.log1p))),
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
    ({"steps": [("scale", RowWise(StandardScaler()))]}, TypeError, "'scale'.*FunctionTransformer"),
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


# ------------------------------------------------ function steps: declared, never guessed
def _centre(frame):
    return frame - frame.mean()


def _duplicate(frame):
    return pd.concat([frame, frame])


def _sort(frame):
    return frame.sort_values(list(frame.columns))


def _plus_one(frame):
    return frame + 1


def _minus_one(frame):
    return frame - 1


ROW_MIXING = [_centre, _duplicate, _sort]


def _ages(table: pd.DataFrame | None = None) -> pd.DataFrame:
    return (_table() if table is None else table)[["age"]].astype(float)


@pytest.mark.parametrize("func", ROW_MIXING)
def test_undeclared_row_mixing_function_is_refused_before_reading(func):
    messages = []
    for table in _neighbours():
        pipe = SynthesizerPipeline([("mix", FunctionTransformer(func, check_inverse=False))],
                                   IndependentSynthesizer())
        with pytest.raises(ValueError, match="'mix'.*RowWise") as info:
            pipe.fit(_ages(table), epsilon=1.0)
        messages.append(str(info.value))
        assert not hasattr(pipe, "privacy_ledger_")
    assert messages[0] == messages[1]


@pytest.mark.parametrize("func", ROW_MIXING)
def test_row_mixing_function_with_opt_out_fits_and_warns(func):
    X = _ages()
    pipe = SynthesizerPipeline([("mix", FunctionTransformer(func, check_inverse=False))],
                               IndependentSynthesizer(domain={"age": (-100, 200)},
                                                      random_state=0),
                               allow_non_private=True)
    with pytest.warns(PrivacyWarning, match="'mix'.*not declared row-wise"):
        pipe.fit(X, epsilon=1.0)
    assert pipe.sample(20).shape == (20, 1)


@pytest.mark.parametrize("func, reason", [(_centre, "mixes rows"), (_sort, "mixes rows"),
                                          (_duplicate, "number of rows")])
def test_a_false_row_wise_declaration_is_caught_on_the_public_probe(func, reason):
    pipe = SynthesizerPipeline([("mix", RowWise(FunctionTransformer(func, check_inverse=False)))],
                               IndependentSynthesizer())
    with pytest.raises(ValueError, match=reason) as info:
        pipe.fit(_ages(), epsilon=1.0)
    assert func.__name__ in str(info.value)


def test_frozen_function_is_still_refused():
    step = FrozenEstimator(FunctionTransformer(_centre, check_inverse=False).fit(_ages()))
    pipe = SynthesizerPipeline([("mix", step)], IndependentSynthesizer())
    with pytest.raises(ValueError, match="'mix'.*RowWise"):
        pipe.fit(_ages(), epsilon=1.0)


def test_declared_row_wise_function_fits_with_the_ledger_of_no_step():
    X = _ages()
    domain = {"age": (0, 120)}

    def fitted(step):
        return SynthesizerPipeline([("step", step)],
                                   IndependentSynthesizer(domain=domain, random_state=0)
                                   ).fit(X, epsilon=1.0, delta=1e-8)

    shifted = fitted(RowWise(FunctionTransformer(_plus_one, _minus_one)))
    plain = fitted("passthrough")
    costs = [[(e.target, e.mechanism, e.rho, e.delta, e.noise_scale)
              for e in p.privacy_ledger_.entries] for p in (shifted, plain)]
    assert costs[0] == costs[1]
    assert shifted.privacy_ledger_.spent() == pytest.approx((1.0, 1e-8))
    pd.testing.assert_frame_equal(shifted.transform(X), X + 1)
    again = clone(shifted).fit(X, epsilon=1.0, delta=1e-8)
    pd.testing.assert_frame_equal(again.sample(30, random_state=1),
                                  shifted.sample(30, random_state=1))


def test_row_wise_fit_reads_only_the_schema():
    seen = []

    def recording(frame):
        seen.append(frame.to_numpy().copy())
        return frame * 2

    X = _ages() + 1000.0  # every private value is far from the probe's 0.5 .. 6.5
    step = RowWise(FunctionTransformer(recording, check_inverse=False)).fit(X)
    assert seen and max(values.max() for values in seen) < 10
    assert step.transformer_.feature_names_in_.tolist() == ["age"]
    seen.clear()
    np.testing.assert_array_equal(step.transform(X), X * 2)
    assert seen[0].min() >= 1000


def test_row_wise_transform_refuses_a_changed_row_count_without_naming_it():
    def drop_old(frame):  # keeps every probe row (0.5 .. 6.5), drops rows of age >= 70
        return frame[frame["age"] < 70]

    messages = []
    for table in _neighbours():
        pipe = SynthesizerPipeline([("young", RowWise(FunctionTransformer(drop_old,
                                                                          check_inverse=False)))],
                                   IndependentSynthesizer())
        with pytest.raises(ValueError, match="number of rows") as info:
            pipe.fit(_ages(table), epsilon=1.0)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert not any(char.isdigit() for char in messages[0])


def test_row_wise_probe_parameter():
    def sex_code(frame):
        return frame.assign(sex=frame["sex"].map({"F": 0, "M": 1}).astype(int))

    def sex_label(frame):
        return frame.assign(sex=np.where(frame["sex"] == 0, "F", "M"))

    X = _table()
    made_up = RowWise(FunctionTransformer(sex_code, sex_label, check_inverse=False))
    with pytest.raises(ValueError, match="probe"):
        made_up.fit(X)
    public = pd.DataFrame({"age": [30, 50, 70], "sex": ["F", "M", "F"]})
    step = clone(made_up).set_params(probe=public).fit(X)
    assert set(np.unique(step.transform(X)["sex"])) <= {0, 1}
    for bad in (public.iloc[:1], public[["age"]]):
        with pytest.raises(ValueError, match="probe"):
            clone(made_up).set_params(probe=bad).fit(X)


def test_row_wise_checks_on_arrays_and_its_parameter():
    X = np.arange(40.0).reshape(20, 2)
    step = RowWise(FunctionTransformer(np.log1p, np.expm1)).fit(X)
    np.testing.assert_allclose(step.inverse_transform(step.transform(X)), X)
    with pytest.raises(ValueError, match="mixes rows"):
        RowWise(FunctionTransformer(lambda a: a - a.mean(axis=0))).fit(X)
    with pytest.raises(TypeError, match="FunctionTransformer"):
        RowWise(StandardScaler()).fit(X)


def test_pipeline_with_a_function_step_cannot_be_saved_and_says_so(tmp_path):
    step = RowWise(FunctionTransformer(_plus_one, _minus_one))
    pipe = SynthesizerPipeline([("shift", step)],
                               IndependentSynthesizer(domain={"age": (0, 120)}))
    with pytest.raises(ValueError, match="RowWise.*model file cannot hold"):
        check_savable(pipe)
    pipe.fit(_ages(), epsilon=1.0)
    with pytest.raises(ValueError, match="RowWise.*model file cannot hold"):
        save(pipe, tmp_path / "model.dpsynth")


def test_row_wise_step_carries_nothing_of_neighbouring_tables():
    fitted = []
    for table in _neighbours():
        step = RowWise(FunctionTransformer(_plus_one, _minus_one))
        pipe = SynthesizerPipeline([("shift", step)],
                                   IndependentSynthesizer(domain={"age": (0, 120)},
                                                          random_state=0))
        fitted.append(pipe.fit(_ages(table), epsilon=1.0))
    inner = [vars(p.steps_[0][1].transformer_) for p in fitted]
    assert inner[0].keys() == inner[1].keys()
    for key in inner[0]:
        np.testing.assert_array_equal(inner[0][key], inner[1][key])
    costs = [[(e.target, e.mechanism, e.rho, e.delta) for e in p.privacy_ledger_.entries]
             for p in fitted]
    assert costs[0] == costs[1]
