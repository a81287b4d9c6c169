"""DP-2Stage: whole-value tokens, numeric points, per-row field orders (shuffle ablation)."""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

from sklearn_dpsynth.domain import ColumnSpec, Domain  # noqa: E402
from sklearn_dpsynth.neural import DP2StageSynthesizer  # noqa: E402
from sklearn_dpsynth.neural.constrained import RowAutomaton, token_log_probs  # noqa: E402
from sklearn_dpsynth.neural.text import RowText, WordVocabulary, value_strings  # noqa: E402
from sklearn_dpsynth.neural.text_model import TextTransformer  # noqa: E402

ODD = ["a, b", "x is y", " lead", "Married-civ-spouse", "NaN", "7"]
FAST = dict(d_model=16, n_layers=1, n_heads=2, epochs=1, stage1_epochs=1, stage1_rows=200,
            batch_size=64, n_bins=4)


def mixed_domain():
    return Domain([ColumnSpec("col, is", "categorical", categories=ODD, missing=True),
                   ColumnSpec("gain", "numeric", edges=np.linspace(0, 1000, 4), points=[0]),
                   ColumnSpec("age", "numeric", edges=np.linspace(17, 90, 5), integer=True)])


def make_text(domain, order, whole):
    keys = [str(c) for c in domain.columns]
    values = [value_strings(spec) for spec in domain.specs]
    strings = [v for column in values for v in column]
    vocab = WordVocabulary(strings, keys=keys, whole=strings if whole else ())
    return RowText(keys, values, order, vocab)


def all_rows(text):
    return np.array(list(itertools.product(*[range(len(v)) for v in text.values])))


def test_value_strings_cover_declared_points():
    spec = mixed_domain().specs[1]
    strings = value_strings(spec)
    assert len(strings) == spec.size == 4 and len(set(strings)) == 4
    assert strings[spec.n_bins] == "0"


@pytest.mark.parametrize("whole", [True, False])
def test_whole_and_piece_tokens_round_trip_every_row(whole):
    text = make_text(mixed_domain(), [2, 0, 1], whole)
    rows = all_rows(text)
    assert np.array_equal(text.parse(text.to_text(rows)), rows)
    _, _, lengths = text.encode(rows)
    if whole:  # <bos> + (key, is, value, terminator) per column
        assert np.all(lengths == 1 + 4 * text.n_columns) and text.max_length == 13
    else:
        assert lengths.max() > 13


def test_whole_token_likelihood_sums_to_one_over_the_domain():
    text = make_text(mixed_domain(), [1, 2, 0], whole=True)
    torch.manual_seed(0)
    model = TextTransformer(text.vocabulary.n_tokens, text.max_length, d_model=8,
                            n_layers=1, n_heads=2)
    torch.nn.init.normal_(model.head.weight, std=2.0)
    rows = all_rows(text)
    tokens, _, lengths = text.encode(rows)
    log_probs = token_log_probs(model.eval(), RowAutomaton(text), tokens, lengths,
                                torch.device("cpu"))
    assert np.exp(log_probs.sum(axis=1)).sum() == pytest.approx(1.0, abs=1e-5)


def test_per_row_orders_match_fixed_order_encodings():
    domain = mixed_domain()
    base = make_text(domain, [0, 1, 2], whole=False)
    rows = all_rows(base)[::5]
    orders = np.random.default_rng(0).permuted(np.tile(np.arange(3), (len(rows), 1)), axis=1)
    tokens, types, lengths = base.encode(rows, orders)
    for order in {tuple(o) for o in orders}:
        fixed = RowText(base.keys, base.values, order, base.vocabulary)
        expected = fixed.encode(rows)
        mask = (orders == order).all(axis=1)
        width = expected[0].shape[1]
        assert np.array_equal(tokens[mask, :width], expected[0][mask])
        assert np.array_equal(types[mask, :width], expected[1][mask])
        assert np.array_equal(lengths[mask], expected[2][mask])


def test_shuffle_draws_fresh_orders_and_keeps_the_accounting(bayesnet):
    frame = bayesnet.frame.iloc[:300]
    fixed = DP2StageSynthesizer(domain=bayesnet.domain, random_state=0, **FAST)
    shuffled = DP2StageSynthesizer(domain=bayesnet.domain, random_state=0,
                                   column_order="shuffle", **FAST)
    fixed.fit(frame, epsilon=1.0, delta=1e-6)
    shuffled.fit(frame, epsilon=1.0, delta=1e-6)
    assert shuffled.privacy_ledger_.spent() == pytest.approx(fixed.privacy_ledger_.spent())
    assert shuffled.noise_multiplier_ == fixed.noise_multiplier_
    assert shuffled.text_.order == fixed.text_.order  # sampling uses the default order
    codes = shuffled.domain_.encode(frame)
    batch_rows = shuffled._shuffled_rows(shuffled.text_, codes, 0.65,
                                         np.random.default_rng(0))
    first, second = batch_rows(np.arange(50))[0], batch_rows(np.arange(50))[0]
    assert not np.array_equal(first, second)
    keys = {shuffled.text_.key_tokens[j][0] for j in range(shuffled.text_.n_columns)}
    assert len({int(row[1]) for row in first} & keys) > 1  # several first fields
    assert fixed._shuffled_rows(fixed.text_, codes, 0.65, np.random.default_rng(0)) is None
    again = DP2StageSynthesizer(domain=bayesnet.domain, random_state=0,
                                column_order="shuffle", **FAST).fit(frame, epsilon=1.0,
                                                                    delta=1e-6)
    assert again.sample(20, random_state=1).equals(shuffled.sample(20, random_state=1))


def test_value_tokens_is_validated(bayesnet):
    synth = DP2StageSynthesizer(domain=bayesnet.domain, value_tokens="bytes", **FAST)
    with pytest.raises(ValueError, match="value_tokens"):
        synth.fit(bayesnet.frame.iloc[:100], epsilon=1.0)


def test_numeric_bins_share_tokens_and_text_shows_values(mixed_frame):
    synth = DP2StageSynthesizer(random_state=0, preprocessing="non-private", **FAST)
    with pytest.warns(Warning):
        synth.fit(mixed_frame, epsilon=2.0, delta=1e-6)
    text, specs = synth.text_, synth.domain_.specs
    numeric = [j for j, spec in enumerate(specs) if spec.kind == "numeric"]
    assert numeric
    for j in range(text.n_columns):
        assert all(len(seq) == 1 for seq in text.value_tokens[j])
    for j in numeric:
        bins = [text.value_tokens[j][k][0] for k in range(specs[j].n_bins)]
        assert bins == [text.vocabulary.bin_token(k) for k in range(specs[j].n_bins)]
    rows = synth.sample(30, random_state=0)
    codes = synth.domain_.encode(rows)
    assert np.array_equal(text.parse(text.to_text(codes)), codes)
    assert "<bin:" not in "".join(synth.rows_as_text(rows))
    pieces = DP2StageSynthesizer(random_state=0, preprocessing="non-private",
                                 value_tokens="pieces", **FAST)
    with pytest.warns(Warning):
        pieces.fit(mixed_frame, epsilon=2.0, delta=1e-6)
    assert pieces.rows_as_text(rows) == synth.rows_as_text(rows)
