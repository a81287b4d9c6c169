"""
Quickstart: MST on the Adult table
==================================

Fit :class:`~sklearn_dpsynth.MSTSynthesizer` on the UCI Adult table shipped with the
package, sample synthetic rows, read the privacy ledger, and write the HTML quality
report. This is the README's quickstart, run.

A fixed ``random_state`` reproduces this example; a release keeps ``None`` (a seed
reveals the noise).
"""

# %%
# Load the data and its public domain
# -----------------------------------
# :func:`~sklearn_dpsynth.datasets.load_adult` reads the bundled copy (30,162 rows, no
# network). Its ``domain`` is the *declared* domain: bounds and category lists taken from
# the UCI documentation, not from the rows, so declaring it costs no budget. Hold 5,000
# rows out to evaluate the synthetic table.
from sklearn.model_selection import train_test_split

from sklearn_dpsynth import MSTSynthesizer
from sklearn_dpsynth.datasets import load_adult

data = load_adult()
train, holdout = train_test_split(data.frame, test_size=5000, random_state=0)
print(train.shape, holdout.shape)
print("age:", data.domain["age"], "| sex:", data.domain["sex"])

# %%
# Fit and sample
# --------------
# ``fit`` spends exactly the declared budget; ``sample`` returns rows in the input's form
# (same columns, dtypes and units).
synth = MSTSynthesizer(domain=data.domain, random_state=0)
synth.fit(train, epsilon=1.0, delta=1e-9)
rows = synth.sample(len(train))
rows.head()

# %%
# Every access to the private rows is an entry of the ledger, with its cost:
print(synth.privacy_ledger_.spent())
print(synth.privacy_ledger_.summary())

# %%
# The held-out log-likelihood (nats per row, higher is better) and any marginal of the
# model, measured or not -- reading the fitted model spends no budget:
print(synth.score(holdout))
print(synth.marginal(["sex", "income"]))

# %%
# Real and synthetic 1-way marginals
# ----------------------------------
from sklearn_dpsynth.metrics import plot_marginals

fig = plot_marginals(train, rows, ["age", "education", "marital", "hr_per_week", "sex",
                                   "income"], domain=data.domain)

# %%
# The quality report
# ------------------
# :func:`~sklearn_dpsynth.report.write_report` writes one self-contained HTML page:
# column distributions, pairwise associations, k-way marginal errors, ML efficacy on the
# holdout, distance to closest record, and the ledger. It reads the real table without
# protection: it is for the data holder, not for publication.
import tempfile
from pathlib import Path

from sklearn_dpsynth.report import write_report

folder = tempfile.TemporaryDirectory()  # write it wherever you keep it instead
path = Path(folder.name) / "report.html"
write_report(path, train, rows, holdout=holdout, model=synth, target="income",
             domain=data.domain)
print(f"wrote {path.name}: {path.stat().st_size / 1e6:.1f} MB")
folder.cleanup()
