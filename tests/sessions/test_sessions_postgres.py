"""The session store on PostgreSQL: agents sharing one database, concurrent writers in several processes, a server
restart, connection and schema errors, and the all-terms lookup against SQLite's FTS5 on the same messages.

(Everything else runs on both backends in tests/sessions/test_sessions.py.)"""

import json
import random
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from test_sessions import MAIN, msg

from memsift import Caller, SessionAccessError, SessionStore, SessionStoreError
from memsift._core import Analyzer
from memsift.sessions.fts5 import fts5_terms


def ids(response):
    return [hit['messageId'] for hit in response['results']]


# ---------------------------------------------------------------- the all-terms lookup, as FTS5 finds and ranks

WORDS = [
    *('deploy', 'billing', 'service', 'eu-west-1', 'the', 'a', 'of', 'postgres', 'migration', 'failed', 'backup'),
    *('ERR_CONN_RESET', 'retry', 'backoff', 'C:\\Users\\ana\\notes.txt', 'src/main.rs', 'v2.3.1', 'user@example.com'),
    *('12:30', '部署', '到', '东京', '区域', '数据库', '迁移', '集群', '東京', '会議', '午後', '회의', '내일', '오전'),
    *('회의를', 'नमस्ते', 'दुनिया', 'مُعَلِّم', 'عربي', 'ภาษาไทย', 'café', 'Straße', 'naïve'),
]


def corpus(seed, count):
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        words = rng.choices(WORDS, k=rng.randint(1, 30))
        if rng.random() < 0.3:  # a word said again: counts beyond one
            words += [rng.choice(words)] * rng.randint(1, 4)
        texts.append(' '.join(words) if rng.random() < 0.7 else ''.join(words[:6]))  # CJK runs without spaces too
    return texts


QUERIES = [
    'billing',
    'the',
    'deploy billing',
    'postgres migration failed',
    'ERR_CONN_RESET',
    'err conn',
    'C:\\Users\\ana',
    'ana\\notes.txt',
    'src/main.rs v2.3.1',
    'user@example.com',
    '12:30',
    '东京',
    '部署到东京',
    '数据库迁移',
    '東京会議',
    '회의를',
    '내일 회의',
    'नमस्ते',
    'मस्',
    'مُعَلِّم',
    'café',
    'strasse',
    'naive',
    'retry retry',
    'Migrations',
    '"hello',
    'NEAR(',
    '🙂',
    'a the of',
]


def test_the_all_terms_lookup_finds_and_ranks_what_fts5_does(tmp_path, pg_dsn):
    texts = corpus(7, 400)
    with (
        SessionStore(tmp_path / 'sessions.sqlite', search_mode='all-terms', visibility='agent') as lite,
        SessionStore(pg_dsn, search_mode='all-terms', visibility='agent') as pg,
    ):

        def compare():
            for query in QUERIES:
                for caller, limit in ((MAIN, 25), (Caller('agent:main:s3', visibility='self'), 5)):
                    expected = lite.search(query, caller=caller, limit=limit)
                    found = pg.search(query, caller=caller, limit=limit)
                    # The same hits in the same order, with the same bm25 scores (the same float operations).
                    assert [(h['messageId'], h['score']) for h in found['results']] == [
                        (h['messageId'], h['score']) for h in expected['results']
                    ], query
                    assert found.get('truncated') == expected.get('truncated'), query

        # Searches between writes: the statistics follow appends, deletes and rebuilds.
        for start in range(0, len(texts), 100):
            for store in (lite, pg):
                for i, text in enumerate(texts[start : start + 100], start):
                    key = f'agent:main:s{i % 7}'
                    store.append(key, msg(f'm{i:03}', 'user' if i % 2 else 'assistant', text, ts=1000 + i % 13))
            compare()
        for store in (lite, pg):
            store.delete('agent:main:s6')
        compare()
        for store in (lite, pg):
            store.append('agent:main:s5', msg('x1', 'user', 'deploy the billing service', parent='m005'))
            store.reconcile()
        compare()


def test_long_messages_match_anywhere(tmp_path, pg_dsn):
    # No limit on positions or repeats (tsvector would clamp them at 16383 and 256).
    text = ' '.join(['filler'] * 20000 + ['alpha beta'] + ['gamma'] * 300)
    with (
        SessionStore(tmp_path / 'sessions.sqlite', search_mode='all-terms') as lite,
        SessionStore(pg_dsn, search_mode='all-terms') as pg,
    ):
        for store in (lite, pg):
            store.append(MAIN, msg('m1', 'user', text))
            store.append(MAIN, msg('m2', 'user', 'beta alpha gamma'))
        for query in ('alpha beta', 'alphabeta', 'gamma', 'filler alpha', 'beta alpha'):
            expected = [(h['messageId'], h['score']) for h in lite.search(query, caller=MAIN)['results']]
            assert [(h['messageId'], h['score']) for h in pg.search(query, caller=MAIN)['results']] == expected


def test_the_separator_table_is_fts5s():
    # A sample of every plane: each character between two letters, tokenized by the SQLite at hand and by the table.
    db = sqlite3.connect(':memory:')
    db.execute(
        'CREATE VIRTUAL TABLE f USING fts5(tokens, tokenize="unicode61 remove_diacritics 0 tokenchars \'-_./:@+#\'")'
    )
    db.execute('CREATE VIRTUAL TABLE v USING fts5vocab(f, instance)')
    rng = random.Random(3)
    sample = list(range(0x20, 0x3000)) + rng.sample(range(0x3000, 0xD800), 3000)
    sample += rng.sample(range(0xE000, 0x110000), 6000)
    db.executemany('INSERT INTO f (rowid, tokens) VALUES (?, ?)', [(c, f'q{chr(c)}q') for c in sample])
    found = {}
    for doc, term in db.execute('SELECT doc, term FROM v ORDER BY doc, offset'):
        found.setdefault(doc, []).append(term)
    # One term where the character is a token character, two where FTS5 cuts (it also folds case, which the
    # analyzer's lower-case tokens never need).
    assert [hex(c) for c in sample if len(fts5_terms(f'q{chr(c)}q')) != len(found.get(c, []))] == []


def test_analyzer_tokens_split_as_fts5_splits_them():
    db = sqlite3.connect(':memory:')
    db.execute(
        'CREATE VIRTUAL TABLE f USING fts5(tokens, tokenize="unicode61 remove_diacritics 0 tokenchars \'-_./:@+#\'")'
    )
    db.execute('CREATE VIRTUAL TABLE v USING fts5vocab(f, instance)')
    rng = random.Random(5)
    pool = [chr(c) for c in [*range(0x20, 0x3000), *range(0xA000, 0xD800), *range(0x10000, 0x1FBFF, 7)]]
    texts = [''.join(rng.choice(pool) for _ in range(rng.randint(1, 30))) + ' a\\b' for _ in range(2000)]
    rows = [' '.join(tokens) for tokens in Analyzer().tokenize_batch(texts)]
    db.executemany('INSERT INTO f (rowid, tokens) VALUES (?, ?)', list(enumerate(rows, 1)))
    found = {}
    for doc, term in db.execute('SELECT doc, term FROM v ORDER BY doc, offset'):
        found.setdefault(doc, []).append(term)
    assert [row for n, row in enumerate(rows, 1) if fts5_terms(row) != found.get(n, [])] == []


# ---------------------------------------------------------------- agents sharing one database


def test_agents_sharing_a_database_see_only_their_own_rows(pg_dsn):
    with (
        SessionStore(pg_dsn, agent_id='main', visibility='all') as main,
        SessionStore(pg_dsn, agent_id='ops', visibility='all') as ops,
    ):
        # The same session key and event ids in both agents: rows never collide.
        for store, word in ((main, 'walrus'), (ops, 'narwhal')):
            store.append(MAIN, msg('m1', 'user', f'{word} plan for shared words', parent=None))
            store.append(MAIN, msg('m2', 'user', f'{word} follow-up', parent='m1'))
            store.append('agent:x:child', msg('c1', 'user', f'{word} child'), spawned_by=MAIN)
        ops.set_flags('agent:x:child', incognito=True)
        ops.delete(MAIN)
        assert [(s['key'], s['agentId'], s['events']) for s in main.sessions()] == [
            (MAIN, 'main', 2),
            ('agent:x:child', 'main', 1),
        ]
        assert [(s['key'], s['agentId'], s['incognito']) for s in ops.sessions()] == [('agent:x:child', 'ops', True)]
        assert set(ids(main.search('walrus', caller=MAIN))) == {'m1', 'm2', 'c1'}
        assert main.search('narwhal', caller=MAIN)['results'] == []  # nor through the ranked index
        assert main.search('narwhal', caller=Caller(MAIN, visibility='all', agent_to_agent=True))['results'] == []
        assert [m['content'] for m in main.history(MAIN, MAIN)['messages']] == [
            'walrus plan for shared words',
            'walrus follow-up',
        ]
        assert main.status()['messages'] == 3 and ops.status()['messages'] == 1
        assert main.history('agent:x:child', MAIN)['messages'][0]['content'] == 'walrus child'  # ops' flag is ops'
        with pytest.raises(SessionAccessError):
            ops.history('agent:x:child', MAIN)
        # Another agent's sessions are reached through peers, as with SQLite files.
        with SessionStore(pg_dsn, agent_id='main', peers=[ops], visibility='all', agent_to_agent=True) as both:
            ops.append('agent:ops:main', msg('o1', 'user', 'narwhal in the ops main session'))
            assert {h['sessionKey'] for h in both.search('narwhal', caller=MAIN)['results']} == {'agent:ops:main'}


def test_the_session_list_follows_other_writers(pg_dsn):
    with SessionStore(pg_dsn, visibility='agent') as reader, SessionStore(pg_dsn, visibility='agent') as writer:
        writer.append('agent:main:a', msg('a1', 'user', 'okapi sighting'))
        assert ids(reader.search('okapi', caller=MAIN)) == ['a1']
        writer.set_flags('agent:main:a', incognito=True)  # the sessions_version trigger moves: the cache is dropped
        assert reader.search('okapi', caller=MAIN)['results'] == []
        writer.set_flags('agent:main:a', incognito=False)
        writer.append('agent:main:b', msg('b1', 'user', 'okapi again'), spawned_by=MAIN)
        assert set(ids(reader.search('okapi', caller=MAIN))) == {'a1', 'b1'}
        assert reader.fingerprint() == writer.fingerprint()


def test_a_nul_in_a_key_is_stored_as_a_replacement_character(pg_dsn):
    with SessionStore(pg_dsn, visibility='agent') as store:
        assert store.append('agent:main:a\x00b', msg('m\x00', 'user', 'nul keys'))
        assert [s['key'] for s in store.sessions()] == ['agent:main:a\ufffdb']
        assert ids(store.search('nul', caller=MAIN)) == ['m\ufffd']


# ---------------------------------------------------------------- many writers


WRITER = textwrap.dedent("""
    import sys
    from memsift import SessionStore

    dsn, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with SessionStore(dsn, visibility='agent') as store:
        for i in range(count):
            event = {'type': 'message', 'id': f'{name}{i}', 'message': {'role': 'user', 'content': f'{name} note {i}'}}
            shared = {'type': 'message', 'id': f'both{i}', 'message': {'role': 'user', 'content': f'both note {i}'}}
            store.append_many('agent:main:shared', [event, shared])
            store.append(f'agent:main:{name}', event)
""")


def test_two_processes_appending_to_one_session_lose_and_duplicate_nothing(pg_dsn, tmp_path):
    count = 150
    script = tmp_path / 'writer.py'
    script.write_text(WRITER)
    writers = [
        subprocess.Popen([sys.executable, str(script), pg_dsn, name, str(count)], stderr=subprocess.PIPE, text=True)
        for name in ('left', 'right')
    ]
    for writer in writers:
        _, errors = writer.communicate(timeout=300)
        assert writer.returncode == 0, errors
    with SessionStore(pg_dsn, visibility='agent') as store:
        sessions = {s['key']: s for s in store.sessions()}
        # Each process's own events, plus the shared ids once: whichever process wrote them first.
        assert sessions['agent:main:shared']['events'] == 3 * count
        assert sessions['agent:main:shared']['indexed'] and sessions['agent:main:left']['events'] == count
        history = store.history('agent:main:shared', MAIN, limit=200)['messages']
        assert len({m['id'] for m in history}) == len(history) == 200
        lines = store._db.execute(
            "SELECT line FROM session_events WHERE agent = :agent AND session_key = 'agent:main:shared' ORDER BY seq"
        ).fetchall()
        assert [line for (line,) in lines] == list(range(1, 3 * count + 1))  # each append saw the one before
        for name, expected in (('left', count), ('right', count), ('both', count)):
            found = store.search(f'{name} note', caller=MAIN, limit=25)
            assert len(found['results']) == 25 and found['truncated'] is True
            hits = store._db.execute(
                'SELECT count(*) FROM session_message_fts WHERE agent = :agent AND tokens LIKE :like',
                {'like': f'{name} note %'},
            ).fetchone()[0]
            assert hits == expected * (2 if name != 'both' else 1)
        assert store.search('left note 149', caller=MAIN, limit=25)['results']  # the ranked index is complete too


# ---------------------------------------------------------------- the server going away, and errors


def test_a_server_restart_between_two_appends_loses_nothing(pg_dsn, postgres_server):
    with SessionStore(pg_dsn, visibility='agent') as store:
        store.append(MAIN, msg('m1', 'user', 'before the restart'))
        postgres_server.stop(immediate=True)  # a crash: the store's connection dies with it
        postgres_server.start()
        assert store.append(MAIN, msg('m2', 'user', 'after the restart'))  # reconnects on this call
        assert set(ids(store.search('restart', caller=MAIN))) == {'m1', 'm2'}
        postgres_server.stop(immediate=True)
        postgres_server.start()
        assert ids(store.search('after', caller=MAIN)) == ['m2']  # a read reconnects as well
    with SessionStore(pg_dsn) as store:
        assert [s['events'] for s in store.sessions()] == [2]


def test_a_server_down_is_a_clear_error_and_the_store_recovers(pg_dsn, postgres_server):
    with SessionStore(pg_dsn, visibility='agent') as store:
        store.append(MAIN, msg('m1', 'user', 'first'))
        postgres_server.stop(immediate=True)
        try:
            with pytest.raises(SessionStoreError, match=r'cannot connect to the session store .* \(store\.dsn\)'):
                store.append(MAIN, msg('m2', 'user', 'second'))
        finally:
            postgres_server.start()
        assert store.append(MAIN, msg('m2', 'user', 'second'))
        assert [s['events'] for s in store.sessions()] == [2]


def test_a_dsn_that_does_not_answer_names_the_setting_not_the_password(postgres_server):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    dsn = f'postgresql://ana:s3cret-pw@127.0.0.1:{port}/memory'
    for setting in ('store.dsn', 'MEMSIFT_PG_DSN'):
        with pytest.raises(SessionStoreError) as caught:
            SessionStore(dsn, setting=setting)
        message = str(caught.value)
        assert setting in message and 's3cret-pw' not in message
        assert f'postgresql://ana:***@127.0.0.1:{port}/memory' in message


def test_status_and_repr_show_the_dsn_without_its_password(pg_dsn):
    dsn = pg_dsn.replace('memsift@', 'memsift:s3cret-pw@')  # trust authentication: the password is not checked
    with SessionStore(dsn) as store:
        store.append(MAIN, msg('m1', 'user', 'hello'))
        shown = pg_dsn.replace('memsift@', 'memsift:***@')
        assert store.status()['path'] == shown and store.status()['messages'] == 1
        assert repr(store) == f"SessionStore('{shown}', agent_id='main')"
        assert 's3cret-pw' not in json.dumps(store.status()) + repr(store) + store.path


def test_a_schema_from_a_newer_memsift_is_refused(pg_dsn):
    import psycopg

    with SessionStore(pg_dsn) as store:
        store.append(MAIN, msg('m1', 'user', 'kept'))
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("UPDATE memsift_meta SET value = '999' WHERE key = 'sessions_schema_version'")
    with pytest.raises(SessionStoreError, match='has schema 999, this memsift expects 2; upgrade memsift'):
        SessionStore(pg_dsn)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # nothing was touched
        assert conn.execute('SELECT count(*) FROM session_events').fetchone()[0] == 1
