"""Writing memory (``MemoryIndex.write``, :mod:`memsift.index.notes`): on a real file system, a note lands in the
right file, after a blank line, findable by the next search in this process and in another; bad input, symlinks and
paths outside ``memory/`` are refused naming the argument, with nothing written; concurrent writers in several
processes lose no note and write none twice."""

import errno
import json
import os
import subprocess
import sys
import textwrap
import threading
from datetime import date, datetime

import pytest
from conftest import memory_config, paths, write

import memsift
from memsift.index import notes
from memsift.index.notes import MAX_NOTE_CHARS, append_note

pytestmark = pytest.mark.timeout(120)

DAY = datetime(2026, 11, 28, 23, 59)


def keyword_index(tmp_path, ws):
    return memsift.MemoryIndex(ws, memory_config(tmp_path, provider='none'))


@pytest.fixture
def index(tmp_path, ws):
    with keyword_index(tmp_path, ws) as index:
        index.sync()
        yield index


def leftovers(folder):
    """Temporary files a write left behind (there must be none)."""
    return [p.name for p in folder.rglob('*') if p.name.endswith('.tmp')]


# ---------------------------------------------------------------- where a note goes, and how


def test_a_note_goes_to_the_daily_file_of_now_after_a_blank_line(tmp_path):
    ws = tmp_path / 'ws'
    ws.mkdir()
    first = append_note(ws, 'Deploys moved to Thursdays.', now=DAY)
    assert first == {'path': 'memory/2026-11-28.md', 'startLine': 1, 'endLine': 1, 'chars': 27}
    second = append_note(ws, '\r\n\nThe on-call rota:\r\n- Ana\r\n- Bo\n\n  ', now=DAY)
    assert second == {'path': 'memory/2026-11-28.md', 'startLine': 3, 'endLine': 5, 'chars': 28}
    text = (ws / 'memory' / '2026-11-28.md').read_text()
    assert text == 'Deploys moved to Thursdays.\n\nThe on-call rota:\n- Ana\n- Bo\n'
    assert append_note(ws, 'next day', now=datetime(2026, 11, 29, 0, 1))['path'] == 'memory/2026-11-29.md'
    # No `now`: today's local date.
    assert append_note(ws, 'today')['path'] == f'memory/{date.today().isoformat()}.md'
    assert leftovers(ws) == []


def test_existing_content_is_kept_byte_for_byte_and_the_lines_are_memory_gets(tmp_path, index):
    daily = index.workspace / 'memory' / '2026-11-20.md'
    before = daily.read_bytes()
    assert not before.endswith(b'\n\n')
    written = index.write('Backoff capped at 30 s.', now=datetime(2026, 11, 20, 8))
    assert daily.read_bytes() == before + b'\nBackoff capped at 30 s.\n'
    got = index.get(written['path'], written['startLine'], written['endLine'] - written['startLine'] + 1)
    assert got['text'] == 'Backoff capped at 30 s.'
    # A file without a final newline, and one with a BOM (memory_get does not count it).
    write(index.workspace / 'memory' / 'bare.md', '\ufeffno newline at the end')
    written = index.write('appended', 'memory/bare.md')
    assert (index.workspace / 'memory' / 'bare.md').read_text() == '\ufeffno newline at the end\n\nappended\n'
    assert written['startLine'] == 3 and index.get('memory/bare.md', 3, 1)['text'] == 'appended'


def test_a_named_file_and_its_folders_are_created_with_the_files_permissions_kept(tmp_path, index):
    written = index.write('Rollback: `make rollback`.', './memory/projects/ops/deploy.md')
    assert written['path'] == 'memory/projects/ops/deploy.md'
    target = index.workspace / 'memory' / 'projects' / 'ops' / 'deploy.md'
    assert target.read_text() == 'Rollback: `make rollback`.\n'
    target.chmod(0o600)
    index.write('Second step.', 'memory\\projects\\ops\\deploy.md')  # backslashes read as /
    assert target.stat().st_mode & 0o777 == 0o600
    assert target.read_text().endswith('`.\n\nSecond step.\n')


def test_nul_and_lone_surrogates_are_replaced_so_the_file_stays_indexable(index):
    written = index.write('done \ud83d with a\x00nul and 😀', 'memory/odd.md')
    assert (index.workspace / 'memory' / 'odd.md').read_text() == 'done \ufffd with a\ufffdnul and 😀\n'
    assert written['chars'] == len('done \ufffd with a\ufffdnul and 😀')
    assert paths(index.search('nul', min_score=0)) == ['memory/odd.md']


# ---------------------------------------------------------------- findable at once, here and in another process


def test_the_next_search_finds_the_note_here_and_in_other_processes(tmp_path, index):
    written = index.write('The orion-7 cluster was upgraded to Kubernetes 1.31.', now=DAY)
    assert paths(index.search('orion-7 upgraded', min_score=0))[0] == written['path']
    # Another index on the same store (as another agent process opens it), without syncing itself.
    config = memory_config(tmp_path, provider='none', sync={'onSearch': False})
    with memsift.MemoryIndex(index.workspace, config) as other:
        assert paths(other.search('orion-7 upgraded', min_score=0))[0] == written['path']
    # Another process: the command line, told not to sync, sees the writer's commit.
    store = tmp_path / 'state' / 'main.sqlite'
    done = subprocess.run(
        [sys.executable, '-m', 'memsift', 'search', 'orion-7', '--workspace', str(index.workspace)]
        + ['--store', str(store), '--no-sync', '--json', '--min-score', '0'],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout)['results'][0]['path'] == written['path']


def test_without_sync_the_index_is_marked_dirty_and_the_next_search_catches_up(index):
    index.write('Quokka sightings logged weekly.', 'memory/wildlife.md', sync=False)
    assert index.dirty
    assert paths(index.search('quokka', min_score=0)) == ['memory/wildlife.md']


def test_a_closed_index_refuses_to_write(tmp_path, ws):
    index = keyword_index(tmp_path, ws)
    index.close()
    with pytest.raises(memsift.MemsiftError, match='closed'):
        index.write('x')
    assert not (ws / 'memory' / f'{date.today().isoformat()}.md').exists()


# ---------------------------------------------------------------- bad input: a typed error naming it, nothing written


@pytest.mark.parametrize(
    ('text', 'message'),
    [
        ('', 'text is empty'),
        (' \n\t\n ', 'text is empty'),
        ('x' * (10 * 1024 * 1024), 'text is 10,485,760 characters; a note holds at most 20,000'),
        ('x' * (MAX_NOTE_CHARS + 1), 'text is 20,001 characters'),
        (None, 'text must be a string'),
        (b'bytes', 'text must be a string'),
    ],
)
def test_bad_text_is_refused_naming_text_before_anything_is_written(tmp_path, text, message):
    ws = tmp_path / 'ws'
    ws.mkdir()
    with pytest.raises(memsift.InvalidInputError, match=message):
        append_note(ws, text, now=DAY)
    assert list(ws.iterdir()) == []


def test_a_note_of_exactly_the_limit_is_written(tmp_path):
    ws = tmp_path / 'ws'
    ws.mkdir()
    assert append_note(ws, 'x' * MAX_NOTE_CHARS, now=DAY)['chars'] == MAX_NOTE_CHARS


@pytest.mark.parametrize(
    ('path', 'message'),
    [
        ('../outside.md', 'must not hold ".."'),
        ('memory/../MEMORY.md', 'must not hold ".."'),
        ('memory/./a.md', 'must not hold'),
        ('memory//a.md', 'empty segments'),
        ('/etc/memory/a.md', 'is absolute'),
        ('MEMORY.md', 'is not under memory/'),
        ('notes/a.md', 'is not under memory/'),
        ('memory', 'is not under memory/'),
        ('memory/a.txt', 'is not a Markdown file'),
        ('memory/.md', 'is not a Markdown file'),
        ('memory/a.MD', 'is not a Markdown file'),
        ('memory/.git/a.md', 'inside .git/'),
        ('memory/a\x00.md', 'NUL'),
        ('memory/\ud800.md', 'unencodable'),
        (7, 'path must be a string'),
    ],
)
def test_paths_outside_memory_are_refused_naming_path(tmp_path, path, message):
    ws = tmp_path / 'ws'
    ws.mkdir()
    with pytest.raises(memsift.InvalidInputError, match=message) as caught:
        append_note(ws, 'note', path)
    assert str(caught.value).startswith('path ')
    assert list(ws.iterdir()) == []


def test_symlinks_on_the_way_are_refused_and_their_targets_untouched(tmp_path):
    ws, outside = tmp_path / 'ws', tmp_path / 'outside'
    write(outside / 'secret.md', 'outside\n')
    ws.mkdir()
    (ws / 'memory').symlink_to(outside)  # memory/ itself
    with pytest.raises(memsift.InvalidInputError, match='path memory/2026-11-28.md: memory is a symlink'):
        append_note(ws, 'note', now=DAY)
    with pytest.raises(memsift.InvalidInputError, match='memory is a symlink'):
        append_note(ws, 'note', 'memory/secret.md')
    (ws / 'memory').unlink()
    (ws / 'memory').mkdir()
    (ws / 'memory' / 'projects').symlink_to(outside)  # a folder below it
    with pytest.raises(memsift.InvalidInputError, match='memory/projects is a symlink'):
        append_note(ws, 'note', 'memory/projects/secret.md')
    (ws / 'memory' / 'notes.md').symlink_to(outside / 'secret.md')  # the file itself
    with pytest.raises(memsift.InvalidInputError, match='memory/notes.md is a symlink'):
        append_note(ws, 'note', 'memory/notes.md')
    (ws / 'memory' / 'dangling.md').symlink_to(outside / 'missing.md')  # a link to nothing: not created through
    with pytest.raises(memsift.InvalidInputError, match='memory/dangling.md is a symlink'):
        append_note(ws, 'note', 'memory/dangling.md')
    assert sorted(p.name for p in outside.iterdir()) == ['secret.md']
    assert (outside / 'secret.md').read_text() == 'outside\n'
    assert leftovers(ws) == [] and leftovers(outside) == []


def test_a_folder_where_the_file_goes_or_a_file_where_a_folder_goes_is_refused(tmp_path):
    ws = tmp_path / 'ws'
    (ws / 'memory' / 'taken.md').mkdir(parents=True)
    write(ws / 'memory' / 'plain', 'a file\n')
    with pytest.raises(memsift.InvalidInputError, match='memory/taken.md is a folder, not a file'):
        append_note(ws, 'note', 'memory/taken.md')
    with pytest.raises(memsift.InvalidInputError, match='memory/plain is a file, not a folder'):
        append_note(ws, 'note', 'memory/plain/a.md')


def test_a_file_memory_cannot_index_is_refused_unchanged(tmp_path, monkeypatch):
    ws = tmp_path / 'ws'
    (ws / 'memory').mkdir(parents=True)
    latin = ws / 'memory' / 'latin1.md'
    latin.write_bytes('café'.encode('latin-1'))
    with pytest.raises(memsift.InvalidInputError, match='not UTF-8'):
        append_note(ws, 'note', 'memory/latin1.md')
    binary = ws / 'memory' / 'binary.md'
    binary.write_bytes(b'a\x00b')
    with pytest.raises(memsift.InvalidInputError, match='looks binary'):
        append_note(ws, 'note', 'memory/binary.md')
    # A note that would make the file too large to index (16 MiB; lowered here).
    monkeypatch.setattr(notes, 'DEFAULT_MAX_FILE_BYTES', 40)
    write(ws / 'memory' / 'big.md', 'x' * 30 + '\n')
    with pytest.raises(memsift.InvalidInputError, match='would grow past'):
        append_note(ws, 'a note of a dozen characters', 'memory/big.md')
    assert latin.read_bytes() == 'café'.encode('latin-1') and binary.read_bytes() == b'a\x00b'
    assert (ws / 'memory' / 'big.md').read_text() == 'x' * 30 + '\n'
    assert leftovers(ws) == []


def test_a_refused_write_to_a_new_file_leaves_no_empty_file(tmp_path, monkeypatch):
    ws = tmp_path / 'ws'
    ws.mkdir()
    monkeypatch.setattr(notes, 'DEFAULT_MAX_FILE_BYTES', 3)
    with pytest.raises(memsift.InvalidInputError, match='would grow past'):
        append_note(ws, 'longer than three bytes', 'memory/new.md')
    assert not (ws / 'memory' / 'new.md').exists() and leftovers(ws) == []


def test_a_file_system_failure_is_a_store_error_naming_the_file_and_the_old_content_stays(tmp_path, monkeypatch):
    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'a.md', 'kept\n')

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(notes.os, 'replace', full)
    with pytest.raises(memsift.StoreError, match='cannot write memory/a.md: No space left on device'):
        append_note(ws, 'note', 'memory/a.md')
    monkeypatch.undo()
    assert (ws / 'memory' / 'a.md').read_text() == 'kept\n' and leftovers(ws) == []
    with pytest.raises(memsift.InvalidInputError, match='too long'):
        append_note(ws, 'note', f'memory/{"x" * 300}.md')


# ---------------------------------------------------------------- concurrent writers


WRITER = """
import sys
from memsift.index.notes import append_note
workspace, who = sys.argv[1], sys.argv[2]
for i in range(25):
    append_note(workspace, f'note {who}-{i}\\nsecond line of {who}-{i}', 'memory/shared.md')
"""


def notes_in(path):
    return [block.strip('\n') for block in path.read_text().split('\n\n') if block.strip()]


def test_writers_in_four_processes_lose_no_note_and_write_none_twice(tmp_path):
    ws = tmp_path / 'ws'
    write(ws / 'memory' / 'shared.md', '# Shared\n')
    procs = [
        subprocess.Popen([sys.executable, '-c', textwrap.dedent(WRITER), str(ws), f'p{n}'], stderr=subprocess.PIPE)
        for n in range(4)
    ]
    for proc in procs:
        errors = proc.communicate(timeout=100)[1]
        assert proc.returncode == 0, errors
    blocks = notes_in(ws / 'memory' / 'shared.md')
    expected = {f'note p{n}-{i}\nsecond line of p{n}-{i}' for n in range(4) for i in range(25)}
    assert blocks[0] == '# Shared' and len(blocks) == 101 and set(blocks[1:]) == expected
    assert leftovers(ws) == []
    # Each writer's notes in its own order (an append never lands before an earlier one).
    for n in range(4):
        mine = [b for b in blocks if b.startswith(f'note p{n}-')]
        assert mine == [f'note p{n}-{i}\nsecond line of p{n}-{i}' for i in range(25)]


def test_writers_in_threads_of_one_process_and_a_reader_never_see_half_a_note(tmp_path):
    ws = tmp_path / 'ws'
    ws.mkdir()
    target = ws / 'memory' / 'shared.md'
    torn, stop = [], threading.Event()

    def read():
        while not stop.is_set():
            if target.exists():
                text = target.read_text()
                if text and not text.endswith('line two\n'):
                    torn.append(text[-40:])

    def writes(who):
        for i in range(20):
            append_note(ws, f'{who}-{i} line one\n{who}-{i} line two', 'memory/shared.md')

    reader = threading.Thread(target=read)
    reader.start()
    threads = [threading.Thread(target=writes, args=(f't{n}',)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    reader.join()
    assert torn == []
    assert len(notes_in(target)) == 80 == len(set(notes_in(target)))
