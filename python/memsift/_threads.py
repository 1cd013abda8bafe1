"""Background threads that give way to searches."""

from __future__ import annotations

import contextlib
import os
import sys
import threading

BACKGROUND_NICE = 10
"""The CPU priority of background syncs and polls (a check over 584k files takes seconds of a core that searches
beside it need)."""


def lower_thread_priority() -> None:
    """Let searches come first: the calling thread runs at nice :data:`BACKGROUND_NICE`. Linux only, where a thread
    has its own nice value; elsewhere, or where it is refused, nothing changes."""
    if sys.platform.startswith('linux'):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
