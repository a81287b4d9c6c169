"""Private Evolution for tables (Swanberg et al.), with pluggable row generators.

* :class:`PrivateEvolutionSynthesizer` -- private nearest-neighbour votes
  steer a generator that never sees the private data.
* :func:`workload_distance` -- the workload-aware distance.
* ``sklearn_dpsynth.evolution.generators`` -- the generator protocol
  (:class:`RowGenerator`) and offline generators.
"""

from ._distance import nearest_candidates, workload_distance
from ._voting import vote_histogram
from .generators import (PublicBootstrapGenerator, RowGenerator, SynthesizerGenerator,
                         UniformGenerator, make_generator)
from .pe import PrivateEvolutionSynthesizer, round_shares

__all__ = [
    "PrivateEvolutionSynthesizer",
    "round_shares",
    "workload_distance",
    "nearest_candidates",
    "vote_histogram",
    "RowGenerator",
    "UniformGenerator",
    "PublicBootstrapGenerator",
    "SynthesizerGenerator",
    "make_generator",
]
