"""The filters of issue 31 on the command line: ``memsift search --since --until --path --tag --now`` and ``memsift
sessions search --since --until --now``, run as real subprocesses."""

import json
import os
import subprocess
import sys
from datetime import datetime, timezone

import pytest
from conftest import write

import memsift

NOW = '2026-11-20T10:00'
OLD = datetime(2026, 1, 5, tzinfo=timezone.utc).timestamp()


def memsift_cli(*args, check=True):
    proc = subprocess.run(
        [sys.executable, '-m', 'memsift', *map(str, args)], capture_output=True, text=True, timeout=120
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def common(tmp_path):
    """The options naming an indexed workspace of dated notes (daily files; two project notes last changed in
    January, one tagged)."""
    ws = tmp_path / 'ws'
    write(ws / 'memory' / '2026-11-11.md', 'Deploy: ship the API on Thursday behind a flag.\n')
    write(ws / 'memory' / '2026-11-19.md', 'The deploy dashboard looks fine.\n')
    write(ws / 'memory' / '2026-06-15.md', 'Deploy decision: deploys move to Mondays.\n')
    write(ws / 'memory' / 'projects' / 'plan.md', '---\ntags: [ops, Budget]\n---\nBudget for the deploy tooling.\n')
    write(ws / 'memory' / 'projects' / 'misc.md', 'Deploy checklist: tests, changelog, tag.\n')
    for name in ('plan.md', 'misc.md'):
        os.utime(ws / 'memory' / 'projects' / name, (OLD, OLD))
    args = ['--workspace', ws, '--store', tmp_path / 'state' / 'index.sqlite']
    memsift_cli('index', *args)
    return [*args, '--no-sync', '--min-score', 0]


def search(common, *options):
    answer = json.loads(memsift_cli('search', 'deploy', *common, '--json', *options).stdout)
    return sorted(hit['path'] for hit in answer['results'])


def test_search_since_until_path_and_tag(common):
    assert search(common, '--since', '2026-11-01', '--until', '2026-11-15') == ['memory/2026-11-11.md']
    assert search(common, '--now', NOW, '--since', '7d') == ['memory/2026-11-19.md']
    assert search(common, '--now', '2026-11-20', '--since', '1w', '--until', '2026-11-18') == []
    assert search(common, '--path', 'memory/2026-11-*.md', '--path', 'memory/projects/misc.md') == [
        'memory/2026-11-11.md',
        'memory/2026-11-19.md',
        'memory/projects/misc.md',
    ]
    assert search(common, '--tag', 'budget', '--tag', 'nothing') == ['memory/projects/plan.md']
    assert search(common, '--path', 'memory/projects', '--until', '2026-02-01') == [
        'memory/projects/misc.md',
        'memory/projects/plan.md',
    ]
    human = memsift_cli('search', 'deploy', *common, '--tag', 'ops').stdout
    assert 'memory/projects/plan.md' in human and '2026-11-11' not in human


def test_bad_filters_exit_1_naming_them_and_a_bad_now_is_a_usage_error(common):
    bad = memsift_cli('search', 'deploy', *common, '--since', 'soonish', '--json', check=False)
    error = json.loads(bad.stdout)
    assert bad.returncode == 1 and error['type'] == 'InvalidInputError' and error['error'].startswith('since')
    bad = memsift_cli('search', 'deploy', *common, '--path', '/etc/*', check=False)
    assert bad.returncode == 1 and bad.stderr.startswith('memsift: paths')
    bad = memsift_cli('search', 'deploy', *common, '--since', '2026-11-10', '--until', '2026-11-01', check=False)
    assert bad.returncode == 1 and 'since (2026-11-10) is after until (2026-11-01)' in bad.stderr
    usage = memsift_cli('search', 'deploy', *common, '--now', 'tomorrow', check=False)
    assert usage.returncode == 2 and '--now' in usage.stderr


def test_sessions_search_since_and_until(tmp_path):
    db = tmp_path / 'sessions.sqlite'
    events = [
        {
            'type': 'message',
            'id': f'm{day}',
            'timestamp': datetime(2026, 11, day, 12, tzinfo=timezone.utc).isoformat(),
            'message': {'role': 'user', 'content': f'the deploy moved, note {day}'},
        }
        for day in (2, 11, 18)
    ]
    with memsift.SessionStore(db, 'main') as store:
        store.append_many('agent:main:main', events)

    def ids(*options):
        done = memsift_cli('sessions', 'search', 'deploy moved', '--sessions-db', db, '--json', *options)
        return sorted(hit['messageId'] for hit in json.loads(done.stdout)['results'])

    assert ids() == ['m11', 'm18', 'm2']
    assert ids('--since', '2026-11-10', '--until', '2026-11-12') == ['m11']
    assert ids('--now', NOW, '--since', '7d') == ['m18']
    bad = memsift_cli('sessions', 'search', 'deploy', '--sessions-db', db, '--until', 'later', check=False)
    assert bad.returncode == 1 and bad.stderr.startswith('memsift: until')


def test_help_lists_the_filters():
    search_help = memsift_cli('search', '--help').stdout
    assert all(option in search_help for option in ('--since', '--until', '--path GLOB', '--tag TAG', '--now'))
    sessions_help = memsift_cli('sessions', 'search', '--help').stdout
    assert '--since' in sessions_help and '--until' in sessions_help and '--tag' not in sessions_help
