"""
DP-2Stage: rows as text
=======================

Rows as text, template learning on uniform pseudo rows, DP fine-tuning with
:class:`~sklearn_dpsynth.neural.DP2StageSynthesizer` (needs the ``[neural]`` extra).
"""

import numpy as np

from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.neural import DP2StageSynthesizer

data = make_bayesnet(n_samples=2000, n_features=4, random_state=0)
synth = DP2StageSynthesizer(domain=data.domain, target="c1", pseudo_data="uniform",
                            value_weight=0.65, d_model=16, n_layers=1, n_heads=2,
                            stage1_epochs=2, stage1_rows=1000, epochs=2, batch_size=256,
                            n_bins=8, random_state=0)
synth.fit(data.frame, epsilon=2.0, delta=1e-6)
print(synth.rows_as_text(data.frame.head(2)))  # "c1 is v2, x0 is 15, ..."
print(synth.privacy_ledger_.summary()[["target", "mechanism", "cumulative_epsilon"]])

value = data.frame["c1"].iloc[0]
rows = synth.sample(200, conditions={"c1": value})  # the prompt "c1 is <value>, "
assert (rows["c1"] == value).all()
print(f"held-out NLL {-synth.score(data.frame):.3f} nats/row; "
      f"perplexity by token type {synth.perplexity(data.frame.head(500))}")
assert np.isclose(synth.privacy_ledger_.spent()[0], 2.0, rtol=1e-3)

# %%
# The 1-way marginals of 500 unconditioned synthetic rows beside the real ones.
from sklearn_dpsynth.metrics import plot_marginals

fig = plot_marginals(data.frame, synth.sample(500), domain=data.domain, n_cols=4)
