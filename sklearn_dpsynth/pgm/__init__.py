"""Graphical-model engine (Private-PGM) of the MST and AIM synthesizers.

Every entry point takes the domain as one validated value,
:class:`ModelDomain` (attribute names and sizes; a synthesizer gets it from
:meth:`sklearn_dpsynth.Domain.model_domain`).  Factors over named
attributes (:class:`Factor`), junction trees of clique
sets (:class:`JunctionTree`, :func:`model_size`), exact log-space belief
propagation (:func:`belief_propagation`, :class:`CalibratedBeliefs`; :func:`calibrate`
also reads requested small marginals in the same passes),
estimation from noisy marginals by mirror descent (:class:`Measurement`,
:func:`estimate`), and the fitted model with its generators
(:class:`GraphicalModel`, with exact conditioning on evidence).
"""

from .domain import ModelDomain
from .estimation import auto_dtype, estimate
from .factor import Factor
from .inference import (
    CalibratedBeliefs,
    ReductionPlan,
    ShiftGuesses,
    belief_propagation,
    calibrate,
    potentials_from_marginals,
    reduction_plan,
)
from .junction_tree import JunctionTree, model_size, model_size_mb
from .measurement import Measurement, Objective, estimate_total
from .model import GraphicalModel, ZeroProbabilityEvidence
from .sampling import sample_iid, sample_lowvar

__all__ = [
    "ModelDomain",
    "Factor",
    "JunctionTree",
    "model_size",
    "model_size_mb",
    "belief_propagation",
    "calibrate",
    "reduction_plan",
    "ReductionPlan",
    "CalibratedBeliefs",
    "ShiftGuesses",
    "potentials_from_marginals",
    "Measurement",
    "Objective",
    "estimate",
    "auto_dtype",
    "estimate_total",
    "GraphicalModel",
    "ZeroProbabilityEvidence",
    "sample_iid",
    "sample_lowvar",
]
