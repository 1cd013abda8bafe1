"""memsift as a LlamaIndex retriever: index the sample workspace (keyword search, no model) and retrieve from it.

    pip install 'memsift[llamaindex]'
    python examples/llamaindex_retriever.py "which editor does the user like"

Each ``NodeWithScore`` holds a whole chunk of a memory file as a ``TextNode`` (metadata: ``path``, ``startLine``,
``endLine``, ``score``, ``source``, ``citation``). The retriever plugs into ``RetrieverQueryEngine`` and the other
LlamaIndex pieces that take a retriever; here the nodes are printed as they are, so no LLM is needed.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import textwrap
from pathlib import Path

from memsift import MemoryIndex
from memsift.integrations.llamaindex import MemsiftRetriever

WORKSPACE = Path(__file__).resolve().parent / 'workspace'


def main(query: str) -> None:
    with tempfile.TemporaryDirectory() as state:  # the index lives here, never in the workspace
        config = {
            'agents': {'defaults': {'memorySearch': {'provider': 'none', 'store': {'path': f'{state}/index.sqlite'}}}}
        }
        with MemoryIndex(WORKSPACE, config) as index:
            index.sync()  # a search answers from what is indexed
            retriever = MemsiftRetriever(index, max_results=3, min_score=0.1)
            print(f'$ retriever.retrieve({query!r})')
            for found in retriever.retrieve(query):
                node = found.node
                print(f'{node.metadata["citation"]}  (score {found.score:.2f})')
                print(textwrap.indent(node.get_content().strip(), '    '))
            # The async path runs the search in a worker thread: the event loop stays free meanwhile.
            [found] = asyncio.run(MemsiftRetriever(index, max_results=1).aretrieve('视频下载'))
            print("\n$ await retriever.aretrieve('视频下载')")
            line = next(line for line in found.node.get_content().splitlines() if '视频' in line)
            print(f'{found.node.metadata["citation"]}: {line.strip()}')


if __name__ == '__main__':
    main(' '.join(sys.argv[1:]) or 'which editor does the user like')
