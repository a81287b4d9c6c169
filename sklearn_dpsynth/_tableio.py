"""Table files: the one place that reads and writes CSV, TSV and Parquet.

The format of a file comes from its name alone (:func:`format_from_suffix`);
a CSV or TSV file is read as text, its separator and column names taken
from the header line (:func:`csv_header`), so nothing read here depends on
the rows.  Writers keep pandas' plain output: CSV with commas, TSV with
tabs (``.gz`` compressed when the name says so), Parquet through pyarrow,
whole (:func:`write_table`) or one chunk at a time (:class:`ChunkWriter`).

This module sits at the package's ground layer: the estimators
(``sample_to``), the ``dpsynth`` command line and the kind reader all use it,
and it imports nothing from the package.
"""

from __future__ import annotations

import csv
import gzip
import os
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

__all__ = ["CSV_NA_STRINGS", "CSV_SEPARATORS", "PARQUET_SUFFIXES", "TSV_SUFFIXES",
           "CSV_SUFFIXES", "TableReadError", "format_from_suffix", "csv_header",
           "check_column_names", "require_pyarrow", "read_table", "write_table",
           "output_format", "ChunkWriter"]

#: Cells read as missing values in CSV files (and only these: "n/a" is text).
CSV_NA_STRINGS = ("", "NA", "N/A", "NaN", "nan", "NULL", "null", "None")

#: Separators a CSV header may use: the one it holds most often wins (ties in this order).
CSV_SEPARATORS = (",", ";", "\t")

#: Names of Parquet files.
PARQUET_SUFFIXES = (".parquet", ".pq")

#: Names of tab-separated files (optionally gzip-compressed).
TSV_SUFFIXES = (".tsv", ".tsv.gz")

#: Names of comma-separated files (optionally gzip-compressed).
CSV_SUFFIXES = (".csv", ".csv.gz")


class TableReadError(ValueError):
    """A table file that is missing, unreadable, or whose header is not a schema.

    The message names the file and what is wrong with it (column positions,
    never cell values).
    """


def format_from_suffix(path: str | os.PathLike) -> str | None:
    """The format a file name asks for: ``"parquet"``, ``"tsv"``, ``"csv"`` or None.

    Parameters
    ----------
    path : str or os.PathLike
        A file name; only its ending is read (case-insensitive).

    Returns
    -------
    str or None
        None for a name with none of :data:`PARQUET_SUFFIXES`,
        :data:`TSV_SUFFIXES` or :data:`CSV_SUFFIXES`.
    """
    lowered = os.fspath(path).lower()
    for name, suffixes in (("parquet", PARQUET_SUFFIXES), ("tsv", TSV_SUFFIXES),
                           ("csv", CSV_SUFFIXES)):
        if lowered.endswith(suffixes):
            return name
    return None


def require_pyarrow(doing: str) -> None:
    """ImportError saying ``doing`` Parquet needs pyarrow when it is not installed.

    Parameters
    ----------
    doing : str
        ``"reading"`` or ``"writing"``.
    """
    try:
        import pyarrow  # noqa: F401  (pandas' Parquet engine)
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ImportError(f"{doing} Parquet needs pyarrow: "
                          "pip install 'sklearn-dpsynth[parquet]'") from None


# ------------------------------------------------------------------ reading
def csv_header(path: str, where: str) -> tuple[str, list[str]]:
    """The separator and column names of a CSV file, from its header line alone.

    The encoding is UTF-8 (a byte-order mark is dropped; ``.gz`` files are
    decompressed); the separator is the comma, semicolon or tab that the
    header holds most often.  Only the header line is read: nothing here
    depends on the rows.

    Parameters
    ----------
    path : str
        A CSV file.
    where : str
        What to call the header in messages.

    Returns
    -------
    separator : str
    names : list of str

    Raises
    ------
    ValueError
        For a header that is not UTF-8 or is empty, or has empty or repeated
        column names (naming their positions).
    """
    opener = gzip.open if str(path).lower().endswith(".gz") else open
    with opener(path, "rb") as handle:
        line = handle.readline()
    try:
        header = line.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError:
        raise ValueError(f"{where} is not UTF-8 text; save the file as UTF-8.") from None
    if not header.strip():
        raise ValueError(f"{where} is empty (the first line names the columns).")
    separator = max(CSV_SEPARATORS, key=lambda s: (header.count(s), -CSV_SEPARATORS.index(s)))
    names = [name.strip() for name in next(csv.reader([header], delimiter=separator))]
    check_column_names(names, where)
    return separator, names


def check_column_names(names: Sequence[Any], where: str) -> None:
    """ValueError naming the positions of empty or repeated column names (a header
    is schema: public).

    Parameters
    ----------
    names : sequence
    where : str
        What to call the header in messages.
    """
    empty = [i + 1 for i, name in enumerate(names) if not str(name).strip()]
    if empty:
        raise ValueError(f"{where} has an empty column name at position(s) {empty}; name "
                         "every column.")
    positions: dict = {}
    for i, name in enumerate(names):
        positions.setdefault(name, []).append(i + 1)
    repeated = {name: at for name, at in positions.items() if len(at) > 1}
    if repeated:
        shown = "; ".join(f"{name!r} at positions {at}" for name, at in repeated.items())
        raise ValueError(f"{where} repeats column names ({shown}); give every column its own "
                         "name.")


def read_table(path: str) -> pd.DataFrame:
    """Read a Parquet file with its schema, or any other file as CSV text.

    A CSV (or TSV) file is read as text (object dtype): its separator
    (comma, semicolon or tab) and encoding (UTF-8, a byte-order mark
    dropped) come from the header line alone, the cells of
    :data:`CSV_NA_STRINGS` are missing, and no column's type is guessed
    from its rows.

    Parameters
    ----------
    path : str
        ``*.parquet`` / ``*.pq`` (needs pyarrow) or anything else as CSV.

    Returns
    -------
    DataFrame

    Raises
    ------
    TableReadError
        For a missing or unreadable file, pyarrow missing for Parquet, or
        a header with empty or repeated column names (naming their
        positions).
    """
    file = Path(path)
    if not file.is_file():
        raise TableReadError(f"no such file: {path}")
    if format_from_suffix(file) == "parquet":
        _as_read_error(require_pyarrow, "reading")
        frame = pd.read_parquet(file)
        _as_read_error(check_column_names, list(frame.columns), f"{path}: the column names")
        return frame
    separator, names = _as_read_error(csv_header, str(file), f"{path}: the header line")
    try:
        frame = pd.read_csv(file, sep=separator, encoding="utf-8-sig", dtype=object,
                            header=0, names=names, skipinitialspace=True,
                            keep_default_na=False, na_values=list(CSV_NA_STRINGS))
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError,
            ValueError) as exc:
        raise TableReadError(f"{path} is not a readable CSV file "
                             f"({type(exc).__name__})") from None
    return frame.astype(object)


def _as_read_error(check: Any, *args: Any) -> Any:
    """``check(*args)``, its ValueError or ImportError as a :class:`TableReadError`."""
    try:
        return check(*args)
    except (ValueError, ImportError) as exc:
        raise TableReadError(str(exc)) from None


# ------------------------------------------------------------------ writing
def output_format(path: str | os.PathLike, format: str | None) -> str:
    """The :class:`ChunkWriter` format for a file and a ``format`` argument.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    format : {"csv", "parquet"} or None
        Given by the user; None reads it from the suffix.  ``"csv"`` writes
        tabs to a ``.tsv`` / ``.tsv.gz`` file.

    Returns
    -------
    {"csv", "tsv", "parquet"}

    Raises
    ------
    ValueError
        For another ``format``, or None with a suffix naming no format.
    """
    found = format_from_suffix(path)
    if format is not None:
        if format not in ("csv", "parquet"):
            raise ValueError(f"format must be 'csv', 'parquet' or None, got {format!r}.")
        return "tsv" if format == "csv" and found == "tsv" else format
    if found is None:
        raise ValueError("path: cannot tell the format from the suffix; name a .csv, .csv.gz, "
                         ".parquet or .pq file, or pass format='csv' or 'parquet'.")
    return found


def write_table(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a whole DataFrame by its file name: Parquet, TSV, or else CSV.

    Parameters
    ----------
    frame : DataFrame
    path : str or os.PathLike
        ``*.parquet`` / ``*.pq`` (needs pyarrow), ``*.tsv`` /
        ``*.tsv.gz`` (tab-separated), anything else CSV (compressed as
        pandas infers from the name, e.g. ``.gz``).

    Raises
    ------
    ImportError
        For Parquet without pyarrow.
    """
    format = format_from_suffix(path)
    if format == "parquet":
        require_pyarrow("writing")
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False, sep="\t" if format == "tsv" else ",")


class ChunkWriter:
    """Appends DataFrames to one CSV, TSV or Parquet file (one row group per chunk).

    Parameters
    ----------
    path : str or os.PathLike
        The file to (over)write; a name ending in ``.gz`` is gzip-compressed
        (CSV and TSV).
    format : {"csv", "tsv", "parquet"}
        What to write.

    Raises
    ------
    ImportError
        For Parquet without pyarrow.
    """

    def __init__(self, path: str | os.PathLike, format: str) -> None:
        self.path, self.format = os.fspath(path), format
        self.handle: Any = None
        self.parquet: Any = None
        self.schema: Any = None
        if format == "parquet":
            require_pyarrow("writing")

    def write(self, frame: pd.DataFrame) -> None:
        """Append ``frame``'s rows (the first call also writes the header or schema)."""
        if self.format == "parquet":
            self._write_parquet(frame)
        else:
            self._write_text(frame)

    def _write_text(self, frame: pd.DataFrame) -> None:
        first = self.handle is None
        if first:
            opener = gzip.open if self.path.lower().endswith(".gz") else open
            self.handle = opener(self.path, "wt", newline="")
        separator = "\t" if self.format == "tsv" else ","
        frame.to_csv(self.handle, header=first, index=False, sep=separator)

    def _write_parquet(self, frame: pd.DataFrame) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        frame = frame.set_axis([str(c) for c in frame.columns], axis=1)
        if self.parquet is None:
            table = pa.Table.from_pandas(frame, preserve_index=False)
            self.schema = table.schema
            self.parquet = pq.ParquetWriter(self.path, self.schema)
        else:
            table = pa.Table.from_pandas(frame, schema=self.schema, preserve_index=False)
        self.parquet.write_table(table)

    def close(self) -> None:
        """Close the file (a writer that wrote nothing leaves no file)."""
        if self.handle is not None:
            self.handle.close()
        if self.parquet is not None:
            self.parquet.close()
