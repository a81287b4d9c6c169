"""
Transformers on Adult and conditional sampling
==============================================

Train :class:`~sklearn_dpsynth.DPTBARTSynthesizer` and
:class:`~sklearn_dpsynth.SynLMSynthesizer` with DP-SGD on six Adult columns (tiny
settings: one small layer, two epochs), then sample rows under conditions. DP-TBART
generates the columns in a fixed order and conditions on a prefix of it; SynLM trained
with random field order conditions on any subset. MST's exact conditional distribution is
the reference. Needs the ``[neural]`` extra.

A fixed ``random_state`` reproduces this example; a release keeps ``None`` (a seed
reveals the noise).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sklearn_dpsynth import DPTBARTSynthesizer, MSTSynthesizer, SynLMSynthesizer
from sklearn_dpsynth.datasets import load_adult

data = load_adult()
columns = ["sex", "age", "education", "marital", "hr_per_week", "income"]
domain = {c: data.domain[c] for c in columns}
train = data.frame[columns].sample(8000, random_state=0)
holdout = data.frame[columns].drop(train.index).sample(3000, random_state=0)
tiny = dict(d_model=32, n_layers=1, n_heads=2, epochs=2, batch_size=256, random_state=0)

tbart = DPTBARTSynthesizer(domain=domain, **tiny).fit(train, epsilon=3.0, delta=1e-6)
synlm = SynLMSynthesizer(domain=domain, field_order="random", **tiny)
synlm.fit(train, epsilon=3.0, delta=1e-6)
mst = MSTSynthesizer(domain=domain, random_state=0).fit(train, epsilon=3.0, delta=1e-6)
for model in (tbart, synlm, mst):
    epsilon, delta = model.privacy_ledger_.spent()
    print(f"{type(model).__name__}: spent epsilon={epsilon:.3f}, delta={delta:g}; "
          f"held-out log-likelihood {model.score(holdout):.3f} nats/row")

# %%
# DP-SGD appears in the ledger as one entry given by its Renyi curve (``rho`` is NaN:
# the subsampled Gaussian is not zCDP), converted to epsilon at the ledger's delta:
tbart.privacy_ledger_.summary()[["target", "mechanism", "rho", "epsilon", "order"]]

# %%
# Conditioning
# ------------
# ``sex`` comes first in DP-TBART's order, so it can be fixed; SynLM can fix ``income``,
# which comes last. Conditioning spends no budget.
women = tbart.sample(2000, conditions={"sex": "Female"})
rich = synlm.sample(2000, conditions={"income": ">50K"})
assert (women["sex"] == "Female").all() and (rich["income"] == ">50K").all()
try:
    tbart.sample(10, conditions={"income": ">50K"})
except ValueError as error:
    print("DP-TBART refuses:", str(error)[:90], "...")

# %%
# P(income | sex = Female) from DP-TBART's samples and P(marital | income = >50K) from
# SynLM's, beside the exact conditionals of MST and the real frequencies.
real = train
panels = {
    "income | sex=Female": (women["income"], real.loc[real["sex"] == "Female", "income"],
                            mst.marginal(["income"], given={"sex": "Female"})),
    "marital | income=>50K": (rich["marital"], real.loc[real["income"] == ">50K", "marital"],
                              mst.marginal(["marital"], given={"income": ">50K"})),
}
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
for ax, (title, (sampled, observed, exact)) in zip(axes, panels.items()):
    levels = domain[title.split(" ")[0]]
    table = pd.DataFrame({
        "transformer": sampled.value_counts(normalize=True).reindex(levels, fill_value=0),
        "MST (exact)": pd.Series(np.asarray(exact), index=levels),
        "real": observed.value_counts(normalize=True).reindex(levels, fill_value=0),
    })
    table.plot.bar(ax=ax, rot=60)
    ax.set_title(title)
fig.tight_layout()
