"""A toy backend written from ``docs/contributing.rst`` ("Adding a backend") alone.

The rows are held as a Python list of dicts (:class:`RowStore`) and counted
in pure Python.  Everything the backend needs is in this file: a
:class:`~sklearn_dpsynth.backends.TableSource` subclass (the schema, the
two exact histograms of domain learning, encoding), an
:class:`~sklearn_dpsynth.backends.EncodedTable` subclass (contingency
tables, row blocks, codes, remapping) and one
:func:`~sklearn_dpsynth.backends.register_source` call.  No module of the
package is edited, yet ``fit`` accepts a :class:`RowStore`, and a seeded fit
gives the same domain, ledger, model and samples as the same rows in a
DataFrame: the page lists every place a backend touches.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Hashable, Iterator, Sequence

import numpy as np
import pandas as pd
import pytest

from sklearn_dpsynth import AIMSynthesizer, MSTSynthesizer
from sklearn_dpsynth.backends import (EncodedTable, InMemorySource, NumpyTable, TableSource,
                                      encode_table, open_source, register_source)
from sklearn_dpsynth.domain import Domain


class RowStore:
    """Rows as dicts, with a public schema ``{column: pandas dtype}`` (missing:
    NaN or None)."""

    def __init__(self, rows: list[dict], dtypes: dict) -> None:
        self.rows = rows
        self.dtypes = {name: pd.api.types.pandas_dtype(dtype) for name, dtype in dtypes.items()}


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


class RowsSource(TableSource):
    """The toy backend's source: counts in pure Python."""

    def __init__(self, store: RowStore) -> None:
        self._store = store

    @property
    def columns(self) -> list:
        return list(self._store.dtypes)

    def schema_frame(self) -> pd.DataFrame:
        return pd.DataFrame({name: pd.Series([], dtype=dtype)
                             for name, dtype in self._store.dtypes.items()})

    def range_counts_many(self, requests: Sequence[tuple[Hashable, np.ndarray]]
                          ) -> list[np.ndarray]:
        out = []
        for name, cuts in requests:
            counts = np.zeros(len(cuts) + 1)
            for row in self._store.rows:
                if not _is_missing(row[name]):
                    counts[np.searchsorted(cuts, float(row[name]), side="right")] += 1
            out.append(counts)
        return out

    def category_counts_many(self, names: Sequence[Hashable]
                             ) -> list[tuple[list, np.ndarray]]:
        out = []
        for name in names:
            counts: dict = {}  # insertion order: first appearance
            for row in self._store.rows:
                if not _is_missing(row[name]):
                    counts[row[name]] = counts.get(row[name], 0) + 1
            out.append((list(counts), np.array(list(counts.values()), dtype=float)))
        return out

    def encode(self, domain: Domain) -> "RowsTable":
        columns = []
        for spec in domain.specs:
            dtype = self._store.dtypes[spec.name]
            values = np.array([row[spec.name] for row in self._store.rows],
                              dtype=dtype if isinstance(dtype, np.dtype) else object)
            columns.append(spec.encode(values).tolist())
        return RowsTable(list(zip(*columns)), domain.columns, domain.sizes)


class RowsTable(EncodedTable):
    """The toy backend's encoded table: rows of codes as tuples."""

    def __init__(self, rows: list[tuple], columns: Sequence[Hashable],
                 sizes: Sequence[int]) -> None:
        super().__init__(columns, sizes)
        self._rows = rows

    @property
    def n_rows(self) -> int:
        return len(self._rows)

    def _count(self, columns: tuple[int, ...], weights: np.ndarray | None) -> np.ndarray:
        out = np.zeros(tuple(self.sizes[c] for c in columns))
        if weights is None:
            for cell, count in Counter(tuple(r[c] for c in columns) for r in self._rows).items():
                out[cell] = count
            return out
        for row, weight in zip(self._rows, weights, strict=True):
            out[tuple(row[c] for c in columns)] += weight
        return out

    def iter_chunks(self, chunk_rows: int = 65536) -> Iterator[np.ndarray]:
        chunk_rows = self._check_chunk_rows(chunk_rows)
        codes = self.to_numpy()
        for start in range(0, len(self._rows), chunk_rows):
            yield codes[start:start + chunk_rows]

    def to_numpy(self) -> np.ndarray:
        codes = np.array(self._rows, dtype=np.int64).reshape(len(self._rows), self.n_columns)
        codes.flags.writeable = False
        return codes

    def remap(self, mappings: Sequence[np.ndarray]) -> "RowsTable":
        mappings = self._check_mappings(mappings)
        rows = [tuple(int(m[v]) for m, v in zip(mappings, row)) for row in self._rows]
        return RowsTable(rows, self.columns, [int(m.max()) + 1 for m in mappings])


register_source(lambda X: isinstance(X, RowStore), RowsSource)


#: The toy's text columns declared categories by kind alone (their values learned).
TEXT_AS_CATEGORIES = {"city": {"kind": "category"}, "tier": {"kind": "category"}}


@pytest.fixture(scope="module")
def data() -> tuple[pd.DataFrame, RowStore]:
    """600 rows: an integer, a float with missing values, two string columns (one
    with missing values) whose values depend on the numbers.  In memory a
    string column (``object`` or pandas ``str``) is untyped text, whose kind is
    chosen privately; this typed toy reads no text, so the fits below declare
    them categories (``TEXT_AS_CATEGORIES``), their categories still learned."""
    rng = np.random.default_rng(7)
    age = rng.integers(18, 80, size=600)
    income = np.round(rng.lognormal(10, 0.6, size=600), 2)
    income[rng.random(600) < 0.1] = np.nan
    city = np.where(age > 45, rng.choice(["a", "b"], 600), rng.choice(["b", "c", "d"], 600))
    tier = np.where(rng.random(600) < 0.05, None, np.where(income > 25000, "high", "low"))
    frame = pd.DataFrame({"age": age, "income": income,
                          "city": pd.Series(city, dtype="str"),
                          "tier": pd.Series(tier, dtype="str")})
    rows = [{name: (value.item() if isinstance(value, np.generic) else value)
             for name, value in record.items()} for record in frame.to_dict("records")]
    return frame, RowStore(rows, dict(frame.dtypes.items()))


def test_the_registered_backend_opens_its_container_and_nothing_else(data):
    frame, store = data
    source = open_source(store)
    assert isinstance(source, RowsSource) and source.columns == list(frame.columns)
    assert open_source(source) is source
    assert isinstance(open_source(frame), InMemorySource)
    assert isinstance(encode_table(source, Domain.from_declaration({
        "age": {"bounds": (18, 80)}, "income": {"bounds": (0, 1e6), "missing": True},
        "city": ["a", "b", "c", "d"], "tier": ["high", "low", None]})), RowsTable)


def test_toy_counts_are_the_in_memory_counts(data):
    """The two histograms domain learning reads, and the encoded table's
    contingency tables, are the in-memory source's to the count."""
    frame, store = data
    toy, memory = open_source(store), open_source(frame)
    cuts = np.array([-1.0, 0.0, 30.0, 50.0, 1e4, 3e4])
    requests = [("age", cuts), ("income", cuts)]
    for got, expected in zip(toy.range_counts_many(requests),
                             memory.range_counts_many(requests)):
        np.testing.assert_array_equal(got, expected)
    for (values, counts), (want_values, want_counts) in zip(
            toy.category_counts_many(["city", "tier"]),
            memory.category_counts_many(["city", "tier"])):
        assert values == want_values
        np.testing.assert_array_equal(counts, want_counts)
    domain = Domain.from_declaration({
        "age": {"bounds": (18, 80), "n_bins": 6}, "income": {"bounds": (0, 1e6),
                                                             "missing": True},
        "city": ["a", "b", "c", "d"], "tier": ["high", "low", None]})
    toy_table, memory_table = toy.encode(domain), memory.encode(domain)
    assert isinstance(memory_table, NumpyTable)
    np.testing.assert_array_equal(toy_table.to_numpy(), memory_table.to_numpy())
    for columns in [(), (0,), (2, 0), (1, 3, 2)]:
        np.testing.assert_array_equal(toy_table.counts(columns), memory_table.counts(columns))
    weights = np.linspace(0.5, 2.0, len(frame))
    np.testing.assert_allclose(toy_table.counts((3, 1), weights),
                               memory_table.counts((3, 1), weights))


@pytest.mark.parametrize("method, params", [
    (MSTSynthesizer, {}),
    (AIMSynthesizer, {"rounds": 3, "max_iter": 20, "final_max_iter": 50}),
])
def test_same_seed_same_model_ledger_and_samples_as_in_memory(data, method, params,
                                                               monkeypatch):
    """Every column learned privately (ranges and categories through the toy's
    counts), then the method on the toy's encoded table: the same domain,
    ledger and samples as the same rows in a DataFrame."""
    frame, store = data
    counted = []
    count = RowsTable._count
    monkeypatch.setattr(RowsTable, "_count", lambda self, columns, weights: (
        counted.append(columns), count(self, columns, weights))[1])
    memory = method(random_state=3, domain=TEXT_AS_CATEGORIES, **params).fit(frame, epsilon=2.0)
    toy = method(random_state=3, domain=TEXT_AS_CATEGORIES, **params).fit(store, epsilon=2.0)
    assert counted, "the method counted the toy's encoded table"
    assert toy.domain_.to_dict() == memory.domain_.to_dict()
    assert toy.domain_["city"].categories == ["a", "b", "c", "d"]
    pd.testing.assert_frame_equal(toy.privacy_ledger_.summary(),
                                  memory.privacy_ledger_.summary())
    assert toy.privacy_ledger_.spent() == memory.privacy_ledger_.spent()
    pd.testing.assert_frame_equal(toy.sample(300), memory.sample(300))


def test_a_typed_source_refuses_to_measure_an_undeclared_datetime_unit():
    """The default kind hook: a backend without ``kind_counts_many`` names the
    column to declare (never its values)."""
    stamps = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(50), unit="D")
    store = RowStore([{"when": s.to_datetime64()} for s in stamps],
                     {"when": "datetime64[ns]"})
    with pytest.raises(ValueError, match=r"\['when'\].*declare"):
        MSTSynthesizer(random_state=0).fit(store, epsilon=1.0)


@pytest.mark.parametrize("declaration", [{"kind": "numeric"}, {"bounds": (0, 10)},
                                         {"kind": "datetime", "unit": "day"}, 5])
def test_a_typed_source_refuses_to_read_its_text_by_a_declared_kind(declaration):
    """The default kind hooks: a text column declared as numbers, dates or codes
    is refused, naming the column (the same error for neighbouring tables),
    never modelled as categories against the declaration."""
    rows = [{"a": str(i % 5), "n": i % 7} for i in range(400)]
    messages = set()
    for table in (rows, rows[1:]):  # D and D', one row apart
        store = RowStore(table, {"a": "str", "n": "int64"})
        with pytest.raises(ValueError, match=r"\['a'\].*cannot read text") as error:
            MSTSynthesizer(random_state=0, domain={"a": declaration}).fit(store, epsilon=1.0)
        messages.add(str(error.value))
    assert len(messages) == 1


def test_a_source_without_kind_hooks_asks_for_its_text_to_be_declared(data):
    """Undeclared text has its kind chosen privately in memory; a source that
    cannot count kind histograms names the columns to declare (the same error
    for neighbouring tables), never models them otherwise than memory would."""
    frame, store = data
    messages = set()
    for rows in (store.rows, store.rows[1:]):
        with pytest.raises(ValueError, match=r"\['city', 'tier'\].*declare") as error:
            MSTSynthesizer(random_state=0).fit(RowStore(rows, store.dtypes), epsilon=1.0)
        messages.add(str(error.value))
    assert len(messages) == 1


def test_a_typed_source_keeps_text_declared_as_categories(data):
    """Text declared as categories stays text: the same domain and samples as in memory."""
    frame, store = data
    declared = {"city": ["a", "b", "c", "d"], "tier": ["high", "low", None]}
    memory = MSTSynthesizer(random_state=1, domain=declared).fit(frame, epsilon=2.0)
    toy = MSTSynthesizer(random_state=1, domain=declared).fit(store, epsilon=2.0)
    assert toy.domain_.to_dict() == memory.domain_.to_dict()
    pd.testing.assert_frame_equal(toy.sample(200), memory.sample(200))
