"""Memory file discovery and safe reading (OpenClaw's listMemoryFiles rules)."""

import os

import pytest

import memsift
from memsift.errors import SkippedFile
from memsift.index.workspace import MemoryFile, list_memory_files, read_memory_file


def write(path, text='x'):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding='utf-8')
    return path


def paths(workspace, extra=()):
    return [f.path for f in list_memory_files(workspace, extra)]


def test_default_roots_and_nested_memory_folders(tmp_path):
    write(tmp_path / 'MEMORY.md')
    write(tmp_path / 'memory' / '2026-11-30.md')
    write(tmp_path / 'memory' / 'projects' / 'deep' / 'notes.md')
    write(tmp_path / 'memory' / 'image.png')
    write(tmp_path / 'README.md')  # not memory
    write(tmp_path / 'notes' / 'a.md')  # not memory unless configured
    assert paths(tmp_path) == ['MEMORY.md', 'memory/2026-11-30.md', 'memory/projects/deep/notes.md']


def test_lowercase_memory_md_is_memory_too(tmp_path):
    write(tmp_path / 'memory.md')
    assert paths(tmp_path) == ['memory.md']


def test_tool_folders_are_ignored(tmp_path):
    for folder in ('.git', 'node_modules', '.venv', '__pycache__'):
        write(tmp_path / 'memory' / folder / 'x.md')
    write(tmp_path / 'memory' / 'kept.md')
    assert paths(tmp_path) == ['memory/kept.md']


def test_extra_paths_files_folders_and_outside_the_workspace(tmp_path):
    workspace, outside = tmp_path / 'ws', tmp_path / 'shared-notes'
    write(workspace / 'docs' / 'a.md')
    write(workspace / 'docs' / 'b.txt')
    write(workspace / 'single.md')
    write(outside / 'team.md')
    found = paths(workspace, ['docs', 'single.md', str(outside), 'missing-folder'])
    assert found == ['docs/a.md', 'single.md', '../shared-notes/team.md']


def test_files_reached_twice_are_listed_once(tmp_path):
    write(tmp_path / 'memory' / 'a.md')
    assert paths(tmp_path, ['memory', 'memory/a.md', str(tmp_path / 'memory')]) == ['memory/a.md']


@pytest.mark.skipif(not hasattr(os, 'symlink'), reason='no symlinks on this platform')
def test_symlinks_are_skipped_and_loops_cannot_hang(tmp_path):
    target = write(tmp_path / 'elsewhere' / 'secret.md')
    write(tmp_path / 'memory' / 'real.md')
    (tmp_path / 'memory' / 'link.md').symlink_to(target)
    (tmp_path / 'memory' / 'linked-dir').symlink_to(tmp_path / 'elsewhere', target_is_directory=True)
    (tmp_path / 'memory' / 'loop').symlink_to(tmp_path / 'memory', target_is_directory=True)
    (tmp_path / 'MEMORY.md').symlink_to(target)
    assert paths(tmp_path) == ['memory/real.md']


def test_entries_carry_absolute_path_and_source(tmp_path):
    write(tmp_path / 'MEMORY.md')
    [entry] = list_memory_files(tmp_path)
    stat = (tmp_path / 'MEMORY.md').stat()
    assert entry == MemoryFile(
        path='MEMORY.md',
        abs_path=tmp_path.absolute() / 'MEMORY.md',
        mtime=stat.st_mtime,
        size=stat.st_size,
        source='memory',
    )


def test_read_returns_text_without_bom(tmp_path):
    path = tmp_path / 'a.md'
    path.write_bytes('\ufeff# 标题\n'.encode())
    assert read_memory_file(path) == '# 标题\n'


@pytest.mark.parametrize(
    ('content', 'reason'),
    [
        (b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR', 'binary'),
        ('caf\u00e9'.encode('latin-1'), 'not valid UTF-8 (byte 3)'),
    ],
)
def test_bad_files_are_skipped_with_a_reason_naming_the_file(tmp_path, content, reason):
    path = tmp_path / 'bad.md'
    path.write_bytes(content)
    with pytest.raises(SkippedFile) as info:
        read_memory_file(path)
    assert reason in info.value.reason
    assert str(path) in str(info.value)
    assert isinstance(info.value, memsift.MemsiftError)


def test_oversized_files_are_skipped(tmp_path):
    path = write(tmp_path / 'huge.md', 'x' * 2048)
    with pytest.raises(SkippedFile, match='too large'):
        read_memory_file(path, max_bytes=1024)
    assert read_memory_file(path, max_bytes=4096) == 'x' * 2048


def test_missing_file_is_skipped_not_crashed(tmp_path):
    with pytest.raises(SkippedFile, match='cannot be read'):
        read_memory_file(tmp_path / 'gone.md')
