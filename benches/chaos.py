"""Fault suite for memsift: SIGKILL loops and a multi-process soak. Long-running; not part of CI.

    .venv/bin/python benches/chaos.py kill [--kills 100] [--verify-every 1]
    .venv/bin/python benches/chaos.py soak [--seconds 300] [--readers 8] [--without watcher,cli]
    .venv/bin/python benches/chaos.py fuzz [--examples 300]
    .venv/bin/python benches/chaos.py all
    common options: [--seed 1] [--notes 300] [--keep]

``kill`` SIGKILLs child processes in the middle of their work, spread over three kinds (40/30/30 %):

- ``index``: a full ``MemoryIndex.sync()`` of a generated workspace (a few hundred Markdown notes: ``MEMORY.md``,
  daily ``memory/YYYY-MM-DD.md``, nested folders, English/Chinese/Japanese text), into a fresh store or, every
  other round, a ``force`` re-index of the previous store;
- ``sync``: an incremental sync after the workspace was edited (notes added, rewritten, grown, moved, deleted);
  in half the rounds a few more notes are edited while the child syncs;
- ``append``: a child appending messages to a ``SessionStore``, printing each id once ``append`` returned
  (acknowledged).

Kill delays start when the child says it began, drawn from the measured duration of that work, so most kills land
mid-sync. After each kill a new process must reopen the store (``failed_reopen`` otherwise). Every
``--verify-every`` kills, and at the end, the killed store is synced to completion and compared with a reference
index built from scratch in a new store: the ``(path, start_line, end_line, text)`` chunks must match, the BM25 index
must hold one document per chunk and a search for a note's unique word must return the same paths
(``mismatched``). Every acknowledged message must be stored and indexed exactly once (``lost``, ``duplicated``),
and a search must find the last one (``session_search_misses``). A child that fails before it is killed counts in
``child_errors``; one that finished before its kill is retried (``missed_kills``).

``soak`` runs for ``--seconds`` on one workspace and one store: a writer process (note edit + ``sync()``
in-process), ``memsift watch``, a CLI writer (note edit + ``memsift index``) and ``--readers`` reader threads over
at least two processes (``--without`` leaves writing sides out, to isolate a failure). Writers log ``(token, path,
time the sync/index returned)``; readers search every new token until found and old tokens at random. A search
started >= 1.0 s after the commit that misses the note counts the token in ``visibility_misses`` (the sample says
what the reader's own index holds); ``max_lag_ms`` is the longest a committed token was seen missing. Exceptions
count per side (``writer_errors``, ``cli_errors``, ``watcher_errors``, ``reader_errors``; watcher errors are the
errors ``memsift watch --json`` reports and its early exit: a failed sync inside it is only kept in its
``status()``). At the end every committed token is searched in a new process, first in the index as left
(``stale_at_end``, informational), then after a final sync (``lost_writes``, a failure).

``fuzz`` runs ``tests/contracts/test_fuzz.py`` with ``--examples`` hypothesis examples per property test (CI runs
60) and sums the calls it made to public entry points: each had to return or raise a documented ``MemsiftError``,
within 5 s, with output that encodes as UTF-8 JSON (``failed_tests`` counts the tests that found an input breaking
that).

Each command prints one summary line on stdout (progress and the first failure messages go to stderr) and exits
with status 1 when a failure count is above zero (130 on Ctrl-C). Everything lives in a temporary folder (removed
unless ``--keep``); children run with ``HOME`` pointing inside it, so ``~/.memsift`` is never touched.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _chaos_workers import (  # noqa: E402  (the helper module sits next to this file)
    SESSION_KEY,
    memory_config,
    note_path,
    note_text,
    read_log,
    sentence,
    unique_word,
    write_text,
)

WORKERS = str(Path(__file__).resolve().parent / '_chaos_workers.py')
MAX_SAMPLES = 10
PROBES = 5
"""Unique-word searches compared with the reference per verification."""
CHILD_TIMEOUT_S = 300.0


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- generated workspace


class Workspace:
    """A generated workspace and the unique word of each note (what verification searches for)."""

    def __init__(self, root: Path, seed: int, notes: int) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.words: dict[str, str] = {}
        self.count = 0
        self._write('MEMORY.md', 'Long-term memory')
        for _ in range(notes):
            self.add()

    def _word(self) -> str:
        self.count += 1
        return unique_word('qz', self.count)

    def _write(self, path: str, title: str) -> None:
        word = self._word()
        write_text(self.root / path, note_text(self.rng, title, word))
        self.words[path] = word

    def add(self) -> None:
        path = note_path(self.rng, self.count)
        while (self.root / path).exists():  # a name already taken (or moved away): the counter moves on
            self.count += 1
            path = note_path(self.rng, self.count)
        self._write(path, Path(path).stem)

    def modify(self, path: str) -> None:
        """Rewrite, grow, or prepend lines (which moves every chunk's line numbers)."""
        file = self.root / path
        how = self.rng.random()
        if how < 0.4:
            self._write(path, Path(path).stem)
        elif how < 0.7:
            lines = [
                f'- {self.rng.choice(("later", "update", "追记", "追加"))}: {sentence(self.rng)}'
                for _ in range(self.rng.randint(1, 30))
            ]
            with open(file, 'a', encoding='utf-8') as f:
                f.write('\n'.join(lines) + '\n')
        else:
            file.write_text('> edited\n\n' + file.read_text(encoding='utf-8'), encoding='utf-8')

    def remove(self, path: str) -> None:
        (self.root / path).unlink()
        del self.words[path]

    def move(self, path: str) -> None:
        target = f'memory/moved/{self.count}/{Path(path).name}'
        (self.root / target).parent.mkdir(parents=True, exist_ok=True)
        (self.root / path).rename(self.root / target)
        self.words[target] = self.words.pop(path)
        self.count += 1

    def edit(self, count: int) -> None:
        """``count`` random edits: adds, modifications, deletions and moves (``MEMORY.md`` is only modified)."""
        for _ in range(count):
            notes = sorted(p for p in self.words if p != 'MEMORY.md')
            roll = self.rng.random()
            if roll < 0.3 or len(notes) < 20:
                self.add()
            elif roll < 0.75:
                self.modify(self.rng.choice([*notes, 'MEMORY.md']))
            elif roll < 0.92:
                self.remove(self.rng.choice(notes))
            else:
                self.move(self.rng.choice(notes))

    def probes(self) -> list[tuple[str, str]]:
        paths = self.rng.sample(sorted(self.words), min(PROBES, len(self.words)))
        return [(path, self.words[path]) for path in paths]

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for file in sorted(self.root.rglob('*.md')):
            digest.update(str(file.relative_to(self.root)).encode() + b'\0' + file.read_bytes() + b'\0')
        return digest.hexdigest()


# ---------------------------------------------------------------- child processes


@dataclass
class Child:
    """A worker process whose stdout/stderr go to files (lines written before a SIGKILL survive it)."""

    proc: subprocess.Popen
    out: Path
    err: Path

    def lines(self) -> list[str]:
        data = self.out.read_text(encoding='utf-8', errors='replace')
        return data[: data.rfind('\n') + 1].splitlines()  # a line cut by the kill is not acknowledged

    def wait_for(self, marker: str, timeout: float) -> bool:
        """Until a stdout line equals ``marker``; ``False`` if the child exited or the time ran out first."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if marker in self.lines():
                return True
            if self.proc.poll() is not None:
                return marker in self.lines()
            time.sleep(0.005)
        return False

    def kill(self) -> bool:
        """SIGKILL the child's process group; ``True`` if it was still running."""
        alive = self.proc.poll() is None
        if alive:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        return alive

    def finish(self, timeout: float = CHILD_TIMEOUT_S) -> int | None:
        """Exit status, or ``None`` when it hung (it is killed then)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def stderr_tail(self) -> str:
        lines = self.err.read_text(encoding='utf-8', errors='replace').strip().splitlines()
        return ' | '.join(lines[-3:])[-600:] or '(no stderr)'

    def remove_files(self) -> None:
        self.out.unlink(missing_ok=True)
        self.err.unlink(missing_ok=True)


class Launcher:
    """Starts workers in their own session (Ctrl-C reaches only this process, which then cleans up)."""

    def __init__(self, tmp: Path) -> None:
        self.folder = tmp / 'children'
        self.folder.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, 'HOME': str(tmp / 'home')}  # nothing can reach the user's ~/.memsift
        (tmp / 'home').mkdir(exist_ok=True)
        self.count = 0
        self.live: list[Child] = []

    def start(self, role: str, payload: dict[str, Any]) -> Child:
        self.count += 1
        base = self.folder / f'{self.count:05d}-{role}'
        out, err = base.with_suffix('.out'), base.with_suffix('.err')
        with open(out, 'wb') as stdout, open(err, 'wb') as stderr:
            proc = subprocess.Popen(
                [sys.executable, WORKERS, role, json.dumps(payload)],
                stdout=stdout,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=self.env,
            )
        child = Child(proc, out, err)
        self.live = [c for c in self.live if c.proc.poll() is None] + [child]
        return child

    def kill_all(self) -> None:
        for child in self.live:
            child.kill()
        self.live = []


# ---------------------------------------------------------------- kill suite


def read_store(db: Path) -> tuple[Counter, set[str]]:
    """The chunks ``(path, start_line, end_line, text)`` (a multiset: duplicates show) and file paths of a store."""
    con = sqlite3.connect(db, timeout=30)
    try:
        chunks = Counter(con.execute('SELECT path, start_line, end_line, text FROM chunks'))
        files = {row[0] for row in con.execute('SELECT path FROM files')}
    finally:
        con.close()
    return chunks, files


def describe_diff(got: Counter, want: Counter) -> str:
    missing, extra = want - got, got - want
    example = next(iter(missing or extra))
    return (
        f'{sum(missing.values())} chunks missing, {sum(extra.values())} extra '
        f'(e.g. {"missing" if missing else "extra"} {example[0]} L{example[1]}-{example[2]})'
    )


@dataclass
class Timing:
    """Expected duration of one kind of work, from runs that finished; kills are drawn inside it."""

    seconds: float

    def delay(self, rng: random.Random) -> float:
        return rng.uniform(0.02, 0.95) * self.seconds

    def finished(self, seconds: float) -> None:
        self.seconds = 0.7 * self.seconds + 0.3 * seconds

    def killed(self) -> None:
        self.seconds *= 1.03  # a slow drift up, so that the window keeps covering the whole sync


@dataclass
class KillSuite:
    """The ``kill`` command: its counters, failure samples and the reference index it compares with."""

    args: argparse.Namespace
    tmp: Path
    counts: Counter = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)
    lost: set[str] = field(default_factory=set)
    duplicated: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.args.seed)
        self.launcher = Launcher(self.tmp)
        self._reference: tuple[str, Path] | None = None
        self.seconds = 0.0
        self.reference_seconds = 0.0
        """How long the last reference build took: a full sync of the workspace, which calibrates index kills."""

    def fail(self, counter: str, message: str, count: bool = True) -> None:
        """Count a failure (``count=False``: the caller counts it) and keep its message."""
        self.counts[counter] += count
        if len(self.samples) < MAX_SAMPLES:
            self.samples.append(f'{counter}: {message}')
        progress(f'  FAIL {counter}: {message}')

    def plan(self) -> dict[str, int]:
        kills = self.args.kills
        index, sync = round(kills * 0.4), round(kills * 0.3)
        return {'index': index, 'sync': sync, 'append': kills - index - sync}

    def run(self) -> None:
        started = time.monotonic()
        try:
            plan = self.plan()
            self.index_kills(plan['index'])
            self.sync_kills(plan['sync'])
            self.append_kills(plan['append'])
        finally:
            self.seconds = time.monotonic() - started  # first: a second Ctrl-C may cut the clean-up short
            self.launcher.kill_all()

    FAILURES = ('lost', 'duplicated', 'failed_reopen', 'mismatched', 'session_search_misses', 'child_errors')

    def figures(self) -> Counter:
        return self.counts + Counter(lost=len(self.lost), duplicated=len(self.duplicated))

    def summary(self) -> str:
        names = (
            'kills',
            'index_kills',
            'sync_kills',
            'append_kills',
            *self.FAILURES[:4],
            'missed_kills',
            *self.FAILURES[4:],
            'verifications',
            'acknowledged',
        )
        figures = self.figures()
        return 'kill: ' + ' '.join(f'{name}={figures[name]}' for name in names) + f' seconds={self.seconds:.1f}'

    def failed(self) -> bool:
        figures = self.figures()
        return any(figures[name] for name in self.FAILURES)

    # ------------------------------------------------------------ one kill

    def kill_during(self, child: Child, delay: float, midway: Callable[[], None] | None = None) -> str:
        """``killed``, ``exited`` (finished or failed before the kill) or ``stuck`` (never said ``start``)."""
        if not child.wait_for('start', CHILD_TIMEOUT_S):
            return 'exited' if not child.kill() else 'stuck'
        if midway is not None:
            time.sleep(delay / 2)
            midway()
            time.sleep(delay / 2)
        else:
            time.sleep(delay)
        return 'killed' if child.kill() else 'exited'

    def settle(self, kind: str, child: Child, outcome: str, timing: Timing | None) -> bool:
        """Count the outcome of one attempt (and learn from it how long the work takes); ``True`` for a kill."""
        if outcome == 'killed':
            self.counts['kills'] += 1
            self.counts[f'{kind}_kills'] += 1
            if timing is not None:
                timing.killed()
            return True
        done = [line for line in child.lines() if line.startswith('done ')]
        if outcome == 'exited' and child.proc.returncode == 0:
            self.counts['missed_kills'] += 1
            if done and timing is not None:
                timing.finished(float(done[-1].split()[1]))
        else:
            self.fail(
                'child_errors',
                f'{kind} child {outcome} (status {child.proc.returncode}) before the kill: {child.stderr_tail()}',
            )
        return False

    def note(self, kind: str, outcome: str, delay: float, seen: str = '') -> None:
        total = self.counts['kills']
        progress(f'[{total}/{self.args.kills}] {kind}: {outcome} after {delay * 1000:.0f} ms{seen}')

    # ------------------------------------------------------------ memory index kills

    def run_sync(self, ws: Workspace, store: Path, force: bool = False) -> float | None:
        """A sync run to completion in a child; its duration, or ``None`` (counted in ``child_errors``)."""
        child = self.launcher.start('sync', {'ws': str(ws.root), 'store': str(store), 'force': force})
        status = child.finish()
        done = [line for line in child.lines() if line.startswith('done ')]
        if status != 0 or not done:
            self.fail('child_errors', f'sync child exited {status}: {child.stderr_tail()}')
            return None
        child.remove_files()
        return float(done[-1].split()[1])

    def reference(self, ws: Workspace) -> Path | None:
        """A store built from scratch, in a new folder, from the workspace as it is (reused while it is unchanged)."""
        fingerprint = ws.fingerprint()
        if self._reference is not None and self._reference[0] == fingerprint:
            return self._reference[1]
        if self._reference is not None:
            shutil.rmtree(self._reference[1], ignore_errors=True)
        folder = self.tmp / 'reference' / fingerprint[:12]
        self._reference = None
        seconds = self.run_sync(ws, folder)
        if seconds is None:
            return None
        self._reference, self.reference_seconds = (fingerprint, folder), seconds
        return folder

    def check_reopen(self, ws: Workspace, store: Path) -> str:
        """Open the killed store in a new process; returns what it found there, for the progress line."""
        probe = ws.probes()[0][1]
        child = self.launcher.start('reopen', {'ws': str(ws.root), 'store': str(store), 'probe': probe})
        status = child.finish(60)
        lines = child.lines()
        if status != 0 or not lines:
            self.fail('failed_reopen', f'{store.name}: status {status}: {child.stderr_tail()}')
            return ''
        child.remove_files()
        found = json.loads(lines[-1])
        return f'; reopened: {found["files"]}/{len(ws.words)} files, {found["chunks"]} chunks, {found["docs"]} docs'

    def searched_paths(self, store: Path, ws: Workspace, probes: list[tuple[str, str]]) -> tuple[list[set[str]], int]:
        """Sync ``store`` to completion in this process, then the paths found per probe word and the BM25 doc count."""
        import memsift

        with memsift.MemoryIndex(ws.root, memory_config(store)) as index:
            index.sync()
            found = [
                {hit.path for hit in index.search(word, max_results=10, min_score=0.0).results} for _, word in probes
            ]
            return found, index.status()['fts']['docs']

    def verify_memory(self, ws: Workspace, store: Path) -> None:
        """Complete the killed store, then compare it with a fresh reference (counts ``mismatched`` once)."""
        self.counts['verifications'] += 1
        reference = self.reference(ws)
        if reference is None:
            return
        probes = ws.probes()
        try:
            found, docs = self.searched_paths(store, ws, probes)
            want_found, _ = self.searched_paths(reference, ws, probes)
        except Exception as exc:
            self.fail('mismatched', f'final sync of {store} failed: {type(exc).__name__}: {exc}')
            return
        problems = self.compare(store, reference, docs)
        for (path, word), got, want in zip(probes, found, want_found):
            if got != want:
                problems.append(f'search {word} ({path}): {sorted(got)} vs reference {sorted(want)}')
            elif path not in want:
                progress(f'  note: reference search for {word} did not return {path}: {sorted(want)}')
        if problems:
            self.fail('mismatched', '; '.join(problems))

    def compare(self, store: Path, reference: Path, docs: int) -> list[str]:
        chunks, files = read_store(store / 'main.sqlite')
        want_chunks, want_files = read_store(reference / 'main.sqlite')
        problems = []
        if files != want_files:
            problems.append(
                f'files: {len(files - want_files)} extra, {len(want_files - files)} missing '
                f'(e.g. {sorted((files - want_files) or (want_files - files))[0]})'
            )
        if chunks != want_chunks:
            problems.append(describe_diff(chunks, want_chunks))
        if docs != sum(chunks.values()):
            problems.append(f'BM25 holds {docs} docs for {sum(chunks.values())} chunks')
        return problems

    def after_memory_kill(self, ws: Workspace, store: Path, last: bool = False) -> str:
        seen = self.check_reopen(ws, store)
        if last or self.counts['kills'] % self.args.verify_every == 0:
            self.verify_memory(ws, store)
        return seen

    def sync_round(
        self,
        kind: str,
        ws: Workspace,
        store: Path,
        timing: Timing,
        last: bool,
        force: bool = False,
        midway: Callable[[], None] | None = None,
    ) -> bool:
        """One sync child killed mid-way (``midway`` edits the workspace half-way to the kill), then the checks;
        ``True`` when the kill landed (``last``: the final one of its kind, always verified)."""
        child = self.launcher.start('sync', {'ws': str(ws.root), 'store': str(store), 'force': force})
        delay = timing.delay(self.rng)
        outcome = self.kill_during(child, delay, midway)
        killed = self.settle(kind, child, outcome, timing)
        seen = self.after_memory_kill(ws, store, last) if killed else ''
        label = kind + (' (force)' if force else '') + (' (edits during it)' if midway else '')
        self.note(label, outcome, delay, seen)
        child.remove_files()
        return killed

    def index_kills(self, wanted: int) -> None:
        """Kill full syncs: into a fresh store, or (every other round) a force re-index of the last one."""
        if not wanted:
            return
        ws = Workspace(self.tmp / 'ws-index', self.args.seed, self.args.notes)
        timing = Timing(self.reference_seconds if self.reference(ws) else 1.0)
        progress(f'index: {len(ws.words)} notes, a full sync takes {timing.seconds:.2f} s')
        store = self.tmp / 'index' / 'store-0'
        kills = attempts = 0
        while kills < wanted and attempts < 3 * wanted + 10:
            attempts += 1
            force = attempts % 2 == 0  # even rounds re-index the previous store, odd ones start afresh
            if not force:
                shutil.rmtree(store, ignore_errors=True)
                store = self.tmp / 'index' / f'store-{attempts}'
            kills += self.sync_round('index', ws, store, timing, last=kills + 1 == wanted, force=force)

    def sync_kills(self, wanted: int) -> None:
        """Kill incremental syncs after edits (and, half the time, with edits landing during the sync)."""
        if not wanted:
            return
        ws = Workspace(self.tmp / 'ws-sync', self.args.seed + 1, self.args.notes)
        store = self.tmp / 'sync-store'
        self.run_sync(ws, store)
        ws.edit(10)
        timing = Timing(self.run_sync(ws, store) or 0.2)
        progress(f'sync: {len(ws.words)} notes, an incremental sync of 10 edits takes {timing.seconds:.2f} s')
        kills = attempts = 0
        while kills < wanted and attempts < 4 * wanted + 10:
            attempts += 1
            ws.edit(self.rng.randint(3, 25))
            midway = (lambda: ws.edit(self.rng.randint(1, 5))) if self.rng.random() < 0.5 else None
            kills += self.sync_round('sync', ws, store, timing, last=kills + 1 == wanted, midway=midway)

    # ------------------------------------------------------------ session append kills

    def append_kills(self, wanted: int) -> None:
        """Kill a child appending messages; every acknowledged message must survive exactly once."""
        db = self.tmp / 'sessions' / 'sessions.sqlite'
        acked: dict[str, str] = {}
        last: tuple[str, str] | None = None
        kills = attempts = 0
        while kills < wanted and attempts < 2 * wanted + 10:
            attempts += 1
            child = self.launcher.start('append', {'path': str(db), 'run': attempts, 'seed': self.args.seed})
            delay = self.rng.uniform(0.05, 1.0)  # appends take about a millisecond: any moment is mid-append
            outcome = self.kill_during(child, delay)
            new = [(parts[1], parts[2]) for parts in map(str.split, child.lines()) if parts[0] == 'ack']
            acked.update(new)
            last = new[-1] if new else last
            self.counts['acknowledged'] += len(new)
            kills += self.settle('append', child, outcome, None)  # appends never finish: no timing to learn
            self.note('append', outcome, delay, f'; {len(new)} acknowledged')
            child.remove_files()
            self.verify_sessions(db, acked, last)

    def verify_sessions(self, db: Path, acked: dict[str, str], last: tuple[str, str] | None) -> None:
        """Reopen in a new process and search the last acknowledged message; then count every acknowledged one."""
        last_id, last_word = last or (None, None)
        child = self.launcher.start('session-reopen', {'path': str(db), 'word': last_word, 'id': last_id})
        status = child.finish(60)
        lines = child.lines()
        if status != 0 or not lines:
            self.fail('failed_reopen', f'session store: status {status}: {child.stderr_tail()}')
        elif last is not None and not json.loads(lines[-1])['found']:
            self.fail('session_search_misses', f'search {last_word} did not return {last_id}: {lines[-1]}')
        child.remove_files()
        self.count_stored(db, acked)

    def count_stored(self, db: Path, acked: dict[str, str]) -> None:
        """Each acknowledged id: one ``events`` row and one full-text row (a new loss or duplicate is reported once)."""
        con = sqlite3.connect(db, timeout=30)
        try:
            events = Counter(
                dict(
                    con.execute(
                        'SELECT event_id, COUNT(*) FROM events WHERE session_key = ? GROUP BY event_id', (SESSION_KEY,)
                    )
                )
            )
            indexed = Counter(
                dict(
                    con.execute(
                        'SELECT event_id, COUNT(*) FROM message_fts WHERE session_key = ? GROUP BY event_id',
                        (SESSION_KEY,),
                    )
                )
            )
        finally:
            con.close()
        for event_id in acked:
            rows = f'{event_id}: {events[event_id]} events rows, {indexed[event_id]} fts rows'
            if (events[event_id] == 0 or indexed[event_id] == 0) and event_id not in self.lost:
                self.lost.add(event_id)
                self.fail('lost', rows, count=False)
            if (events[event_id] > 1 or indexed[event_id] > 1) and event_id not in self.duplicated:
                self.duplicated.add(event_id)
                self.fail('duplicated', rows, count=False)


# ---------------------------------------------------------------- soak


SIDES = ('writer', 'cli', 'watcher', 'reader')


@dataclass
class Soak:
    """The ``soak`` command: starts the sides, waits out the deadline, stops them and adds up their figures."""

    args: argparse.Namespace
    tmp: Path

    def __post_init__(self) -> None:
        self.launcher = Launcher(self.tmp)
        self.ws = self.tmp / 'ws'
        self.config = self.tmp / 'config.json'
        self.results = self.tmp / 'results'
        self.log = self.tmp / 'commits.jsonl'
        self.children: dict[str, Child] = {}
        self.interrupted = False
        self.started = 0.0
        self.end: Counter = Counter()
        self.end_samples: list[str] = []
        self.last_report = time.monotonic()

    def prepare(self) -> None:
        """Workspace, config file and a first full index, so that readers do not all start by bootstrapping it."""
        import memsift

        Workspace(self.ws, self.args.seed, max(50, self.args.notes // 2))
        self.config.write_text(json.dumps(memory_config(self.tmp / 'store')), encoding='utf-8')
        self.results.mkdir()
        with memsift.MemoryIndex(self.ws, str(self.config)) as index:
            index.sync()

    def start(self, deadline: float) -> None:
        common = {'ws': str(self.ws), 'config': str(self.config), 'log': str(self.log), 'deadline': deadline}
        seed = self.args.seed
        roles = {
            'watcher': ('watch-guard', {}),
            'writer': ('soak-writer', {'prefix': 'qw', 'seed': seed}),
            'cli': ('soak-cli', {'prefix': 'qc', 'seed': seed + 1, 'pause': 0.1}),
        }
        for side in self.args.without:  # to isolate which side a failure needs
            del roles[side]
        readers = max(1, self.args.readers)
        processes = min(readers, max(2, math.ceil(readers / 4)))
        for n in range(processes):
            threads = readers // processes + (n < readers % processes)
            roles[f'reader{n}'] = ('soak-reader', {'threads': threads, 'seed': seed + 10 + n, 'pause': 0.01})
        for name, (role, extra) in roles.items():
            payload = {**common, **extra, 'result': str(self.results / f'{name}.json')}
            self.children[name] = self.launcher.start(role, payload)

    def wait(self, deadline: float) -> None:
        """Until every child stopped by itself (grace: 60 s after the deadline), then SIGTERM, then SIGKILL."""
        while time.time() < deadline + 60 and any(c.proc.poll() is None for c in self.children.values()):
            time.sleep(0.5)
            if time.time() < deadline:
                self.report_progress(deadline)
        self.stop(grace=15)

    def report_progress(self, deadline: float) -> None:
        now = time.monotonic()
        if now - self.last_report >= 30:
            self.last_report = now
            commits, _ = read_log(str(self.log), 0)
            progress(f'soak: {len(commits)} commits, {deadline - time.time():.0f} s left')

    def stop(self, grace: float) -> None:
        """SIGTERM (each child saves its figures; the watch guard stops ``memsift watch``), SIGKILL if it lingers."""
        for child in self.children.values():
            if child.proc.poll() is None:
                child.proc.terminate()
        end = time.time() + grace
        for child in self.children.values():
            try:
                child.proc.wait(max(0.1, end - time.time()))
            except subprocess.TimeoutExpired:
                pass
        self.launcher.kill_all()

    def run(self) -> tuple[str, bool]:
        started = time.monotonic()
        self.prepare()
        self.started = time.time()
        deadline = self.started + self.args.seconds
        self.start(deadline)
        try:
            self.wait(deadline)
        except KeyboardInterrupt:
            self.interrupted = True
            progress('soak: interrupted, stopping the children')
            self.stop(grace=15)
        self.check_end()
        return self.summarize(time.monotonic() - started)

    def check_end(self) -> None:
        """Every committed token, searched in the index as the soak left it (``stale_at_end``: the store or BM25
        behind), then after a final sync (``lost_writes``: the text is on disk, so it must be found now)."""
        import memsift

        commits, _ = read_log(str(self.log), 0)
        try:
            with memsift.MemoryIndex(self.ws, str(self.config)) as index:
                for counter in ('stale_at_end', 'lost_writes'):
                    if counter == 'lost_writes':
                        index.sync()
                    for commit in commits:
                        hits = index.search(commit['token'], max_results=10, min_score=0.0, keyword_only=True)
                        if commit['path'] not in {hit.path for hit in hits.results}:
                            self.end[counter] += 1
                            self.end_samples.append(f'{counter}: {commit["token"]} ({commit["path"]})')
        except Exception as exc:
            self.end['lost_writes'] += 1
            self.end_samples.append(f'final check failed: {type(exc).__name__}: {exc}')

    def side_figures(self) -> tuple[dict[str, Counter], list[str], set[str], float]:
        """Per side: summed counters; plus error samples, missed tokens (all readers) and the largest lag."""
        sides: dict[str, Counter] = {side: Counter() for side in SIDES}
        samples: list[str] = []
        missed: set[str] = set()
        lag, slowest = 0.0, None
        for name, child in self.children.items():
            side = 'reader' if name.startswith('reader') else name
            file = self.results / f'{name}.json'
            if not file.exists():
                sides[side]['errors'] += 1
                samples.append(f'{name}: no figures (exit status {child.proc.returncode}): {child.stderr_tail()}')
                continue
            data = json.loads(file.read_text(encoding='utf-8'))
            if data['counts'].get('max_lag_ms', 0.0) > lag:
                lag, slowest = data['counts']['max_lag_ms'], data['slowest']
            data['counts'].pop('max_lag_ms', None)
            sides[side].update(data['counts'])
            samples += [f'{name}: {s}' for s in data['samples']]
            missed.update(data.get('missed', []))
        if slowest is not None:
            at = slowest['t'] - self.started
            samples.insert(
                0,
                f'slowest: {slowest["token"]} ({slowest["side"]}, {slowest["path"]}), committed '
                f'{at:.1f} s into the soak, missing {slowest["lag_ms"]} ms later',
            )
        return sides, samples, missed, lag

    def summarize(self, seconds: float) -> tuple[str, bool]:
        sides, samples, missed, lag = self.side_figures()
        samples = self.end_samples[:3] + samples
        for sample in samples[:MAX_SAMPLES]:
            progress(f'  {sample}')
        errors = {side: int(sides[side]['errors']) for side in SIDES}
        line = (
            f'soak: seconds={seconds:.1f} readers={self.args.readers} writes={int(sides["writer"]["writes"])} '
            f'cli_writes={int(sides["cli"]["writes"])} watcher_syncs={int(sides["watcher"]["syncs"])} '
            f'searches={int(sides["reader"]["searches"])} errors={sum(errors.values())} '
            + ' '.join(f'{side}_errors={n}' for side, n in errors.items())
            + f' visibility_misses={len(missed)} max_lag_ms={lag:.0f} stale_at_end={self.end["stale_at_end"]}'
            + f' lost_writes={self.end["lost_writes"]}'
        )
        return line, bool(sum(errors.values()) or missed or self.end['lost_writes'])


# ---------------------------------------------------------------- entry point


def run_kill(args: argparse.Namespace, tmp: Path) -> bool:
    """The kill suite; prints its summary line (also when interrupted) and returns whether anything failed."""
    suite = KillSuite(args, tmp)
    try:
        suite.run()
    except KeyboardInterrupt:
        progress('kill: interrupted')
        raise
    finally:
        for sample in suite.samples:
            progress(f'  {sample}')
        print(suite.summary(), flush=True)
    return suite.failed()


def run_soak(args: argparse.Namespace, tmp: Path) -> bool:
    """The soak; prints its summary line (also when interrupted) and returns whether anything failed."""
    soak = Soak(args, tmp)
    line, failed = soak.run()
    print(line, flush=True)
    if soak.interrupted:
        raise KeyboardInterrupt
    return failed


def run_fuzz(args: argparse.Namespace, tmp: Path) -> bool:
    """The property tests at ``--examples`` per test; prints calls tried and failed tests, returns whether any."""
    tmp.mkdir(parents=True, exist_ok=True)
    counts = tmp / 'calls.jsonl'
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            '-m',
            'pytest',
            'tests/contracts/test_fuzz.py',
            '-q',
            '-p',
            'no:cacheprovider',
            '-o',
            'timeout=3600',
        ],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        errors='backslashreplace',
        env={**os.environ, 'MEMSIFT_FUZZ_EXAMPLES': str(args.examples), 'MEMSIFT_FUZZ_COUNT': str(counts)},
    )
    calls: Counter[str] = Counter()
    for line in counts.read_text(encoding='utf-8').splitlines() if counts.exists() else []:
        calls.update(json.loads(line))
    tally = {word: int(number) for number, word in re.findall(r'(\d+) (passed|failed|error)', done.stdout)}
    if done.returncode != 0:
        progress('\n'.join(done.stdout.splitlines()[-40:]))
    print(
        f'fuzz: examples_per_test={args.examples} calls={sum(calls.values())} entry_points={len(calls)} '
        f'passed_tests={tally.get("passed", 0)} failed_tests={tally.get("failed", 0) + tally.get("error", 0)} '
        f'seconds={time.monotonic() - started:.1f}',
        flush=True,
    )
    return done.returncode != 0


def sides(text: str) -> list[str]:
    """``--without``: a comma-separated subset of the writing sides."""
    names = [name for name in text.split(',') if name]
    unknown = set(names) - {'writer', 'cli', 'watcher'}
    if unknown:
        raise argparse.ArgumentTypeError(f'unknown side(s): {", ".join(sorted(unknown))}')
    return names


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('--seed', type=int, default=1, help='seed of every random choice (default 1)')
    common.add_argument('--notes', type=int, default=300, help='notes in a generated workspace (default 300)')
    common.add_argument('--keep', action='store_true', help='keep the temporary folder (its path goes to stderr)')
    kill = argparse.ArgumentParser(add_help=False)
    kill.add_argument('--kills', type=int, default=100, help='SIGKILLs in all (default 100)')
    kill.add_argument(
        '--verify-every',
        type=int,
        default=1,
        metavar='N',
        help='compare with a fresh reference every N kills (and at the end; default 1)',
    )
    soak = argparse.ArgumentParser(add_help=False)
    soak.add_argument('--seconds', type=float, default=300, help='soak duration (default 300)')
    soak.add_argument('--readers', type=int, default=8, help='reader threads (default 8, over >= 2 processes)')
    soak.add_argument(
        '--without',
        type=sides,
        default=[],
        metavar='SIDES',
        help='leave out some of: writer,cli,watcher (comma-separated; to isolate a failure)',
    )
    fuzz = argparse.ArgumentParser(add_help=False)
    fuzz.add_argument('--examples', type=int, default=300, help='hypothesis examples per property test (default 300)')
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    commands = parser.add_subparsers(dest='command', required=True)
    commands.add_parser('kill', parents=[common, kill], help='SIGKILL loops (index, sync, append)')
    commands.add_parser('soak', parents=[common, soak], help='concurrent writers, watcher, CLI and readers')
    commands.add_parser(
        'fuzz', parents=[common, fuzz], help='tests/contracts/test_fuzz.py with many examples, calls counted'
    )
    commands.add_parser('all', parents=[common, kill, soak, fuzz], help='kill, soak, then fuzz')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.verify_every = max(1, getattr(args, 'verify_every', 1))
    tmp = Path(tempfile.mkdtemp(prefix='memsift-chaos-'))
    failed = False
    try:
        if args.command in ('kill', 'all'):
            failed |= run_kill(args, tmp / 'kill')
        if args.command in ('soak', 'all'):
            failed |= run_soak(args, tmp / 'soak')
        if args.command in ('fuzz', 'all'):
            failed |= run_fuzz(args, tmp / 'fuzz')
    except KeyboardInterrupt:
        return 130
    finally:
        if args.keep:
            progress(f'kept {tmp}')
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
