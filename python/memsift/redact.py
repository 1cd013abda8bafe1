"""Secret redaction for text memsift shows to AI agents: session transcript snippets and history.

Follows OpenClaw's ``redactToolPayloadText`` ("tools" mode): the user's ``logging.redactPatterns`` run first, then
the built-in rules. Only the secret *value* is masked (see :func:`mask`); the key name, flag, header or vendor
prefix around it stays readable, so an agent still learns *what* was there::

    OPENAI_API_KEY=sk-proj-4f9aXb81QzLmN0pRt7Uv  ->  OPENAI_API_KEY=sk-pro…t7Uv

The engine lives in the Rust core (``memsift._core.Redactor``, ``src/redact.rs``). Every rule, and every user
pattern, is compiled by Rust's ``regex`` crate, which runs in time linear in the text: no pattern can backtrack
catastrophically, so a custom ``(a+)+$`` cannot hang. A set scan first finds which built-in rules can match, so
ordinary text costs one pass. User patterns therefore use Rust regex syntax (no look-around, no back-references);
one that does not compile raises :class:`RedactPatternError` naming it and saying how to rewrite it.

Redacting is idempotent on real text (``redact(redact(t)) == redact(t)``): a value that lies within a mask written
earlier is left alone, which matters because callers redact a message and then redact the excerpt cut from it again.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from memsift._core import InvalidInputError
from memsift._core import Redactor as _CoreRedactor
from memsift._text import preview
from memsift.errors import RedactPatternError

__all__ = ['REVISION', 'SEARCH_MASK', 'Redactor', 'mask', 'redact']

REVISION = 8
"""The revision of the built-in patterns and of the searchable form: stores that index redacted text re-index it when
this changes (6: what is searched holds one constant per mask, :meth:`Redactor.redact_for_search`; 7: gitleaks'
default rules; 8: Mailchimp and NuGet keys, app passwords, OAuth codes and numbers in JSON fields, whole sshpass and
URL passwords, keys after a backtick or in JSON-escaped commands, shell references kept)."""

SEARCH_MASK = '***'
"""What stands for every mask in searchable text (:meth:`Redactor.redact_for_search`)."""
_MIN_LENGTH = 18  # OpenClaw's DEFAULT_REDACT_MIN_LENGTH: shorter values are masked completely
_KEEP_START = 6
_KEEP_END = 4
_ELLIPSIS = '\u2026'
_SURROGATES = re.compile('([\ud800-\udfff]+)')
_KEY_PATH = re.compile(r'logging\.redactPatterns\[(\d+)\]')


def mask(secret: str) -> str:
    """Mask one secret value: ``***`` below 18 characters, else the first 6 and last 4 around ``…``.

    Long values keep a recognisable prefix and suffix so a person can tell two keys apart without seeing either.

    >>> mask('hunter2')
    '***'
    >>> mask('sk-proj-4f9aXb81QzLmN0pRt7Uv')
    'sk-pro…t7Uv'
    """
    if len(secret) < _MIN_LENGTH:
        return '***'
    return f'{secret[:_KEEP_START]}{_ELLIPSIS}{secret[-_KEEP_END:]}'


class Redactor:
    """Masks secrets in text: the given user patterns first, then the built-in secret rules.

    A user pattern with a capturing group masks only group 1 (the whole match when group 1 did not take part);
    one without masks the whole match. A plain pattern is case-insensitive, as in OpenClaw; ``/body/flags`` takes
    its own flags. An invalid pattern raises :class:`RedactPatternError` naming it.

    >>> r = Redactor([r'codename (\\w+)'])
    >>> r.redact('codename nightingale ships; DB_PASSWORD=hunter2hunter2')
    'codename *** ships; DB_PASSWORD=***'
    """

    def __init__(self, patterns: Sequence[str] = ()) -> None:
        if isinstance(patterns, str):  # a lone string is a Sequence[str] too: one char per pattern is never meant
            raise RedactPatternError(
                f'logging.redactPatterns: got {patterns!r}; expected a list of regular expression strings',
                key_path='logging.redactPatterns',
            )
        patterns = list(patterns)
        for index, raw in enumerate(patterns):
            if not isinstance(raw, str):
                key_path = f'logging.redactPatterns[{index}]'
                raise RedactPatternError(
                    f'{key_path}: got {preview(raw)}; expected a regular expression string', key_path=key_path
                )
        try:
            self._core = _CoreRedactor(patterns)
        except InvalidInputError as exc:
            message = str(exc)
            found = _KEY_PATH.match(message)
            key_path = found.group(0) if found else 'logging.redactPatterns'
            raise RedactPatternError(message, key_path=key_path) from None

    def redact(self, text: str) -> str:
        """``text`` with every secret masked; text without secrets comes back unchanged.

        >>> Redactor().redact("curl -H 'Authorization: Bearer abc123def456ghi789jkl0' https://api.example.com")
        "curl -H 'Authorization: Bearer abc123…jkl0' https://api.example.com"
        """
        if not text.isascii() and _SURROGATES.search(text):
            # Lone surrogates cannot cross into Rust; they split the text, and each piece is redacted on its own.
            return ''.join(part if i % 2 else self._core.redact(part) for i, part in enumerate(_SURROGATES.split(text)))
        return self._core.redact(text)

    def redact_many(self, texts: Sequence[str]) -> list[str]:
        """:meth:`redact` of each text, in order (the core works on them in parallel)."""
        texts = list(texts)
        if all(t.isascii() or not _SURROGATES.search(t) for t in texts):
            return self._core.redact_many(texts)
        return [self.redact(t) for t in texts]

    def redact_for_search(self, text: str) -> str:
        """``text`` as a search indexes it: :meth:`redact`'s text with every mask it wrote replaced by ``***``.

        A long secret's mask keeps its first 6 and last 4 characters, for the agent reading it; were those
        searchable, a search for a guessed secret (redacted as the rows were) would find the message only when the
        guess was right. Full-text rows, the vectors' input and session memory are built from this form, and
        questions read in it, so a right guess and a wrong one of the same shape find the same messages.

        >>> r, text = Redactor(), 'OPENAI_API_KEY=sk-proj-4f9aXb81QzLmN0pRt7Uv'
        >>> r.redact(text), r.redact_for_search(text)
        ('OPENAI_API_KEY=sk-pro…t7Uv', 'OPENAI_API_KEY=***')
        """
        if not text.isascii() and _SURROGATES.search(text):
            return ''.join(
                part if i % 2 else self._core.redact_for_search(part) for i, part in enumerate(_SURROGATES.split(text))
            )
        return self._core.redact_for_search(text)

    def redact_for_search_many(self, texts: Sequence[str]) -> list[str]:
        """:meth:`redact_for_search` of each text, in order (the core works on them in parallel)."""
        texts = list(texts)
        if all(t.isascii() or not _SURROGATES.search(t) for t in texts):
            return self._core.redact_for_search_many(texts)
        return [self.redact_for_search(t) for t in texts]


@functools.cache
def _default_redactor() -> Redactor:
    """Built on first use, not at import: its rule tables take milliseconds that a process may never need."""
    return Redactor()


def redact(text: str) -> str:
    """``text`` with secrets masked by the built-in rules only (no user patterns).

    >>> redact('export OPENAI_API_KEY="sk-proj-4f9aXb81QzLmN0pRt7Uv" && ./run.sh')
    'export OPENAI_API_KEY="sk-pro…t7Uv" && ./run.sh'
    >>> redact('the API key is in the vault')
    'the API key is in the vault'
    """
    return _default_redactor().redact(text)
