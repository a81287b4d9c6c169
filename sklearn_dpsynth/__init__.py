"""sklearn-dpsynth: differentially private synthetic tables as scikit-learn estimators."""

from ._base import DEFAULT_DELTA, BaseSynthesizer
from .domain import ColumnSpec, Domain
from .exceptions import BudgetExceededError, PrivacyWarning
from .marginal import AIMSynthesizer, IndependentSynthesizer, MSTSynthesizer
from .neural import DPTBARTSynthesizer, SynLMSynthesizer
from .preprocessing import TableDiscretizer, domain_from_public_data
from .privacy import PrivacyLedger

__version__ = "0.1.0"

__all__ = [
    "BaseSynthesizer",
    "IndependentSynthesizer",
    "MSTSynthesizer",
    "AIMSynthesizer",
    "DPTBARTSynthesizer",
    "SynLMSynthesizer",
    "TableDiscretizer",
    "domain_from_public_data",
    "Domain",
    "ColumnSpec",
    "PrivacyLedger",
    "PrivacyWarning",
    "BudgetExceededError",
    "DEFAULT_DELTA",
]
