"""The optional ``[neural]`` dependencies (torch and opacus), imported on use."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["INSTALL_HINT", "require_torch"]

#: How to get the optional dependencies.
INSTALL_HINT = "pip install sklearn-dpsynth[neural]"


def require_torch() -> ModuleType:
    """Import torch and opacus, or explain how to install them.

    Returns
    -------
    torch : module

    Raises
    ------
    ImportError
        When torch or opacus cannot be imported; the message names the
        ``[neural]`` extra.
    """
    try:
        torch = importlib.import_module("torch")
        importlib.import_module("opacus")
    except ImportError as exc:
        raise ImportError(
            "The neural synthesizers need torch and opacus, which are not installed "
            f"({exc}). Install them with: {INSTALL_HINT}") from exc
    return torch
