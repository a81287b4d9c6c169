"""Private Evolution: distance, voting, budget schedule, generators and the estimator."""

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from sklearn_dpsynth import IndependentSynthesizer
from sklearn_dpsynth.evolution import (MutationGenerator, PrivateEvolutionSynthesizer,
                                       PublicBootstrapGenerator,
                                       SynthesizerGenerator, UniformGenerator,
                                       nearest_candidates, round_shares, vote_histogram,
                                       workload_distance)
from sklearn_dpsynth.privacy import epsilon_to_rho
from sklearn_dpsynth.backends import NumpyTable as CodesTable

SIZES = [3, 2, 4, 3]
COLUMNS = ["a", "b", "c", "d"]


def _codes(n, rng, sizes=SIZES):
    return np.column_stack([rng.integers(0, k, n) for k in sizes])


def _brute_distance(x, c, workload):
    return sum(w for m, w in workload if any(x[j] != c[j] for j in m))


PAIRS = [(p, 1.0) for p in itertools.combinations(range(4), 2)]
WORKLOADS = {
    "all pairs": PAIRS,
    "weighted 1-way": [((0,), 2.0), ((1,), 0.5), ((3,), 1.0)],
    "mixed": [((0, 1), 1.0), ((2,), 3.0), ((1, 2, 3), 0.5)],
    "all triples": [(t, 1.0) for t in itertools.combinations(range(4), 3)],
}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_distance_is_the_brute_force_count(name):
    rng = np.random.default_rng(0)
    rows, cands = _codes(7, rng), _codes(9, rng)
    got = workload_distance(rows, cands, WORKLOADS[name])
    want = [[_brute_distance(x, c, WORKLOADS[name]) for c in cands] for x in rows]
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_nearest_is_the_brute_force_argmin_with_priority_ties(name):
    rng = np.random.default_rng(1)
    rows, cands = _codes(300, rng), _codes(40, rng)
    cands[5] = cands[6]  # duplicates must be handled
    priority = rng.random(len(cands))
    got = nearest_candidates([rows[:100], rows[100:]], cands, SIZES, WORKLOADS[name], priority)
    for x, pick in zip(rows, got):
        dist = np.array([_brute_distance(x, c, WORKLOADS[name]) for c in cands])
        tied = np.flatnonzero(np.isclose(dist, dist.min()))
        assert pick == tied[np.argmax(priority[tied])]


def test_one_added_record_changes_one_vote_bin_by_one():
    rng = np.random.default_rng(2)
    rows, cands = _codes(200, rng), _codes(50, rng)
    priority = rng.random(len(cands))
    base = vote_histogram(CodesTable(rows, COLUMNS, SIZES), cands, PAIRS, priority)
    for extra in _codes(10, rng):
        grown = vote_histogram(CodesTable(np.vstack([rows, extra]), COLUMNS, SIZES), cands,
                               PAIRS, priority)
        diff = grown - base
        assert np.sum(diff != 0) == 1 and diff.sum() == 1 and diff.max() == 1
    assert base.sum() == len(rows)


def test_round_shares():
    np.testing.assert_allclose(round_shares("increasing", 3), [1 / 6, 2 / 6, 3 / 6])
    np.testing.assert_allclose(round_shares("decreasing", 3), [3 / 6, 2 / 6, 1 / 6])
    np.testing.assert_allclose(round_shares("even", 4), [0.25] * 4)
    np.testing.assert_allclose(round_shares([1, 3], 2), [0.25, 0.75])
    with pytest.raises(ValueError, match="schedule"):
        round_shares([1, 2], 3)
    with pytest.raises(ValueError, match="schedule"):
        round_shares("sideways", 3)


def _frame(codes):
    return pd.DataFrame(codes, columns=COLUMNS)


DOMAIN = dict(zip(COLUMNS, SIZES))


@pytest.fixture(scope="module")
def private():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 2000)
    b = (a == 0).astype(int)
    c = np.minimum(a + rng.integers(0, 2, 2000), 3)
    d = rng.integers(0, 3, 2000)
    return _frame(np.column_stack([a, b, c, d]))


def test_ledger_follows_the_schedule_and_totals_the_budget(private):
    synth = PrivateEvolutionSynthesizer(domain=DOMAIN, rounds=3, n_synthetic=500,
                                        candidate_ratio=2.0, random_state=0).fit(
        private, epsilon=2.0, delta=1e-6)
    rho = epsilon_to_rho(2.0, 1e-6)
    costs = [e.rho for e in synth.privacy_ledger_.entries]
    np.testing.assert_allclose(costs, rho * round_shares("increasing", 3), rtol=1e-9)
    assert synth.privacy_ledger_.spent()[0] == pytest.approx(2.0, rel=1e-9)
    assert [h["n_candidates"] for h in synth.history_] == [1000] * 3


def test_row_count_is_measured_when_not_given(private):
    synth = PrivateEvolutionSynthesizer(domain=DOMAIN, random_state=0, count_share=0.1,
                                        rounds=1).fit(private, epsilon=1.0)
    entries = synth.privacy_ledger_.entries
    assert entries[0].target == "row count"
    rho = epsilon_to_rho(1.0, 1e-9)
    assert entries[0].rho == pytest.approx(0.1 * rho) and entries[1].rho == pytest.approx(0.9 * rho)
    assert abs(synth.n_synthetic_ - len(private)) < 200


def test_converges_to_the_truth_with_a_large_budget(private):
    # 4 columns, 72 cells: uniform candidates cover the domain, votes are exact.
    synth = PrivateEvolutionSynthesizer(domain=DOMAIN, n_synthetic=2000, candidate_ratio=2,
                                        random_state=0).fit(private, epsilon=1e4)
    rows = synth.sample(20000, random_state=1)
    for pair, _ in PAIRS:
        cols = [COLUMNS[j] for j in pair]
        p = private.value_counts(cols, normalize=True)
        q = rows.value_counts(cols, normalize=True).reindex(p.index, fill_value=0)
        assert 0.5 * np.abs(p - q).sum() < 0.03


def test_reproducible_and_clonable(private):
    a = PrivateEvolutionSynthesizer(domain=DOMAIN, generator="public", rounds=2, random_state=5)
    b = clone(a)
    public = private.sample(300, random_state=0)
    a.fit(private, epsilon=1.0, public_data=public)
    b.fit(private, epsilon=1.0, public_data=public)
    pd.testing.assert_frame_equal(a.sample(50), b.sample(50))
    np.testing.assert_array_equal(a.score_samples(private), b.score_samples(private))


def test_verbose_prints_one_stderr_line_per_round_and_quiet_prints_nothing(private, capsys):
    params = dict(domain=DOMAIN, rounds=3, n_synthetic=200, random_state=0)
    quiet = PrivateEvolutionSynthesizer(**params).fit(private, epsilon=1.0)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    loud = PrivateEvolutionSynthesizer(**params, verbose=1).fit(private, epsilon=1.0)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"[PE round {h['round']}: {h['n_candidates']} candidates ({h['n_distinct']} distinct), "
        f"{h['kept']} with votes]" for h in loud.history_]
    assert len(loud.history_) == 3 and loud.history_ == quiet.history_


def test_neighbouring_tables_get_the_same_ledger(private):
    ledgers = []
    for table in (private, private.iloc[1:]):
        synth = PrivateEvolutionSynthesizer(domain=DOMAIN, rounds=2, n_synthetic=400,
                                            candidate_ratio=2.0, random_state=0).fit(
            table, epsilon=1.0)
        ledgers.append([(e.target, e.rho) for e in synth.privacy_ledger_.entries])
        assert synth.records_.codes.shape == (800, 4)
    assert ledgers[0] == ledgers[1]


def test_custom_generator_protocol_and_factory(private):
    class Constant:
        def random_rows(self, n, rng):
            return np.zeros((n, 4), dtype=int)

        def variations(self, rows, rng):
            return rows

    synth = PrivateEvolutionSynthesizer(domain=DOMAIN, generator=Constant(), n_synthetic=10,
                                        random_state=0).fit(private, epsilon=1.0)
    assert (synth.sample(5) == 0).all().all()
    seen = {}

    def factory(domain, public):
        seen["sizes"] = domain.sizes
        return UniformGenerator(domain.sizes)

    PrivateEvolutionSynthesizer(domain=DOMAIN, generator=factory, n_synthetic=10,
                                random_state=0).fit(private, epsilon=1.0)
    assert seen["sizes"] == SIZES


def test_bad_generators_get_clear_errors(private):
    class OutOfDomain:
        def random_rows(self, n, rng):
            return np.full((n, 4), 7)

        def variations(self, rows, rng):
            return rows

    with pytest.raises(ValueError, match="random_rows .*outside the domain"):
        PrivateEvolutionSynthesizer(domain=DOMAIN, generator=OutOfDomain(), n_synthetic=5).fit(
            private, epsilon=1.0)
    with pytest.raises(ValueError, match="generator='public' needs public_data"):
        PrivateEvolutionSynthesizer(domain=DOMAIN, generator="public").fit(private, epsilon=1.0)
    with pytest.raises(ValueError, match="generator must be"):
        PrivateEvolutionSynthesizer(domain=DOMAIN, generator="llm").fit(private, epsilon=1.0)


def test_offline_generators_vary_n_resample_columns():
    rng = np.random.default_rng(4)
    rows = _codes(500, rng)
    for generator in (UniformGenerator(SIZES, n_resample=2),
                      PublicBootstrapGenerator(rows, SIZES, n_resample=2)):
        varied = generator.variations(rows, rng)
        assert varied.shape == rows.shape
        assert ((varied != rows).sum(axis=1) <= 2).all()
        assert (varied != rows).any()
        fresh = generator.random_rows(100, rng)
        assert fresh.shape == (100, 4) and (fresh < np.array(SIZES)).all()


def test_synthesizer_generator_draws_from_the_model_conditionals(private):
    model = IndependentSynthesizer(domain=DOMAIN, random_state=0).fit(private, epsilon=1e3)
    rng = np.random.default_rng(0)
    rows = np.zeros((20000, 4), dtype=int)
    one = SynthesizerGenerator(model, n_resample=1).variations(rows, rng)
    assert ((one != rows).sum(axis=1) <= 1).all()
    # Redrawing every column: under an independent model each conditional is the marginal.
    every = SynthesizerGenerator(model, n_resample=4).variations(rows, rng)
    for j in range(4):
        observed = np.bincount(every[:, j], minlength=SIZES[j]) / len(every)
        np.testing.assert_allclose(observed, model.marginals_[j], atol=0.02)


# ---------------------------------------------------------------- scaled-L1 variant
from sklearn_dpsynth.domain import Domain  # noqa: E402
from sklearn_dpsynth.evolution import code_positions, column_similarity  # noqa: E402

#: Columns 1 and 3 ordered: 5 bins; 4 bins + a point code (in bin 0) + missing.
ORDERED_SIZES = [3, 5, 4, 6]
POSITIONS = [None, np.arange(5) / 4, None, np.r_[np.arange(4) / 3, 0.0, np.nan]]


def _brute_scaled(x, c, workload, positions=POSITIONS):
    total = 0.0
    for marginal, weight in workload:
        if any(x[j] != c[j] for j in marginal if positions[j] is None):
            total += weight
            continue
        gaps = []
        for j in (j for j in marginal if positions[j] is not None):
            a, b = positions[j][x[j]], positions[j][c[j]]
            if np.isnan(a) or np.isnan(b):
                gaps.append(0.0 if np.isnan(a) and np.isnan(b) else 1.0)
            else:
                gaps.append(abs(a - b))
        total += weight * (np.mean(gaps) if gaps else 0.0)
    return total


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_scaled_l1_distance_is_the_brute_force_value(name):
    rng = np.random.default_rng(10)
    rows, cands = _codes(12, rng, ORDERED_SIZES), _codes(15, rng, ORDERED_SIZES)
    got = workload_distance(rows, cands, WORKLOADS[name], POSITIONS)
    want = [[_brute_scaled(x, c, WORKLOADS[name]) for c in cands] for x in rows]
    np.testing.assert_allclose(got, want, atol=1e-12)
    # Never above the mismatch count, equal to it where no ordered column differs.
    plain = workload_distance(rows, cands, WORKLOADS[name])
    assert np.all(got <= plain + 1e-12)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_scaled_l1_nearest_is_the_brute_force_argmin(name):
    rng = np.random.default_rng(11)
    rows, cands = _codes(300, rng, ORDERED_SIZES), _codes(40, rng, ORDERED_SIZES)
    cands[5] = cands[6]
    priority = rng.random(len(cands))
    got = nearest_candidates([rows[:130], rows[130:]], cands, ORDERED_SIZES, WORKLOADS[name],
                             priority, POSITIONS)
    for x, pick in zip(rows, got):
        dist = np.array([_brute_scaled(x, c, WORKLOADS[name]) for c in cands])
        tied = np.flatnonzero(np.isclose(dist, dist.min(), rtol=0, atol=1e-9))
        assert pick == tied[np.argmax(priority[tied])]


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_scaled_l1_reduces_to_the_count_without_ordered_columns(name):
    rng = np.random.default_rng(12)
    rows, cands = _codes(200, rng), _codes(30, rng)
    priority = rng.random(len(cands))
    none = [None] * 4
    np.testing.assert_array_equal(workload_distance(rows, cands, WORKLOADS[name], none),
                                  workload_distance(rows, cands, WORKLOADS[name]))
    np.testing.assert_array_equal(
        nearest_candidates([rows], cands, SIZES, WORKLOADS[name], priority, none),
        nearest_candidates([rows], cands, SIZES, WORKLOADS[name], priority))


def test_scaled_l1_estimator_equals_workload_on_categorical_tables(private):
    fits = [PrivateEvolutionSynthesizer(domain=DOMAIN, distance=d, rounds=2, n_synthetic=300,
                                        random_state=0).fit(private, epsilon=1.0)
            for d in ("workload", "scaled_l1")]
    np.testing.assert_array_equal(fits[0].records_.codes, fits[1].records_.codes)
    np.testing.assert_array_equal(fits[0].records_.probabilities, fits[1].records_.probabilities)


def test_column_similarity_and_code_positions():
    sim = column_similarity(np.array([0.0, 0.5, 1.0, np.nan]))
    np.testing.assert_allclose(sim, [[1, 0.5, 0, 0], [0.5, 1, 0.5, 0], [0, 0.5, 1, 0],
                                     [0, 0, 0, 1]])
    domain = Domain.from_declaration(
        {"x": {"kind": "numeric", "edges": [0, 10, 20, 30, 40, 50], "points": [25.0],
               "missing": True},
         "c": ["a", "b"], "k": 3})
    positions = code_positions(domain)
    np.testing.assert_allclose(positions[0], [0, 0.25, 0.5, 0.75, 1.0, 0.5, np.nan])
    assert positions[1] is None and positions[2] is None


NUMERIC_DOMAIN = {"x": (0.0, 100.0), "c": ["a", "b"]}


class _FixedCandidates:
    """Same candidate rows every call (codes on NUMERIC_DOMAIN with 10 bins)."""

    def __init__(self, rows):
        self.rows = np.asarray(rows)

    def random_rows(self, n, rng):
        return self.rows[np.arange(n) % len(self.rows)]

    def variations(self, rows, rng):
        return rows


def test_scaled_l1_votes_for_the_closer_numeric_candidate():
    # Private rows in bin 4 of x (values 40-50), category "a".  Candidates in the
    # same category: bin 5 (near) and bin 9 (far); under the mismatch count both
    # differ on every marginal holding x and tie; the scaled L1 prefers bin 5.
    private = pd.DataFrame({"x": np.linspace(41, 49, 500), "c": ["a"] * 500})
    candidates = [[5, 0], [9, 0]]
    far_share = {}
    for distance in ("workload", "scaled_l1"):
        shares = []
        for seed in range(4):  # seeds change the public tie-breaking order
            synth = PrivateEvolutionSynthesizer(
                domain=NUMERIC_DOMAIN, n_bins=10, distance=distance, n_synthetic=1,
                generator=_FixedCandidates(candidates), random_state=seed,
            ).fit(private, epsilon=1e4)
            assert synth.domain_["x"].kind == "numeric"
            shares.append(synth.records_.probabilities[1])
        far_share[distance] = np.array(shares)
    np.testing.assert_allclose(far_share["scaled_l1"], 0.0, atol=1e-3)
    assert far_share["workload"].max() > 0.99  # some tie-breaking order chose the far bin
    positions = code_positions(synth.domain_)
    rows = np.array([[4, 0]])
    priority = np.array([0.0, 0.9])  # ties go to the far candidate
    for workload in ([((0,), 1.0), ((1,), 1.0)], [((0, 1), 1.0)], [((0,), 2.0)]):
        plain = nearest_candidates([rows], np.array(candidates), [10, 2], workload, priority)
        scaled = nearest_candidates([rows], np.array(candidates), [10, 2], workload, priority,
                                    positions)
        assert plain[0] == 1 and scaled[0] == 0


def test_scaled_l1_one_added_record_changes_one_vote_bin_by_one():
    rng = np.random.default_rng(13)
    rows, cands = _codes(200, rng, ORDERED_SIZES), _codes(50, rng, ORDERED_SIZES)
    priority = rng.random(len(cands))
    table = CodesTable(rows, COLUMNS, ORDERED_SIZES)
    base = vote_histogram(table, cands, PAIRS, priority, positions=POSITIONS)
    for extra in _codes(10, rng, ORDERED_SIZES):
        grown = vote_histogram(CodesTable(np.vstack([rows, extra]), COLUMNS, ORDERED_SIZES),
                               cands, PAIRS, priority, positions=POSITIONS)
        diff = grown - base
        assert np.sum(diff != 0) == 1 and diff.sum() == 1 and diff.max() == 1


def test_scaled_l1_neighbouring_numeric_tables_same_ledger_and_reproducible():
    rng = np.random.default_rng(14)
    frame = pd.DataFrame({"x": rng.uniform(0, 100, 800), "c": rng.choice(["a", "b"], 800)})
    out = []
    for table in (frame, frame.iloc[1:], frame):
        synth = PrivateEvolutionSynthesizer(domain=NUMERIC_DOMAIN, distance="scaled_l1",
                                            rounds=2, n_synthetic=200, random_state=3)
        synth.fit(table, epsilon=1.0)
        out.append(synth)
    ledgers = [[(e.target, e.rho) for e in s.privacy_ledger_.entries] for s in out]
    assert ledgers[0] == ledgers[1] == ledgers[2]
    assert out[0].records_.codes.shape == out[1].records_.codes.shape
    pd.testing.assert_frame_equal(out[0].sample(30), out[2].sample(30))


def test_votes_all_swamped_by_noise_warn():
    from sklearn_dpsynth.evolution._voting import noisy_vote_distribution
    from sklearn_dpsynth.privacy import PrivacyLedger

    ledger = PrivacyLedger(1e-3, 1e-9)
    votes = np.zeros(50)
    with pytest.warns(UserWarning, match="noise swamped the votes"):
        probs, _ = noisy_vote_distribution(votes, ledger.rho_remaining(), ledger,
                                           np.random.default_rng(0), target="votes",
                                           threshold=100.0)
    np.testing.assert_allclose(probs, 1 / 50)


# ------------------------------------------------ default generator and likelihood
def test_auto_generator_starts_from_the_public_rows_when_given(private):
    public = private.sample(300, random_state=1)
    auto = PrivateEvolutionSynthesizer(domain=DOMAIN, n_synthetic=100, random_state=0).fit(
        private, epsilon=1.0, public_data=public)
    chosen = PrivateEvolutionSynthesizer(domain=DOMAIN, generator="public", n_synthetic=100,
                                         random_state=0).fit(private, epsilon=1.0,
                                                             public_data=public)
    np.testing.assert_array_equal(auto.records_.codes, chosen.records_.codes)
    assert {tuple(r) for r in auto.records_.codes} <= {tuple(r) for r in public.to_numpy()}
    assert (auto.rounds_, auto.candidate_ratio_) == (1, 2.0)
    alone = PrivateEvolutionSynthesizer(domain=DOMAIN, n_synthetic=100, random_state=0).fit(
        private, epsilon=1.0)
    assert (alone.rounds_, alone.candidate_ratio_) == (30, 0.1)
    assert alone.records_.codes.shape == (10, 4) and len(alone.history_) == 30


def test_a_generator_that_ignores_public_data_says_so(private):
    public = private.sample(50, random_state=1)
    with pytest.warns(UserWarning, match="public_data is ignored: generator='uniform'"):
        PrivateEvolutionSynthesizer(domain=DOMAIN, generator="uniform", n_synthetic=20,
                                    random_state=0).fit(private, epsilon=1.0, public_data=public)
    with pytest.warns(UserWarning, match="public_data is ignored: generator=a UniformGenerator"):
        PrivateEvolutionSynthesizer(domain=DOMAIN, generator=UniformGenerator(SIZES),
                                    n_synthetic=20, random_state=0).fit(
            private, epsilon=1.0, public_data=public)


def test_density_sums_to_one_and_scores_rows_off_the_candidates(private):
    synth = PrivateEvolutionSynthesizer(domain=DOMAIN, n_synthetic=10, random_state=0).fit(
        private, epsilon=1.0)
    domain = pd.DataFrame(list(itertools.product(*[range(k) for k in SIZES])), columns=COLUMNS)
    log_p = synth.score_samples(domain)
    assert np.all(np.isfinite(log_p)) and np.exp(log_p).sum() == pytest.approx(1.0, abs=1e-9)
    records, lam = synth.records_, synth.smoothing
    for row in domain.to_numpy():
        in_records = records.probabilities[(records.codes == row).all(axis=1)].sum()
        one_way = [np.bincount(records.codes[:, j], weights=records.probabilities, minlength=k)
                   for j, k in enumerate(SIZES)]
        base = np.prod([(1 - lam) * m[c] + lam / k for m, c, k in zip(one_way, row, SIZES)])
        assert synth.score_samples(pd.DataFrame([row], columns=COLUMNS))[0] == pytest.approx(
            np.log((1 - lam) * in_records + lam * base))
    assert np.isfinite(synth.score(private))


def test_mutation_generator_rates_decay_and_cells_mutate_at_that_rate():
    generator = MutationGenerator([50] * 4, n_variations=14, start=0.5, end=0.01, power=0.2)
    rates = [generator.rate(t) for t in range(16)]
    assert rates[0] == pytest.approx(0.5) and rates[14] == pytest.approx(0.01)
    assert rates[15] == pytest.approx(0.01)
    assert rates[7] == pytest.approx(0.5 - 0.49 * (7 / 14) ** 0.2)
    assert all(a > b for a, b in zip(rates[:14], rates[1:15]))
    # power < 1 falls fast: past half the distance to ``end`` within the first 4 calls.
    assert rates[1] < 0.26
    assert MutationGenerator([2], 4, power=1.0).rate(2) == pytest.approx(0.5 - 0.49 / 2)
    rng = np.random.default_rng(0)
    rows = generator.random_rows(40000, rng)
    for t in (0, 1):  # a changed cell was mutated; a mutated cell changes with prob 49/50
        varied = generator.variations(rows, rng)
        changed = (varied != rows).mean()
        assert changed == pytest.approx(rates[t] * 49 / 50, abs=0.005)
        assert (varied < 50).all() and (varied >= 0).all()
    generator.random_rows(1, rng)
    assert generator.calls == 0  # a new fit restarts the schedule


def test_auto_generator_without_public_data_mutates_over_the_rounds(private):
    synth = PrivateEvolutionSynthesizer(domain=DOMAIN, rounds=4, n_synthetic=200,
                                        random_state=0).fit(private, epsilon=5.0)
    explicit = PrivateEvolutionSynthesizer(domain=DOMAIN, rounds=4, n_synthetic=200,
                                           generator="mutation", random_state=0).fit(
        private, epsilon=5.0)
    np.testing.assert_array_equal(synth.records_.codes, explicit.records_.codes)
    uniform = PrivateEvolutionSynthesizer(domain=DOMAIN, rounds=4, n_synthetic=200,
                                          generator="uniform", random_state=0).fit(
        private, epsilon=5.0)
    assert not np.array_equal(synth.records_.codes, uniform.records_.codes)


# ------------------------------------------------ elite selection (Tab-PE)
def test_elite_rounds_keep_the_best_voted_candidates_and_vary_them(private, monkeypatch):
    """From round ceil(T/6) on, the top quarter by noisy votes survives, the rest are its variations."""
    import sklearn_dpsynth.evolution.pe as pe_module

    released = []
    real = pe_module.noisy_vote_distribution

    def spy(votes, rho, ledger, rng, target, threshold=0.0):
        probs, noisy = real(votes, rho, ledger, rng, target, threshold)
        released.append(noisy.copy())
        return probs, noisy

    monkeypatch.setattr(pe_module, "noisy_vote_distribution", spy)
    synth = PrivateEvolutionSynthesizer(domain=DOMAIN, rounds=6, n_synthetic=400,
                                        selection="elite", random_state=0)
    seen = []
    real_record = synth._record
    monkeypatch.setattr(synth, "_record", lambda t, rho, ledger, candidates, probs: (
        seen.append(candidates.copy()), real_record(t, rho, ledger, candidates, probs)))
    synth.fit(private, epsilon=3.0)
    assert synth._elite_from() == 1 and len(seen) == 6
    n_candidates, n_kept = 40, 10
    for t in range(5):
        best = np.argsort(-released[t], kind="stable")[:n_kept]
        kept = seen[t + 1][:n_kept]
        # the kept rows are the best-voted ones (up to ties, broken by public priority)
        np.testing.assert_array_equal(np.sort(released[t][best]),
                                      np.sort([released[t][(seen[t] == row).all(axis=1)].max()
                                               for row in kept]))
        assert seen[t + 1].shape == (n_candidates, 4)
        # every other candidate is a variation of a kept row: rows of the domain, from kept parents
        parents = kept[np.arange(n_candidates - n_kept) % n_kept]
        differs = (seen[t + 1][n_kept:] != parents).mean()
        assert differs < 0.5


def test_sample_selection_is_the_default_and_elite_differs(private):
    params = dict(domain=DOMAIN, rounds=4, n_synthetic=200, random_state=0)
    default = PrivateEvolutionSynthesizer(**params).fit(private, epsilon=2.0)
    sample = PrivateEvolutionSynthesizer(**params, selection="sample").fit(private, epsilon=2.0)
    elite = PrivateEvolutionSynthesizer(**params, selection="elite").fit(private, epsilon=2.0)
    np.testing.assert_array_equal(default.records_.codes, sample.records_.codes)
    assert not np.array_equal(elite.records_.codes, sample.records_.codes)
    assert (default._elite_from(), elite._elite_from()) == (4, 1)


def test_elite_ledger_totals_match_an_independent_computation(private):
    """Each round is one Gaussian release at its share (computed here); count + rounds = budget."""
    epsilon, delta = 1.5, 1e-7
    synth = PrivateEvolutionSynthesizer(domain=DOMAIN, count_share=0.05,
                                        random_state=4).fit(private, epsilon=epsilon,
                                                            delta=delta)
    rho = epsilon_to_rho(epsilon, delta)  # the conversion has its own tests in test_privacy
    entries = synth.privacy_ledger_.entries
    assert [e.target for e in entries] == ["row count"] + [
        f"PE round {t}: nearest-candidate votes" for t in range(1, 31)]
    rounds = (1 - 0.05) * rho * np.arange(1, 31) / np.arange(1, 31).sum()
    np.testing.assert_allclose([e.rho for e in entries], [0.05 * rho, *rounds], rtol=1e-6)
    np.testing.assert_allclose([h["sigma"] for h in synth.history_],
                               np.sqrt(1 / (2 * rounds)), rtol=1e-6)
    assert sum(e.rho for e in entries) == pytest.approx(rho, rel=1e-6)


@pytest.mark.parametrize("selection", ["sample", "elite"])
def test_neighbouring_tables_same_releases_give_the_same_model(private, monkeypatch,
                                                                selection):
    """What a fit makes public depends on the data only through the noisy votes.

    D and D' (one row removed) are fitted with the released vote vectors
    forced to the same values; every candidate, the model and what it
    reports must then be identical.
    """
    import sklearn_dpsynth.evolution.pe as pe_module
    from sklearn_dpsynth.privacy import gaussian_sigma

    def same_release(votes, rho, ledger, rng, target, threshold=0.0):
        ledger.gaussian(votes, sigma=gaussian_sigma(rho), rng=rng, target=target,
                        n_cells=votes.size)
        noisy = np.random.default_rng(len(ledger.entries)).normal(5.0, 3.0, votes.size)
        clipped = np.maximum(noisy, 0.0)
        return clipped / clipped.sum(), noisy

    monkeypatch.setattr(pe_module, "noisy_vote_distribution", same_release)
    fits = [PrivateEvolutionSynthesizer(domain=DOMAIN, rounds=6, n_synthetic=300,
                                        selection=selection, random_state=7).fit(
        table, epsilon=1.0) for table in (private, private.iloc[1:])]
    np.testing.assert_array_equal(fits[0].records_.codes, fits[1].records_.codes)
    np.testing.assert_array_equal(fits[0].records_.probabilities,
                                  fits[1].records_.probabilities)
    assert fits[0].history_ == fits[1].history_
    assert fits[0].n_records_ == fits[1].n_records_
    pd.testing.assert_frame_equal(fits[0].sample(100, random_state=1),
                                  fits[1].sample(100, random_state=1))


def test_default_without_public_data_beats_uniform_candidates():
    """Known structure: 8 columns of 6 codes, each column a noisy copy of the previous one."""
    rng = np.random.default_rng(11)
    n, k, d = 6000, 6, 8
    codes = np.empty((n, d), dtype=int)
    codes[:, 0] = rng.integers(0, k, n)
    for j in range(1, d):
        copy = rng.random(n) < 0.85
        codes[:, j] = np.where(copy, codes[:, j - 1], rng.integers(0, k, n))
    columns = [f"x{j}" for j in range(d)]
    frame = pd.DataFrame(codes, columns=columns)
    domain = dict.fromkeys(columns, k)

    def tvd2(synth):
        rows = synth.sample(n, random_state=0)
        tvds = []
        for a, b in itertools.combinations(columns, 2):
            p = frame.value_counts([a, b], normalize=True)
            q = rows.value_counts([a, b], normalize=True)
            p, q = p.align(q, fill_value=0.0)
            tvds.append(0.5 * np.abs(p - q).sum())
        return float(np.mean(tvds))

    default = PrivateEvolutionSynthesizer(domain=domain, random_state=0).fit(frame, epsilon=1.0)
    uniform = PrivateEvolutionSynthesizer(domain=domain, generator="uniform", rounds=1,
                                          candidate_ratio=2.0, random_state=0).fit(
        frame, epsilon=1.0)
    assert tvd2(default) < 0.6 * tvd2(uniform)
