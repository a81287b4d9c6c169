"""``verbose``: progress on stderr for every long fit, silence by default."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth import MSTSynthesizer
from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.metrics import evaluate


@pytest.fixture(scope="module")
def data():
    return make_bayesnet(n_samples=800, n_features=4, random_state=0)


def test_mst_prints_its_stages_only_when_verbose(data, capsys):
    quiet = MSTSynthesizer(domain=data.domain, random_state=0).fit(data.frame, epsilon=1.0)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    loud = MSTSynthesizer(domain=data.domain, verbose=True, random_state=0)
    loud.fit(data.frame, epsilon=1.0)
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert [re.sub(r"\d+", "N", line.split(":")[0]) for line in lines] == [
        "[MST] measuring N N-way marginals", "[MST] selecting the spanning tree",
        "[MST] measuring N selected marginals",
        "[MST] estimating the model from N measurements"]
    spent = [float(line.rsplit(" ", 1)[1]) for line in lines]
    assert spent == sorted(spent) and 0 < spent[0] < 1
    assert spent[-1] == pytest.approx(loud.privacy_ledger_.spent()[0], rel=1e-3)
    # progress does not change the fit
    pd.testing.assert_frame_equal(quiet.sample(200), loud.sample(200))


def test_evaluate_shows_a_bar_only_when_verbose(data, capsys):
    train, test = data.frame.iloc[:400], data.frame.iloc[400:]
    kwargs = dict(domain=data.domain, metrics=["workload_error", "ks_score"], random_state=0)
    quiet = evaluate(train, test, test, **kwargs)
    assert capsys.readouterr().err == ""
    loud = evaluate(train, test, test, verbose=True, **kwargs)
    err = capsys.readouterr().err
    assert "evaluate" in err and "2/2" in err
    pd.testing.assert_frame_equal(quiet, loud)


@pytest.mark.neural
@pytest.mark.parametrize("name", ["DPTBARTSynthesizer", "SynLMSynthesizer"])
def test_neural_epochs_print_budget_and_only_loudly_the_loss(name, data, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("opacus")
    import sklearn_dpsynth
    from sklearn_dpsynth import PrivacyWarning

    cls = getattr(sklearn_dpsynth, name)
    params = dict(domain=data.domain, epochs=2.0, batch_size=100, d_model=8, n_heads=2,
                  n_layers=1, random_state=0)
    quiet = cls(**params).fit(data.frame, epsilon=1.0)
    assert capsys.readouterr().err == ""
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)  # verbose=1 is public: no warning
        model = cls(verbose=1, **params).fit(data.frame, epsilon=1.0)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith(f"[{name}] epoch") for line in lines)
    assert [line.split()[2] for line in lines] == ["1/2", "2/2"]
    assert not any("loss" in line for line in lines)
    spent = [float(line.rsplit(" ", 1)[1]) for line in lines]
    # the last line's "spent so far" is the ledger's total, computed independently
    assert spent[0] < spent[1] == pytest.approx(model.privacy_ledger_.spent()[0], rel=1e-3)
    with pytest.warns(PrivacyWarning, match="without noise") as record:
        loud = cls(verbose=2, **params).fit(data.frame, epsilon=1.0)
    assert sum(issubclass(w.category, PrivacyWarning) for w in record) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    losses = [float(re.search(r"training loss (\S+)", line).group(1)) for line in lines]
    assert len(losses) == 2 and all(np.isfinite(losses))
    assert [float(line.rsplit(" ", 1)[1]) for line in lines] == spent
    # progress does not change the fit
    pd.testing.assert_frame_equal(quiet.sample(50, random_state=1),
                                  loud.sample(50, random_state=1))


@pytest.mark.neural
def test_dp2stage_stage2_prints_loss_only_loudly(data, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("opacus")
    from sklearn_dpsynth import PrivacyWarning
    from sklearn_dpsynth.neural import DP2StageSynthesizer

    params = dict(domain=data.domain, epochs=2.0, stage1_epochs=1.0, stage1_rows=200,
                  batch_size=100, d_model=8, n_heads=2, n_layers=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        model = DP2StageSynthesizer(verbose=1, **params).fit(data.frame, epsilon=1.0)
    lines = capsys.readouterr().err.strip().splitlines()
    stage1 = [line for line in lines if "stage 1" in line]
    stage2 = [line for line in lines if "stage 2" in line]
    assert len(stage1) + len(stage2) == len(lines) and stage1 and len(stage2) == 2
    # stage 1 trains on public pseudo rows: its loss may be shown
    assert all(np.isfinite(float(re.search(r"training loss (\S+)", line).group(1)))
               for line in stage1)
    assert not any("loss" in line for line in stage2)
    spent = [float(line.rsplit(" ", 1)[1]) for line in stage2]
    assert spent[0] < spent[1] == pytest.approx(model.privacy_ledger_.spent()[0], rel=1e-3)
    with pytest.warns(PrivacyWarning, match="without noise"):
        DP2StageSynthesizer(verbose=2, **params).fit(data.frame, epsilon=1.0)
    stage2 = [line for line in capsys.readouterr().err.splitlines() if "stage 2" in line]
    assert len(stage2) == 2 and all("training loss" in line for line in stage2)
