"""Marginal-based synthesizers."""

from .aim import AIMSynthesizer
from .independent import IndependentSynthesizer
from .mst import MSTSynthesizer

__all__ = ["IndependentSynthesizer", "MSTSynthesizer", "AIMSynthesizer"]
