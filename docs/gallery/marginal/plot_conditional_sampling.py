"""
Conditional sampling and exact conditional marginals
====================================================

Conditional sampling and exact conditional marginals from MST and AIM: the conditions
enter the junction tree as evidence, no rejection and no budget.

A fixed ``random_state`` reproduces this example; a release keeps ``None`` (a seed
reveals the noise).
"""

import matplotlib.pyplot as plt
import numpy as np

from sklearn_dpsynth import AIMSynthesizer, MSTSynthesizer
from sklearn_dpsynth.datasets import make_bayesnet

data = make_bayesnet(n_samples=10_000, n_features=6, random_state=0)
given = {"c2": "v1", "x0": 35.0}  # a numeric value stands for its bin, [30, 40)
fig, axes = plt.subplots(1, 2, figsize=(8, 3), sharey=True)

for ax, synth in zip(axes, (MSTSynthesizer(domain=data.domain, random_state=0),
              AIMSynthesizer(domain=data.domain, rounds=8, random_state=0))):
    synth.fit(data.frame, epsilon=1.0, delta=1e-9)
    # Rows with c2 and x0's bin fixed: evidence is entered in the junction tree and the
    # other columns are sampled from the exact conditional distribution (no budget spent).
    rows = synth.sample(2000, conditions=given)
    assert (rows["c2"] == "v1").all() and rows["x0"].between(30, 40).all()
    # The exact conditional distribution of c3, and the sampled frequencies.
    exact = synth.marginal(["c3"], given=given)
    sampled = rows["c3"].value_counts(normalize=True).sort_index()
    print(type(synth).__name__, "P(c3 | c2, x0):", np.round(exact, 3),
          "sampled:", np.round(sampled.to_numpy(), 3))
    assert np.isclose(exact.sum(), 1.0)
    # The exact conditional beside the frequencies of the conditioned sample.
    sampled = sampled.reindex(data.domain["c3"], fill_value=0)
    positions = np.arange(len(exact))
    ax.bar(positions - 0.2, exact, width=0.4, label="exact P(c3 | c2, x0)")
    ax.bar(positions + 0.2, sampled.to_numpy(), width=0.4, label="2,000 sampled rows")
    ax.set(title=type(synth).__name__, xticks=positions, xticklabels=sampled.index,
           xlabel="c3")
axes[0].set_ylabel("probability")
axes[0].legend(fontsize=8)
fig.tight_layout()
