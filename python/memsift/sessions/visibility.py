"""Who may see which session (OpenClaw §11.4): the :class:`Caller`, the snapshot of a store's sessions that the rules
read, and the rules themselves.

>>> snapshot = Snapshot('1', {
...     'agent:main:main': Session('agent:main:main', 's0', 'main', None, incognito=False, stale=False),
...     'agent:main:A': Session('agent:main:A', 's1', 'main', 'agent:main:main', incognito=False, stale=False),
...     'agent:main:B': Session('agent:main:B', 's2', 'main', 'agent:main:main', incognito=True, stale=False)})
>>> sorted(snapshot.visible_to(Caller('agent:main:main', 'main', 'tree', agent_to_agent=False), 'main'))
['agent:main:A', 'agent:main:main']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Literal

from memsift._record import field, record
from memsift._text import preview, scrub
from memsift.config import Visibility
from memsift.errors import InvalidInputError, SessionAccessError

__all__ = [
    'VISIBILITIES',
    'Caller',
    'Session',
    'Snapshot',
    'check_known',
    'check_visibility',
    'is_incognito_session_key',
    'is_native_child_session_key',
    'is_private_conversation',
    'main_session_key',
    'not_visible',
    'refusal',
    'resolve_caller',
    'restricted_to_spawned',
    'should_resolve_session_id',
    'visible_keys',
    'window_owner',
]

VISIBILITIES: tuple[Visibility, ...] = ('self', 'tree', 'agent', 'all')

# OpenClaw's ``isIncognitoSessionKey`` (src/routing/session-key.ts), on the trimmed, lower-cased key. Its ported test
# names only ``dashboard`` and ``subagent``; the current source also lists ``internal-session-effects``, kept here
# as the stricter rule (more sessions hidden).
_INCOGNITO_KEY = re.compile(r'^agent:[^:]+:(?:dashboard|subagent|internal-session-effects):incognito-[^:]+$')
_NATIVE_CHILD_KEY = re.compile(r'^agent:[^:]+:(?:acp|subagent):')
_SESSION_ID = re.compile(r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', re.IGNORECASE)
_KEY_PREFIXES = ('agent:', 'acp:', 'cron:', 'hook:', 'node-', 'node:')


def should_resolve_session_id(value: str) -> bool:
    """Whether a requested session may be a session id rather than a key (OpenClaw's ``shouldResolveSessionIdInput``):
    it looks like a UUID, or not like a session key (``main``, ``global``, ``current``, ``unknown``, ``agent:…``,
    ``acp:…``, ``cron:…``, ``hook:…``, ``node-…``/``node:…``, or a ``:group:`` / ``:channel:`` key). Such a value
    that names no stored session is an error ("Session not found"), where a key-shaped one is merely not visible."""
    raw = value.strip()
    if _SESSION_ID.match(raw):
        return True
    looks_like_key = (
        raw in ('main', 'global', 'unknown', 'current')
        or raw.startswith(_KEY_PREFIXES)
        or ':group:' in raw
        or ':channel:' in raw
    )
    return not looks_like_key


def is_incognito_session_key(key: str) -> bool:
    """Whether a session key names an incognito session (``agent:<id>:dashboard:incognito-<x>``, also ``subagent``
    and ``internal-session-effects``): such a session is never visible to the session tools, flagged or not."""
    return bool(_INCOGNITO_KEY.match(key.strip().lower()))


WINDOW_MARK = ':window:'
"""An older transcript of a key (an OpenClaw 2.x rollover leaves one) is stored as ``<key>:window:<sessionId>``."""


def window_owner(key: str) -> str | None:
    """The key whose older window ``key`` is, else ``None``.

    >>> window_owner('agent:main:main:window:00000000-0000-4000-8000-000000000007'), window_owner('agent:main:main')
    ('agent:main:main', None)
    """
    owner, mark, _ = key.rpartition(WINDOW_MARK)
    return owner if mark and owner else None


_PRIVATE_REST = re.compile(r'^(?:(?:[^:]+:){0,2}direct:[^:]+)(?::thread:[^:]+)?$')


def is_private_conversation(key: str, agent_id: str, main_key: str = 'main') -> bool:
    """Whether ``key`` is one of ``agent_id``'s private (direct) conversations: its main session, or a direct chat
    (``agent:<id>:direct:<peer>``, ``agent:<id>:<channel>[:<account>]:direct:<peer>``, a ``:thread:`` of one). The
    boundary of OpenClaw 2.x's ``rememberAcrossConversations``: groups, channels, cron, hooks, nodes, subagents
    and keys of any other shape are not, so an unknown kind stays out.

    >>> [is_private_conversation(k, 'main') for k in ('agent:main:main', 'agent:main:telegram:direct:42',
    ...     'agent:main:telegram:group:7', 'agent:main:cron:daily', 'agent:ops:main', 'agent:main:odd:thing')]
    [True, True, False, False, False, False]
    """
    prefix = f'agent:{agent_id}:'
    if not key.startswith(prefix):
        return False
    rest = key[len(prefix) :]
    return rest == main_key or bool(_PRIVATE_REST.match(rest))


def is_native_child_session_key(key: str) -> bool:
    """Whether a key names a native child session (``agent:<id>:acp:…`` or ``agent:<id>:subagent:…``): the only
    sessions of another agent that lineage alone makes visible."""
    return bool(_NATIVE_CHILD_KEY.match(key.strip().lower()))


def main_session_key(agent_id: str) -> str:
    """The key of an agent's main session, ``agent:{agentId}:main`` (OpenClaw's convention)."""
    return f'agent:{agent_id}:main'


@record
class Caller:
    """Who is asking: the calling session and the visibility rules that apply to it (OpenClaw §11.4).

    Attributes:
        session_key: The caller's session; ``tree`` visibility starts there.
        agent_id: The caller's agent (default: the store's agent).
        visibility: ``self``, ``tree``, ``agent`` or ``all`` (default: the store's ``visibility``).
        sandboxed: A sandboxed caller with ``sandbox_visibility="spawned"`` sees only itself and the sessions it
            spawned, whatever ``visibility`` says.
        sandbox_visibility: ``spawned`` (default) or ``all``.
        agent_to_agent: With ``all``, whether other agents' sessions are visible (default: the store's setting).
        watched: Same-agent group sessions the caller watches: ``tree`` visibility also reads them.
    """

    session_key: str
    agent_id: str | None = None
    visibility: Visibility | None = None
    sandboxed: bool = False
    sandbox_visibility: Literal['spawned', 'all'] = 'spawned'
    agent_to_agent: bool | None = None
    watched: frozenset[str] = frozenset()


def check_visibility(value: object) -> Visibility:
    """The visibility ``value`` names, case-insensitively; anything else is ``tree`` (OpenClaw's
    ``resolveSessionToolsVisibility``: an unknown or missing value falls back to the default)."""
    folded = value.strip().lower() if isinstance(value, str) else ''
    for visibility in VISIBILITIES:
        if folded == visibility:
            return visibility
    return 'tree'


def resolve_caller(caller: str | Caller, agent_id: str, visibility: Visibility, agent_to_agent: bool) -> Caller:
    """``caller`` (a session key or a :class:`Caller`) with every unset field taken from a store's settings.

    Raises:
        InvalidInputError: ``caller`` is neither.
    """
    if isinstance(caller, str):
        caller = Caller(caller)
    if not isinstance(caller, Caller) or not isinstance(caller.session_key, str):
        raise InvalidInputError(f'caller must be a session key or a memsift.Caller, not {preview(caller)}')
    return Caller(
        caller.session_key,
        caller.agent_id or agent_id,
        check_visibility(caller.visibility or visibility),
        caller.sandboxed,
        caller.sandbox_visibility,
        agent_to_agent if caller.agent_to_agent is None else caller.agent_to_agent,
        frozenset(caller.watched),
    )


@record
class Session:
    """What the visibility rules and the searches need of one stored session."""

    key: str
    id: str
    agent: str
    spawned_by: str | None
    incognito: bool
    stale: bool
    """Marked for rebuild: its text is hidden from searches until its active branch is re-indexed."""


@record(frozen=False)
class Snapshot:
    """Every session of a store at one ``sessions_version`` (a store keeps it until the counter moves)."""

    version: str
    sessions: dict[str, Session]
    visible: dict[Caller, frozenset[str]] = field(default_factory=dict)
    """Visible keys per caller, computed once per snapshot."""
    keys: frozenset[str] = frozenset()
    stale: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.keys = frozenset(self.sessions)
        self.stale = frozenset(key for key, session in self.sessions.items() if session.stale)

    def visible_to(self, caller: Caller, store_agent: str) -> frozenset[str]:
        """The keys of the sessions ``caller`` may see (incognito ones never), in a store of ``store_agent``."""
        keys = self.visible.get(caller)
        if keys is None:
            keys = self.visible[caller] = frozenset(visible_keys(self, caller, store_agent))
        return keys


def visible_keys(snapshot: Snapshot, caller: Caller, store_agent: str) -> set[str]:
    """OpenClaw's visibility rules (§11.4) over one store's sessions.

    * Incognito sessions (flagged, or with an incognito key) are never visible, not even to themselves.
    * ``self``: the caller's session (``main`` is the agent's main session).
    * ``tree``: the caller's session, the sessions it spawned (recursively) and the same-agent group sessions it
      watches (``Caller.watched``): an unwatched group session stays hidden. The agent's main session sees every
      session of its agent. (OpenClaw's row-checker test denies ``agent:main:main`` unwatched group sessions, but it
      builds the checker without ``mainSessionKey``; ``sessions_search`` passes it, and the checker then counts
      every same-agent session as the main session's own, as the reference spec says. No disagreement is left for
      ``sessions_search``, so the spec's rule is kept for the main session and the test's for every other one.)
    * ``agent``: every session of the caller's agent.
    * ``all``: ``agent`` plus the caller's spawned tree; every agent's sessions with agent-to-agent access.
    * Lineage crosses agents only for native children (``agent:<id>:acp:…`` / ``agent:<id>:subagent:…``): an
      ordinary session of another agent stays subject to agent-to-agent access whoever spawned it.
    * A key's older windows (:func:`window_owner`) are visible wherever the key is, as OpenClaw 2.x matches them.
    * A sandboxed caller with ``sandbox_visibility="spawned"`` is clamped to ``tree`` and, unless it is itself a
      subagent, sees only itself and the sessions it spawned directly (OpenClaw's ``restrictToSpawned``). OpenClaw's
      clamp also widens ``self`` to ``tree``; a sandboxed ``self`` caller keeps ``self`` here (the stricter rule).
    """
    sessions = {key: s for key, s in snapshot.sessions.items() if not s.incognito and not is_incognito_session_key(key)}
    agent = caller.agent_id or store_agent
    key = caller.session_key
    selves = {key, main_session_key(agent)} if key == 'main' else {key}
    children: dict[str, list[str]] = {}
    for s in sessions.values():
        if s.spawned_by is not None and (s.agent == agent or is_native_child_session_key(s.key)):
            children.setdefault(s.spawned_by, []).append(s.key)

    def spawned_tree(roots: set[str], depth: int | None = None) -> set[str]:
        seen, todo = set(roots), [(root, 0) for root in roots]
        while todo:
            node, level = todo.pop()
            if depth is not None and level >= depth:
                continue
            for child in children.get(node, ()):
                if child not in seen:
                    seen.add(child)
                    todo.append((child, level + 1))
        return seen

    own = {k for k, s in sessions.items() if s.agent == agent}
    visibility = caller.visibility
    if caller.sandboxed and caller.sandbox_visibility == 'spawned':
        if restricted_to_spawned(caller):
            return spawned_tree(selves, depth=1) & set(sessions)
        if visibility != 'self':
            visibility = 'tree'
    if visibility == 'self':
        keys = selves
    elif visibility == 'tree':
        keys = spawned_tree(selves) | (own if main_session_key(agent) in selves else set(caller.watched) & own)
    elif visibility == 'agent':
        keys = own
    else:
        keys = set(sessions) if caller.agent_to_agent else own | spawned_tree(selves)
    keys |= {k for k in sessions if window_owner(k) in keys}  # a key's older windows go where the key goes
    return keys & set(sessions)


def restricted_to_spawned(caller: Caller) -> bool:
    """Whether a sandboxed caller sees only the sessions it spawned (OpenClaw's ``restrictToSpawned``)."""
    return (
        caller.sandboxed
        and caller.sandbox_visibility == 'spawned'
        and caller.visibility != 'self'
        and ':subagent:' not in caller.session_key.lower()
    )


def check_known(requested: object, caller: Caller, stores: Iterable[Mapping[str, Session]]) -> None:
    """Refuse a requested session that looks like a session id and names no stored session in any of ``stores``
    (each store's sessions by key), by key or by id (OpenClaw's ``resolveSessionReference``): an error, not
    ``forbidden``, except for a sandboxed caller that sees only what it spawned. A key-shaped request that names
    nothing stays merely not visible.

    Raises:
        InvalidInputError: ``Session not found: …``.
        SessionAccessError: the caller is restricted to the sessions it spawned.
    """
    if (
        not isinstance(requested, str)
        or not should_resolve_session_id(requested)
        or is_incognito_session_key(requested)  # refused as incognito, whether it exists or not
    ):
        return
    raw = requested.strip()
    for sessions in stores:
        if {raw, requested} & sessions.keys() or any(session.id == raw for session in sessions.values()):
            return
    shown = scrub(raw)  # printable: a lone surrogate would make the tool's answer unencodable
    if restricted_to_spawned(caller):
        raise SessionAccessError(f'Session not visible from this sandboxed agent session: {shown}')
    raise InvalidInputError(f'Session not found: {shown} (use the full sessionKey from sessions_list)')


def refusal(requested: object, key: str, snapshot: Snapshot, caller: Caller) -> SessionAccessError:
    """The error for a session ``caller`` may not see: an incognito one with OpenClaw's wording."""
    session = snapshot.sessions.get(key)
    if is_incognito_session_key(key) or (session is not None and session.incognito):
        return SessionAccessError(f'Session not visible from session tools: {preview(requested)}')
    return not_visible(requested, caller)


def not_visible(session_key: object, caller: Caller) -> SessionAccessError:
    """The error for a session ``caller`` may not see (or that does not exist: the two are not told apart)."""
    return SessionAccessError(
        f'session {preview(session_key)} is not visible to {preview(caller.session_key)} under '
        f'{caller.visibility!r} visibility (or does not exist)'
    )
