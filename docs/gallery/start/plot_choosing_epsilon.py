"""
Choosing epsilon
================

How much accuracy does a budget buy? Fit the Independent baseline, MST and AIM on Adult
at several values of epsilon and plot the mean error of the 2-way marginals (total
variation distance, 0 is perfect) against epsilon.

A fixed ``random_state`` reproduces this example; a release keeps ``None`` (a seed
reveals the noise).
"""

# %%
# Eight columns of Adult, with their declared (public) domain; 5,000 rows held out as the
# reference the synthetic rows are compared with.
import matplotlib.pyplot as plt
import pandas as pd
from sklearn.model_selection import train_test_split

from sklearn_dpsynth import AIMSynthesizer, IndependentSynthesizer, MSTSynthesizer
from sklearn_dpsynth.datasets import load_adult
from sklearn_dpsynth.metrics import plot_metric_vs_epsilon, workload_error

data = load_adult()
columns = ["age", "education", "marital", "occupation", "race", "sex", "hr_per_week",
           "income"]
domain = {c: data.domain[c] for c in columns}
train, test = train_test_split(data.frame[columns], test_size=5000, random_state=0)

# %%
# AIM runs at most 24 rounds here (its default is 16 per column, 128) to keep the
# example fast; at epsilon=3 that costs it about 0.003 of error. Each fit spends its own epsilon: this sweep is a study of
# the methods, and on a real private table every fit would be a separate release.
methods = {
    "Independent": lambda: IndependentSynthesizer(domain=domain, random_state=0),
    "MST": lambda: MSTSynthesizer(domain=domain, random_state=0),
    "AIM": lambda: AIMSynthesizer(domain=domain, rounds=24, random_state=0),
}
epsilons = [0.1, 0.3, 1.0, 3.0]
results = []
for name, make in methods.items():
    for epsilon in epsilons:
        rows = make().fit(train, epsilon=epsilon, delta=1e-9).sample(len(train))
        error = workload_error(test, rows, k=2, domain=domain)
        results.append({"method": name, "epsilon": epsilon, "2-way TVD": error})
results = pd.DataFrame(results)
results.pivot(index="epsilon", columns="method", values="2-way TVD").round(4)

# %%
# The error floor of the held-out comparison is the sampling error between two real
# samples of these sizes; the Independent baseline stays high at any budget because it
# ignores every correlation.
floor = workload_error(test, train.sample(len(train), replace=True, random_state=0),
                       k=2, domain=domain)
fig, ax = plt.subplots(figsize=(6, 4))
plot_metric_vs_epsilon(results, "2-way TVD", ax=ax)
ax.axhline(floor, color="grey", linestyle=":", label="real vs real")
ax.legend()
ax.set_ylabel("mean 2-way TVD (lower is better)")
ax.set_title("Adult, 8 columns: error against the privacy budget")
fig.tight_layout()
