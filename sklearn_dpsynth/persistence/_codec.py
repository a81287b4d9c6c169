"""Fitted models as JSON plus plain arrays, and back, without running code from the file.

Every value is either JSON itself (None, bools, ints, finite floats,
strings, lists, dicts with string keys) or a one-key object whose key names
its kind (``{"$tuple": [...]}``, ``{"$array": 3}``, ``{"$estimator": ...}``).
The kinds are a closed list: containers, numpy arrays (plain dtypes, stored
as ``.npy``; strings and objects as JSON lists), numpy scalars and dtypes,
pandas dtypes from a whitelist (time zones only as IANA names), random
generators (only when the seed is kept), the value classes and estimators of
:func:`~sklearn_dpsynth.persistence._types.persisted_types`, and torch
modules as state dicts rebuilt by their estimator.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
import zoneinfo
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._container import MAX_DEPTH, check_array_dtype, decode_array
from ._errors import ModelFileError, UnsafeModelFileError
from ._types import ValueType, fitted_attributes, is_estimator, persisted_types, value_type_of

__all__ = ["Encoder", "Decoder", "check_dtype_name"]

_NULLABLE = {f"{kind}{bits}" for kind in ("Int", "UInt") for bits in (8, 16, 32, 64)}
_DTYPE_NAMES = _NULLABLE | {"Float32", "Float64", "boolean", "str", "string", "string[python]",
                            "string[pyarrow]", "category"}
_DATETIME_TZ = re.compile(r"datetime64\[(s|ms|us|ns), ([A-Za-z0-9_+\-/:]{1,64})\]")
_FIXED_OFFSET = re.compile(r"UTC[+-][0-9]{2}:[0-9]{2}")
_NUMPY_DTYPE = re.compile(r"[<>|=]?(b1|[iu][1248]|f[248]|c(8|16)|O|U[0-9]{1,5}|S[0-9]{1,5}"
                          r"|[Mm]8(\[[0-9]{0,3}[a-zA-Z]{1,2}\])?)")
_MAX_STRINGS = 10_000_000


@functools.lru_cache(maxsize=1)
def _iana_names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones()) | {"UTC"}


def check_time_zone(name: Any) -> str:
    """``name`` if it is an IANA time zone (or ``UTC±hh:mm``), else UnsafeModelFileError."""
    if isinstance(name, str) and (name in _iana_names() or _FIXED_OFFSET.fullmatch(name)):
        return name
    error = UnsafeModelFileError(f"The model file names the time zone {str(name)[:80]!r}, "
                                 "which is not an IANA time-zone name.")
    error.global_name = str(name)[:80]
    raise error


def check_dtype_name(name: Any) -> str:
    """``name`` if it is a pandas dtype name a model file may hold, else UnsafeModelFileError.

    Nullable integers and floats, ``boolean``, ``string``, ``category`` and
    ``datetime64[unit, tz]`` with ``tz`` an IANA name or a fixed UTC offset
    (never a ``dateutil/`` path).
    """
    if isinstance(name, str):
        if name in _DTYPE_NAMES:
            return name
        match = _DATETIME_TZ.fullmatch(name)
        if match:
            check_time_zone(match.group(2))
            return name
    error = UnsafeModelFileError(f"The model file names the dtype {str(name)[:80]!r}, which "
                                 "is not on the list of dtypes a model file may hold.")
    error.global_name = str(name)[:80]
    raise error


def _numpy_dtype(text: Any) -> np.dtype:
    if not (isinstance(text, str) and _NUMPY_DTYPE.fullmatch(text)):
        error = UnsafeModelFileError(f"The model file names the dtype {str(text)[:80]!r}, "
                                     "which is not a plain numpy dtype.")
        error.global_name = str(text)[:80]
        raise error
    return np.dtype(text)


@dataclass
class _ModuleState:
    """A torch module's tensors, waiting for its estimator to rebuild the module."""

    seq_len: int
    tensors: dict


def _torch_module_type() -> type | None:
    torch = sys.modules.get("torch")  # a model holding a module has imported torch
    return None if torch is None else torch.nn.Module


class Encoder:
    """Turns a fitted model into JSON and a list of arrays.

    Parameters
    ----------
    keep_random_state : bool
        Keep ``random_state`` parameters and generator states; otherwise
        every ``random_state`` (at any depth) is saved as None and every
        generator as "fresh".
    """

    def __init__(self, keep_random_state: bool) -> None:
        self.keep_random_state = keep_random_state
        self._types = persisted_types()
        self.arrays: list[np.ndarray] = []
        self._array_index: dict[int, int] = {}

    def encode(self, value: Any, where: str = "model", depth: int = 0) -> Any:
        """The JSON form of ``value`` (``where`` names it in errors)."""
        if depth > MAX_DEPTH - 5:
            raise ValueError(f"{where} is nested too deeply (or refers to itself) to be saved.")
        if value is None or isinstance(value, (bool, str)) and not isinstance(value, np.generic):
            return value
        if isinstance(value, np.generic):
            return self._scalar(value, where)
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return float(value) if math.isfinite(value) else {"$float": repr(float(value))}
        if isinstance(value, (list, tuple, set, frozenset, dict)):
            return self._container(value, where, depth)
        if isinstance(value, np.ndarray):
            return self._array(value, where, depth)
        return self._other(value, where, depth)

    def _container(self, value: Any, where: str, depth: int) -> Any:
        items = [self.encode(v, f"{where}[]", depth + 1) for v in
                 (value.values() if isinstance(value, dict) else value)]
        if isinstance(value, list):
            return items
        if isinstance(value, tuple):
            return {"$tuple": items}
        if isinstance(value, (set, frozenset)):
            # sorted by their JSON text: the same set gives the same file
            ordered = sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
            return {"$set" if isinstance(value, set) else "$frozenset": ordered}
        keys = list(value)
        if all(isinstance(k, str) and not isinstance(k, np.generic) and not k.startswith("$")
               for k in keys):
            return dict(zip(keys, items))
        return {"$dict": [[self.encode(k, f"{where}{{}}", depth + 1), v]
                          for k, v in zip(keys, items)]}

    def _scalar(self, value: np.generic, where: str) -> Any:
        dtype = value.dtype
        if dtype.kind in "Mm":
            return {"$scalar": [dtype.str, int(value.view("i8"))]}
        if dtype.kind in "US":
            return {"$scalar": [dtype.kind, str(value) if dtype.kind == "U" else value.hex()]}
        check_array_dtype(dtype)
        item = value.item()
        if dtype.kind == "c":
            item = [self.encode(item.real), self.encode(item.imag)]
        else:
            item = self.encode(item, where)
        return {"$scalar": [dtype.str, item]}

    def _array(self, value: np.ndarray, where: str, depth: int) -> Any:
        if value.dtype.kind in "UO":
            flat = [self.encode(v, f"{where}[]", depth + 1) for v in value.ravel().tolist()]
            kind = "$strarray" if value.dtype.kind == "U" else "$objarray"
            return {kind: {"shape": list(value.shape), "values": flat}}
        try:
            check_array_dtype(value.dtype)
        except UnsafeModelFileError:
            raise ValueError(f"{where} is an array of dtype {value.dtype}, which a model "
                             "file cannot hold.") from None
        index = self._array_index.get(id(value))
        if index is None or self.arrays[index] is not value:
            index = len(self.arrays)
            self.arrays.append(value)
            self._array_index[id(value)] = index
        return {"$array": index}

    def _other(self, value: Any, where: str, depth: int) -> Any:
        if isinstance(value, np.dtype):
            return {"$dtype": _numpy_dtype(value.str).str}
        if isinstance(value, pd.CategoricalDtype) and value.categories is None:
            return {"$category": bool(value.ordered)}
        if isinstance(value, pd.api.extensions.ExtensionDtype):
            name = str(value)
            if pd.api.types.pandas_dtype(check_dtype_name(name)) == value:
                return {"$pdtype": name}
        if isinstance(value, np.random.Generator):
            return {"$generator": self._generator(value, where)}
        if is_estimator(value, self._types):
            return {"$estimator": self._estimator(value, where, depth)}
        value_type = value_type_of(value, self._types)
        if value_type is not None:
            return {"$object": [value_type.cls.__name__,
                                self._state(value, value_type, where, depth)]}
        raise ValueError(f"{where} holds a {type(value).__module__}.{type(value).__qualname__}, "
                         "which a model file cannot hold (only data of the library's own "
                         "types, never code).")

    def _generator(self, value: np.random.Generator, where: str) -> Any:
        if not self.keep_random_state:
            return None
        state = value.bit_generator.state
        if state.get("bit_generator") != "PCG64":
            raise ValueError(f"{where} is a {state.get('bit_generator')} generator; model "
                             "files keep PCG64 generators only.")
        return {"state": state["state"]["state"], "inc": state["state"]["inc"],
                "has_uint32": state["has_uint32"], "uinteger": state["uinteger"]}

    def _state(self, value: Any, value_type: ValueType, where: str, depth: int) -> dict:
        names = list(vars(value))
        unknown = [name for name in names if name not in value_type.attributes]
        if unknown:
            raise ValueError(f"{where} ({type(value).__name__}) holds {unknown}, which its "
                             "entry in sklearn_dpsynth.persistence._types does not list.")
        return {name: (None if name in value_type.caches
                       else self.encode(getattr(value, name), f"{where}.{name}", depth + 1))
                for name in names}

    def _estimator(self, value: Any, where: str, depth: int) -> dict:
        params = value.get_params(deep=False)
        if not self.keep_random_state and "random_state" in params:
            params["random_state"] = None
        node = {"class": type(value).__name__,
                "params": {name: self.encode(v, f"{where}.{name}", depth + 1)
                           for name, v in params.items()}}
        declared = fitted_attributes(type(value))
        fitted = [name for name in vars(value) if name not in params]
        unknown = [name for name in fitted if name not in declared]
        if unknown:
            raise ValueError(f"{where} ({type(value).__name__}) holds the fitted attributes "
                             f"{unknown}, which its class's _persisted_state_ does not declare.")
        if fitted:
            node["fitted"] = {name: self._fitted(getattr(value, name), f"{where}.{name}", depth)
                              for name in fitted}
        return node

    def _fitted(self, value: Any, where: str, depth: int) -> Any:
        module_type = _torch_module_type()
        if module_type is not None and isinstance(value, module_type):
            tensors = {name: self.encode(tensor.detach().cpu().numpy(), f"{where}.{name}")
                       for name, tensor in value.state_dict().items()}
            return {"$module": {"seq_len": int(value.seq_len), "tensors": tensors}}
        return self.encode(value, where, depth + 1)


class Decoder:
    """Builds a model from the JSON and arrays written by :class:`Encoder`.

    Parameters
    ----------
    arrays : list of bytes
        The raw ``.npy`` entries of the file; consumed: an entry's bytes
        are released once its array is built.
    """

    _TAGS = ("$tuple", "$dict", "$set", "$frozenset", "$float", "$array", "$strarray",
             "$objarray", "$scalar", "$dtype", "$category", "$pdtype", "$generator",
             "$estimator", "$object")

    def __init__(self, arrays: list[bytes]) -> None:
        self._raw = arrays
        self._types = persisted_types()
        self._arrays: dict[int, np.ndarray] = {}
        self.n_strings = 0
        #: Whether a seed or generator state was read (the header must then say so).
        self.read_seed = False

    def decode(self, node: Any, depth: int = 0) -> Any:
        """The value of a JSON node."""
        if depth > MAX_DEPTH:
            raise ModelFileError(f"The model file is nested deeper than {MAX_DEPTH} levels.")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(item, depth + 1) for item in node]
        if not isinstance(node, dict):
            raise ModelFileError("The model file holds an unexpected JSON value.")
        tags = [key for key in node if key.startswith("$")]
        if not tags:
            return {key: self.decode(value, depth + 1) for key, value in node.items()}
        if len(node) != 1 or tags[0] not in self._TAGS:
            raise ModelFileError(f"The model file holds an unknown kind of value "
                                 f"{tags[0][:40]!r}.")
        tag, body = tags[0], node[tags[0]]
        return getattr(self, "_" + tag[1:])(body, depth + 1)

    # containers and numbers
    def _tuple(self, body: Any, depth: int) -> tuple:
        return tuple(self.decode(_expect(body, list), depth))

    def _set(self, body: Any, depth: int) -> set:
        return set(self.decode(_expect(body, list), depth))

    def _frozenset(self, body: Any, depth: int) -> frozenset:
        return frozenset(self.decode(_expect(body, list), depth))

    def _dict(self, body: Any, depth: int) -> dict:
        pairs = self.decode(_expect(body, list), depth)
        if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
            raise ModelFileError("The model file holds a damaged mapping.")
        return {key: value for key, value in pairs}

    def _float(self, body: Any, depth: int) -> float:
        if body not in ("nan", "inf", "-inf"):
            raise ModelFileError("The model file holds a damaged float.")
        return float(body)

    def _scalar(self, body: Any, depth: int) -> np.generic:
        kind, value = _expect(body, list, 2)
        if kind == "U":
            return np.str_(_expect(value, str))
        if kind == "S":
            return np.bytes_(bytes.fromhex(_expect(value, str)))
        dtype = check_array_dtype(_numpy_dtype(kind))
        if dtype.kind in "Mm":
            return np.array(_expect(value, int), dtype="i8").view(dtype)[()]
        if dtype.kind == "c":
            real, imag = (self.decode(v, depth) for v in _expect(value, list, 2))
            return dtype.type(complex(real, imag))
        value = self.decode(value, depth)
        if not isinstance(value, (bool, int, float)):
            raise ModelFileError("The model file holds a damaged numpy scalar.")
        return np.array(value).astype(dtype)[()] if dtype.kind != "b" else np.bool_(value)

    # arrays
    def _array(self, body: Any, depth: int) -> np.ndarray:
        if type(body) is not int or not 0 <= body < len(self._raw):
            raise ModelFileError("The model file refers to an array it does not hold.")
        if body not in self._arrays:
            self._arrays[body] = decode_array(self._raw[body], f"arrays/{body}.npy")
            self._raw[body] = b""  # decoded once: its bytes are not held twice
        return self._arrays[body]

    def _strarray(self, body: Any, depth: int) -> np.ndarray:
        shape, values = self._flat(body)
        if not all(isinstance(v, str) for v in values):
            raise ModelFileError("The model file holds a damaged string array.")
        return np.array(values, dtype=str).reshape(shape)

    def _objarray(self, body: Any, depth: int) -> np.ndarray:
        shape, values = self._flat(body)
        decoded = np.empty(len(values), dtype=object)
        for i, value in enumerate(values):
            decoded[i] = self.decode(value, depth + 1)
        return decoded.reshape(shape)

    def _flat(self, body: Any) -> tuple[tuple, list]:
        body = _expect(body, dict)
        shape, values = body.get("shape"), body.get("values")
        if not (isinstance(shape, list) and len(shape) <= 32
                and all(type(k) is int and k >= 0 for k in shape) and isinstance(values, list)
                and math.prod(shape) == len(values)):
            raise ModelFileError("The model file holds a damaged array of strings or objects.")
        self.n_strings += len(values)
        if self.n_strings > _MAX_STRINGS:
            raise ModelFileError("The model file holds too many strings.")
        return tuple(shape), values

    # dtypes and generators
    def _dtype(self, body: Any, depth: int) -> np.dtype:
        return _numpy_dtype(body)

    def _category(self, body: Any, depth: int) -> pd.CategoricalDtype:
        return pd.CategoricalDtype(ordered=_expect(body, bool))

    def _pdtype(self, body: Any, depth: int) -> Any:
        return pd.api.types.pandas_dtype(check_dtype_name(body))

    def _generator(self, body: Any, depth: int) -> np.random.Generator:
        if body is None:  # the seed was dropped: fresh OS entropy at every load
            return np.random.default_rng()
        self.read_seed = True
        body = _expect(body, dict)
        if set(body) != {"state", "inc", "has_uint32", "uinteger"} or not all(
                type(v) is int for v in body.values()):
            raise ModelFileError("The model file holds a damaged generator state.")
        bit_generator = np.random.PCG64()
        bit_generator.state = {"bit_generator": "PCG64",
                               "state": {"state": body["state"], "inc": body["inc"]},
                               "has_uint32": body["has_uint32"], "uinteger": body["uinteger"]}
        return np.random.Generator(bit_generator)

    # classes of the library
    def _lookup(self, name: Any) -> type | ValueType:
        entry = self._types.get(name) if isinstance(name, str) else None
        if entry is None:
            error = UnsafeModelFileError(
                f"The model file names the class {str(name)[:80]!r}, which is not one of the "
                "library's persisted types (an estimator or value class of sklearn_dpsynth "
                "whose extra is installed). Nothing was executed.")
            error.global_name = str(name)[:80]
            raise error
        return entry

    def _object(self, body: Any, depth: int) -> Any:
        name, state = _expect(body, list, 2)
        entry = self._lookup(name)
        if not isinstance(entry, ValueType):
            raise ModelFileError(f"The model file stores the estimator {name} as a value.")
        state = _expect(state, dict)
        unknown = [key for key in state if key not in entry.attributes]
        if unknown:
            raise ModelFileError(f"The model file gives {name} attributes it does not have.")
        obj = entry.cls.__new__(entry.cls)
        obj.__dict__.update({key: self.decode(value, depth + 1) for key, value in state.items()})
        _check_value(obj)
        return obj

    def _estimator(self, body: Any, depth: int) -> Any:
        body = _expect(body, dict)
        cls = self._lookup(body.get("class"))
        if not isinstance(cls, type) or set(body) - {"class", "params", "fitted"}:
            raise ModelFileError("The model file holds a damaged estimator.")
        params = self.decode(_expect(body.get("params"), dict), depth + 1)
        if set(params) != set(cls._get_param_names()):
            raise ModelFileError(f"The model file gives {cls.__name__} other parameters than "
                                 "its constructor takes.")
        self.read_seed |= params.get("random_state") is not None
        estimator = cls(**params)
        fitted = _expect(body.get("fitted", {}), dict)
        declared = fitted_attributes(cls)
        modules = {}
        for name, node in fitted.items():
            if name not in declared:
                raise ModelFileError(f"The model file gives {cls.__name__} a fitted attribute "
                                     "its class does not declare.")
            if isinstance(node, dict) and set(node) == {"$module"}:
                modules[name] = self._module(node["$module"])
            else:
                estimator.__dict__[name] = self.decode(node, depth + 1)
        for name, state in modules.items():
            estimator.__dict__[name] = rebuild_module(estimator, name, state)
        return estimator

    def _module(self, body: Any) -> _ModuleState:
        body = _expect(body, dict)
        seq_len, tensors = body.get("seq_len"), _expect(body.get("tensors"), dict)
        if type(seq_len) is not int or set(body) != {"seq_len", "tensors"}:
            raise ModelFileError("The model file holds a damaged module.")
        arrays = {}
        for name, node in tensors.items():
            array = self.decode(node) if isinstance(node, dict) and "$array" in node else None
            if not isinstance(array, np.ndarray):
                raise ModelFileError("The model file holds a damaged module tensor.")
            arrays[name] = array
        return _ModuleState(seq_len, arrays)


def _expect(value: Any, kind: type, length: int | None = None) -> Any:
    if not isinstance(value, kind) or (length is not None and len(value) != length):
        raise ModelFileError("The model file holds a damaged value.")
    return value


def _check_value(obj: Any) -> None:
    """Checks of value classes that interpret strings (dtypes)."""
    from .._input import InputForm

    if isinstance(obj, InputForm):
        for dtype in getattr(obj, "dtypes", []):
            if isinstance(dtype, str):
                check_dtype_name(dtype)


def rebuild_module(estimator: Any, name: str, state: _ModuleState) -> Any:
    """The torch module ``name`` of ``estimator``, rebuilt and filled with ``state``.

    The estimator builds an empty module from its recorded hyperparameters
    (its ``_persisted_module`` hook) on torch's ``meta`` device: the names,
    shapes and dtypes of its tensors must match the file's before any memory
    is allocated, and the file's arrays then become the module's tensors.
    """
    import torch

    hook = getattr(estimator, "_persisted_module", None)
    if hook is None:
        raise ModelFileError(f"{type(estimator).__name__} holds no torch module.")
    total = sum(array.size for array in state.tensors.values())
    with torch.device("meta"):
        skeleton = hook(name, state.seq_len, len(state.tensors), total)
    expected = {key: (tuple(t.shape), t.dtype) for key, t in skeleton.state_dict().items()}
    given = {key: (a.shape, torch.from_numpy(a[:0].copy()).dtype)
             for key, a in state.tensors.items()}
    if expected != given:
        raise ModelFileError(f"The model file's tensors do not match the {name} module that "
                             f"{type(estimator).__name__}'s parameters describe.")
    if any(part._non_persistent_buffers_set for part in skeleton.modules()):
        module = hook(name, state.seq_len, len(state.tensors), total)  # buffers initialised
    else:  # every tensor is in the state dict: the file's arrays become the tensors
        module = skeleton
    module.load_state_dict({key: torch.from_numpy(a) for key, a in state.tensors.items()},
                           strict=True, assign=True)
    if any(t.is_meta for t in (*module.parameters(), *module.buffers())):
        raise ModelFileError(f"The model file does not hold every tensor of {name}.")
    return module.eval()
