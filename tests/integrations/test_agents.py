"""memsift.integrations.agents: the four memory tools as typed functions, turned into tools by the real OpenAI Agents
SDK (``function_tool``) and invoked through the SDK's own path (``FunctionTool.on_invoke_tool`` with a
``ToolContext``) against a real workspace and session store. No model is called."""

import asyncio
import inspect
import json
import typing

import pytest

pytest.importorskip('agents', reason='the OpenAI Agents SDK is optional: pip install "memsift[agents]"')

from agents import FunctionTool, function_tool, set_tracing_disabled  # noqa: E402
from agents.tool_context import ToolContext  # noqa: E402
from conftest import memory_config, write  # noqa: E402

import memsift  # noqa: E402
from memsift.integrations.agents import memory_tool_functions  # noqa: E402
from memsift.tools import MemoryTools  # noqa: E402

MAIN = 'agent:main:main'
CHILD = 'agent:main:child'
OTHER = 'agent:main:other'
NAMES = ['memory_search', 'memory_get', 'sessions_search', 'sessions_history']

set_tracing_disabled(True)  # tool calls outside a run make no traces anyway; never export any from a test


def msg(event_id, role, content):
    return {
        'type': 'message',
        'id': event_id,
        'timestamp': 1_767_225_600_000,
        'message': {'role': role, 'content': content},
    }


@pytest.fixture
def open_tools(tmp_path):
    """``open_tools(session_key)``: memory tools bound to that calling session, over one workspace and session store
    holding MAIN, a CHILD it spawned and an unrelated OTHER session. Under the default ``tree`` visibility the main
    session sees all three; CHILD and OTHER each see only themselves."""
    root = tmp_path / 'ws'
    write(root / 'MEMORY.md', '# Facts\n\nThe deploy key lives in the team vault.\n')
    write(root / 'memory' / '2026-11-20.md', '# 2026-11-20\n\nERR_CONN_RESET fixed with exponential backoff.\n')
    base = MemoryTools.open(
        root, memory_config(tmp_path, provider='none'), sessions_path=tmp_path / 's.sqlite', sync=False
    )
    base.index.sync()
    base.sessions.append(MAIN, msg('m1', 'user', 'we chose the walrus protocol for backups'))
    base.sessions.append(CHILD, msg('c1', 'user', 'walrus details from the child'), spawned_by=MAIN)
    base.sessions.append(OTHER, msg('o1', 'user', 'walrus secrets of another conversation'))
    made = [base]

    def make(session_key=MAIN):
        tools = MemoryTools(base.index, base.sessions, session_key=session_key)
        made.append(tools)
        return tools

    yield make
    for tools in reversed(made):
        tools.close()


def sdk_tools(tools):
    return {t.name: t for t in map(function_tool, memory_tool_functions(tools))}


def call(tool: FunctionTool, **arguments):
    """One tool call as the SDK's runner makes it: the JSON arguments string and a ToolContext."""
    raw = json.dumps(arguments)
    context = ToolContext(context=None, tool_name=tool.name, tool_call_id='call_1', tool_arguments=raw)
    return asyncio.run(tool.on_invoke_tool(context, raw))


def test_the_functions_are_typed_documented_and_carry_no_caller(open_tools):
    functions = memory_tool_functions(open_tools())
    assert [f.__name__ for f in functions] == NAMES
    for f in functions:
        hints = typing.get_type_hints(f)
        params = inspect.signature(f).parameters
        assert set(hints) == {*params, 'return'}  # every argument typed
        assert hints['return'] == dict[str, typing.Any]
        assert f.__doc__ and 'Args:' in f.__doc__
        assert not {'caller', 'sessionKey', 'caller_session'} & set(params)
    assert list(inspect.signature(functions[0]).parameters) == ['query', 'max_results', 'min_score', 'corpus']


def test_function_tool_schemas_offer_no_caller_identity(open_tools):
    tools = sdk_tools(open_tools())
    assert list(tools) == NAMES
    properties = {name: set(t.params_json_schema['properties']) for name, t in tools.items()}
    assert properties == {
        'memory_search': {'query', 'max_results', 'min_score', 'corpus'},
        'memory_get': {'path', 'from_line', 'lines'},
        'sessions_search': {'query', 'session_key', 'limit'},  # session_key: which visible conversation to search
        'sessions_history': {'session_key', 'limit', 'include_tools'},  # session_key: the conversation to read
    }
    search = tools['memory_search'].params_json_schema
    assert search['additionalProperties'] is False
    assert search['properties']['corpus']['enum'] == ['memory', 'sessions', 'all']
    assert 'What to look for' in search['properties']['query']['description']  # from the docstring's Args
    assert tools['memory_search'].description.startswith("Search this agent's long-term memory")
    for t in tools.values():
        assert t.strict_json_schema and t.params_json_schema['additionalProperties'] is False


def test_memory_tools_run_through_the_sdk(open_tools):
    tools = sdk_tools(open_tools())
    found = call(tools['memory_search'], query='deploy key', max_results=None, min_score=0, corpus='memory')
    hit = found['results'][0]
    assert (hit['path'], hit['startLine'], hit['citation']) == ('MEMORY.md', 1, 'MEMORY.md#L1-L4')
    assert 'The deploy key' in hit['snippet']
    got = call(tools['memory_get'], path=hit['path'], from_line=3, lines=1)
    assert (got['path'], got['from'], got['text']) == ('MEMORY.md', 3, 'The deploy key lives in the team vault.')
    assert call(tools['memory_search'], query='', max_results=None, min_score=None, corpus='memory')['results'] == []


def test_bad_arguments_reach_the_model_as_errors(open_tools):
    tools = sdk_tools(open_tools())
    zero = call(tools['memory_search'], query='deploy', max_results=0, min_score=None, corpus='memory')
    assert zero['status'] == 'error' and 'max_results must be a positive integer' in zero['error']
    negative = call(tools['memory_search'], query='deploy', max_results=-3, min_score=None, corpus='memory')
    assert negative['status'] == 'error'
    nul = call(tools['memory_search'], query='\x00', max_results=None, min_score=None, corpus='memory')
    assert nul['results'] == []
    surrogate = call(tools['memory_search'], query='deploy \ud800', max_results=None, min_score=0, corpus='memory')
    assert surrogate['results'][0]['path'] == 'MEMORY.md'  # the lone surrogate is replaced, the words still match
    missing = call(tools['memory_get'], path='../etc/passwd', from_line=None, lines=None)
    assert missing['text'] == '' and 'not an indexed memory file' in missing['error']
    blank = call(tools['sessions_search'], query='   ', session_key=None, limit=None)
    assert blank['status'] == 'error'
    # The SDK validates arguments against the signature: a wrong type or an unknown corpus never reaches memsift,
    # and the model reads the SDK's error message instead of a result.
    for wrong in ({'max_results': 'many', 'corpus': 'memory'}, {'max_results': 1, 'corpus': 'wiki'}):
        answer = call(tools['memory_search'], query='x', min_score=None, **wrong)
        assert isinstance(answer, str) and 'error occurred' in answer


def test_session_visibility_is_the_bound_sessions(open_tools):
    main = sdk_tools(open_tools(MAIN))
    found = call(main['sessions_search'], query='walrus', session_key=None, limit=None)
    assert {h['sessionKey'] for h in found['results']} == {MAIN, CHILD, OTHER}
    history = call(main['sessions_history'], session_key=CHILD, limit=None, include_tools=False)
    assert [m['content'] for m in history['messages']] == ['walrus details from the child']

    other = sdk_tools(open_tools(OTHER))
    found = call(other['sessions_search'], query='walrus', session_key=None, limit=5)
    assert {h['sessionKey'] for h in found['results']} == {OTHER}
    for key in (MAIN, CHILD):
        assert (
            call(other['sessions_history'], session_key=key, limit=None, include_tools=False)['status'] == 'forbidden'
        )
        assert call(other['sessions_search'], query='walrus', session_key=key, limit=None)['status'] == 'forbidden'
    child = sdk_tools(open_tools(CHILD))
    assert call(child['sessions_history'], session_key=MAIN, limit=None, include_tools=False)['status'] == 'forbidden'


def test_the_model_cannot_smuggle_a_caller(open_tools):
    other = sdk_tools(open_tools(OTHER))
    alone = call(other['sessions_search'], query='walrus', session_key=None, limit=None)
    assert {h['sessionKey'] for h in alone['results']} == {OTHER}
    for extra in ({'sessionKey': MAIN}, {'caller': MAIN}, {'session': MAIN}):
        # Not in the schema, so no function parameter receives it: the SDK drops it and the bound session rules.
        answer = call(other['sessions_search'], query='walrus', session_key=None, limit=None, **extra)
        assert answer == alone
        history = call(other['sessions_history'], session_key=MAIN, limit=None, include_tools=False, **extra)
        assert history['status'] == 'forbidden'


def test_only_memory_tools_are_accepted(open_tools):
    with pytest.raises(memsift.InvalidInputError, match='MemoryTools'):
        memory_tool_functions(open_tools().index)
