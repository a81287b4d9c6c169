"""DP-2Stage: serialization, constrained decoding, weighted loss, two-stage privacy."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402

from sklearn_dpsynth.domain import ColumnSpec, Domain  # noqa: E402
from sklearn_dpsynth.neural import DP2StageSynthesizer  # noqa: E402
from sklearn_dpsynth.neural.constrained import (  # noqa: E402
    RowAutomaton,
    sample_token_rows,
    token_log_probs,
)
from sklearn_dpsynth.neural.text import (  # noqa: E402
    KEY,
    VALUE,
    RowText,
    WordVocabulary,
    split_words,
    value_strings,
)
from sklearn_dpsynth.neural.text_model import TextTransformer  # noqa: E402
from sklearn_dpsynth.neural.text_training import row_losses, token_weights  # noqa: E402
from sklearn_dpsynth.privacy import PrivacyLedger  # noqa: E402

ODD = ["a, b", "x is y", " lead", "trail ", "", "is", ",", "NaN", "Ünï 3.5"]

FAST = dict(d_model=16, n_layers=1, n_heads=2, epochs=1, stage1_epochs=1, stage1_rows=200,
            batch_size=64, n_bins=4)


def odd_text():
    """Two columns with awkward names and values (commas, 'is', spaces, NaN)."""
    domain = Domain([ColumnSpec("col, is", "categorical", categories=ODD, missing=True),
                     ColumnSpec("n", "numeric", edges=np.linspace(0, 1, 4))])
    keys = [str(c) for c in domain.columns]
    values = [value_strings(spec) for spec in domain.specs]
    vocab = WordVocabulary([v for column in values for v in column], keys=keys)
    return RowText(keys, values, [1, 0], vocab), domain


def tiny_model(text, seed=0):
    torch.manual_seed(seed)
    model = TextTransformer(text.vocabulary.n_tokens, text.max_length, d_model=8,
                            n_layers=1, n_heads=2)
    torch.nn.init.normal_(model.head.weight, std=2.0)  # a non-uniform distribution
    return model.eval()


def all_rows(text):
    sizes = [len(v) for v in text.values]
    return np.array(list(itertools.product(*[range(k) for k in sizes])))


# ----------------------------------------------------------------- text
@pytest.mark.parametrize("string", ODD + ["Married-civ-spouse", "  two  spaces  ", "12.50"])
def test_split_words_is_lossless(string):
    assert "".join(split_words(string)) == string


def test_value_strings_are_distinct_with_nan_category_and_missing():
    strings = value_strings(ColumnSpec("c", "categorical", categories=ODD, missing=True))
    assert len(set(strings)) == len(strings) == len(ODD) + 1
    assert strings[:len(ODD)] == ODD


def test_serialization_round_trips_every_value():
    text, domain = odd_text()
    codes = all_rows(text)
    assert np.array_equal(text.parse(text.to_text(codes)), codes)
    frame = domain.decode(codes)
    assert np.array_equal(domain.encode(frame), codes)  # NaN row included
    assert text.to_text(codes[:1])[0].startswith("n is ")


def test_automaton_reads_back_every_encoded_row():
    text, _ = odd_text()
    codes = all_rows(text)
    tokens, types, lengths = text.encode(codes)
    automaton = RowAutomaton(text)
    states = automaton.walk(tokens, lengths)
    decoded = np.full_like(codes, -1)
    for r in range(len(codes)):
        for t in range(lengths[r] - 1):
            code = automaton.emit_code[states[r, t], tokens[r, t + 1]]
            if code >= 0:
                decoded[r, automaton.state_column[states[r, t]]] = code
    assert np.array_equal(decoded, codes)
    assert (types[tokens == text.vocabulary.special("<is>")] == 0).all()


# --------------------------------------------------- constrained decoding
def test_constrained_likelihood_sums_to_one_over_the_domain():
    text, _ = odd_text()
    codes = all_rows(text)
    tokens, _, lengths = text.encode(codes)
    model = tiny_model(text)
    log_probs = token_log_probs(model, RowAutomaton(text), tokens, lengths,
                                torch.device("cpu")).sum(axis=1)
    assert np.isclose(np.exp(log_probs).sum(), 1.0, atol=1e-9)
    free = token_log_probs(model, None, tokens, lengths, torch.device("cpu")).sum(axis=1)
    assert np.exp(free).sum() < 0.99  # the unconstrained LM leaks mass to invalid text


def test_constrained_sampling_is_valid_and_follows_the_likelihood():
    text, _ = odd_text()
    codes = all_rows(text)
    tokens, _, lengths = text.encode(codes)
    model, automaton = tiny_model(text, seed=1), RowAutomaton(text)
    exact = np.exp(token_log_probs(model, automaton, tokens, lengths,
                                   torch.device("cpu")).sum(axis=1))
    prompt = [text.vocabulary.special("<bos>")]
    drawn = sample_token_rows(model, automaton, 6000, np.random.default_rng(0),
                              prompt=prompt, device=torch.device("cpu"))
    sizes = np.array([len(v) for v in text.values])
    assert ((drawn >= 0) & (drawn < sizes)).all()
    index = {tuple(row): i for i, row in enumerate(codes)}
    counts = np.bincount([index[tuple(row)] for row in drawn], minlength=len(codes))
    assert np.abs(counts / len(drawn) - exact).max() < 0.03


# -------------------------------------------------------- weighted loss
def test_weighted_loss_equals_hand_computation():
    text, _ = odd_text()
    codes = all_rows(text)[[0, 5, 17]]
    tokens, types, lengths = text.encode(codes)
    model = tiny_model(text)
    weights = token_weights(types, lengths, 0.65)
    got = row_losses(model, torch.as_tensor(tokens), torch.as_tensor(weights)).detach()
    logits = model(torch.as_tensor(tokens[:, :-1])).double()
    log_probs = torch.log_softmax(logits, -1).detach().numpy()
    for r in range(len(codes)):
        expected = 0.0
        for t in range(1, lengths[r]):
            nll = -log_probs[r, t - 1, tokens[r, t]]
            expected += (0.65 if types[r, t] == VALUE else 0.35) * nll
        assert np.isclose(float(got[r]), expected, rtol=1e-5)
    plain = token_weights(types, lengths, None)
    assert plain.sum() == (lengths - 1).sum()
    assert (weights[types[:, 1:] == KEY] == pytest.approx(0.35))


# ------------------------------------------------------------- privacy
class PrivateTableAccessed(Exception):
    pass


class RaisingTable:
    """Stands for the private codes: any access raises."""

    def __getattr__(self, name):
        raise PrivateTableAccessed(name)

    def __len__(self):
        raise PrivateTableAccessed("len")

    def __array__(self, *args, **kwargs):
        raise PrivateTableAccessed("array")

    def __getitem__(self, item):
        raise PrivateTableAccessed("getitem")


def stage1_only(monkeypatch, frame, domain, **params):
    """Fit up to the end of stage 1; return the model's weights and the ledger size."""
    seen = {}

    def stop(self, table, ledger, rng, device):
        seen["entries"] = len(ledger.entries)
        seen["weights"] = [p.detach().clone() for p in self.model_.parameters()]
        raise PrivateTableAccessed("stage 2 reached")

    monkeypatch.setattr(DP2StageSynthesizer, "_stage2", stop)
    synth = DP2StageSynthesizer(domain=domain, random_state=0, **{**FAST, **params})
    with pytest.raises(PrivateTableAccessed, match="stage 2 reached"):
        synth.fit(frame, epsilon=1.0, delta=1e-6)
    return synth, seen


def test_stage1_never_touches_the_private_table(monkeypatch, bayesnet):
    synth = DP2StageSynthesizer(domain=bayesnet.domain, random_state=0, **FAST)
    synth._validate_params()
    synth.domain_ = Domain.from_declaration(bayesnet.domain, n_bins=4)
    ledger = PrivacyLedger(1.0, 1e-6)
    seen = {}

    def check_then_read(self, table, ledger, rng, device):
        seen.update(steps=self.stage1_steps_, entries=len(ledger.entries))
        table.to_numpy()  # stage 2 is the first reader of the table

    monkeypatch.setattr(DP2StageSynthesizer, "_stage2", check_then_read)
    with pytest.raises(PrivateTableAccessed):
        synth._fit_encoded(RaisingTable(), ledger, np.random.default_rng(0), None)
    assert seen["steps"] > 0 and seen["entries"] == 0  # stage 1 ran and cost nothing


def test_stage1_is_identical_on_neighbouring_tables(monkeypatch, bayesnet):
    frame = bayesnet.frame.iloc[:300]
    neighbour = frame.iloc[:-1]  # one row removed
    first, seen = stage1_only(monkeypatch, frame, bayesnet.domain)
    second, seen_neighbour = stage1_only(monkeypatch, neighbour, bayesnet.domain)
    assert seen["entries"] == seen_neighbour["entries"] == 0
    assert all(torch.equal(a, b) for a, b in zip(seen["weights"], seen_neighbour["weights"]))
    assert first.text_.vocabulary.tokens == second.text_.vocabulary.tokens
    assert np.array_equal(first.automaton_.next_state, second.automaton_.next_state)


def test_ledger_spends_the_budget_and_fit_is_reproducible(bayesnet):
    frame = bayesnet.frame.iloc[:400]
    fits = [DP2StageSynthesizer(domain=bayesnet.domain, random_state=3, **FAST)
            .fit(frame, epsilon=1.5, delta=1e-6) for _ in range(2)]
    epsilon, delta = fits[0].privacy_ledger_.spent()
    assert np.isclose(epsilon, 1.5, rtol=1e-6) and delta <= 1e-6
    assert fits[0].sample(50).equals(fits[1].sample(50))
    assert np.array_equal(fits[0].score_samples(frame), fits[1].score_samples(frame))
    targets = list(fits[0].privacy_ledger_.summary()["target"])
    assert targets == ["row count", "language-model weights (DP-2Stage stage 2)"]
    standard = DP2StageSynthesizer(domain=bayesnet.domain, random_state=3, pseudo_data=None,
                                   **FAST).fit(frame, epsilon=1.5, delta=1e-6)
    assert standard.stage1_steps_ == 0
    assert standard.n_records_ == fits[0].n_records_  # stage 2 draws are paired
    assert standard.noise_multiplier_ == fits[0].noise_multiplier_


# ------------------------------------------------------------ estimator
@pytest.fixture(scope="module")
def fitted(bayesnet):
    first = bayesnet.frame.columns[0]
    return DP2StageSynthesizer(domain=bayesnet.domain, random_state=0, target="c2",
                               **FAST).fit(bayesnet.frame.iloc[:500], epsilon=2.0), first


def test_samples_are_valid_and_scores_are_normalised(fitted, bayesnet):
    synth, _ = fitted
    rows = synth.sample(200)
    assert list(rows.columns) == list(bayesnet.frame.columns)
    Domain.from_declaration(bayesnet.domain, n_bins=4).encode(rows)  # raises if invalid
    assert np.all(synth.score_samples(bayesnet.frame.iloc[:50]) < 0)
    assert synth.rows_as_text(bayesnet.frame.iloc[:1])[0].startswith("c2 is ")
    ppl = synth.perplexity(bayesnet.frame.iloc[:100])
    assert set(ppl) == {"all", "value", "key", "other"} and all(v >= 1 for v in ppl.values())


def test_conditions_on_a_prefix_of_the_order(fitted, bayesnet):
    synth, first = fitted
    value = bayesnet.frame["c2"].iloc[0]
    rows = synth.sample(30, conditions={"c2": value})
    assert (rows["c2"] == value).all()
    with pytest.raises(ValueError, match="prefix"):
        synth.sample(5, conditions={first: bayesnet.frame[first].iloc[0]})


def test_pickle_and_clone(fitted, bayesnet):
    synth, _ = fitted
    again = pickle.loads(pickle.dumps(synth))
    rows = bayesnet.frame.iloc[:40]
    assert np.allclose(again.score_samples(rows), synth.score_samples(rows))
    params = clone(synth).get_params()
    assert params["target"] == "c2" and params["value_weight"] == 0.65


def test_out_of_distribution_pseudo_table_and_grid_search(bayesnet):
    public = pd.DataFrame({"LENGTH_OF_STAY": [1.0, 2.5, 30.0] * 20,
                           "SEX": ["F", "M", "U"] * 20})
    synth = DP2StageSynthesizer(domain=bayesnet.domain, pseudo_data=public, random_state=0,
                                **FAST)
    search = GridSearchCV(synth, {"value_weight": [0.65, None]}, cv=2)
    search.fit(bayesnet.frame.iloc[:300], epsilon=1.0)
    best = search.best_estimator_
    assert {"<key:LENGTH_OF_STAY>", "<key:SEX>", "U"} <= set(best.text_.vocabulary.tokens)
    assert best.stage1_steps_ > 0


@pytest.mark.parametrize("params, match", [
    ({"target": "nope"}, "target 'nope' is not a column"),
    ({"column_order": ["c2"]}, "column_order must list every column"),
    ({"value_weight": 1.5}, "value_weight"),
    ({"pseudo_data": "gaussian"}, "pseudo_data"),
])
def test_bad_parameters_are_named(bayesnet, params, match):
    synth = DP2StageSynthesizer(domain=bayesnet.domain, **{**FAST, **params})
    with pytest.raises(ValueError, match=match):
        synth.fit(bayesnet.frame.iloc[:100], epsilon=1.0)


def test_learned_domain_is_paid_for_and_feeds_the_uniform_pseudo_rows(mixed_frame):
    synth = DP2StageSynthesizer(random_state=0, **FAST).fit(mixed_frame, epsilon=2.0,
                                                             delta=1e-6)
    summary = synth.privacy_ledger_.summary()
    assert len(summary) > 2  # the domain learning is in the ledger, before stage 2
    assert summary["target"].iloc[-1] == "language-model weights (DP-2Stage stage 2)"
    assert np.isclose(synth.privacy_ledger_.spent()[0], 2.0, rtol=1e-6)
    assert synth.stage1_steps_ > 0
    rows = synth.sample(20)
    assert list(rows.columns) == list(mixed_frame.columns)
