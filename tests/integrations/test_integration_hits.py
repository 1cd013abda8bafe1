"""memsift.integrations._hits: the whole chunk text behind a hit, shared by the LangChain and LlamaIndex retrievers
(needs no framework)."""

import pytest
from conftest import memory_config, write

import memsift
from memsift.integrations._hits import HitReader, check_options
from memsift.search.results import SNIPPET_MAX_CHARS

LONG = [f'Step {i}: the walrus protocol rotates backup tapes every {i + 1} days.' for i in range(40)]


@pytest.fixture
def index(tmp_path):
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\n\nThe deploy key lives in the team vault.\n')
    write(
        root / 'memory' / 'walrus.md',
        '# Walrus\n\n' + '\n'.join(LONG[:20] + ['DB_PASSWORD=hunter2hunter2'] + LONG[20:]),
    )
    with memsift.MemoryIndex(root, memory_config(tmp_path, provider='none')) as index:
        index.sync()
        yield index


def test_a_short_chunk_is_its_snippet(index):
    [(text, meta)] = HitReader(index).search('deploy key vault', 1, 0.0)
    assert text == '# Facts\n\nThe deploy key lives in the team vault.\n'
    assert meta == {
        'path': 'MEMORY.md',
        'startLine': 1,
        'endLine': 4,
        'score': meta['score'],
        'source': 'memory',
        'citation': 'MEMORY.md#L1-L4',
    }
    assert 0 < meta['score'] <= 1


def test_a_long_chunk_is_read_whole_with_its_secrets_masked(index):
    hits = HitReader(index).search('walrus protocol backup tapes', 10, 0.0)
    chunks = [(text, meta) for text, meta in hits if meta['path'] == 'memory/walrus.md']
    assert len(chunks) >= 2
    stored = {(row.start_line, row.end_line): row.text for row in index.store.iter_chunks()}
    for text, meta in chunks:
        assert len(text) > SNIPPET_MAX_CHARS  # more than the snippet
        lines = stored[meta['startLine'], meta['endLine']].replace('hunter2hunter2', '***')
        assert text == lines  # exactly the chunk that ranked, redacted as its snippet is
        assert 'hunter2' not in text
    assert any('DB_PASSWORD=***' in text for text, _ in chunks)


def test_a_hit_whose_file_changed_keeps_its_snippet(index):
    reader = HitReader(index)
    stale = memsift.MemoryHit('memory/walrus.md', 3, 25, 0.5, 'x' * SNIPPET_MAX_CHARS)  # no longer the file's text
    assert reader.text(stale) == 'x' * SNIPPET_MAX_CHARS
    gone = memsift.MemoryHit('memory/deleted.md', 1, 30, 0.5, 'y' * SNIPPET_MAX_CHARS)  # not an indexed file
    assert reader.text(gone) == 'y' * SNIPPET_MAX_CHARS
    transcript = memsift.MemoryHit('sessions/abc.jsonl', 1, 9, 0.5, 'z' * SNIPPET_MAX_CHARS, source='sessions')
    assert reader.text(transcript) == 'z' * SNIPPET_MAX_CHARS  # transcripts are never read back through get


def test_options_are_checked_as_a_search_checks_them(index):
    assert check_options(index, None, None) is index
    assert check_options(index, 3, 0.5) is index
    with pytest.raises(memsift.InvalidInputError, match='tools.index'):
        check_options(memsift.MemoryTools(index), None, None)
    with pytest.raises(memsift.InvalidInputError, match='max_results must be a positive integer'):
        check_options(index, 0, None)
    with pytest.raises(memsift.InvalidInputError, match='min_score'):
        check_options(index, None, float('inf'))


def test_filters_are_checked_as_a_search_checks_them_and_passed_on(index):
    assert check_options(index, None, None, since='7d', until='2026-12-31', paths=['memory'], tags=['ops']) is index
    with pytest.raises(memsift.InvalidInputError, match='since'):
        check_options(index, None, None, since='soonish')
    with pytest.raises(memsift.InvalidInputError, match='since .* is after until'):
        check_options(index, None, None, since='2026-11-10', until='2026-11-01')
    with pytest.raises(memsift.InvalidInputError, match='paths'):
        check_options(index, None, None, paths=['/etc'])
    with pytest.raises(memsift.InvalidInputError, match='tags'):
        check_options(index, None, None, tags=[3])
    reader = HitReader(index)
    assert {meta['path'] for _, meta in reader.search('deploy walrus', 5, 0.0, paths=['memory'])} == {
        'memory/walrus.md'
    }
    assert [meta['path'] for _, meta in reader.search('deploy walrus', 5, 0.0, tags=['ops'])] == []
