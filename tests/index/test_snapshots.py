"""Snapshots of the derived indexes (``store.snapshots.path``): a new host starts from the newest one and catches up
from the change log instead of rebuilding, with the answers a rebuild gives; a snapshot of another model, agent or
schema, or one that does not verify, is refused by name and the index is rebuilt."""

from __future__ import annotations

import json

import pytest
from conftest import HashEmbedder, write

import memsift
import memsift.index.embeddings as embeddings_module
from memsift.index.pgstore import PgMemoryStore
from memsift.index.storebase import StoreBase

QUERIES = ['backoff retry', 'tabs spaces', 'doctor appointment', 'vault', 'day 7']


def host_config(tmp_path, dsn, host, **store):
    """A PostgreSQL config whose derived indexes live in ``tmp_path / host`` (a host of its own)."""
    return {'agents': {'defaults': {'memorySearch': {'store': {
        'backend': 'postgres', 'dsn': dsn, 'path': str(tmp_path / host / '{agentId}.sqlite'),
        'snapshots': {'path': str(tmp_path / 'snapshots'), **store},
    }}}}}  # fmt: skip


@pytest.fixture
def notes(tmp_path):
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\n\nPrefers tabs over spaces.\nThe deploy key lives in the team vault.\n')
    write(root / 'memory' / '2026-11-21.md', '# 2026-11-21\n\nThe physician moved the appointment to Friday.\n')
    for i in range(30):
        write(root / 'memory' / 'log' / f'2026-10-{i + 1:02d}.md', f'# day {i}\n\nbackoff retry note {i} car doctor\n')
    return root


def answers(index):
    return [[(h.path, h.start_line, round(h.score, 6)) for h in index.search(q).results] for q in QUERIES]


def no_rebuild(*args, **kwargs):
    raise AssertionError('the index was rebuilt from the store, not started from the snapshot')


def test_a_new_host_starts_from_the_snapshot_and_catches_up(tmp_path, pg_dsn, notes, monkeypatch):
    with memsift.MemoryIndex(notes, host_config(tmp_path, pg_dsn, 'a'), provider=HashEmbedder()) as first:
        first.sync()
        published = first.status()['snapshot']['published']
        assert published == first.store.generation
        # Written after the snapshot (published once an hour): the new host takes it from the change log.
        write(notes / 'memory' / 'zeppelin.md', 'The zeppelin hangar opens on Monday.\n')
        first.sync()
        assert first.status()['snapshot']['published'] == published
        expected_new = answers(first), [h.path for h in first.search('zeppelin hangar').results]

    monkeypatch.setattr(StoreBase, 'iter_chunks', no_rebuild)
    monkeypatch.setattr(embeddings_module, 'load_vectors', no_rebuild)
    monkeypatch.setattr(embeddings_module, 'catch_up', no_rebuild)
    config = host_config(tmp_path, pg_dsn, 'b')
    with memsift.MemoryIndex(notes, config, provider=HashEmbedder()) as second:
        assert (answers(second), [h.path for h in second.search('zeppelin hangar').results]) == expected_new
        snapshot = second.status()['snapshot']
        assert snapshot['loaded'] == published and snapshot['refused'] is None
        assert second.index.generation == second.store.generation


def test_a_snapshot_that_does_not_verify_is_refused_and_the_index_rebuilt(tmp_path, pg_dsn, notes):
    with memsift.MemoryIndex(notes, host_config(tmp_path, pg_dsn, 'a'), provider=HashEmbedder()) as first:
        first.sync()
        expected = answers(first)
        generation = first.store.generation
    folder = tmp_path / 'snapshots' / 'main' / f'{generation:012d}'
    meta = folder / 'bm25' / 'meta.json'
    meta.write_text(meta.read_text() + ' ')
    with memsift.MemoryIndex(notes, host_config(tmp_path, pg_dsn, 'b'), provider=HashEmbedder()) as second:
        assert answers(second) == expected
        snapshot = second.status()['snapshot']
        assert snapshot['loaded'] is None
        assert snapshot['refused'] == f'snapshot {generation}: bm25/meta.json does not match its digest'


@pytest.mark.parametrize('field', ['identity', 'agent', 'schema'])
def test_a_snapshot_of_another_model_agent_or_schema_is_refused_by_name(tmp_path, pg_dsn, notes, field):
    with memsift.MemoryIndex(notes, host_config(tmp_path, pg_dsn, 'a'), provider=HashEmbedder()) as first:
        first.sync()
        expected = answers(first)
        generation = first.store.generation
    manifest_path = tmp_path / 'snapshots' / 'main' / f'{generation:012d}' / 'manifest.json'
    manifest = json.loads(manifest_path.read_text())
    manifest[field] = (
        {**manifest['identity'], 'model': 'another-model'} if field == 'identity' else
        'ops' if field == 'agent' else 'postgres 1'
    )  # fmt: skip
    manifest_path.write_text(json.dumps(manifest))
    with memsift.MemoryIndex(notes, host_config(tmp_path, pg_dsn, 'b'), provider=HashEmbedder()) as second:
        assert answers(second) == expected
        refused = second.status()['snapshot']['refused']
    assert (
        refused
        == {
            'identity': f'snapshot {generation} was built with another identity (model another-model, not {HashEmbedder().model})',
            'agent': f'snapshot {generation} belongs to agent ops, not main',
            'schema': f'snapshot {generation} is of store schema postgres 1, not {PgMemoryStore.schema}',
        }[field]
    )


def test_snapshots_are_published_every_so_often_and_the_newest_two_kept(tmp_path, pg_dsn, notes):
    config = host_config(tmp_path, pg_dsn, 'a', everyMinutes=0)
    with memsift.MemoryIndex(notes, config, provider=HashEmbedder()) as index:
        for i in range(3):
            write(notes / 'memory' / f'extra-{i}.md', f'extra note {i}\n')
            index.sync()
            assert index.status()['snapshot']['published'] == index.store.generation
        kept = sorted(p.name for p in (tmp_path / 'snapshots' / 'main').iterdir())
        assert kept == [f'{index.store.generation - 1:012d}', f'{index.store.generation:012d}']
