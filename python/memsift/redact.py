"""Secret redaction for text memsift shows to AI agents: session transcript snippets and history.

Follows OpenClaw's ``redactToolPayloadText`` ("tools" mode): the user's ``logging.redactPatterns`` run first, then
the built-in patterns below. Only the secret *value* is masked (see :func:`mask`); the key name, flag, header or
vendor prefix around it stays readable, so an agent still learns *what* was there::

    OPENAI_API_KEY=sk-proj-4f9aXb81QzLmN0pRt7Uv  ->  OPENAI_API_KEY=sk-pro…t7Uv

Each default pattern marks the part to mask with a named group ``secret``. The patterns are written to run in
linear time on hostile input: each starts with a literal or a small character set (so ``re`` skips ahead to
candidates), a token may not start inside a longer run of its own characters (a lookbehind right after the prefix),
and no unbounded quantifiers nest ambiguously. A 1 MB line takes well under a second.

Redacting is idempotent on real text (``redact(redact(t)) == redact(t)``): a value that lies within a mask written
earlier is left alone, which matters because callers redact a message and then redact the excerpt cut from it again.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Sequence
from typing import NamedTuple

from memsift._text import preview
from memsift.errors import RedactPatternError

__all__ = ['REVISION', 'Redactor', 'mask', 'redact']

REVISION = 1
"""The revision of the built-in patterns: stores that index redacted text re-index it when this changes."""

_MIN_LENGTH = 18  # OpenClaw's DEFAULT_REDACT_MIN_LENGTH: shorter values are masked completely
_KEEP_START = 6
_KEEP_END = 4
_ELLIPSIS = '\u2026'
_PEM = 'pem-private-key'
_PEM_BODY = f'\n{_ELLIPSIS}redacted{_ELLIPSIS}\n'


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


def _value(exclude_start: str) -> str:
    """A possibly quoted assignment value as group ``secret``; one group serves all forms via lookbehinds.

    Double-quoted values stop at ``\\"`` too, so a JSON-in-JSON string (``\\"KEY\\": \\"v\\"``) masks only ``v``.
    Values that start with ``exclude_start`` (``$VAR``, ``{name}``, ``<placeholder>``, ``==``) or look like code
    (``os.environ[...]``, ``get_token()``) are not secrets and are left alone. An unterminated quote (a snippet cut
    mid-value) masks to the end of the line rather than leaking the value.
    """
    exclude = re.escape(exclude_start)
    return (
        rf"""["']?(?P<secret>(?![{exclude}])(?:"""
        r"""(?<=")(?:[^"\\\n]|\\[^"\n])+"""
        r"""|(?<=')[^'\n]+"""
        r"""|(?<!["'])(?![A-Za-z_][\w.]*[(\[])[^\s"'\\]+"""
        r'))'
    )


def _token(prefix: str, body: str, not_after: str = r'[\w-]') -> str:
    """A vendor token as group ``secret``: ``prefix`` (fixed width) then ``body``, not preceded by ``not_after``.

    The literal prefix comes first and the "not inside a longer word" check is a lookbehind *after* it: ``re`` can
    then skip straight to candidate prefixes instead of trying every position (about 50x faster on long text).
    """
    return rf'(?P<secret>{prefix}(?<!{not_after}{prefix}){body})'


# Upper-case assignment names: the keyword must not follow a lower-case letter ("monkey", "apiKey=" stay).
_ENV_NAME = (
    '(?:'
    + '|'.join(rf'{word}(?<![^\W_A-Z0-9]{word})' for word in ('KEY', 'TOKEN', 'SECRET', 'PASSWORD', 'PASSWD'))
    + r')\b'
)
_JSON_KEYS = (
    r'(?i:api[_-]?key|token|secret|password|passwd|access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token'
    r'|session[_-]?token|client[_-]?secret|secret[_-]?access[_-]?key|private[_-]?key)'
)
_QUERY_KEYS = (
    r'(?i:access_token|refresh_token|id_token|client_secret|api[_-]?key|token|key|secret|password|passwd|sig'
    r'|signature|auth|x-amz-signature|x-amz-security-token|x-goog-signature)'
)

# Every entry: (family name, compiled regex with a named group ``secret``). Only the ``secret`` span is replaced, so
# context such as ``OPENAI_API_KEY=`` stays whether or not it is part of the match. Context-aware families (PEM,
# URLs, assignments, headers) run before the bare vendor tokens, so a key name decides the masking and the vendor
# pattern then sees an already-masked value. No pattern starts with a lookbehind or ``\b``: see :func:`_token`.
_DEFAULT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        # PEM private keys: keep the BEGIN line (and the END line, which the body stops before), hide the body.
        # The body runs to the next "-----", so a block cut off by a snippet edge is still hidden.
        (_PEM, r'-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?P<secret>(?:(?!-----)[\s\S])+)'),
        # URL user-info: scheme://user:PASSWORD@host (the user name stays).
        ('url-userinfo', r'://[^\s/?#@:]*:(?P<secret>[^\s/?#@]+)@'),
        # ENV-style assignments: UPPER_CASE names ending in KEY/TOKEN/SECRET/PASSWORD/PASSWD (upper case only, so
        # prose and code such as "password: see the vault" or password_hash(...) stay untouched).
        ('env-assignment', _ENV_NAME + r'\\?["\']?[ \t]*[=:][ \t]*\\?' + _value('=:${<')),
        # JSON fields (any case): "apiKey": "…", "client_secret": "…".
        ('json-field', rf'"{_JSON_KEYS}"[ \t]*:[ \t]*"(?P<secret>(?:[^"\\\n]|\\[^\n])+)"'),
        # The same fields in JSON that was itself put in a JSON string: \"apiKey\": \"…\".
        ('json-field-escaped', rf'\\"{_JSON_KEYS}\\"[ \t]*:[ \t]*\\"(?P<secret>[^"\\\n]+)'),
        # CLI flags, with a space or "=": --api-key X, --token=X (not --token-file, --password-stdin).
        (
            'cli-flag',
            r'--(?<![\w-]--)(?:api[-_]?key|hook[-_]token|access[-_]token|auth[-_]token|client[-_]secret|token|secret'
            + r'|password|passwd)(?:=|[ \t]+)'
            + _value('=:${<-'),
        ),
        # Authorization header values (plain, curl -H '...', or a JSON "Authorization": "Bearer …").
        (
            'authorization-header',
            r'(?i:authorization)["\']?[ \t]*[:=][ \t]*["\']?(?i:bearer|basic|token|bot|digest)[ \t]+'
            + r'(?P<secret>[A-Za-z0-9._~+/=-]+)',
        ),
        # API-key style headers: x-api-key: …, PRIVATE-TOKEN: … (GitLab).
        (
            'api-key-header',
            r'(?i:x-api-key|api-key|x-goog-api-key|x-auth-token|private-token)["\']?[ \t]*:[ \t]*["\']?'
            + r'(?P<secret>[A-Za-z0-9._~+/=-]+)',
        ),
        # A bare "Bearer <token>" of 18+ characters; the token must contain a digit so prose stays ("Bearer
        # authentication/authorisation").
        ('bearer-token', r'(?i:bearer(?<![\w-]bearer))[ \t]+(?=[A-Za-z._~+/=-]*\d)(?P<secret>[A-Za-z0-9._~+/=-]{18,})'),
        # Sensitive URL query / form keys: ?token=…, &api_key=…, 'client_secret=…&… (curl -d); not templates ({x}, $x).
        ('url-query', rf'[?&"\']{_QUERY_KEYS}=(?P<secret>(?![{{$])[^&\s#"\'<>\\]+)'),
        (
            'aws-secret-access-key',
            r'(?i:aws_secret_access_key)\b["\']?[ \t]*[=:][ \t]*["\']?(?P<secret>[A-Za-z0-9/+=]{20,})',
        ),
        # Vendor token prefixes. "sk-" needs 20+ characters and a digit, so "sk-learn" and other words stay.
        ('openai-anthropic', _token('sk-', r'(?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{20,}')),
        ('github', _token('gh[pousr]_', '[A-Za-z0-9]{20,}')),
        ('github-pat', _token('github_pat_', '[A-Za-z0-9_]{20,}')),
        ('gitlab', _token('glpat-', '[A-Za-z0-9_-]{20,}')),
        ('slack-token', _token('xox[baprs]-', '[A-Za-z0-9-]{10,}')),
        ('slack-app-token', _token('xapp-', '[A-Za-z0-9-]{10,}')),
        ('slack-webhook', r'hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/-]{8,})'),
        ('discord-webhook', r'discord(?:app)?\.com/api/webhooks/(?P<secret>[0-9]+/[A-Za-z0-9_-]{20,})'),
        (
            'discord-bot-token',
            _token('[MNO]', r'[A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,}', r'[\w.-]'),
        ),
        ('groq', _token('gsk_', '[A-Za-z0-9]{20,}')),
        ('google', _token('AIza', '[0-9A-Za-z_-]{20,}')),
        ('perplexity', _token('pplx-', '[A-Za-z0-9]{20,}')),
        ('npm', _token('npm_', '[A-Za-z0-9]{20,}')),
        ('huggingface', _token('hf_', '[A-Za-z0-9]{20,}')),
        ('stripe', _token('[srp]k_(?:live|test)_', '[A-Za-z0-9]{10,}')),
        ('stripe-webhook-secret', _token('whsec_', '[A-Za-z0-9+/=]{20,}')),
        ('sendgrid', _token(r'SG\.', r'[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}', r'[\w.-]')),
        ('jwt', _token('eyJ', r'[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*', r'[\w.-]')),
        ('aws-access-key-id', _token('A[KS]IA', '[0-9A-Z]{16}(?![A-Za-z0-9])', '[A-Za-z0-9]')),
        # Telegram bot tokens: 123456789:AA… (six or more digits, a colon, 20+ token characters), also in
        # api.telegram.org/bot123…:AA… URLs, hence only digits and colons may not come before.
        ('telegram-bot-token', _token('[0-9]', '[0-9]{5,}:[A-Za-z0-9_-]{20,}', '[0-9:]')),
    )
)


class _Rule(NamedTuple):
    name: str
    regex: re.Pattern[str]
    group: str | int  # what to mask: 'secret' for defaults, 1 for a user pattern with a group, 0 for one without


_DEFAULT_RULES = tuple(_Rule(name, regex, 'secret') for name, regex in _DEFAULT_PATTERNS)
_JS_LITERAL = re.compile(r'/(.+)/([gimsuy]*)', re.DOTALL)


def _compile_user_pattern(raw: str, index: int) -> re.Pattern[str] | None:
    """Compile one ``logging.redactPatterns`` entry the way OpenClaw reads it, or ``None`` for a blank one.

    OpenClaw compiles a plain string case-insensitively and also accepts a ``/body/flags`` literal; both are kept so
    one config works for both tools. Python's ``re`` syntax applies to the body.
    """
    key_path = f'logging.redactPatterns[{index}]'
    if not isinstance(raw, str):
        raise RedactPatternError(
            f'{key_path}: got {preview(raw)}; expected a regular expression string', key_path=key_path
        )
    if not raw.strip():
        return None  # OpenClaw skips blank entries too
    body, flags = raw, re.IGNORECASE
    literal = _JS_LITERAL.fullmatch(raw)
    if literal:
        body, letters = literal.groups()
        flags = re.RegexFlag(0)
        for letter, flag in (('i', re.IGNORECASE), ('m', re.MULTILINE), ('s', re.DOTALL)):
            if letter in letters:
                flags |= flag
    try:
        with warnings.catch_warnings():  # e.g. FutureWarning "possible set difference": the pattern works as written
            warnings.simplefilter('ignore')
            return re.compile(body, flags)
    except (re.error, OverflowError, RecursionError) as exc:  # OverflowError: a{4294967296}
        raise RedactPatternError(
            f'{key_path}: {preview(raw)} is not a valid regular expression ({exc}). Patterns use Python regex syntax: '
            r'escape literal ( ) [ ] . * + ? | with a backslash (e.g. "\(") and write named groups as (?P<name>...); '
            'fix the pattern or remove it from logging.redactPatterns',
            key_path=key_path,
        ) from exc


class Redactor:
    """Masks secrets in text: the given user patterns first, then the built-in secret patterns.

    A user pattern with a capturing group masks only group 1 (the whole match when group 1 did not take part);
    one without masks the whole match. An invalid pattern raises :class:`RedactPatternError` naming it.

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
        user: list[_Rule] = []
        for index, raw in enumerate(patterns):
            regex = _compile_user_pattern(raw, index)
            if regex is not None:
                user.append(_Rule(f'user[{index}]', regex, 1 if regex.groups else 0))
        self._rules: tuple[_Rule, ...] = (*user, *_DEFAULT_RULES)

    def redact(self, text: str) -> str:
        """``text`` with every secret masked; text without secrets comes back unchanged.

        >>> Redactor().redact("curl -H 'Authorization: Bearer abc123def456ghi789jkl0' https://api.example.com")
        "curl -H 'Authorization: Bearer abc123…jkl0' https://api.example.com"
        """
        for rule in self._rules:
            text = rule.regex.sub(functools.partial(_replace, rule), text)
        return text


def _replace(rule: _Rule, match: re.Match[str]) -> str:
    """The replacement for one match: the match with its secret span masked."""
    whole = match.group(0)
    start, end = match.span(rule.group)
    if isinstance(rule.group, int) and rule.group and start == end:  # group 1 did not take part or is empty
        start, end = match.span()
    if start < 0 or start == end:  # an empty match hides nothing (and must not insert "***" between characters)
        return whole
    text = match.string
    secret = text[start:end]
    if _already_masked(text, start, end):
        return whole
    if rule.name == _PEM:
        # Empty, or already "…redacted…" (possibly followed by an excerpt's "…" cut mark): a key body never starts
        # with an ellipsis.
        if not secret.strip() or secret.lstrip().startswith(_ELLIPSIS):
            return whole
        replacement = _PEM_BODY
    else:
        replacement = mask(secret)
    offset = match.start()
    return whole[: start - offset] + replacement + whole[end - offset :]


def _already_masked(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies within a mask written by an earlier pass, so redacting stays idempotent.

    A mask is ``***`` or at most 6 characters + ``…`` + 4 (PEM bodies are checked by the caller). Checking
    *containment*, not merely "a ``…`` nearby", matters: a value that holds an earlier mask *and* real secret text
    around it (or a real secret next to an excerpt's ``…`` cut mark) is still masked.
    """
    if text[start:end] == '***':
        return True
    if end - start > _KEEP_START + 1 + _KEEP_END:
        return False
    # An ellipsis at p covers [p - 6, p + 5); look for one whose span contains the value.
    p = text.find(_ELLIPSIS, max(0, end - _KEEP_END - 1), start + _KEEP_START + 1)
    while p != -1:
        if p - _KEEP_START <= start and end <= p + _KEEP_END + 1:
            return True
        p = text.find(_ELLIPSIS, p + 1, start + _KEEP_START + 1)
    return False


_DEFAULT_REDACTOR = Redactor()


def redact(text: str) -> str:
    """``text`` with secrets masked by the built-in patterns only (no user patterns).

    >>> redact('export OPENAI_API_KEY="sk-proj-4f9aXb81QzLmN0pRt7Uv" && ./run.sh')
    'export OPENAI_API_KEY="sk-pro…t7Uv" && ./run.sh'
    >>> redact('the API key is in the vault')
    'the API key is in the vault'
    """
    return _DEFAULT_REDACTOR.redact(text)
