"""Synthesizers that use public data, and the "DP workload" baseline.

* :class:`PMWPubSynthesizer` -- public records reweighted to fit a noisy
  workload (PMW-pub / "Gemini inference").
* :class:`MSTPublicSynthesizer` -- MST's selection and measurements with the
  same reweighting instead of Private-PGM.
* :class:`JAMSynthesizer` -- an AIM-style loop choosing, for each marginal,
  a private measurement or the public answer.
* :func:`measure_workload` -- the workload's noisy answers, no synthetic data.

Every estimator takes the public table in ``fit(..., public_data=...)``.
"""

from .base import PublicDataSynthesizer, WeightedRecords
from ._reweight import reweight_records
from ._workload import NoisyWorkload, measure_workload
from .jam import JAMSynthesizer
from .mst_public import MSTPublicSynthesizer
from .pmw import PMWPubSynthesizer

__all__ = [
    "PMWPubSynthesizer",
    "MSTPublicSynthesizer",
    "JAMSynthesizer",
    "measure_workload",
    "NoisyWorkload",
    "reweight_records",
    "PublicDataSynthesizer",
    "WeightedRecords",
]
