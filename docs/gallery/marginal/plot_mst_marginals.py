"""
MST: sample rows and answer any marginal for free
=================================================

Fit :class:`~sklearn_dpsynth.MSTSynthesizer`, sample rows, and answer unmeasured
marginals from the model -- no budget spent.

A fixed ``random_state`` reproduces this example; a release keeps ``None`` (a seed
reveals the noise).
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sklearn_dpsynth import MSTSynthesizer
from sklearn_dpsynth.datasets import make_bayesnet

data = make_bayesnet(n_samples=10_000, n_features=6, random_state=0)
synth = MSTSynthesizer(domain=data.domain, random_state=0)
synth.fit(data.frame, epsilon=1.0, delta=1e-9)

print("tree edges:", synth.tree_edges_)
print(synth.privacy_ledger_.summary()[["target", "mechanism", "rho", "cumulative_epsilon"]])

rows = synth.sample(2000)
print(rows.head())

# Any marginal, measured or not, from the model -- no budget spent.
print(synth.marginal(["c2", "c4"], as_frame=True))

# The model's (c2, c4) marginal beside the real table's frequencies and the sample's.
categories = {c: data.domain[c] for c in ("c2", "c4")}


def frequencies(frame):
    counts = pd.crosstab(frame["c2"], frame["c4"], normalize=True)
    return counts.reindex(index=categories["c2"], columns=categories["c4"], fill_value=0)


panels = {"real": frequencies(data.frame).to_numpy(),
          "model (no budget)": synth.marginal(["c2", "c4"]),
          "sampled rows": frequencies(rows).to_numpy()}
fig, axes = plt.subplots(1, 3, figsize=(9, 3), sharey=True)
for ax, (title, table) in zip(axes, panels.items()):
    image = ax.imshow(table, vmin=0, vmax=max(p.max() for p in panels.values()), cmap="Blues")
    ax.set(title=title, xlabel="c4", xticks=range(3), xticklabels=categories["c4"])
    for (i, j), value in np.ndenumerate(table):
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8)
axes[0].set(ylabel="c2", yticks=range(4), yticklabels=categories["c2"])
fig.colorbar(image, ax=axes, shrink=0.8, label="probability")

fresh = make_bayesnet(n_samples=5000, n_features=6, random_state=0)
print(f"held-out NLL {-synth.score(fresh.frame):.3f} nats/row "
      f"(true entropy {data.entropy:.3f})")
assert np.isclose(synth.privacy_ledger_.spent()[0], 1.0)
