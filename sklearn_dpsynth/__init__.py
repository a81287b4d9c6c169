"""sklearn-dpsynth: differentially private synthetic tables as scikit-learn estimators."""

from ._base import DEFAULT_DELTA, BaseSynthesizer
from .domain import ColumnSpec, Domain
from .evolution import PrivateEvolutionSynthesizer
from .exceptions import (BudgetExceededError, DomainInferenceError, DomainInferenceWarning,
                         PrivacyWarning)
from .marginal import AIMSynthesizer, IndependentSynthesizer, MSTSynthesizer
from .neural import DP2StageSynthesizer, DPTBARTSynthesizer, SynLMSynthesizer
from .public import JAMSynthesizer, MSTPublicSynthesizer, PMWPubSynthesizer
from .preprocessing import TableDiscretizer, describe_domain, domain_from_public_data
from .persistence import load, save
from .privacy import PrivacyLedger

__version__ = "0.1.0"

__all__ = [
    "BaseSynthesizer",
    "IndependentSynthesizer",
    "MSTSynthesizer",
    "AIMSynthesizer",
    "DPTBARTSynthesizer",
    "DP2StageSynthesizer",
    "PMWPubSynthesizer",
    "MSTPublicSynthesizer",
    "JAMSynthesizer",
    "PrivateEvolutionSynthesizer",
    "SynLMSynthesizer",
    "TableDiscretizer",
    "domain_from_public_data",
    "describe_domain",
    "Domain",
    "ColumnSpec",
    "PrivacyLedger",
    "PrivacyWarning",
    "DomainInferenceWarning",
    "DomainInferenceError",
    "BudgetExceededError",
    "DEFAULT_DELTA",
    "save",
    "load",
]
