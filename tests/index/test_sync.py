"""Workspace sync into the store and the BM25 index: incremental, deletes, bad files, crash recovery."""

import os

import pytest

import memsift
from memsift.index.store import MemoryStore
from memsift.index.sync import ensure_index_current, sync_workspace


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding='utf-8')


def open_pair(tmp_path):
    return MemoryStore(tmp_path / 'state' / 'agent.sqlite'), memsift.Bm25Index(str(tmp_path / 'state' / 'bm25'))


def hit_paths(store, index, query):
    return sorted({row.path for row in store.chunks([i for i, _ in index.search(query, 50)])})


def test_first_sync_indexes_every_memory_file(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'Prefers tabs. ERR_CONN_RESET retried with backoff.')
    write(ws / 'memory' / '2026-11-30.md', '视频下载工具 BBDown 配置')
    store, index = open_pair(tmp_path)
    report = sync_workspace(store, index, ws)
    assert report.added == ['MEMORY.md', 'memory/2026-11-30.md']
    assert index.generation == store.generation == report.generation
    assert hit_paths(store, index, 'conn') == ['MEMORY.md']
    assert hit_paths(store, index, '视频下载') == ['memory/2026-11-30.md']


def test_unchanged_files_are_not_rewritten(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'alpha')
    store, index = open_pair(tmp_path)
    sync_workspace(store, index, ws)
    generation = store.generation
    report = sync_workspace(store, index, ws)
    assert (report.unchanged, report.added, report.updated, store.generation) == (1, [], [], generation)


def test_a_changed_file_replaces_only_its_chunks(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'alpha')
    write(ws / 'memory' / 'b.md', 'bravo')
    store, index = open_pair(tmp_path)
    sync_workspace(store, index, ws)
    write(ws / 'MEMORY.md', 'charlie')
    report = sync_workspace(store, index, ws)
    assert report.updated == ['MEMORY.md'] and report.unchanged == 1
    assert hit_paths(store, index, 'alpha') == []
    assert hit_paths(store, index, 'charlie') == ['MEMORY.md']
    assert index.num_docs == store.chunk_count() == 2


def test_deleted_files_leave_store_and_index(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'gone.md', 'delta')
    store, index = open_pair(tmp_path)
    sync_workspace(store, index, ws)
    (ws / 'memory' / 'gone.md').unlink()
    report = sync_workspace(store, index, ws)
    assert report.removed == ['memory/gone.md']
    assert hit_paths(store, index, 'delta') == [] and index.num_docs == 0


def test_a_file_turning_bad_is_skipped_with_its_reason_and_unindexed(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'a.md', 'echo')
    store, index = open_pair(tmp_path)
    sync_workspace(store, index, ws)
    (ws / 'memory' / 'a.md').write_bytes(b'caf\xe9 echo')
    report = sync_workspace(store, index, ws)
    assert 'not valid UTF-8' in report.skipped['memory/a.md']
    assert store.skipped() == report.skipped
    assert hit_paths(store, index, 'echo') == []


def test_an_index_behind_the_store_catches_up_or_is_rebuilt(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'foxtrot')
    store, index = open_pair(tmp_path)
    sync_workspace(store, index, ws)
    # A crash after the store write but before the index commit leaves the index one generation behind.
    store.replace_file('memory/new.md', 'memory', 'h', 0.0, 1, [(1, 1, 'golf', 'c')])
    del index  # the crashed process is gone, and with it the index writer lock
    reopened = memsift.Bm25Index(str(tmp_path / 'state' / 'bm25'))
    assert reopened.generation < store.generation
    assert ensure_index_current(store, reopened) is False  # the store's change log says what it missed
    assert reopened.generation == store.generation
    assert hit_paths(store, reopened, 'golf') == ['memory/new.md']
    assert hit_paths(store, reopened, 'foxtrot') == ['MEMORY.md']
    # An index from before what the log keeps (here: a clear, then a new note) is rebuilt.
    behind = reopened.generation
    store.clear()
    store.replace_file('memory/hotel.md', 'memory', 'h2', 0.0, 1, [(1, 1, 'hotel', 'c2')])
    assert reopened.generation == behind < store.generation
    assert ensure_index_current(store, reopened) is True
    assert hit_paths(store, reopened, 'hotel') == ['memory/hotel.md']
    assert hit_paths(store, reopened, 'foxtrot') == []
    assert ensure_index_current(store, reopened) is False


def test_force_rechunks_everything(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', '\n'.join(f'line {i} hotel' for i in range(200)))
    store, index = open_pair(tmp_path)
    first = sync_workspace(store, index, ws)
    report = sync_workspace(store, index, ws, tokens=50, overlap=0, force=True)
    assert report.updated == ['MEMORY.md']
    assert report.chunks_written > first.chunks_written
    assert index.num_docs == store.chunk_count() == report.chunks_written


def test_the_report_names_the_generation_the_sync_left_when_it_records_the_identity(tmp_path):
    """The first sync, and the one after a model change, also record the index identity (a write of its own): the
    report's generation is the store's after it, not one behind."""
    from conftest import HashEmbedder

    write(tmp_path / 'MEMORY.md', '# Facts\n- tabs over spaces\n')
    config = {
        'agents': {'defaults': {'memorySearch': {'store': {'path': str(tmp_path / 'index' / '{agentId}.sqlite')}}}}
    }
    for model in ('hash-v1', 'hash-v1', 'hash-v2'):
        with memsift.MemoryIndex(tmp_path, config, provider=HashEmbedder(model=model)) as index:
            report = index.sync()
            assert report.generation == index.store.generation == index.index.generation, model


def test_a_sync_prunes_the_removal_log_now_and_then(tmp_path, monkeypatch):
    from conftest import memory_config

    import memsift.index.storebase as storebase

    monkeypatch.setattr(storebase.StoreBase.prune_removed, '__defaults__', (-1.0,))  # every entry is too old
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'foxtrot')
    with memsift.MemoryIndex(ws, memory_config(tmp_path)) as index:
        index.sync()  # a process's first sync prunes (nothing to prune yet)
        write(ws / 'MEMORY.md', 'golf')
        index.sync()  # within the hour: no prune, the log keeps this write's removal
        assert index.store.changes_since(1).removed == [1]
    with memsift.MemoryIndex(ws, memory_config(tmp_path)) as index:
        write(ws / 'MEMORY.md', 'hotel')
        index.sync()  # another process's first sync prunes
        assert index.store.changes_since(1) is None  # the log no longer reaches back: a reader that far rebuilds


class Clock:
    """``time.time`` for the racy-clean tests: the stamps a sync records and compares, set by the test."""

    def __init__(self, monkeypatch, now):
        self.now = now
        monkeypatch.setattr('time.time', lambda: self.now)


def count_reads(monkeypatch):
    """The paths each sync reads (the Rust reader's calls), appended to the returned list."""
    import memsift.index.sync as sync

    reads, read = [], sync.prepare_files

    def counting(paths, *args):
        reads.extend(paths)
        return read(paths, *args)

    monkeypatch.setattr(sync, 'prepare_files', counting)
    return reads


def racy_workspace(tmp_path, mtime):
    ws = tmp_path / 'ws'
    write(ws / 'MEMORY.md', 'alpha')
    os.utime(ws / 'MEMORY.md', (mtime, mtime))
    return ws


@pytest.mark.parametrize(
    ('mtime', 'still_racy_at'),
    [(1_000_000.45, 1_000_000.52), (1_000_000.0, 1_000_001.5)],
    ids=['nanosecond-stamps', 'whole-second-stamps'],
)
def test_a_file_indexed_within_its_mtime_tick_is_read_again_until_a_read_outlives_the_tick(
    tmp_path, monkeypatch, mtime, still_racy_at
):
    clock = Clock(monkeypatch, mtime + 0.05)
    ws = racy_workspace(tmp_path, mtime)
    store, index = open_pair(tmp_path)
    reads = count_reads(monkeypatch)
    assert sync_workspace(store, index, ws).added == ['MEMORY.md'] and len(reads) == 1
    clock.now = still_racy_at  # an edit in the same tick could hide: read again, and the stamp stays racy
    assert sync_workspace(store, index, ws).unchanged == 1 and len(reads) == 2
    clock.now = mtime + 3  # read again, now past the tick: the file is restamped
    assert sync_workspace(store, index, ws).unchanged == 1 and len(reads) == 3
    assert store.file_stamps()['MEMORY.md'][1:] == (5, mtime + 3)
    clock.now += 60
    assert sync_workspace(store, index, ws).unchanged == 1 and len(reads) == 3  # clean: not read again


def test_an_edit_in_the_same_tick_as_the_indexing_is_found(tmp_path, monkeypatch):
    Clock(monkeypatch, 1_000_000.5)
    ws = racy_workspace(tmp_path, 1_000_000.48)
    store, index = open_pair(tmp_path)
    sync_workspace(store, index, ws)
    write(ws / 'MEMORY.md', 'gamma')  # same size, and the same mtime: only the racy rule can see it
    os.utime(ws / 'MEMORY.md', (1_000_000.48, 1_000_000.48))
    assert sync_workspace(store, index, ws).updated == ['MEMORY.md']
    assert hit_paths(store, index, 'gamma') == ['MEMORY.md'] and hit_paths(store, index, 'alpha') == []


def test_a_file_stamped_in_the_future_is_not_read_on_every_sync(tmp_path, monkeypatch):
    Clock(monkeypatch, 1_000_000.5)
    ws = racy_workspace(tmp_path, 1_000_000.5 + 86_400.25)  # an archive from a machine whose clock ran ahead
    store, index = open_pair(tmp_path)
    reads = count_reads(monkeypatch)
    sync_workspace(store, index, ws)
    assert sync_workspace(store, index, ws).unchanged == 1 and len(reads) == 1
    write(ws / 'MEMORY.md', 'gamma')  # the next write stamps today: the stat compare sees it
    assert sync_workspace(store, index, ws).updated == ['MEMORY.md']


def test_the_core_stamp_check_answers_as_the_python_compare_and_a_sync_given_its_diff_as_a_full_one(
    tmp_path, monkeypatch
):
    from memsift.index.sync import StampCheck, unchanged_report
    from memsift.index.workspace import MemoryScope, scan_workspace

    clock = Clock(monkeypatch, 1_000_100.0)
    ws, extra = tmp_path / 'ws', tmp_path / 'extra'
    for path in (ws / 'MEMORY.md', ws / 'memory' / 'a.md', ws / 'memory' / 'b.md', extra / 'c.md'):
        write(path, 'alpha')
        os.utime(path, (1_000_000.25, 1_000_000.25))
    scope = MemoryScope((str(extra),), (None,))
    store, index = open_pair(tmp_path)
    check = StampCheck()
    reads = count_reads(monkeypatch)

    def diff():
        python = unchanged_report(store, scan_workspace(ws, scope), 0.0)
        found = check.diff(store, ws, scope)
        assert found.empty == (python is not None and not store.skipped())
        return found

    def synced(**expected):
        """A sync given the check's diff reports what it did; a full sync after it finds nothing left to do."""
        before = len(reads)
        report = sync_workspace(store, index, ws, scope, diff=diff())
        for field, value in expected.items():
            assert getattr(report, field) == value, (field, report)
        assert len(reads) - before == report.read  # only the diff's files were read
        full = sync_workspace(store, index, ws, scope)
        assert not (full.added or full.updated or full.removed)
        return report

    assert [(rel, size) for rel, _, _, size in diff().changed] == [  # nothing indexed yet: all of them
        ('MEMORY.md', 5),
        ('memory/a.md', 5),
        ('memory/b.md', 5),
        (str(os.path.relpath(extra / 'c.md', ws)), 5),
    ]
    synced(added=['MEMORY.md', 'memory/a.md', 'memory/b.md', '../extra/c.md'])
    assert diff().empty and synced(unchanged=4, read=0).generation == store.generation
    write(ws / 'memory' / 'b.md', 'alpha beta')  # an edit
    write(ws / 'memory' / 'd.md', 'delta')  # an addition
    (extra / 'c.md').unlink()  # a removal, in an extra path
    synced(updated=['memory/b.md'], added=['memory/d.md'], removed=['../extra/c.md'], unchanged=2, read=2)
    assert hit_paths(store, index, 'delta') == ['memory/d.md'] and hit_paths(store, index, 'beta') == ['memory/b.md']
    write(ws / 'memory' / 'a.md', 'alpha gamma')  # synced by another writer: the check learns it from the log
    assert sync_workspace(store, index, ws, scope).updated == ['memory/a.md'] and diff().empty
    write(ws / 'memory' / 'e.md', 'epsilon')
    os.utime(ws / 'memory' / 'e.md', (clock.now - 0.05, clock.now - 0.05))  # indexed within its mtime tick
    synced(added=['memory/e.md'])
    assert [rel for rel, *_ in diff().changed] == ['memory/e.md']  # racy: read again
    clock.now += 60
    synced(unchanged=5, read=1)  # read past the tick: restamped without a new generation
    assert diff().empty  # and the check reads the new stamp
    (ws / 'memory' / 'f.md').write_bytes(b'\x00binary')  # skipped, with its reason, and tried again each time
    assert 'binary' in synced(read=1).skipped['memory/f.md']
    assert [rel for rel, *_ in diff().changed] == ['memory/f.md'] and store.skipped()
    (ws / 'memory' / 'f.md').unlink()
    synced()
    assert diff().empty and not store.skipped()  # a skipped file that is gone is forgotten
    assert check.diff(store, ws, MemoryScope((str(extra),), ('*.md',))) is None  # patterns: Python's to filter


def test_a_check_of_the_files_events_named_answers_as_a_check_of_every_file(tmp_path):
    from memsift.index.sync import StampCheck
    from memsift.index.workspace import MemoryScope

    ws, extra = tmp_path / 'ws', tmp_path / 'extra'
    for path in (ws / 'MEMORY.md', ws / 'memory' / 'a.md', ws / 'memory' / 'b.md', extra / 'c.md'):
        write(path, 'alpha')
        os.utime(path, (1_000_000.25, 1_000_000.25))  # long before the sync: not racy
    scope = MemoryScope((str(extra),), (None,))
    store, index = open_pair(tmp_path)
    sync_workspace(store, index, ws, scope)
    check = StampCheck()
    write(ws / 'MEMORY.md', 'alpha, edited')
    write(ws / 'memory' / 'new.md', 'new')
    (ws / 'memory' / 'b.md').unlink()
    write(extra / 'c.md', 'gamma, edited')
    write(ws / 'memory' / '.git' / 'x.md', 'ignored folder')
    write(ws / 'memory' / 'n.txt', 'not Markdown')
    write(ws / 'memory' / 'UPPER.MD', 'the scan takes *.md as written')
    named = [ws / 'MEMORY.md', ws / 'memory' / 'new.md', ws / 'memory' / 'b.md', extra / 'c.md',
             ws / 'memory' / '.git' / 'x.md', ws / 'memory' / 'n.txt', tmp_path / 'elsewhere.md',
             ws / 'memory' / 'UPPER.MD']  # fmt: skip
    every = check.diff(store, ws, scope)
    only = check.diff(store, ws, scope, named=named)
    assert sorted(rel for rel, *_ in only.changed) == sorted(rel for rel, *_ in every.changed)
    assert only.gone == every.gone == ['memory/b.md']
    assert sorted(rel for rel, *_ in every.changed) == ['../extra/c.md', 'MEMORY.md', 'memory/new.md']
    assert check.diff(store, ws, scope, named=[ws / 'memory' / 'a.md']).empty  # named, but unchanged
    # What the scan alone can judge: a file reached through a symlinked folder, a file with another hard link.
    write(tmp_path / 'other' / 'x.md', 'linked')
    (ws / 'memory' / 'linked').symlink_to(tmp_path / 'other')
    assert check.diff(store, ws, scope, named=[ws / 'memory' / 'linked' / 'x.md']) is None
    os.link(ws / 'memory' / 'a.md', ws / 'memory' / 'hard.md')
    assert check.diff(store, ws, scope, named=[ws / 'memory' / 'hard.md']) is None


def test_the_core_check_answers_over_a_symlink_loop_a_future_mtime_and_a_folder_gone(tmp_path):
    from memsift.index.sync import StampCheck
    from memsift.index.workspace import MemoryScope

    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'a.md', 'alpha')
    os.utime(ws / 'memory' / 'a.md', (1_000_000.25, 1_000_000.25))
    write(ws / 'memory' / 'future.md', 'from a clock that ran ahead')
    ahead = os.stat(ws / 'memory' / 'a.md').st_mtime + 10 * 365 * 86_400 + 0.5
    os.utime(ws / 'memory' / 'future.md', (ahead, ahead))
    (ws / 'memory' / 'loop').symlink_to(ws / 'memory')  # never followed
    (ws / 'memory' / 'self.md').symlink_to(ws / 'memory' / 'self.md')
    write(ws / 'memory' / 'gone' / 'g.md', 'in a folder that goes')
    os.utime(ws / 'memory' / 'gone' / 'g.md', (1_000_000.25, 1_000_000.25))
    store, index = open_pair(tmp_path)
    assert sorted(sync_workspace(store, index, ws).added) == ['memory/a.md', 'memory/future.md', 'memory/gone/g.md']
    check = StampCheck()
    assert check.diff(store, ws, MemoryScope()).empty  # the future mtime is not racy; the links are not memory
    import shutil

    shutil.rmtree(ws / 'memory' / 'gone')
    diff = check.diff(store, ws, MemoryScope())
    assert diff.gone == ['memory/gone/g.md'] and not diff.changed
    assert sync_workspace(store, index, ws, diff=diff).removed == ['memory/gone/g.md']
    assert check.diff(store, ws, MemoryScope()).empty


def test_stamps_saved_by_one_check_start_the_next_process_and_a_foreign_copy_is_not_trusted(tmp_path):
    from memsift._core import FileStamps
    from memsift.index.sync import StampCheck
    from memsift.index.workspace import MemoryScope

    ws, saved = tmp_path / 'ws', tmp_path / 'index.stamps'
    for name in ('a', 'b'):
        write(ws / 'memory' / f'{name}.md', name)
        os.utime(ws / 'memory' / f'{name}.md', (1_000_000.25, 1_000_000.25))
    store, index = open_pair(tmp_path)
    sync_workspace(store, index, ws)
    assert StampCheck(saved).diff(store, ws, MemoryScope()).empty and saved.is_file()
    write(ws / 'memory' / 'b.md', 'b, edited by a process that saved no stamps')
    os.utime(ws / 'memory' / 'b.md', (1_000_050.25, 1_000_050.25))
    sync_workspace(store, index, ws)
    assert StampCheck(saved).diff(store, ws, MemoryScope()).empty  # the saved copy, brought up to date by the log
    # A copy whose generation this store also has, from another store: its files do not add up, so it is not used.
    foreign = FileStamps()
    foreign.extend([('memory/a.md', 1_000_000.25, 1, 1_000_100.0)])
    foreign.save(saved, store.generation)
    write(ws / 'memory' / 'c.md', 'c')
    os.utime(ws / 'memory' / 'c.md', (1_000_000.25, 1_000_000.25))
    assert [rel for rel, *_ in StampCheck(saved).diff(store, ws, MemoryScope()).changed] == ['memory/c.md']
    saved.write_bytes(b'damaged')
    assert [rel for rel, *_ in StampCheck(saved).diff(store, ws, MemoryScope()).changed] == ['memory/c.md']
    check = StampCheck(saved)
    assert check.diff(store, ws, MemoryScope()).changed and saved.read_bytes() != b'damaged'  # saved again
    store.clear()  # a reset: the log no longer reaches back, every file is read again
    assert len(check.diff(store, ws, MemoryScope()).changed) == 3
    assert len(StampCheck(saved).diff(store, ws, MemoryScope()).changed) == 3


def test_a_new_processs_path_catalogue_comes_from_the_saved_stamps_moved_along_the_log(tmp_path, monkeypatch):
    import shutil

    from memsift._core import FileStamps
    from memsift.index.storebase import StoreBase
    from memsift.index.workspace import MemoryScope

    ws = tmp_path / 'ws'
    for name in ('alpha', 'beta'):
        write(ws / 'memory' / f'{name}.md', f'{name} notes')
    config = {'agents': {'defaults': {'memorySearch': {'store': {'path': str(tmp_path / 'index.sqlite')}}}}}
    quiet = {
        'agents': {
            'defaults': {
                'memorySearch': {
                    **config['agents']['defaults']['memorySearch'],
                    'sync': {'onSearch': False, 'watch': False},
                }
            }
        }
    }
    with memsift.MemoryIndex(ws, config) as index:
        index.sync()
        index.freshness.stamp_check.diff(index.freshness.store, ws, MemoryScope())  # saves the stamps
    saved = tmp_path / 'index.stamps'
    assert saved.is_file()
    shutil.copy(saved, tmp_path / 'before.stamps')
    write(ws / 'memory' / 'gamma.md', 'gamma notes')
    (ws / 'memory' / 'beta.md').unlink()
    with memsift.MemoryIndex(ws, config) as index:
        index.sync()
    shutil.copy(tmp_path / 'before.stamps', saved)  # as a process that saved none since would leave them

    def no_full_read(store):
        raise AssertionError('every path read from the store')

    with monkeypatch.context() as patch:
        patch.setattr(StoreBase, 'paths', no_full_read)
        with memsift.MemoryIndex(ws, quiet) as index:
            catalogue = index.freshness.catalogue()
            assert (len(catalogue), 'memory/gamma.md' in catalogue, 'memory/beta.md' in catalogue) == (2, True, False)
            assert catalogue.exact('gamma.md') == {'memory/gamma.md': 2}
            assert index.search('gamma.md').results[0].path == 'memory/gamma.md'
    # Stamps of another store at this store's generation: their files do not add up, so every path is read.
    with memsift.MemoryIndex(ws, quiet) as index:
        foreign = FileStamps()
        foreign.extend([('memory/other.md', 1.0, 1, 2.0)])
        foreign.save(saved, index.freshness.store.generation)
        catalogue = index.freshness.catalogue()
        assert (len(catalogue), 'memory/other.md' in catalogue, 'memory/alpha.md' in catalogue) == (2, False, True)
