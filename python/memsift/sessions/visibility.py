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

from dataclasses import dataclass, field
from typing import Literal

from memsift._text import preview
from memsift.config import Visibility
from memsift.errors import InvalidInputError, SessionAccessError

__all__ = [
    'VISIBILITIES',
    'Caller',
    'Session',
    'Snapshot',
    'check_visibility',
    'main_session_key',
    'not_visible',
    'resolve_caller',
    'visible_keys',
]

VISIBILITIES: tuple[Visibility, ...] = ('self', 'tree', 'agent', 'all')


def main_session_key(agent_id: str) -> str:
    """The key of an agent's main session, ``agent:{agentId}:main`` (OpenClaw's convention)."""
    return f'agent:{agent_id}:main'


@dataclass(frozen=True, slots=True)
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
    """

    session_key: str
    agent_id: str | None = None
    visibility: Visibility | None = None
    sandboxed: bool = False
    sandbox_visibility: Literal['spawned', 'all'] = 'spawned'
    agent_to_agent: bool | None = None


def check_visibility(value: object) -> Visibility:
    """``value`` if it names a visibility.

    Raises:
        InvalidInputError: it is not one of ``self``, ``tree``, ``agent``, ``all``.
    """
    for visibility in VISIBILITIES:
        if value == visibility:
            return visibility
    raise InvalidInputError(f'visibility must be one of {", ".join(VISIBILITIES)}, not {preview(value)}')


def resolve_caller(caller: str | Caller, agent_id: str, visibility: Visibility, agent_to_agent: bool) -> Caller:
    """``caller`` (a session key or a :class:`Caller`) with every unset field taken from a store's settings.

    Raises:
        InvalidInputError: ``caller`` is neither, or names no visibility.
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
    )


@dataclass(frozen=True, slots=True)
class Session:
    """What the visibility rules and the searches need of one stored session."""

    key: str
    id: str
    agent: str
    spawned_by: str | None
    incognito: bool
    stale: bool
    """Marked for rebuild: its text is hidden from searches until its active branch is re-indexed."""


@dataclass(slots=True)
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
    """OpenClaw's visibility rules (§11.4) over one store's sessions."""
    sessions = {key: s for key, s in snapshot.sessions.items() if not s.incognito}
    agent = caller.agent_id or store_agent
    key = caller.session_key
    children: dict[str, list[str]] = {}
    for s in sessions.values():
        if s.spawned_by is not None:
            children.setdefault(s.spawned_by, []).append(s.key)

    def spawned_tree(root: str) -> set[str]:
        seen, todo = {root}, [root]
        while todo:
            for child in children.get(todo.pop(), ()):
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
        return seen

    own = {k for k, s in sessions.items() if s.agent == agent}
    if caller.visibility == 'self':
        keys = {key}
    elif caller.visibility == 'tree':
        keys = own if key in ('main', main_session_key(agent)) else spawned_tree(key)
    elif caller.visibility == 'agent':
        keys = own
    else:
        keys = set(sessions) if caller.agent_to_agent else own
    if caller.sandboxed and caller.sandbox_visibility == 'spawned':
        keys &= spawned_tree(key)
    return keys & set(sessions)


def not_visible(session_key: object, caller: Caller) -> SessionAccessError:
    """The error for a session ``caller`` may not see (or that does not exist: the two are not told apart)."""
    return SessionAccessError(
        f'session {preview(session_key)} is not visible to {preview(caller.session_key)} under '
        f'{caller.visibility!r} visibility (or does not exist)'
    )
