"""Transformer synthesizers trained with DP-SGD (the ``[neural]`` extra).

Rows are treated as sentences of *level* tokens (one token range per
column) and modelled by a small decoder-only transformer trained with
DP-SGD through Opacus:

* :class:`DPTBARTSynthesizer` -- one token per column in a fixed order
  (Castellon et al., DP-TBART);
* :class:`SynLMSynthesizer` -- ``BEGIN_{col} value`` fields, fixed or
  random field order, AugMult (Sablayrolles, Wang & Karrer);
* :class:`DP2StageSynthesizer` -- rows as ``key is value`` text, non-private
  template learning on pseudo data, then DP fine-tuning with a value-weighted
  loss and trie-constrained decoding (Afonja et al., DP-2Stage).

Importing this package does not import torch; fitting, sampling or scoring
does, and raises an ImportError naming ``pip install sklearn-dpsynth[neural]``
when torch or opacus is missing.  The building blocks live in submodules
that import torch on import: :mod:`~sklearn_dpsynth.neural.transformer`,
:mod:`~sklearn_dpsynth.neural.column_head`,
:mod:`~sklearn_dpsynth.neural.grad_rules`,
:mod:`~sklearn_dpsynth.neural.dpsgd` (the one training loop),
:mod:`~sklearn_dpsynth.neural.training`,
:mod:`~sklearn_dpsynth.neural.sampling`,
:mod:`~sklearn_dpsynth.neural.scoring`,
:mod:`~sklearn_dpsynth.neural.text_model`,
:mod:`~sklearn_dpsynth.neural.text_training`,
``sklearn_dpsynth.neural.constrained``; the torch-free ones are
``sklearn_dpsynth.neural.text``,
:mod:`~sklearn_dpsynth.neural.vocabulary`,
:mod:`~sklearn_dpsynth.neural.layout` and
:mod:`~sklearn_dpsynth.neural.calibration` (its accounting is in
:mod:`sklearn_dpsynth.privacy.dpsgd`).
"""

from .dp2stage import DP2StageSynthesizer
from .dptbart import DPTBARTSynthesizer
from .synlm import SynLMSynthesizer

__all__ = ["DP2StageSynthesizer", "DPTBARTSynthesizer", "SynLMSynthesizer"]
