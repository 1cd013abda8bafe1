"""LangChain's own standard retriever tests (langchain-tests) run against MemsiftRetriever."""

import pytest

pytest.importorskip('langchain_tests', reason="LangChain's standard tests are optional: pip install langchain-tests")

from conftest import memory_config, write  # noqa: E402
from langchain_tests.integration_tests import RetrieversIntegrationTests  # noqa: E402

import memsift  # noqa: E402
from memsift.integrations.langchain import MemsiftRetriever  # noqa: E402

# The suite has an async test without a marker (LangChain runs it with pytest-asyncio's auto mode, which this
# project turns off): anyio's plugin runs it; the sync tests ignore the mark.
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return 'asyncio'


class TestMemsiftRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def memory(self, tmp_path):
        root = tmp_path / 'ws'
        for day in range(1, 6):  # one chunk per note, so a query can ask for 1 or 3 of several
            write(root / 'memory' / f'2026-11-0{day}.md', f'Day {day}: the walrus protocol rotated backup tapes.\n')
        with memsift.MemoryIndex(root, memory_config(tmp_path, provider='none')) as index:
            index.sync()
            self.index = index
            yield

    @property
    def retriever_constructor(self) -> type[MemsiftRetriever]:
        return MemsiftRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {'index': self.index, 'min_score': 0}

    @property
    def retriever_query_example(self) -> str:
        return 'walrus backup tapes'

    @property
    def num_results_arg_name(self) -> str:
        return 'max_results'
