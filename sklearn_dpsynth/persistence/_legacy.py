"""Reading version-1 model files (restricted pickles), for ``convert_v1`` only.

Version 1 stored the estimator as a pickle guarded by an allow-list of
globals.  That guard is not enough (a pickled ``numpy.dtype`` with
overlapping fields corrupts memory with allowed globals only), so
:func:`~sklearn_dpsynth.load` refuses version-1 files and this module is
reached only through
:func:`~sklearn_dpsynth.persistence.convert_v1` with ``allow_pickle=True``.
"""

from __future__ import annotations

import io
import json
import pickle
from typing import Any

from ._container import MAGIC

_PACKAGE = "sklearn_dpsynth"

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
            raise ValueError(f"The version-1 file refers to {module}.{name}, which is not on "
                             "the allow-list of version 1; nothing was executed.")
        return super().find_class(module, name)


def load_v1(blob: bytes) -> Any:
    """The model of a version-1 file's bytes (unpickled: trusted files only)."""
    if not blob.startswith(MAGIC):
        raise ValueError("Not a sklearn-dpsynth model file.")
    line, _, payload = blob[len(MAGIC):].partition(b"\n")
    if json.loads(line.decode()).get("format_version") != 1:
        raise ValueError("Not a version-1 model file.")
    model = _RestrictedUnpickler(io.BytesIO(payload)).load()
    if not hasattr(model, "privacy_ledger_"):
        raise ValueError("The version-1 file does not hold a fitted synthesizer.")
    return model
