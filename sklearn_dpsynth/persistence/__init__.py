"""Saving and loading fitted synthesizers in files that are data, never code.

A fitted synthesizer holds only differentially private outputs (noisy
marginals, the graphical model or network weights estimated from them,
privately learned or declared domains, the privacy ledger): saving it and
handing the file to someone else is itself a DP release, covered by the
budget spent in ``fit``.  Two things are *not* DP outputs and are handled
here:

* seeds.  A fixed seed is the noise: whoever knows it can recompute the
  noise and subtract it.  :func:`~sklearn_dpsynth.save` therefore drops every
  ``random_state`` at every depth (the model, a pipeline's synthesizer and
  steps, a Private Evolution generator's synthesizer) and every random
  generator (the sampling generator of a seeded fit is derived from the
  noise generator), unless ``keep_random_state=True`` is passed, for
  research files that stay private.  The header's ``keeps_random_state``
  says which.  A model loaded from a file without seeds samples from fresh
  OS entropy: ``sample`` after :func:`~sklearn_dpsynth.load` is reproducible only with
  ``sample(..., random_state=...)``;
* code.  The file holds JSON (classes, parameters, domain, ledger, fitted
  scalars and lists) and plain arrays in ``.npy`` form inside a zip
  archive.  :func:`~sklearn_dpsynth.load` builds objects only of the library's registry of
  persisted types (never importing what the file names), reads arrays only
  of plain numeric, bool and datetime dtypes, checks every size before
  allocating memory, restores torch modules as state dicts into modules
  rebuilt from the estimator's hyperparameters, and has no side effect: no
  other file is read, no engine (DuckDB, Spark) is started.  Every failure
  is a :class:`~sklearn_dpsynth.persistence.ModelFileError`.

Each estimator class declares the fitted attributes it saves in one class
attribute, ``_persisted_state_`` (collected along its class hierarchy);
neural estimators add a ``_persisted_module`` hook that builds an empty
module of the saved shape.  Saving refuses an estimator holding an
attribute its class does not declare, so nothing is silently lost.

File layout: the magic line ``DPSYNTH-MODEL``, one line of JSON (the
header: ``format_version``, ``library_version``, ``class``,
``keeps_random_state``) and a zip archive (entries stored, not compressed)
of ``model.json`` and ``arrays/<i>.npy``.  Version-1 files (pickles) are
refused; :func:`~sklearn_dpsynth.persistence.convert_v1` rewrites one you trust.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, BinaryIO

from ._codec import Decoder, Encoder
from ._container import DEFAULT_MAX_BYTES, read_file, read_header, write_file
from ._errors import ModelFileError, ModelFileSecurityWarning, UnsafeModelFileError
from ._types import is_estimator

__all__ = ["FORMAT_VERSION", "ModelFileError", "UnsafeModelFileError",
           "ModelFileSecurityWarning", "save", "load", "read_header", "check_savable",
           "convert_v1"]

#: Version of the file format written by :func:`~sklearn_dpsynth.save`.
#: :func:`~sklearn_dpsynth.load` reads this version only: version 1 (pickles)
#: is refused, see :func:`~sklearn_dpsynth.persistence.convert_v1`.
FORMAT_VERSION = 2


def _library_version() -> str:
    from sklearn_dpsynth import __version__  # the package's front door, same layer
    return __version__


def _check_model(model: Any) -> None:
    if not is_estimator(model):
        raise ValueError(f"save handles the synthesizers and pipelines of sklearn_dpsynth "
                         f"only, got {type(model).__name__}.")


def check_savable(model: Any) -> None:
    """Raise ValueError unless a model of this class and parameters can be saved.

    Checks the class and encodes the parameters (not the fitted state):
    the command line calls it before ``fit`` spends any budget.

    Parameters
    ----------
    model : estimator
        A (fitted or unfitted) synthesizer or pipeline of this library.

    Raises
    ------
    ValueError
        Naming what a model file cannot hold (a foreign class, a callable
        parameter, ...).
    """
    _check_model(model)
    encoder = Encoder(keep_random_state=False)
    for name, value in model.get_params(deep=False).items():
        encoder.encode(value, f"{type(model).__name__}.{name}")


def save(model: Any, path: str | os.PathLike | BinaryIO, *,
         keep_random_state: bool = False) -> None:
    """Save a fitted synthesizer to a file that :func:`~sklearn_dpsynth.load` reads safely.

    The fitted model holds only differentially private outputs, so the
    file is itself a DP release covered by the budget spent in ``fit`` --
    except for seeds, which are dropped at every depth unless
    ``keep_random_state`` is True.

    Parameters
    ----------
    model : fitted synthesizer
        A fitted estimator (or :class:`~sklearn_dpsynth.pipeline.SynthesizerPipeline`)
        of this package.
    path : str, path-like or binary file
        Where to write (conventionally ``*.dpsynth``).
    keep_random_state : bool, default=False
        Keep every ``random_state`` and random generator's state in the
        file.  The seed is the noise: only for files that stay private
        (research, reproducibility); never publish such a file.

    Raises
    ------
    ValueError
        When ``model`` is not a fitted synthesizer of this package, or holds
        something a model file cannot hold (the message names it); nothing
        is written then.
    """
    if not hasattr(model, "privacy_ledger_"):
        raise ValueError("save needs a fitted synthesizer (no privacy_ledger_ attribute: "
                         "call fit first).")
    _check_model(model)
    if not isinstance(keep_random_state, bool):
        raise ValueError(f"keep_random_state must be a bool, got {keep_random_state!r}.")
    encoder = Encoder(keep_random_state)
    structure = encoder.encode(model, type(model).__name__)
    header = {"format_version": FORMAT_VERSION, "library_version": _library_version(),
              "class": type(model).__name__, "keeps_random_state": keep_random_state}
    write_file(path, header, structure, encoder.arrays)


def _check_version(header: dict) -> None:
    version = header["format_version"]
    if version == 1:
        raise UnsafeModelFileError(
            "The model file has format version 1 (a pickle, written by sklearn-dpsynth "
            f"{str(header.get('library_version', '?'))[:20]}), which this sklearn-dpsynth "
            "no longer loads: pickles can run code. If you wrote the file yourself, convert "
            "it once with sklearn_dpsynth.persistence.convert_v1(path, new_path, "
            "allow_pickle=True).")
    if version != FORMAT_VERSION:
        raise ModelFileError(
            f"The model file has format version {version} (written by sklearn-dpsynth "
            f"{str(header.get('library_version', '?'))[:20]}); this sklearn-dpsynth "
            f"({_library_version()}) reads format version {FORMAT_VERSION}"
            + (": upgrade sklearn-dpsynth to load it." if version > FORMAT_VERSION else "."))


def load(path: str | os.PathLike | BinaryIO, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """Load a synthesizer saved by :func:`~sklearn_dpsynth.save`, executing nothing from the file.

    Parameters
    ----------
    path : str, path-like or binary file
    max_bytes : int, default=8 GiB
        Largest file accepted.

    Returns
    -------
    model : fitted synthesizer

    Raises
    ------
    ModelFileError
        When the file is not a model file, is damaged, too large, or was
        written in another format version (a later one: upgrade
        sklearn-dpsynth).
    UnsafeModelFileError
        A :class:`~sklearn_dpsynth.persistence.ModelFileError` raised when
        the file names a class outside the library's persisted types, an
        array dtype other than plain numbers, a time zone that is not an
        IANA name, or is a version-1 pickle; nothing from the file is
        executed.
    """
    header, structure, arrays = read_file(path, max_bytes, _check_version)
    decoder = Decoder(arrays)
    try:
        model = decoder.decode(structure)
    except ModelFileError:
        raise
    except Exception as exc:  # a damaged but well-formed file fails in the library's code
        raise ModelFileError(f"The model file is damaged: {type(exc).__name__} while "
                             "rebuilding the model.") from None
    if not is_estimator(model) or not hasattr(model, "privacy_ledger_"):
        raise ModelFileError("The model file does not hold a fitted synthesizer.")
    if type(model).__name__ != header.get("class"):
        raise ModelFileError("The model file's header and content name different classes.")
    if decoder.read_seed and header.get("keeps_random_state") is not True:
        raise ModelFileError("The model file holds a seed or a generator state but its header "
                             "says keeps_random_state is false: it was not written by "
                             "sklearn_dpsynth.save.")
    return model


def convert_v1(source: str | os.PathLike, destination: str | os.PathLike, *,
               allow_pickle: bool = False, keep_random_state: bool = False) -> None:
    """Rewrite a version-1 (pickle) model file in the current format.

    Reading a version-1 file unpickles it; its restricted unpickler is *not*
    safe against crafted files (a crafted dtype corrupts memory).  Convert
    only files you wrote yourself, once, on a machine you do not mind
    risking.

    Parameters
    ----------
    source : str or path-like
        The version-1 file.
    destination : str or path-like
        The file to write (format version :data:`~sklearn_dpsynth.persistence.FORMAT_VERSION`).
    allow_pickle : bool, default=False
        Must be True: the explicit acknowledgement that ``source`` is
        unpickled.
    keep_random_state : bool, default=False
        Passed to :func:`~sklearn_dpsynth.save`.

    Raises
    ------
    ValueError
        When ``allow_pickle`` is not True or ``source`` is not a version-1
        file.
    """
    if allow_pickle is not True:
        raise ValueError("convert_v1 unpickles the file, which can run code: pass "
                         "allow_pickle=True for a file you wrote yourself.")
    if read_header(source)["format_version"] != 1:
        raise ValueError(f"{source} is not a version-1 model file.")
    warnings.warn(f"unpickling {source}: a crafted version-1 file can run code or corrupt "
                  "memory; convert only files you wrote yourself.",
                  ModelFileSecurityWarning, stacklevel=2)
    from ._legacy import load_v1

    save(load_v1(Path(source).read_bytes()), destination, keep_random_state=keep_random_state)
