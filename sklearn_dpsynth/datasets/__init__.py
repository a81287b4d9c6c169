"""Data sets: the Adult and flights loaders and generators with known ground truth."""

from .adult import ADULT_DOMAIN, bundled_adult_path, load_adult
from .bayesnet import BayesianNetwork, make_bayesnet
from .flights import bundled_flights_path, load_flights

__all__ = ["load_adult", "bundled_adult_path", "ADULT_DOMAIN", "make_bayesnet", "BayesianNetwork",
           "load_flights", "bundled_flights_path"]
