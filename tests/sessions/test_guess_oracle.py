"""No search tells a right guess of a secret from a wrong one (issue 32).

A long secret's mask keeps its first 6 and last 4 characters (``sk-pro…t7Uv``, OpenClaw's style) for the agent
reading it. When the searched text held those masks, a question holding the true secret, redacted as the rows were,
shared the stored mask's fragments while a wrong guess of the same shape did not: the message came back for the
right guess only. What is searched (full-text rows, the ranked mirror, the vector leg's input, session memory) is now
the shown text with each mask one constant, and questions are read in that form.

For every OpenClaw redaction case (``redact_openclaw_cases.json``: every built-in rule family) and every family of
``test_redact_families.py``, the case's message is stored, then searched with the message itself (the true secret in
its context) and with the same message holding a wrong guess of each secret: same length, same character classes,
same first 4 characters. The answers must be identical: same hits, same order, same scores, same snippets.
"""

from __future__ import annotations

import difflib
import functools
import json
from pathlib import Path

import pytest
from conftest import both_search_modes
from test_redact_families import MASKED
from test_redact_openclaw import expand
from test_sessions import session_memory_index

from memsift.redact import Redactor
from memsift.sessions import SessionStore

CASES = json.loads((Path(__file__).parent / 'redact_openclaw_cases.json').read_text(encoding='utf-8'))['cases']
MAIN = 'agent:main:main'
E = '\u2026'

# The eight forms issue 32 names, masked in every output, whose fragment stayed searchable.
ISSUE_FORMS = [
    ('url password with @', 'clone https://deploy:p@ss-w0rd-Kq81zLmN0pRt7Uv@git.example.com/repo.git now'),
    ('url password with @ (short)', 'open postgres://app:p@ss1@db.example.com:5432/app'),
    ('session token', 'cookie session_token=sess-8fJ2kQ9xLmN4pR7tV1wZ3yB6 set'),
    ('session token header', 'x-session-token: sess-8fJ2kQ9xLmN4pR7tV1wZ3yB6'),
    ('cli password flag -p', 'sshpass -p Sup3rS3cretPassw0rdValue99 ssh root@host'),
    ('cli password flag -pVALUE', 'mysql -u root -pSup3rS3cretPassw0rdValue99 -h db'),
    ('cli password flag --password', 'psql --password Sup3rS3cretPassw0rdValue99 --host db'),
    ('lower-case assignment', 'db password=opaque-pass-secret-1234567890 next'),
    ('lower-case assignment (short)', 'retry with token=fixture-secret; later'),
    ('authorization without a scheme', 'curl -H "Authorization: abcd1234efgh5678ijkl9012mnop" https://api.example.com'),
]


def _shift(ch: str) -> str:
    """Another character of the same class: hex digits stay hex, letters keep their case, digits stay digits."""
    for alphabet in ('0123456789', 'abcdef', 'ghijklmnopqrstuvwxyz', 'ABCDEF', 'GHIJKLMNOPQRSTUVWXYZ'):
        if ch in alphabet:
            return alphabet[(alphabet.index(ch) + 3) % len(alphabet)]
    return ch


def _shifted(secret: str, keep_start: int, keep_end: int) -> str:
    end = len(secret) - keep_end
    if end <= keep_start:
        return secret
    return secret[:keep_start] + ''.join(_shift(c) for c in secret[keep_start:end]) + secret[end:]


def _candidates(secret: str) -> list[str]:
    """Wrong guesses of ``secret``, most different first: all but a vendor prefix changed, then all but the first
    6, then only the last 4, then all but the first and last character. Each changes what a long secret's mask
    shows (its first 6 or last 4 characters): the guesses the old searchable masks told apart."""
    head = max((i + 1 for i, c in enumerate(secret[:10]) if c in '-_.:'), default=4)
    return [
        _shifted(secret, 4, 0),
        _shifted(secret, head, 0),
        _shifted(secret, 6, 0),
        _shifted(secret, max(len(secret) - 4, 0), 0),
        _shifted(secret, 1, 1),
    ]


def guessed(text: str, secrets: list[str]) -> str | None:
    """``text`` with each masked value (where the rules mask it: a case's listed secret may hold a part left
    visible) replaced by a wrong guess of the same shape: one the rules mask at the same places (a guess they would
    not mask is another kind of text). None when no candidate is."""
    runs = _masked_runs(text)
    for pick in range(len(_candidates('x'))):
        guess, last = [], 0
        for start, end in runs:
            guess += [text[last:start], _candidates(text[start:end])[pick]]
            last = end
        wrong = ''.join(guess) + text[last:]
        if wrong != text and _masked_runs(wrong) == runs:
            return wrong
    return None


@functools.cache
def _masked_runs(text: str) -> list[tuple[int, int]]:
    """Where the redactor masks ``text``: each run of it that the searchable form replaced by ``***`` (the text
    aligned with it; ``***`` shares no character with a secret, so each whole value aligns with its ``***``)."""
    search = Redactor().redact_for_search(text)
    matcher = difflib.SequenceMatcher(None, text, search, autojunk=False)
    return [(i1, i2) for op, i1, i2, _, _ in matcher.get_opcodes() if op in ('replace', 'delete') and i2 > i1]


def _secrets_of(text: str) -> list[str]:
    """The values the redactor masks in ``text``."""
    return [text[start:end] for start, end in _masked_runs(text)]


def _cases() -> list[tuple[str, str, list[str]]]:
    """(id, message, secrets) of every case: the OpenClaw cases, the families' masked cases and the issue's forms."""
    out = []
    for case in CASES:
        secrets = [expand(s) for s in case.get('secrets', [])]
        if secrets:
            out.append((case['id'], expand(case['input']), secrets))
    for family, pairs in MASKED.items():
        for i, (text, _) in enumerate(pairs):
            out.append((f'{family} {i}', text, _secrets_of(text)))
    for name, text in ISSUE_FORMS:
        out.append((f'issue 32: {name}', text, _secrets_of(text)))
    return [c for c in out if c[2] and len(c[1]) <= 2000]  # a query is at most 4,000 characters


ALL = _cases()


def test_the_issue_forms_are_masked():
    redactor = Redactor()
    for name, text in ISSUE_FORMS:
        secrets = _secrets_of(text)
        assert secrets, name
        for secret in secrets:
            assert secret not in redactor.redact(text), name


@pytest.mark.parametrize(('case_id', 'text', 'secrets'), ALL, ids=[c[0] for c in ALL])
def test_the_searchable_form_reads_a_wrong_guess_as_the_true_secret(case_id, text, secrets):
    redactor = Redactor()
    guess = guessed(text, secrets)
    assert guess is not None and guess != text
    shown = redactor.redact(text)
    search = redactor.redact_for_search(text)
    assert redactor.redact_for_search(guess) == search  # a wrong guess of the same shape reads as the true secret
    assert redactor.redact_for_search(search) == search
    # The shown text keeps OpenClaw's masks (a long value's first 6 and last 4 around "…"); the searched one has none.
    assert search.count(E) <= text.count(E), (case_id, shown, search)
    for secret in _secrets_of(text):  # the masked runs (a case's listed secret may hold a part left visible)
        fragments = {secret[:6], secret[-4:]} if len(secret) >= 18 else set()
        for fragment in fragments:
            if fragment.strip() and fragment not in text.replace(secret, ' '):
                assert fragment not in search, (case_id, fragment)


def _answer(store: SessionStore, query: str) -> list[tuple]:
    response = store.search(query, caller=MAIN, limit=25)
    return [tuple(sorted(hit.items())) for hit in response['results']]


@pytest.fixture(scope='module')
def stores(tmp_path_factory):
    """Both search modes over every case's message (one session per case), the ranked one with a vector leg."""
    ranked, terms = both_search_modes(tmp_path_factory.mktemp('oracle'), [text for _, text, _ in ALL])
    yield ranked, terms
    ranked.close()
    terms.close()
    terms.close()


@pytest.mark.parametrize(('case_id', 'text', 'secrets'), ALL, ids=[c[0] for c in ALL])
def test_sessions_search_answers_a_wrong_guess_as_the_true_secret(stores, case_id, text, secrets):
    guess = guessed(text, secrets)
    assert guess is not None
    for store in stores:
        # The message itself is the question of someone who knows the secret and its context.
        assert _answer(store, text) == _answer(store, guess), (store.search_mode, case_id)


def test_a_search_for_the_secret_finds_its_message_by_the_context_alone(stores):
    ranked, _ = stores
    i = next(i for i, c in enumerate(ALL) if c[0] == 'issue 32: lower-case assignment')
    hits = ranked.search('db password=opaque-pass-secret-1234567890 next', caller=MAIN, limit=25)['results']
    assert f'm{i}' in [h['messageId'] for h in hits]  # found by "password", as by any other value
    shown = next(h['snippet'] for h in hits if h['messageId'] == f'm{i}')
    assert f'opaque{E}7890' in shown  # what is shown keeps OpenClaw's mask


def test_memory_search_over_session_memory_answers_a_wrong_guess_as_the_true_secret(tmp_path):
    store = SessionStore(tmp_path / 'sessions.sqlite', visibility='agent')
    picked = [c for c in ALL if c[0].startswith('issue 32')] + ALL[::15]
    for i, (_, text, _) in enumerate(picked):
        store.append(
            f'agent:main:case-{i}',
            {'type': 'message', 'id': f'm{i}', 'message': {'role': 'user', 'content': f'case {i}: {text}'}},
        )
    with store, session_memory_index(tmp_path, store) as index:
        index.sync()

        def answer(query: str) -> list[tuple]:
            return [(h.path, h.start_line, h.score, h.snippet) for h in index.search(query, min_score=0).results]

        for case_id, text, secrets in picked:
            guess = guessed(text, secrets)
            assert guess is not None and answer(text) == answer(guess), case_id
        lower = next(c for c in picked if c[0] == 'issue 32: lower-case assignment')
        snippets = ' '.join(h.snippet for h in index.search(lower[1], min_score=0).results)
        assert 'opaque-pass-secret' not in snippets and '7890' not in snippets  # the transcript shows no fragment
