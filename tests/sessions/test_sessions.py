"""SessionStore: transcripts, sessions_search, sessions_history, visibility, redaction and import, on both backends:
a real SQLite file and a real PostgreSQL database (each test that takes ``target`` or ``store`` runs on both; the
PostgreSQL runs skip, with the reason, where no server can be started; under CI=true they fail). PostgreSQL-only
behaviour (agents sharing a database, concurrent processes, restarts) is tests/sessions/test_sessions_postgres.py's."""

import json
import sqlite3
import time
import uuid

import pytest

import memsift
from memsift import Caller, InvalidInputError, SessionAccessError, SessionStore, SessionStoreError
from memsift._postgres import is_dsn
from memsift.sessions import INDEXING_WARNING, MAX_RESPONSE_BYTES
from memsift.sessions.database import Sql

MAIN = 'agent:main:main'


def msg(event_id, role, content, parent=..., ts=1_767_225_600_000):
    event = {'type': 'message', 'id': event_id, 'timestamp': ts, 'message': {'role': role, 'content': content}}
    if parent is not ...:
        event['parentId'] = parent
    return event


# ---------------------------------------------------------------- where the stores live: each test runs on both backends


@pytest.fixture(params=['sqlite', 'postgres'])
def backend(request):
    return request.param


@pytest.fixture
def targets(backend, tmp_path, request):
    """Makes independent store targets: each call a new SQLite file under ``tmp_path``, or a new, empty PostgreSQL
    database (stores of several agents may share one target: that is what a PostgreSQL database is for)."""
    made = []

    def make():
        if backend == 'sqlite':
            made.append(tmp_path / f'sessions{len(made) or ""}.sqlite')
        elif not made:
            made.append(request.getfixturevalue('pg_dsn'))
        else:
            made.append(request.getfixturevalue('postgres_server').create_database(f'test_{uuid.uuid4().hex[:16]}'))
        return made[-1]

    return make


@pytest.fixture
def target(targets):
    """The test's store target (a SQLite file, or a PostgreSQL DSN)."""
    return targets()


def table_counts(store):
    """Rows of the store's sessions, events and full-text tables (its agent's, on PostgreSQL)."""
    return tuple(
        store._db.execute(
            Sql(f'SELECT count(*) FROM {table}', f'SELECT count(*) FROM session_{table} WHERE agent = :agent')
        ).fetchone()[0]
        for table in ('sessions', 'events', 'message_fts')
    )


def run_sql(target, sql):
    """Run a script (a :class:`Sql` pair) on a store's database from a connection of its own, as another process
    would."""
    if not is_dsn(str(target)):
        with sqlite3.connect(target) as db:
            db.executescript(sql.sqlite)
        return
    import psycopg

    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute(sql.postgres)


@pytest.fixture
def store(target):
    with SessionStore(target) as s:
        yield s


def keys(response):
    return {hit['sessionKey'] for hit in response['results']}


def test_append_and_search_hit_shape(store):
    store.append(MAIN, msg('m1', 'user', 'Where did we deploy the billing service?', ts=1000))
    store.append(
        MAIN, msg('m2', 'assistant', [{'type': 'text', 'text': 'The billing service runs in eu-west-1.'}], ts=2000)
    )
    response = store.search('billing', caller=MAIN)
    assert [h['messageId'] for h in response['results']] == ['m2', 'm1'] or [
        h['messageId'] for h in response['results']
    ] == ['m1', 'm2']
    hit = response['results'][0]
    assert set(hit) == {'sessionKey', 'timestamp', 'role', 'snippet', 'score', 'sessionId', 'messageId', 'match'}
    assert hit['match'] == 'all'
    assert hit['sessionKey'] == MAIN and hit['score'] > 0 and hit['role'] in ('user', 'assistant')
    assert set(response) == {'results'}


def test_every_term_must_match_in_all_terms_mode(target):
    with SessionStore(target, search_mode='all-terms') as store:
        store.append(MAIN, msg('m1', 'user', 'postgres migration failed'))
        store.append(MAIN, msg('m2', 'user', 'postgres backup succeeded'))
        assert [h['messageId'] for h in store.search('postgres migration', caller=MAIN)['results']] == ['m1']
        assert store.search('migration backup', caller=MAIN)['results'] == []
        assert [h['messageId'] for h in store.search('Migrations', caller=MAIN)['results']] == ['m1']  # same analyzer
        assert 'match' not in store.search('postgres', caller=MAIN)['results'][0]  # OpenClaw's hit shape exactly


def test_ranked_mode_puts_all_terms_hits_first_then_partial_matches(store):
    store.append(MAIN, msg('m1', 'user', 'postgres migration failed', ts=1000))
    store.append(MAIN, msg('m2', 'user', 'postgres backup succeeded', ts=2000))
    store.append(MAIN, msg('m3', 'user', 'lunch at noon', ts=3000))
    found = store.search('postgres migration', caller=MAIN)['results']
    assert [(h['messageId'], h['match']) for h in found] == [('m1', 'all'), ('m2', 'partial')]
    partial = store.search('migration backup', caller=MAIN)
    assert {h['messageId'] for h in partial['results']} == {'m1', 'm2'}
    assert {h['match'] for h in partial['results']} == {'partial'} and 'truncated' not in partial
    # Enough all-terms hits: no partial ones are added.
    assert [h['match'] for h in store.search('postgres', caller=MAIN, limit=2)['results']] == ['all', 'all']
    # A plain question: stopwords do not count, and the message answering more of it ranks first.
    question = store.search('When did the postgres migration fail?', caller=MAIN)['results']
    assert [h['messageId'] for h in question][:2] == ['m1', 'm2']


def test_ranked_search_finds_a_reply_by_the_question_it_answers_across_appends(store):
    talk = [
        ('user', 'Sam: what type of movies do you like best, Jo?'),
        ('assistant', 'Jo: action movies, the louder the better, explosions and car chases'),
        ('user', 'Sam: lunch was nice'),
        ('assistant', 'Jo: movies at the cinema'),
    ]
    question = 'What type of movies does Jo like best?'
    for n, (role, text) in enumerate(talk, 1):
        store.append(MAIN, msg(f'm{n}', role, text, ts=1000 * n))
        store.search(question, caller=MAIN)  # the index catches up one message at a time
    found = [h['messageId'] for h in store.search(question, caller=MAIN)['results']]
    assert found == ['m1', 'm2', 'm4']  # the answer after the question, before a shorter mention


def test_ranked_search_prefers_the_session_whose_messages_together_answer(target):
    with SessionStore(target, visibility='agent') as store:
        for n in range(15):
            store.append('agent:main:chat', msg(f'c{n}', 'user', f'hotel talk {n}', ts=1000 + n))
        for n in range(60):
            store.append(f'agent:main:misc{n % 5}', msg(f'x{n}', 'user', f'filler words number {n}', ts=2000 + n))
        store.append('agent:main:chat', msg('cold', 'user', 'the hotel pool was cold', ts=3000))
        store.append('agent:main:trip', msg('flew', 'user', 'we flew to Lisbon in May', ts=3001))
        store.append('agent:main:trip', msg('roof', 'user', 'our hotel had a rooftop pool', ts=3002))
        found = [h['messageId'] for h in store.search('Which hotel in Lisbon had a pool?', caller=MAIN)['results']]
        assert found[0] == 'roof' and 'flew' in found[:3], found


@pytest.mark.parametrize(
    'query',
    [
        'the of and to',
        '?!… ——',
        '¿¡ 「」',
        'x' * 4096,
        'Café 東京 회의를 ERR_CONN_RESET 🙂 \u0000',
        'a' * 4000 + ' when',
    ],
)
def test_ranked_search_answers_any_question_with_a_valid_response(store, query):
    store.append(MAIN, msg('m1', 'user', 'the plan for 東京 and the café'))
    response = store.search(query, caller=MAIN)
    assert isinstance(response['results'], list)
    assert all(h['match'] in ('all', 'partial') for h in response['results'])


def test_ranked_search_never_shows_a_hidden_session(target):
    with SessionStore(target) as store:  # tree: a child sees itself and what it spawned
        store.append('agent:main:secret-talk', msg('s1', 'user', 'the launch code is banana'))
        store.append('agent:main:child', msg('c1', 'user', 'launch review'), spawned_by=MAIN)
        found = store.search('what is the launch code banana', caller='agent:main:child')['results']
        assert [h['sessionKey'] for h in found] == ['agent:main:child']
        assert all('banana' not in h['snippet'] for h in found)
        assert keys(store.search('launch code banana', caller=MAIN)) == {'agent:main:secret-talk', 'agent:main:child'}


def test_the_ranked_index_follows_rebuilds_deletes_and_other_processes(target):
    path = target
    with SessionStore(path, visibility='agent') as reader, SessionStore(path, visibility='agent') as writer:
        writer.append('agent:main:a', msg('a1', 'user', 'the quarterly budget review'))
        assert [h['messageId'] for h in reader.search('budget meeting', caller=MAIN)['results']] == ['a1']
        writer.append('agent:main:b', msg('b1', 'user', 'budget meeting moved to friday'))
        assert reader.search('budget meeting', caller=MAIN)['results'][0]['messageId'] == 'b1'
        writer.delete('agent:main:b')
        assert [h['messageId'] for h in reader.search('budget meeting', caller=MAIN)['results']] == ['a1']
        # A branch: the active leaf moves to a sibling, and the session is rebuilt.
        writer.append('agent:main:a', msg('a2', 'user', 'budget meeting notes', parent='a1'))
        writer.append('agent:main:a', msg('a3', 'user', 'unrelated lunch order', parent='a1'))
        writer.reconcile()
        assert [h['messageId'] for h in reader.search('budget meeting notes', caller=MAIN)['results']] == ['a1']


def test_ranking_ties_prefer_newer_then_message_id(store):
    for event_id, ts in (('b', 5), ('a', 5), ('c', 9)):
        store.append(MAIN, msg(event_id, 'user', 'identical words here', ts=ts))
    assert [h['messageId'] for h in store.search('identical', caller=MAIN)['results']] == ['c', 'a', 'b']


def test_only_user_and_assistant_text_is_indexed(store):
    store.append(MAIN, msg('m1', 'toolResult', 'zebra in a tool result'))
    store.append(
        MAIN,
        msg(
            'm2',
            'assistant',
            [
                {'type': 'thinking', 'thinking': 'zebra thinking'},
                {'type': 'toolCall', 'name': 'zebra'},
                {'type': 'image', 'data': 'zebra'},
                {'type': 'output_text', 'text': 'giraffe answer'},
            ],
        ),
    )
    store.append(
        MAIN,
        msg('m3', 'user', [{'type': 'input_text', 'text': 'first line'}, {'type': 'text', 'text': 'okapi second'}]),
    )
    assert store.search('zebra', caller=MAIN)['results'] == []
    assert [h['messageId'] for h in store.search('giraffe', caller=MAIN)['results']] == ['m2']
    assert [h['snippet'] for h in store.search('okapi', caller=MAIN)['results']] == ['first line okapi second']


@pytest.mark.parametrize(
    ('query', 'limit', 'error'),
    [
        ('   ', 10, 'non-space'),
        ('x' * 4097, 10, '4096'),
        ('ok', 0, 'positive'),
        ('ok', True, 'positive'),
        (None, 10, 'string'),
    ],
)
def test_bad_parameters_are_clear_errors(store, query, limit, error):
    with pytest.raises(InvalidInputError, match=error):
        store.search(query, caller=MAIN, limit=limit)


def test_limit_defaults_to_10_and_over_25_is_an_error(store):
    # OpenClaw answers ``limit: 26`` with "limit must be a positive integer" (this used to clamp to 25).
    for i in range(40):
        store.append(MAIN, msg(f'm{i:02}', 'user', f'common word number {i}'))
    assert len(store.search('common', caller=MAIN)['results']) == 10
    assert len(store.search('common', caller=MAIN, limit=25)['results']) == 25
    for limit in (26, 100):
        with pytest.raises(InvalidInputError, match='limit must be a positive integer'):
            store.search('common', caller=MAIN, limit=limit)


def test_truncated_when_more_messages_matched_than_the_limit(store):
    # OpenClaw: "caps hits at the limit and reports truncation" (4 needles, limit 3).
    for i in range(4):
        store.append(MAIN, msg(f'n{i}', 'user', f'needle number {i}'))
    result = store.search('needle', caller=MAIN, limit=3)
    assert len(result['results']) == 3 and result['truncated'] is True
    assert 'truncated' not in store.search('needle', caller=MAIN, limit=4)


def test_hostile_query_syntax_is_literal(store):
    store.append(MAIN, msg('m1', 'user', 'say "hello" NEAR the door'))
    for query in ('"hello', 'NEAR(', 'hello*', 'door OR', 'AND', '"', '^door', 'col:door', '-', '()'):
        response = store.search(query, caller=MAIN)
        assert 'status' not in response, (query, response)
    assert keys(store.search('"hello" NEAR', caller=MAIN)) == {MAIN}


FAIL = Sql(  # the session row update is the last write of an append: make it fail
    'CREATE TRIGGER fail BEFORE UPDATE ON sessions WHEN NEW.event_count > 1 '
    "BEGIN SELECT RAISE(ABORT, 'disk is full'); END",
    "CREATE FUNCTION fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk is full'; END $$; "
    'CREATE TRIGGER fail BEFORE UPDATE ON session_sessions FOR EACH ROW WHEN (NEW.event_count > 1) '
    'EXECUTE FUNCTION fail()',
)


def test_failed_append_leaves_neither_event_nor_index_row(store, target):
    store.append(MAIN, msg('m1', 'user', 'kept message'))
    before = table_counts(store)
    run_sql(target, FAIL)
    with pytest.raises(SessionStoreError, match='disk is full'):
        store.append(MAIN, msg('m2', 'user', 'doomed message'))
    assert table_counts(store) == before
    assert store.search('doomed', caller=MAIN)['results'] == []
    run_sql(target, Sql('DROP TRIGGER fail', 'DROP TRIGGER fail ON session_sessions'))
    assert store.append(MAIN, msg('m2', 'user', 'doomed message'))  # nothing half-written blocks a retry
    assert keys(store.search('doomed', caller=MAIN)) == {MAIN}


def test_appends_are_idempotent_and_bad_events_rejected(store):
    assert store.append(MAIN, msg('m1', 'user', 'once'))
    assert not store.append(MAIN, msg('m1', 'user', 'once'))
    assert len(store.search('once', caller=MAIN)['results']) == 1
    with pytest.raises(memsift.InvalidInputError, match='type'):
        store.append(MAIN, {'message': 'no type'})
    with pytest.raises(memsift.InvalidInputError, match='session_key'):
        store.append('', msg('m2', 'user', 'x'))


def test_rewind_hides_abandoned_branch(store):
    store.append(MAIN, msg('m1', 'user', 'plan the trip', parent=None))
    store.append(MAIN, msg('m2', 'assistant', 'book the ferry', parent='m1'))
    store.append(MAIN, msg('m3', 'user', 'actually take the airship', parent='m2'))
    assert keys(store.search('airship', caller=MAIN)) == {MAIN}
    store.append(MAIN, msg('m4', 'user', 'take the train instead', parent='m2'))  # rewind: m3 abandoned
    assert store.search('airship', caller=MAIN)['results'] == []
    assert [h['messageId'] for h in store.search('train', caller=MAIN)['results']] == ['m4']
    store.append(MAIN, msg('m5', 'assistant', 'train booked', parent='m4'))  # extends the new leaf
    assert [m['id'] for m in store.history(MAIN, MAIN)['messages']] == ['m1', 'm2', 'm4', 'm5']
    store.append(MAIN, msg('m6', 'user', 'back to the airship', parent='m3'))  # switch to the old branch
    assert [h['messageId'] for h in store.search('airship', caller=MAIN)['results']] == ['m6', 'm3'] or {
        h['messageId'] for h in store.search('airship', caller=MAIN)['results']
    } == {'m3', 'm6'}
    assert store.search('train', caller=MAIN)['results'] == []


def test_delete_removes_events_and_index_rows_together(store):
    store.append(MAIN, msg('m1', 'user', 'keep this'))
    store.append('agent:main:other', msg('o1', 'user', 'remove this'))
    assert store.delete('agent:main:other') and not store.delete('agent:main:other')
    assert table_counts(store) == (1, 1, 1)
    assert store.search('remove', caller=MAIN)['results'] == []


def test_event_lines_copy_a_session_to_another_store(store, targets):
    store.append(MAIN, msg('m1', 'user', 'first words', parent=None))
    store.append(MAIN, msg('m2', 'assistant', 'second words 東京', parent='m1'))
    store.append(MAIN, msg('m3', 'user', 'a branch off the first', parent='m1'))
    lines = list(store.event_lines(MAIN))
    assert [json.loads(line)['id'] for line, _ in lines] == ['m1', 'm2', 'm3'] and list(store.event_lines('nope')) == []
    assert [stamp for _, stamp in lines] == [json.loads(line)['timestamp'] for line, _ in lines]
    [session] = store.sessions()
    with SessionStore(targets()) as copy:  # the header names the session: the copy keeps its id
        copy.append_many(MAIN, [{'type': 'session', 'id': session['sessionId']}, *(json.loads(x) for x, _ in lines)])
        assert list(copy.event_lines(MAIN)) == lines
        assert copy.history(MAIN, MAIN) == store.history(MAIN, MAIN)
        assert [h['messageId'] for h in copy.search('first', caller=MAIN)['results']] == ['m1', 'm3']


# ---------------------------------------------------------------- visibility

# main ─┬─ A ─┬─ A1
#       │     └─ C (incognito)
#       └─ B
# plus S, a session nobody spawned, and ops (another agent) in the same store and in a peer store. On PostgreSQL
# every store of the tree shares one database: ops2's session there is reached as a peer's, never by the main store.
TREE = {
    MAIN: None,
    'agent:main:A': MAIN,
    'agent:main:A1': 'agent:main:A',
    'agent:main:C': 'agent:main:A',
    'agent:main:B': MAIN,
    'agent:main:S': None,
}


@pytest.fixture
def tree(backend, targets):
    ops_target, main_target = targets(), targets()
    ops = SessionStore(ops_target if backend == 'sqlite' else main_target, agent_id='ops')
    ops.append('agent:ops:main', msg('x', 'user', 'shared word from peer ops'))
    ops2 = SessionStore(main_target, agent_id='ops2')
    store = SessionStore(main_target, peers=[ops] if backend == 'sqlite' else [ops, ops2])
    for key, parent in TREE.items():
        store.append(key, msg(key, 'user', f'shared word from {key}'), spawned_by=parent)
    store.set_flags('agent:main:C', incognito=True)
    # a session of another agent in this very store (a store path shared by two agents)
    ops2.append('agent:ops2:main', msg('y', 'user', 'shared word'))
    yield store
    store.close()
    ops.close()
    ops2.close()


ALL_MAIN = {MAIN, 'agent:main:A', 'agent:main:A1', 'agent:main:B', 'agent:main:S'}


@pytest.mark.parametrize(
    ('caller', 'expected'),
    [
        (Caller(MAIN, visibility='self'), {MAIN}),
        (Caller('agent:main:A', visibility='self'), {'agent:main:A'}),
        (Caller(MAIN, visibility='tree'), ALL_MAIN),  # the main session sees its whole agent
        (Caller('agent:main:A', visibility='tree'), {'agent:main:A', 'agent:main:A1'}),
        (Caller('agent:main:A1', visibility='tree'), {'agent:main:A1'}),
        (Caller('agent:main:B', visibility='tree'), {'agent:main:B'}),
        (Caller('agent:main:A', visibility='agent'), ALL_MAIN),
        (Caller('agent:main:A', visibility='all'), ALL_MAIN),
        (
            Caller('agent:main:A', visibility='all', agent_to_agent=True),
            ALL_MAIN | {'agent:ops2:main', 'agent:ops:main'},
        ),
        (  # sandboxed with ``spawned``: itself and the sessions it spawned directly (not A1, A's child)
            Caller(MAIN, visibility='all', agent_to_agent=True, sandboxed=True),
            {MAIN, 'agent:main:A', 'agent:main:B'},
        ),
        (Caller('agent:main:A', visibility='agent', sandboxed=True), {'agent:main:A', 'agent:main:A1'}),
        (Caller('agent:main:A', visibility='agent', sandboxed=True, sandbox_visibility='all'), ALL_MAIN),
        (Caller('agent:main:C', visibility='self'), set()),  # incognito: never returned, even to itself
        (Caller('agent:main:nobody', visibility='tree'), set()),
    ],
)
def test_visibility_matrix_has_no_leaks(tree, caller, expected):
    assert keys(tree.search('shared', caller=caller, limit=25)) == expected
    hidden = (set(TREE) | {'agent:ops:main', 'agent:ops2:main'}) - expected
    for key in hidden:  # a hidden session's own words find nothing, and restricting to it is forbidden
        assert key not in keys(tree.search(key, caller=caller, limit=25))
        with pytest.raises(SessionAccessError):
            tree.search('shared', caller=caller, session_key=key)
        with pytest.raises(SessionAccessError):
            tree.history(key, caller)
    for key in expected:  # including other agents' sessions, in this store or a peer's
        assert keys(tree.search('shared', caller=caller, session_key=key)) == {key}
        assert tree.history(key, caller)['sessionKey'] == key


def test_hidden_sessions_do_not_change_visible_results_or_counts(targets):
    def run(with_hidden):
        with SessionStore(targets()) as s:
            for i in range(12):
                s.append('agent:main:A', msg(f'a{i}', 'user', f'release notes item {i}', ts=i))
            if with_hidden:
                for i in range(30):
                    s.append('agent:main:B', msg(f'b{i}', 'user', f'release notes hidden {i}', ts=100 + i))
            return [
                h['messageId']
                for h in s.search('release notes', caller=Caller('agent:main:A', visibility='self'), limit=5)['results']
            ]

    assert run(True) == run(False)


def test_default_visibility_comes_from_the_store(target):
    with SessionStore(target, visibility='self') as s:
        s.append(MAIN, msg('m1', 'user', 'alpha'))
        s.append('agent:main:X', msg('x1', 'user', 'alpha'), spawned_by=MAIN)
        assert keys(s.search('alpha', caller=MAIN)) == {MAIN}
        assert keys(s.search('alpha', caller=Caller(MAIN, visibility='tree'))) == {MAIN, 'agent:main:X'}
    # OpenClaw: visibility is case-insensitive, and an unknown value falls back to ``tree`` (it used to be an error).
    with SessionStore(target, visibility='everyone') as s:
        assert s.visibility == 'tree'
    with SessionStore(target, visibility='ALL') as s:
        assert s.visibility == 'all'


def test_session_key_aliases(store):
    store.append(MAIN, msg('m1', 'user', 'alias test'))
    store.append('agent:main:sub', msg('s1', 'user', 'alias test'), spawned_by=MAIN)
    assert keys(store.search('alias', caller='agent:main:sub', session_key='current')) == {'agent:main:sub'}
    assert keys(store.search('alias', caller=MAIN, session_key='main')) == {MAIN}
    with pytest.raises(SessionAccessError):
        store.search('alias', caller='agent:main:sub', session_key='main')


# ---------------------------------------------------------------- snippets, redaction, byte cap


def test_snippet_is_match_centred_redacted_and_capped(store):
    filler = ' '.join(f'word{i}' for i in range(300))
    key = 'sk-proj-' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4'
    store.append(MAIN, msg('m1', 'user', f'{filler} the rollback used OPENAI_API_KEY={key} tonight {filler}'))
    snippet = store.search('rollback', caller=MAIN)['results'][0]['snippet']
    assert 'rollback' in snippet and snippet.startswith('…') and snippet.endswith('…')
    assert len(snippet) <= 301 and key not in snippet and key[:6] not in snippet[:0] + 'x'
    assert 'OPENAI_API_KEY=' in snippet


def test_secret_cut_by_the_excerpt_edge_is_still_masked(store):
    token = 'ghp_' + 'Zx9' * 12
    store.append(MAIN, msg('m1', 'user', 'a ' * 40 + token + ' ' + 'b ' * 60 + 'needle'))
    snippet = store.search('needle', caller=MAIN)['results'][0]['snippet']
    assert 'needle' in snippet and token[10:20] not in snippet


def test_user_redact_patterns_apply(target):
    with SessionStore(target, redact_patterns=[r'project (\w+)']) as s:
        s.append(MAIN, msg('m1', 'user', 'codename project nightingale launches'))
        snippet = s.search('launches', caller=MAIN)['results'][0]['snippet']
        assert 'nightingale' not in snippet and 'project' in snippet


def test_response_stays_within_32_kib(store):
    for i in range(25):
        key = f'agent:main:{i:02}-' + 'k' * 2000  # long keys make each hit ~2 KiB
        store.append(key, msg(f'm{i}', 'user', '長い会話 ' * 100 + f'needle {i}'), spawned_by=MAIN)
    response = store.search('needle', caller=MAIN, limit=25)
    size = len(json.dumps(response, ensure_ascii=False, separators=(',', ':')).encode())
    assert response['truncated'] is True and 0 < len(response['results']) < 25
    assert size <= MAX_RESPONSE_BYTES
    one = len(json.dumps(response['results'][0], ensure_ascii=False, separators=(',', ':')).encode())
    assert size + one + 1 > MAX_RESPONSE_BYTES  # one more hit would not have fitted


# ---------------------------------------------------------------- CJK


@pytest.mark.parametrize(
    ('text', 'query'),
    [
        ('我们决定把数据库迁移到新的集群', '数据库迁移'),
        ('我们决定把数据库迁移到新的集群', '集群 数据库'),
        ('明日の東京会議は午後三時からです', '東京会議'),
        ('明日の東京会議は午後三時からです', '午後'),
        ('회의는 내일 오전으로 옮겼습니다', '회의를'),  # particle-stripped stem
        ('회의는 내일 오전으로 옮겼습니다', '내일 회의'),
    ],
)
def test_cjk_queries_find_messages(store, text, query):
    store.append(MAIN, msg('m1', 'assistant', text))
    store.append(MAIN, msg('m2', 'assistant', 'unrelated english text'))
    assert [h['messageId'] for h in store.search(query, caller=MAIN)['results']] == ['m1']


def test_cjk_terms_match_characters_in_order(store):
    store.append(MAIN, msg('m1', 'user', '下载视频'))
    assert [h['match'] for h in store.search('视频下载', caller=MAIN)['results']] == ['partial']
    assert [h['match'] for h in store.search('下载视频', caller=MAIN)['results']] == ['all']


# ---------------------------------------------------------------- import and reconciliation


def write_transcript(path, count, *, bad_lines=0):
    lines = [json.dumps({'type': 'session', 'version': 3, 'id': 'sess-123', 'timestamp': '2026-11-01T10:00:00Z'})]
    parent = None
    for i in range(count):
        role = 'user' if i % 2 == 0 else 'assistant'
        lines.append(
            json.dumps(
                {
                    'type': 'message',
                    'id': f'e{i}',
                    'parentId': parent,
                    'timestamp': f'2026-11-01T10:{i // 60:02}:{i % 60:02}.000Z',
                    'message': {'role': role, 'content': [{'type': 'text', 'text': f'turn {i} lantern'}]},
                }
            )
        )
        parent = f'e{i}'
    lines += ['{not json'] * bad_lines
    path.write_text('\n'.join(lines) + '\n', encoding='utf-8')


def test_import_small_transcript_is_indexed_by_the_next_search(store, tmp_path):
    write_transcript(tmp_path / 't.jsonl', 6, bad_lines=2)
    report = store.import_jsonl(tmp_path / 't.jsonl', MAIN)
    assert {k: v for k, v in report.items() if k != 'skippedLines'} == {
        'sessionKey': MAIN,
        'sessionId': 'sess-123',
        'events': 6,
        'skipped': 2,
    }
    assert [line.split(':')[0] for line in report['skippedLines']] == ['line 8', 'line 9']  # the bad lines named
    response = store.search('lantern', caller=MAIN)
    assert len(response['results']) == 6 and 'indexing' not in response
    hit = response['results'][0]
    assert hit['sessionId'] == 'sess-123' and hit['timestamp'] >= 1_761_991_200_000
    assert store.import_jsonl(tmp_path / 't.jsonl', MAIN)['events'] == 0  # re-import adds nothing


def test_large_import_reconciles_in_the_background(tmp_path, target):
    write_transcript(tmp_path / 't.jsonl', 40)
    with SessionStore(target, sync_rebuild_max_events=10) as store:
        store.append('agent:main:live', msg('l1', 'user', 'lantern live'), spawned_by=MAIN)
        store.import_jsonl(tmp_path / 't.jsonl', MAIN)
        first = store.search('lantern', caller=MAIN, limit=25)
        assert first['indexing'] is True and first['warning'] == INDEXING_WARNING
        assert keys(first) <= {MAIN, 'agent:main:live'}
        deadline = time.monotonic() + 20
        while store.indexing and time.monotonic() < deadline:
            time.sleep(0.05)
        done = store.search('lantern', caller=MAIN, limit=25)
        assert 'indexing' not in done and len(done['results']) == 25


def test_import_errors_name_the_file(store, tmp_path):
    (tmp_path / 'bad.jsonl').write_bytes(b'\xff\xfe{"type": "message"}')
    with pytest.raises(SessionStoreError, match='bad.jsonl.*UTF-8'):
        store.import_jsonl(tmp_path / 'bad.jsonl', MAIN)
    with pytest.raises(SessionStoreError, match='missing.jsonl'):
        store.import_jsonl(tmp_path / 'missing.jsonl', MAIN)
    (tmp_path / 'junk.jsonl').write_text('hello\n[1, 2]\n')
    with pytest.raises(SessionStoreError, match='junk.jsonl: no transcript events'):
        store.import_jsonl(tmp_path / 'junk.jsonl', 'agent:main:junk')
    assert store.sessions() == []


# ---------------------------------------------------------------- sessions_history


def test_history_strips_tools_and_redacts(store):
    store.append(MAIN, msg('m1', 'user', 'deploy with token ghp_' + 'a' * 36))
    store.append(
        MAIN,
        msg(
            'm2',
            'assistant',
            [
                {'type': 'thinking', 'thinking': 'hmm'},
                {'type': 'toolCall', 'name': 'bash', 'arguments': {}},
                {'type': 'text', 'text': 'running it'},
            ],
        ),
    )
    store.append(MAIN, msg('m3', 'toolResult', [{'type': 'text', 'text': 'exit 0'}]))
    history = store.history(MAIN, MAIN)
    assert [(m['id'], m['role'], m['content']) for m in history['messages']][1:] == [('m2', 'assistant', 'running it')]
    assert 'a' * 36 not in history['messages'][0]['content'] and 'ghp_' in history['messages'][0]['content']
    assert [m['id'] for m in store.history(MAIN, MAIN, include_tools=True)['messages']] == ['m1', 'm2', 'm3']
    assert history['sessionId'] == store.history(history['sessionId'], MAIN)['sessionId']  # a session id works too
    assert [m['id'] for m in store.history(MAIN, MAIN, limit=1)['messages']] == ['m2']


def test_history_stays_within_32_kib(store):
    for i in range(60):
        store.append(MAIN, msg(f'm{i}', 'user', f'{i} ' + 'x' * 3000))
    history = store.history(MAIN, MAIN, limit=200)
    assert history['truncated'] is True and history['messages'][-1]['id'] == 'm59'
    assert len(json.dumps(history, ensure_ascii=False).encode()) <= MAX_RESPONSE_BYTES


# ---------------------------------------------------------------- session memory (memory_search over transcripts)


def session_memory_index(tmp_path, sessions, query=None, **sync):
    (tmp_path / 'ws').mkdir(exist_ok=True)
    (tmp_path / 'ws' / 'MEMORY.md').write_text('# Notes\nThe staging cluster lives in Oslo.\n')
    config = memsift.load_config(
        {
            'agents': {
                'defaults': {
                    'memorySearch': {
                        'provider': 'none',
                        'sources': ['memory', 'sessions'],
                        'experimental': {'sessionMemory': True},
                        'store': {'path': str(tmp_path / 'memory.sqlite')},
                        'sync': {'sessions': sync},
                        **({'query': query} if query else {}),
                    }
                }
            }
        }
    )
    return memsift.MemoryIndex(tmp_path / 'ws', config, sessions=sessions)


def test_memory_search_finds_transcripts_with_visibility(store, tmp_path):
    store.append(MAIN, msg('m1', 'user', 'remember the walrus protocol for backups'))
    store.append(MAIN, msg('m2', 'toolResult', 'walrus tool output'))
    store.append(MAIN, msg('m3', 'assistant', 'noted: walrus protocol means nightly snapshots'))
    store.append('agent:main:child', msg('c1', 'user', 'walrus protocol from the child session'), spawned_by=MAIN)
    with session_memory_index(tmp_path, store) as index:
        index.sync()
        hits = index.search('walrus protocol', min_score=0).results
        assert {(h.path, h.source) for h in hits} == {
            ('sessions/agent:main:main.jsonl', 'sessions'),
            ('sessions/agent:main:child.jsonl', 'sessions'),
        }
        main_hit = next(h for h in hits if h.path == 'sessions/agent:main:main.jsonl')
        assert 'User: remember the walrus' in main_hit.snippet and 'tool output' not in main_hit.snippet
        assert (main_hit.start_line, main_hit.end_line) == (1, 3)  # transcript lines: the tool result is line 2
        child_only = index.search('walrus protocol', min_score=0, session_key='agent:main:child').results
        assert {h.path for h in child_only} == {'sessions/agent:main:child.jsonl'}
        assert index.search('Oslo', min_score=0).results[0].source == 'memory'
        with pytest.raises(memsift.InvalidInputError, match='sessions_history'):
            index.get('sessions/agent:main:main.jsonl')


def test_session_memory_resyncs_after_delta_messages(store, tmp_path):
    store.append(MAIN, msg('m0', 'user', 'first message about kayaks'))
    with session_memory_index(tmp_path, store, deltaMessages=3, deltaBytes=100000) as index:
        index.sync()
        store.append(MAIN, msg('m1', 'user', 'a note about canoes'))
        index.sync()
        assert index.search('canoes', min_score=0).results == []  # 1 new message < deltaMessages
        for i in range(2, 4):
            store.append(MAIN, msg(f'm{i}', 'user', f'more canoes {i}'))
        index.sync()
        assert [h.source for h in index.search('canoes', min_score=0).results] == ['sessions']
        store.delete(MAIN)
        index.sync()
        assert index.search('canoes', min_score=0).results == []


def test_transcripts_decay_from_their_last_message(store, tmp_path):
    """Temporal decay ages a transcript from its newest message (its mtime in OpenClaw), not from the epoch."""
    day = 86_400_000
    store.append(MAIN, msg('m1', 'user', 'the heron migration schedule', ts=int(time.time() * 1000) - 3 * day))
    with session_memory_index(tmp_path, store) as index:
        index.sync()
        [plain] = index.search('heron migration', min_score=0).results
    decay = {'hybrid': {'temporalDecay': {'enabled': True, 'halfLifeDays': 30}}}
    with session_memory_index(tmp_path, store, query=decay) as index:
        [decayed] = index.search('heron migration', min_score=0).results
    assert decayed.source == 'sessions'
    assert decayed.score == pytest.approx(plain.score * 0.5 ** (3 / 30), rel=0.01)


def test_same_transcript_under_two_keys_gets_two_session_ids(store, tmp_path):
    write_transcript(tmp_path / 't.jsonl', 2)
    first = store.import_jsonl(tmp_path / 't.jsonl', 'agent:main:one')
    second = store.import_jsonl(tmp_path / 't.jsonl', 'agent:main:two')
    assert first['sessionId'] == 'sess-123' and second['sessionId'] != 'sess-123' and second['events'] == 2
    assert keys(store.search('lantern', caller=MAIN)) == {'agent:main:one', 'agent:main:two'}


def test_reimport_reads_only_what_was_appended(store, tmp_path):
    path = tmp_path / 't.jsonl'
    write_transcript(path, 4)
    assert store.import_jsonl(path, MAIN)['events'] == 4
    with path.open('a', encoding='utf-8') as f:  # the transcript grows, the last line still being written
        f.write(
            json.dumps(
                {
                    'type': 'message',
                    'id': 'e4',
                    'parentId': 'e3',
                    'timestamp': 5,
                    'message': {'role': 'user', 'content': 'separator\u2028inside lantern'},
                }
            )
            + '\n'
        )
        f.write('{"type": "message", "id": "e5", "parentId": "e4", "message": {"role": "us')
    grown = store.import_jsonl(path, MAIN, forward=True)
    assert grown == {'sessionKey': MAIN, 'sessionId': 'sess-123', 'events': 1, 'skipped': 0}
    assert 'indexing' not in store.search('separator', caller=MAIN)  # forward: indexed by the import itself
    with path.open('a', encoding='utf-8') as f:
        f.write('er", "content": "finished lantern"}}\n')
    assert store.import_jsonl(path, MAIN, forward=True)['events'] == 1
    assert [m['id'] for m in store.history(MAIN, MAIN)['messages']][-2:] == ['e4', 'e5']
    line = Sql(  # line numbers are the file's lines (line 1 is the header)
        "SELECT line FROM events WHERE event_id = 'e5'",
        "SELECT line FROM session_events WHERE agent = :agent AND event_id = 'e5'",
    )
    assert store._db.execute(line).fetchone()[0] == 7
    path.write_text(path.read_text(encoding='utf-8').splitlines()[0] + '\n', encoding='utf-8')  # rewritten: shorter
    assert store.import_jsonl(path, MAIN)['events'] == 0


# ---------------------------------------------------------------- no secret oracle


def test_a_search_for_a_raw_secret_cannot_confirm_it(store):
    store.append(MAIN, msg('m1', 'user', 'deploy with OPENAI_API_KEY=sk-proj-4f9aXb81QzLmN0pRt7Uv tonight'))
    found = store.search('sk-proj-4f9aXb81QzLmN0pRt7Uv', caller=MAIN)['results']
    assert all(h['match'] == 'partial' for h in found)  # never an all-terms hit
    # A wrong guess that shares what the mask shows (first 6 and last 4 characters) gets the same answer.
    wrong = store.search('sk-proj-00000000000000000t7Uv', caller=MAIN)['results']
    assert [(h['messageId'], h['score']) for h in found] == [(h['messageId'], h['score']) for h in wrong]
    assert store.search('4f9aXb81QzLmN0pRt7Uv', caller=MAIN)['results'] == []
    assert all('4f9aXb81' not in h['snippet'] for h in found)
    [hit] = store.search('deploy tonight', caller=MAIN)['results']
    assert '4f9aXb81' not in hit['snippet'] and 'OPENAI_API_KEY=' in hit['snippet']


def test_changed_redaction_patterns_reindex_the_transcripts(target):
    path = target
    with SessionStore(path) as store:
        store.append(MAIN, msg('m1', 'user', 'codename nightingale ships friday'))
        assert keys(store.search('nightingale', caller=MAIN)) == {MAIN}
    with SessionStore(path, redact_patterns=[r'codename (\w+)']) as store:
        assert keys(store.search('nightingale', caller=MAIN)) == set()
        assert keys(store.search('ships friday', caller=MAIN)) == {MAIN}
    with SessionStore(path) as store:  # the pattern removed: the rows are rebuilt from the stored events again
        assert keys(store.search('nightingale', caller=MAIN)) == {MAIN}


def test_the_reindex_resumes_after_a_kill(target):
    from memsift.sessions.writer import Writer

    with SessionStore(target) as store:
        for i in range(5):
            store.append(MAIN, msg(f'm{i}', 'user', f'walrus number {i}', parent=f'm{i - 1}' if i else None))
        db = store._db
        seen = []

        def dies_on_the_third(text):
            seen.append(text)
            if len(seen) == 3:
                raise KeyboardInterrupt  # the process is killed while the third batch is re-indexed
            return text.replace('walrus', 'seal')

        writer = Writer(db, memsift.Analyzer(), dies_on_the_third)
        with pytest.raises(KeyboardInterrupt):
            writer.reindex_redacted('v2', batch=1)
        seen.clear()
        writer = Writer(db, memsift.Analyzer(), lambda text: seen.append(text) or text.replace('walrus', 'seal'))
        assert writer.reindex_redacted('v2', batch=1) == 3  # the two committed batches are not redone
        assert [t.split()[-1] for t in seen] == ['2', '3', '4']
        rows = Sql(
            'SELECT tokens FROM message_fts ORDER BY rowid',
            'SELECT tokens FROM session_message_fts WHERE agent = :agent ORDER BY seq',
        )
        tokens = [row[0] for row in db.execute(rows)]
        assert all(t.startswith('seal') for t in tokens) and writer.reindex_redacted('v2', batch=1) == 0


# ---------------------------------------------------------------- OpenClaw parity (ported cases)


@pytest.mark.parametrize(
    ('key', 'incognito'),
    [  # OpenClaw's session-key.incognito.test.ts, plus internal-session-effects and case/space folding
        ('agent:main:dashboard:incognito-1234', True),
        ('agent:worker:subagent:incognito-5678', True),
        ('agent:main:internal-session-effects:incognito-9', True),
        (' Agent:Main:Dashboard:INCOGNITO-1 ', True),
        ('agent:main:dashboard:1234', False),
        ('agent:main:dashboard:not-incognito-1234', False),
        ('agent:main:subagent:1234', False),
        ('dashboard:incognito-1234', False),
        ('agent:main:dashboard:incognito-1:more', False),
    ],
)
def test_incognito_session_keys_are_never_searched(target, key, incognito):
    with SessionStore(target, visibility='all') as s:
        s.append(key, msg('p1', 'user', 'private words'))
        assert memsift.sessions.is_incognito_session_key(key) is incognito
        assert keys(s.search('private', caller=MAIN)) == (set() if incognito else {key})
        if incognito:  # OpenClaw: "never searches or returns incognito sessions"; explicit → forbidden
            with pytest.raises(SessionAccessError, match='Session not visible from session tools'):
                s.search('private', caller=MAIN, session_key=key)
            with pytest.raises(SessionAccessError):
                s.history(key, key)


def test_a_leaf_rewind_hides_the_rewound_branch(store):
    # OpenClaw: "only surfaces the active branch after a leaf-control rewind".
    store.append(MAIN, msg('m1', 'user', 'alpha origin', parent=None))
    store.append(MAIN, msg('m2', 'assistant', 'beta abandoned', parent='m1'))
    store.append(MAIN, {'type': 'leaf', 'id': 'leaf-1', 'parentId': 'm2', 'targetId': 'm1'})
    assert store.search('beta', caller=MAIN)['results'] == []
    store.reconcile()
    assert store.search('beta', caller=MAIN)['results'] == []
    assert [h['messageId'] for h in store.search('alpha', caller=MAIN)['results']] == ['m1']
    assert [m['id'] for m in store.history(MAIN, MAIN)['messages']] == ['m1']
    store.append(MAIN, msg('m3', 'user', 'gamma continues', parent='m1'))  # the branch goes on from the target
    store.reconcile()
    assert [h['messageId'] for h in store.search('gamma', caller=MAIN)['results']] == ['m3']
    assert store.search('beta', caller=MAIN)['results'] == []


@pytest.mark.parametrize('requested', ['01234567-89ab-4def-8123-456789abcdef', 'no-such-session'])
def test_an_unknown_session_id_is_an_error_not_forbidden(store, requested):
    # OpenClaw: resolveSessionReference answers status "error", "Session not found: … (use the full sessionKey …)".
    store.append(MAIN, msg('m1', 'user', 'kept'))
    for call in (
        lambda: store.search('kept', caller=MAIN, session_key=requested),
        lambda: store.history(requested, MAIN),
    ):
        with pytest.raises(InvalidInputError, match=f'Session not found: {requested} \\(use the full sessionKey'):
            call()
    sandboxed = Caller(MAIN, visibility='tree', sandboxed=True)
    with pytest.raises(SessionAccessError, match='Session not visible from this sandboxed agent session'):
        store.search('kept', caller=sandboxed, session_key=requested)
    with pytest.raises(SessionAccessError):  # a key-shaped request that names nothing stays "not visible"
        store.search('kept', caller=MAIN, session_key='agent:main:nothing')
    session_id = store.sessions()[0]['sessionId']  # a session id names its session
    assert keys(store.search('kept', caller=MAIN, session_key=session_id)) == {MAIN}


def test_the_main_alias_caller_sees_its_own_session_under_self(store):
    store.append(MAIN, msg('m1', 'user', 'walrus plan'))
    store.append('agent:main:other', msg('o1', 'user', 'walrus other'))
    caller = Caller('main', visibility='self')
    assert keys(store.search('walrus', caller=caller)) == {MAIN}
    assert keys(store.search('walrus', caller=caller, session_key='current')) == {MAIN}
    assert store.history('current', caller)['sessionKey'] == MAIN


def test_visibility_is_case_insensitive_and_an_unknown_one_is_tree(store):
    store.append(MAIN, msg('m1', 'user', 'okapi'))
    store.append('agent:main:A', msg('a1', 'user', 'okapi'), spawned_by='agent:main:X')
    store.append('agent:main:X', msg('x1', 'user', 'okapi'))
    assert keys(store.search('okapi', caller=Caller('agent:main:X', visibility='ALL'))) == {
        MAIN,
        'agent:main:A',
        'agent:main:X',
    }
    for value in ('invalid', 'Tree', ''):
        assert keys(store.search('okapi', caller=Caller('agent:main:X', visibility=value))) == {
            'agent:main:A',
            'agent:main:X',
        }


def test_sandboxed_callers_with_all_see_only_what_they_spawned(store):
    # OpenClaw: "clamps sandboxed callers to spawned sessions"; a sandboxed subagent is clamped to tree instead.
    store.append(MAIN, msg('m1', 'user', 'text'))
    store.append('agent:main:child:spawned', msg('c1', 'user', 'text'), spawned_by=MAIN)
    store.append('agent:main:grandchild', msg('g1', 'user', 'text'), spawned_by='agent:main:child:spawned')
    store.append('agent:main:other', msg('o1', 'user', 'text'))
    sandboxed = Caller(MAIN, visibility='all', sandboxed=True)
    assert keys(store.search('text', caller=sandboxed)) == {MAIN, 'agent:main:child:spawned'}
    assert keys(store.search('text', caller=Caller(MAIN, visibility='all', sandboxed=True, sandbox_visibility='all')))
    assert len(keys(store.search('text', caller=Caller(MAIN, 'main', 'all', True, 'all')))) == 4
    store.append('agent:main:subagent:abc', msg('s1', 'user', 'text'))
    store.append('agent:main:subagent:abc:kid', msg('k1', 'user', 'text'), spawned_by='agent:main:subagent:abc')
    subagent = Caller('agent:main:subagent:abc', visibility='all', sandboxed=True)
    assert keys(store.search('text', caller=subagent)) == {'agent:main:subagent:abc', 'agent:main:subagent:abc:kid'}


def test_tree_reads_watched_group_sessions_but_not_unwatched_ones(store):
    # OpenClaw: "allows watched group reads under tree while denying unwatched peers".
    requester = 'agent:main:coordinator:1'
    watched, unwatched = 'agent:main:telegram:group:watched', 'agent:main:telegram:group:unwatched'
    for key in (requester, watched, unwatched, 'agent:main:coordinator'):
        store.append(key, msg(key, 'user', 'group words'))
    caller = Caller(requester, visibility='tree', watched=frozenset({watched, 'agent:ops:telegram:group:watched'}))
    assert keys(store.search('group', caller=caller)) == {requester, watched}
    for hidden in (unwatched, 'agent:main:coordinator'):
        with pytest.raises(SessionAccessError):
            store.search('group', caller=caller, session_key=hidden)
    assert keys(store.search('group', caller=Caller(requester, visibility='self', watched=caller.watched))) == {
        requester
    }


def test_cross_agent_spawned_children(backend, targets):
    # OpenClaw: a native (ACP / subagent) child of another agent is visible to its spawner under tree and all (even
    # with agent-to-agent off), never under agent or self; an ordinary session of another agent is not.
    codex_target = targets()
    main_target = targets() if backend == 'sqlite' else codex_target  # PostgreSQL: both agents in one database
    with (
        SessionStore(codex_target, agent_id='codex') as codex,
        SessionStore(main_target, peers=[codex]) as store,
    ):
        store.append(MAIN, msg('m1', 'user', 'child words'))
        codex.append('agent:codex:acp:child-1', msg('c1', 'user', 'child words'), spawned_by=MAIN)
        codex.append('agent:codex:plain', msg('p1', 'user', 'child words'), spawned_by=MAIN)
        for visibility in ('tree', 'all'):
            caller = Caller(MAIN, visibility=visibility)
            assert keys(store.search('child', caller=caller)) == {MAIN, 'agent:codex:acp:child-1'}
            assert store.history('agent:codex:acp:child-1', caller)['sessionKey'] == 'agent:codex:acp:child-1'
            with pytest.raises(SessionAccessError):
                store.history('agent:codex:plain', caller)
        for visibility in ('agent', 'self'):
            assert keys(store.search('child', caller=Caller(MAIN, visibility=visibility))) == {MAIN}


def test_dreaming_transcripts_are_never_indexed(store):
    # OpenClaw: "flags dreaming narrative transcripts" (bootstrap metadata, or the dream-diary prompt).
    store.append(
        'agent:main:dream1',
        {
            'type': 'custom',
            'id': 'b1',
            'customType': 'openclaw:bootstrap-context:full',
            'data': {'runId': 'dreaming-narrative-light-1775894400455', 'sessionId': 'sid-1'},
        },
    )
    store.append('agent:main:dream1', msg('d1', 'user', 'moonlight fragments'))
    store.append('agent:main:dream2', msg('d2', 'user', 'Write a dream diary entry from these memory fragments:\n- x'))
    store.append('agent:main:dream2', msg('d3', 'assistant', 'A drifting archive breathed in moonlight.'))
    store.append(MAIN, msg('m1', 'user', 'moonlight in the real chat'))
    assert keys(store.search('moonlight', caller=MAIN)) == {MAIN}


def test_errors_do_not_echo_secrets(store):
    with pytest.raises(InvalidInputError) as caught:
        store.append(MAIN, {'message': 'deploy with OPENAI_API_KEY=sk-proj-4f9aXb81QzLmN0pRt7Uv'})
    assert '4f9aXb81QzLmN0' not in str(caught.value) and 'OPENAI_API_KEY=' in str(caught.value)


def test_the_vector_leg_finds_a_paraphrase_and_keeps_the_keyword_answer_in_an_outage(target, embedder):
    with SessionStore(target) as store:
        store.use_embeddings(embedder, background=False)
        # Three sessions: a short turn is embedded after the message before it in its own session only.
        store.append(MAIN, msg('m1', 'user', 'my physician moved the appointment', ts=1000))
        store.append('agent:main:b', msg('m2', 'user', 'the appointment with the dentist is monday', ts=2000))
        store.append('agent:main:c', msg('m3', 'user', 'lunch was great', ts=3000))
        assert store.vectors.embed_pending() == 3 and store.vectors.pending() == 0
        status = store.status()
        assert status['vectors'] == [{'key': 'test-hash/hash-v1/64/turn1', 'messages': 3}]
        assert status['embedding'] == {'provider': 'test-hash/hash-v1', 'pending': 0, 'error': None}
        # "doctor" is not a word of m1, but its vector shares the physician/doctor dimension.
        found = store.search('when is the doctor appointment', caller=MAIN)
        assert found['results'][0]['messageId'] == 'm1' and 'debug' not in found
        embedder.fail = True
        keyword_only = store.search('when is the doctor appointment', caller=MAIN)
        assert 'provider failed' in keyword_only['debug']['vectorSkipped']
        assert {h['messageId'] for h in keyword_only['results']} == {'m1', 'm2'}


def test_a_short_turn_is_embedded_after_the_message_it_answers(target, embedder):
    with SessionStore(target) as store:
        store.use_embeddings(embedder, background=False)
        long_answer = 'we walked along the river for hours and then found a small place serving grilled sardines'
        store.append_many(
            MAIN,
            [
                msg('m1', 'user', 'How was the concert in Lisbon?', ts=1000),
                msg('m2', 'assistant', 'Amazing, we danced all night!', ts=2000),
                msg('m3', 'user', long_answer, ts=3000),
            ],
        )
        store.append('agent:main:other', msg('o1', 'user', 'Amazing weather today', ts=4000))
        assert store.vectors.embed_pending() == 4
        assert embedder.seen == [
            'How was the concert in Lisbon?',  # nothing before it
            'How was the concert in Lisbon?\nAmazing, we danced all night!',
            long_answer,  # long enough to stand alone
            'Amazing weather today',  # the previous message of another session is not its context
        ]
        # No word of the question is in m2: only the concert it answers finds it.
        found = [h['messageId'] for h in store.search('what was the concert like', caller=MAIN)['results']]
        assert found[:2] == ['m1', 'm2'] or found[:2] == ['m2', 'm1'], found


def test_messages_are_embedded_in_the_background_once(target, embedder):
    path = target
    with SessionStore(path) as store:
        store.use_embeddings(embedder)
        store.append_many(MAIN, [msg(f'm{i}', 'user', f'note number {i} about the car') for i in range(10)])
        deadline = time.monotonic() + 20
        while store.vectors.pending() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.vectors.pending() == 0 and embedder.calls == 10
    with SessionStore(path) as store:  # reopened: the stored vectors serve, nothing is embedded again
        store.use_embeddings(embedder, background=False)
        assert store.vectors.embed_pending() == 0 and embedder.calls == 10
        assert store.search('automobile note', caller=MAIN)['results']


def test_the_vector_leg_never_shows_a_hidden_session(target, embedder):
    with SessionStore(target) as store:
        store.use_embeddings(embedder, background=False)
        store.append('agent:main:secret-talk', msg('s1', 'user', 'the physician said the code is banana'))
        store.append('agent:main:child', msg('c1', 'user', 'lunch review'), spawned_by=MAIN)
        store.vectors.embed_pending()
        assert store.search('which doctor', caller='agent:main:child')['results'] == []  # lunch is not relevant
        assert store.search('which doctor', caller=MAIN)['results'][0]['sessionKey'] == 'agent:main:secret-talk'


def test_background_embedding_survives_a_provider_outage(target, embedder, monkeypatch):
    from memsift.sessions import vectors

    monkeypatch.setattr(vectors, 'RETRY_S', 0.05)
    embedder.fail = True
    with SessionStore(target) as store:
        store.use_embeddings(embedder)
        store.append(MAIN, msg('m1', 'user', 'the physician called'))
        deadline = time.monotonic() + 20
        while store.vectors.error is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert 'unreachable' in store.vectors.error and store.status()['embedding']['pending'] == 1
        assert [h['messageId'] for h in store.search('physician', caller=MAIN)['results']] == ['m1']  # keywords
        embedder.fail = False  # the provider is back: the retry embeds what waited
        while store.vectors.pending() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert store.vectors.pending() == 0 and store.vectors.error is None
