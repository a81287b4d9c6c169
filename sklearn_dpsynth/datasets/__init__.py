"""Data sets: the Adult loader and generators with known ground truth."""

from .adult import ADULT_DOMAIN, load_adult
from .bayesnet import BayesianNetwork, make_bayesnet

__all__ = ["load_adult", "ADULT_DOMAIN", "make_bayesnet", "BayesianNetwork"]
