"""The semantic leg of ranked ``sessions_search``: transcript messages embedded in the background, searched by
cosine, merged with the keyword leg.

When the store is given an embedding provider (:meth:`~memsift.sessions.SessionStore.use_embeddings`; the agent
tools pass the memory index's provider, through its embedding cache), a background thread embeds every indexed
message (its searchable text: secrets masked, each mask one constant) that has no vector for that provider yet, in
batches, and stores the vectors in the ``message_vectors`` table, so another process or a restart never embeds them
again. Appends, imports and rebuilds wake it up, and it looks again every minute for messages other processes wrote;
it never runs on the append path. Searches keep an in-memory :class:`memsift._core.VectorStore` caught up from
that table.

Messages are embedded as a reader sees them: a short turn ("Yes, twice!") after the end of the message it answers.
A search embeds the question (outside the store's lock), takes the nearest messages of the visible sessions and
merges them with the keyword leg's ranked hits in the core (:func:`memsift._core.fuse_messages`): each leg scaled
over its own candidates, ``vector_weight · cosine + text_weight · keyword``, and every message lifted by the best
other message of its session. A provider outage or a question the model cannot read
(the embedded English-only model and a CJK question) leaves the keyword answer, with the reason in the response's
``debug.vectorSkipped``; messages not embedded yet take part through the keyword leg only.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from memsift._core import VectorStore, fuse_messages
from memsift.embedding import EmbeddingProvider, embed_documents, embed_query
from memsift.errors import MemsiftError, ProviderError
from memsift.sessions.database import Database, Sql
from memsift.sessions.events import body_text
from memsift.sessions.query import session_filter

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ['EMBED_BATCH', 'TRANSCRIPT_WEIGHTS', 'MessageVectors']

EMBED_BATCH = 64
RECHECK_S = 60.0
RETRY_S, RETRY_MAX_S = 5.0, 300.0
"""After a failed batch the thread waits, doubling from 5 s up to 5 minutes while the provider stays down."""
EXACT_UP_TO = 2_000_000
"""Messages searched exactly (f16 SIMD scan) rather than through an HNSW graph."""
VECTOR_CANDIDATES = 200
TRANSCRIPT_WEIGHTS = (0.5, 0.5)
"""``(vector_weight, text_weight)`` of the merge. Not memory's ``query.hybrid`` (OpenClaw's 0.7 / 0.3, chosen for
notes): a conversation's turns are short and a small model's cosines rank them loosely, so its leg weighs as much as
the keywords'. On LoCoMo-dev turn / session recall@5 with 0.7 / 0.3 against 0.5 / 0.5: MiniLM 0.665 / 0.868 against
0.728 / 0.892 (keyword only 0.690 / 0.887), bge-small 0.721 / 0.886 against 0.736 / 0.901, multilingual-e5-small
0.691 / 0.904 against 0.729 / 0.904 (``benches/conversations.py --locomo``)."""
_log = logging.getLogger('memsift.sessions')
_WAITING = Sql(
    'SELECT f.rowid, e.body FROM message_fts f JOIN events e ON e.seq = f.rowid '
    'LEFT JOIN message_vectors v ON v.seq = f.rowid AND v.key = :key '
    'WHERE f.rowid > :after AND v.seq IS NULL ORDER BY f.rowid LIMIT :batch',
    'SELECT f.seq, e.body FROM session_message_fts f JOIN session_events e ON e.agent = f.agent AND e.seq = f.seq '
    'LEFT JOIN session_message_vectors v ON v.agent = f.agent AND v.seq = f.seq AND v.key = :key '
    'WHERE f.agent = :agent AND f.seq > :after AND v.seq IS NULL ORDER BY f.seq LIMIT :batch',
)


CONTEXT_WORDS = 12
"""Turns shorter than this are embedded after the end of the message before them (see ``_reader_view``)."""
CONTEXT_CHARS = 400
VIEW = 'turn1'
"""Names how message text is embedded (part of the stored vectors' key): a change re-embeds every message."""
# The message before `seq` in its session (the nearest lower seq: sessions are appended in order, so the backward
# scan stops within a few rows unless many sessions interleave).
_PREVIOUS = Sql(
    'SELECT e.body FROM message_fts f JOIN events e ON e.seq = f.rowid '
    'WHERE f.rowid < :seq AND f.session_key = (SELECT session_key FROM events WHERE seq = :seq) '
    'ORDER BY f.rowid DESC LIMIT 1',
    'SELECT e.body FROM session_message_fts f JOIN session_events e ON e.agent = f.agent AND e.seq = f.seq '
    'WHERE f.agent = :agent AND f.seq < :seq AND f.session_key = '
    '(SELECT session_key FROM session_events WHERE agent = :agent AND seq = :seq) ORDER BY f.seq DESC LIMIT 1',
)


class MessageVectors:
    """Background embedding and vector search of one store's messages (see the module docstring).

    Args:
        db: The store's connection (every use is under ``lock``).
        lock: The store's lock.
        transaction: Opens a write transaction on ``db`` (the store writer's).
        redact: The searchable form of message text (secrets masked, each mask one constant), which is embedded.
        provider: The embedding provider.
        embed: Embeds message texts (default ``embed_documents(provider, texts)``; the agent tools pass the
            memory index's cached embedding).
        weights: ``(vector_weight, text_weight)`` of the merge (:data:`TRANSCRIPT_WEIGHTS`).
        background: Start the embedding thread (``False``: only :meth:`embed_pending` embeds, e.g. in a bench).
    """

    def __init__(
        self,
        db: Database,
        lock: threading.RLock,
        transaction: Callable[[], AbstractContextManager[None]],
        redact: Callable[[str], str],
        provider: EmbeddingProvider,
        embed: Callable[[list[str]], npt.NDArray[np.float32]] | None = None,
        weights: tuple[float, float] = TRANSCRIPT_WEIGHTS,
        *,
        background: bool = True,
    ) -> None:
        self._db, self._lock, self._transaction, self._redact = db, lock, transaction, redact
        self.provider = provider
        self._embed = embed or (lambda texts: embed_documents(provider, texts))
        self.weights = weights
        self.key = ''
        self._vectors: VectorStore | None = None  # made by _ready (the provider's dims may need a request)
        self._loaded = 0  # message_vectors.n already in _vectors
        self.error: str | None = None
        """Why the last background batch failed (``None`` after a good one)."""
        self._made = threading.Lock()  # _ready runs in the embedding thread and in searches
        self._resume = 0  # rowid the next woken scan starts after
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._wake.set()
        self._thread = threading.Thread(target=self._run, name='memsift-message-embed', daemon=True)
        if background:
            self._thread.start()

    # ------------------------------------------------------------------ background embedding

    def _ready(self) -> VectorStore:
        """The vector store, made on first use: ``provider.dims`` may probe a remote provider."""
        with self._made:
            if self._vectors is None:
                try:
                    dims = int(self.provider.dims)
                except MemsiftError:
                    raise
                except Exception as exc:  # a provider that cannot tell its dimension is an unavailable provider
                    raise ProviderError(
                        f'embedding provider {self.provider.id!r}: cannot tell its dimension: {exc}'
                    ) from exc
                self.key = f'{self.provider.id}/{self.provider.model}/{dims}/{VIEW}'
                # Exact f16 search: no index build on the first search (an HNSW graph of 100k vectors takes
                # minutes on 2 cores), and a 100k-message scan stays at a few milliseconds.
                self._vectors = VectorStore(dims, dtype='f16', ann_threshold=EXACT_UP_TO)
            return self._vectors

    def wake(self, *, everywhere: bool = False) -> None:
        """New messages may wait for vectors: appended ones (past what the thread has seen), or, ``everywhere``,
        any (a rebuilt branch re-activates older messages)."""
        if everywhere:
            self._resume = 0
        self._wake.set()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def pending(self) -> int:
        """Indexed messages without a vector from this provider."""
        self._ready()
        with self._lock:
            sql = Sql(
                'SELECT count(*) FROM message_fts f LEFT JOIN message_vectors v ON v.seq = f.rowid AND v.key = :key '
                'WHERE v.seq IS NULL',
                'SELECT count(*) FROM session_message_fts f LEFT JOIN session_message_vectors v '
                'ON v.agent = f.agent AND v.seq = f.seq AND v.key = :key WHERE f.agent = :agent AND v.seq IS NULL',
            )
            return self._db.execute(sql, {'key': self.key}).fetchone()[0]

    def _run(self) -> None:
        backoff = RETRY_S
        while not self._stop.is_set():
            if not self._wake.wait(RECHECK_S):  # now and then, every message: another process may have added some
                self._resume = 0
            self._wake.clear()
            # An append wakes a scan from where the last one stopped, not from the start: each batch query holds
            # the store's lock, and a scan of 100k rows that finds nothing would hold it for tens of milliseconds.
            after = self._resume
            while not self._stop.is_set():
                try:
                    after, _ = self._embed_batch(after)
                    self._resume = max(self._resume, after)
                    backoff = RETRY_S
                except Exception as exc:  # an outage (or a bug): keep the keyword answer, never let the thread die
                    self.error = str(exc)
                    _log.warning('embedding transcript messages failed (retrying in %.0f s): %s', backoff, exc)
                    self._stop.wait(backoff)
                    backoff = min(backoff * 2, RETRY_MAX_S)
                    self._wake.set()
                    break
                if after < 0:
                    break

    def embed_pending(self) -> int:
        """Embed every message still waiting, in this thread; returns how many were embedded (for tests and
        benches; the background thread does the same)."""
        done, after = 0, 0
        while after >= 0:
            after, embedded = self._embed_batch(after)
            done += embedded
        return done

    def _embed_batch(self, after: int) -> tuple[int, int]:
        """Embed the next batch of messages past rowid ``after`` that lack a vector; returns the rowid to go on
        from (-1 when none is left) and how many vectors were stored."""
        import numpy as np

        self._ready()
        with self._lock:
            rows = self._db.execute(_WAITING, {'key': self.key, 'after': after, 'batch': EMBED_BATCH}).fetchall()
        if not rows:
            return -1, 0
        with self._lock:
            texts = self._reader_view(rows)
        vectors = self._embed(texts)
        with self._lock, self._transaction():
            stored = self._db.executemany(
                Sql(
                    'INSERT OR IGNORE INTO message_vectors (seq, key, vector) VALUES (:seq, :key, :vector)',
                    'INSERT INTO session_message_vectors (agent, seq, key, vector) '
                    'VALUES (:agent, :seq, :key, :vector) ON CONFLICT (agent, seq, key) DO NOTHING',
                ),
                [
                    {'seq': seq, 'key': self.key, 'vector': vector.astype(np.float32).tobytes()}
                    for (seq, _), vector in zip(rows, vectors)
                ],
            )
        self.error = None
        return rows[-1][0], stored

    def _reader_view(self, rows: list[tuple[int, str]]) -> list[str]:
        """Each message's text as it is embedded: a short turn ("Yes, twice! It was amazing.") means little
        without what it answers, so a turn of fewer than :data:`CONTEXT_WORDS` words follows the end of the
        previous message of its session (under the lock: it reads the store)."""
        texts = []
        for seq, body in rows:
            # Each message in its searchable form before any cut: a secret cut in two would escape its rule.
            text = self._redact(body_text(body))
            if len(text.split()) < CONTEXT_WORDS:
                found = self._db.execute(_PREVIOUS, {'seq': seq}).fetchone()
                previous = self._redact(body_text(found[0])) if found else ''
                if previous:
                    text = f'{previous[-CONTEXT_CHARS:]}\n{text}'
            texts.append(text)
        return texts

    # ------------------------------------------------------------------ search

    def query_vector(self, question: str, debug: dict[str, Any]) -> npt.NDArray[np.float32] | None:
        """The question's embedding, or None with the reason in ``debug['vectorSkipped']`` (call outside the
        store's lock: it may wait on the provider)."""
        import numpy as np

        handles = getattr(self.provider, 'handles', None)
        if handles is not None and not handles(question):
            debug['vectorSkipped'] = f'{self.provider.id} model does not cover the question language'
            return None
        try:
            self._ready()
            vector = embed_query(self.provider, question)
        except MemsiftError as exc:  # ProviderError included: embed_query wraps what a provider raises
            debug['vectorSkipped'] = f'the embedding provider failed: {exc}'
            return None
        return vector if np.any(vector) else None

    def nearest(
        self, vector: npt.NDArray[np.float32], searchable: Collection[str], hidden: Collection[str]
    ) -> dict[int, float]:
        """Message seq -> cosine (clamped at 0) of the messages nearest ``vector`` among the ``searchable``
        sessions (``hidden``: every other session; call under the store's lock, in its read transaction)."""
        import numpy as np

        store = self._vectors
        if store is None:
            return {}
        fresh = self._db.execute(
            Sql(
                'SELECT n, seq, vector FROM message_vectors WHERE key = :key AND n > :after ORDER BY n',
                'SELECT n, seq, vector FROM session_message_vectors WHERE agent = :agent AND key = :key AND n > :after '
                'ORDER BY n',
            ),
            {'key': self.key, 'after': self._loaded},
        ).fetchall()
        if fresh:
            matrix = np.frombuffer(b''.join(r[2] for r in fresh), dtype=np.float32).reshape(len(fresh), -1)
            store.add(np.array([r[1] for r in fresh], dtype=np.uint64), matrix)
            self._loaded = fresh[-1][0]
        if not len(store):
            return {}
        ids, scores = store.search(vector, VECTOR_CANDIDATES)
        near = dict(zip(ids.tolist(), scores.tolist(), strict=True))
        where, only = session_filter(searchable, hidden)
        sql = Sql(
            'SELECT rowid FROM message_fts WHERE rowid IN (SELECT value FROM json_each(:seqs)) {where}',
            'SELECT seq FROM session_message_fts WHERE agent = :agent AND seq = ANY(:seqs) {where}',
        )
        visible = self._db.execute(sql.format(where=where), {'seqs': list(near), **only}).fetchall()
        return {seq: max(0.0, near[seq]) for (seq,) in visible}

    def merge(
        self, keyword: dict[int, float], vector: dict[int, float], sessions: dict[int, str]
    ) -> list[tuple[int, float]]:
        """``(seq, score)`` best first, from both legs' candidates (``sessions``: each one's session key), through
        the core's :func:`memsift._core.fuse_messages`: each leg scaled over its own candidates, weighted by
        ``weights``, and a tenth of the best other message of a session added to each of its messages."""
        seqs = sorted(keyword.keys() | vector.keys())
        return fuse_messages(
            seqs,
            [sessions.get(seq, '') for seq in seqs],
            [keyword.get(seq) for seq in seqs],
            [vector.get(seq) for seq in seqs],
            *self.weights,
        )
