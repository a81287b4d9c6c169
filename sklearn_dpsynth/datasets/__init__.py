"""Data sets: the Adult loader and generators with known ground truth."""

from .adult import ADULT_DOMAIN, bundled_adult_path, load_adult
from .bayesnet import BayesianNetwork, make_bayesnet

__all__ = ["load_adult", "bundled_adult_path", "ADULT_DOMAIN", "make_bayesnet", "BayesianNetwork"]
