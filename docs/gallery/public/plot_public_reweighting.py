"""
PMW-pub, MST with public data, JAM and the DP workload
======================================================

Use a public table: :class:`~sklearn_dpsynth.public.PMWPubSynthesizer`,
:class:`~sklearn_dpsynth.public.MSTPublicSynthesizer`,
:class:`~sklearn_dpsynth.public.JAMSynthesizer` and
:func:`~sklearn_dpsynth.public.measure_workload`, on integer codes with a known ground truth.
"""

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.public import (JAMSynthesizer, MSTPublicSynthesizer, PMWPubSynthesizer,
                                    measure_workload)

# A private table and a small public sample of the same population (integer codes).
data = make_bayesnet(n_samples=6000, n_features=6, n_numeric=0, random_state=0)
columns = list(data.frame.columns)
domain = dict(zip(columns, data.network.cardinalities))
private = pd.DataFrame(data.codes, columns=columns)
public = pd.DataFrame(data.network.sample_codes(600, np.random.default_rng(1)), columns=columns)


def mean_tvd(real: pd.DataFrame, fake: pd.DataFrame) -> float:
    """Mean total variation distance over all 2-way marginals."""
    out = []
    for pair in itertools.combinations(columns, 2):
        p = real.value_counts(list(pair), normalize=True)
        q = fake.value_counts(list(pair), normalize=True).reindex(p.index, fill_value=0)
        out.append(0.5 * (np.abs(p - q).sum() + 1 - q.sum()))
    return float(np.mean(out))


tvds = {"public data alone": mean_tvd(private, public)}
print(f"public data alone: {tvds['public data alone']:.4f}")
noisy = measure_workload(private, domain=domain, epsilon=1.0, random_state=0)
print(f"DP workload answers: {len(noisy.answers)} noisy marginals, "
      f"spent epsilon={noisy.privacy_ledger.spent()[0]:.3f}")

for synth in (PMWPubSynthesizer(domain=domain, random_state=0),
              MSTPublicSynthesizer(domain=domain, random_state=0),
              JAMSynthesizer(domain=domain, rounds=12, random_state=0)):
    synth.fit(private, epsilon=1.0, public_data=public)
    rows = synth.sample(len(private))
    tvds[type(synth).__name__] = mean_tvd(private, rows)
    print(f"{type(synth).__name__}: 2-way TVD {mean_tvd(private, rows):.4f}, "
          f"spent epsilon={synth.privacy_ledger_.spent()[0]:.3f}")
    assert np.isclose(synth.privacy_ledger_.spent()[0], 1.0)

# JAM's choices: which marginals it measured and which it took from the public table.
print(pd.DataFrame(synth.history_)[["round", "clique", "source"]])

# %%
# The 2-way errors side by side: each method improves on the public table it starts
# from, with the same budget.
fig, ax = plt.subplots(figsize=(6, 2.6))
ax.barh(list(tvds), list(tvds.values()), color=["grey"] + ["tab:blue"] * (len(tvds) - 1))
ax.invert_yaxis()
ax.set(xlabel="mean 2-way TVD to the private table (lower is better)")
fig.tight_layout()
