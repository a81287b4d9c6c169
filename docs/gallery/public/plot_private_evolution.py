"""
Private Evolution with pluggable generators
===========================================

Private nearest-neighbour votes steer a public generator
(:class:`~sklearn_dpsynth.evolution.PrivateEvolutionSynthesizer`): uniform candidates, a
bootstrap of a public table, any fitted synthesizer, or your own generator.
"""

import numpy as np
import pandas as pd

from sklearn_dpsynth import IndependentSynthesizer
from sklearn_dpsynth.datasets import make_bayesnet
from sklearn_dpsynth.evolution import (PrivateEvolutionSynthesizer, SynthesizerGenerator,
                                       UniformGenerator)

data = make_bayesnet(n_samples=4000, n_features=5, n_numeric=0, random_state=0)
columns = list(data.frame.columns)
domain = dict(zip(columns, data.network.cardinalities))
private = pd.DataFrame(data.codes, columns=columns)
public = pd.DataFrame(data.network.sample_codes(500, np.random.default_rng(1)), columns=columns)

# 1. Uniform candidates, one round (the paper's best setting).
pe = PrivateEvolutionSynthesizer(domain=domain, generator="uniform", random_state=0)
pe.fit(private, epsilon=1.0)
print(pe.history_)

# 2. A bootstrap of the public table, three rounds with an increasing budget.
pe = PrivateEvolutionSynthesizer(domain=domain, generator="public", rounds=3, random_state=0)
pe.fit(private, epsilon=1.0, public_data=public)
print(pe.privacy_ledger_.summary()[["target", "rho", "cumulative_epsilon"]])

# 3. Any fitted synthesizer as generator (here one fitted on the public table).
prior = IndependentSynthesizer(domain=domain, random_state=0).fit(public, epsilon=10.0)
pe = PrivateEvolutionSynthesizer(domain=domain, generator=SynthesizerGenerator(prior),
                                 rounds=2, random_state=0)
pe.fit(private, epsilon=1.0)
print(pe.sample(5))


# 4. Your own generator: anything with random_rows(n, rng) and variations(rows, rng)
#    returning codes of the domain -- e.g. a client of a language model that decodes
#    rows with domain.decode, prompts, and encodes the answers with domain.encode.
class ShuffledPublic:
    """Rows of the public table with every column shuffled (knows only 1-way marginals)."""

    def __init__(self, domain, public_codes):
        self.codes = public_codes
        self.uniform = UniformGenerator(domain.sizes)

    def random_rows(self, n, rng):
        picks = rng.integers(0, len(self.codes), size=(n, self.codes.shape[1]))
        return self.codes[picks, np.arange(self.codes.shape[1])]

    def variations(self, rows, rng):
        return self.uniform.variations(rows, rng)


pe = PrivateEvolutionSynthesizer(domain=domain, generator=ShuffledPublic, random_state=0)
pe.fit(private, epsilon=1.0, public_data=public)
assert np.isclose(pe.privacy_ledger_.spent()[0], 1.0)
