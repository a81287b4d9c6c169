"""Generation: low-variance rounding and exact ancestral sampling."""

import numpy as np
import pytest

from sklearn_dpsynth._marginals import contingency_counts
from sklearn_dpsynth.pgm import Factor, GraphicalModel, ModelDomain
from sklearn_dpsynth.pgm import sampling
from sklearn_dpsynth.pgm.sampling import (_assign_by_value, _assign_cheapest, _balance, _Cells,
                                          _one_hot, lowvar_counts)

DOMAIN = ModelDomain.from_mapping({"a": 3, "b": 4, "c": 2, "d": 5, "e": 3, "f": 6})
NAMES = list(DOMAIN)
STRUCTURES = {
    "tree": [("a", "b"), ("b", "c"), ("b", "d"), ("d", "e"), ("e", "f")],
    "overlapping": [("a", "b", "c"), ("b", "c", "d"), ("c", "d", "e"), ("e", "f", "a")],
    "disconnected": [("a", "b"), ("c", "d", "e"), ("f",)],
}


def _model(name, seed=0):
    rng = np.random.default_rng(seed)
    cliques = STRUCTURES[name]
    pots = {c: Factor(c, rng.normal(scale=1.5, size=[DOMAIN[x] for x in c]))
            for c in cliques}
    return GraphicalModel(DOMAIN, cliques, pots, total=1000.0)


def _counts(data, attrs):
    return contingency_counts(data, DOMAIN.shape, DOMAIN.axes(attrs))


def _n_groups(model):
    """Parent groups summed over all generation steps (a rounding bound)."""
    total, seen = 0, set()
    for i in model.tree.order:
        parent = model.tree.parent[i]
        known = [a for a in model.cliques[i] if parent >= 0 and a in model.cliques[parent]]
        for a in model.cliques[i]:
            if a in known:
                continue
            total += int(np.prod([DOMAIN[x] for x in known]))
            known.append(a)
            seen.add(a)
    assert seen == set(NAMES)
    return total


@pytest.mark.parametrize("name", sorted(STRUCTURES))
@pytest.mark.parametrize("n", [1, 37, 5000])
def test_lowvar_matches_marginals_up_to_rounding(name, n):
    model = _model(name)
    data = model.sample(n, np.random.default_rng(1))
    assert data.shape == (n, len(DOMAIN)) and data.dtype == np.int64
    # every rounding step moves a count by less than one per parent group;
    # only marginals inside one clique are controlled (attributes of
    # different cliques are joined at random within the separator's groups)
    for attrs in [(a,) for a in NAMES]:
        expected = n * model.marginal(attrs, normalize=True)
        assert np.max(np.abs(_counts(data, attrs) - expected)) < _n_groups(model)
    for attrs in model.cliques:
        expected = n * model.marginal(attrs, normalize=True)
        assert np.max(np.abs(_counts(data, attrs) - expected)) < len(DOMAIN)
    first = model.cliques[0][0]
    expected = n * model.marginal((first,), normalize=True)
    assert np.max(np.abs(_counts(data, (first,)) - expected)) < 1


def test_lowvar_is_much_closer_than_iid():
    model = _model("tree")
    n = 20000
    lowvar = model.sample(n, 0, method="lowvar")
    iid = model.sample(n, 0, method="iid")
    for clique in model.cliques:
        expected = n * model.marginal(clique, normalize=True)
        err_low = np.abs(_counts(lowvar, clique) - expected).sum()
        err_iid = np.abs(_counts(iid, clique) - expected).sum()
        assert err_low < 0.25 * err_iid


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_iid_frequencies_converge(name):
    model = _model(name, seed=2)
    n = 100_000
    data = model.sample(n, np.random.default_rng(3), method="iid")
    for attrs in model.cliques + [("a", "f"), ("c",)]:
        p = model.marginal(attrs, normalize=True)
        freq = _counts(data, attrs) / n
        assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / n) + 1e-4)


@pytest.mark.parametrize("method", ["lowvar", "iid"])
def test_sampling_is_reproducible(method):
    model = _model("overlapping")
    first = model.sample(500, np.random.default_rng(7), method=method)
    second = model.sample(500, np.random.default_rng(7), method=method)
    other = model.sample(500, np.random.default_rng(8), method=method)
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, other)
    np.testing.assert_array_equal(model.sample(500, 7, method=method), first)


@pytest.mark.parametrize("method", ["lowvar", "iid"])
def test_zero_probability_cells_are_never_generated(method):
    rng = np.random.default_rng(4)
    cliques = STRUCTURES["overlapping"]
    pots = {c: Factor(c, rng.normal(size=[DOMAIN[x] for x in c])) for c in cliques}
    pots[cliques[1]].values[:, 1, :] = -np.inf
    pots[cliques[3]].values[0, :, 2] = -np.inf
    model = GraphicalModel(DOMAIN, cliques, pots)
    data = model.sample(3000, 5, method=method)
    assert np.all(np.isfinite(model.log_likelihood(data)))


def test_default_size_is_the_total():
    model = _model("tree")
    assert model.sample(rng=0).shape == (1000, len(DOMAIN))
    assert model.sample(0, rng=0).shape == (0, len(DOMAIN))


def test_lowvar_counts_rounds_each_group():
    rng = np.random.default_rng(6)
    probs = rng.dirichlet(np.ones(7), size=50)
    sizes = rng.integers(0, 40, size=50)
    counts = lowvar_counts(sizes, probs, rng)
    np.testing.assert_array_equal(counts.sum(axis=1), sizes)
    assert np.all(np.abs(counts - sizes[:, None] * probs) < 1)


def test_lowvar_counts_remainders_follow_fractional_parts():
    # one group of size 1 over three values: the value is drawn with
    # probability p (all floors are 0, remainders are the p's)
    rng = np.random.default_rng(7)
    p = np.array([0.2, 0.5, 0.3])
    draws = np.array([lowvar_counts(np.array([1]), p[None, :], rng)[0]
                      for _ in range(4000)])
    freq = draws.mean(axis=0)
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / 4000))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.sample(-1),
        lambda m: m.sample(2.5),
        lambda m: m.sample(10, method="gibbs"),
    ],
)
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call(_model("tree"))


def test_lowvar_spreads_values_evenly_over_unrelated_attributes():
    # "c" and "f" are independent under the disconnected model: the
    # systematic assignment makes their sampled joint match the product of
    # the model's marginals far more closely than independent draws would.
    model = _model("disconnected", seed=3)
    n = 5000
    joint = model.marginal(["c", "f"], normalize=True) * n
    lowvar = _counts(model.sample(n, np.random.default_rng(0), method="lowvar"), ["c", "f"])
    iid_errors = [np.abs(_counts(model.sample(n, np.random.default_rng(s), method="iid"),
                                 ["c", "f"]) - joint).max() for s in range(5)]
    assert np.abs(lowvar - joint).max() <= 4  # rounding of the two 1-way marginals
    assert np.abs(lowvar - joint).max() < min(iid_errors)


def test_lowvar_is_reproducible_with_a_seed():
    model = _model("overlapping")
    first = model.sample(3000, np.random.default_rng(7))
    again = model.sample(3000, np.random.default_rng(7))
    other = model.sample(3000, np.random.default_rng(8))
    assert np.array_equal(first, again) and not np.array_equal(first, other)


def test_lowvar_context_key_reranks_instead_of_overflowing():
    # 24 attributes of 40 values: the product of sizes (40**24) overflows int64,
    # so the sort key of the generated attributes must be re-ranked on the way
    domain = ModelDomain.from_mapping({f"x{i}": 40 for i in range(24)})
    names = list(domain)
    rng = np.random.default_rng(3)
    cliques = [(names[i], names[i + 1]) for i in range(23)]
    pots = {c: Factor(c, rng.normal(size=(40, 40))) for c in cliques}
    model = GraphicalModel(domain, cliques, pots, total=1.0)
    n = 4000
    data = model.sample(n, np.random.default_rng(0))
    first = model.tree.cliques[model.tree.order[0]][0]
    counts = contingency_counts(data, domain.shape, domain.axes((first,)))
    assert np.max(np.abs(counts - n * model.marginal((first,), normalize=True))) < 1


def test_lowvar_rows_come_in_random_order():
    # the first generated attribute is dealt systematically; the finished rows
    # are shuffled, so a prefix of the sample is itself a fair sample
    model = _model("tree")
    data = model.sample(20000, np.random.default_rng(2))
    first = model.tree.cliques[model.tree.order[0]][0]
    axis = DOMAIN.axes((first,))
    head = contingency_counts(data[:10000], DOMAIN.shape, axis)
    tail = contingency_counts(data[10000:], DOMAIN.shape, axis)
    expected = 10000 * model.marginal((first,), normalize=True)
    assert not np.array_equal(data[:, axis[0]][:50], np.sort(data[:, axis[0]][:50]))
    assert np.max(np.abs(head - expected)) < 5 * np.sqrt(expected.max())
    assert np.max(np.abs(tail - expected)) < 5 * np.sqrt(expected.max())


def _chain(n_attributes, seed):
    """A chain model over attributes of 2 to 4 values."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 5, size=n_attributes)
    domain = ModelDomain.from_mapping({f"x{i:02d}": int(s) for i, s in enumerate(sizes)})
    names = list(domain)
    cliques = [(names[i], names[i + 1]) for i in range(n_attributes - 1)]
    pots = {c: Factor(c, rng.normal(size=[domain[x] for x in c])) for c in cliques}
    return GraphicalModel(domain, cliques, pots, total=1.0)


def _pair_errors(model, data, pairs):
    """Half the L1 distance between each pair's sampled and exact frequencies."""
    domain = model.domain
    return np.array([
        0.5 * np.abs(contingency_counts(data, domain.shape, domain.axes(pair)) / len(data)
                     - model.marginal(pair, normalize=True)).sum()
        for pair in pairs])


def test_lowvar_balances_pairs_far_apart_in_the_generation_order():
    # a systematic order balances only the last few attributes generated;
    # the balancing step must make *every* 2-way marginal close to the model's
    model = _chain(30, seed=0)
    generated = list(dict.fromkeys(a for i in model.tree.order for a in model.tree.cliques[i]))
    far = [(a, b) for i, a in enumerate(generated) for b in generated[i + 10:]]
    n = 20000
    sample = model.sample(n, 0)
    np.testing.assert_array_equal(sample, model.sample(n, np.random.default_rng(0)))
    assert not np.array_equal(sample, model.sample(n, 1))
    lowvar = _pair_errors(model, sample, far)
    iid = _pair_errors(model, model.sample(n, 0, method="iid"), far)
    assert lowvar.mean() < 0.35 * iid.mean()
    assert lowvar.max() < iid.mean()


def test_lowvar_is_unbiased_on_the_full_joint():
    # the mean over seeds of every cell of the full joint of a 4-attribute
    # chain (including cells of attribute pairs outside any clique) is the
    # model's, and each sample is far closer to it than independent rows
    model = _chain(4, seed=1)
    names = tuple(model.domain)
    n, n_runs = 6000, 60
    expected = n * model.marginal(names, normalize=True)
    axes = model.domain.axes(names)
    runs = np.array([contingency_counts(model.sample(n, s), model.domain.shape, axes)
                     for s in range(n_runs)])
    standard_error = runs.std(axis=0, ddof=1) / np.sqrt(n_runs)
    assert np.all(np.abs(runs.mean(axis=0) - expected) < 5 * standard_error + 0.5)
    iid = [np.abs(contingency_counts(model.sample(n, s, method="iid"), model.domain.shape, axes)
                  - expected).max() for s in range(10)]
    lowvar = np.abs(runs[:10] - expected).max(axis=(1, 2, 3, 4))
    assert lowvar.mean() < 0.6 * np.mean(iid)


@pytest.mark.parametrize("n_values", [2, 3, 5])
def test_assign_cheapest_permutes_the_values(n_values):
    rng = np.random.default_rng(n_values)
    values = rng.integers(n_values, size=40)
    cost = rng.normal(size=(n_values, 40))
    order = np.argsort(np.bincount(values, minlength=n_values), kind="stable")
    block = np.repeat([0, 1], 20)
    assigned = _assign_cheapest(cost, values, order, block)
    for part in (slice(0, 20), slice(20, 40)):  # each block keeps its values
        np.testing.assert_array_equal(np.sort(assigned[part]), np.sort(values[part]))
    # never worse than the dealt order, and for two values the optimum
    chosen = cost[assigned, np.arange(40)].sum()
    assert chosen <= cost[values, np.arange(40)].sum()
    if n_values == 2:
        best = cost[0].sum()
        for part in (slice(0, 20), slice(20, 40)):
            best += np.sort(cost[1, part] - cost[0, part])[:int(values[part].sum())].sum()
        assert chosen == pytest.approx(best)


def test_balance_keeps_every_groups_values():
    # the balancing step only exchanges values between rows of one group
    rng = np.random.default_rng(0)
    n = 3000
    cells = _Cells()
    cells.append(rng.integers(1000, size=n), 1000)  # histories mostly of one row
    cells.append(rng.integers(3, size=n), 3)
    cells.append(rng.integers(4, size=n), 4)
    cells.append(rng.integers(8, size=n), 8)  # too many strata: all but it balanced
    rows = rng.permutation(n)
    group = np.sort(rng.integers(2, size=n))
    values = rng.integers(3, size=n)
    balanced = _balance(values, rows, group, cells, 3, np.random.default_rng(1))
    for g in (0, 1):
        assert np.array_equal(np.bincount(balanced[group == g], minlength=3),
                              np.bincount(values[group == g], minlength=3))
    assert not np.array_equal(balanced, values)


def test_balance_keeps_the_values_of_rows_that_share_their_history():
    # rows equal on every generated attribute keep their dealt values (the
    # systematic dealing already spreads them over such a cell); the others move
    rng = np.random.default_rng(0)
    n = 3000
    cells = _Cells()
    first = rng.integers(1000, size=n)
    first[:1200] = rng.integers(30, size=1200)  # 1,200 rows in 30 shared histories
    cells.append(first, 1000)
    cells.append(rng.integers(3, size=n), 3)
    rows = rng.permutation(n)
    group = np.zeros(n, dtype=np.int64)
    values = rng.integers(3, size=n)
    balanced = _balance(values, rows, group, cells, 3, np.random.default_rng(1))
    shared = cells.shared_history(rows)
    assert shared.sum() > 1000
    np.testing.assert_array_equal(balanced[shared], values[shared])
    assert not np.array_equal(balanced[~shared], values[~shared])


@pytest.mark.parametrize("first, size", [([0, 0, 2], 3), ([0, 0, 5], 6), ([1, 0, 2], 3),
                                         ([4, 4, 4, 0, 1], 5)])
def test_shared_history_matches_brute_force(first, size):
    # whether a row shares its history (every generated attribute) with another
    # row, against a direct count; also when the first attribute's values skip
    # some codes and its largest is n - 1 (then there are as many codes as rows)
    rng = np.random.default_rng(0)
    n = len(first)
    columns = [np.array(first), rng.integers(2, size=n), rng.integers(2, size=n)]
    cells = _Cells()
    for k, (column, width) in enumerate(zip(columns, (size, 2, 2))):
        cells.append(column, width)
        joint = np.stack(columns[:k + 1], axis=1)
        expected = [sum(np.array_equal(joint[i], joint[j]) for j in range(n)) > 1
                    for i in range(n)]
        np.testing.assert_array_equal(cells.shared_history(np.arange(n)), expected)


def test_lowvar_is_much_closer_than_iid_on_the_full_joint():
    # where rows share their whole history the balancing leaves them as
    # dealt, so the full joint keeps the systematic sampler's low variance
    model = _model("tree")
    names = tuple(DOMAIN)
    n = 20000
    expected = n * model.marginal(names, normalize=True)
    lowvar = [np.abs(_counts(model.sample(n, s), names) - expected).sum() for s in range(3)]
    iid = [np.abs(_counts(model.sample(n, s, method="iid"), names) - expected).sum()
           for s in range(3)]
    assert np.mean(lowvar) < 0.6 * np.mean(iid)


def test_one_hot_product_sums_the_table_over_each_rows_cells():
    rng = np.random.default_rng(0)
    cells = np.stack([rng.integers(3, size=50), 3 + rng.integers(4, size=50)], axis=1)
    table = rng.normal(size=(7, 2)).astype(np.float32)
    expected = table[cells[:, 0]] + table[cells[:, 1]]
    np.testing.assert_allclose(_one_hot(cells.astype(np.int32), 7) @ table, expected,
                               rtol=1e-6)


def test_balance_leaves_groups_alone_when_every_earlier_attribute_is_a_parent():
    # parents are constant within a group: nothing to balance the new values against
    rng = np.random.default_rng(0)
    n = 3000
    cells = _Cells()
    cells.append(rng.integers(4000, size=n), 4000)  # too many values for strata
    rows = rng.permutation(n)
    group = np.sort(rng.integers(2, size=n))
    values = rng.integers(3, size=n)
    cells.parents = (0,)
    assert np.array_equal(_balance(values, rows, group, cells, 3, np.random.default_rng(1)),
                          values)
    cells.parents = ()  # the same column as an unrelated attribute: balanced
    assert not np.array_equal(_balance(values, rows, group, cells, 3,
                                       np.random.default_rng(1)), values)


def test_assign_cheapest_keeps_every_blocks_values_when_its_rounds_run_out(monkeypatch):
    # with many values the proposal rounds leave rows over: the value-by-value
    # fallback places them, and every block still keeps its own values
    fallback = []
    monkeypatch.setattr(sampling, "_assign_by_value",
                        lambda *args: fallback.append(args) or _assign_by_value(*args))
    rng = np.random.default_rng(0)
    n, n_values = 3000, 20
    values = rng.integers(n_values, size=n)
    cost = rng.normal(size=(n_values, n)).astype(np.float32)
    order = np.argsort(np.bincount(values, minlength=n_values), kind="stable")
    block = np.repeat(np.arange(4), n // 4)
    assigned = _assign_cheapest(cost, values, order, block)
    assert fallback  # the fallback was reached
    for b in range(4):
        np.testing.assert_array_equal(np.bincount(assigned[block == b], minlength=n_values),
                                      np.bincount(values[block == b], minlength=n_values))
    assert cost[assigned, np.arange(n)].sum() < cost[values, np.arange(n)].sum()


@pytest.mark.parametrize("n_values", [2, 4])
def test_assign_by_value_fills_every_blocks_quota(n_values):
    # quota[block, value] copies per block, exactly; for two values the rows
    # that get the first value in ``order`` are those where it is cheapest
    rng = np.random.default_rng(n_values)
    block = np.repeat([0, 1, 2], [30, 1, 45])
    quota = np.stack([rng.multinomial(k, np.full(n_values, 1 / n_values))
                      for k in np.bincount(block)])
    cost = rng.normal(size=(n_values, block.size))
    order = rng.permutation(n_values)
    assigned = _assign_by_value(cost, quota, order, block)
    for b in range(3):
        np.testing.assert_array_equal(np.bincount(assigned[block == b], minlength=n_values),
                                      quota[b])
    if n_values == 2:
        first, second = order
        gain = cost[first] - cost[second]
        for b in range(3):
            rows = np.flatnonzero(block == b)
            cheapest = rows[np.argsort(gain[rows], kind="stable")[:quota[b, first]]]
            assert set(np.flatnonzero(assigned == first)) & set(rows) == set(cheapest)


def test_assign_breaks_ties_by_row_position():
    # equal keys at a quota boundary go to the earlier rows: the same seed gives
    # the same rows on every CPU (numpy's default argsort orders ties by how it
    # is vectorized: AVX-512, AVX2 and the fallback differ)
    rng = np.random.default_rng(0)
    n = 4000
    cost = rng.integers(0, 4, size=(3, n)).astype(np.float64)  # many exact ties
    quota = np.array([[1000, 1500, 1500]])
    assigned = _assign_by_value(cost, quota, np.array([0, 1, 2]), np.zeros(n, dtype=np.intp))
    gain = cost[0] - np.minimum(cost[1], cost[2])
    expected = np.sort(np.argsort(gain, kind="stable")[:1000])
    np.testing.assert_array_equal(np.flatnonzero(assigned == 0), expected)
    # every row asks for value 0 first; it goes to those that lose most by
    # taking value 1 instead, equal losses to the earlier rows
    two = np.stack([np.zeros(n), rng.integers(1, 4, size=n)]).astype(np.float32)
    values = np.repeat([0, 1], [1000, n - 1000])
    assigned = _assign_cheapest(two, values, np.array([0, 1]), np.zeros(n, dtype=np.intp))
    expected = np.sort(np.argsort(-two[1], kind="stable")[:1000])
    np.testing.assert_array_equal(np.flatnonzero(assigned == 0), expected)
