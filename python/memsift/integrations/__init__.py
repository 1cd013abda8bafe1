"""memsift inside agent frameworks: each module adapts memory search to one framework's interface.

- :mod:`memsift.integrations.langchain`: ``MemsiftRetriever``, a LangChain retriever (``memsift[langchain]``).
- :mod:`memsift.integrations.llamaindex`: ``MemsiftRetriever``, a LlamaIndex retriever (``memsift[llamaindex]``).
- :mod:`memsift.integrations.agents`: :func:`~memsift.integrations.agents.memory_tool_functions`, the four memory
  tools as plain typed functions bound to one calling session, for any framework that turns functions into tools
  (the OpenAI Agents SDK's ``function_tool``, LangChain's ``tool``, ...; ``memsift[agents]`` for the former).

Nothing here is imported by ``import memsift``: a framework loads only when its module is imported, so users of
one framework never pay for (or need) the others.
"""
