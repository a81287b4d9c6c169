"""Marginal-based synthesizers."""

from .independent import IndependentSynthesizer
from .mst import MSTSynthesizer

__all__ = ["IndependentSynthesizer", "MSTSynthesizer"]
