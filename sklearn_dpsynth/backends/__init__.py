"""Encoded tables: where the private rows live and how they are counted.

Every synthesizer receives the private table as an
:class:`EncodedTable` (integer codes, one column per domain column) and
reads it only through it: exact contingency tables
(:meth:`EncodedTable.counts`), blocks of rows, or all codes in memory.
:func:`encode_table` is the single place where a table becomes codes;
:class:`NumpyTable` is the in-memory backend used for pandas DataFrames;
:class:`DuckDBTable` counts Parquet/CSV files, globs or DuckDB relations
in DuckDB, out of core (``pip install 'sklearn-dpsynth[duckdb]'``);
:class:`SparkTable` counts a pyspark DataFrame in Spark
(``pip install 'sklearn-dpsynth[spark]'``, Java 17 or later).
"""

from ._duckdb import DuckDBSource, DuckDBTable, is_duckdb_input, open_duckdb
from ._encode import encode_public_table, encode_table
from ._numpy import NumpyTable
from ._spark import SparkSource, SparkTable, is_spark_input, open_spark
from ._table import EncodedTable

__all__ = ["EncodedTable", "NumpyTable", "DuckDBTable", "DuckDBSource", "encode_table",
           "encode_public_table", "open_duckdb", "is_duckdb_input",
           "SparkTable", "SparkSource", "open_spark", "is_spark_input"]
