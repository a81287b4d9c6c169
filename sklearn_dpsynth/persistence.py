"""Saving and loading fitted synthesizers without trusting the file.

A fitted synthesizer holds only differentially private outputs (noisy
marginals, the graphical model estimated from them, privately learned or
declared domains, the privacy ledger): saving it and handing the file to
someone else is itself a DP release, covered by the budget spent in ``fit``.
Two things are *not* DP outputs and are handled here:

* a fixed ``random_state``.  The seed is the noise: whoever knows it can
  recompute the noise and subtract it.  :func:`~sklearn_dpsynth.save` therefore drops it
  (the saved model's ``random_state`` becomes None and its sampling
  generator is re-seeded from fresh OS entropy, at saving and at every
  load) unless
  ``keep_random_state=True`` is passed, for research files that stay
  private;
* code.  A plain pickle runs whatever code the file names.  :func:`~sklearn_dpsynth.load`
  uses a restricted unpickler that resolves only an explicit allow-list of
  globals: classes defined in this package, numpy's array, scalar and
  random-generator reconstructors, a few pandas dtypes and harmless
  builtins.  Any other global (``os.system``, ``builtins.eval``, a function
  of this package ...) makes :func:`~sklearn_dpsynth.load` raise before anything is built.
  :func:`~sklearn_dpsynth.save` checks its own output against the same list, so it never
  writes a file that :func:`~sklearn_dpsynth.load` would refuse.

File layout: the magic line ``DPSYNTH-MODEL``, one line of JSON (format
version, library version, class name) and the restricted pickle.
"""

from __future__ import annotations

import copy
import io
import json
import os
import pickle
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

__all__ = ["FORMAT_VERSION", "UnsafeModelFileError", "save", "load", "read_header"]

#: Version of the file format written by :func:`~sklearn_dpsynth.save`.  :func:`~sklearn_dpsynth.load` reads
#: every version up to this one and refuses later ones.
FORMAT_VERSION = 1

_MAGIC = b"DPSYNTH-MODEL\n"
_PACKAGE = "sklearn_dpsynth"
_PICKLE_PROTOCOL = 4

#: Globals outside the package that a saved model may name.
_ALLOWED_GLOBALS: frozenset[tuple[str, str]] = frozenset({
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"),
    ("builtins", "complex"), ("builtins", "range"), ("builtins", "bytearray"),
    ("collections", "OrderedDict"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"), ("numpy.core.multiarray", "scalar"),
    ("numpy.random._pickle", "__generator_ctor"),
    ("numpy.random._pickle", "__bit_generator_ctor"),
    ("numpy.random._pcg64", "PCG64"),
    ("numpy.random.bit_generator", "SeedSequence"),
    ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
    ("pandas", "StringDtype"), ("pandas", "CategoricalDtype"),
    ("pandas.core.arrays.string_", "StringDtype"),
    ("pandas.core.dtypes.dtypes", "CategoricalDtype"),
    # nullable and time-zone dtypes (inputs read from files, DuckDB or Spark)
    *(("pandas", f"{kind}{bits}Dtype") for kind in ("Int", "UInt") for bits in (8, 16, 32, 64)),
    ("pandas", "Float32Dtype"), ("pandas", "Float64Dtype"), ("pandas", "BooleanDtype"),
    ("pandas", "DatetimeTZDtype"),
    ("datetime", "timezone"), ("datetime", "timedelta"),
})


class UnsafeModelFileError(pickle.UnpicklingError):
    """A model file names a global outside the allow-list of :func:`~sklearn_dpsynth.load`.

    Attributes
    ----------
    global_name : str
        The refused global, as ``module.name``.
    """

    global_name: str = ""


def _is_allowed(module: str, name: str) -> bool:
    """Whether the global ``module.name`` may be resolved while loading."""
    if (module, name) in _ALLOWED_GLOBALS:
        return True
    if module.startswith("numpy.dtypes") and name.endswith("DType"):
        return True
    if module != _PACKAGE and not module.startswith(_PACKAGE + "."):
        return False
    # Only classes *defined* in the package: no functions (a function of
    # the package that imports by name would be a way out), no foreign class
    # re-exported by one of its modules.
    try:
        obj = pickle.Unpickler.find_class(_NullUnpickler(), module, name)
    except (ImportError, AttributeError):
        return False
    return isinstance(obj, type) and getattr(obj, "__module__", "").startswith(_PACKAGE)


class _NullUnpickler(pickle.Unpickler):
    """An unpickler used only for its (unrestricted) ``find_class``."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(b""))


class _RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that resolves only allow-listed globals."""

    def find_class(self, module: str, name: str) -> Any:
        if not _is_allowed(module, name):
            error = UnsafeModelFileError(
                f"The model file refers to {module}.{name}, which is not on the allow-list "
                "of sklearn_dpsynth.load; the file was not made by sklearn_dpsynth.save or "
                "has been tampered with. Nothing was executed.")
            error.global_name = f"{module}.{name}"
            raise error
        return super().find_class(module, name)


def _refused_global(payload: bytes) -> str | None:
    """The first global of ``payload`` that :func:`~sklearn_dpsynth.load` refuses, or None.

    Runs the restricted unpickler itself on the payload, so that the check
    is exactly the one :func:`~sklearn_dpsynth.load` makes.
    """
    try:
        _RestrictedUnpickler(io.BytesIO(payload)).load()
    except UnsafeModelFileError as exc:
        return exc.global_name
    return None


def _without_seed(model: Any) -> Any:
    """A copy of ``model`` with no fixed seed and a fresh sampling generator."""
    model = copy.deepcopy(model)
    if hasattr(model, "set_params") and "random_state" in model.get_params(deep=False):
        model.set_params(random_state=None)
    if hasattr(model, "_sampling_rng"):
        model._sampling_rng = np.random.default_rng()
    return model


def _library_version() -> str:
    from sklearn_dpsynth import __version__  # the package's front door, same layer
    return __version__


def save(model: Any, path: str | os.PathLike | BinaryIO, *,
         keep_random_state: bool = False) -> None:
    """Save a fitted synthesizer to a file that :func:`~sklearn_dpsynth.load` reads safely.

    The fitted model holds only differentially private outputs, so the
    file is itself a DP release covered by the budget spent in ``fit``
    -- except for a fixed seed, which is dropped unless
    ``keep_random_state`` is True.

    Parameters
    ----------
    model : fitted synthesizer
        A fitted estimator of this package (it has ``privacy_ledger_``).
    path : str, path-like or binary file
        Where to write (conventionally ``*.dpsynth``).
    keep_random_state : bool, default=False
        Keep a fixed ``random_state`` and the sampling generator's state in
        the file.  The seed is the noise: only for files that stay private
        (research, reproducibility); never publish such a file.

    Raises
    ------
    ValueError
        When ``model`` is not a fitted synthesizer of this package, or holds
        an object :func:`~sklearn_dpsynth.load` would refuse (the message names it).
    """
    if not hasattr(model, "privacy_ledger_"):
        raise ValueError("save needs a fitted synthesizer (no privacy_ledger_ attribute: "
                         "call fit first).")
    if not type(model).__module__.startswith(_PACKAGE):
        raise ValueError(f"save handles synthesizers of {_PACKAGE} only, "
                         f"got {type(model).__name__}.")
    if not isinstance(keep_random_state, bool):
        raise ValueError(f"keep_random_state must be a bool, got {keep_random_state!r}.")
    if not keep_random_state:
        model = _without_seed(model)
    payload = pickle.dumps(model, protocol=_PICKLE_PROTOCOL)
    refused = _refused_global(payload)
    if refused is not None:
        raise ValueError(f"{type(model).__name__} cannot be saved safely: it holds an object "
                         f"that load would refuse ({refused}).")
    header = {"format_version": FORMAT_VERSION, "library_version": _library_version(),
              "class": f"{type(model).__module__}.{type(model).__qualname__}",
              "keeps_random_state": keep_random_state}
    blob = _MAGIC + json.dumps(header).encode() + b"\n" + payload
    if hasattr(path, "write"):
        path.write(blob)
    else:
        Path(path).write_bytes(blob)


def _split(blob: bytes) -> tuple[dict, bytes]:
    """The header and the payload of a model file's bytes."""
    if not blob.startswith(_MAGIC):
        raise ValueError("Not a sklearn-dpsynth model file (it does not start with the "
                         "DPSYNTH-MODEL line written by sklearn_dpsynth.save).")
    line, newline, payload = blob[len(_MAGIC):].partition(b"\n")
    try:
        header = json.loads(line.decode())
        version = header["format_version"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise ValueError("The model file's header is damaged (no readable format version).") from None
    if not newline or not isinstance(version, int) or isinstance(version, bool):
        raise ValueError("The model file's header is damaged (no readable format version).")
    return header, payload


def _read_bytes(path: str | os.PathLike | BinaryIO) -> bytes:
    if hasattr(path, "read"):
        return path.read()
    return Path(path).read_bytes()


def read_header(path: str | os.PathLike | BinaryIO) -> dict:
    """The JSON header of a model file, without loading the model.

    Parameters
    ----------
    path : str, path-like or binary file

    Returns
    -------
    dict
        ``format_version``, ``library_version``, ``class`` and
        ``keeps_random_state``.
    """
    return _split(_read_bytes(path))[0]


def load(path: str | os.PathLike | BinaryIO) -> Any:
    """Load a synthesizer saved by :func:`~sklearn_dpsynth.save`, executing no code from the file.

    Parameters
    ----------
    path : str, path-like or binary file

    Returns
    -------
    model : fitted synthesizer

    Raises
    ------
    ValueError
        When the file is not a model file, is damaged, or was written in a
        later format version than this library reads (upgrade
        sklearn-dpsynth).
    UnsafeModelFileError
        When the file names a global outside the allow-list (e.g.
        ``os.system``); nothing from the file is executed.
    """
    header, payload = _split(_read_bytes(path))
    version = header["format_version"]
    if version > FORMAT_VERSION or version < 1:
        raise ValueError(
            f"The model file has format version {version} (written by sklearn-dpsynth "
            f"{header.get('library_version', '?')}); this sklearn-dpsynth "
            f"({_library_version()}) reads format versions 1 to {FORMAT_VERSION}: "
            "upgrade sklearn-dpsynth to load it.")
    try:
        model = _RestrictedUnpickler(io.BytesIO(payload)).load()
    except UnsafeModelFileError:
        raise
    except Exception as exc:  # a damaged payload can fail in many ways
        raise ValueError(f"The model file is damaged: {type(exc).__name__}.") from None
    if not hasattr(model, "privacy_ledger_"):
        raise ValueError("The model file does not hold a fitted synthesizer.")
    if not header.get("keeps_random_state", False) and hasattr(model, "_sampling_rng"):
        # no seed was saved: every load samples from fresh OS entropy
        model._sampling_rng = np.random.default_rng()
    return model
