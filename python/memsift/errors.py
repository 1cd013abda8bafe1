"""memsift's exception tree, rooted at :class:`MemsiftError`.

The classes are created once in the Rust core (so Rust errors map to them at the
boundary) and re-exported here; pure-Python layers subclass :class:`MemsiftError`.
"""

from memsift._core import InternalError, InvalidInputError, MemsiftError, SearchIndexError

__all__ = ['InternalError', 'InvalidInputError', 'MemsiftError', 'SearchIndexError']
