"""AIM: adaptive, workload-aware selection and measurement of marginals.

The method of McKenna, Mullins, Sheldon & Miklau (2022).  One module per
concern: ``_estimator`` (the estimator and its select-measure-estimate
loop), ``_budget`` (the annealed budget schedule), ``_model`` (measurements,
structural zeros and warm-started Private-PGM estimation).  The candidate
scores and the size cap (``marginal.candidates``) and the workloads and
candidate weights (``marginal.workload``) are shared with JAM and live one
level up.
"""

from ._estimator import AIMSynthesizer

__all__ = ["AIMSynthesizer"]
