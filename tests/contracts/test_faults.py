"""Live-agent faults, each a regression test: edits that land mid-sync, poisoned transcript lines, several processes
on one index, a memory folder swapped for a symlink, absurd config values.

The long versions (SIGKILL loops, a multi-process soak) are ``benches/chaos.py``; arbitrary inputs to every public
entry point are ``tests/contracts/test_fuzz.py``.
"""

import contextlib
import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import HashEmbedder, memory_config, write
from filelock import FileLock

import memsift
import memsift.index.sync
from memsift import ConfigError, InvalidInputError, MemoryIndex, SessionStore
from memsift.tools.openclaw import import_openclaw_sessions

MAIN = 'agent:main:main'


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\nThe deploy key lives in the team vault.\n')
    write(root / 'memory' / '2026-11-28.md', 'Standup moved to Tuesday.\n')
    return root


def open_index(tmp_path, ws, provider=None, **search):
    return MemoryIndex(ws, memory_config(tmp_path, **search), provider=provider)


def found(index, word, **options):
    return [hit.path for hit in index.search(word, min_score=0, **options).results]


# ---------------------------------------------------------------- an edit at any moment of a sync


class EditingEmbedder(HashEmbedder):
    """Edits a note the first time it is asked to embed it: an agent writing while a slow model embeds."""

    def __init__(self, note, text):
        super().__init__()
        self.note, self.text, self.edited = note, text, False

    def embed_documents(self, texts):
        if not self.edited and any('Standup' in t for t in texts):
            self.edited = True
            time.sleep(0.02)  # a new mtime even on coarse-grained file systems
            write(self.note, self.text)
        return super().embed_documents(texts)


def assert_next_sync_indexes(index, note, word):
    """The edit is not in the index yet, the next sync puts it there, and search and get agree."""
    index.sync()
    assert found(index, word, keyword_only=True) == ['memory/2026-11-28.md']
    assert found(index, 'Standup', keyword_only=True) == []
    assert word in index.get('memory/2026-11-28.md')['text']
    assert index.sync().unchanged == 2  # and then it stays indexed, without re-reading


def test_an_edit_while_chunks_embed_is_indexed_by_the_next_sync(tmp_path, ws):
    note = ws / 'memory' / '2026-11-28.md'
    with open_index(tmp_path, ws, EditingEmbedder(note, 'Retro moved to Friday.\n')) as index:
        index.sync()
        assert index.provider.edited
        assert_next_sync_indexes(index, note, 'Retro')


def test_an_edit_between_listing_and_reading_is_indexed_by_the_next_sync(tmp_path, ws, monkeypatch):
    note = ws / 'memory' / '2026-11-28.md'
    prepare = memsift.index.sync.prepare_files  # the read (in Rust) of the listed files

    def edit_then_read(paths, *args):
        if str(note.absolute()) in paths and 'Standup' in note.read_text():
            time.sleep(0.02)
            write(note, 'Retro moved to Friday.\n')
        return prepare(paths, *args)

    with open_index(tmp_path, ws) as index:
        monkeypatch.setattr(memsift.index.sync, 'prepare_files', edit_then_read)
        index.sync()
        monkeypatch.undo()
        assert_next_sync_indexes(index, note, 'Retro')


def test_an_edit_after_a_file_is_written_is_indexed_by_the_next_sync(tmp_path, ws):
    note = ws / 'memory' / '2026-11-28.md'

    def edit_after_write(done, total, path):  # called after each file, before the sync's last commit
        if path == 'memory/2026-11-28.md' and 'Standup' in note.read_text():
            time.sleep(0.02)
            write(note, 'Retro moved to Friday.\n')

    with open_index(tmp_path, ws) as index:
        index.sync(progress=edit_after_write)
        assert_next_sync_indexes(index, note, 'Retro')


def test_a_touched_but_unchanged_file_is_not_read_again(tmp_path, ws, monkeypatch):
    with open_index(tmp_path, ws) as index:
        index.sync()
        note = ws / 'MEMORY.md'
        stat = note.stat()
        import os

        os.utime(note, (stat.st_atime, stat.st_mtime - 3600))  # the same text, another mtime
        assert index.sync().unchanged == 2
        reads = []
        read = memsift.index.sync.read_memory_file
        monkeypatch.setattr(
            memsift.index.sync, 'read_memory_file', lambda path, *a: reads.append(path) or read(path, *a)
        )
        index.sync()
        assert note not in reads  # its new stat was recorded


# ---------------------------------------------------------------- poisoned transcripts

CUT_EMOJI = '{"type":"message","id":"b1","message":{"role":"assistant","content":"done \\ud83d"}}'
"""What ``JSON.stringify`` writes for a string cut in the middle of an emoji: a lone surrogate escape."""


def transcript(path, *lines):
    header = json.dumps({'type': 'session', 'id': 's1'})
    good = json.dumps({'type': 'message', 'id': 'g1', 'message': {'role': 'user', 'content': 'healthy lantern'}})
    path.write_bytes(
        b'\n'.join(line if isinstance(line, bytes) else line.encode() for line in (header, good, *lines)) + b'\n'
    )
    return path


def test_a_lone_surrogate_line_keeps_every_search_working(tmp_path):
    path = transcript(tmp_path / 'cut.jsonl', CUT_EMOJI)
    with SessionStore(tmp_path / 's.sqlite') as store:
        assert store.import_jsonl(path, MAIN)['events'] == 2
        store.reconcile()
        assert [h['messageId'] for h in store.search('lantern', MAIN)['results']] == ['g1']
        [hit] = store.search('done', MAIN)['results']
        assert hit['snippet'] == 'done \ufffd'
        history = store.history(MAIN, MAIN)
        json.dumps(history, ensure_ascii=False).encode('utf-8')  # printable
        assert [m['content'] for m in history['messages']] == ['healthy lantern', 'done \ufffd']
        assert store.append(MAIN, {'type': 'message', 'id': 'b2', 'message': {'role': 'user', 'content': 'x \udc00'}})
        assert store.search('\ud83d lantern', MAIN)['results'][0]['messageId'] == 'g1'


def test_sessions_cli_survives_a_lone_surrogate_line(tmp_path):
    path = transcript(tmp_path / 'cut.jsonl', CUT_EMOJI)
    db = tmp_path / 's.sqlite'
    run = [sys.executable, '-m', 'memsift', 'sessions']
    imported = subprocess.run(
        [*run, 'import', path, '--key', MAIN, '--sessions-db', db, '--json'], capture_output=True, text=True, timeout=60
    )
    assert imported.returncode == 0, imported.stderr
    for query in ('lantern', 'done'):
        out = subprocess.run(
            [*run, 'search', query, '--sessions-db', db, '--json'], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert len(json.loads(out.stdout)['results']) == 1


@pytest.mark.parametrize(
    'line, skipped',
    [
        ('{"type":"message","id":"d","message":{"role":"user","content":' + '[' * 2000 + ']' * 2000 + '}}', 1),
        (b'{"type":"message","id":"u","message":{"role":"user","content":"caf\xe9"}}', 1),
        ('{"type":"message","id":"t","timestamp":1e20,"message":{"role":"user","content":"far future"}}', 0),
        ('{"type":"message","id":"p","message":"plain string"}', 0),
        ('{"type":"message","id":"n","message":{"role":"user","content":"nul \\u0000 inside"}}', 0),
    ],
)
def test_one_bad_line_costs_only_itself(tmp_path, line, skipped):
    path = transcript(
        tmp_path / 't.jsonl',
        line,
        json.dumps({'type': 'message', 'id': 'after', 'message': {'role': 'assistant', 'content': 'later lantern'}}),
    )
    with SessionStore(tmp_path / 's.sqlite') as store:
        report = store.import_jsonl(path, MAIN)
        assert report['skipped'] == skipped and report['events'] == 3 - skipped
        assert len(report.get('skippedLines', [])) == skipped and all(
            entry.startswith('line 3: ') for entry in report.get('skippedLines', [])
        )
        assert {h['messageId'] for h in store.search('lantern', MAIN)['results']} == {'g1', 'after'}
        history = store.history(MAIN, MAIN)
        assert [m['id'] for m in history['messages']][-1] == 'after'
        timestamps = [m['timestamp'] for m in history['messages']]
        assert all(0 <= t <= time.time() * 1000 + 1000 for t in timestamps)  # 1e20 became the import time


def test_append_rejects_what_it_cannot_store_with_a_typed_error(tmp_path):
    deep: list = []
    for _ in range(2000):
        deep = [deep]
    with SessionStore(':memory:') as store:
        with pytest.raises(InvalidInputError, match='nested too deeply'):
            store.append(MAIN, {'type': 'message', 'message': {'role': 'user', 'content': deep}})
        with pytest.raises(InvalidInputError, match='not JSON'):
            store.append(MAIN, {'type': 'message', 'message': {'role': 'user', 'content': {1, 2}}})
        assert store.append(
            MAIN, {'type': 'message', 'id': 7, 'timestamp': 1e20, 'message': {'role': 'user', 'content': 'numeric id'}}
        )
        assert store.search('numeric', MAIN)['results'][0]['messageId'] == '7'


def test_one_broken_transcript_does_not_stop_the_others(tmp_path, caplog):
    sessions = tmp_path / 'sessions'
    sessions.mkdir()
    (sessions / 'sessions.json').write_text('{broken')
    (sessions / 'bad.jsonl').write_bytes(b'\xff\xfe not a transcript\n')
    transcript(sessions / 'good.jsonl')
    with SessionStore(tmp_path / 's.sqlite') as store:
        added = import_openclaw_sessions(store, sessions)
        assert added == {'agent:main:good': 1}
        assert store.search('lantern', 'agent:main:good')['results']
    assert 'bad.jsonl' in caplog.text and 'sessions.json' in caplog.text


def test_core_text_functions_take_lone_surrogates():
    assert memsift.tokenize('done \ud83d') == ['done']
    assert memsift.Analyzer().tokenize_batch(['\udc00x']) == [['x']]
    assert [c.text for c in memsift.chunk_markdown('a \ud83d b')] == ['a \ufffd b']
    assert memsift.estimate_chars('\ud83d') == memsift.estimate_chars('\ufffd')
    index = memsift.Bm25Index()
    index.add([1], ['memory/\ud83d.md'], ['memory'], ['lone \udc00 half'])
    index.commit()
    assert [i for i, _ in index.search('half \ud83d')] == [1]


def test_memory_search_takes_lone_surrogates_in_notes_and_queries(tmp_path, ws):
    (ws / 'memory' / 'cut.md').write_bytes('cut emoji \ud83d here'.encode('utf-8', 'surrogatepass'))
    with open_index(tmp_path, ws) as index:
        index.sync()
        assert index.status()['skipped'] == [
            {'path': 'memory/cut.md', 'reason': index.status()['skipped'][0]['reason']}
        ]
        result = index.search('vault \udc00')
        assert [hit.path for hit in result.results] == ['MEMORY.md']
        json.dumps(result.to_dict(), ensure_ascii=False).encode('utf-8')


# ---------------------------------------------------------------- several processes on one index

HOLD_LOCK = textwrap.dedent("""
    import signal, sys
    from filelock import FileLock
    lock = FileLock(sys.argv[1], preserve_lock_file=True, fallback_to_soft=False)
    lock.acquire()
    signal.alarm(int(sys.argv[2]))  # a hang guard: SIGALRM ends the process (and frees the lock) after that
    print('held', flush=True)
    sys.stdin.read()  # holds the lock until the test closes stdin
""")


@contextlib.contextmanager
def holding_lock(lock, seconds=60):
    """A process holding ``lock`` (it printed ``held``) until its stdin is closed or ``seconds`` pass; killed at
    the end."""
    holder = subprocess.Popen(
        [sys.executable, '-c', HOLD_LOCK, str(lock), str(seconds)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == 'held\n'
        yield holder
    finally:
        holder.kill()
        holder.wait()
        holder.stdin.close()
        holder.stdout.close()


def test_a_search_gives_way_to_another_process_writing_and_a_sync_waits_for_it(tmp_path, ws):
    with open_index(tmp_path, ws) as index:
        index.sync()
        write(ws / 'memory' / 'new.md', 'Quarterly lantern review.\n')
        index.mark_dirty()
        with holding_lock(tmp_path / 'state' / 'main.lock') as holder:
            assert found(index, 'vault') == ['MEMORY.md']  # answered from the index as it is, without an error,
            assert holder.poll() is None  # while the other process still held the lock
            assert index.status()['syncError'] is None
            reports = []
            syncing = threading.Thread(target=lambda: reports.append(index.sync()))
            syncing.start()
            syncing.join(0.5)
            assert syncing.is_alive() and not reports  # the sync waits for the other writer...
            holder.stdin.close()  # ...until it is done,
            syncing.join(60)
            assert [report.added for report in reports] == [['memory/new.md']]  # then writes
        assert found(index, 'lantern') == ['memory/new.md']


def test_a_killed_writer_frees_the_lock(tmp_path, ws):
    with open_index(tmp_path, ws) as index:
        lock = tmp_path / 'state' / 'main.lock'
        with holding_lock(lock) as holder:
            holder.kill()  # SIGKILL: no clean-up runs
            holder.wait()
        with FileLock(lock, timeout=0, fallback_to_soft=False):  # free at once: no stale lock to wait out
            pass
        assert index.sync().added


WRITER = textwrap.dedent("""
    import sys, time, memsift
    from pathlib import Path
    ws, config, tag, rounds = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    with memsift.MemoryIndex(ws, config) as index:
        for i in range(rounds):
            (ws / 'memory' / f'{tag}-{i}.md').write_text(f'note {tag}{i}x from writer {tag}\\n')
            index.sync()
            assert index.search(f'{tag}{i}x', min_score=0).results, f'{tag}{i}x not found after its own sync'
    print('ok', flush=True)
""")


def test_processes_syncing_one_index_never_fail_and_see_each_other(tmp_path, ws):
    config = tmp_path / 'config.json'
    config.write_text(json.dumps(memory_config(tmp_path)))
    writers = [
        subprocess.Popen(
            [sys.executable, '-c', WRITER, str(ws), str(config), tag, '15'],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ('a', 'b')
    ]
    with open_index(tmp_path, ws) as reader:
        errors = []

        def search_loop():
            while any(w.poll() is None for w in writers):
                try:
                    reader.search('writer', min_score=0)
                except Exception as exc:  # noqa: BLE001 - any error is the failure this test looks for
                    errors.append(repr(exc))

        thread = threading.Thread(target=search_loop)
        thread.start()
        outputs = [w.communicate(timeout=240) for w in writers]
        thread.join()
        assert [w.returncode for w in writers] == [0, 0], [err[-2000:] for _, err in outputs]
        assert errors == [] and reader.status()['syncError'] is None
        reader.sync()
        assert len(found(reader, 'writer')) == 6  # max_results
        assert all(found(reader, f'{tag}{i}x') for tag in 'ab' for i in range(15))
        assert reader.status(deep=True)['issues'] == []


def test_vectors_follow_another_process_writes(tmp_path, ws):
    with open_index(tmp_path, ws, HashEmbedder()) as reader, open_index(tmp_path, ws, HashEmbedder()) as writer:
        reader.sync()
        write(ws / 'memory' / 'car.md', 'Bought an automobile.\n')
        writer.sync()
        result = reader.search('vehicle purchase', min_score=0)  # only the vector leg can match this
        assert result.mode == 'hybrid' and [hit.path for hit in result.results][:1] == ['memory/car.md']


# ---------------------------------------------------------------- paths and odd values


def test_memory_get_refuses_a_folder_swapped_for_a_symlink(tmp_path, ws):
    outside = tmp_path / 'outside'
    write(outside / '2026-11-28.md', 'secret from outside the workspace\n')
    with open_index(tmp_path, ws) as index:
        index.sync()
        assert 'Standup' in index.get('memory/2026-11-28.md')['text']
        (ws / 'memory').rename(tmp_path / 'moved')
        (ws / 'memory').symlink_to(outside, target_is_directory=True)
        with pytest.raises(InvalidInputError, match='symlink'):
            index.get('memory/2026-11-28.md')


def test_extra_paths_outside_the_workspace_are_still_readable(tmp_path, ws):
    write(tmp_path / 'notes' / 'team.md', 'Team lantern rota.\n')
    with open_index(tmp_path, ws, extraPaths=[str(tmp_path / 'notes')]) as index:
        index.sync()
        [hit] = index.search('rota', min_score=0).results
        assert 'lantern' in index.get(hit.path)['text']


def test_absurd_config_values_raise_config_errors(tmp_path):
    deep: dict = {}
    for _ in range(5000):
        deep = {'x': deep}
    for bad in (10**400, deep, [deep]):
        with pytest.raises(ConfigError):
            memsift.load_config({'agents': {'defaults': {'memorySearch': {'query': {'maxResults': bad}}}}})
    with pytest.raises(ConfigError, match='maxResults'):
        memsift.load_config({'agents': {'defaults': {'memorySearch': {'query': {'maxResults': 10**400}}}}})


def test_a_huge_config_file_is_refused_at_once(tmp_path):
    big = tmp_path / 'openclaw.json'
    big.write_text('{"agents": {"list": [' + ','.join(['{"id": "a%d"}' % i for i in range(600_000)]) + ']}}')
    with pytest.raises(ConfigError, match='bytes, more than'):  # refused by its size, before it is read
        memsift.load_config(big)
    deep = tmp_path / 'deep.json5'
    deep.write_text('{a: ' * 3000 + '1' + '}' * 3000)
    with pytest.raises(ConfigError, match='nested too deeply'):
        memsift.load_config(deep)


def test_huge_integers_are_invalid_input_not_overflow():
    for call in (
        lambda: memsift.chunk_markdown('x', tokens=2**64),
        lambda: memsift.chunk_markdown('x', overlap=-(2**70)),
        lambda: memsift.Bm25Index().search('x', 10**400),
        lambda: memsift.VectorStore(2**64),
        lambda: memsift.mmr([10**400], ['x']),
        lambda: memsift.Bm25Index().add([2**64], ['a.md'], ['memory'], ['x']),
    ):
        with pytest.raises(InvalidInputError):
            call()
    assert memsift.VectorStore(2).search(np.zeros(2, dtype=np.float32), k=2**40)[0].tolist() == []


SLOW_FIRST_INDEX = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, sys.argv[3])  # the tests folder, for conftest's HashEmbedder
    from pathlib import Path
    from conftest import HashEmbedder
    import memsift

    class SlowEmbedder(HashEmbedder):  # a model on a slow CPU: each batch takes a while
        def embed_documents(self, texts):
            time.sleep(0.3)
            return super().embed_documents(texts)

    with memsift.MemoryIndex(Path(sys.argv[1]), json.loads(sys.argv[2]), provider=SlowEmbedder()) as index:
        index.sync()
""")


def test_a_killed_first_index_resumes_without_embedding_finished_chunks_again(tmp_path):
    ws = tmp_path / 'ws'
    for i in range(300):
        write(ws / 'memory' / f'note-{i:03d}.md', f'Fact number {i}: the code word is w{i}x.\n')
    config = memory_config(tmp_path)
    store = tmp_path / 'state' / 'main.sqlite'
    first = subprocess.Popen(
        [sys.executable, '-c', SLOW_FIRST_INDEX, str(ws), json.dumps(config), str(Path(__file__).parents[1])]
    )
    cached = 0
    deadline = time.monotonic() + 60
    while cached < 64 and time.monotonic() < deadline:  # at least one batch of embeddings is in the cache
        time.sleep(0.05)
        if store.is_file():
            with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(store, timeout=5)) as db:
                cached = db.execute('SELECT count(*) FROM embedding_cache').fetchone()[0]
    first.kill()  # SIGKILL mid-index: no clean-up runs
    first.wait()
    assert 64 <= cached < 300, 'the first index was killed after some batches and before the last'

    provider = HashEmbedder()
    with open_index(tmp_path, ws, provider=provider) as index:
        index.sync()
        assert provider.calls <= 300 - cached  # what the killed run embedded came from the cache
        assert found(index, 'w0x')[0] == 'memory/note-000.md' and found(index, 'w299x')[0] == 'memory/note-299.md'
        assert index.status()['chunks'] == 300
