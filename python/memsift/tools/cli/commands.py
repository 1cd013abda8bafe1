"""The ``memsift`` commands, one function each (parsed arguments in, exit status out), and :func:`main`, which
parses the command line, runs the command and turns errors into exit statuses."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsift._record import replace
from memsift.config import MemoryConfig, load_config
from memsift.errors import ConfigError, InvalidInputError, MemsiftError
from memsift.tools.cli.parser import MCP_TOKEN_ENV, build_parser
from memsift.tools.cli.render import (
    disk_line,
    eval_lines,
    json_line,
    migrate_lines,
    print_json,
    report_line,
    search_lines,
    serving_line,
    sessions_text,
    status_lines,
    sync_progress,
    synced_line,
    written_line,
)

if TYPE_CHECKING:
    from memsift.index.memory_index import MemoryIndex

# Each command imports what only it needs (sessions, the agent tools, MCP, rich) when it runs: `memsift search`
# starts in well under 100 ms.

__all__ = ['COMMANDS', 'main']


_EVERY_AGENT = ('index', 'status')
"""Commands that, with several agents and none named, run for each (OpenClaw's ``memory index`` / ``status``)."""


def _each_agent(args: argparse.Namespace) -> list[argparse.Namespace]:
    """``args`` once per agent the command runs for: the one named, or every agent (see :data:`_EVERY_AGENT`)."""
    return [argparse.Namespace(**{**vars(args), 'agent': agent}) for agent in getattr(args, 'agents', [args.agent])]


def _find_setup(args: argparse.Namespace) -> None:
    """The OpenClaw config and agent a command works on, found as OpenClaw finds them: ``--config``, else
    ``$OPENCLAW_CONFIG_PATH``, else ``~/.openclaw/openclaw.json`` when it exists; ``--agent``, else the config's
    default agent (several and no default: the error OpenClaw gives), else ``main``."""
    from memsift.config.layers import agent_ids, choose_agent, declares_agents, openclaw_config_path, read_config

    if not hasattr(args, 'agent') or getattr(args, 'openclaw', False):
        return  # --openclaw resolves the config and agent itself (memsift.tools.openclaw)
    if args.config is None and openclaw_config_path().is_file():
        args.config = str(openclaw_config_path())
        args.openclaw_setup = True  # the user's OpenClaw: its workspaces too (memsift.tools.openclaw)
    root = read_config(args.config) if args.config is not None else None
    if isinstance(root, Mapping) and args.agent is None and args.command in _EVERY_AGENT:
        ids, default = agent_ids(root)
        if default is None and len(ids) > 1:  # as OpenClaw's memory status / index: each agent in turn
            args.agents, args.agent = ids, ids[0]
            return
    if isinstance(root, Mapping) and (args.agent is None or declares_agents(root)):
        args.agent = choose_agent(root, args.agent, args.config)
    args.agent = args.agent or 'main'


def _setup_workspace(args: argparse.Namespace) -> str | None:
    """The agent's workspace where the user's OpenClaw setup keeps it, when the config names none."""
    if not getattr(args, 'openclaw_setup', False):
        return None  # an explicit --config: its workspace, else the current folder
    from memsift.config.layers import read_config, state_workspace

    return str(state_workspace(read_config(args.config), args.agent))


def _config(args: argparse.Namespace) -> MemoryConfig:
    config = load_config(args.config, args.agent)
    if args.store:
        config = replace(config, store=replace(config.store, path=str(Path(args.store))))
    return config


def _open(args: argparse.Namespace, *, syncs: bool = False) -> MemoryIndex:
    """The index the command works on; ``syncs``: the command syncs it at once, so the workspace scan of that
    sync's check starts now, beside importing and opening the index (:class:`~memsift.index.workspace.ScanAhead`:
    14 ms of a search's 100 on the SciFact notes)."""
    from memsift.index.workspace import ScanAhead, memory_scope

    config = _config(args)
    if getattr(args, 'no_sync', False):
        config = replace(config, sync=replace(config.sync, on_search=False))
    workspace = args.workspace or config.workspace or _setup_workspace(args) or '.'
    ahead = None
    if syncs and not config.multimodal.enabled and Path(workspace).expanduser().is_dir():
        ahead = ScanAhead(workspace, memory_scope(config), ())
    from memsift.index.memory_index import MemoryIndex  # after starting the scan: most of a command's imports

    index = MemoryIndex(workspace, config, args.agent)
    index.freshness.scan_ahead = ahead
    return index


def _index(args: argparse.Namespace) -> int:
    reports = []
    for each in _each_agent(args):
        with _open(each, syncs=True) as index, sync_progress(not args.json, index) as progress:
            if not index.config.enabled:  # OpenClaw indexes nothing for an agent whose memory search is off
                reports.append({'agentId': each.agent, 'status': 'disabled'})
                if not args.json:
                    print(f'Memory search disabled ({each.agent}): nothing indexed.')
                continue
            report = index.sync(force=args.force, progress=progress)
        reports.append({'agentId': each.agent, **report.to_dict()} if hasattr(args, 'agents') else report.to_dict())
        if not args.json:
            print(report_line(report) if not hasattr(args, 'agents') else f'{each.agent}: {report_line(report)}')
            for path, reason in report.skipped.items():
                print(f'  skipped {path}: {reason}')
    if args.json:
        print_json(reports if hasattr(args, 'agents') else reports[0])
    return 0


def _search(args: argparse.Namespace) -> int:
    query = args.query_option if args.query_option is not None else args.query
    if query is None:  # a usage error: exit status 2, as argparse gives for its own
        message = 'Missing search query. Provide a positional query or use --query <text>.'
        if args.json:
            print_json({'status': 'error', 'error': message, 'type': 'UsageError'})
        else:
            print(f'memsift search: error: {message}', file=sys.stderr)
        return 2
    with _open(args, syncs=not args.no_sync) as index:
        if not args.no_sync:
            index.sync()
        result = index.search(
            query,
            args.max_results,
            args.min_score,
            explain=args.explain,
            since=args.since,
            until=args.until,
            paths=args.paths,
            tags=args.tags,
            now=args.now,
        )
    data = result.to_dict()
    if args.explain:
        data['debug']['cut'] = result.debug.get('cut', [])
    if args.json:
        print_json(data)
        return 1 if result.unavailable else 0
    if result.unavailable:
        print(f'memsift: {result.error}\n  {result.action}', file=sys.stderr)
        return 1
    for line in search_lines(result, args.explain):
        print(line)
    return 0


def _status(args: argparse.Namespace) -> int:
    answers = [_agent_status(each) for each in _each_agent(args)]
    if args.json:
        print_json(answers if hasattr(args, 'agents') else answers[0])
        return 0
    for data in answers:
        for line in status_lines(data):
            print(line)
    return 0


def _agent_status(args: argparse.Namespace) -> dict[str, Any]:
    with _open(args) as index:
        if args.index and index.config.enabled:  # OpenClaw's status --index: catch up first, then the deep check
            index.sync()
        data: dict[str, Any] = dict(index.status(deep=args.deep or args.index or args.fix))
        if args.fix:
            found = data.get('issues') or []
            if found:  # the store is the source of truth: the derived indexes are rebuilt from the files
                report = index.sync(force=True)
                data = dict(index.status(deep=True))
                data['repair'] = {'issues': found, 'filesIndexed': len(report.added) + len(report.updated)}
            else:
                data['repair'] = {'issues': [], 'filesIndexed': 0}
    return data


def _reset(args: argparse.Namespace) -> int:
    if not args.yes:
        if not sys.stdin.isatty():
            raise InvalidInputError('Memory reset requires confirmation. Re-run with --yes in non-interactive mode.')
        answer = input(f'Empty the memory index of agent {args.agent!r}? Files and transcripts stay. [y/N] ')
        if answer.strip().lower() not in ('y', 'yes'):
            print('Reset cancelled.', file=sys.stderr)
            return 1
    with _open(args) as index:
        data = {'agentId': args.agent, **index.reset()}
    if args.json:
        print_json(data)
    else:
        print(
            f'Memory index reset ({args.agent}): {data["filesRemoved"]} files, {data["chunksRemoved"]} chunks removed. '
            f'Memory files and sessions preserved. Rebuild with: memsift index --agent {args.agent}'
        )
    return 0


def _forget(args: argparse.Namespace) -> int:
    from memsift.index.backend import sessions_target
    from memsift.sessions import SessionStore

    config = load_config(args.config, args.agent)
    target, setting = (args.sessions_db, '--sessions-db') if args.sessions_db else sessions_target(config)
    with SessionStore.from_config(target, args.agent, config.session_tools, setting=setting) as store:
        forgotten = [store.forget(session, dry_run=args.dry_run) for session in args.sessions]
    data = {
        'agentId': args.agent,
        'dryRun': args.dry_run,
        'sessions': [{'session': asked, **result} for asked, result in zip(args.sessions, forgotten, strict=True)],
        'events': sum(result['events'] for result in forgotten),
    }
    if args.json:
        print_json(data)
    else:
        verb = 'would forget' if args.dry_run else 'forgot'
        print(f"memsift {verb} {data['events']} messages of agent {args.agent!r} (OpenClaw's transcripts are kept)")
    return 0


def _get(args: argparse.Namespace) -> int:
    with _open(args) as index:
        data = index.get(args.path, args.from_line, args.lines)
    if args.json:
        print_json(data)
    else:
        print(data['text'])
        if data.get('truncated'):
            print(f'… (truncated; continue with --from {data["nextFrom"]})', file=sys.stderr)
    return 0


def _write(args: argparse.Namespace) -> int:
    text = _stdin_note() if args.text == '-' else args.text
    with _open(args) as index:
        written = index.write(text, args.path)
    if args.json:
        print_json(written)
    else:
        print(written_line(written))
    return 0


def _stdin_note() -> str:
    """The note piped in: read up to just past the longest note (UTF-8 is at most 4 bytes a character, so a longer
    input is still refused as too long, without reading all of it)."""
    from memsift.index.notes import MAX_NOTE_CHARS

    return sys.stdin.buffer.read(4 * MAX_NOTE_CHARS + 4).decode('utf-8', 'replace')


def _compact(args: argparse.Namespace) -> int:
    with _open(args) as index:
        report = index.compact(cache_days=args.cache_days)
    if args.json:
        print_json(report)
        return 0
    print(f'Before:          {disk_line(report["before"])}')
    print(f'After:           {disk_line(report["after"])}')
    print(f'Cache rows pruned: {report["cacheRowsPruned"]} · index segments merged: {report["segmentsMerged"]}')
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from memsift.migrate import migrate

    config = _config(args)
    bar = None
    if not args.json and sys.stderr.isatty():
        from rich.progress import Progress as Bar

        bar = Bar(transient=True)
    tasks: dict[str, Any] = {}

    def progress(what: str, done: int, total: int) -> None:
        if bar is not None:
            task = tasks.setdefault(what, bar.add_task(f'copying {what}', total=total))
            bar.update(task, completed=done, total=total)

    if bar is not None:
        bar.start()
    try:
        report = migrate(config, args.to, dsn=args.dsn, sessions_path=args.sessions_db, progress=progress)
    finally:
        if bar is not None:
            bar.stop()
    if args.json:
        print_json(report)
        return 0 if report['verified'] else 1
    for line in migrate_lines(report):
        print(line)
    if not report['verified']:
        print('memsift: the copy differs from its source; run migrate again to complete it', file=sys.stderr)
        return 1
    print(f'set store.backend to "{args.to}" to use the copy ({report["seconds"]} s)')
    return 0


def _eval(args: argparse.Namespace) -> int:
    from memsift.index.evaluate import evaluate_memory

    with _open(args) as index:
        report = evaluate_memory(index, probes=args.probes, seed=args.seed)
    if args.json:
        print_json(report.to_dict())
        return 0
    for line in eval_lines(report):
        print(line)
    return 0


def _watch(args: argparse.Namespace) -> int:
    with _open(args) as index, sync_progress(not args.json, index) as progress:
        report = index.sync(progress=progress)
        print(json_line(report.to_dict()) if args.json else report_line(report), flush=True)
        index.start_watching()
        if not args.json:
            print(f'watching {index.workspace} (Ctrl-C to stop)', file=sys.stderr, flush=True)
        generation = index.store.generation
        try:
            while True:
                time.sleep(0.25)
                if index.store.generation != generation:
                    generation = index.store.generation
                    status = index.status()
                    line = {
                        'event': 'synced',
                        'files': status['files'],
                        'chunks': status['chunks'],
                        'generation': generation,
                    }
                    print(json_line(line) if args.json else synced_line(line), flush=True)
        except KeyboardInterrupt:
            return 0


def _sessions(args: argparse.Namespace) -> int:
    from memsift.index.backend import sessions_target
    from memsift.sessions import Caller, SessionStore, main_session_key

    config = load_config(args.config, args.agent)
    caller = Caller(args.caller or main_session_key(args.agent))
    target, setting = (args.sessions_db, '--sessions-db') if args.sessions_db else sessions_target(config)
    with SessionStore.from_config(target, args.agent, config.session_tools, setting=setting) as store:
        data: dict[str, Any]  # the typed answers as plain dicts: printed as they are
        if args.sessions_command == 'import':
            data = store.import_jsonl(
                args.path, args.key or f'agent:{args.agent}:{Path(args.path).stem}', spawned_by=args.spawned_by
            )
            store.reconcile()
        elif args.sessions_command == 'search':
            data = dict(
                store.search(
                    args.query, caller, args.session, args.limit, since=args.since, until=args.until, now=args.now
                )
            )
        elif args.sessions_command == 'status':
            data = store.status()
        else:
            data = dict(store.history(args.key, caller, limit=args.limit, include_tools=args.include_tools))
    if args.json:
        print_json(data)
    else:
        print(sessions_text(args.sessions_command, data))
        if data.get('warning'):
            print(data['warning'], file=sys.stderr)
    return 0


def _mcp(args: argparse.Namespace) -> int:
    from memsift.tools.agent import DEFAULT_DEADLINE_S, MemoryTools, from_openclaw
    from memsift.tools.mcp import serve_http, serve_stdio  # here: the MCP SDK is slow to import

    if args.deadline is None:
        args.deadline = DEFAULT_DEADLINE_S
    token = None
    if args.http is not None:
        name = args.token_env or MCP_TOKEN_ENV
        token = os.environ.get(name) or None
        if args.token_env and token is None:  # asked for a token: never serve without one by mistake
            raise ConfigError(f'--token-env {name}: the environment variable {name} is not set')
    if args.openclaw:
        if args.workspace or args.store or args.sessions_db:
            raise ConfigError(
                '--openclaw serves the workspace and stores of the OpenClaw setup: drop --workspace, '
                '--store and --sessions-db (--config names the OpenClaw config)'
            )
        tools = from_openclaw(args.agent, config_path=args.config, deadline_s=args.deadline, watch=True)
    else:
        args.agent = args.agent or 'main'
        config = _config(args)
        tools = MemoryTools.open(
            args.workspace or config.workspace or '.',
            config,
            args.agent,
            sessions_path=args.sessions_db,
            deadline_s=args.deadline,
            watch=True,
        )
    with tools:
        where = f'http://{args.host}:{args.http}/mcp' if args.http is not None else 'stdio'
        serving = {
            'event': 'serving',
            'agent': tools.agent_id,
            'workspace': str(tools.index.workspace),
            'transport': where,
            'token': token is not None,
            'write': args.allow_write,
        }
        # In stdio mode stdout carries the protocol and nothing else: the line goes to stderr there.
        print(
            json_line(serving)
            if args.json
            else serving_line(tools.agent_id, str(tools.index.workspace), where, bool(token), args.allow_write),
            file=sys.stdout if args.json and args.http is not None else sys.stderr,
            flush=True,
        )
        try:
            if args.http is not None:
                serve_http(tools, args.host, args.http, token=token, allow_write=args.allow_write)
            else:
                serve_stdio(tools, allow_write=args.allow_write, session_meta=args.openclaw)
        except KeyboardInterrupt:
            pass  # Ctrl-C is how a server is stopped: a clean exit
    return 0


def _openclaw(args: argparse.Namespace) -> int:
    from memsift.openclaw_plugin import plugin_dir

    print(plugin_dir())  # the only subcommand, plugin-path
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    'index': _index,
    'search': _search,
    'status': _status,
    'reset': _reset,
    'forget': _forget,
    'get': _get,
    'write': _write,
    'watch': _watch,
    'compact': _compact,
    'migrate': _migrate,
    'eval': _eval,
    'sessions': _sessions,
    'mcp': _mcp,
    'openclaw': _openclaw,
}
"""Each command's function, by the name the command line gives it."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``memsift`` command line; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    try:
        _find_setup(args)
        return COMMANDS[args.command](args)
    except BrokenPipeError:
        # The reader went away (`memsift search ... | head`): exit quietly, as other Unix tools do, and point
        # stdout at /dev/null so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a command killed by it
    except MemsiftError as exc:
        if args.json:
            print_json({'status': 'error', 'error': str(exc), 'type': type(exc).__name__})
        else:
            print(f'memsift: {exc}', file=sys.stderr)
        return 1
