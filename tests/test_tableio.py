"""The table-file module: format from the name, reading as text, writing by format."""

import gzip

import pandas as pd
import pytest

from sklearn_dpsynth import _tableio as tableio
from sklearn_dpsynth.cli import CommandError, read_table, write_table


@pytest.mark.parametrize("name, expected", [
    ("a.csv", "csv"), ("A.CSV.GZ", "csv"), ("a.tsv", "tsv"), ("a.tsv.gz", "tsv"),
    ("a.parquet", "parquet"), ("a.PQ", "parquet"), ("a.txt", None), ("a.csv.bz2", None),
])
def test_format_comes_from_the_name(name, expected):
    assert tableio.format_from_suffix(name) == expected


def test_output_format_of_sample_to():
    assert tableio.output_format("a.tsv.gz", None) == "tsv"
    assert tableio.output_format("a.tsv", "csv") == "tsv"
    assert tableio.output_format("a.tsv", "parquet") == "parquet"
    assert tableio.output_format("a.txt", "csv") == "csv"
    with pytest.raises(ValueError, match="cannot tell the format"):
        tableio.output_format("a.txt", None)
    with pytest.raises(ValueError, match="format must be"):
        tableio.output_format("a.csv", "json")


@pytest.mark.parametrize("name, separator", [("t.csv", b","), ("t.tsv", b"\t")])
def test_written_text_has_the_separator_of_its_name_and_reads_back(tmp_path, name, separator):
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", None]})
    path = tmp_path / name
    write_table(frame, str(path))
    assert path.read_bytes().splitlines()[0] == separator.join([b"a", b"b"])
    read = tableio.read_table(str(path))
    assert list(read.columns) == ["a", "b"] and read["a"].tolist() == ["1", "2"]
    assert read["b"].iloc[1] is None or pd.isna(read["b"].iloc[1])


def test_chunks_append_under_one_header(tmp_path):
    path = tmp_path / "t.tsv.gz"
    writer = tableio.ChunkWriter(path, "tsv")
    for start in (0, 2):
        writer.write(pd.DataFrame({"a": [start, start + 1]}))
    writer.close()
    with gzip.open(path, "rt") as handle:
        assert handle.read().split() == ["a", "0", "1", "2", "3"]


def test_parquet_round_trip_keeps_the_schema(tmp_path):
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5]})
    path = tmp_path / "t.parquet"
    write_table(frame, str(path))
    pd.testing.assert_frame_equal(read_table(str(path)), frame)


def test_read_errors_name_the_file_and_positions(tmp_path):
    with pytest.raises(tableio.TableReadError, match="no such file"):
        tableio.read_table(str(tmp_path / "missing.csv"))
    path = tmp_path / "bad.csv"
    path.write_text("a,a,\n1,2,3\n")
    with pytest.raises(CommandError, match=r"empty column name at position\(s\) \[3\]"):
        read_table(str(path))
