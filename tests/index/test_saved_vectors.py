"""The vectors (with their HNSW graph) are saved beside the store and reopened without a rebuild; a process that
opens an index another process changed since the save catches up from the store."""

from __future__ import annotations

import pytest

import memsift.index.embeddings as embeddings_module
from tests.conftest import HashEmbedder, open_index, write

NOTES = {f'memory/2026-11-{day:02d}.md': f'Day {day}: the {word} review moved to room {day}.\n'
         for day, word in zip(range(1, 25), ['budget', 'deploy', 'design', 'hiring'] * 6)}  # fmt: skip


@pytest.fixture
def notes(tmp_path, monkeypatch):
    """The notes in ``tmp_path / 'ws'``, saved from 5 vectors (20k in production) and with the HNSW graph on from 5
    (off in production)."""
    monkeypatch.setattr(embeddings_module, 'SAVE_FROM', 5)
    monkeypatch.setattr(embeddings_module, 'ANN_THRESHOLD', 5)
    for path, text in NOTES.items():
        write(tmp_path / 'ws' / path, text)


def no_full_read(*args):
    raise AssertionError('the vectors were read from the store, not loaded from the saved file')


def hits(index, query):
    return [hit.path for hit in index.search(query, min_score=0).results]


def test_vectors_are_saved_at_close_and_loaded_without_reading_the_store(tmp_path, notes, monkeypatch):
    with open_index(tmp_path, provider=HashEmbedder()) as index:
        index.sync()
        assert index.embeddings.vectors.ann_active
        expected = hits(index, 'deploy review')
    saved = tmp_path / 'state' / 'main.vectors'
    assert saved.is_file()

    monkeypatch.setattr(embeddings_module, 'load_vectors', no_full_read)
    with open_index(tmp_path, provider=HashEmbedder()) as index:
        assert index.embeddings.vectors.ann_active and len(index.embeddings.vectors) == len(NOTES)
        assert hits(index, 'deploy review') == expected


def test_a_store_past_i8_from_is_saved_and_searched_exactly_without_a_graph(tmp_path, notes, monkeypatch):
    monkeypatch.setattr(embeddings_module, 'I8_FROM', 10)
    with open_index(tmp_path, provider=HashEmbedder()) as index:
        index.sync()
        vectors = index.embeddings.vectors
        assert (vectors.dtype, vectors.ann_active) == ('i8', False)
        expected = hits(index, 'deploy review')
    monkeypatch.setattr(embeddings_module, 'load_vectors', no_full_read)
    with open_index(tmp_path, provider=HashEmbedder()) as index:
        vectors = index.embeddings.vectors
        assert (vectors.dtype, vectors.ann_active, len(vectors)) == ('i8', False, len(NOTES))
        assert hits(index, 'deploy review') == expected


def test_a_newer_store_is_caught_up_from_an_older_vector_file(tmp_path, notes, monkeypatch):
    with open_index(tmp_path, provider=HashEmbedder()) as index:
        index.sync()
    saved = tmp_path / 'state' / 'main.vectors'
    before = saved.read_bytes()
    write(tmp_path / 'ws' / 'memory' / 'new.md', 'The zeppelin hangar opens on Monday.\n')
    (tmp_path / 'ws' / 'memory' / '2026-11-01.md').unlink()
    with open_index(tmp_path, provider=HashEmbedder()) as index:
        index.sync()
    saved.write_bytes(before)  # as if the process that synced was killed before it saved
    monkeypatch.setattr(embeddings_module, 'load_vectors', no_full_read)
    with open_index(tmp_path, provider=HashEmbedder()) as index:
        assert len(index.embeddings.vectors) == len(NOTES)  # one note gone, one new
        assert 'memory/new.md' in hits(index, 'zeppelin hangar')
        assert 'memory/2026-11-01.md' not in hits(index, 'budget review room 1')


def test_a_torn_vector_file_is_rebuilt_from_the_store(tmp_path, notes, monkeypatch):
    with open_index(tmp_path, provider=HashEmbedder()) as index:
        index.sync()
        expected = hits(index, 'hiring review')
    saved = tmp_path / 'state' / 'main.vectors'
    saved.write_bytes(saved.read_bytes()[:100])
    with open_index(tmp_path, provider=HashEmbedder()) as index:
        assert len(index.embeddings.vectors) == len(NOTES)
        assert hits(index, 'hiring review') == expected
    assert saved.stat().st_size > 100  # saved again, whole


def test_another_processs_write_reaches_these_vectors_as_its_changes(tmp_path, notes, monkeypatch):
    # SQLite keeps a change log as PostgreSQL does: a reader's vectors (and their HNSW graph) take the chunks a
    # writer added and removed, in place, instead of being read again from the store or the saved file.
    with open_index(tmp_path, provider=HashEmbedder()) as writer:
        writer.sync()
        with open_index(tmp_path, provider=HashEmbedder()) as reader:
            assert hits(reader, 'deploy review')
            vectors = reader.embeddings.vectors
            assert vectors.ann_active and len(vectors) == len(NOTES)
            monkeypatch.setattr(embeddings_module, 'load_vectors', no_full_read)
            monkeypatch.setattr(embeddings_module, 'catch_up', no_full_read)
            monkeypatch.setattr(embeddings_module.Embeddings, '_load_saved', no_full_read)
            write(tmp_path / 'ws' / 'memory' / 'new.md', 'The zeppelin hangar opens on Monday.\n')
            (tmp_path / 'ws' / 'memory' / '2026-11-01.md').unlink()
            writer.sync()
            assert 'memory/new.md' in hits(reader, 'zeppelin hangar')
            assert 'memory/2026-11-01.md' not in hits(reader, 'budget review room 1')
            assert reader.embeddings.vectors is vectors and len(vectors) == len(NOTES)  # one gone, one new
            assert reader.embeddings.generation == writer.store.generation


def test_another_processs_files_reach_this_ones_path_catalogue_as_changes(tmp_path, notes, monkeypatch):
    # A query naming a file finds a note another process added, and no longer one it deleted; the catalogue takes
    # just those files (its tables stay), and no path is read again.
    with open_index(tmp_path, provider=HashEmbedder()) as writer:
        writer.sync()
        with open_index(tmp_path, provider=HashEmbedder()) as reader:
            assert hits(reader, '2026-11-01.md')[0] == 'memory/2026-11-01.md'
            monkeypatch.setattr(type(reader.store), 'paths', no_full_read)
            tables = reader.freshness.catalogue()._tables
            write(tmp_path / 'ws' / 'memory' / '2026-11-03.md', 'Day 3: the design review moved again.\n')
            writer.sync()
            assert reader.freshness.catalogue()._tables is tables  # an edit: the same files, the same tables
            write(tmp_path / 'ws' / 'memory' / 'zeppelin.md', 'The zeppelin hangar opens on Monday.\n')
            (tmp_path / 'ws' / 'memory' / '2026-11-01.md').unlink()
            writer.sync()
            assert hits(reader, 'zeppelin.md')[0] == 'memory/zeppelin.md'
            assert 'memory/2026-11-01.md' not in hits(reader, '2026-11-01.md')[:1]
            catalogue = reader.freshness.catalogue()
            assert catalogue.generation == writer.store.generation and len(catalogue) == len(NOTES)
            assert catalogue._tables is tables and len(catalogue._added) == 1  # the new file: tables of its own
