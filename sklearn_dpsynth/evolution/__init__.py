"""Private Evolution for tables (Swanberg et al.), with pluggable row generators.

* :class:`PrivateEvolutionSynthesizer` -- private nearest-neighbour votes
  steer a generator that never sees the private data.
* :func:`workload_distance` -- the workload-aware distance (and its
  scaled-L1 variant for numeric columns, with :func:`code_positions`).
* ``sklearn_dpsynth.evolution.generators`` -- the generator protocol
  (:class:`RowGenerator`) and offline generators.
"""

from ._distance import column_similarity, nearest_candidates, workload_distance
from ._voting import vote_histogram
from .generators import (MutationGenerator, PublicBootstrapGenerator, RowGenerator,
                         SynthesizerGenerator, UniformGenerator, make_generator)
from .pe import PrivateEvolutionSynthesizer, code_positions, round_shares

__all__ = [
    "PrivateEvolutionSynthesizer",
    "round_shares",
    "code_positions",
    "column_similarity",
    "workload_distance",
    "nearest_candidates",
    "vote_histogram",
    "RowGenerator",
    "UniformGenerator",
    "MutationGenerator",
    "PublicBootstrapGenerator",
    "SynthesizerGenerator",
    "make_generator",
]
