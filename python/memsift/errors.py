"""memsift's whole exception tree, rooted at :class:`MemsiftError`; every class is exported from :mod:`memsift`.

The four classes of the Rust core are created there (so Rust errors map to them at the boundary) and re-exported
here; the rest are defined here, each used by one layer::

    MemsiftError
    ├── InvalidInputError      an argument has the wrong shape, type or range
    ├── SearchIndexError       the BM25 index could not be opened, written or read
    ├── InternalError          a bug in the Rust core (a caught panic)
    ├── ConfigError            an unusable config value or file
    │   └── RedactPatternError an unusable logging.redactPatterns entry (also a ValueError)
    ├── StoreError             the memory store (SQLite) could not be opened or written
    ├── SessionStoreError      the session store could not be opened, read or written
    ├── SessionAccessError     the calling session may not see the session it named (or it does not exist)
    ├── ProviderError          an embedding provider failed or answered something unusable
    └── SkippedFile            a memory file that cannot be indexed (why: ``reason``)
    ConfigWarning (a UserWarning): a config problem that is ignored, such as an unknown key

The provider adapters also raise three internal subclasses of ``ProviderError`` (a missing API key, a batch API the
endpoint lacks, a local model that is not installed) that only steer provider resolution; callers see
``ProviderError``.

>>> import memsift
>>> issubclass(memsift.RedactPatternError, memsift.ConfigError), issubclass(memsift.StoreError, memsift.MemsiftError)
(True, True)
"""

from __future__ import annotations

from pathlib import Path

from memsift._core import InternalError, InvalidInputError, MemsiftError, SearchIndexError

__all__ = [
    'ConfigError',
    'ConfigWarning',
    'InternalError',
    'InvalidInputError',
    'MemsiftError',
    'ProviderError',
    'RedactPatternError',
    'SearchIndexError',
    'SessionAccessError',
    'SessionStoreError',
    'SkippedFile',
    'StoreError',
]


class ConfigError(MemsiftError):
    """A memory config that cannot be used: wrong type, out-of-range value, unreadable or malformed file.

    ``key_path`` names the offending key (``None`` for file-level problems); ``file`` is the config file, if any.
    """

    def __init__(self, message: str, *, key_path: str | None = None, file: str | None = None) -> None:
        super().__init__(message)
        self.key_path = key_path
        self.file = file


class ConfigWarning(UserWarning):
    """A config problem that is ignored, such as an unknown key."""


class RedactPatternError(ConfigError, ValueError):
    """An unusable ``logging.redactPatterns`` entry; ``key_path`` is ``logging.redactPatterns[i]``.

    A :class:`ConfigError` (so config problems are caught in one place) and a :class:`ValueError`.
    """


class StoreError(MemsiftError):
    """The SQLite memory store could not be opened or written (the message names the file)."""


class SessionStoreError(MemsiftError):
    """The session store could not be opened, read or written (the message names the file)."""


class SessionAccessError(MemsiftError):
    """The calling session may not see the session it named, under its visibility rules, or that session does not
    exist (the two are not told apart: an answer must not confirm that a hidden session exists)."""


class ProviderError(MemsiftError):
    """An embedding provider failed or answered something unusable (the message names the provider).

    ``transport`` is true when the connection broke instead of the provider answering an error; ``status`` is the
    HTTP status of an error answer.
    """

    transport = False
    status: int | None = None


class SkippedFile(MemsiftError):
    """A memory file that cannot be indexed; ``reason`` says why and ``path`` which file."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f'{path}: {reason}')
        self.path = path
        self.reason = reason
