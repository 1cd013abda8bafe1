"""What the MCP server tells a model: the server's instructions and each tool's title and description.

These strings are the model's only guide to when to call which tool and what comes back, so they name the result
keys the tools return (:mod:`memsift.tools.mcp.schemas` declares them) and say how to read on.

>>> sorted(TITLES) == sorted(DESCRIPTIONS)
True
>>> TITLES['memory_search']
'Search memory'
"""

from __future__ import annotations

__all__ = [
    'DESCRIPTIONS',
    'INSTRUCTIONS',
    'MEMORY_GET',
    'MEMORY_SEARCH',
    'MEMORY_WRITE',
    'SESSIONS_HISTORY',
    'SESSIONS_SEARCH',
    'TITLES',
    'WRITE_INSTRUCTIONS',
]

INSTRUCTIONS = """\
Long-term memory of this agent. memory_search recalls notes, facts, decisions and preferences written in the \
agent's memory files, by meaning and by words, in any language; sessions_search finds the exact words said in \
earlier conversations. memory_get and sessions_history read more around a hit."""

WRITE_INSTRUCTIONS = """\
This server was started with writing enabled (--allow-write): memory_write saves a note, appended to today's \
memory/YYYY-MM-DD.md or to a Markdown file under memory/ that you name, and the next memory_search finds it. Save \
what is worth remembering in later conversations; never rewrite or delete notes (memory_write only appends)."""
"""Added to :data:`INSTRUCTIONS` only when ``memory_write`` is served: without it the server is read-only."""

MEMORY_SEARCH = """\
Search this agent's long-term memory: the notes, facts, decisions, preferences, people and to-dos written in \
MEMORY.md and memory/*.md (and, when session memory is on, past conversations). It matches by meaning as well as \
by words, in any language (Chinese, Japanese and Korean included), so a paraphrase finds the note; a file name \
works too. Use it first whenever the user refers to something from before. For the exact words someone said in an \
earlier conversation use sessions_search instead. Optional filters narrow it: since / until (an ISO date such as \
2026-11-01, or a span back such as 7d, 2w, 3m), paths (globs such as memory/2026-11-*.md) and tags (front-matter \
tags).

Returns {results: [{path, startLine, endLine, score, snippet, source, corpus, citation?}], provider, model, mode, \
...}, best first; score is 0-1. To read more around a hit, call memory_get with its path and from=startLine. \
partial: true means the full search ran out of time and these are keyword results only: retry shortly for the \
full search. No results: try other words or a lower minScore."""

MEMORY_GET = """\
Read lines of a memory file, usually one that memory_search returned, to see the whole note around a hit. Only \
indexed memory files can be read (MEMORY.md, memory/**/*.md and configured extra paths); conversations are read \
with sessions_history.

Returns {path, from, lines, totalLines, text, truncated?, nextFrom?}: the file's text verbatim (secrets masked \
only when query.redactGet is on), at most 20,000 characters per call; when truncated is true, call again with \
from=nextFrom. An unreadable path gives {path, text: "", error}."""

SESSIONS_SEARCH = """\
Find messages of this agent's earlier conversations (session transcripts) by their words, in any language: \
what the user or the assistant actually said, such as a quote, a name, a number or an error message. Keywords or \
a plain question both work: messages holding every word come first (match: "all"), then, unless configured \
otherwise, the messages that best answer the rest of the question (match: "partial"). For notes and facts in \
memory files, or recall by meaning, use memory_search. Only sessions visible to this agent are searched; since / \
until (an ISO date such as 2026-11-01, or a span back such as 7d) keep only messages of those days.

Returns {results: [{sessionKey, timestamp, role, snippet, score, sessionId, messageId, match?}], indexing?, \
warning?, truncated?}, best first; timestamp is in milliseconds since 1970. To read the conversation around a \
hit, call sessions_history with its sessionKey."""

SESSIONS_HISTORY = """\
Read the most recent messages of one earlier conversation, oldest first, for example the context of a \
sessions_search hit. Text is redacted of secrets and each message is capped at 4,000 characters; tool calls are \
left out.

Returns {sessionKey, sessionId, messages: [{id, role, timestamp, content}], truncated?}; truncated: true means \
older messages were dropped to keep the answer under 32 KiB."""

MEMORY_WRITE = """\
Save a note to this agent's long-term memory: a fact, decision, preference, to-do or summary worth remembering in \
later conversations. The note is appended, after a blank line, to today's daily file memory/YYYY-MM-DD.md, or to \
the Markdown file under memory/ that path names (e.g. memory/projects/deploy.md; created if missing); notes \
already there are never changed. memory_search finds it as soon as this call returns. Available only because this \
server was started with writing enabled (--allow-write); otherwise memory is read-only here.

Write self-contained notes in plain Markdown (who, what, when), at most 20,000 characters; a path must be a .md \
file under memory/ (no "..", no symlinks). Search first to avoid saving a duplicate.

Returns {path, startLine, endLine, chars, warning?}: memory_get with that path and from=startLine reads the note \
back. warning: the note was written but is not indexed yet (a search finds it shortly); do not write it again. A \
refused note gives {status: "error", error} and nothing is written."""

DESCRIPTIONS = {
    'memory_search': MEMORY_SEARCH,
    'memory_get': MEMORY_GET,
    'sessions_search': SESSIONS_SEARCH,
    'sessions_history': SESSIONS_HISTORY,
    'memory_write': MEMORY_WRITE,
}
"""Each tool's description, by tool name (``memory_write``'s is served only with ``--allow-write``)."""

TITLES = {
    'memory_search': 'Search memory',
    'memory_get': 'Read a memory file',
    'sessions_search': 'Search past conversations',
    'sessions_history': 'Read a past conversation',
    'memory_write': 'Save a note to memory',
}
"""Each tool's human-readable title, by tool name."""
