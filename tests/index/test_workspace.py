"""Memory file discovery and safe reading (OpenClaw's listMemoryFiles rules)."""

import os
import stat
from pathlib import Path

import pytest

import memsift
from memsift.errors import SkippedFile
from memsift.index.workspace import (
    IGNORED_DIRS,
    MemoryFile,
    ScanAhead,
    list_memory_files,
    read_memory_file,
    scan_workspace,
)


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
        abs_path=str(tmp_path.absolute() / 'MEMORY.md'),
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


def _reference_listing(root, extra_roots, media):
    """The scan as the Python implementation (os.walk + lstat) did it, to check the Rust scan against."""
    seen, out = set(), []

    def add(path):
        info = os.lstat(path) if os.path.lexists(path) else None
        if info is not None and stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            out.append((Path(os.path.relpath(path, root)).as_posix(), info.st_mtime, info.st_size))

    def wanted(name, media):
        return name.endswith('.md') or (bool(media) and os.path.splitext(name)[1].lower() in media)

    def walk(top, media):
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in IGNORED_DIRS and stat.S_ISDIR(os.lstat(os.path.join(dirpath, d)).st_mode)
            )
            for name in sorted(filenames):
                if wanted(name, media):
                    add(os.path.join(dirpath, name))

    for name in ('MEMORY.md', 'memory.md'):
        add(os.path.join(root, name))
    if os.path.isdir(root / 'memory') and not os.path.islink(root / 'memory'):
        walk(root / 'memory', ())
    for extra in extra_roots:
        if os.path.isdir(extra) and not os.path.islink(extra):
            walk(extra, media)
        elif wanted(os.path.basename(extra), media):
            add(extra)
    return out


def test_scan_matches_the_os_walk_listing(tmp_path):
    """Order, relative paths, dedupe and st_mtime (bit for bit) agree with os.walk + lstat on a tree with links,
    tool folders, media, Unicode names and an extra path outside the workspace."""
    root, outside = tmp_path / 'ws', tmp_path / 'shared'
    names = [
        'memory/2026-11-28.md',
        'memory/笔记/会议.md',
        'memory/b/z.md',
        'memory/a/.hidden.md',
        'memory/x.txt',
        'memory/.git/c.md',
        'memory/venv/v.md',
        'MEMORY.md',
        'notes/n.md',
        'notes/deep/d.MD',
        'notes/img.PNG',
    ]
    for i, name in enumerate(names):
        write(root / name, f'note {i}\n' * i)
    write(outside / 'o.md', 'outside')
    (root / 'memory' / 'link.md').symlink_to(root / 'notes' / 'n.md')
    (root / 'memory' / 'dirlink').symlink_to(root / 'notes', target_is_directory=True)
    os.link(root / 'memory' / 'b' / 'z.md', root / 'memory' / 'a' / 'hard.md')
    extras = ['notes', str(outside), 'notes/n.md', 'missing']
    media = ('.png',)
    expected = _reference_listing(root, [root / 'notes', outside, root / 'notes' / 'n.md', root / 'missing'], media)
    found = [(f.path, f.mtime, f.size) for f in list_memory_files(root, extras, media)]
    assert found == expected
    assert [p for p, _, _ in found][:3] == ['MEMORY.md', 'memory/2026-11-28.md', 'memory/a/.hidden.md']
    assert '../shared/o.md' in [p for p, _, _ in found]


def test_a_scan_ahead_gives_its_listing_once_and_only_for_what_it_scanned(tmp_path):
    write(tmp_path / 'MEMORY.md', '# facts')
    write(tmp_path / 'notes' / 'a.md', 'a')
    listing = scan_workspace(tmp_path, ['notes'])
    ahead = ScanAhead(tmp_path, ['notes'], [])
    assert ahead.take(tmp_path / '.', ['notes'], []) == listing
    assert ahead.take(tmp_path, ['notes'], []) is None, 'once'
    assert ScanAhead(tmp_path, ['notes'], []).take(tmp_path, [], []) is None, 'other extra paths'
    assert ScanAhead(tmp_path, [], []).take(tmp_path, [], ['.png']) is None, 'other media'


def test_only_the_first_sync_takes_the_scan_ahead(tmp_path):
    write(tmp_path / 'MEMORY.md', '# facts\n\nThe deploy key lives in the vault.\n')
    config = {
        'agents': {
            'defaults': {
                'memorySearch': {'provider': 'none', 'store': {'path': str(tmp_path / 'state' / 'main.sqlite')}}
            }
        }
    }
    with memsift.MemoryIndex(tmp_path, config) as index:
        index.sync()
        index.freshness.scan_ahead = ScanAhead(tmp_path, [], [])
        assert index.sync().unchanged == 1
        assert index.freshness.scan_ahead is None, 'taken by the first sync'
        write(tmp_path / 'memory' / 'late.md', 'a quokka note\n')
        assert index.sync().added == ['memory/late.md'], 'a later sync scans again'


def test_extra_path_patterns_decide_which_files_count(tmp_path):
    """``extraPaths: [{path, pattern}]``: only files the glob matches (relative to the path) are indexed and
    readable; a pattern that reaches outside its path is refused, naming it."""
    from memsift import MemoryIndex, load_config

    ws, extra = tmp_path / 'ws', tmp_path / 'extra'
    write(ws / 'MEMORY.md', 'root note\n')
    for name in ('runbooks/a.md', 'runbooks/deep/b.md', 'runbooks/.hidden/c.md', 'other/o.md'):
        write(extra / name, f'kiwi {name}\n')
    write(extra / 'runbooks' / 'plain.txt', 'kiwi text\n')
    entries = [{'path': str(extra), 'pattern': 'runbooks/**/*.md'}]
    config = {
        'agents': {'defaults': {'memorySearch': {'extraPaths': entries, 'store': {'path': str(tmp_path / 'i.sqlite')}}}}
    }
    with MemoryIndex(ws, config) as index:
        index.sync()
        assert index.status()['files'] == 3
        found = {hit.path for hit in index.search('kiwi', min_score=0).results}
        assert found == {'../extra/runbooks/a.md', '../extra/runbooks/deep/b.md'}
        with pytest.raises(memsift.InvalidInputError, match='not an indexed memory file'):
            index.get('../extra/other/o.md')
    with pytest.raises(memsift.ConfigError, match=r'extraPaths\[0\].*reaches outside'):
        load_config({'memory': {'search': {'extraPaths': [{'path': str(extra), 'pattern': '../secrets/*.md'}]}}})
