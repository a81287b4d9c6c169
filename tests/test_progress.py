"""``verbose``: progress on stderr for every long fit, silence by default."""

from __future__ import annotations

import re

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
def test_neural_epochs_print_loss_and_budget(name, data, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("opacus")
    import sklearn_dpsynth

    cls = getattr(sklearn_dpsynth, name)
    params = dict(domain=data.domain, epochs=2.0, batch_size=100, d_model=8, n_heads=2,
                  n_layers=1, random_state=0)
    cls(**params).fit(data.frame, epsilon=1.0)
    assert capsys.readouterr().err == ""
    model = cls(verbose=1, **params).fit(data.frame, epsilon=1.0)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith(f"[{name}] epoch") for line in lines)
    assert [line.split()[2] for line in lines] == ["1/2", "2/2"]
    losses = [float(re.search(r"training loss (\S+)", line).group(1)) for line in lines]
    assert all(np.isfinite(losses))
    spent = [float(line.rsplit(" ", 1)[1]) for line in lines]
    # the last line's "spent so far" is the ledger's total, computed independently
    assert spent[0] < spent[1] == pytest.approx(model.privacy_ledger_.spent()[0], rel=1e-3)
