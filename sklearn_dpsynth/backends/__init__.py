"""Private tables: where the rows live, how they are counted and encoded.

Before encoding, a private table is a :class:`TableSource`: its schema,
the exact histograms private domain learning releases, and its encoding;
:func:`open_source` is the one dispatch from what a caller passes to its
source (an :class:`InMemorySource` for pandas DataFrames and arrays, a
:class:`DuckDBSource` for Parquet/CSV files, globs or DuckDB relations,
counted out of core, ``pip install 'sklearn-dpsynth[duckdb]'``; a
:class:`SparkSource` for a pyspark DataFrame, ``pip install
'sklearn-dpsynth[spark]'``, Java 17 or later); a new backend registers
itself with :func:`register_source`.

Every synthesizer then receives the private table as an
:class:`EncodedTable` (integer codes, one column per domain column) and
reads it only through it: exact contingency tables
(:meth:`EncodedTable.counts`), blocks of rows, or all codes in memory.
:func:`encode_table` encodes a DataFrame or a source; :class:`NumpyTable`
holds codes in memory, :class:`DuckDBTable` and :class:`SparkTable` in
their engines.
"""

from ._duckdb import DuckDBSource, DuckDBTable, is_duckdb_input, open_duckdb
from ._encode import encode_public_table, encode_table
from ._memory import InMemorySource
from ._numpy import NumpyTable
from ._registry import open_source, register_source
from ._source import TableSource
from ._spark import SparkSource, SparkTable, is_spark_input, open_spark
from ._table import EncodedTable

__all__ = ["TableSource", "InMemorySource", "open_source", "register_source",
           "EncodedTable", "NumpyTable", "DuckDBTable", "DuckDBSource", "encode_table",
           "encode_public_table", "open_duckdb", "is_duckdb_input",
           "SparkTable", "SparkSource", "open_spark", "is_spark_input"]
