"""A real PostgreSQL server for tests and benches: Debian's ``postgresql`` binaries, ``initdb`` into a temporary
folder, ``pg_ctl`` on a free loopback port, stopped (and the folder removed) afterwards.

As root (CI), the server runs as the ``postgres`` user, since PostgreSQL refuses to run as root. Where no binaries
are found, :func:`unavailable` says why; where the server does not start, :class:`Server` raises :class:`ServerError`
with the tool's own message. Tests skip with that reason, or fail under ``CI=true`` (``tests/conftest.py``).

``MEMSIFT_PG_BINDIR`` names the folder holding ``initdb`` and ``pg_ctl`` instead of the search below (a build of
one's own; pointing it at an empty folder shows what a machine without PostgreSQL does).
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

__all__ = ['Server', 'ServerError', 'unavailable']

FIX = (
    "install Debian's postgresql package (apt-get install postgresql), or set MEMSIFT_PG_BINDIR to a folder with initdb"
)
"""How to get a server, for the messages."""


class ServerError(RuntimeError):
    """The server could not be set up, started or stopped: the command, and what it printed."""


def _bindir() -> Path | None:
    chosen = os.environ.get('MEMSIFT_PG_BINDIR')
    if chosen:
        return Path(chosen) if (Path(chosen) / 'initdb').is_file() else None
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'), key=lambda p: int(Path(p).parts[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which('initdb')
    return Path(initdb).parent if initdb else None


def unavailable() -> str | None:
    """Why no server can be started here, or None."""
    if _bindir() is None:
        chosen = os.environ.get('MEMSIFT_PG_BINDIR')
        where = f'MEMSIFT_PG_BINDIR={chosen}' if chosen else '/usr/lib/postgresql/*/bin or on PATH'
        return f'PostgreSQL server binaries not found (no initdb in {where}): {FIX}'
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
    loopback only). ``stop(immediate=True)`` is a crash (``pg_ctl -m immediate``); ``start()`` brings it back.

    ``primary``: a streaming replica (hot standby) of that running server instead of a new cluster: its data copied
    by ``pg_basebackup -R -X stream`` (initdb's trust rule for replication on loopback lets it connect), then started
    on a port of its own; it replays the primary's writes, refuses its own, and reconnects when the primary
    restarts (every 200 ms here: ``wal_retrieve_retry_interval``). See :meth:`standby`."""

    def __init__(self, *, settings: dict[str, str] | None = None, primary: Server | None = None) -> None:
        bindir = _bindir()
        if bindir is None:
            raise ServerError(unavailable())
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix='memsift-pg-'))
        self.data = self.folder / 'data'
        self.port = _free_port()
        self.settings = {'fsync': 'off', 'max_connections': '200', 'shared_buffers': '128MB', **(settings or {})}
        if os.geteuid() == 0:
            shutil.chown(self.folder, 'postgres')
            self.folder.chmod(0o700)
        try:
            if primary is None:
                self._run('initdb', '-D', str(self.data), '-U', 'memsift', '--auth=trust', '-E', 'UTF8',
                          '--locale=C.UTF-8', '-N')  # fmt: skip
            else:
                self.settings.setdefault('wal_retrieve_retry_interval', '200ms')
                self._run('pg_basebackup', '-D', str(self.data), '-R', '-X', 'stream', '-c', 'fast',
                          '-h', '127.0.0.1', '-p', str(primary.port), '-U', 'memsift')  # fmt: skip
            self.start()
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if os.geteuid() == 0:
            command = ['runuser', '-u', 'postgres', '--', *command]
        try:
            subprocess.run(command, check=True, capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            said = b''.join(getattr(exc, name, None) or b'' for name in ('stdout', 'stderr'))
            said_text = said.decode(errors='replace').strip()[-1500:]
            log = self.folder / 'log'
            if tool == 'pg_ctl' and log.is_file():
                said_text += '\nserver log: ' + log.read_text(errors='replace').strip()[-1500:]
            how = f'exited with status {exc.returncode}' if isinstance(exc, subprocess.CalledProcessError) else exc
            raise ServerError(f'`{" ".join(command)}` failed ({how}): {said_text or "no output"}') from exc

    def start(self) -> None:
        options = ' '.join(
            [f'-p {self.port}', f'-k {self.folder}', '-c listen_addresses=127.0.0.1']
            + [f'-c {k}={v}' for k, v in self.settings.items()]
        )
        self._run('pg_ctl', '-D', str(self.data), '-o', options, '-l', str(self.folder / 'log'), '-w', 'start')

    def stop(self, *, immediate: bool = False) -> None:
        with contextlib.suppress(ServerError):
            self._run('pg_ctl', '-D', str(self.data), '-m', 'immediate' if immediate else 'fast', '-w', 'stop')

    def standby(self, *, settings: dict[str, str] | None = None) -> Server:
        """A new streaming replica of this server (see the class)."""
        return Server(settings={**self.settings, **(settings or {})}, primary=self)

    def promote(self) -> None:
        """Make this standby a primary of its own, as a failover does (``pg_ctl promote``)."""
        self._run('pg_ctl', '-D', str(self.data), '-w', 'promote')

    def wait_replayed(self, primary: Server, timeout: float = 30.0) -> None:
        """Wait until this standby has replayed everything ``primary`` had written when called."""
        import time

        import psycopg

        with psycopg.connect(primary.dsn(), autocommit=True) as conn:
            [(lsn,)] = conn.execute('SELECT pg_current_wal_lsn()').fetchall()
        deadline = time.monotonic() + timeout
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            while conn.execute('SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn', (lsn,)).fetchall() != [(True,)]:
                if time.monotonic() > deadline:
                    raise ServerError(f'the standby on port {self.port} did not replay {lsn} in {timeout:.0f} s')
                time.sleep(0.02)

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
