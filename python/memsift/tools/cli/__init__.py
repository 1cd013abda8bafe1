"""The ``memsift`` command: index, search, status, get, write and watch an agent's memory.

Every command takes ``--workspace DIR`` (default: the agent's workspace from the config, else the current
folder), ``--config FILE`` (an OpenClaw JSON5 config), ``--agent ID``, ``--store PATH`` (overrides
``store.path``) and ``--json`` (machine-readable output on stdout). Errors go to stderr with exit status 1.

    memsift index --workspace ~/agent [--force]
    memsift search "deploy checklist" --max-results 3 --json
    memsift search "deploy" --since 7d --until 2026-11-30 --path 'memory/2026-11-*.md' --path projects --tag ops
    memsift status --deep
    memsift get memory/2026-11-28.md --from 5 --lines 10
    memsift write "Deploys moved to Thursdays." [--path memory/projects/deploy.md]   (- reads stdin)
    memsift watch
    memsift eval --probes 200 --seed 0
    memsift sessions import ~/.openclaw/agents/main/sessions/abc.jsonl --key agent:main:main
    memsift sessions search "数据库迁移" --session agent:main:main --limit 5 [--since 2w --until 2026-11-30]
    memsift sessions history agent:main:main --json
    memsift mcp [--http PORT] [--openclaw] [--allow-write]
    memsift --version

``search`` and ``sessions search`` take ``--since`` / ``--until`` (an ISO date, or a span back from today: ``7d``,
``2w``, ``3m``, ``1y``); ``search`` also ``--path GLOB`` and ``--tag TAG``, each repeatable (a file or note matching
any of them); ``--now ISO-DATETIME`` reads spans and time words against another moment, for replays. Without them,
results are exactly OpenClaw's.

``eval`` measures how well search finds the user's own notes, keyword-only against hybrid (and reranked), with
known-item probes made from the indexed notes (see :mod:`memsift.index.evaluate`); it evaluates the index as it is.

``sessions`` commands read ``--sessions-db`` (default ``~/.memsift/agents/{agent}/sessions.sqlite``) and act as the
agent's main session (``--as KEY`` to act as another), with the config's ``tools.sessions.visibility``.

``mcp`` serves the four memory tools to MCP clients (see :mod:`memsift.tools.mcp`): over stdin/stdout by default,
or over streamable HTTP on ``127.0.0.1:PORT/mcp`` with ``--http PORT``. ``--openclaw`` serves an agent of the
user's OpenClaw setup; a bearer token for HTTP is read from the environment variable ``--token-env`` names
(default ``MEMSIFT_MCP_TOKEN``), never from the command line. ``--allow-write`` adds ``memory_write`` (off by
default: the server is read-only, as the OpenClaw drop-in should be).

``write`` appends a note to today's ``memory/YYYY-MM-DD.md`` (or ``--path``, a Markdown file under ``memory/``) and
indexes it before it returns (see :mod:`memsift.index.notes`).

The package, by job: :mod:`~memsift.tools.cli.parser` (the commands, their options and help texts),
:mod:`~memsift.tools.cli.commands` (one function per command, and :func:`main`) and :mod:`~memsift.tools.cli.render`
(what the commands print).
"""

from memsift.tools.cli.commands import main

__all__ = ['main']
