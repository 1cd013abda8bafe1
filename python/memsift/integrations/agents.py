"""The four memory tools as plain, typed Python functions, for agent frameworks that turn functions into tools.

:func:`memory_tool_functions` returns ``memory_search``, ``memory_get``, ``sessions_search`` and
``sessions_history`` of one :class:`~memsift.MemoryTools`, each a function with a typed signature and a Google-style
docstring (the tool description and one line per argument), answering with the JSON-ready dict the tool returns.
The OpenAI Agents SDK's ``function_tool`` (``pip install 'memsift[agents]'``), LangChain's ``tool`` and LlamaIndex's
``FunctionTool.from_defaults`` all read such functions as they are; nothing here imports a framework.

The calling session is bound when the functions are made (the tools' ``session_key``), never an argument: it
decides which conversations are visible, so the model must not be able to choose it. ``sessions_history`` and
``sessions_search`` take the key of a conversation to read, as ``MemoryTools`` does, and that conversation must be
visible to the bound session (else ``{"status": "forbidden", ...}``).

>>> import tempfile, pathlib
>>> from memsift.tools.agent import MemoryTools
>>> ws = pathlib.Path(tempfile.mkdtemp())
>>> _ = (ws / 'MEMORY.md').write_text('The deploy key lives in the team vault.\\n')
>>> search = {'provider': 'none', 'store': {'path': str(ws / 'index.sqlite')}}
>>> config = {'agents': {'defaults': {'memorySearch': search}}}
>>> with MemoryTools.open(ws, config, sessions_path=ws / 'sessions.sqlite', sync=False) as tools:
...     _ = tools.index.sync()
...     memory_search, memory_get, sessions_search, sessions_history = memory_tool_functions(tools)
...     [hit['path'] for hit in memory_search('deploy key', min_score=0)['results']]
['MEMORY.md']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from memsift.errors import InvalidInputError
from memsift.tools.agent import MemoryTools

__all__ = ['MemoryToolFunction', 'memory_tool_functions']

MemoryToolFunction = Callable[..., dict[str, Any]]
"""One of the functions :func:`memory_tool_functions` returns: typed arguments in, a JSON-ready dict out."""


def memory_tool_functions(tools: MemoryTools) -> list[MemoryToolFunction]:
    """``[memory_search, memory_get, sessions_search, sessions_history]`` of ``tools``, bound to its calling session.

    Each function calls the :class:`~memsift.MemoryTools` method of the same name, so it keeps the tools' deadline,
    visibility checks and result shapes: a bad argument comes back as ``{"status": "error", "error": ...}`` for the
    model to read, not as an exception. Argument names are snake_case (``max_results``, ``from_line``,
    ``session_key``, ...); results keep OpenClaw's camelCase fields.

    To serve several conversations, make one :class:`~memsift.MemoryTools` per calling session (they may share the
    index and session store): ``MemoryTools(index, sessions, session_key=key)``.

    Example, with the OpenAI Agents SDK::

        from agents import Agent, function_tool
        agent = Agent(name='assistant', tools=[function_tool(f) for f in memory_tool_functions(tools)])

    Raises:
        InvalidInputError: ``tools`` is not a :class:`~memsift.MemoryTools`.
    """
    if not isinstance(tools, MemoryTools):
        raise InvalidInputError(f'expected memsift.MemoryTools, got {type(tools).__name__}')

    def memory_search(
        query: str,
        max_results: int | None = None,
        min_score: float | None = None,
        corpus: Literal['memory', 'sessions', 'all'] = 'memory',
    ) -> dict[str, Any]:
        """Search this agent's long-term memory: notes, facts, decisions, preferences, people and to-dos in its memory
        files (and, with session memory on, past conversations), by meaning and by words, in any language; a file
        name works too. Use it first whenever the user refers to something from before.

        Returns {results: [{path, startLine, endLine, score, snippet, source, corpus, citation?}], ...}, best first,
        score 0 to 1. Read more around a hit with memory_get(path, from_line=startLine). partial: true means these
        are keyword results only: retry shortly. No results: try other words or a lower min_score.

        Args:
            query: What to look for: a question, keywords or a file name (at most 4096 characters).
            max_results: How many results to return (default 6).
            min_score: Leave out results scoring below this, 0 to 1 (default 0.35); lower it when nothing comes back.
            corpus: "memory" (the memory files; default), "sessions" (past conversations) or "all".
        """
        return tools.memory_search(query, max_results, min_score, corpus)

    def memory_get(path: str, from_line: int | None = None, lines: int | None = None) -> dict[str, Any]:
        """Read lines of a memory file that memory_search returned, to see the whole note around a hit.

        Returns {path, from, lines, totalLines, text, truncated?, nextFrom?}: the file's text verbatim (secrets
        masked only when query.redactGet is on), at most 20,000 characters; when truncated is true, call again with
        from_line=nextFrom. An unreadable path gives {path, text: "", error}.

        Args:
            path: The path exactly as memory_search returned it, e.g. "memory/2026-11-28.md".
            from_line: First line to read, 1-based (default 1); usually a result's startLine.
            lines: How many lines to read (default: to the end of the file).
        """
        return tools.memory_get(path, from_line, lines)

    def sessions_search(query: str, session_key: str | None = None, limit: int | None = None) -> dict[str, Any]:
        """Find messages of this agent's earlier conversations by their words, in any language: what the user or the
        assistant actually said (a quote, a name, a number, an error message). Only visible conversations are
        searched. For notes and facts, or recall by meaning, use memory_search.

        Returns {results: [{sessionKey, timestamp, role, snippet, score, sessionId, messageId, match?}], ...}, best
        first; messages holding every word come first (match: "all"). Read the conversation around a hit with
        sessions_history(session_key=sessionKey).

        Args:
            query: Keywords or a plain question (1 to 4096 characters).
            session_key: Only search this conversation: a sessionKey from an earlier result (default: all visible).
            limit: Most hits to return (default 10, at most 25).
        """
        return tools.sessions_search(query, session_key, limit)

    def sessions_history(session_key: str, limit: int | None = None, include_tools: bool = False) -> dict[str, Any]:
        """Read the most recent messages of one earlier conversation, oldest first, such as the context of a
        sessions_search hit. Secrets are redacted; each message is capped at 4,000 characters.

        Returns {sessionKey, sessionId, messages: [{id, role, timestamp, content}], truncated?}, or {status:
        "forbidden", error} for a conversation this session may not see.

        Args:
            session_key: The conversation: a sessionKey (or sessionId) from a sessions_search result.
            limit: How many of the most recent messages to return (default 50, at most 200).
            include_tools: Also return tool results (default false: only user and assistant messages).
        """
        return tools.sessions_history(session_key, limit, include_tools)

    return [memory_search, memory_get, sessions_search, sessions_history]
