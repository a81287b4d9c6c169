"""Marginal-based synthesizers.

Besides the estimators, public modules hold what the marginal-based
methods share with the public-data ones (JAM, MST+public, PMW-pub) and
with Private Evolution: ``selection`` (private spanning trees of pairs),
``candidates`` (AIM's candidate scores), ``workload`` (workload parsing
and candidate weights), ``measure`` (Gaussian measurement of marginals
through the ledger), ``budget`` (MST's budget split), ``compression``
(merging rare codes) and ``pgm_mixin`` (:class:`~sklearn_dpsynth.marginal.PGMMixin`:
marginals, sampling and scoring from a fitted graphical model).
"""

from .aim import AIMSynthesizer
from .independent import IndependentSynthesizer
from .mst import MSTSynthesizer
from .pgm_mixin import PGMMixin

__all__ = ["IndependentSynthesizer", "MSTSynthesizer", "AIMSynthesizer", "PGMMixin"]
