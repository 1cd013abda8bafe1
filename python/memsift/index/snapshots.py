"""Snapshots of the derived indexes (``store.snapshots.path``): what a new process or host needs to answer its first
search without rebuilding an agent's indexes from the store.

A process that synced publishes, under the writer lock, the keyword index folder as committed at the store's
generation and the vectors (with their HNSW graph) into ``<folder>/<agentId>/<generation>/``, with a manifest that
names the agent, the store's schema, the identity the index was built with (provider, model, dimensions, chunking)
and the sha256 of every file. The folder is written aside and renamed into place, so a reader sees a whole snapshot
or none; the newest :data:`KEEP` stay. A process whose keyword index is missing installs the newest snapshot that
matches its agent, schema and identity and whose digests verify, then catches up from the store's change log like
any process behind it. A snapshot that does not match or verify is refused by name (``status()['snapshot']``) and
the index is rebuilt from the store as before.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> (root / 'bm25').mkdir(); _ = (root / 'bm25' / 'meta.json').write_text('{}')
>>> published = publish(root / 'snaps', 'main', 7, {'model': 'm'}, 'schema', root / 'bm25', None)
>>> found, why = newest(root / 'snaps', 'main', {'model': 'm'}, 'schema')
>>> found.generation, why
(7, None)
>>> newest(root / 'snaps', 'main', {'model': 'other'}, 'schema')[1]
'snapshot 7 was built with another identity (model m, not other)'
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._record import record

if TYPE_CHECKING:
    from memsift._core import VectorStore

__all__ = ['KEEP', 'Snapshot', 'install', 'newest', 'publish']

FORMAT = 1
"""The manifest format this memsift writes and reads."""
KEEP = 2
"""Snapshots kept per agent: the newest, and the one before it for a reader still copying it."""
STALE_S = 3600.0
"""A staging folder this old was left by a process killed while copying (a live copy takes seconds)."""
_MANIFEST = 'manifest.json'
_VECTORS = 'vectors'
_KEYWORD = 'bm25'
_SKIPPED = ('.tantivy-writer.lock', '.tantivy-meta.lock', '.managed.json.lock')


@record(slots=False)
class Snapshot:
    """One published snapshot: its folder and its manifest."""

    folder: Path
    generation: int
    manifest: dict[str, Any]

    @property
    def has_vectors(self) -> bool:
        return _VECTORS in self.manifest['files']


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open('rb') as fh:
        for block in iter(lambda: fh.read(1 << 20), b''):
            sha.update(block)
    return sha.hexdigest()


def publish(
    folder: Path,
    agent: str,
    generation: int,
    identity: dict[str, Any] | None,
    schema: str,
    keyword_folder: Path,
    vectors: VectorStore | None,
) -> Path:
    """Publish the keyword index folder (committed at ``generation``, no writer open) and ``vectors`` as the agent's
    snapshot ``generation``; returns its folder. The caller holds the store's writer lock."""
    agent_folder = folder / agent
    target = agent_folder / f'{generation:012d}'
    if (target / _MANIFEST).is_file():
        return target
    _remove_stale(agent_folder, '.staging-*')
    staging = agent_folder / f'.staging-{generation}-{uuid.uuid4().hex}'
    try:
        (staging / _KEYWORD).mkdir(parents=True)
        for item in keyword_folder.iterdir():
            if item.is_file() and item.name not in _SKIPPED:
                shutil.copy2(item, staging / _KEYWORD / item.name)
        if vectors is not None:
            vectors.save(str(staging / _VECTORS), tag=generation)
        files = {str(path.relative_to(staging)): _digest(path) for path in sorted(staging.rglob('*')) if path.is_file()}
        manifest = {'format': FORMAT, 'agent': agent, 'generation': generation, 'schema': schema,
                    'identity': identity, 'files': files}  # fmt: skip
        (staging / _MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding='utf-8')
        try:
            os.rename(staging, target)
        except OSError:
            if not (target / _MANIFEST).is_file():  # another process published the same generation first: fine
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for old in sorted(p for p in agent_folder.iterdir() if p.name.isdigit())[:-KEEP]:
        shutil.rmtree(old, ignore_errors=True)
    return target


def _remove_stale(folder: Path, pattern: str) -> None:
    """Remove what a process killed while copying left (``pattern`` folders older than :data:`STALE_S`)."""
    if not folder.is_dir():
        return
    for leftover in folder.glob(pattern):
        with contextlib.suppress(OSError):
            if time.time() - leftover.stat().st_mtime > STALE_S:
                shutil.rmtree(leftover)


def _identity_difference(found: dict[str, Any] | None, wanted: dict[str, Any] | None) -> str:
    found, wanted = found or {}, wanted or {}
    for name in sorted(set(found) | set(wanted)):
        if found.get(name) != wanted.get(name):
            return f'{name} {found.get(name)}, not {wanted.get(name)}'
    return 'none'


def newest(
    folder: Path, agent: str, identity: dict[str, Any] | None, schema: str
) -> tuple[Snapshot | None, str | None]:
    """The newest snapshot of ``agent`` that this store can use, and why a newer one was refused (or ``None``)."""
    agent_folder = folder / agent
    if not agent_folder.is_dir():
        return None, None
    refused = None
    for candidate in sorted((p for p in agent_folder.iterdir() if p.name.isdigit()), reverse=True):
        try:
            manifest = json.loads((candidate / _MANIFEST).read_text(encoding='utf-8'))
            generation = int(manifest['generation'])
            files = manifest['files']
            if not isinstance(files, dict):
                raise TypeError('files')
        except (OSError, ValueError, KeyError, TypeError) as exc:
            refused = refused or f'snapshot {candidate.name} has no readable manifest ({type(exc).__name__})'
            continue
        why = None
        if manifest.get('format') != FORMAT:
            why = f'snapshot {generation} has format {manifest.get("format")}, this memsift reads {FORMAT}'
        elif manifest.get('agent') != agent:
            why = f'snapshot {generation} belongs to agent {manifest.get("agent")}, not {agent}'
        elif manifest.get('schema') != schema:
            why = f'snapshot {generation} is of store schema {manifest.get("schema")}, not {schema}'
        elif manifest.get('identity') != identity:
            difference = _identity_difference(manifest.get('identity'), identity)
            why = f'snapshot {generation} was built with another identity ({difference})'
        if why is None:
            return Snapshot(candidate, generation, manifest), refused
        refused = refused or why
    return None, refused


def install(snapshot: Snapshot, keyword_folder: Path, vectors_path: Path | None) -> str | None:
    """Copy ``snapshot`` into this process's keyword index folder (emptied first) and vector file, verifying each
    file's digest; returns why it was refused (a file missing or changed: nothing is left installed), else ``None``.
    """
    _remove_stale(keyword_folder.parent, f'{keyword_folder.name}.snapshot-*')
    staging = keyword_folder.with_name(f'{keyword_folder.name}.snapshot-{uuid.uuid4().hex}')
    try:
        staging.mkdir(parents=True)
        vectors_copy = None
        for name, digest in snapshot.manifest['files'].items():
            source = snapshot.folder / name
            if name == _VECTORS:
                if vectors_path is None:
                    continue
                vectors_copy = staging / _VECTORS
                target = vectors_copy
            elif name.startswith(f'{_KEYWORD}/') and '/' not in name[len(_KEYWORD) + 1 :]:
                target = staging / name[len(_KEYWORD) + 1 :]
            else:
                return f'snapshot {snapshot.generation} lists an unexpected file {name}'
            try:
                shutil.copyfile(source, target)
            except OSError as exc:
                return f'snapshot {snapshot.generation}: cannot read {name} ({exc.strerror or exc})'
            if _digest(target) != digest:
                return f'snapshot {snapshot.generation}: {name} does not match its digest'
        if vectors_copy is not None and vectors_path is not None:
            os.replace(vectors_copy, vectors_path)
        if keyword_folder.exists():
            shutil.rmtree(keyword_folder)
        os.rename(staging, keyword_folder)
        return None
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(staging)
