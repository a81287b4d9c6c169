"""A self-contained HTML quality report of a synthetic table.

:func:`~sklearn_dpsynth.report.build_report` returns one HTML page (figures embedded as base64 PNG,
no network needed to view it) built on ``sklearn_dpsynth.metrics``;
:func:`write_report` writes it to a file.  It needs matplotlib (the
``[report]`` extra).  The report reads the real tables without privacy
protection: it is for the data holder, not for publication.
"""

from ._build import build_report, write_report

__all__ = ["build_report", "write_report"]
