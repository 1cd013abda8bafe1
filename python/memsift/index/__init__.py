"""The memory index: one agent's notes (and, with session memory, its transcripts) kept searchable.

- :mod:`memsift.index.memory_index`: :class:`MemoryIndex`, the facade: opening, syncing, searching, ``get``,
  watching, closing.
- :mod:`memsift.index.store`: the SQLite store, source of truth (files, chunks, vectors, embedding cache).
- :mod:`memsift.index.sync`: one incremental sync of the workspace into the store, BM25 index and vectors.
- :mod:`memsift.index.workspace`: which files are memory, and reading them safely.
- :mod:`memsift.index.watch`: re-indexing when files change.

The package itself imports nothing, so the search pipeline (:mod:`memsift.search`) can use the store without
loading the facade that drives it: import :class:`~memsift.index.memory_index.MemoryIndex` from ``memsift``.

>>> import tempfile, pathlib
>>> from memsift.index.memory_index import MemoryIndex
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.')
>>> with MemoryIndex(ws, {'memory': {'search': {'store': {'path': str(ws / 'index.sqlite')}}}}) as index:
...     index.sync().added
['MEMORY.md']
"""
