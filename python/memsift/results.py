"""The shapes of the plain-dict answers users read: ``get``, ``write``, ``status`` and ``compact`` of a memory
index, and ``sessions_search`` / ``sessions_history`` of a session store. They are OpenClaw's JSON shapes (the keys
are its camelCase names), so a dict is what the tools and MCP send as they are; these types let a type checker and an
editor know the keys. ``memory_search`` returns :class:`~memsift.search.results.SearchResult`, a record whose
``to_dict()`` is its tool result.

>>> import tempfile, pathlib, memsift
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.')
>>> search = {'store': {'path': str(ws / 'index.sqlite')}}
>>> with memsift.MemoryIndex(ws, {'agents': {'defaults': {'memorySearch': search}}}) as index:
...     _ = index.sync()
...     got: MemoryGetResult = index.get('MEMORY.md')
>>> sorted(got) == sorted(MemoryGetResult.__required_keys__)
True
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = [
    'CompactReport',
    'HistoryMessage',
    'MemoryGetResult',
    'MemoryStatus',
    'MemoryWriteResult',
    'ReplicaInfo',
    'ReplicaState',
    'SessionHistory',
    'SessionHit',
    'SessionSearchResponse',
    'SyncState',
]

_MemoryGetFields = TypedDict(
    '_MemoryGetFields', {'path': str, 'from': int, 'lines': int, 'totalLines': int, 'text': str}
)


class MemoryGetResult(_MemoryGetFields, total=False):
    """``MemoryIndex.get`` (OpenClaw's ``memory_get``): ``lines`` lines of ``path`` from line ``from`` (1-based), of
    ``totalLines``; past 20,000 characters ``truncated`` is true and ``nextFrom`` says where to continue."""

    truncated: bool
    nextFrom: int


class SnapshotState(TypedDict):
    """``status()['snapshot']``: the folder snapshots of the derived indexes go to (``store.snapshots.path``), the
    generation this process started from (``None``: it built or had its own), why a snapshot was refused, the
    generation it published last, and why publishing failed."""

    path: str | None
    loaded: int | None
    refused: str | None
    published: int | None
    error: str | None


class ReplicaInfo(TypedDict):
    """One read replica in ``status()['replica']``: its DSN without the password, whether it answered when last
    asked, the generation it has replayed, how many generations it is behind the primary, its replay lag (ms, as
    the replica measures it: 0 when it has replayed all it received), whether it is still a standby (``False``:
    promoted by a failover), how many of this process's reads it served, and why reads do not go to it (or
    ``None``)."""

    dsn: str
    reachable: bool
    generation: int | None
    behind: int | None
    lagMs: float | None
    standby: bool
    reads: int
    problem: str | None


class ReplicaState(TypedDict):
    """``status()['replica']`` (``store.readDsn`` set): each replica, the DSN (masked) the last read went to, how
    many reads of this process each side served, the lag bound (``store.replicaMaxLagMs``), and a warning when reads
    went to the primary because a replica is unreachable or too far behind, or to a replica because the primary
    is unreachable (answers may then miss writes the replica has not received)."""

    replicas: list[ReplicaInfo]
    readsFrom: str
    replicaReads: int
    primaryReads: int
    maxLagMs: int
    warning: str | None


class SyncState(TypedDict):
    """``status()['sync']``: whether a background sync is running now, and what the last check of every file cost
    (``checkMs``; searches wait for a sync only when it is short)."""

    running: bool
    checkMs: float | None


class _MemoryStatusFields(TypedDict):
    backend: str
    provider: str
    model: str
    requestedProvider: str
    agentId: str
    files: int
    chunks: int
    dirty: bool
    workspaceDir: str
    dbPath: str
    store: dict[str, Any]
    indexPath: str | None
    extraPaths: list[str]
    sources: list[str]
    sourceCounts: list[dict[str, Any]]
    cache: dict[str, Any]
    disk: dict[str, Any]
    fts: dict[str, Any]
    vector: dict[str, Any]
    batch: dict[str, Any]
    generation: int
    identity: dict[str, Any]
    providerError: str | None
    providerReason: str | None
    fallback: dict[str, str] | None
    skipped: list[dict[str, str]]
    syncError: str | None
    sync: SyncState
    watching: bool
    rerank: dict[str, Any]
    watch: dict[str, Any]
    snapshot: SnapshotState
    replica: ReplicaState | None


class MemoryStatus(_MemoryStatusFields, total=False):
    """``MemoryIndex.status`` (OpenClaw's ``memory status --json`` plus memsift's own fields); ``issues`` with
    ``deep``."""

    issues: list[str]


class MemoryWriteResult(TypedDict):
    """``MemoryIndex.write`` (``memory_write``): the file the note went to, the lines it occupies there (1-based, as
    ``memory_get`` numbers them: ``get(path, startLine)`` reads it back) and its length in characters."""

    path: str
    startLine: int
    endLine: int
    chars: int


class CompactReport(TypedDict):
    """``MemoryIndex.compact``: ``disk`` before and after (as in :class:`MemoryStatus`), what was pruned and merged."""

    before: dict[str, Any]
    after: dict[str, Any]
    cacheRowsPruned: int
    segmentsMerged: int
    seconds: float


class _SessionHitFields(TypedDict):
    sessionKey: str
    timestamp: int
    role: str
    snippet: str
    score: float
    sessionId: str
    messageId: str


class SessionHit(_SessionHitFields, total=False):
    """One ``sessions_search`` hit; ``match`` (``all`` or ``partial``) in ``ranked`` mode."""

    match: str


class _SessionSearchFields(TypedDict):
    results: list[SessionHit]


class SessionSearchResponse(_SessionSearchFields, total=False):
    """``SessionStore.search`` (OpenClaw's ``sessions_search``): hits best first; ``truncated`` when more matched or
    the 32 KiB cap cut some; ``indexing`` and ``warning`` while a session waits for its index; ``debug`` when the
    vector leg reports something."""

    truncated: bool
    indexing: bool
    warning: str
    debug: dict[str, Any]


class HistoryMessage(TypedDict):
    """One message of ``sessions_history``: redacted, capped at 4,000 characters."""

    id: str
    role: str
    timestamp: int
    content: str


class _SessionHistoryFields(TypedDict):
    sessionKey: str
    sessionId: str
    messages: list[HistoryMessage]


class SessionHistory(_SessionHistoryFields, total=False):
    """``SessionStore.history`` (OpenClaw's ``sessions_history``); ``truncated`` when the 32 KiB cap dropped the
    oldest messages."""

    truncated: bool
