"""Behaviour of ``memsift.VectorStore``: exact top-k against numpy references, mutation, validation and ANN recall."""

import numpy as np
import pytest

import memsift

ODD_DIMS = [1, 3, 17, 385]


def normalize(matrix):
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return (matrix / norms).astype(np.float32)


def reference_scores(rows, query, metric='cosine', dtype='f32'):
    """Score of every stored row for ``query``, computed the way the store is specified to."""
    rows = np.asarray(rows, dtype=np.float32)
    query = np.asarray(query, dtype=np.float32)
    if metric == 'dot':
        return rows.astype(np.float64) @ query.astype(np.float64)
    rows, query = normalize(rows), normalize(query)
    if dtype == 'f16':
        rows = rows.astype(np.float16).astype(np.float32)
    elif dtype == 'i8':
        scale = np.abs(rows).max(axis=1, keepdims=True) / np.float32(127)
        q8 = np.round(rows / scale).clip(-127, 127)
        return scale[:, 0].astype(np.float64) * (q8.astype(np.float64) @ query.astype(np.float64))
    return rows.astype(np.float64) @ query.astype(np.float64)


F32_RTOL, F32_ATOL = 1e-5, 1e-6


def quantized_atol(rows, query, dtype):
    """Absolute tolerance for quantized scores: one rounding step of one element.

    The store and numpy may normalize in a different summation order, which can move an element across a rounding
    boundary (f16 ulp, or one i8 step); the score then differs by at most ``step * max|query|``.
    """
    qmax = float(np.abs(normalize(query)).max())
    if dtype == 'f16':
        step = 2.0**-10  # f16 ulp of values in [0.5, 1); normalized elements are <= 1
    else:
        step = float((np.abs(normalize(rows)).max(axis=1) / 127).max())
    return 1e-5 + step * qmax


def assert_top_k_matches(ids, scores, all_ids, expected_scores, k, rtol, atol):
    """``(ids, scores)`` is the top-k of ``expected_scores`` up to near-ties, with accurate scores."""
    n = len(all_ids)
    assert ids.dtype == np.uint64
    assert scores.dtype == np.float32
    assert len(ids) == len(scores) == min(k, n)
    assert len(set(ids.tolist())) == len(ids), 'duplicate ids'
    assert np.all(np.diff(scores) <= atol), 'scores are not best first'

    expected_by_id = dict(zip(all_ids.tolist(), expected_scores.tolist()))
    expected_for_returned = np.array([expected_by_id[i] for i in ids.tolist()])
    np.testing.assert_allclose(scores, expected_for_returned, rtol=rtol, atol=atol)

    if len(ids) == 0:
        return
    order = np.argsort(-expected_scores, kind='stable')
    kth = expected_scores[order[len(ids) - 1]]
    slack = atol + rtol * abs(kth)
    must_include = set(all_ids[expected_scores > kth + slack].tolist())
    assert must_include <= set(ids.tolist()), 'a clearly better vector is missing'
    assert expected_for_returned.min() >= kth - slack, 'a clearly worse vector was returned'


def random_store(dims, n=200, seed=0, **kwargs):
    rng = np.random.default_rng(seed)
    ids = (2**40 + rng.choice(10**6, size=n, replace=False)).astype(np.uint64)
    rows = rng.standard_normal((n, dims)).astype(np.float32)
    store = memsift.VectorStore(dims, **kwargs)
    store.add(ids, rows)
    return store, ids, rows, rng


# ---------------------------------------------------------------- exact search vs numpy


@pytest.mark.parametrize('dims', ODD_DIMS)
@pytest.mark.parametrize('metric', ['cosine', 'dot'])
def test_exact_f32_search_matches_numpy(dims, metric):
    store, ids, rows, rng = random_store(dims, metric=metric)
    for _ in range(5):
        query = rng.standard_normal(dims).astype(np.float32)
        found_ids, found_scores = store.search(query, k=10)
        expected = reference_scores(rows, query, metric=metric)
        atol = F32_ATOL * max(1.0, float(np.abs(expected).max()))
        assert_top_k_matches(found_ids, found_scores, ids, expected, 10, F32_RTOL, atol)


@pytest.mark.parametrize('dims', ODD_DIMS)
@pytest.mark.parametrize('dtype', ['f16', 'i8'])
def test_exact_quantized_search_matches_numpy(dims, dtype):
    store, ids, rows, rng = random_store(dims, dtype=dtype)
    for _ in range(5):
        query = rng.standard_normal(dims).astype(np.float32)
        found_ids, found_scores = store.search(query, k=10, exact=True)
        expected = reference_scores(rows, query, dtype=dtype)
        atol = quantized_atol(rows, query, dtype)
        assert_top_k_matches(found_ids, found_scores, ids, expected, 10, 1e-5, atol)


@pytest.mark.parametrize('dims', [3, 17, 385])
def test_i8_scale_is_max_abs_over_127(dims):
    # Integer rows containing a +-127 element quantize exactly, so i8 scores must equal the float cosine.
    rng = np.random.default_rng(dims)
    rows = rng.integers(-127, 128, size=(100, dims)).astype(np.float32)
    rows[:, 0] = np.where(rng.random(100) < 0.5, -127, 127)
    ids = np.arange(100, dtype=np.uint64)
    store = memsift.VectorStore(dims, dtype='i8')
    store.add(ids, rows)
    for _ in range(5):
        query = rng.standard_normal(dims).astype(np.float32)
        found_ids, found_scores = store.search(query, k=10)
        expected = reference_scores(rows, query)
        assert_top_k_matches(found_ids, found_scores, ids, expected, 10, 1e-5, 1e-5)


def test_cosine_top_hit_of_a_stored_vector_is_itself_with_score_one():
    store, ids, rows, _ = random_store(17)
    found_ids, found_scores = store.search(rows[42] * 3.0, k=1)
    assert found_ids.tolist() == [ids[42]]
    np.testing.assert_allclose(found_scores, [1.0], rtol=1e-5)


def test_properties():
    store = memsift.VectorStore(8, metric='dot', dtype='f16')
    assert (store.dims, store.metric, store.dtype) == (8, 'dot', 'f16')
    default = memsift.VectorStore(4)
    assert (default.metric, default.dtype, default.ann_active) == ('cosine', 'f32', False)


def test_k_larger_than_store_returns_every_vector():
    store, ids, rows, _ = random_store(3, n=5)
    found_ids, found_scores = store.search(np.ones(3, dtype=np.float32), k=50)
    assert sorted(found_ids.tolist()) == sorted(ids.tolist())
    assert len(found_scores) == 5


def test_empty_store_returns_two_empty_arrays():
    store = memsift.VectorStore(4)
    found_ids, found_scores = store.search(np.ones(4, dtype=np.float32), k=10)
    assert found_ids.shape == (0,)
    assert found_scores.shape == (0,)
    assert found_ids.dtype == np.uint64
    assert found_scores.dtype == np.float32


def test_k_zero_returns_two_empty_arrays():
    store, _, _, _ = random_store(3, n=5)
    found_ids, found_scores = store.search(np.ones(3, dtype=np.float32), k=0)
    assert len(found_ids) == len(found_scores) == 0


@pytest.mark.parametrize('dtype', ['f32', 'f16', 'i8'])
def test_search_batch_equals_search_per_query(dtype):
    store, _, _, rng = random_store(17, dtype=dtype)
    queries = rng.standard_normal((7, 17)).astype(np.float32)
    batch = store.search_batch(queries, k=6)
    assert len(batch) == 7
    for query, (batch_ids, batch_scores) in zip(queries, batch):
        single_ids, single_scores = store.search(query, k=6)
        np.testing.assert_array_equal(batch_ids, single_ids)
        np.testing.assert_allclose(batch_scores, single_scores, rtol=1e-6)


def test_search_batch_of_zero_queries():
    store, _, _, _ = random_store(3, n=5)
    assert store.search_batch(np.zeros((0, 3), dtype=np.float32), k=3) == []


# ---------------------------------------------------------------- mutation


def test_len_and_contains():
    store, ids, _, _ = random_store(3, n=20)
    assert len(store) == 20
    assert int(ids[0]) in store
    assert 7 not in store


def test_add_accepts_python_int_ids():
    store = memsift.VectorStore(2)
    store.add([5, 6], np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    assert len(store) == 2
    assert store.search(np.array([0.0, 1.0], dtype=np.float32), k=1)[0].tolist() == [6]


def test_add_with_existing_id_replaces_the_vector():
    store = memsift.VectorStore(2)
    store.add([1, 2], np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32))
    store.add([1], np.array([[0.0, 1.0]], dtype=np.float32))
    assert len(store) == 2
    found_ids, found_scores = store.search(np.array([0.0, 1.0], dtype=np.float32), k=2)
    assert found_ids.tolist() == [1, 2]
    np.testing.assert_allclose(found_scores, [1.0, 0.8], rtol=1e-6)


def test_remove_returns_count_of_present_ids_and_they_disappear():
    store, ids, rows, _ = random_store(17, n=50)
    removed = [int(ids[3]), int(ids[10])]
    assert store.remove(removed + [123]) == 2
    assert len(store) == 48
    assert removed[0] not in store and removed[1] not in store
    found_ids, _ = store.search(rows[3], k=50)
    assert len(found_ids) == 48
    assert not set(removed) & set(found_ids.tolist())
    assert store.remove(removed) == 0


def test_clear_empties_the_store():
    store, ids, _, _ = random_store(3, n=10)
    store.clear()
    assert len(store) == 0
    assert int(ids[0]) not in store
    assert len(store.search(np.ones(3, dtype=np.float32))[0]) == 0


# ---------------------------------------------------------------- input conversion and validation


def test_float64_and_non_contiguous_input_is_converted():
    rng = np.random.default_rng(3)
    wide = rng.standard_normal((30, 34))
    rows = wide[:, ::2]  # float64, not contiguous
    assert not rows.flags['C_CONTIGUOUS']
    query = wide[0, 1::2]
    ids = np.arange(30, dtype=np.uint64)

    converted = memsift.VectorStore(17)
    converted.add(ids, rows)
    fortran = memsift.VectorStore(17)
    fortran.add(ids, np.asfortranarray(rows.astype(np.float32)))
    reference = memsift.VectorStore(17)
    reference.add(ids, np.ascontiguousarray(rows, dtype=np.float32))

    expected_ids, expected_scores = reference.search(np.ascontiguousarray(query, dtype=np.float32), k=5)
    for store in (converted, fortran, reference):
        found_ids, found_scores = store.search(query, k=5)
        np.testing.assert_array_equal(found_ids, expected_ids)
        np.testing.assert_allclose(found_scores, expected_scores, rtol=1e-6)


@pytest.mark.parametrize(
    'vectors',
    [
        np.zeros((2, 5), dtype=np.float32),
        np.zeros((2, 3), dtype=np.float32),
        np.zeros(4, dtype=np.float32),
        np.zeros((2, 2, 4), dtype=np.float32),
    ],
    ids=['too-wide', 'too-narrow', '1d', '3d'],
)
def test_add_with_wrong_shape_raises(vectors):
    store = memsift.VectorStore(4)
    with pytest.raises(memsift.InvalidInputError):
        store.add([1, 2], vectors + 1)
    assert len(store) == 0


def test_add_with_id_count_mismatch_raises():
    store = memsift.VectorStore(4)
    with pytest.raises(memsift.InvalidInputError):
        store.add([1, 2, 3], np.ones((2, 4), dtype=np.float32))


@pytest.mark.parametrize('query', [np.ones(5, dtype=np.float32), np.ones(3, dtype=np.float32)])
def test_search_with_wrong_dims_raises(query):
    store, _, _, _ = random_store(4, n=10)
    with pytest.raises(memsift.InvalidInputError):
        store.search(query)
    with pytest.raises(memsift.InvalidInputError):
        store.search_batch(query.reshape(1, -1))


@pytest.mark.parametrize(
    'ids',
    [[-1], np.array([-5], dtype=np.int64), [2.7], np.array([1.5])],
    ids=['neg-list', 'neg-int64', 'float-list', 'float-array'],
)
def test_ids_must_be_non_negative_integers(ids):
    store = memsift.VectorStore(3)
    with pytest.raises(memsift.InvalidInputError):
        store.add(ids, np.ones((1, 3), dtype=np.float32))
    assert len(store) == 0


def test_contains_with_an_impossible_id_is_false():
    store, _, _, _ = random_store(3, n=5)
    assert -1 not in store
    assert 2**64 not in store


@pytest.mark.parametrize('bad', [np.nan, np.inf, -np.inf])
def test_non_finite_vectors_raise(bad):
    store = memsift.VectorStore(3)
    vectors = np.ones((2, 3), dtype=np.float32)
    vectors[1, 2] = bad
    with pytest.raises(memsift.InvalidInputError):
        store.add([1, 2], vectors)
    assert len(store) == 0


@pytest.mark.parametrize('kwargs', [{'metric': 'l2'}, {'dtype': 'f64'}])
def test_unknown_metric_or_dtype_raises(kwargs):
    with pytest.raises(memsift.InvalidInputError):
        memsift.VectorStore(4, **kwargs)


# ---------------------------------------------------------------- ANN (HNSW)


def clustered_vectors(rng, n, dims=64, clusters=40, rank=12):
    """Points near ``clusters`` centers with low-rank spread, like real embeddings."""
    centers = rng.standard_normal((clusters, dims)).astype(np.float32)
    basis = rng.standard_normal((rank, dims)).astype(np.float32) * 0.35
    labels = rng.integers(0, clusters, size=n)
    spread = rng.standard_normal((n, rank)).astype(np.float32) @ basis
    noise = rng.standard_normal((n, dims)).astype(np.float32) * 0.02
    return centers, basis, (centers[labels] + spread + noise).astype(np.float32)


@pytest.fixture(scope='module')
def ann_store():
    rng = np.random.default_rng(11)
    centers, basis, rows = clustered_vectors(rng, 20_000)
    ids = np.arange(10_000, 30_000, dtype=np.uint64)
    store = memsift.VectorStore(64, ann_threshold=1000)
    store.add(ids, rows)
    labels = rng.integers(0, len(centers), size=100)
    queries = centers[labels] + rng.standard_normal((100, basis.shape[0])).astype(np.float32) @ basis
    queries += rng.standard_normal(queries.shape).astype(np.float32) * 0.02
    return store, ids, queries.astype(np.float32)


def test_ann_is_inactive_below_threshold_and_active_above():
    small = memsift.VectorStore(8, ann_threshold=1000)
    small.add(np.arange(10), np.ones((10, 8), dtype=np.float32))
    assert small.ann_active is False


def test_ann_recall_at_10_against_exact_search(ann_store):
    store, _, queries = ann_store
    assert store.ann_active is True
    recalls = []
    for query in queries:
        ann_ids, ann_scores = store.search(query, k=10)
        exact_ids, _ = store.search(query, k=10, exact=True)
        assert len(ann_ids) == 10
        assert np.all(np.diff(ann_scores) <= 1e-6)
        recalls.append(len(set(ann_ids.tolist()) & set(exact_ids.tolist())) / 10)
    assert np.mean(recalls) >= 0.95, f'mean recall@10 {np.mean(recalls):.3f}'


def test_ann_scores_equal_exact_scores_for_the_same_ids(ann_store):
    store, _, queries = ann_store
    ann_ids, ann_scores = store.search(queries[0], k=10)
    exact_ids, exact_scores = store.search(queries[0], k=10_000, exact=True)
    exact_by_id = dict(zip(exact_ids.tolist(), exact_scores.tolist()))
    np.testing.assert_allclose(ann_scores, [exact_by_id[i] for i in ann_ids.tolist()], rtol=1e-4, atol=1e-5)


def test_ann_search_batch_equals_ann_search(ann_store):
    store, _, queries = ann_store
    for query, (batch_ids, _) in zip(queries[:5], store.search_batch(queries[:5], k=10)):
        single_ids, _ = store.search(query, k=10)
        assert set(batch_ids.tolist()) == set(single_ids.tolist())


def test_ann_results_never_contain_removed_ids():
    rng = np.random.default_rng(12)
    _, _, rows = clustered_vectors(rng, 5_000)
    ids = np.arange(5_000, dtype=np.uint64)
    store = memsift.VectorStore(64, ann_threshold=1000)
    store.add(ids, rows)
    queries = rows[rng.choice(5_000, size=50, replace=False)]

    removed = set()
    for query in queries:
        exact_ids, _ = store.search(query, k=10, exact=True)
        removed.update(exact_ids.tolist())
    assert store.remove(sorted(removed)) == len(removed)
    assert store.ann_active is True
    assert len(store) == 5_000 - len(removed)

    for query in queries:
        ann_ids, _ = store.search(query, k=10)
        assert len(ann_ids) == 10
        assert not removed & set(ann_ids.tolist())
    for ann_ids, _ in store.search_batch(queries, k=10):
        assert not removed & set(ann_ids.tolist())


def test_concurrent_searches_while_another_thread_adds_and_removes():
    """Readers and a writer share one store: no error, no deadlock, only ids that were ever added come back."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(7)
    dims = 32
    store = memsift.VectorStore(dims, ann_threshold=1500)  # the writer crosses the HNSW threshold mid-run
    store.add(np.arange(500, dtype=np.uint64), rng.standard_normal((500, dims)).astype(np.float32))
    queries = rng.standard_normal((200, dims)).astype(np.float32)

    def writer():
        for batch in range(10):
            ids = np.arange(500 + batch * 200, 700 + batch * 200, dtype=np.uint64)
            store.add(ids, rng.standard_normal((200, dims)).astype(np.float32))
            store.remove(ids[:50])

    def reader(q):
        ids, scores = store.search(q, k=10)
        assert len(ids) == len(scores) <= 10
        assert np.all(ids < 2500)
        assert np.all(np.diff(scores) <= 1e-6)
        return len(ids)

    with ThreadPoolExecutor(max_workers=8) as pool:
        written = pool.submit(writer)
        counts = list(pool.map(reader, queries))
        written.result(timeout=120)
    assert all(c == 10 for c in counts)
    assert len(store) == 500 + 10 * 150
    assert store.ann_active
    removed = [500 + b * 200 + i for b in range(10) for i in range(50)]
    assert not any(i in store for i in removed)


def test_repeated_id_in_one_add_keeps_the_last_vector_with_hnsw_active():
    store = memsift.VectorStore(4, ann_threshold=1)
    store.add([1, 2], np.eye(4, dtype=np.float32)[:2])
    assert store.ann_active
    store.add([3, 3], np.array([[0, 0, 1, 0], [0, 0, 0, 1]], dtype=np.float32))
    ids, scores = store.search(np.array([0, 0, 0, 1], dtype=np.float32), k=1)
    assert ids.tolist() == [3] and scores[0] == pytest.approx(1.0)
    assert len(store) == 3


def u4_store(rng, n, dims=256, **kwargs):
    """An i8 store ranking with 4-bit codes first, over clustered vectors, and queries near its clusters."""
    centers, basis, rows = clustered_vectors(rng, n, dims=dims, clusters=60, rank=24)
    store = memsift.VectorStore(dims, i8_from=1, u4_from=1000, **kwargs)
    store.add(np.arange(n, dtype=np.uint64), rows)
    labels = rng.integers(0, len(centers), size=60)
    queries = centers[labels] + rng.standard_normal((60, basis.shape[0])).astype(np.float32) @ basis
    return store, rows, queries.astype(np.float32)


def assert_answers_as_the_exact_scan(store, queries, k):
    """The search's top ``k`` holds the exact scan's (up to ties at the k-th score), with the exact scores."""
    for query in queries:
        ids, scores = store.search(query, k=k)
        exact_ids, exact_scores = store.search(query, k=k, exact=True)
        assert len(ids) == k
        assert scores[-1] >= exact_scores[-1] - 1e-6, 'a true top-k row was ranked out'
        exact_by_id = dict(zip(*store.search(query, k=len(store), exact=True)))
        np.testing.assert_allclose(scores, [exact_by_id[i] for i in ids.tolist()], rtol=1e-5, atol=1e-6)


def test_four_bit_codes_rank_first_and_the_answer_is_the_exact_scans():
    rng = np.random.default_rng(21)
    store, _, queries = u4_store(rng, 24_000)
    assert (store.dtype, store.u4_active, store.ann_active) == ('i8', True, False)
    assert_answers_as_the_exact_scan(store, queries, 10)
    assert_answers_as_the_exact_scan(store, queries[:10], 200)
    for query, (batch_ids, _) in zip(queries[:5], store.search_batch(queries[:5], k=10)):
        assert batch_ids.tolist() == store.search(query, k=10)[0].tolist()


def test_four_bit_codes_follow_adds_replacements_and_removals(tmp_path):
    rng = np.random.default_rng(22)
    store, rows, queries = u4_store(rng, 12_000)
    # Replaced rows are found by their new vectors, removed ones never again, added ones by their vectors.
    replaced = np.arange(0, 12_000, 7, dtype=np.uint64)
    store.add(replaced, -rows[replaced.astype(np.int64)])
    removed = np.arange(3, 12_000, 5, dtype=np.uint64)
    store.remove(removed)
    added = np.arange(50_000, 53_000, dtype=np.uint64)
    store.add(added, rows[:3_000] + 0.1)
    assert store.u4_active
    for row_id, vector in [(int(replaced[1]), -rows[7]), (50_010, rows[10] + 0.1)]:
        ids, scores = store.search(vector, k=1)
        assert ids.tolist() == [row_id] and scores[0] == pytest.approx(1.0, abs=0.02)
    gone = set(removed.tolist())
    for query in queries:
        assert not gone & set(store.search(query, k=50)[0].tolist())
    assert_answers_as_the_exact_scan(store, queries, 10)
    # The codes are made again from the saved vectors: the loaded store answers the same.
    store.save(tmp_path / 'v.bin')
    loaded, _ = memsift.VectorStore.load(tmp_path / 'v.bin', i8_from=1, u4_from=1000)
    assert loaded.u4_active
    for query in queries[:10]:
        assert loaded.search(query, k=10)[0].tolist() == store.search(query, k=10)[0].tolist()


def test_four_bit_codes_start_at_u4_from_and_stop_under_half_of_it():
    rng = np.random.default_rng(23)
    _, _, rows = clustered_vectors(rng, 2_000)
    store = memsift.VectorStore(64, i8_from=1, u4_from=1_000)
    store.add(np.arange(999), rows[:999])
    assert not store.u4_active
    store.add([999], rows[999:1000])
    assert store.u4_active
    store.remove(np.arange(400))
    assert store.u4_active, 'kept between half of u4_from and u4_from'
    store.remove(np.arange(400, 600))
    assert not store.u4_active
    assert not memsift.VectorStore(64, u4_from=1).u4_active, 'only an i8 store keeps codes'


def test_one_bit_codes_rank_before_the_four_bit_ones_from_250k_vectors_and_the_answer_is_the_exact_scans():
    rng = np.random.default_rng(25)
    store, rows, queries = u4_store(rng, 260_000, dims=64)
    shuffles = memsift._core.simd_kernels() in ('avx2', 'avx512')
    assert store.one_bit_active == shuffles, 'kept where the CPU has a byte-shuffle kernel'
    assert_answers_as_the_exact_scan(store, queries[:20], 10)
    # Replaced and added rows are ranked by their new codes; a row moved by a removal keeps its own.
    store.add(np.arange(0, 1_000, dtype=np.uint64), -rows[:1_000])
    store.remove(np.arange(1_000, 2_000))
    for row_id, vector in [(10, -rows[10]), (259_999, rows[259_999])]:
        assert store.search(vector, k=1)[0].tolist() == [row_id]
    assert_answers_as_the_exact_scan(store, queries[20:30], 10)
    store.remove(np.arange(2_000, 140_000))
    assert not store.one_bit_active, 'dropped under half of 250k'
    assert store.u4_active


def test_a_row_far_outside_the_codes_range_is_still_found():
    # As a note on a new topic would be, added after the codes were fitted: a dimension where one row in twenty
    # reaches 0.5 and every other stays near 0, so its codes top out at 0.5, which well over 1,000 rows share; a
    # row added later with 1.0 there is clamped to 0.5 and tied with all of them by its codes.
    rng = np.random.default_rng(24)
    n, dims = 24_000, 128
    rows = rng.standard_normal((n, dims)).astype(np.float32) * 0.05
    rows[rng.random(n) < 0.05, 7] = 0.5
    store = memsift.VectorStore(dims, metric='dot', i8_from=1, u4_from=1000)
    store.add(np.arange(n), rows)
    marker = np.zeros(dims, dtype=np.float32)
    marker[7] = 1.0
    store.add([n], marker[None, :])
    assert store.u4_active
    ids, _ = store.search(marker, k=5)
    assert ids[0] == n
    assert ids.tolist() == store.search(marker, k=5, exact=True)[0].tolist()
