"""Marginal-based synthesizers."""

from .independent import IndependentSynthesizer

__all__ = ["IndependentSynthesizer"]
