"""Non-private public pre-training of DP-TBART and SynLM (the two-stage idea on level tokens)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

from sklearn_dpsynth.domain import Domain  # noqa: E402
from sklearn_dpsynth.neural import DPTBARTSynthesizer, SynLMSynthesizer  # noqa: E402
from sklearn_dpsynth.neural.layout import PlainLayout, natural_orders  # noqa: E402
from sklearn_dpsynth.neural.pretraining import pretrain_transformer  # noqa: E402
from sklearn_dpsynth.neural.training import row_log_likelihood  # noqa: E402
from sklearn_dpsynth.neural.transformer import TabularTransformer  # noqa: E402

FAST = dict(epochs=1, d_model=16, n_layers=1, n_heads=2, batch_size=64, n_bins=4)


def test_pretraining_fits_the_public_rows(bayesnet):
    domain = Domain.from_declaration(bayesnet.domain, n_bins=4)
    codes = domain.encode(bayesnet.frame.iloc[:1500])
    layout = PlainLayout(domain.sizes)
    torch.manual_seed(0)
    model = TabularTransformer(layout.vocabulary.n_tokens, layout.seq_len, domain.sizes,
                               d_model=16, n_layers=1, n_heads=2)
    device = torch.device("cpu")

    def nll():
        with torch.no_grad():
            return -float(row_log_likelihood(model.eval(), layout, codes,
                                             natural_orders(len(codes), codes.shape[1]),
                                             device).mean())

    before = nll()
    pretrain_transformer(model, layout, codes, epochs=8, batch_size=128, lr=1e-2,
                         warmup_steps=5, rng=np.random.default_rng(0), device=device)
    assert before == pytest.approx(np.log(domain.sizes).sum(), rel=1e-4)  # zero head: uniform
    assert nll() < before - 0.5
    with pytest.raises(ValueError, match="public_codes"):
        pretrain_transformer(model, layout, codes[:, :2], epochs=1, batch_size=8, lr=1e-3,
                             warmup_steps=0, rng=np.random.default_rng(0), device=device)


@pytest.mark.parametrize("cls", [DPTBARTSynthesizer, SynLMSynthesizer])
def test_pretraining_costs_nothing_and_changes_the_start(cls, bayesnet):
    private, public = bayesnet.frame.iloc[:400], bayesnet.frame.iloc[2000:2600]
    plain = cls(domain=bayesnet.domain, random_state=0, **FAST).fit(private, epsilon=1.0)
    pretrained = cls(domain=bayesnet.domain, random_state=0, pretrain_epochs=3, **FAST)
    pretrained.fit(private, epsilon=1.0, public_data=public)
    assert pretrained.privacy_ledger_.spent() == pytest.approx(plain.privacy_ledger_.spent())
    assert pretrained.noise_multiplier_ == pytest.approx(plain.noise_multiplier_)
    assert len(pretrained.privacy_ledger_.entries) == len(plain.privacy_ledger_.entries)
    assert not np.allclose(pretrained.score_samples(public), plain.score_samples(public))
    Domain.from_declaration(bayesnet.domain, n_bins=4).encode(pretrained.sample(50))


@pytest.mark.parametrize("cls", [DPTBARTSynthesizer, SynLMSynthesizer])
def test_public_data_without_pretraining_is_a_clear_error(cls, bayesnet):
    synth = cls(domain=bayesnet.domain, random_state=0, **FAST)
    with pytest.raises(ValueError, match="public_data.*pretrain_epochs > 0"):
        synth.fit(bayesnet.frame.iloc[:200], epsilon=1.0, public_data=bayesnet.frame.iloc[:50])
