"""OpenClaw 2.x's tool answers (the profile's ``tool_contract`` 2): what ``memory_search`` says for each ``corpus``,
and ``memory_get``'s window (``status``, 120 lines and 12,000 characters by default, whole lines, ``nextFrom``).

The texts are OpenClaw 2026.9.6's own, so a model that follows its tool descriptions acts on them as it would on
OpenClaw's answers.

>>> wiki_answer('auto')['corpora']
[{'corpus': 'wiki', 'outcome': 'not-registered'}]
>>> get_window('b\\nc\\n', 'MEMORY.md', 2, 1)
{'status': 'ok', 'text': 'b\\n\\n[More content available. Use from=3 to continue.]', 'path': 'MEMORY.md', 'from': 2, \
'lines': 1, 'truncated': True, 'nextFrom': 3}
"""

from __future__ import annotations

from typing import Any

__all__ = [
    'CORPORA',
    'GET_CORPORA',
    'GET_DEFAULT_LINES',
    'GET_MAX_CHARS',
    'get_error',
    'get_window',
    'sessions_disabled',
    'unknown_corpus',
    'wiki_answer',
    'wiki_get',
    'with_corpora',
]

CORPORA = ('memory', 'wiki', 'all', 'sessions')
GET_CORPORA = ('memory', 'wiki', 'all')
GET_DEFAULT_LINES = 120
GET_MAX_CHARS = 12_000
_NOT_REGISTERED = {'corpus': 'wiki', 'outcome': 'not-registered'}
_SESSIONS_OFF = 'Session transcript search is not enabled.'
_SESSIONS_WARNING = 'Session transcript search is unavailable for this agent.'
_SESSIONS_ACTION = (
    'If an exact session-history capability is available for this run, use it. Otherwise, ask the operator to enable '
    'semantic session search by enabling memory.search.experimental.sessionMemory and adding "sessions" to '
    'memory.search.sources.'
)
_MORE = '\n\n[More content available. Use from={next} to continue.]'
_OVER_BUDGET = '\n\n[More content available. Requested excerpt exceeded the default maxChars budget.]'


def unknown_corpus(corpora: tuple[str, ...] = CORPORA) -> str:
    """The error of a ``corpus`` outside ``corpora`` (OpenClaw's tool call fails with it)."""
    return f'corpus must be one of: {", ".join(corpora)}'


def wiki_answer(citations: str) -> dict[str, Any]:
    """``corpus: "wiki"``: memsift has no wiki corpus, and says so as OpenClaw does without its wiki plugin."""
    return {
        'results': [],
        'citations': citations,
        'corpora': [dict(_NOT_REGISTERED)],
        'warning': 'Wiki corpus is not registered; results do not cover that requested corpus.',
    }


def wiki_get(path: object) -> dict[str, Any]:
    """``memory_get`` with ``corpus: "wiki"``: nothing read, and why."""
    return {
        'path': path if isinstance(path, str) else str(path),
        'text': '',
        'corpora': [dict(_NOT_REGISTERED)],
        'warning': 'Wiki corpus is not registered; results do not cover that requested corpus.',
    }


def with_corpora(answer: dict[str, Any]) -> dict[str, Any]:
    """``corpus: "all"``: the memory answer, and which corpora it covers."""
    outcome = 'unavailable' if answer.get('unavailable') else 'ok'
    return {**answer, 'corpora': [{'corpus': 'memory', 'outcome': outcome}, dict(_NOT_REGISTERED)]}


def sessions_disabled() -> dict[str, Any]:
    """``corpus: "sessions"`` while transcripts are not searched as memory: the fields the tool description tells the
    model to act on."""
    return {
        'results': [],
        'disabled': True,
        'unavailable': True,
        'error': _SESSIONS_OFF,
        'warning': _SESSIONS_WARNING,
        'action': _SESSIONS_ACTION,
        'debug': {'warning': _SESSIONS_WARNING, 'action': _SESSIONS_ACTION, 'error': _SESSIONS_OFF},
    }


def get_error(path: object, missing: bool, message: str) -> dict[str, Any]:
    """``memory_get``'s answer for a path it does not read: ``not_found`` for a memory path with no file behind it,
    else ``MEMORY_PATH_NOT_ALLOWED`` (memsift's reason in ``reason``)."""
    shown = path if isinstance(path, str) else str(path)
    if missing:
        return {'status': 'not_found', 'text': '', 'path': shown}
    return {
        'path': shown,
        'text': '',
        'status': 'error',
        'code': 'MEMORY_PATH_NOT_ALLOWED',
        'error': 'path is not an allowed Markdown memory file',
        'reason': message,
    }


def get_window(
    text: str, path: str, start: int, lines: int | None, *, beyond: bool = False, max_chars: int = GET_MAX_CHARS
) -> dict[str, Any]:
    """A file's ``text`` from line ``start`` on as OpenClaw 2.x's ``memory_get`` returns it: ``lines`` lines
    (default 120), as many whole ones as fit in ``max_chars`` (a first line longer than that is cut), with
    ``truncated`` and ``nextFrom`` when more remains (``beyond``: the file goes on past ``text``) and a note
    saying how to read on."""
    file_lines = text.split('\n')
    if file_lines and file_lines[-1] == '' and not beyond:
        file_lines.pop()
    selected = file_lines[: GET_DEFAULT_LINES if lines is None else lines]
    fitted, used = 0, 0
    for line in selected:
        cost = len(line) + (1 if fitted else 0)
        if used + cost > max_chars:
            break
        fitted, used = fitted + 1, used + cost
    hard_cut = fitted == 0 and bool(selected)
    shown = selected[0][:max_chars] if hard_cut else '\n'.join(selected[:fitted])
    out: dict[str, Any] = {
        'status': 'ok',
        'text': shown,
        'path': path,
        'from': start,
        'lines': 1 if hard_cut else fitted,
    }
    if hard_cut or fitted < len(selected) or len(selected) < len(file_lines) or beyond:
        next_from = None if hard_cut else start + fitted
        out['text'] = shown + (_OVER_BUDGET if next_from is None else _MORE.format(next=next_from))
        out['truncated'] = True
        if next_from is not None:
            out['nextFrom'] = next_from
    return out
