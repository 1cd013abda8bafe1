"""A real PostgreSQL server for tests and benches: Debian's ``postgresql`` binaries, ``initdb`` into a temporary
folder, ``pg_ctl`` on a free loopback port, stopped (and the folder removed) afterwards.

As root (CI), the server runs as the ``postgres`` user, since PostgreSQL refuses to run as root. Where no binaries
are found, :func:`unavailable` says why, and tests skip with that reason.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

__all__ = ['Server', 'unavailable']


def _bindir() -> Path | None:
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'), key=lambda p: int(Path(p).parts[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which('initdb')
    return Path(initdb).parent if initdb else None


def unavailable() -> str | None:
    """Why no server can be started here, or None."""
    if _bindir() is None:
        return 'PostgreSQL server binaries not found (apt-get install postgresql)'
    if os.geteuid() == 0 and shutil.which('runuser') is None:
        return 'running as root without runuser: cannot start PostgreSQL as an unprivileged user'
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'memsift[postgres]')"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Server:
    """A running server; ``dsn(db)`` connects to one of its databases as the superuser ``memsift`` (trust auth on
    loopback only). ``stop(immediate=True)`` is a crash (``pg_ctl -m immediate``); ``start()`` brings it back."""

    def __init__(self, *, settings: dict[str, str] | None = None) -> None:
        bindir = _bindir()
        assert bindir is not None, unavailable()
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix='memsift-pg-'))
        self.data = self.folder / 'data'
        self.port = _free_port()
        self.settings = {'fsync': 'off', 'max_connections': '200', 'shared_buffers': '128MB', **(settings or {})}
        if os.geteuid() == 0:
            shutil.chown(self.folder, 'postgres')
            self.folder.chmod(0o700)
        self._run('initdb', '-D', str(self.data), '-U', 'memsift', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8',
                  '-N')  # fmt: skip
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if os.geteuid() == 0:
            command = ['runuser', '-u', 'postgres', '--', *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        options = ' '.join(
            [f'-p {self.port}', f'-k {self.folder}', '-c listen_addresses=127.0.0.1']
            + [f'-c {k}={v}' for k, v in self.settings.items()]
        )
        self._run('pg_ctl', '-D', str(self.data), '-o', options, '-l', str(self.folder / 'log'), '-w', 'start')

    def stop(self, *, immediate: bool = False) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run('pg_ctl', '-D', str(self.data), '-m', 'immediate' if immediate else 'fast', '-w', 'stop')

    def dsn(self, database: str = 'postgres') -> str:
        return f'postgresql://memsift@127.0.0.1:{self.port}/{database}'

    def create_database(self, name: str) -> str:
        """A new, empty database; returns its DSN."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
