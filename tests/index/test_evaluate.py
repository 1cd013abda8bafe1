"""`evaluate_memory` (``memsift eval``): known-item probes built from the indexed notes, run keyword-only, hybrid and
hybrid + rerank, on real temporary workspaces."""

import dataclasses

import pytest
from conftest import open_index, write

from memsift.errors import InvalidInputError
from memsift.index.evaluate import MODES, EvalReport, ModeScore, _compare, build_probes, evaluate_memory
from memsift.index.store import ChunkRow

NOTES = {
    'MEMORY.md': '# Facts\n\nPrefers tabs over spaces in every Python project.\n'
    'The deploy key lives in the shared team vault under infrastructure.\n',
    'memory/2026-11-20.md': '# 2026-11-20\n\nERR_CONN_RESET fixed with exponential backoff and jitter on retries.\n'
    'The staging database migration finished after midnight.\n',
    'memory/projects/garden.md': '---\ntitle: garden\ntags: [home]\n---\n# Garden\n\n'
    'Tomatoes need watering every second morning during July heat.\n'
    '```bash\nwater --zone tomatoes --minutes 15\n```\n',
    'memory/people/alice.md': '# Alice\n\n- Alice runs the quarterly budget review with finance.\n'
    '- Her favourite coffee order is a flat white with oat milk.\n',
    'memory/travel.md': 'Flight to Lisbon departs Friday evening from terminal two.\n'
    'Hotel booking confirmation number sits in the travel folder.\n',
    'memory/cjk.md': '视频下载工具 BBDown 的配置文件放在用户目录下面\n東京オフィスの会議は毎週火曜日の午後です\n',
}


@pytest.fixture
def notes(tmp_path):
    root = tmp_path / 'notes'
    for path, text in NOTES.items():
        write(root / path, text)
    return root


def check_metrics(score: ModeScore, probes: int) -> None:
    assert score.configured and score.ran and score.probes == probes
    for value in (score.hit_at_1, score.hit_at_5, score.mrr_at_10, score.line_hit_at_5):
        assert 0.0 <= value <= 1.0
    assert score.hit_at_1 <= score.mrr_at_10 <= score.hit_at_5 + (1 - score.hit_at_5) / 6  # ranks 6-10 add ≤ 1/6
    assert score.hit_at_5 >= score.hit_at_1 and score.hit_at_5 >= score.line_hit_at_5
    assert score.p50_ms is not None and score.p50_ms > 0


def test_keyword_only_without_a_provider(tmp_path, notes):
    with open_index(tmp_path, notes) as index:
        index.sync()
        report = evaluate_memory(index, probes=50)
    assert (report.provider, report.model, report.reranker, report.seed) == ('none', 'fts-only', None, 0)
    assert [m.mode for m in report.modes] == list(MODES)
    keyword, hybrid, reranked = report.modes
    check_metrics(keyword, len(report.probes))
    assert keyword.effective_modes == {'fts-only': len(report.probes)}
    assert keyword.hit_at_5 >= 0.5  # half-remembered sentences of six distinct notes: keywords find most
    assert not hybrid.configured and not hybrid.ran and 'no embedding provider' in hybrid.note
    assert not reranked.configured and 'query.rerank' in reranked.note
    assert report.indexed_files == report.files == len(NOTES) and report.indexed_chunks >= report.chunks
    assert 'keyword-only finds the right note first in' in report.verdict and 'provider' in report.verdict
    data = report.to_dict()
    assert data['probes'] == len(report.probes) and data['modes'][1]['hitAt1'] is None
    assert data['verdict'] == report.verdict


def test_hybrid_with_a_provider_shows_both_modes(tmp_path, notes, embedder):
    with open_index(tmp_path, notes, provider=embedder) as index:
        index.sync()
        report = evaluate_memory(index, probes=30, seed=3)
    assert (report.provider, report.model) == ('test-hash', 'hash-v1')
    keyword, hybrid, reranked = report.modes
    check_metrics(keyword, len(report.probes))
    check_metrics(hybrid, len(report.probes))
    assert hybrid.effective_modes == {'hybrid': len(report.probes)} and hybrid.note is None
    assert not reranked.ran
    assert 'hybrid' in report.verdict and 'keyword-only' in report.verdict


def test_hybrid_searches_that_ran_keyword_only_are_reported(tmp_path, notes, embedder):
    with open_index(tmp_path, notes) as index:
        index.sync()  # indexed without vectors
    with open_index(tmp_path, notes, provider=embedder) as index:
        index.config = dataclasses.replace(index.config, sync=dataclasses.replace(index.config.sync, on_search=False))
        report = evaluate_memory(index, probes=5)
    hybrid = report.mode('hybrid')
    assert hybrid.effective_modes == {'fts-only': 5} and 'memsift index' in hybrid.note


def test_probes_are_deterministic_for_a_seed_and_spread_over_files(tmp_path, notes):
    with open_index(tmp_path, notes) as index:
        index.sync()
        first = evaluate_memory(index, probes=40, seed=7).probes
        again = evaluate_memory(index, probes=40, seed=7).probes
        other = evaluate_memory(index, probes=40, seed=8).probes
        few = evaluate_memory(index, probes=4, seed=7)
    assert first == again and first != other
    assert len(few.probes) == few.files == 4  # one per file before a second from any
    for probe in first:
        assert probe.path in NOTES and probe.query
        line = NOTES[probe.path].split('\n')[probe.line - 1]
        assert not line.startswith(('---', 'title:', 'tags:', '```', 'water ')), probe  # front matter, code
        content = {w.lower() for w in line.replace('.', ' ').split()}
        if not any('\u3040' <= ch <= '\u9fff' for ch in line):
            words = probe.query.split()
            assert {w.lower() for w in words} <= content and len(words) < len(line.split()), (probe, line)


def test_cjk_notes_make_probes_of_character_pieces(tmp_path, notes):
    with open_index(tmp_path, notes) as index:
        index.sync()
        report = evaluate_memory(index, probes=200)
    cjk = [p for p in report.probes if p.path == 'memory/cjk.md']
    assert {p.line for p in cjk} <= {1, 2} and cjk
    for probe in cjk:
        line = NOTES['memory/cjk.md'].split('\n')[probe.line - 1]
        pieces = probe.query.split()
        assert all(piece in line for piece in pieces) and len(pieces) >= 2
        assert len(''.join(pieces)) < len(line) - 4  # characters were dropped
        assert not {'の', 'は', '的'} & set(probe.query)  # particles are CJK stopwords


def test_build_probes_skips_markup_short_lines_and_sentences_shared_by_files():
    shared = 'The quarterly planning offsite happens in the mountains.'
    rows = [
        ChunkRow(1, 'a.md', 'memory', 1, 6, 'h', f'---\ntitle: long front matter title here\n---\n# Hi\n{shared}\nok'),
        ChunkRow(2, 'b.md', 'memory', 1, 1, 'h', shared),
        ChunkRow(
            3, 'c.md', 'memory', 1, 4, 'h', '```\nprint the whole configuration file now\n```\n| a | table | row |'
        ),
        ChunkRow(4, 'd.md', 'memory', 10, 11, 'h', 'Notes.\nThe printer on floor three jams on thick paper.'),
        ChunkRow(5, 'e.png', 'memory', 1, 1, 'h', 'Image file: memory/photos/holiday beach sunset.png'),
    ]
    probes = build_probes(rows, 10, seed=1)
    assert [(p.path, p.line, p.chunk_id) for p in probes] == [('d.md', 11, 4)]
    assert set(probes[0].query.split()) <= {'printer', 'floor', 'three', 'jams', 'thick', 'paper'}
    assert build_probes(rows, 0) == [] and build_probes([], 5) == []


def test_an_empty_index_is_a_clear_error(tmp_path):
    (tmp_path / 'empty').mkdir()
    with open_index(tmp_path, tmp_path / 'empty') as index:
        index.sync()
        with pytest.raises(InvalidInputError, match=r'nothing to evaluate.*index them first.*memsift index'):
            evaluate_memory(index)


def test_notes_not_yet_indexed_are_the_same_error(tmp_path, notes):
    with open_index(tmp_path, notes) as index, pytest.raises(InvalidInputError, match='nothing to evaluate'):
        evaluate_memory(index)


def test_notes_with_nothing_to_probe_say_so(tmp_path):
    write(tmp_path / 'ws' / 'MEMORY.md', '# Hi\n\nok\n')
    with open_index(tmp_path) as index:
        index.sync()
        with pytest.raises(InvalidInputError, match='none of the 1 indexed chunks'):
            evaluate_memory(index)


@pytest.mark.parametrize('bad', [{'probes': 0}, {'probes': True}, {'probes': '5'}, {'seed': 1.5}, {'seed': None}])
def test_bad_arguments_are_invalid_input(tmp_path, notes, bad):
    with open_index(tmp_path, notes) as index, pytest.raises(InvalidInputError):
        evaluate_memory(index, **bad)


def reversed_relevance(request):
    """A Cohere-format reranker on 127.0.0.1 that ranks the documents it is sent in reverse."""
    count = len(request['body']['documents'])
    rows = [{'index': i, 'relevance_score': (i + 1) / (count + 1)} for i in reversed(range(count))]
    return 200, {}, {'results': rows}


def test_rerank_runs_only_in_its_own_row(tmp_path, notes, embedder, server, monkeypatch):
    server.reply = reversed_relevance
    monkeypatch.setenv('COHERE_API_KEY', 'co-test-key-1234')
    rerank = {'enabled': True, 'provider': 'cohere', 'model': 'rerank-v3.5', 'baseUrl': server.url + '/v2'}
    with open_index(tmp_path, notes, provider=embedder, query={'rerank': rerank}) as index:
        index.sync()
        report = evaluate_memory(index, probes=3)
    assert report.reranker == 'cohere/rerank-v3.5'
    assert [m.ran for m in report.modes] == [True, True, True]
    assert all(m.note is None for m in report.modes)  # every search of the rerank row was reranked
    # Only the rerank row's warm-up and 3 probes reached the reranker: keyword-only and hybrid ran without it.
    assert len(server.requests) == 4 and {r['path'] for r in server.requests} == {'/v2/rerank'}
    assert 'reranked hybrid' in report.verdict


def test_a_reranker_that_fails_is_reported_in_its_row(tmp_path, notes, embedder, monkeypatch):
    for name in ('COHERE_API_KEY', 'CO_API_KEY'):
        monkeypatch.delenv(name, raising=False)
    rerank = {'enabled': True, 'provider': 'cohere'}
    with open_index(tmp_path, notes, provider=embedder, query={'rerank': rerank}) as index:
        index.sync()
        report = evaluate_memory(index, probes=4)
    keyword, hybrid, reranked = report.modes
    assert reranked.ran and reranked.note.startswith('4 of the searches were not reranked: ')
    assert keyword.note is None and hybrid.note is None  # reranking was off there: nothing to skip
    assert reranked.hit_at_1 == hybrid.hit_at_1  # the merged order, kept


def test_the_verdict_compares_the_share_found_first():
    assert _compare('hybrid', 0.56, 'keyword-only', 0.5) == (
        'hybrid finds the right note first 12 % more often than keyword-only (56 % vs 50 %)'
    )
    assert '20 % less often' in _compare('hybrid', 0.4, 'keyword-only', 0.5)
    assert 'equally often (50 %)' in _compare('hybrid', 0.501, 'keyword-only', 0.5)
    assert _compare('hybrid', 0.3, 'keyword-only', 0.0).endswith('30 % of probes, keyword-only in none')
    failed = ModeScore('keyword-only', True, note='memory search is disabled')
    report = EvalReport(
        'none', 'fts-only', None, 0, 0, 0, 0, 0, (failed, *(ModeScore(m, False) for m in MODES[1:])), ()
    )
    assert report.verdict == 'keyword-only search did not run: memory search is disabled'
