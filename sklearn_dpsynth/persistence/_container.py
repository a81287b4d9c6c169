"""The bytes of a model file: a magic line, a JSON header line, a zip of JSON and ``.npy``.

Layout (format version 2)::

    DPSYNTH-MODEL\\n
    {"format_version": 2, ...}\\n          the header: one line of JSON
    <zip archive, every entry stored>      model.json and arrays/<i>.npy

Everything is read with bounds checked before memory is allocated: the
header line, the file, the number and size of the zip entries, the JSON's
nesting, and every array's dtype (plain numeric, bool, datetime) and shape
against the bytes actually present.  No entry is ever unpickled: an array
is its ``.npy`` header (matched by a strict regular expression, never
evaluated) and its raw bytes, viewed with :func:`numpy.frombuffer`.
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from typing import Any, BinaryIO

import numpy as np

from ._errors import ModelFileError, UnsafeModelFileError

MAGIC = b"DPSYNTH-MODEL\n"
STRUCTURE_ENTRY = "model.json"
_ARRAY_ENTRY = re.compile(r"arrays/(0|[1-9][0-9]{0,8})\.npy")

#: Longest header line (bytes).
MAX_HEADER_BYTES = 64 * 1024
#: Largest ``model.json`` (bytes).
MAX_STRUCTURE_BYTES = 256 * 1024 * 1024
#: Most entries in the archive.
MAX_ENTRIES = 100_000
#: Deepest nesting of JSON containers in the structure.
MAX_DEPTH = 100
#: Default largest file that :func:`~sklearn_dpsynth.load` reads (bytes).
DEFAULT_MAX_BYTES = 8 * 1024 ** 3
#: Most dimensions of an array.
MAX_NDIM = 32
_NPY_HEADER_LIMIT = 10_000

#: Array dtypes a model file may hold: plain numbers, bools and datetimes.
_ARRAY_DTYPE = re.compile(
    r"[<>|]?(b1|[iu][1248]|f[248]|c(8|16)|[Mm]8(\[[0-9]{0,3}[a-zA-Z]{1,2}\])?)")


def check_array_dtype(dtype: np.dtype) -> np.dtype:
    """``dtype`` if a model file may hold arrays of it, else an UnsafeModelFileError."""
    if (not isinstance(dtype, np.dtype) or dtype.fields is not None or dtype.subdtype is not None
            or dtype.hasobject or not _ARRAY_DTYPE.fullmatch(dtype.str)):
        _refuse_dtype(f"{dtype!s}")
    return dtype


def _refuse_dtype(shown: str) -> None:
    error = UnsafeModelFileError(
        f"The model file holds an array of dtype {shown[:60]}; model files hold only "
        "plain numeric, bool and datetime arrays.")
    error.global_name = shown[:60]
    raise error


_NPY_HEADER = re.compile(
    r"\{'descr': '([<>|=]?[a-zA-Z][a-zA-Z0-9\[\]]{0,8})', 'fortran_order': (True|False), "
    r"'shape': \(((?:[0-9]{1,19}, ?){0,32}[0-9]{0,19})\), \} *\n")


def _npy_header(data: bytes, name: str) -> tuple[np.dtype, tuple, bool, int]:
    """dtype, shape, Fortran order and data offset of ``.npy`` bytes, parsed strictly.

    Only the header numpy writes for a plain array is accepted (matched by a
    regular expression, never evaluated); the dtype must be plain.
    """
    version = data[6:8]
    width = {b"\x01\x00": 2, b"\x02\x00": 4}.get(version) if data[:6] == b"\x93NUMPY" else None
    if width is None or len(data) < 8 + width:
        raise ModelFileError(f"The model file is damaged: {name} is not a .npy array.")
    length = int.from_bytes(data[8:8 + width], "little")
    start = 8 + width
    if length > _NPY_HEADER_LIMIT or start + length > len(data):
        raise ModelFileError(f"The model file is damaged: {name} has a bad .npy header.")
    match = _NPY_HEADER.fullmatch(data[start:start + length].decode("latin1"))
    if match is None:
        raise UnsafeModelFileError(f"The model file's {name} has a .npy header that is not "
                                   "the one of a plain numeric array.")
    descr, fortran, shape_text = match.groups()
    if not _ARRAY_DTYPE.fullmatch(descr):
        _refuse_dtype(descr)
    shape = tuple(int(k) for k in shape_text.replace(" ", "").split(",") if k)
    return check_array_dtype(np.dtype(descr)), shape, fortran == "True", start + length


def decode_array(data: bytes, name: str) -> np.ndarray:
    """The array of ``.npy`` bytes, its dtype and size checked before it is built."""
    dtype, shape, fortran_order, offset = _npy_header(data, name)
    count = 1
    for k in shape:
        count *= k
    payload = memoryview(data)[offset:]
    if count * dtype.itemsize != len(payload):
        raise ModelFileError(f"The model file is damaged: {name} declares "
                             f"{count * dtype.itemsize} bytes but holds {len(payload)}.")
    array = np.frombuffer(payload, dtype=dtype, count=count).reshape(
        shape, order="F" if fortran_order else "C")
    return array.copy(order="C")


# ------------------------------------------------------------------ writing
_EPOCH = (1980, 1, 1, 0, 0, 0)  # every entry's date: the same model gives the same bytes


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_EPOCH)
    info.compress_type = zipfile.ZIP_STORED
    return info


def _write_archive(stream: BinaryIO, header: dict, structure: Any,
                   arrays: list[np.ndarray]) -> None:
    stream.write(MAGIC + json.dumps(header, allow_nan=False).encode() + b"\n")
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        archive.writestr(_entry(STRUCTURE_ENTRY),
                         json.dumps(structure, allow_nan=False, separators=(",", ":")))
        for i, array in enumerate(arrays):
            with archive.open(_entry(f"arrays/{i}.npy"), "w",
                              force_zip64=array.nbytes > 2 ** 31) as entry:
                np.lib.format.write_array(entry, array, allow_pickle=False)


def write_file(target: str | os.PathLike | BinaryIO, header: dict, structure: Any,
               arrays: list[np.ndarray]) -> None:
    """Write a model file: the header line, then the archive, streamed to ``target``."""
    if hasattr(target, "write"):
        _write_archive(target, header, structure, arrays)
    else:
        with open(target, "wb") as stream:
            _write_archive(stream, header, structure, arrays)


# ------------------------------------------------------------------ reading
def _open(source: str | os.PathLike | BinaryIO) -> tuple[BinaryIO, bool]:
    if hasattr(source, "read"):
        return source, False
    return open(source, "rb"), True


def parse_header(line: bytes) -> dict:
    """The header dict of a header line (without its newline)."""
    try:
        header = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        header = None
    version = header.get("format_version") if isinstance(header, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise ModelFileError("The model file's header is damaged (no readable format version).")
    return header


def read_head(stream: BinaryIO) -> dict:
    """Read the magic and the header line of an open file; the header."""
    magic = stream.read(len(MAGIC))
    if magic != MAGIC:
        raise ModelFileError("Not a sklearn-dpsynth model file (it does not start with the "
                             "DPSYNTH-MODEL line written by sklearn_dpsynth.save).")
    line = stream.readline(MAX_HEADER_BYTES + 1)
    if not line.endswith(b"\n"):
        if len(line) > MAX_HEADER_BYTES:
            raise ModelFileError(f"The model file's header is longer than {MAX_HEADER_BYTES} "
                                 "bytes: not a file written by sklearn_dpsynth.save.")
        raise ModelFileError("The model file's header is damaged (no readable format version).")
    return parse_header(line[:-1])


def read_header(source: str | os.PathLike | BinaryIO) -> dict:
    """The JSON header of a model file, reading nothing past it.

    Parameters
    ----------
    source : str, path-like or binary file

    Returns
    -------
    dict
        ``format_version``, ``library_version``, ``class`` and
        ``keeps_random_state``.

    Raises
    ------
    ModelFileError
        When the file does not start with a model file's magic line and a
        header line of at most 64 KiB holding a format version.
    """
    stream, owned = _open(source)
    try:
        return read_head(stream)
    finally:
        if owned:
            stream.close()


def read_file(source: str | os.PathLike | BinaryIO, max_bytes: int,
              check_version: Any) -> tuple[dict, Any, list[bytes]]:
    """Header, structure (parsed JSON) and the archive's array entries of a model file.

    ``check_version(header)`` is called before the rest of the file is read.
    Returns ``(header, structure, arrays)`` where ``arrays[i]`` holds the raw
    ``.npy`` bytes of ``arrays/<i>.npy``.
    """
    stream, owned = _open(source)
    try:
        header = read_head(stream)
        check_version(header)
        body, size = _body(stream, max_bytes)
        if size > max_bytes:
            raise ModelFileError(f"The model file is larger than max_bytes={max_bytes}; "
                                 "pass a larger max_bytes to load it.")
        try:
            archive = zipfile.ZipFile(body)
            infos = archive.infolist()
        except Exception as exc:  # zipfile raises BadZipFile, OSError, ValueError, ...
            raise ModelFileError(f"The model file is damaged: {type(exc).__name__} in its "
                                 "archive.") from None
        with archive:
            return header, *_read_entries(archive, infos, size)
    finally:
        if owned:
            stream.close()


def _body(stream: BinaryIO, max_bytes: int) -> tuple[BinaryIO, int]:
    """The archive part of an open file (the file itself when it can seek) and its size."""
    seekable = getattr(stream, "seekable", None)
    if seekable is not None and seekable():
        start = stream.tell()
        size = stream.seek(0, os.SEEK_END) - start
        stream.seek(start)
        return stream, size
    body = stream.read(max_bytes + 1)
    return io.BytesIO(body), len(body)


def _read_entries(archive: zipfile.ZipFile, infos: list, body_size: int) -> tuple[Any, list]:
    if len(infos) > MAX_ENTRIES:
        raise ModelFileError(f"The model file has more than {MAX_ENTRIES} entries.")
    structure_bytes, arrays = None, {}
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or info.file_size > body_size:
            raise ModelFileError(f"The model file is damaged: entry {info.filename[:80]!r} is "
                                 "compressed or larger than the file.")
        match = _ARRAY_ENTRY.fullmatch(info.filename)
        if info.filename == STRUCTURE_ENTRY and structure_bytes is None:
            if info.file_size > MAX_STRUCTURE_BYTES:
                raise ModelFileError(f"The model file's structure is larger than "
                                     f"{MAX_STRUCTURE_BYTES} bytes.")
            structure_bytes = _read_entry(archive, info)
        elif match and int(match.group(1)) not in arrays:
            arrays[int(match.group(1))] = _read_entry(archive, info)
        else:
            raise ModelFileError(f"The model file has an unexpected entry "
                                 f"{info.filename[:80]!r}.")
    if structure_bytes is None:
        raise ModelFileError(f"The model file is damaged: no {STRUCTURE_ENTRY}.")
    if sorted(arrays) != list(range(len(arrays))):
        raise ModelFileError("The model file is damaged: its arrays are not numbered 0 to n-1.")
    return parse_structure(structure_bytes), [arrays[i] for i in range(len(arrays))]


def _read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    try:
        with archive.open(info) as entry:
            data = entry.read(info.file_size + 1)
    except Exception as exc:  # CRC mismatch, truncation, ...
        raise ModelFileError(f"The model file is damaged: {type(exc).__name__} reading "
                             f"{info.filename[:80]!r}.") from None
    if len(data) != info.file_size:
        raise ModelFileError(f"The model file is damaged: entry {info.filename[:80]!r} has the "
                             "wrong size.")
    return data


def _nesting_depth(text: str) -> int:
    """The deepest nesting of JSON arrays and objects (strings skipped)."""
    without_strings = re.sub(r'"(?:[^"\\]|\\.)*"', "", text)
    depth = deepest = 0
    for char in re.findall(r"[\[\]{}]", without_strings):
        depth += 1 if char in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def parse_structure(data: bytes) -> Any:
    """Parse ``model.json``, refusing nesting deeper than :data:`MAX_DEPTH`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError("The model file is damaged: its structure is not UTF-8.") from None
    if _nesting_depth(text) > MAX_DEPTH:
        raise ModelFileError(f"The model file's structure is nested deeper than {MAX_DEPTH} "
                             "levels: not a file written by sklearn_dpsynth.save.")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ModelFileError(f"The model file's structure is not valid JSON "
                             f"({type(exc).__name__}).") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"JSON constant {name} is not allowed")
