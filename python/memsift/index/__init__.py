"""The memory index: one agent's notes (and, with session memory, its transcripts) kept searchable.

The facade and its parts:

- :mod:`memsift.index.memory_index`: :class:`MemoryIndex`, the facade: opening, ``sync``, ``search``, ``get``,
  ``status``, ``compact``, watching, closing; each call handed to one of the parts below.
- :mod:`memsift.index.freshness`: when the index is written: syncs (foreground and background), the dirty flag,
  catching up with other writers, the fallback provider switch, the watcher.
- :mod:`memsift.index.maintenance`: ``status`` and ``compact``; :mod:`memsift.index.status`: the parts of status.
- :mod:`memsift.index.reader`: ``memory_get``, reading part of an indexed file safely.

The stores (source of truth) and what is derived from them:

- :mod:`memsift.index.protocol`: what the rest of memsift may ask of a memory store, whichever backend holds it.
- :mod:`memsift.index.records`: the records the stores take and give (files, chunks, changes).
- :mod:`memsift.index.store` (SQLite) and :mod:`memsift.index.pgstore` (PostgreSQL), with what both do alike in
  :mod:`memsift.index.storebase`; :mod:`memsift.index.backend` chooses and opens one.
- :mod:`memsift.index.writer`: one writer per index across processes.
- :mod:`memsift.index.embeddings`: the provider and the vectors; :mod:`memsift.index.cache`: the embedding cache;
  :mod:`memsift.index.identity`: what an index was built with.

Filling them:

- :mod:`memsift.index.workspace`: which files are memory, and reading them safely.
- :mod:`memsift.index.sync`: one incremental sync of the workspace into the store, BM25 index and vectors.
- :mod:`memsift.index.session_memory`: transcripts as memory documents.
- :mod:`memsift.index.watch`: re-indexing when files change.
- :mod:`memsift.index.evaluate`: ``memsift eval``, how well search finds the user's own notes.

The package itself imports nothing, so the search pipeline (:mod:`memsift.search`) can use the store without
loading the facade that drives it: import :class:`~memsift.index.memory_index.MemoryIndex` from ``memsift``.

>>> import tempfile, pathlib
>>> from memsift.index.memory_index import MemoryIndex
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.')
>>> search = {'store': {'path': str(ws / 'index.sqlite')}}
>>> with MemoryIndex(ws, {'agents': {'defaults': {'memorySearch': search}}}) as index:
...     index.sync().added
['MEMORY.md']
"""
