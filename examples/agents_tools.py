"""memsift's memory tools in the OpenAI Agents SDK: index the sample workspace (keyword search, no model), turn the
four tools into ``function_tool``s bound to one calling session, and call them as the SDK's runner does.

    pip install 'memsift[agents]'
    python examples/agents_tools.py "ERR_CONN_RESET backoff"

No model is called here: each tool is invoked through ``FunctionTool.on_invoke_tool`` with the JSON arguments a
model would send. In an app, hand the tools to an ``Agent`` and run it with ``Runner.run`` (that needs a model).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents import Agent, FunctionTool, function_tool
from agents.tool_context import ToolContext

from memsift import MemoryTools
from memsift.integrations.agents import memory_tool_functions

WORKSPACE = Path(__file__).resolve().parent / 'workspace'


async def invoke(tool: FunctionTool, **arguments: Any) -> Any:
    """One tool call as the runner makes it: the model's JSON arguments and a ToolContext."""
    raw = json.dumps(arguments, ensure_ascii=False)
    print(f'\n$ {tool.name}({raw})')
    context = ToolContext(None, tool_name=tool.name, tool_call_id='call_1', tool_arguments=raw)
    return await tool.on_invoke_tool(context, raw)


async def main(query: str) -> None:
    with tempfile.TemporaryDirectory() as state:  # index and session store live here, never in the workspace
        config = {
            'agents': {'defaults': {'memorySearch': {'provider': 'none', 'store': {'path': f'{state}/index.sqlite'}}}}
        }
        # session_key: the conversation the agent is serving. It decides which past conversations are visible, so
        # the application sets it here and the model never sees it as an argument.
        with MemoryTools.open(
            WORKSPACE, config, sessions_path=f'{state}/sessions.sqlite', session_key='agent:main:main', sync=False
        ) as memory:
            memory.index.sync()
            memory.sessions.append(  # a past conversation for sessions_search to find
                'agent:main:main',
                {
                    'type': 'message',
                    'id': 'm1',
                    'timestamp': 1_767_225_600_000,
                    'message': {'role': 'user', 'content': 'Remember: the canary deploy waits 15 minutes.'},
                },
            )
            tools = {t.name: t for t in map(function_tool, memory_tool_functions(memory))}
            agent = Agent(name='assistant', instructions='Use your memory tools.', tools=list(tools.values()))
            print(f'agent {agent.name!r} with tools:')
            for tool in agent.tools:
                assert isinstance(tool, FunctionTool)
                print(f'  {tool.name}({", ".join(tool.params_json_schema["properties"])})')

            found = await invoke(tools['memory_search'], query=query, max_results=2, min_score=None, corpus='memory')
            for hit in found['results']:
                print(f'  {hit["citation"]}  (score {hit["score"]:.2f})')
            top = found['results'][0]
            got = await invoke(tools['memory_get'], path=top['path'], from_line=top['startLine'], lines=5)
            print('  ' + got['text'].strip().replace('\n', '\n  '))
            said = await invoke(tools['sessions_search'], query='canary deploy', session_key=None, limit=None)
            for hit in said['results']:
                print(f'  {hit["sessionKey"]} {hit["role"]}: {hit["snippet"]}')


if __name__ == '__main__':
    asyncio.run(main(' '.join(sys.argv[1:]) or 'ERR_CONN_RESET backoff'))
