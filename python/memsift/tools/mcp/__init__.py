"""An MCP server for the four memory tools (``memory_search``, ``memory_get``, ``sessions_search``,
``sessions_history``) and the agent's memory files as resources, on the official MCP Python SDK (``mcp`` 2.x).

One module per job:

- :mod:`~memsift.tools.mcp.server`: :func:`build_server` (the tools' signatures, results as tool results) and
  :func:`serve_stdio`;
- :mod:`~memsift.tools.mcp.texts`: what the model reads: the server's instructions, each tool's title and
  description;
- :mod:`~memsift.tools.mcp.schemas`: each tool's ``outputSchema`` (:data:`OUTPUT_SCHEMAS`);
- :mod:`~memsift.tools.mcp.resources`: the memory files as ``memsift://<agentId>/<path>`` resources
  (:func:`memory_uri`);
- :mod:`~memsift.tools.mcp.http`: :func:`serve_http` and :func:`http_app` (Host and Origin checks, bearer token).

Importing this package loads the MCP SDK, which is slow: the command line imports it only for ``memsift mcp``.

>>> memory_uri('main', 'memory/2026-11-20.md'), sorted(OUTPUT_SCHEMAS)[0]
('memsift://main/memory/2026-11-20.md', 'memory_get')
"""

from __future__ import annotations

from memsift.tools.mcp.http import DEFAULT_PORT, LOCAL_HOSTS, LOCAL_ORIGINS, http_app, serve_http
from memsift.tools.mcp.resources import SCHEME, memory_uri
from memsift.tools.mcp.schemas import OUTPUT_SCHEMAS
from memsift.tools.mcp.server import build_server, serve_stdio

__all__ = [
    'DEFAULT_PORT',
    'LOCAL_HOSTS',
    'LOCAL_ORIGINS',
    'OUTPUT_SCHEMAS',
    'SCHEME',
    'build_server',
    'http_app',
    'memory_uri',
    'serve_http',
    'serve_stdio',
]
