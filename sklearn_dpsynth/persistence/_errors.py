"""The errors and the warning of model files."""

from __future__ import annotations

__all__ = ["ModelFileError", "UnsafeModelFileError", "ModelFileSecurityWarning"]


class ModelFileError(ValueError):
    """A model file cannot be loaded: not a model file, damaged, too large or unsafe.

    Every way a file can fail to load ends in this error (or its subclass
    :class:`~sklearn_dpsynth.persistence.UnsafeModelFileError`); nothing from
    the file is executed and no other file is read.
    """


class UnsafeModelFileError(ModelFileError):
    """A model file asks for something a data-only model file never holds.

    Raised for a class outside the library's registry of persisted types, an
    array of a dtype outside the plain numeric ones, a time zone that is not
    an IANA name, or a version-1 (pickle) file.

    Attributes
    ----------
    global_name : str
        What was refused (a class or dtype name), or ``""``.
    """

    global_name: str = ""


class ModelFileSecurityWarning(UserWarning):
    """Warned by :func:`~sklearn_dpsynth.persistence.convert_v1`: a pickle file is being read."""
