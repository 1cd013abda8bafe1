"""One hit per fact (``query.dedupe``, ``memsift.search.dedupe``): copies of a chunk fold into the best-ranked one's
``alsoIn``, different facts never do, and the freed slots refill from the results ranked below."""

from __future__ import annotations

import pytest
from conftest import open_index, write

from memsift.config import load_config
from memsift.index.records import ChunkRow
from memsift.search.dedupe import (
    NEAR_DUPLICATE,
    collapse,
    fingerprint,
    normalize,
    ranked_for,
    same_fact,
    shingles,
    similarity,
)

FACT = 'The staging database password rotates every Friday at 17:00.'
OTHER = 'Grafana alerts for the staging database go to the ops channel.'


def three_daily_notes(ws):
    """One fact copied into three daily notes: as it was, restyled (another bullet, emphasis), and reordered."""
    write(ws / 'memory' / '2026-11-20.md', f'# 2026-11-20\n\n- {FACT}\n- {OTHER}\n')
    write(ws / 'memory' / '2026-11-21.md', f'## 2026-11-21\n\n* **{FACT[:-1]}**\n* {OTHER}\n')
    write(ws / 'memory' / '2026-11-22.md', f'# 2026-11-22\n\n- {OTHER}\n- {FACT}\n')  # the list reordered


def places(hit):
    return [hit.path] + [place['path'] for place in hit.also_in]


# ---------------------------------------------------------------- the rule


def test_normalize_drops_decoration_case_spacing_list_numbers_and_date_headings():
    assert normalize('# 2026-11-20\n\n1. **Deploy**  on _Tuesday_,\n   - (9:30)!') == 'deploy on tuesday\n9:30'
    assert normalize('## Decisions\n> Keep `snake_case` and v2.3.1.') == 'decisions\nkeep snake_case and v2.3.1'
    assert normalize('ＤＥＰＬＯＹ Straße') == normalize('deploy STRASSE')  # NFKC and casefold
    assert normalize('# Deploy 2026') == 'deploy 2026'  # a heading with words stays


def test_shingles_stay_within_a_line_so_a_reordered_list_keeps_them():
    assert shingles('a b c d') == {('a', 'b', 'c'), ('b', 'c', 'd')}
    assert shingles('- one two\n- three four five') == shingles('- three four five\n- one two')
    assert similarity(shingles('a b c d'), shingles('a b c e')) == pytest.approx(1 / 3)
    assert similarity(frozenset(), frozenset()) == 1.0


def test_same_fact_needs_near_identical_words_and_the_same_numbers():
    long = ' '.join(f'word{i}x' if i % 7 else 'filler' for i in range(80)).replace('word', 'w')
    typo = long.replace('filler', 'fillre', 1)
    assert similarity(fingerprint(long).shingles, fingerprint(typo).shingles) >= NEAR_DUPLICATE
    assert same_fact(fingerprint(long), fingerprint(typo))  # one word in ~80: the same note
    short = 'Deploy the billing service on Tuesday after the freeze.'
    assert not same_fact(fingerprint(short), fingerprint(short.replace('billing', 'search')))  # another fact
    assert not same_fact(fingerprint(long + ' at 9:30'), fingerprint(long + ' at 10:30'))  # numbers differ
    assert same_fact(fingerprint(f'# 2026-11-20\n- {FACT}'), fingerprint(f'## 2026-12-01\n* *{FACT}*'))


def row(i, text, path=None):
    return ChunkRow(i, path or f'memory/{i}.md', 'memory', 1, 2, '', text)


def test_collapse_folds_later_copies_into_the_first_and_refills_from_below():
    ranked = [(row(1, 'alpha fact'), 0.9), (row(2, 'beta fact'), 0.8), (row(3, '**Alpha** fact!'), 0.7)]
    ranked += [(row(4, 'gamma fact'), 0.6), (row(5, 'alpha  fact'), 0.5), (row(6, 'delta fact'), 0.4)]
    debug: dict = {}
    kept, also_in = collapse(ranked, 3, debug)
    assert [r.id for r, _ in kept] == [1, 2, 4] and debug == {'collapsed': 1}  # stops once 3 are kept
    assert also_in == {1: [{'path': 'memory/3.md', 'startLine': 1, 'endLine': 2}]}
    kept, also_in = collapse(ranked, 6, debug)
    assert [r.id for r, _ in kept] == [1, 2, 4, 6] and [p['path'] for p in also_in[1]] == ['memory/3.md', 'memory/5.md']
    assert debug['collapsed'] == 2 and ranked_for(6) >= 12


# ---------------------------------------------------------------- in a search


def test_a_fact_in_three_daily_notes_is_one_hit_listing_the_others(tmp_path):
    ws = tmp_path / 'ws'
    three_daily_notes(ws)
    write(ws / 'MEMORY.md', '# Facts\n\nThe staging database runs PostgreSQL 16 on two replicas.\n')
    with open_index(tmp_path) as index:
        result = index.search('staging database password rotates', min_score=0)
    [hit] = [hit for hit in result.results if hit.path.startswith('memory/2026')]
    assert sorted(places(hit)) == ['memory/2026-11-20.md', 'memory/2026-11-21.md', 'memory/2026-11-22.md']
    assert [set(place) for place in hit.also_in] == [{'path', 'startLine', 'endLine'}] * 2
    assert hit.to_dict()['alsoIn'] == list(hit.also_in) and result.debug['collapsed'] == 2
    assert [h.path for h in result.results] == [hit.path, 'MEMORY.md']
    assert 'alsoIn' not in result.to_dict()['results'][1]  # no copies: OpenClaw's exact shape


def test_different_facts_with_the_same_boilerplate_stay_apart(tmp_path):
    ws = tmp_path / 'ws'
    template = '# 2026-11-20\n\n## Decisions\n- Deploy the {} service on Tuesday after the freeze.\n## Follow-ups\n'
    for name in ('billing', 'search', 'payments'):
        write(ws / 'memory' / f'{name}.md', template.format(name))
    write(ws / 'memory' / 'early.md', '- Standup for the deploy team moves to 9:30 on Mondays.\n')
    write(ws / 'memory' / 'late.md', '- Standup for the deploy team moves to 10:30 on Mondays.\n')
    with open_index(tmp_path) as index:
        result = index.search('deploy service Tuesday standup', min_score=0)
    assert len(result.results) == 5 and result.debug['collapsed'] == 0
    assert all(not hit.also_in for hit in result.results)


def test_the_freed_slots_refill_with_distinct_facts(tmp_path):
    ws = tmp_path / 'ws'
    for day in range(1, 4):  # two facts, each copied into three notes
        write(ws / 'memory' / f'a-{day}.md', f'# 2026-11-0{day}\nkafka consumers rebalance after a deploy\n')
        write(ws / 'memory' / f'b-{day}.md', f'# 2026-11-1{day}\nkafka topics keep seven days of data\n')
    for i in range(6):
        write(ws / 'memory' / f'c-{i}.md', f'kafka note {i}: ' + ' '.join(f'detail{i}{j}' for j in range(i + 3)))
    with open_index(tmp_path) as index:
        deduped = index.search('kafka', max_results=6, min_score=0)
    with open_index(tmp_path, query={'dedupe': False}) as index:
        plain = index.search('kafka', max_results=6, min_score=0)
    texts = [normalize(index_text(ws, hit)) for hit in deduped.results]
    assert len(deduped.results) == 6 and len(set(texts)) == 6, texts
    assert deduped.debug['collapsed'] >= 2 and sum(len(hit.also_in) for hit in deduped.results) >= 2
    # query.dedupe false: the old results, copies and all, nothing folded
    assert len(plain.results) == 6 and 'collapsed' not in plain.debug and all(not h.also_in for h in plain.results)
    assert len({normalize(index_text(ws, hit)) for hit in plain.results}) < 6
    assert deduped.results[0].path == plain.results[0].path


def index_text(ws, hit):
    return (ws / hit.path).read_text(encoding='utf-8')


def test_explain_stays_aligned_and_names_the_folded_copies(tmp_path):
    ws = tmp_path / 'ws'
    three_daily_notes(ws)
    write(ws / 'MEMORY.md', 'The staging database runs PostgreSQL 16 on two replicas.\n')
    with open_index(tmp_path) as index:
        plain = index.search('staging database password', min_score=0)
        explained = index.search('staging database password', min_score=0, explain=True)
    assert [(h.path, h.also_in, h.score) for h in explained.results] == [
        (h.path, h.also_in, h.score) for h in plain.results
    ]
    assert [hit.explain['position'] for hit in explained.results] == [1, 2]
    assert [hit.explain['score'] for hit in explained.results] == pytest.approx([h.score for h in plain.results])
    duplicates = sorted(cut['path'] for cut in explained.debug['cut'] if cut['cut'] == 'duplicate')
    assert duplicates == sorted(place['path'] for place in explained.results[0].also_in)


def test_dedupe_is_on_by_default_and_can_be_turned_off():
    assert load_config({}).query.dedupe is True
    assert load_config({'agents': {'defaults': {'memorySearch': {'query': {'dedupe': False}}}}}).query.dedupe is False
