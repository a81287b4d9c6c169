"""Level-token vocabulary and row layouts (numpy only), and the torch-free import."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sklearn_dpsynth.neural.layout import (
    FieldLayout,
    PlainLayout,
    conditioned_first_orders,
    natural_orders,
    random_orders,
)
from sklearn_dpsynth.neural.vocabulary import LevelVocabulary

SIZES = [2, 3, 4]


def test_level_tokens_have_disjoint_ranges_per_column():
    vocab = LevelVocabulary(SIZES, specials=["<bos>"])
    assert vocab.offsets.tolist() == [0, 2, 5, 9]
    assert vocab.n_value_tokens == 9 and vocab.n_tokens == 10
    assert vocab.special("<bos>") == 9
    ranges = [set(range(*vocab.column_range(c))) for c in range(3)]
    assert all(not (a & b) for i, a in enumerate(ranges) for b in ranges[i + 1:])
    assert vocab.column_of_token.tolist() == [0, 0, 1, 1, 1, 2, 2, 2, 2]


def test_encode_decode_round_trip_and_column_membership():
    vocab = LevelVocabulary(SIZES)
    rng = np.random.default_rng(0)
    codes = np.column_stack([rng.integers(0, k, 50) for k in SIZES])
    tokens = vocab.encode(codes)
    assert np.array_equal(vocab.decode(tokens), codes)
    for c in range(3):
        start, stop = vocab.column_range(c)
        assert np.all((tokens[:, c] >= start) & (tokens[:, c] < stop))


@pytest.mark.parametrize("codes, match", [
    (np.array([[0, 3, 0]]), "codes must lie"),
    (np.array([[0, -1, 0]]), "codes must lie"),
    (np.array([[0, 1]]), "codes must have shape"),
])
def test_bad_codes_raise(codes, match):
    with pytest.raises(ValueError, match=match):
        LevelVocabulary(SIZES).encode(codes)


@pytest.mark.parametrize("sizes, specials, match", [
    ([], (), "sizes"), ([2, 0], (), "sizes"), ([2], ("a", "a"), "specials")])
def test_bad_vocabularies_raise(sizes, specials, match):
    with pytest.raises(ValueError, match=match):
        LevelVocabulary(sizes, specials)


def test_unknown_special_names_the_parameter():
    with pytest.raises(ValueError, match="name"):
        LevelVocabulary(SIZES).special("<eos>")


def test_plain_layout_is_bos_then_values_shifted():
    layout = PlainLayout(SIZES)
    codes = np.array([[1, 2, 3]])
    tokens = layout.tokens(codes, natural_orders(1, 3))
    assert tokens.tolist() == [[9, 1, 4]]
    assert layout.prediction_positions(natural_orders(1, 3)).tolist() == [[0, 1, 2]]
    assert layout.seq_len == 3


def test_plain_layout_refuses_other_orders():
    layout = PlainLayout(SIZES)
    with pytest.raises(ValueError, match="natural field order"):
        layout.tokens(np.zeros((1, 3), int), np.array([[1, 0, 2]]))


def test_field_layout_frames_begin_value_pairs_in_the_given_order():
    layout = FieldLayout(SIZES)
    codes = np.array([[1, 2, 3]])
    order = np.array([[2, 0, 1]])
    begin = {c: layout.vocabulary.special(f"<begin:{c}>") for c in range(3)}
    tokens = layout.tokens(codes, order)
    assert tokens.tolist() == [[begin[2], 8, begin[0], 1, begin[1]]]
    # column c is predicted at its BEGIN token
    positions = layout.prediction_positions(order)[0]
    assert [tokens[0, positions[c]] for c in range(3)] == [begin[0], begin[1], begin[2]]


def test_chunks_feed_every_position_once_and_end_at_the_prediction():
    for layout in (PlainLayout(SIZES), FieldLayout(SIZES)):
        fed = []
        for slot in range(3):
            start, stop = layout.chunk(slot)
            assert stop - 1 == layout.slot_position(slot)
            fed.extend(range(start, stop))
        assert fed == list(range(layout.seq_len))


def test_copies_inputs_place_copies_side_by_side():
    layout = FieldLayout(SIZES)
    rng = np.random.default_rng(1)
    codes = np.column_stack([rng.integers(0, k, 4) for k in SIZES])
    orders = random_orders(8, 3, rng).reshape(4, 2, 3)
    tokens, positions, targets = layout.copies_inputs(codes, orders)
    assert tokens.shape == (4, 2 * layout.seq_len) and positions.shape == (4, 6)
    for j in range(2):
        single = layout.tokens(codes, orders[:, j])
        assert np.array_equal(tokens[:, j * layout.seq_len:(j + 1) * layout.seq_len], single)
        expected = layout.prediction_positions(orders[:, j]) + j * layout.seq_len
        assert np.array_equal(positions[:, 3 * j:3 * j + 3], expected)
    assert np.array_equal(targets[:, 0], layout.vocabulary.encode(codes))


def test_orders_helpers():
    rng = np.random.default_rng(0)
    orders = random_orders(100, 5, rng)
    assert np.array_equal(np.sort(orders, axis=1), natural_orders(100, 5))
    assert len({tuple(o) for o in orders}) > 50
    assert conditioned_first_orders(2, 5, [3, 1])[0].tolist() == [1, 3, 0, 2, 4]
    with pytest.raises(ValueError, match="permutation"):
        FieldLayout(SIZES).check_orders(np.array([[0, 0, 1]]))


def test_import_without_torch_and_clear_error_on_use():
    """``import sklearn_dpsynth.neural`` works without torch; fitting says what to install."""
    code = textwrap.dedent("""
        import sys

        class BlockTorch:
            # Like sys.modules["torch"] = None, but leaves no None entry that
            # scipy's array-API helpers would trip over.
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "opacus"):
                    raise ImportError(f"No module named {name!r} (blocked)")
                return None

        sys.meta_path.insert(0, BlockTorch())
        import numpy as np
        import sklearn_dpsynth
        import sklearn_dpsynth.neural
        from sklearn_dpsynth.neural import DPTBARTSynthesizer, SynLMSynthesizer
        from sklearn_dpsynth.neural import calibration, layout, vocabulary
        for cls in (DPTBARTSynthesizer, SynLMSynthesizer):
            synth = cls(domain=[2, 2], random_state=0)
            try:
                synth.fit(np.zeros((10, 2), dtype=int), epsilon=1.0)
            except ImportError as exc:
                assert "pip install sklearn-dpsynth[neural]" in str(exc), exc
            else:
                raise AssertionError("fit without torch did not raise ImportError")
        assert "torch" not in sys.modules
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
