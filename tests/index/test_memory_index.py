"""MemoryIndex end to end on temporary workspaces: sync, identity, crash recovery, get, status, watching, the embedding
cache (the search pipeline: tests/search/test_search.py)."""

import dataclasses
import errno
import json
import os
import subprocess
import sys
import time

import pytest
from conftest import HashEmbedder, memory_config, open_index, paths, write

import memsift
from memsift import MemoryIndex

# ---------------------------------------------------------------- sync


def test_sync_is_incremental_and_tracks_changes_and_deletes(tmp_path, ws):
    with open_index(tmp_path) as index:
        first = index.sync()
        assert sorted(first.added) == ['MEMORY.md', 'memory/2026-11-20.md', 'memory/projects/cjk.md']
        again = index.sync()
        assert (again.added, again.updated, again.removed, again.unchanged) == ([], [], [], 3)
        write(ws / 'memory' / '2026-11-20.md', '# 2026-11-20\n\nSwitched the pool to idle_timeout 45s.\n')
        (ws / 'MEMORY.md').unlink()
        changed = index.sync()
        assert (changed.updated, changed.removed) == (['memory/2026-11-20.md'], ['MEMORY.md'])
        assert paths(index.search('idle_timeout', min_score=0)) == ['memory/2026-11-20.md']
        assert index.search('ERR_CONN_RESET', min_score=0).results == []
        assert index.search('deploy key vault', min_score=0).results == []
        assert index.status()['files'] == 2


def test_a_file_rewritten_in_the_same_second_with_the_same_size_is_noticed(tmp_path, ws):
    with open_index(tmp_path) as index:
        index.sync()
        note = ws / 'memory' / '2026-11-20.md'
        stat = note.stat()
        write(note, note.read_text().replace('backoff', 'jitters'))  # same size
        os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the same mtime
        assert index.sync().updated == ['memory/2026-11-20.md']
        assert paths(index.search('jitters', min_score=0)) == ['memory/2026-11-20.md']


def test_identity_change_reindexes_everything(tmp_path, ws):
    with open_index(tmp_path) as index:
        index.sync()
    with MemoryIndex(ws, memory_config(tmp_path, chunking={'tokens': 64, 'overlap': 8})) as index:
        assert index.status()['identity']['status'] == 'rebuild-pending'
        report = index.sync()
        assert len(report.updated) == 3
        assert index.status()['identity']['status'] == 'current'
        assert index.sync().unchanged == 3


def test_provider_change_re_embeds_and_vectors_come_back_after_reopen(tmp_path, ws, embedder):
    with open_index(tmp_path) as index:
        index.sync()
    with open_index(tmp_path, provider=embedder) as index:
        assert len(index.sync().updated) == 3
        assert index.status()['vector']['vectors'] == index.status()['chunks']
    again = HashEmbedder()
    with open_index(tmp_path, provider=again) as index:
        assert index.status()['vector']['vectors'] == index.status()['chunks']  # loaded from the store
        assert index.sync().unchanged == 3
        assert again.calls == 0


_KILL_MIDWAY = """
import os, sys
sys.path.insert(0, {tests!r})
from conftest import memory_config
import memsift
calls = []
def progress(done, total, path):
    calls.append(path)
    if len(calls) == 3:
        os._exit(9)  # killed in the middle of a sync
with memsift.MemoryIndex({ws!r}, memory_config(__import__('pathlib').Path({tmp!r}))) as index:
    index.sync(force=True, progress=progress)
"""


def test_a_killed_sync_leaves_a_searchable_index_and_the_next_sync_completes_it(tmp_path, ws):
    with open_index(tmp_path) as index:
        index.sync()
    for i in range(6):
        write(ws / 'memory' / f'topic-{i}.md', f'note {i} about kafka partitions and rebalancing\n')
    script = _KILL_MIDWAY.format(tests=os.path.dirname(os.path.dirname(__file__)), ws=str(ws), tmp=str(tmp_path))
    proc = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    with open_index(tmp_path) as index:
        assert paths(index.search('deploy key', min_score=0)) == ['MEMORY.md']  # previous data still served
        index.sync()
        status = index.status(deep=True)
        expected = sum(len(memsift.chunk_markdown(p.read_text())) for p in ws.rglob('*.md'))
        assert status['chunks'] == expected == status['fts']['docs']
        assert status['issues'] == []
        found = paths(index.search('kafka partitions', max_results=20, min_score=0))
        assert sorted(found) == [f'memory/topic-{i}.md' for i in range(6)]


def test_a_deleted_or_damaged_bm25_folder_is_rebuilt_from_the_store(tmp_path, ws):
    with open_index(tmp_path) as index:
        index.sync()
        folder = index.index.path
    import shutil

    shutil.rmtree(folder)
    with open_index(tmp_path) as index:
        result = index.search('deploy key', min_score=0)
        assert paths(result) == ['MEMORY.md'] and result.debug['indexRebuilt'] is True
    (tmp_path / 'state' / 'main.bm25' / 'meta.json').write_text('{not json')
    with open_index(tmp_path) as index:
        assert paths(index.search('deploy key', min_score=0)) == ['MEMORY.md']


def test_bad_files_are_skipped_with_a_reason_not_a_crash(tmp_path, ws):
    (ws / 'memory' / 'blob.md').write_bytes(b'\x00\x01\x02binary\x00' * 100)
    (ws / 'memory' / 'latin1.md').write_bytes('caf\xe9 notes'.encode('latin-1'))
    with open_index(tmp_path) as index:
        report = index.sync()
        assert set(report.skipped) == {'memory/blob.md', 'memory/latin1.md'}
        skipped = {item['path']: item['reason'] for item in index.status()['skipped']}
        assert 'binary' in skipped['memory/blob.md'] and 'UTF-8' in skipped['memory/latin1.md']
        assert paths(index.search('deploy key', min_score=0)) == ['MEMORY.md']


def test_config_errors_name_the_key_path(tmp_path, ws):
    with pytest.raises(memsift.ConfigError, match=r'query\.maxResults'):
        MemoryIndex(ws, memory_config(tmp_path, query={'maxResults': 'many'}))
    with pytest.raises(memsift.InvalidInputError, match='not a folder'):
        MemoryIndex(tmp_path / 'missing', memory_config(tmp_path))


def test_store_path_takes_the_agent_id(tmp_path, ws):
    with MemoryIndex(ws, memory_config(tmp_path), agent_id='ops') as index:
        index.sync()
        assert index.status()['dbPath'] == str(tmp_path / 'state' / 'ops.sqlite')
        assert (tmp_path / 'state' / 'ops.bm25').is_dir()


# ---------------------------------------------------------------- get and status


def test_get_returns_bounded_excerpts_of_indexed_files_only(tmp_path, ws):
    write(ws / 'notes' / 'private.md', 'not memory')
    with open_index(tmp_path) as index:
        index.sync()
        whole = index.get('MEMORY.md')
        assert whole['text'] == (ws / 'MEMORY.md').read_text() and whole['from'] == 1
        part = index.get('MEMORY.md', from_line=3, lines=2)
        assert part['text'] == 'Prefers tabs over spaces.\nThe deploy key lives in the team vault.'
        assert (part['from'], part['lines'], part['totalLines']) == (3, 2, 5)
        for outside in ('notes/private.md', '../ws/MEMORY.md', '/etc/passwd', 'memory/../MEMORY.md', ''):
            with pytest.raises(memsift.InvalidInputError, match='not an indexed memory file'):
                index.get(outside)
        with pytest.raises(memsift.InvalidInputError, match='lines'):
            index.get('MEMORY.md', lines=0)
        write(ws / 'memory' / 'big.md', 'x' * 100 + '\n' + ('line\n' * 10_000))
        index.sync()
        big = index.get('memory/big.md')
        assert big['truncated'] is True and len(big['text']) == memsift.index.reader.MAX_GET_CHARS
        rest = index.get('memory/big.md', from_line=big['nextFrom'])
        assert rest['from'] == big['nextFrom']
        (ws / 'memory' / 'big.md').unlink()
        (ws / 'memory' / 'big.md').symlink_to('/etc/passwd')  # swapped for a symlink after indexing
        with pytest.raises(memsift.InvalidInputError, match='no longer a regular file'):
            index.get('memory/big.md')


def test_status_reports_openclaw_fields(tmp_path, ws, embedder):
    with open_index(tmp_path, provider=embedder) as index:
        index.sync()
        status = index.status(deep=True)
    for key in (
        'backend',
        'provider',
        'model',
        'requestedProvider',
        'files',
        'chunks',
        'dirty',
        'workspaceDir',
        'dbPath',
        'extraPaths',
        'sources',
        'sourceCounts',
        'cache',
        'fts',
        'vector',
        'skipped',
    ):
        assert key in status
    assert (status['files'], status['chunks']) == (3, 3)
    assert status['sourceCounts'] == [{'source': 'memory', 'files': 3, 'chunks': 3}]
    assert status['vector'] == {
        'enabled': True,
        'available': True,
        'dims': 64,
        'vectors': 3,
        'ann': False,
        'fourBit': False,
        'oneBit': False,
        'probe': 'ok',
    }
    assert status['issues'] == [] and status['dirty'] is False
    json.dumps(status)


def test_closed_index_refuses_calls(tmp_path, ws):
    index = open_index(tmp_path)
    index.close()
    index.close()
    with pytest.raises(memsift.MemsiftError, match='closed'):
        index.search('x')


def test_extra_paths_are_indexed(tmp_path, ws):
    shared = tmp_path / 'shared-notes'
    write(shared / 'team.md', 'oncall rotation: alice then bob')
    with open_index(tmp_path, extraPaths=[str(shared)]) as index:
        assert paths(index.search('oncall rotation'))[0].endswith('shared-notes/team.md')


def test_config_object_and_dataclass_replace(tmp_path, ws):
    config = memsift.load_config(memory_config(tmp_path))
    config = dataclasses.replace(config, chunking=dataclasses.replace(config.chunking, tokens=50, overlap=0))
    with MemoryIndex(ws, config) as index:
        index.sync()
        assert index.status()['identity']['chunkTokens'] == 50


def test_watch_reindexes_changed_files_after_the_debounce(tmp_path, ws):
    with open_index(tmp_path, sync={'watchDebounceMs': 200}) as index:
        index.sync()
        index.start_watching()
        write(ws / 'memory' / 'watched.md', 'quokka sightings on rottnest island')
        (ws / 'memory' / '2026-11-20.md').unlink()
        deadline = time.time() + 15
        while time.time() < deadline and not (
            paths(index.search('quokka')) and not index.search('ERR_CONN_RESET').results
        ):
            time.sleep(0.1)
        assert paths(index.search('quokka')) == ['memory/watched.md']
        assert index.search('ERR_CONN_RESET').results == []
        write(ws / 'ignored' / 'x.md', 'quokka')  # outside memory roots: not indexed
        write(ws / 'memory' / 'new-dir' / 'deep.md', 'wombat burrow')  # a folder created after start
        deadline = time.time() + 15
        while time.time() < deadline and not paths(index.search('wombat')):
            time.sleep(0.1)
        assert paths(index.search('wombat')) == ['memory/new-dir/deep.md']
        assert paths(index.search('quokka')) == ['memory/watched.md']
        assert index.status()['watching'] is True
        index.stop_watching()


def test_the_watcher_syncs_the_files_its_events_name_without_checking_every_file(tmp_path, ws, monkeypatch):
    from memsift.index import sync

    every_file = []
    refresh = sync.StampCheck._refresh
    monkeypatch.setattr(sync.StampCheck, '_refresh', lambda self, store: every_file.append(1) or refresh(self, store))
    with open_index(tmp_path, sync={'watchDebounceMs': 50, 'onSearch': False}) as index:
        index.sync()
        index.start_watching()
        if index.status()['watch']['mode'] != 'events':
            pytest.skip(f'no OS file events here: {index.status()["watch"]["fallbackReason"]}')
        checks = len(every_file)
        write(ws / 'memory' / 'watched.md', 'wombat burrow survey')  # new
        write(ws / 'memory' / '2026-11-20.md', 'numbat termite count')  # edited
        deadline = time.time() + 20
        while time.time() < deadline and len(paths(index.search('wombat numbat'))) < 2:
            time.sleep(0.05)
        assert sorted(paths(index.search('wombat numbat'))) == ['memory/2026-11-20.md', 'memory/watched.md']
        assert len(every_file) == checks  # the events named both files: no scan of the workspace
        index.stop_watching()


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='inotify limits are Linux-only')
def test_watch_falls_back_to_polling_when_the_os_has_no_watches_left(tmp_path, ws):
    """Every inotify instance this user may open is taken (as by an IDE and many agents): watching still works, by
    polling, and status says so."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    taken = []
    try:
        while len(taken) < 100_000:
            fd = libc.inotify_init1(os.O_CLOEXEC)
            if fd < 0:
                break
            taken.append(fd)
        if ctypes.get_errno() != errno.EMFILE:
            pytest.skip(f'inotify_init1 failed with errno {ctypes.get_errno()}, not the instance limit')
        with open_index(tmp_path, sync={'watchDebounceMs': 100}) as index:
            index.sync()
            index.start_watching()
            watch = index.status()['watch']
            assert (
                watch['mode'] == 'polling'
                and 'OSError' in watch['fallbackReason']
                and 'polling every' in watch['fallbackReason']
            )
            from memsift.tools.cli.render import status_lines

            assert any(
                line.startswith('Sync:') and 'watch polling (OSError' in line for line in status_lines(index.status())
            )
            write(ws / 'memory' / 'polled.md', 'capybara grazing by the river')
            deadline = time.time() + 20
            while time.time() < deadline and not paths(index.search('capybara')):
                time.sleep(0.2)
            assert paths(index.search('capybara')) == ['memory/polled.md']
    finally:
        for fd in taken:
            os.close(fd)
    with open_index(tmp_path) as index:  # with instances free again, OS events as before
        index.start_watching()
        assert index.status()['watch'] == {'mode': 'events', 'fallbackReason': None}


def test_interval_sync_without_file_watching(tmp_path, ws):
    config = memsift.load_config(memory_config(tmp_path, sync={'watch': False}))
    config = dataclasses.replace(config, sync=dataclasses.replace(config.sync, interval_minutes=0.005))  # 0.3 s
    with MemoryIndex(ws, config) as index:
        index.sync()
        index.start_watching()
        assert index.freshness.watcher._observer is None  # no file watching: only the period
        write(ws / 'memory' / 'periodic.md', 'narwhal migration')
        deadline = time.time() + 15
        while time.time() < deadline and not paths(index.search('narwhal', min_score=0)):
            time.sleep(0.1)
        assert paths(index.search('narwhal', min_score=0)) == ['memory/periodic.md']


def test_embedding_cache_means_unchanged_text_is_never_re_embedded(tmp_path, ws, embedder):
    with open_index(tmp_path, provider=embedder) as index:
        index.sync()
        first = embedder.calls
        assert first == 3 and index.status()['cache']['entries'] == 3
        index.sync(force=True)  # a full reindex: every chunk comes from the cache
        assert embedder.calls == first and index.cache_hits == 3
        write(ws / 'memory' / '2026-11-20.md', '# 2026-11-20\n\nA new line about retries.\n')
        index.sync()
        assert embedder.calls == first + 1  # only the edited file's chunk
    with open_index(tmp_path, provider=HashEmbedder(model='hash-v2')) as index:
        index.sync()  # another model: nothing reusable, and the old model's rows stay
        assert index.cache_misses == 3 and index.status()['cache']['entries'] == 7
    with open_index(tmp_path, provider=embedder) as index:
        index.sync()  # back to the first model: all cached, the index serves again without a provider call
        assert embedder.calls == first + 1 and index.status()['vector']['vectors'] == 3
    with open_index(tmp_path, provider=embedder, cache={'maxEntries': 2}) as index:
        index.sync(force=True)
        assert index.status()['cache']['entries'] == 2


def test_get_clamps_a_negative_from_to_line_1(tmp_path, ws):
    """OpenClaw clamps ``from`` below 1 to the first line (it used to be an error here)."""
    with open_index(tmp_path) as index:
        index.sync()
        for start in (-5, 0):
            got = index.get('MEMORY.md', from_line=start, lines=1)
            assert got['from'] == 1 and got['text'] == (ws / 'MEMORY.md').read_text().split('\n')[0]


def test_get_reads_the_dream_diary_though_it_is_never_indexed(tmp_path, ws):
    write(ws / 'DREAMS.md', '# Dream diary\nA drifting archive breathed in moonlight.\n')
    with open_index(tmp_path) as index:
        index.sync()
        assert 'DREAMS.md' not in {h.path for h in index.search('drifting archive moonlight', min_score=0).results}
        got = index.get('DREAMS.md', from_line=2, lines=1)
        assert got['text'] == 'A drifting archive breathed in moonlight.' and got['totalLines'] == 3
        with pytest.raises(memsift.InvalidInputError, match='not an indexed memory file'):
            index.get('memory/DREAMS.md')


def test_a_blank_extra_paths_entry_is_dropped(tmp_path, ws):
    write(ws / 'extra' / 'note.md', 'Ocelot sightings logged in the extra folder.\n')
    with open_index(tmp_path, extraPaths=['', '   ', 'extra']) as index:
        assert index.config.extra_paths == ('extra',)
        index.sync()
        assert [h.path for h in index.search('ocelot sightings', min_score=0).results] == ['extra/note.md']


def test_status_reports_disk_use_and_compact_gives_it_back(tmp_path, ws, embedder):
    with open_index(tmp_path, ws, provider=embedder) as index:
        index.sync()
        disk = index.status()['disk']
        assert disk['store'] > 0 and disk['keywordIndex'] > 0 and disk['embeddingCache'] > 0
        assert disk['total'] == disk['store'] + disk['keywordIndex'] + disk['vectors']
        # Many small syncs leave keyword segments and dead pages; a deleted note leaves its cache rows behind.
        for i in range(6):
            write(
                ws / 'memory' / f'2026-12-0{i + 1}.md', f'# Day {i}\n\n' + f'note {i} about the release train\n' * 400
            )
            index.sync()
        hashes = {row.hash for row in index.store.iter_chunks()}
        for i in range(6):
            (ws / 'memory' / f'2026-12-0{i + 1}.md').unlink()
        index.sync()
        gone = hashes - {row.hash for row in index.store.iter_chunks()}
        rows = index.store.cache_size()
        kept = index.compact(cache_days=1)  # rows written just now are kept: a note may be mid-edit
        assert kept['cacheRowsPruned'] == 0 and index.store.cache_size() == rows
        report = index.compact(cache_days=0)
        assert gone and report['cacheRowsPruned'] == len(gone) and index.store.cache_size() == rows - len(gone)
        assert report['segmentsMerged'] >= 1
        assert report['after']['store'] < report['before']['store']
        assert report['after']['total'] < report['before']['total']
        # Nothing a search needs went: every note is still found, and stored chunks keep their cache rows.
        assert index.search('deploy key', min_score=0).results[0].path == 'MEMORY.md'
        assert index.status(deep=True)['issues'] == []
        misses = index.cache.misses
        index.sync(force=True)
        assert index.cache.misses == misses  # every stored chunk's vector still comes from the cache
    with pytest.raises(memsift.InvalidInputError, match='cache_days'):
        with open_index(tmp_path, ws, provider=embedder) as index:
            index.compact(cache_days=-1)


def test_searches_answer_while_compact_runs(tmp_path, ws):
    import threading

    with open_index(tmp_path, ws) as index:
        index.sync()
        done, found = threading.Event(), []

        def search_while_compacting():
            while not done.is_set():
                found.append(bool(index.search('deploy key', min_score=0).results))

        thread = threading.Thread(target=search_while_compacting)
        thread.start()
        try:
            reports = [index.compact() for _ in range(3)]
        finally:
            done.set()
            thread.join()
        assert found and all(found)
        assert all(r['after']['total'] > 0 for r in reports)


def test_explain_shows_how_each_result_was_scored_and_what_was_cut(tmp_path, ws, embedder):
    hybrid = {'temporalDecay': {'enabled': True, 'halfLifeDays': 30}, 'mmr': {'enabled': True}}
    with open_index(tmp_path, provider=embedder, query={'hybrid': hybrid}) as index:
        index.sync()
        plain = index.search('deploy key vault', min_score=0)
        result = index.search('deploy key vault', min_score=0, max_results=2, explain=True)
        assert [h.path for h in result.results] == [h.path for h in plain.results][:2]  # explaining changes nothing
        assert all(h.explain is None for h in plain.results) and 'cut' not in plain.debug
        for at, hit in enumerate(result.results, 1):
            why = hit.explain
            assert why['position'] == at and why['vectorWeight'] == pytest.approx(0.7)
            expected = 0.7 * why['cosine'] + 0.3 * (why['bm25Normalized'] or why['pathScore'])
            assert why['merged'] == pytest.approx(expected)
            assert why['score'] == pytest.approx(hit.score) and 0 < why['decay'] <= 1
            assert hit.to_dict()['explain'] == why
        by_path = {h.path: h.explain for h in index.search('deploy', min_score=0, max_results=10, explain=True).results}
        assert by_path['MEMORY.md']['dateSource'] == 'evergreen' and by_path['MEMORY.md']['decay'] == 1.0
        dated = by_path['memory/2026-11-20.md']  # found by the vector leg: every note is a candidate
        assert dated['dateSource'] == 'path' and dated['decay'] < 1
        cut = result.debug['cut']
        assert cut and {c['cut'] for c in cut} <= {'limit', 'minScore'} and cut[0]['cut'] == 'limit'
        assert [c['score'] for c in cut] == sorted((c['score'] for c in cut), reverse=True)
        floored = index.search('deploy key vault', min_score=0.99, explain=True)
        reasons = {c['cut'] for c in floored.debug['cut']}
        assert 'minScore' in reasons  # under the floor (the relaxed pass keeps keyword hits only)


SECRET_NOTE = (
    '# Access\n\nOPENAI_API_KEY=sk-proj-4f9aXb81QzLmN0pRt7Uv\ndb password=hunter2hunter2\n'
    '-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8w\nggE7AgEAAkEAq7BFUpkGp3+LQmlQ\n'
    '-----END PRIVATE KEY-----\nThe deploy runs at noon.\n'
)


def test_get_is_verbatim_unless_query_redact_get(tmp_path, ws):
    write(ws / 'memory' / 'access.md', SECRET_NOTE)
    with open_index(tmp_path) as index:  # OpenClaw's contract: the file as it is
        index.sync()
        assert index.get('memory/access.md')['text'] == SECRET_NOTE
        assert memsift.MemoryTools(index).memory_get('memory/access.md')['text'] == SECRET_NOTE
    with open_index(tmp_path, query={'redactGet': True}) as index:
        index.sync()
        got = index.get('memory/access.md')
        assert got['totalLines'] == SECRET_NOTE.count('\n') + 1  # line numbers stay the file's
        lines = got['text'].split('\n')
        assert lines[2] == 'OPENAI_API_KEY=sk-pro\u2026t7Uv' and lines[3] == 'db password=***'
        assert lines[4:8] == ['-----BEGIN PRIVATE KEY-----', '\u2026redacted\u2026', '', '-----END PRIVATE KEY-----']
        assert lines[8] == 'The deploy runs at noon.'
        for secret in ('4f9aXb81QzLmN0', 'hunter2', 'MIIBVQ', 'ggE7Ag'):
            assert secret not in got['text']
        part = index.get('memory/access.md', from_line=6, lines=3)  # a range inside the key: still masked
        assert part['text'] == '\u2026redacted\u2026\n\n-----END PRIVATE KEY-----' and part['from'] == 6
        assert memsift.MemoryTools(index).memory_get('memory/access.md')['text'] == got['text']
