"""Differential bench: the same OpenClaw 2.x configs and workspaces through the real OpenClaw 2026.9.6 and through
memsift, keyword-only (``provider: "none"``) so no model is needed on either side.

    .venv/bin/python benches/openclaw_diff.py [--out benches/report/openclaw_diff.json] [--pin DIR] [--keep]
        [--only configs,ranking,tools] [--openclaw-dir DIR] [--no-install]

The cases are ``benches/_openclaw_cases.py``'s (the parity test replays them on memsift):

a. **configs**: each config of ``CONFIGS`` in its own throw-away home (HOME, ``OPENCLAW_STATE_DIR``,
   ``OPENCLAW_CONFIG_PATH``). OpenClaw: ``openclaw memory status --index --json`` (the agents it resolves, their
   workspaces, and the files in each agent's ``openclaw-agent.sqlite``) or its error; for some, ``openclaw memory
   search --json`` too. memsift: ``memsift status --index --json`` and ``memsift search --json`` on the same file
   (its store is ``plugins.entries.memsift.config.store.path``), the files in its store, its ``ConfigWarning``\\ s.
b. **ranking**: a year of daily notes dated back from today, ``MEMORY.md`` with importance annotations, ``USER.md``;
   each query of ``QUERIES`` has its right answer written down. OpenClaw's ``memory_search`` tool (after ``openclaw
   memory index``) and memsift's ``MemoryTools.memory_search``, both with ``maxResults 6, minScore 0``: the top 3
   and whether each top hit is right; per query same / better / worse / differs.
c. **tools**: ``memory_search`` corpora (memory, wiki, all, sessions with session search off, an unknown one) and
   ``memory_get`` windows, errors and corpora, compared by shape: keys, result keys, and the flags (status, truncated,
   nextFrom, disabled, unavailable, error, code, action, corpora, warning, from, lines).

OpenClaw's tools are called in one Node process the way its agent runtime calls them (``createMemorySearchTool`` /
``createMemoryGetTool`` of its ``dist/``, session key ``agent:main:main``), after the CLI built the index (the CLI
sets up the state the tools' first sync needs). The OpenClaw commands run a few at a time; about a minute on 2
cores, nearly all of it Node.

``--pin DIR`` writes OpenClaw's own answers as fixtures for ``tests/surfaces/test_openclaw2_parity.py`` (no npm in
CI): ``ranking.json`` (its top 3 per query), ``tools.json`` (its answers with timings, ``observedAt``, absolute and
dated paths normalized, and their shapes), ``configs.json`` (what it resolved), and a README saying how they were
made.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import _openclaw
import _openclaw_cases as cases

import memsift
from memsift.tools import MemoryTools

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / 'benches' / 'report' / 'openclaw_diff.json'
MARK = '@@OCDIFF@@'
SEARCH_ARGS = {'maxResults': 6, 'minScore': 0}
PROBE_QUERY = 'router'
SEARCH_PROBES = ('single', 'multi-explicit', 'disabled')
"""Config cases whose ``memory search`` answer says more than ``memory status`` (agent choice, disabled memory)."""

# The tools as OpenClaw's agent runtime builds them; the dist chunk names are hashed, so they are found by export.
HARNESS = r"""
import { readdirSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [dist, callsFile, agentId, sessionKey] = process.argv.slice(2);
const calls = JSON.parse(readFileSync(callsFile, "utf8"));
const files = readdirSync(dist).filter((f) => f.endsWith(".mjs"));
const source = (f) => readFileSync(dist + "/" + f, "utf8");
const toolsFile = files.find((f) => /export \{[^}]*\bcreateMemorySearchTool\b/.test(source(f)));
const ioFile = files.find((f) => /export \{[^}]*\bgetRuntimeConfig as \w+/.test(source(f)));
if (!toolsFile || !ioFile) { console.error("memory tools or getRuntimeConfig not found in " + dist); process.exit(3); }
const alias = source(ioFile).match(/\bgetRuntimeConfig as (\w+)/)[1];
const io = await import(pathToFileURL(dist + "/" + ioFile).href);
const { createMemorySearchTool, createMemoryGetTool } = await import(pathToFileURL(dist + "/" + toolsFile).href);
const config = io[alias]({ skipPluginValidation: true });
const opts = { config, agentId, agentSessionKey: sessionKey, oneShotCliRun: true };
const tools = { memory_search: createMemorySearchTool(opts), memory_get: createMemoryGetTool(opts) };
for (const c of calls) {
  let answer;
  try {
    const res = await tools[c.tool].execute("call-" + c.id, c.args, undefined, undefined);
    answer = res.details ?? res;
  }
  catch (e) { answer = { thrown: String((e && e.message) || e) }; }
  process.stdout.write("__MARK__" + JSON.stringify({ id: c.id, answer }) + "\n");
}
process.exit(0);
""".replace('__MARK__', MARK)


# ---------------------------------------------------------------- running things


def utc_today() -> date:
    """Today as OpenClaw dates notes (``Date.UTC`` of the name; decay counts from now)."""
    return datetime.now(timezone.utc).date()


def json_in(text: str) -> Any:
    """The JSON document a CLI printed, skipping any banner lines before it (``None`` if there is none)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r'^[\[{]', text, re.MULTILINE):
        try:
            value, end = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if not text[end:].strip():
            return value
    return None


class Home:
    """A throw-away OpenClaw home: HOME, state folder and config file under ``root``."""

    def __init__(self, root: Path, config: Mapping[str, Any]) -> None:
        self.root = root
        (root / 'home').mkdir(parents=True, exist_ok=True)
        (root / 'state').mkdir(exist_ok=True)
        self.config = root / 'config.json'
        self.config.write_text(json.dumps(config, indent=2, ensure_ascii=False), encoding='utf-8')

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if not k.startswith(('OPENCLAW_', 'MEMSIFT_'))}
        return {
            **keep,
            'HOME': str(self.root / 'home'),
            'OPENCLAW_STATE_DIR': str(self.root / 'state'),
            'OPENCLAW_CONFIG_PATH': str(self.config),
            'NO_COLOR': '1',
        }

    def run(self, cmd: Sequence[str], timeout: float = 180) -> dict[str, Any]:
        started = time.monotonic()
        proc = subprocess.run(
            list(cmd), capture_output=True, text=True, env=self.env(), timeout=timeout, check=False, cwd=self.root
        )
        return {
            'rc': proc.returncode,
            'stdout': proc.stdout,
            'stderr': proc.stderr,
            'json': json_in(proc.stdout),
            'seconds': round(time.monotonic() - started, 2),
        }


def table_rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    if not db.is_file():
        return []
    with sqlite3.connect(f'{db.as_uri()}?mode=ro', uri=True) as conn:
        return list(conn.execute(sql))


def first_line(message: str) -> str:
    """A CLI's error message on one line (the first six of its lines: the heading and each key it names)."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return ' '.join(lines[:6])


# ---------------------------------------------------------------- a. config resolution


def openclaw_config(oc: _openclaw.OpenClaw, home: Home, case: cases.ConfigCase, scrub: Callable[[Any], Any]) -> dict:
    agent = ['--agent', case.agent] if case.agent else []
    status = home.run(oc.command('memory', 'status', '--index', '--json', *agent))
    out: dict[str, Any] = {'rc': status['rc'], 'seconds': status['seconds']}
    data = status['json']
    if status['rc'] != 0 or not isinstance(data, list):
        message = data.get('error', {}).get('message', '') if isinstance(data, dict) else ''
        out['error'] = scrub(first_line(message or status['stderr'] or status['stdout']))
    else:
        out['agents'] = []
        for entry in data:
            st = entry.get('status', {})
            files = table_rows(
                Path(st.get('dbPath', '')), "SELECT path FROM memory_index_sources WHERE source='memory'"
            )
            out['agents'].append(
                {
                    'agentId': entry.get('agentId'),
                    'workspace': scrub(st.get('workspaceDir')),
                    'files': sorted(path for (path,) in files),
                    'sources': st.get('sources'),
                    'extraPaths': st.get('extraPaths'),
                }
            )
    if case.id in SEARCH_PROBES:
        found = home.run(oc.command('memory', 'search', '--json', '--query', PROBE_QUERY, *agent))
        out['search'] = search_outcome(found, scrub)
    return out


def memsift_config(home: Home, case: cases.ConfigCase, scrub: Callable[[Any], Any]) -> dict:
    cli = [sys.executable, '-m', 'memsift']
    agent = ['--agent', case.agent] if case.agent else []
    status = home.run([*cli, 'status', '--index', '--json', '--config', str(home.config), *agent])
    out: dict[str, Any] = {'rc': status['rc'], 'seconds': status['seconds']}
    warned = re.findall(r'ConfigWarning: (.*)', status['stderr'])
    if warned:
        out['warnings'] = [scrub(w.split(';')[0]) for w in warned]
    data = status['json']
    if status['rc'] != 0 or not isinstance(data, dict) or 'agentId' not in data:
        message = data.get('error', '') if isinstance(data, dict) else ''
        out['error'] = scrub(first_line(message or status['stderr'] or status['stdout']))
    else:
        files = table_rows(Path(data.get('dbPath', '')), "SELECT path FROM files WHERE source='memory'")
        out['agents'] = [
            {
                'agentId': data.get('agentId'),
                'workspace': scrub(data.get('workspaceDir')),
                'files': sorted(path for (path,) in files),
                'sources': data.get('sources'),
                'extraPaths': data.get('extraPaths'),
            }
        ]
    if case.id in SEARCH_PROBES:
        found = home.run([*cli, 'search', '--json', '--query', PROBE_QUERY, '--config', str(home.config), *agent])
        out['search'] = search_outcome(found, scrub)
    return out


def search_outcome(found: Mapping[str, Any], scrub: Callable[[Any], Any]) -> dict[str, Any]:
    data = found['json']
    if isinstance(data, dict) and isinstance(data.get('results'), list) and not data.get('disabled'):
        return {'rc': found['rc'], 'results': [f'{h["path"]}:{h["startLine"]}-{h["endLine"]}' for h in data['results']]}
    if isinstance(data, dict):
        error = data.get('error')
        error = error.get('message') if isinstance(error, dict) else error
        shown = {k: data[k] for k in ('status', 'disabled', 'unavailable', 'agentId') if k in data}
        return {'rc': found['rc'], **shown, **({'error': scrub(first_line(str(error)))} if error else {})}
    return {'rc': found['rc'], 'error': scrub(first_line(found['stderr'] or found['stdout']))}


def outcome(side: Mapping[str, Any]) -> str:
    """One line: ``error: …`` or each agent's id, workspace and files; then the search probe."""
    if 'error' in side:
        text = f'error: {side["error"]}'
    else:
        parts = []
        for agent in side['agents']:
            files = ', '.join(agent['files']) or 'no files'
            sources = '+'.join(agent['sources'] or [])
            parts.append(f'{agent["agentId"]} @ {agent["workspace"]} ({sources}): {files}')
        text = '; '.join(parts) or 'no agents'
    if side.get('warnings'):
        text += f' [{len(side["warnings"])} warnings]'
    search = side.get('search')
    if search is not None:
        shown = search.get('results')
        shown = ', '.join(shown) if shown is not None else json.dumps({k: v for k, v in search.items() if k != 'rc'})
        text += f' | search: {shown or "no results"}'
    return text


def config_verdict(oc: Mapping[str, Any], ms: Mapping[str, Any]) -> str:
    def key(side: Mapping[str, Any]) -> Any:
        if 'error' in side:
            return 'error'
        return [(a['agentId'], a['workspace'], a['files']) for a in side['agents']]

    def probe(side: Mapping[str, Any]) -> Any:
        search = side.get('search')
        if search is None:
            return None
        if 'results' in search:
            return 'results'
        return 'disabled' if search.get('disabled') or search.get('status') == 'disabled' else 'error'

    return 'same' if key(oc) == key(ms) and probe(oc) == probe(ms) else 'differs'


def run_configs(oc: _openclaw.OpenClaw, root: Path, pool: ThreadPoolExecutor) -> list[dict[str, Any]]:
    def scrub(value: Any) -> Any:
        return value.replace(str(root), '<root>') if isinstance(value, str) else value

    jobs = []
    for case in cases.CONFIGS:
        here = root / case.id
        paths = cases.config_workspace(here)
        config = case.build(paths, str(here / 'memsift' / '{agentId}.sqlite'))
        home = Home(here / 'home', config)  # one config file, read by both

        def scrub_here(value: Any, here: Path = here) -> Any:
            return scrub(value.replace(str(here), '<case>')) if isinstance(value, str) else value

        jobs.append(
            (
                case,
                pool.submit(openclaw_config, oc, home, case, scrub_here),
                pool.submit(memsift_config, home, case, scrub_here),
            )
        )
    rows = []
    for case, oc_job, ms_job in jobs:
        oc_side, ms_side = oc_job.result(), ms_job.result()
        rows.append(
            {
                'id': case.id,
                'config': case.what,
                'openclaw': oc_side,
                'memsift': ms_side,
                'verdict': config_verdict(oc_side, ms_side),
            }
        )
    return rows


# ---------------------------------------------------------------- b + c. ranking and tool answers


def calls_for(ws: cases.Workspace) -> list[dict[str, Any]]:
    calls = [
        {'id': q.id, 'tool': 'memory_search', 'args': {'query': q.query(ws), **SEARCH_ARGS}} for q in cases.QUERIES
    ]
    calls += [{'id': t.id, 'tool': t.tool, 'args': t.args} for t in cases.TOOL_CALLS]
    return calls


def openclaw_answers(oc: _openclaw.OpenClaw, home: Home, calls: list[dict[str, Any]]) -> dict[str, Any]:
    index = home.run(oc.command('memory', 'index', '--agent', 'main'))
    if index['rc'] != 0:
        raise RuntimeError(f'openclaw memory index failed ({index["rc"]}): {index["stderr"][-1500:]}')
    (home.root / 'calls.json').write_text(json.dumps(calls), encoding='utf-8')
    (home.root / 'harness.mjs').write_text(HARNESS, encoding='utf-8')
    dist = str(oc.package / 'dist')
    ran = home.run(
        [oc.node, str(home.root / 'harness.mjs'), dist, str(home.root / 'calls.json'), 'main', 'agent:main:main']
    )
    answers = {}
    for line in ran['stdout'].splitlines():
        if line.startswith(MARK):
            item = json.loads(line[len(MARK) :])
            answers[item['id']] = item['answer']
    if len(answers) != len(calls):
        raise RuntimeError(
            f'the OpenClaw tool harness answered {len(answers)} of {len(calls)} calls: {ran["stderr"][-1500:]}'
        )
    return answers


def memsift_answers(home: Home, ws: cases.Workspace, calls: list[dict[str, Any]]) -> dict[str, Any]:
    answers = {}
    with MemoryTools.open(ws.root, home.config, sessions_path=home.root / 'sessions.sqlite', sync=False) as tools:
        tools.index.sync()
        for call in calls:
            answers[call['id']] = cases.call_tools(tools, call['tool'], call['args'])
    return answers


def top3(answer: Mapping[str, Any], ws: cases.Workspace) -> list[dict[str, Any]]:
    return [
        {
            'path': ws.symbolic(hit['path']),
            'startLine': hit['startLine'],
            'endLine': hit['endLine'],
            'score': round(float(hit['score']), 4),
            'snippet': cases.normalize_answer(str(hit['snippet']), ws),
        }
        for hit in answer.get('results', [])[:3]
    ]


def ranking_rows(ws: cases.Workspace, oc: Mapping[str, Any], ms: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for q in cases.QUERIES:
        oc_hits, ms_hits = oc[q.id].get('results', []), ms[q.id].get('results', [])
        oc_right = cases.is_right(oc_hits[0] if oc_hits else None, q, ws)
        ms_right = cases.is_right(ms_hits[0] if ms_hits else None, q, ws)
        if oc_right != ms_right:
            verdict = 'better' if ms_right else 'worse'
        else:
            firsts = [[(h['path'], h['startLine'], h['endLine']) for h in hits[:1]] for hits in (oc_hits, ms_hits)]
            verdict = 'same' if firsts[0] == firsts[1] else 'differs'
        rows.append(
            {
                'id': q.id,
                'query': q.shown(),
                'answer': f'{q.path} ∋ {q.needle!r}' if q.needle else q.path,
                'why': q.why,
                'needs': q.needs,
                'openclaw': {'right': oc_right, 'top3': top3(oc[q.id], ws)},
                'memsift': {'right': ms_right, 'top3': top3(ms[q.id], ws)},
                'verdict': verdict,
            }
        )
    return rows


def tool_rows(oc: Mapping[str, Any], ms: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for call in cases.TOOL_CALLS:
        want, got = cases.shape(oc[call.id]), cases.shape(ms[call.id])
        rows.append(
            {'id': call.id, 'args': call.args, **cases.compare_shapes(want, got), 'openclaw': want, 'memsift': got}
        )
    return rows


# ---------------------------------------------------------------- output


def hit_text(side: Mapping[str, Any]) -> str:
    if not side['top3']:
        return '(none) ✗'
    top = side['top3'][0]
    return f'{top["path"]}:{top["startLine"]}-{top["endLine"]} {"✓" if side["right"] else "✗"}'


def print_tables(report: Mapping[str, Any]) -> None:
    if report.get('configs'):
        print('\n## a. config resolution\n')
        print('| config | OpenClaw 2026.9.6 | memsift | verdict |')
        print('|---|---|---|---|')
        for row in report['configs']:
            cells = [row['id'], outcome(row['openclaw']), outcome(row['memsift']), row['verdict']]
            print('| ' + ' | '.join(c.replace('|', '/') for c in cells) + ' |')
    if report.get('ranking'):
        ranking = report['ranking']
        print('\n## b. ranking (top hit; ✓ = the known right answer)\n')
        print('| query | right answer | OpenClaw | memsift | verdict |')
        print('|---|---|---|---|---|')
        for row in ranking['queries']:
            cells = [row['query'], row['answer'], hit_text(row['openclaw']), hit_text(row['memsift']), row['verdict']]
            print('| ' + ' | '.join(c.replace('|', '/') for c in cells) + ' |')
        counts = ranking['counts']
        print(
            f'\nright on top: OpenClaw {counts["openclaw"]}/{counts["queries"]}, memsift {counts["memsift"]}/'
            f'{counts["queries"]}; ' + ', '.join(f'{k} {v}' for k, v in counts['verdicts'].items())
        )
    if report.get('tools'):
        print('\n## c. tool answers (shapes)\n')
        print('| call | OpenClaw | memsift | verdict | differences |')
        print('|---|---|---|---|---|')
        for row in report['tools']:
            cells = [
                row['id'],
                brief_shape(row['openclaw']),
                brief_shape(row['memsift']),
                row['verdict'],
                '; '.join(row['differences']),
            ]
            print('| ' + ' | '.join(c.replace('|', '/') for c in cells) + ' |')


def brief_shape(shape: Mapping[str, Any]) -> str:
    if 'thrown' in shape:
        return f'throws {shape["thrown"]!r}'
    flags = [
        f'{k}={json.dumps(shape[k], ensure_ascii=False)}'
        for k in ('status', 'truncated', 'nextFrom', 'lines', 'disabled', 'code')
        if k in shape
    ]
    if 'corpora' in shape:
        flags.append('corpora=' + ','.join(f'{c["corpus"]}:{c["outcome"]}' for c in shape['corpora']))
    if 'results' in shape:
        flags.append(f'{shape["results"]} results')
    return ' '.join(flags) or '-'


def pin(
    directory: Path,
    report: Mapping[str, Any],
    oc_raw: Mapping[str, Any],
    ws: cases.Workspace | None,
    argv: Sequence[str],
) -> None:
    """OpenClaw's answers as the parity test's fixtures (``ws``: the ranking workspace, when ranking or tools ran)."""
    directory.mkdir(parents=True, exist_ok=True)
    made = {'openclaw': report['openclaw'], 'date': report['date'], 'command': ' '.join(argv)}

    def dump(name: str, data: Any) -> None:
        text = json.dumps({'made': made, **data}, indent=2, ensure_ascii=False, sort_keys=False) + '\n'
        (directory / name).write_text(text, encoding='utf-8')

    if report.get('ranking'):
        queries = {}
        for q, row in zip(cases.QUERIES, report['ranking']['queries']):
            queries[q.id] = {'query': row['query'], 'right': row['openclaw']['right'], 'top3': row['openclaw']['top3']}
        dump('ranking.json', {'searchArgs': SEARCH_ARGS, 'queries': queries})
    if report.get('tools') and ws is not None:
        tools = {}
        for call in cases.TOOL_CALLS:
            answer = cases.normalize_answer(oc_raw[call.id], ws)
            tools[call.id] = {'tool': call.tool, 'args': call.args, 'shape': cases.shape(answer), 'answer': answer}
        dump('tools.json', {'calls': tools})
    if report.get('configs'):
        configs = {}
        for row in report['configs']:
            seen = {k: v for k, v in row['openclaw'].items() if k != 'seconds'}
            configs[row['id']] = {'config': row['config'], 'openclaw': seen}
        dump('configs.json', {'configs': configs})
    readme = f"""# OpenClaw {report['openclaw']}'s own answers, pinned

OpenClaw {report['openclaw']}'s answers to the cases of `benches/_openclaw_cases.py`, written on {report['date']} by

    {' '.join(argv)}

(the real OpenClaw and Node 24 from `.cache/openclaw`, keyword-only `provider: "none"`, a throw-away home).
`tests/surfaces/test_openclaw2_parity.py` replays the cases on memsift against them, without npm.

- `ranking.json`: `memory_search` (`maxResults 6, minScore 0`) top 3 per query, and whether the top hit is the
  known right answer. Dated notes are named by age (`memory/<today-20d>.md`): the workspace is written relative
  to the day it runs.
- `tools.json`: `memory_search` corpora and `memory_get` windows and errors, with timings, `observedAt` and
  absolute paths normalized (`<ws>`), and each answer's shape (keys, result keys, flags).
- `configs.json`: what OpenClaw resolved per config (agents, workspaces, files indexed) or its error, for reference.

Re-pin after changing the cases (or for another OpenClaw) with the command above.
"""
    (directory / 'README.md').write_text(readme, encoding='utf-8')


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', type=Path, default=DEFAULT_OUT, help='JSON report (default: %(default)s)')
    parser.add_argument('--pin', type=Path, metavar='DIR', help="write OpenClaw's answers as test fixtures into DIR")
    parser.add_argument('--only', default='configs,ranking,tools', help='comma-separated: configs, ranking, tools')
    parser.add_argument('--openclaw-dir', type=Path, default=_openclaw.DEFAULT_DIR)
    parser.add_argument('--no-install', action='store_true', help='fail rather than npm-install OpenClaw when missing')
    parser.add_argument('--keep', action='store_true', help='keep the temporary homes (their path is printed)')
    parser.add_argument('--jobs', type=int, default=4, help='OpenClaw/memsift commands run at once (default 4)')
    args = parser.parse_args(argv)
    parts = {p.strip() for p in args.only.split(',') if p.strip()}
    started = time.monotonic()
    oc = _openclaw.locate(args.openclaw_dir, install=not args.no_install)
    root = Path(tempfile.mkdtemp(prefix='openclaw-diff-'))
    report: dict[str, Any] = {
        'openclaw': oc.version,
        'memsift': memsift.__version__,
        'date': utc_today().isoformat(),
        'searchArgs': SEARCH_ARGS,
    }
    oc_raw: dict[str, Any] = {}
    ws = None
    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            rank_job = None
            if parts & {'ranking', 'tools'}:
                ws = cases.ranking_workspace(root / 'rank' / 'ws', utc_today())
                config = cases.two_x_config(
                    None, str(root / 'rank' / 'memsift' / '{agentId}.sqlite'),
                    agents={'entries': {'main': {'workspace': str(ws.root)}}},
                )  # fmt: skip
                calls = calls_for(ws)
                home = Home(root / 'rank' / 'home', config)
                rank_job = pool.submit(openclaw_answers, oc, home, calls)
            if 'configs' in parts:
                report['configs'] = run_configs(oc, root / 'configs', pool)
            if rank_job is not None and ws is not None:
                oc_raw = rank_job.result()
                ms_raw = memsift_answers(home, ws, calls)
                if 'ranking' in parts:
                    rows = ranking_rows(ws, oc_raw, ms_raw)
                    verdicts = {v: sum(r['verdict'] == v for r in rows) for v in ('same', 'better', 'worse', 'differs')}
                    report['ranking'] = {
                        'counts': {
                            'queries': len(rows),
                            'openclaw': sum(r['openclaw']['right'] for r in rows),
                            'memsift': sum(r['memsift']['right'] for r in rows),
                            'verdicts': verdicts,
                        },
                        'queries': rows,
                    }
                if 'tools' in parts:
                    report['tools'] = tool_rows(oc_raw, ms_raw)
    finally:
        if args.keep:
            print(f'kept: {root}', file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    report['seconds'] = round(time.monotonic() - started, 1)
    print_tables(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + '\n', encoding='utf-8')
    print(f'\n{report["seconds"]} s; report: {args.out}')
    if args.pin is not None:
        shown = ['.venv/bin/python', 'benches/openclaw_diff.py', *(argv if argv is not None else sys.argv[1:])]
        pin(args.pin, report, oc_raw, ws, shown)
        print(f'pinned: {args.pin}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
