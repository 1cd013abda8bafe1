"""Finding a user's OpenClaw setup: its config, agents, workspaces and transcripts (``memsift.from_openclaw``, in
:mod:`memsift.tools`, serves an agent of it with memsift).

OpenClaw keeps its config in ``~/.openclaw/openclaw.json`` (``OPENCLAW_CONFIG_PATH`` overrides; JSON5) and its state
in ``~/.openclaw`` (``OPENCLAW_STATE_DIR``). Agents are ``agents.list[]`` (1.x) or ``agents.entries.<id>`` (2.x),
each with its workspace where the config says (else ``<state>/workspace`` for the default agent and
``<state>/workspace-<agentId>`` for the others). Transcripts: 1.x keeps them in ``<state>/agents/<agentId>/sessions/``
(``sessions.json`` maps session keys to ``{sessionId, spawnedBy?, sessionFile?}``, ``<sessionId>.jsonl`` holds each
transcript); 2.x in ``<state>/agents/<agentId>/agent/openclaw-agent.sqlite`` (:mod:`memsift.sessions.openclaw_db`).
memsift reads all of it and writes only its own stores (``~/.memsift/…``): OpenClaw's files are never modified.
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

from memsift._record import record, replace
from memsift.config import MemoryConfig, load_config
from memsift.config.layers import (
    agent_ids,
    choose_agent,
    openclaw_config_path,
    openclaw_state_dir,
    read_config,
    state_workspace,
)
from memsift.errors import ConfigError, MemsiftError
from memsift.sessions import SessionStore, archived_at_ms

__all__ = [
    'OpenClawAgent',
    'TranscriptWatcher',
    'import_openclaw_sessions',
    'import_openclaw_transcripts',
    'openclaw_agent',
    'openclaw_agents',
    'openclaw_config_path',
    'openclaw_state_dir',
]

_log = logging.getLogger('memsift.tools.openclaw')

DATABASE_NAME = 'openclaw-agent.sqlite'
"""OpenClaw 2.x's per-agent database (transcripts, its own index), in ``<state>/agents/<id>/agent/``."""
SESSION_RESCAN_S = 2.0
"""Transcripts are checked for new lines at most this often (a stat per file when nothing changed)."""


@record
class OpenClawAgent:
    """One agent of an OpenClaw setup: its id, workspace, transcripts and memory-search settings."""

    id: str
    workspace: Path
    sessions_dir: Path
    """OpenClaw 1.x's transcript folder (``sessions/*.jsonl``, ``sessions.json``)."""
    default: bool
    config: MemoryConfig
    database: Path | None = None
    """OpenClaw 2.x's transcript store, ``<state>/agents/<id>/agent/openclaw-agent.sqlite`` (``None`` for 1.x)."""


def openclaw_agents(config_path: str | os.PathLike[str] | None = None) -> list[OpenClawAgent]:
    """The agents an OpenClaw config declares: ``agents.list[]`` (1.x) or ``agents.entries`` (2.x), or just the
    implicit ``main``. Their transcripts are under the state folder (:func:`openclaw_state_dir`), wherever the
    config file is."""
    path = Path(config_path).expanduser() if config_path is not None else openclaw_config_path()
    if not path.is_file():
        raise ConfigError(
            f'{path}: no OpenClaw config here; set OPENCLAW_CONFIG_PATH to your openclaw.json (or '
            'OPENCLAW_STATE_DIR to the folder holding it)',
            file=str(path),
        )
    root = read_config(path)
    if not isinstance(root, Mapping):
        load_config(path)  # the same message as everywhere else
    ids, default_id = agent_ids(root)
    state = openclaw_state_dir()
    found = []
    for agent_id in ids:
        config = load_config(path, agent_id)
        workspace = Path(config.workspace).expanduser() if config.workspace else state_workspace(root, agent_id)
        agent_dir = state / 'agents' / agent_id
        database = agent_dir / 'agent' / DATABASE_NAME if config.profile.transcripts == 'sqlite' else None
        found.append(
            OpenClawAgent(agent_id, workspace, agent_dir / 'sessions', agent_id == default_id, config, database)
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


def import_openclaw_transcripts(store: SessionStore, agent: OpenClawAgent) -> dict[str, int]:
    """Import (or catch up on) an agent's transcripts: from its OpenClaw 2.x database when it has one, else from
    its 1.x ``sessions/`` folder (a 2.x setup not yet migrated by ``openclaw doctor --fix`` keeps its JSONL there);
    returns events added per session key."""
    if agent.database is not None and agent.database.is_file():
        return store.import_openclaw_database(agent.database)
    return import_openclaw_sessions(store, agent.sessions_dir)


class TranscriptWatcher:
    """Catches the store up with the agent's OpenClaw transcripts when called, at most every
    :data:`SESSION_RESCAN_S` seconds (the tools call it before each session tool call)."""

    def __init__(self, store: SessionStore, agent: OpenClawAgent) -> None:
        self.store, self.agent = store, agent
        self._lock = threading.Lock()
        self._last = 0.0

    def __call__(self) -> None:
        with self._lock:
            if time.monotonic() - self._last < SESSION_RESCAN_S:
                return
            import_openclaw_transcripts(self.store, self.agent)
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
    chosen = choose_agent(read_config(path), agent_id, str(path))
    agent = next(a for a in agents if a.id == chosen)
    config = agent.config
    if Path(config.store.path).expanduser().is_relative_to(openclaw_state_dir()):
        # OpenClaw's own index file: memsift keeps a separate one rather than writing into OpenClaw's.
        own = str(Path('~/.memsift/memory').expanduser() / f'{agent.id}.sqlite')
        config = replace(config, store=replace(config.store, path=own))
    return agent, config
