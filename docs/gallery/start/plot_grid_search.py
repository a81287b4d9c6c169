"""
Tuning public hyperparameters with GridSearchCV
===============================================

Synthesizers are scikit-learn estimators, so ``GridSearchCV`` can rank their *public*
hyperparameters (here MST's number of bins of the numeric columns) by the held-out
log-likelihood ``score``. The caveat is the budget: **every fit in a search spends its own epsilon**,
and the held-out scores read the rows without noise.

A fixed ``random_state`` reproduces this example; a release keeps ``None`` (a seed
reveals the noise).
"""

# %%
# Public and private halves
# -------------------------
# The safe way to tune is on public data. Here the bundled Adult table is split in two:
# one half plays a public table of the same population, the other the private table.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import GridSearchCV, train_test_split

from sklearn_dpsynth import MSTSynthesizer
from sklearn_dpsynth.datasets import load_adult
from sklearn_dpsynth.privacy import epsilon_to_rho, rho_to_epsilon

data = load_adult()
columns = ["age", "education", "marital", "sex", "hr_per_week", "capital_gain", "income"]
domain = {c: data.domain[c] for c in columns}
public, private = train_test_split(data.frame[columns], test_size=0.5, random_state=0)

# %%
# The search
# ----------
# ``fit`` keywords go through ``GridSearchCV.fit`` to every candidate fit: each one
# spends ``epsilon=0.5``. ``score`` is in nats per row in the data's own units (a bin's
# probability is spread over its width), so it is comparable across binnings.
grid = {"n_bins": [4, 8, 16, 32]}
search = GridSearchCV(MSTSynthesizer(domain=domain, max_iter=200, random_state=0), grid,
                      cv=3)
search.fit(public, epsilon=0.5, delta=1e-9)
print("best:", search.best_params_, f"score {search.best_score_:.3f} nats/row")

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.errorbar(grid["n_bins"], search.cv_results_["mean_test_score"],
            yerr=search.cv_results_["std_test_score"], marker="o", capsize=3)
ax.set_xscale("log", base=2)
ax.set_xlabel("n_bins")
ax.set_ylabel("held-out log-likelihood (nats/row)")
ax.set_title("MST on Adult: 3-fold search over n_bins")
fig.tight_layout()

# %%
# What the search cost
# --------------------
# A search runs ``n_candidates * n_splits`` fits plus the refit. Had it run on the
# private table, its fits would compose: by basic composition the total is the **sum**
# of the fits' budgets. (Each row sits in ``n_splits - 1`` training folds, and zCDP
# composes more tightly than the sum, but the sum is the simple, safe bound.) And
# choosing ``best_params_`` from noiseless held-out scores of private rows is itself an
# access that no ledger records: it is not differentially private.
n_fits = len(search.cv_results_["params"]) * search.n_splits_ + 1
print(f"{n_fits} fits at epsilon=0.5 each: total epsilon (sum) = {0.5 * n_fits:.1f}, "
      f"delta = {1e-9 * n_fits:.0e}")
rho_each = epsilon_to_rho(0.5, 1e-9)
print(f"zCDP composition of the same fits: epsilon = "
      f"{rho_to_epsilon(n_fits * rho_each, n_fits * 1e-9):.2f}")

# %%
# The release
# -----------
# Tuned on public data, the private table is touched once, with the chosen
# hyperparameters, and spends exactly its budget:
final = MSTSynthesizer(domain=domain, random_state=0, **search.best_params_)
final.fit(private, epsilon=1.0, delta=1e-9)
print("private fit spent:", final.privacy_ledger_.spent())
print(f"held-out log-likelihood on the public half: {final.score(public):.3f} nats/row")
assert np.isclose(final.privacy_ledger_.spent()[0], 1.0)
