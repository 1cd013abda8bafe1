"""The OpenClaw memory plugin memsift ships (plain JS); ``openclaw plugins install`` takes :func:`plugin_dir`."""

from __future__ import annotations

from pathlib import Path

__all__ = ['plugin_dir']


def plugin_dir() -> Path:
    """The folder holding the plugin (``package.json``, ``openclaw.plugin.json``, ``index.js``, ``README.md``)."""
    return Path(__file__).resolve().parent
