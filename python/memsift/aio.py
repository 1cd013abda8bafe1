"""``memsift.aio``: the documented import path of :class:`~memsift.tools.aio.AsyncMemoryTools` (the agent tools as
coroutines), which lives with the other surfaces in :mod:`memsift.tools.aio`."""

from memsift.tools.aio import AsyncMemoryTools

__all__ = ['AsyncMemoryTools']
