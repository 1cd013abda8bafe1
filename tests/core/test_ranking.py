"""Property tests for memsift's ranking helpers (fusion, MMR, temporal decay) against plain Python references."""

import math
import re
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memsift

# ---------------------------------------------------------------- references


def clamp(x, lo, hi):
    return min(max(x, lo), hi)


def ref_bm25_score_to_unit(s):
    if not math.isfinite(s):
        return 0.001
    if s <= 0:
        return 0.0
    return s / (1 + s)


def set_jaccard(a, b):
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def ref_jaccard(a, b):
    return set_jaccard(set(memsift.tokenize(a)), set(memsift.tokenize(b)))


def mmr_value(lam, rel, max_sim):
    return lam * rel - (1 - lam) * max_sim


def relevances(scores):
    lo, hi = min(scores), max(scores)
    if hi == lo:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]


def ref_mmr_greedy(scores, lambda_, similarity):
    n = len(scores)
    if n <= 1:
        return list(range(n))
    lam = clamp(lambda_, 0.0, 1.0)
    if lam == 1:
        return sorted(range(n), key=lambda i: scores[i], reverse=True)
    rel = relevances(scores)
    selected = []
    remaining = list(range(n))
    while remaining:
        best, best_mmr = None, -math.inf
        for c in remaining:
            # OpenClaw starts the running max at 0, so negative similarities never reward diversity.
            max_sim = max([0.0] + [similarity(c, s) for s in selected])
            m = mmr_value(lam, rel[c], max_sim)
            if m > best_mmr or (m == best_mmr and scores[c] > (scores[best] if best is not None else -math.inf)):
                best, best_mmr = c, m
        selected.append(best)
        remaining.remove(best)
    return selected


def ref_mmr(scores, texts, lambda_=0.7):
    token_sets = [set(memsift.tokenize(t)) for t in texts]
    return ref_mmr_greedy(scores, lambda_, lambda i, j: set_jaccard(token_sets[i], token_sets[j]))


def ref_decay_multiplier(age, hl):
    if not math.isfinite(hl) or hl <= 0:
        return 1.0
    age = max(0.0, age)
    if not math.isfinite(age) or age == 0:
        return 1.0
    return math.exp(-(math.log(2) / hl) * age)


# JS-style: \d is ASCII only, $ is the very end of the string.
DATED_PATH = re.compile(r'(?:^|/)memory/(?:[^/]+/)*(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md\Z', re.ASCII)


def normalize_path(path):
    p = path.replace('\\', '/')
    if p.startswith('./'):
        p = p[2:]
    return p


def ref_memory_date(path):
    m = DATED_PATH.search(normalize_path(path))
    if m is None:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def ref_is_evergreen(path):
    p = normalize_path(path)
    if p in ('MEMORY.md', 'memory.md'):
        return True
    return p.startswith('memory/') and ref_memory_date(path) is None


EPOCH = date(1970, 1, 1)


def ref_apply_temporal_decay(scores, paths, sources, mtimes, now, half_life_days=30.0):
    out = []
    for score, path, source, mtime in zip(scores, paths, sources, mtimes):
        d = ref_memory_date(path)
        if d is not None:
            ts = (d - EPOCH).days * 86400.0
        elif source == 'memory' and ref_is_evergreen(path):
            out.append(score)
            continue
        elif mtime is not None and math.isfinite(mtime):
            ts = mtime
        else:
            out.append(score)
            continue
        age_days = max(0.0, now - ts) / 86400.0
        out.append(score * ref_decay_multiplier(age_days, half_life_days))
    return out


def close(a, b):
    # A NaN on either side must be matched by a NaN on the other.
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


# ---------------------------------------------------------------- strategies

IDS = st.one_of(st.integers(0, 12), st.integers(0, 2**64 - 1))
WEIGHT = st.one_of(st.floats(-1.0, 2.0), st.sampled_from([0.0, 1.0, 0.7, 0.3, 0.5]))

VOCAB = ['rust', 'python', 'memory', 'search', 'running', 'runs', 'the', 'a', '视频', '下载', 'BBDown', 'v2.3.1', '']
TEXTS = st.lists(st.sampled_from(VOCAB), max_size=5).map(' '.join)
GRID_SCORE = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 2.0, -1.0])
ANY_SCORE = st.floats(-1e6, 1e6)
LAMBDA = st.one_of(st.floats(-0.5, 1.5), st.sampled_from([0.0, 0.5, 0.7, 1.0]))


def path_component():
    return st.sampled_from(
        ['memory', 'MEMORY', 'Memory', 'notes', 'topics', '2026', 'a b', '.', '..', 'xmemory', 'x', '']
    )


@st.composite
def date_file_name(draw):
    year = draw(st.one_of(st.integers(1970, 2100), st.integers(0, 9999)))
    month = draw(st.integers(0, 14))
    day = draw(st.integers(0, 32))
    stamp = draw(
        st.one_of(
            st.just(f'{year:04d}-{month:02d}-{day:02d}'),
            st.sampled_from(['٢٠٢٦-01-15', '２０２６-01-15', '2026-1-15', '20260115', '12026-01-15']),
        )
    )
    suffix = draw(st.sampled_from(['', '', '-standup', '-', '-a b', '-2026-01-01']))
    ext = draw(st.sampled_from(['.md', '.md', '.MD', '.txt', '.md.bak', '', '.md\n']))
    return stamp + suffix + ext


@st.composite
def memory_paths(draw):
    prefix = draw(st.sampled_from(['', '', './', '././', '/', '.\\', 'C:\\work\\']))
    sep = draw(st.sampled_from(['/', '/', '\\']))
    dirs = draw(st.lists(path_component(), max_size=4))
    name = draw(st.one_of(date_file_name(), st.sampled_from(['MEMORY.md', 'memory.md', 'rust.md', 'notes.md'])))
    path = prefix + sep.join(dirs + [name])
    return draw(st.one_of(st.just(path), st.text(max_size=30), st.just(name)))


# ---------------------------------------------------------------- bm25_score_to_unit


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_bm25_score_to_unit_matches_reference(score):
    assert memsift.bm25_score_to_unit(score) == ref_bm25_score_to_unit(score)


def test_bm25_score_to_unit_examples():
    assert memsift.bm25_score_to_unit(1.0) == 0.5
    assert memsift.bm25_score_to_unit(3.0) == 0.75
    assert memsift.bm25_score_to_unit(0.0) == 0.0
    assert memsift.bm25_score_to_unit(-2.0) == 0.0
    assert memsift.bm25_score_to_unit(math.nan) == 0.001
    assert memsift.bm25_score_to_unit(math.inf) == 0.001
    assert memsift.bm25_score_to_unit(-math.inf) == 0.001


# ---------------------------------------------------------------- the hybrid merge (rank_candidates)

LEG_COSINE = st.floats(0.0, 1.0)  # the vector leg clamps cosine at 0
LEG_BM25 = st.floats(0.01, 50.0)  # BM25 hits are positive


def product_merge(vector, keyword, vector_weight, text_weight):
    """The product's hybrid merge alone: the ranking stage without decay, MMR, tiers or a floor."""
    entries = {}
    for id_, cosine in vector:
        entries[id_] = [cosine, 0.0]
    for id_, raw in keyword:
        entries.setdefault(id_, [0.0, 0.0])[1] = raw
    ids = list(entries)
    order, scores, _, _ = memsift._core.rank_candidates(
        ids,
        [entries[i][0] for i in ids],
        [entries[i][1] for i in ids],
        [0.0] * len(ids),
        [0] * len(ids),
        ['notes.md'] * len(ids),
        ['memory'] * len(ids),
        [None] * len(ids),
        [0] * len(ids),
        mode='hybrid',
        query='',
        keyword_best=max((raw for _, raw in keyword), default=0.0),
        vector_weight=vector_weight,
        text_weight=text_weight,
        decay=None,
        mmr=None,
        min_score=0.0,
        limit=len(ids),
    )
    return [(ids[i], score) for i, score in zip(order, scores)]


def ref_hybrid_merge(vector, keyword, vector_weight, text_weight):
    """Union, BM25 scaled by the query's best match, weighted sum; best first, ties by chunk id."""
    vw, tw = clamp(vector_weight, 0.0, 1.0), clamp(text_weight, 0.0, 1.0)
    vw, tw = (0.7, 0.3) if vw + tw == 0 else (vw / (vw + tw), tw / (vw + tw))
    best = max((raw for _, raw in keyword), default=0.0)
    entries = {}
    for id_, cosine in vector:
        entries[id_] = [cosine, 0.0]
    for id_, raw in keyword:
        entries.setdefault(id_, [0.0, 0.0])[1] = raw
    rows = [(id_, vw * v + tw * (k / best if k > 0 else 0.0)) for id_, (v, k) in entries.items()]
    return sorted(rows, key=lambda row: (-row[1], row[0]))


@given(
    st.lists(st.tuples(IDS, LEG_COSINE), max_size=10), st.lists(st.tuples(IDS, LEG_BM25), max_size=10), WEIGHT, WEIGHT
)
def test_hybrid_merge_matches_reference(vector, keyword, vw, tw):
    got, want = product_merge(vector, keyword, vw, tw), ref_hybrid_merge(vector, keyword, vw, tw)
    assert [id_ for id_, _ in got] == [id_ for id_, _ in want]
    assert [score for _, score in got] == pytest.approx([score for _, score in want])


def test_hybrid_merge_keeps_keyword_only_hits():
    merged = dict(product_merge([(1, 0.9)], [(2, 3.0), (1, 1.0)], 0.7, 0.3))
    assert merged == pytest.approx({1: 0.7 * 0.9 + 0.3 * (1.0 / 3.0), 2: 0.3 * 1.0})


def test_normalize_weights():
    assert memsift._core.normalize_weights(2.0, 2.0) == (0.5, 0.5)
    assert memsift._core.normalize_weights(0.0, 0.0) == (0.7, 0.3)
    assert memsift._core.normalize_weights(-1.0, -3.0) == (0.7, 0.3)
    assert memsift._core.normalize_weights(1.5, 0.0) == (1.0, 0.0)


@pytest.mark.parametrize('bad', [math.nan, math.inf, -math.inf])
def test_non_finite_weights_raise(bad):
    with pytest.raises(memsift.InvalidInputError):
        memsift._core.normalize_weights(bad, 0.3)
    with pytest.raises(memsift.InvalidInputError):
        memsift._core.normalize_weights(0.7, bad)


# ---------------------------------------------------------------- jaccard


@given(TEXTS, TEXTS)
def test_jaccard_matches_reference(a, b):
    assert memsift.jaccard(a, b) == ref_jaccard(a, b)


@given(TEXTS, TEXTS)
def test_jaccard_is_symmetric_and_bounded(a, b):
    j = memsift.jaccard(a, b)
    assert j == memsift.jaccard(b, a)
    assert 0.0 <= j <= 1.0
    assert memsift.jaccard(a, a) == 1.0


def test_jaccard_examples():
    assert memsift.jaccard('', '') == 1.0
    assert memsift.jaccard('rust', '') == 0.0
    assert memsift.jaccard('rust python', 'rust memory') == 1 / 3
    assert memsift.jaccard('rust', 'python') == 0.0


# ---------------------------------------------------------------- mmr (text)


@given(
    st.integers(0, 8).flatmap(
        lambda n: st.tuples(st.lists(GRID_SCORE, min_size=n, max_size=n), st.lists(TEXTS, min_size=n, max_size=n))
    ),
    LAMBDA,
)
def test_mmr_matches_reference_on_tied_scores(data, lam):
    scores, texts = data
    assert memsift.mmr(scores, texts, lam) == ref_mmr(scores, texts, lam)


@given(
    st.integers(0, 8).flatmap(
        lambda n: st.tuples(st.lists(ANY_SCORE, min_size=n, max_size=n), st.lists(TEXTS, min_size=n, max_size=n))
    ),
    LAMBDA,
)
def test_mmr_matches_reference(data, lam):
    scores, texts = data
    assert memsift.mmr(scores, texts, lam) == ref_mmr(scores, texts, lam)


@given(
    st.integers(0, 8).flatmap(
        lambda n: st.tuples(st.lists(ANY_SCORE, min_size=n, max_size=n), st.lists(TEXTS, min_size=n, max_size=n))
    )
)
def test_mmr_default_lambda(data):
    scores, texts = data
    order = memsift.mmr(scores, texts)
    assert order == ref_mmr(scores, texts, 0.7)
    assert sorted(order) == list(range(len(scores)))


@given(st.lists(GRID_SCORE, max_size=8), st.sampled_from([1.0, 1.5]))
def test_mmr_lambda_one_is_stable_sort_by_score(scores, lam):
    texts = ['same text'] * len(scores)
    assert memsift.mmr(scores, texts, lam) == sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)


def test_mmr_examples():
    assert memsift.mmr([], []) == []
    assert memsift.mmr([0.3], ['x']) == [0]
    scores = [1.0, 0.99, 0.5]
    texts = ['rust memory search', 'rust memory search', 'python tokenizer']
    assert memsift.mmr(scores, texts, 0.5) == [0, 2, 1]  # the duplicate is pushed below the diverse hit
    assert memsift.mmr(scores, texts, 1.0) == [0, 1, 2]
    assert memsift.mmr([0.5, 0.5, 0.9], ['a', 'b', 'c'], 0.7) == [2, 0, 1]


# ---------------------------------------------------------------- decay_multiplier

AGE = st.one_of(st.floats(-100.0, 1e5), st.floats(allow_nan=False, allow_infinity=True))
HALF_LIFE = st.one_of(st.floats(-10.0, 1e4), st.sampled_from([0.0, math.inf, -math.inf, math.nan, 30.0]))


@given(AGE, HALF_LIFE)
def test_decay_multiplier_matches_reference(age, hl):
    assert close(memsift.decay_multiplier(age, hl), ref_decay_multiplier(age, hl))


@given(st.floats(0.0, 1e4), st.floats(0.0, 1e4), st.floats(0.1, 1e4))
def test_decay_multiplier_is_monotone_and_bounded(a, b, hl):
    lo, hi = sorted([a, b])
    m_lo, m_hi = memsift.decay_multiplier(lo, hl), memsift.decay_multiplier(hi, hl)
    assert 0.0 <= m_hi <= m_lo <= 1.0


def test_decay_multiplier_examples():
    assert close(memsift.decay_multiplier(30.0, 30.0), 0.5)
    assert close(memsift.decay_multiplier(60.0, 30.0), 0.25)
    assert memsift.decay_multiplier(0.0, 30.0) == 1.0
    assert memsift.decay_multiplier(-5.0, 30.0) == 1.0
    assert memsift.decay_multiplier(30.0, 0.0) == 1.0
    assert memsift.decay_multiplier(30.0, -1.0) == 1.0
    assert memsift.decay_multiplier(30.0, math.inf) == 1.0
    assert memsift.decay_multiplier(30.0, math.nan) == 1.0
    assert memsift.decay_multiplier(math.inf, 30.0) == 1.0


# ---------------------------------------------------------------- memory paths


@given(memory_paths())
def test_memory_date_from_path_matches_reference(path):
    assert memsift.memory_date_from_path(path) == ref_memory_date(path)


@given(memory_paths())
def test_is_evergreen_path_matches_reference(path):
    assert memsift.is_evergreen_path(path) is ref_is_evergreen(path)


@pytest.mark.parametrize(
    ('path', 'expected'),
    [
        ('memory/2026-01-15.md', date(2026, 1, 15)),
        ('./memory/2026-01-15.md', date(2026, 1, 15)),
        ('memory\\2026-01-15.md', date(2026, 1, 15)),
        ('memory/2026/notes/2026-01-15-standup.md', date(2026, 1, 15)),
        ('workspace/memory/2024-02-29.md', date(2024, 2, 29)),
        ('notes/2026-01-15.md', None),
        ('memory/2026-02-30.md', None),
        ('memory/2026-13-01.md', None),
        ('memory/2026-01-15.txt', None),
        ('memory/2026-01-15.md.bak', None),
        ('memory/2026-01-15.md\n', None),
        ('memory/x2026-01-15.md', None),
        ('xmemory/2026-01-15.md', None),
        ('memory/topics/rust.md', None),
        ('MEMORY.md', None),
        ('memory/\u0662\u0660\u0662\u0666-01-15.md', None),  # Arabic-Indic digits: \d is ASCII-only
        ('memory/\uff12\uff10\uff12\uff16-01-15.md', None),  # full-width digits
        ('memory/0000-01-01.md', None),  # year 0 is not a datetime.date
        ('memory/9999-12-31.md', date(9999, 12, 31)),
        ('../memory/2026-01-15.md', date(2026, 1, 15)),
        ('memory/2026-01-15-.md', None),
        ('memory/2026-01-15-a/b.md', None),
        ('memory//2026-01-15.md', None),  # the regex needs non-empty folder names after memory/
        ('x//memory/2026-01-15.md', date(2026, 1, 15)),
    ],
)
def test_memory_date_from_path_examples(path, expected):
    assert memsift.memory_date_from_path(path) == expected


@pytest.mark.parametrize(
    ('path', 'expected'),
    [
        ('MEMORY.md', True),
        ('memory.md', True),
        ('./MEMORY.md', True),
        ('memory/topics/rust.md', True),
        ('memory\\topics\\rust.md', True),
        ('memory/2026-01-15.md', False),
        ('memory/2026-02-30.md', True),
        ('notes/2026-01-15.md', False),
        ('notes/MEMORY.md', False),
        ('Memory.md', False),
        ('docs/memory/topics.md', False),
        ('././MEMORY.md', False),  # only one leading './' is stripped
        ('../memory/topics/rust.md', False),
        ('.\\memory\\topics\\rust.md', True),
        ('memory/', True),
    ],
)
def test_is_evergreen_path_examples(path, expected):
    assert memsift.is_evergreen_path(path) is expected


# ---------------------------------------------------------------- apply_temporal_decay

SOURCES = st.sampled_from(['memory', 'sessions', 'other'])
MTIME = st.one_of(st.none(), st.floats(0.0, 4e9), st.sampled_from([math.nan, math.inf, -math.inf]))
NOW = st.one_of(st.floats(0.0, 4e9), st.just(1_771_027_200.0))


@st.composite
def decay_inputs(draw):
    n = draw(st.integers(0, 8))
    scores = draw(st.lists(st.floats(-10.0, 10.0), min_size=n, max_size=n))
    paths = draw(st.lists(memory_paths(), min_size=n, max_size=n))
    sources = draw(st.lists(SOURCES, min_size=n, max_size=n))
    mtimes = draw(st.lists(MTIME, min_size=n, max_size=n))
    return scores, paths, sources, mtimes


@given(decay_inputs(), NOW, HALF_LIFE)
def test_apply_temporal_decay_matches_reference(inputs, now, hl):
    scores, paths, sources, mtimes = inputs
    got = memsift.apply_temporal_decay(scores, paths, sources, mtimes, now, hl)
    expected = ref_apply_temporal_decay(scores, paths, sources, mtimes, now, hl)
    assert len(got) == len(expected)
    assert all(close(g, e) for g, e in zip(got, expected)), (got, expected)


@given(decay_inputs(), NOW)
def test_apply_temporal_decay_default_half_life(inputs, now):
    scores, paths, sources, mtimes = inputs
    got = memsift.apply_temporal_decay(scores, paths, sources, mtimes, now)
    expected = ref_apply_temporal_decay(scores, paths, sources, mtimes, now, 30.0)
    assert all(close(g, e) for g, e in zip(got, expected)), (got, expected)


DAY = 86400.0
NOW_2026_02_14 = (date(2026, 2, 14) - EPOCH).days * DAY


def test_apply_temporal_decay_examples():
    got = memsift.apply_temporal_decay(
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        ['memory/2026-01-15.md', 'MEMORY.md', 'memory/topics/rust.md', 'notes/a.md', 'notes/b.md',
         'memory/topics/rust.md', 'memory/2026/notes/2026-01-15-standup.md'],
        ['memory', 'memory', 'memory', 'memory', 'sessions', 'sessions', 'sessions'],
        [None, NOW_2026_02_14 - 90 * DAY, NOW_2026_02_14 - 90 * DAY, NOW_2026_02_14 - 60 * DAY, None,
         NOW_2026_02_14 - 30 * DAY, NOW_2026_02_14],
        NOW_2026_02_14,
        30.0,
    )  # fmt: skip
    expected = [0.5, 1.0, 1.0, 0.25, 1.0, 0.5, 0.5]
    assert all(close(g, e) for g, e in zip(got, expected)), got
    assert len(got) == len(expected)


def test_apply_temporal_decay_future_dates_do_not_boost():
    got = memsift.apply_temporal_decay([2.0], ['notes/a.md'], ['sessions'], [NOW_2026_02_14 + 10 * DAY], NOW_2026_02_14)
    assert got == [2.0]


@pytest.mark.parametrize(
    'args',
    [
        ([1.0, 2.0], ['a.md'], ['memory', 'memory'], [None, None]),
        ([1.0], ['a.md'], ['memory', 'memory'], [None]),
        ([1.0], ['a.md'], ['memory'], [None, None]),
        ([], ['a.md'], [], []),
    ],
)
def test_apply_temporal_decay_mismatched_lengths_raise(args):
    with pytest.raises(memsift.InvalidInputError):
        memsift.apply_temporal_decay(*args, NOW_2026_02_14)


def test_fuse_messages_scales_both_legs_and_checks_its_lists():
    from memsift._core import fuse_messages

    # The vector leg's narrow band of cosines still decides between two keyword hits of equal weight.
    fused = fuse_messages([1, 2, 3], ['a', 'b', 'c'], [2.0, 2.0, None], [0.61, 0.66, 0.60], 0.7, 0.3)
    assert [i for i, _ in fused] == [2, 1]  # 3: the weakest cosine and no keyword hit scores 0, left out
    # A second message of the same session lifts its best one above an equally good lone one.
    fused = fuse_messages([1, 2, 3], ['a', 'a', 'b'], [3.0, 1.0, 3.0], [None, None, None], 0.7, 0.3)
    assert [i for i, _ in fused] == [1, 3, 2]
    with pytest.raises(memsift.InvalidInputError, match='3 items'):
        fuse_messages([1, 2, 3], ['a'], [1.0, 1.0, 1.0], [None, None, None], 0.7, 0.3)
    assert fuse_messages([], [], [], [], 0.7, 0.3) == []
    assert fuse_messages([1], ['a'], [float('nan')], [float('inf')], 0.7, 0.3) == []
