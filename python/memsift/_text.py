"""Text that is safe to store, tokenize and print.

A Python ``str`` may hold lone surrogates: ``json.loads`` keeps ``"\\ud83d"`` (what ``JSON.stringify`` writes for a
string cut mid-emoji) as one, and a broken client can pass one in. UTF-8 cannot encode them, so SQLite, the Rust
core and ``print`` would fail on them; :func:`scrub` turns each into U+FFFD at the boundaries where text enters or
leaves memsift.
"""

from __future__ import annotations

import functools

from memsift._core import Redactor

__all__ = ['MAX_QUERY_CHARS', 'preview', 'scrub', 'sha256_hex', 'without_nul']

MAX_QUERY_CHARS = 4096
"""The longest query either search reads, so a hostile query cannot stall the engine: ``memory_search`` cuts a
longer one (and says so in ``debug``), ``sessions_search`` refuses it (OpenClaw's sessions contract)."""


def scrub(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (a well-formed pair becomes its character).

    >>> scrub('done \\ud83d'), scrub('\\ud83d\\ude00'), scrub('plain')
    ('done \\ufffd', '😀', 'plain')
    """
    try:
        text.encode('utf-8')
        return text
    except UnicodeEncodeError:
        return text.encode('utf-16-le', 'surrogatepass').decode('utf-16-le', 'replace')


def without_nul(text: str) -> str:
    """``text`` with each NUL replaced by U+FFFD: PostgreSQL's text type cannot hold NUL (SQLite and the Rust core
    can), so text bound for it goes through here, and both backends then store the same text.

    >>> without_nul('a\\x00b')
    'a\ufffdb'
    """
    return text.replace('\x00', '\ufffd') if '\x00' in text else text


def sha256_hex(text: str) -> str:
    """The sha256 of ``text`` as UTF-8, in hex: how chunks, files and cache keys are identified.

    >>> sha256_hex('abc')[:16]
    'ba7816bf8f01cfea'
    """
    import hashlib  # here, not at import: OpenSSL loads in ~4 ms, and a keyword-only search hashes nothing

    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def preview(value: object, limit: int = 80) -> str:
    """A bounded ``repr`` of ``value`` for error messages, whatever it is (nested too deeply to repr, an int past
    Python's digit limit), with secrets masked: an error must not echo a key it was given.

    >>> preview('x' * 100)[-5:], preview(10**5000)
    ('xxxx…', '<int>')
    >>> preview({'message': 'OPENAI_API_KEY=sk-proj-4f9aXb81QzLmN0pRt7Uv'})
    "{'message': 'OPENAI_API_KEY=sk-pro…t7Uv'}"
    """
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        return f'<{type(value).__name__}>'
    # Masked before the cut (a secret cut in half would no longer look like one), over a bounded head.
    text = _secrets().redact(text[: limit + _REDACT_MARGIN])
    return text if len(text) <= limit else text[:limit] + '…'


@functools.cache
def _secrets() -> Redactor:
    """Built on first use: its rule tables take milliseconds, which every process would pay at import."""
    return Redactor()


_REDACT_MARGIN = 400
"""Characters past the cut that are redacted with it: room for a secret that starts before the cut."""
