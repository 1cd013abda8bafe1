"""Where agents and users reach memsift: the four agent tools with OpenClaw's result shapes, their async twins, the
MCP server, the command line and the OpenClaw drop-in.

- :mod:`memsift.tools.agent`: :class:`MemoryTools` and the module-level ``memory_search`` / ``memory_get`` /
  ``sessions_search`` / ``sessions_history`` (the OpenClaw-shaped result and error dicts are made here, and only
  here; the library underneath raises typed errors), with deadlines.
- :mod:`memsift.tools.aio`: :class:`~memsift.tools.aio.AsyncMemoryTools` (also importable as ``memsift.aio``).
- :mod:`memsift.tools.mcp`: the MCP server (stdio and streamable HTTP).
- :mod:`memsift.tools.cli`: the ``memsift`` command.
- :mod:`memsift.tools.openclaw`: finding an OpenClaw install's config, agents and transcripts.

>>> import tempfile, pathlib
>>> from memsift.tools import MemoryTools
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.\\n')
>>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
>>> config = {'agents': {'defaults': {'memorySearch': search}}}
>>> with MemoryTools.open(ws, config, sessions_path=ws / 'sessions.sqlite') as tools:
...     path = tools.memory_search('deploy key', minScore=0)['results'][0]['path']
...     tools.memory_get(path)['text']
'The deploy key lives in the team vault.\\n'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memsift.tools.agent import (
        DEFAULT_DEADLINE_S,
        MemoryTools,
        configure,
        default_tools,
        from_openclaw,
        memory_get,
        memory_search,
        sessions_history,
        sessions_search,
    )

__all__ = [
    'DEFAULT_DEADLINE_S',
    'MemoryTools',
    'configure',
    'default_tools',
    'from_openclaw',
    'memory_get',
    'memory_search',
    'sessions_history',
    'sessions_search',
]


def __getattr__(name: str) -> Any:
    # The agent tools load on first use, so `memsift.tools.cli` (the command) starts without them.
    if name not in __all__:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = getattr(importlib.import_module('memsift.tools.agent'), name)
    globals()[name] = value
    return value
