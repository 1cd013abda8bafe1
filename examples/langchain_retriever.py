"""memsift as a LangChain retriever: index the sample workspace (keyword search, no model) and retrieve from it.

    pip install 'memsift[langchain]'
    python examples/langchain_retriever.py "ERR_CONN_RESET backoff"

Each ``Document`` holds a whole chunk of a memory file; its metadata says where it came from (``citation``) and how
well it matched (``score``). The retriever is a Runnable, so it drops into any chain (``retriever | prompt | llm``).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import textwrap
from pathlib import Path

from memsift import MemoryIndex
from memsift.integrations.langchain import MemsiftRetriever

WORKSPACE = Path(__file__).resolve().parent / 'workspace'


def main(query: str) -> None:
    with tempfile.TemporaryDirectory() as state:  # the index lives here, never in the workspace
        config = {
            'agents': {'defaults': {'memorySearch': {'provider': 'none', 'store': {'path': f'{state}/index.sqlite'}}}}
        }
        with MemoryIndex(WORKSPACE, config) as index:
            index.sync()  # a search answers from what is indexed
            retriever = MemsiftRetriever(index=index, max_results=3, min_score=0.1)
            print(f'$ retriever.invoke({query!r})')
            for doc in retriever.invoke(query):
                print(f'{doc.metadata["citation"]}  (score {doc.metadata["score"]:.2f})')
                print(textwrap.indent(doc.page_content.strip(), '    '))
            # The async path runs the search in a worker thread: the event loop stays free meanwhile.
            [doc] = asyncio.run(retriever.ainvoke('会議 火曜日', max_results=1))
            print("\n$ await retriever.ainvoke('会議 火曜日', max_results=1)")
            line = next(line for line in doc.page_content.splitlines() if '会議' in line)
            print(f'{doc.metadata["citation"]}: {line.strip()}')


if __name__ == '__main__':
    main(' '.join(sys.argv[1:]) or 'ERR_CONN_RESET backoff')
