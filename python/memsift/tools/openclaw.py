"""Finding a user's OpenClaw setup: its config, agents, workspaces and transcripts (``memsift.from_openclaw``, in
:mod:`memsift.tools`, serves an agent of it with memsift).

OpenClaw keeps its config in ``~/.openclaw/openclaw.json`` (``OPENCLAW_CONFIG_PATH`` overrides; JSON5), its state
in ``~/.openclaw`` (``OPENCLAW_STATE_DIR``), each agent's workspace where ``agents.list[].workspace`` /
``agents.defaults.workspace`` say (else ``~/.openclaw/workspace`` for the default agent and
``~/.openclaw/workspace-<agentId>`` for the others), and each agent's transcripts in
``~/.openclaw/agents/<agentId>/sessions/``: ``sessions.json`` maps session keys to ``{sessionId, spawnedBy?,
sessionFile?}`` and ``<sessionId>.jsonl`` holds each transcript. memsift reads all of it and writes only its own
stores (``~/.memsift/…``): OpenClaw's files are never modified.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import json5

from memsift._record import record, replace
from memsift.config import MemoryConfig, load_config
from memsift.errors import ConfigError, MemsiftError
from memsift.sessions import SessionStore, archived_at_ms

__all__ = [
    'OpenClawAgent',
    'TranscriptWatcher',
    'import_openclaw_sessions',
    'openclaw_agent',
    'openclaw_agents',
    'openclaw_config_path',
    'openclaw_state_dir',
]

_log = logging.getLogger('memsift.tools.openclaw')

SESSION_RESCAN_S = 2.0
"""Transcripts are checked for new lines at most this often (a stat per file when nothing changed)."""


def openclaw_state_dir() -> Path:
    """``OPENCLAW_STATE_DIR``, else ``~/.openclaw``."""
    return Path(os.environ.get('OPENCLAW_STATE_DIR') or '~/.openclaw').expanduser()


def openclaw_config_path() -> Path:
    """``OPENCLAW_CONFIG_PATH``, else ``openclaw.json`` in the state folder."""
    configured = os.environ.get('OPENCLAW_CONFIG_PATH')
    return Path(configured).expanduser() if configured else openclaw_state_dir() / 'openclaw.json'


@record
class OpenClawAgent:
    """One agent of an OpenClaw setup: its id, workspace, transcript folder and memory-search settings."""

    id: str
    workspace: Path
    sessions_dir: Path
    default: bool
    config: MemoryConfig


def _read_config(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(
            f'{path}: no OpenClaw config here; set OPENCLAW_CONFIG_PATH to your openclaw.json (or '
            'OPENCLAW_STATE_DIR to the folder holding it)',
            file=str(path),
        )
    load_config(path)  # the same validation and messages as everywhere else
    return json5.loads(path.read_text(encoding='utf-8-sig'))  # type: ignore[no-any-return]


def openclaw_agents(config_path: str | os.PathLike[str] | None = None) -> list[OpenClawAgent]:
    """The agents an OpenClaw config declares (``agents.list[]``; just ``main`` when there is no list)."""
    path = Path(config_path).expanduser() if config_path is not None else openclaw_config_path()
    root = _read_config(path)
    state = openclaw_state_dir() if config_path is None else path.parent
    agents = root.get('agents')
    listed = agents.get('list') if isinstance(agents, Mapping) else None
    entries = [e for e in listed or [] if isinstance(e, Mapping) and isinstance(e.get('id'), str)]
    if not entries:
        entries = [{'id': 'main', 'default': True}]
    default_id = next((e['id'] for e in entries if e.get('default')), entries[0]['id'])
    found = []
    for entry in entries:
        agent_id = entry['id']
        config = load_config(path, agent_id)
        fallback = state / ('workspace' if agent_id == default_id else f'workspace-{agent_id}')
        workspace = Path(config.workspace).expanduser() if config.workspace else fallback
        found.append(
            OpenClawAgent(agent_id, workspace, state / 'agents' / agent_id / 'sessions', agent_id == default_id, config)
        )
    return found


def import_openclaw_sessions(store: SessionStore, sessions_dir: Path) -> dict[str, int]:
    """Import (or catch up on) every transcript in an OpenClaw sessions folder; returns events added per key.

    Sessions listed in ``sessions.json`` keep their keys and ``spawnedBy``; a transcript it does not list is
    imported as ``agent:<agentId>:<file stem>``, and a ``<id>.jsonl.reset.<ISO>`` / ``<id>.jsonl.deleted.<ISO>``
    archive (as OpenClaw lists them; not ``.bak.`` copies, not subfolders) as ``agent:<agentId>:<file name>``, which
    session memory ages from the date in the name. Each file is read from where the last import stopped. A file that
    cannot be imported (or an unreadable ``sessions.json``) is logged and passed over: the other sessions stay
    served.
    """
    listed: dict[str, Mapping[str, Any]] = {}
    index = sessions_dir / 'sessions.json'
    if index.is_file():
        try:
            data = json.loads(index.read_bytes())
        except (OSError, ValueError, RecursionError) as exc:
            _log.warning(
                '%s: unreadable OpenClaw session index (%s); transcripts are imported under their file '
                'names until it is fixed',
                index,
                exc,
            )
            data = None
        if isinstance(data, Mapping):
            listed = {key: entry for key, entry in data.items() if isinstance(entry, Mapping)}
    files: dict[Path, tuple[str, str | None]] = {}
    for key, entry in listed.items():
        name = entry.get('sessionFile') or (f'{entry["sessionId"]}.jsonl' if entry.get('sessionId') else None)
        if isinstance(name, str):
            spawned_by = entry.get('spawnedBy')
            files[sessions_dir / name] = (key, spawned_by if isinstance(spawned_by, str) else None)
    if sessions_dir.is_dir():
        for file in sorted(sessions_dir.glob('*.jsonl')):
            files.setdefault(file, (f'agent:{store.agent_id}:{file.stem}', None))
        for file in sorted(sessions_dir.glob('*.jsonl.*')):
            if archived_at_ms(file.name) is not None:  # a reset or deleted transcript, named with its date
                files.setdefault(file, (f'agent:{store.agent_id}:{file.name}', None))
    added = {}
    for file, (key, spawned_by) in files.items():
        if file.is_file():
            try:
                added[key] = store.import_jsonl(file, key, spawned_by=spawned_by, forward=True)['events']
            except MemsiftError as exc:  # one bad transcript (or key) costs only itself
                _log.warning('%s: not imported: %s', file, exc)
    return added


class TranscriptWatcher:
    """Catches the store up with OpenClaw's transcripts when called, at most every :data:`SESSION_RESCAN_S` seconds
    (the tools call it before each session tool call)."""

    def __init__(self, store: SessionStore, sessions_dir: Path) -> None:
        self.store, self.sessions_dir = store, sessions_dir
        self._lock = threading.Lock()
        self._last = 0.0

    def __call__(self) -> None:
        with self._lock:
            if time.monotonic() - self._last < SESSION_RESCAN_S:
                return
            import_openclaw_sessions(self.store, self.sessions_dir)
            self._last = time.monotonic()


def openclaw_agent(
    agent_id: str | None = None, config_path: str | os.PathLike[str] | None = None
) -> tuple[OpenClawAgent, MemoryConfig]:
    """One agent of the user's OpenClaw setup and the memory config memsift serves it with.

    The agent's memory-search settings come from the OpenClaw config (provider, model, chunking, query, …) but
    memsift keeps its own stores (``~/.memsift/memory/{agentId}.sqlite`` and
    ``~/.memsift/agents/{agentId}/sessions.sqlite``) unless ``store.path`` is set outside OpenClaw's state folder.

    Raises:
        ConfigError: no OpenClaw config, an unusable one, or an agent it does not declare (the message says which).
    """
    path = Path(config_path).expanduser() if config_path is not None else openclaw_config_path()
    agents = openclaw_agents(path)
    agent = next((a for a in agents if a.id == agent_id), None) if agent_id else next(a for a in agents if a.default)
    if agent is None:
        names = ', '.join(a.id for a in agents)
        raise ConfigError(f'{path}: no agent {agent_id!r} in agents.list (agents: {names})', file=str(path))
    config = agent.config
    if Path(config.store.path).expanduser().is_relative_to(openclaw_state_dir()):
        # OpenClaw's own index file: memsift keeps a separate one rather than writing into OpenClaw's.
        own = str(Path('~/.memsift/memory').expanduser() / f'{agent.id}.sqlite')
        config = replace(config, store=replace(config.store, path=own))
    return agent, config
