"""Child processes and shared helpers of ``benches/chaos.py`` (not a bench on its own).

Each role runs in its own process so that ``chaos.py`` can SIGKILL it, or run several at once against one store:

    python benches/_chaos_workers.py ROLE 'JSON ARGUMENTS'

Roles:
    sync            open a MemoryIndex, print ``start``, sync (``force`` optional), print ``done SECONDS``
    reopen          open a MemoryIndex, ``status()``, a keyword-only search; print a JSON line
    append          append messages to a SessionStore forever, printing ``ack ID WORD`` after each append returns
    session-reopen  open a SessionStore, search the last acknowledged word, read the history; print a JSON line
    soak-writer     edit notes and ``MemoryIndex.sync()`` in-process until the deadline, logging each commit
    soak-cli        edit notes and run ``memsift index`` until the deadline, logging each commit
    soak-reader     reader threads searching committed tokens until the deadline
    watch-guard     run ``memsift watch`` until the deadline, counting its syncs and error output

Soak roles write their figures as JSON to ``args['result']`` when they stop (deadline, SIGTERM or SIGINT).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

SESSION_KEY = 'agent:main:main'
MAX_SAMPLES = 8
"""Error messages kept per process: enough to diagnose, not enough to flood the report."""
VISIBLE_AFTER_S = 1.0
"""A search that starts this long after a write's sync/index returned must find the write."""

# Unique words are built from consonants other than s, l and y: with no vowel the English stemmer has no region to
# cut a suffix from, so a word is indexed, queried and compared verbatim and two words never stem to the same term.
_ALPHABET = 'bcdfghjkmpqrtvwxz'
_EN = [
    'deploy',
    'backup',
    'rollback',
    'cluster',
    'latency',
    'budget',
    'roadmap',
    'invoice',
    'meeting',
    'retro',
    'migration',
    'schema',
    'cache',
    'token',
    'review',
    'release',
    'incident',
    'pager',
    'alert',
    'dashboard',
    'tenant',
    'quota',
    'replica',
    'shard',
    'index',
    'query',
    'vector',
    'embedding',
    'prompt',
    'agent',
    'memory',
    'note',
    'garden',
    'travel',
    'recipe',
    'doctor',
    'dentist',
    'birthday',
    'gift',
    'laptop',
    'router',
    'firmware',
    'kernel',
    'editor',
    'keyboard',
    'monitor',
    'coffee',
    'tea',
    'invoice',
    'contract',
    'lawyer',
    'landlord',
    'plumber',
]
_VERBS = [
    'fixed',
    'moved',
    'checked',
    'planned',
    'reviewed',
    'booked',
    'cancelled',
    'renamed',
    'upgraded',
    'wrote',
    'called',
    'paid',
    'merged',
]
_ZH = (
    '把数据库迁移到新集群',
    '明天上午十点开会讨论预算',
    '视频下载工具的配置：默认画质 1080P',
    '记得给妈妈打电话',
    '服务器的备份策略需要每周检查一次',
    '新版本发布前要跑完所有的回归测试',
    '周末去图书馆还书',
)
_JA = (
    '明日の会議は午後三時からです',
    'サーバーのバックアップを毎週確認する',
    '東京駅で友達と待ち合わせ',
    '新しいキーボードを注文した',
    'レポートの締め切りは金曜日です',
    '猫の予防接種を予約する',
)
_FOLDERS = (
    'projects/atlas',
    'projects/atlas/infra',
    'projects/hermes',
    'people',
    'travel/2025',
    'recipes',
    'ops/runbooks',
)


# ---------------------------------------------------------------- shared helpers


def unique_word(prefix: str, n: int) -> str:
    """A word that only one note (or message) contains: ``prefix`` + ``n`` in base 17 over :data:`_ALPHABET`."""
    digits = []
    for _ in range(6):
        n, d = divmod(n, len(_ALPHABET))
        digits.append(_ALPHABET[d])
    return prefix + ''.join(reversed(digits))


def memory_config(store_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Keyword-only config whose store lives in ``store_dir`` (never ``~/.memsift``)."""
    return {
        'agents': {
            'defaults': {
                'memorySearch': {'provider': 'none', 'store': {'path': os.path.join(store_dir, '{agentId}.sqlite')}}
            }
        }
    }


def sentence(rng: random.Random) -> str:
    """One line of note text: mostly English, sometimes Chinese or Japanese."""
    roll = rng.random()
    if roll < 0.12:
        return rng.choice(_ZH)
    if roll < 0.2:
        return rng.choice(_JA)
    words = [rng.choice(_EN) for _ in range(rng.randint(4, 14))]
    words.insert(rng.randint(0, len(words)), rng.choice(_VERBS))
    return ' '.join(words).capitalize() + '.'


def note_text(rng: random.Random, title: str, word: str) -> str:
    """A Markdown note with headings, bullets, the odd code block, and ``word`` on one line somewhere inside.

    Lengths range from a few lines to a few hundred (several chunks), so syncs split files across chunks.
    """
    size = rng.choice((3, 6, 10, 20, 40, 80)) if rng.random() < 0.95 else rng.randint(150, 300)
    lines = [f'# {title}', '']
    for i in range(size):
        if i and i % 12 == 0:
            lines += ['', f'## {rng.choice(_EN).title()} {i // 12}', '']
        if rng.random() < 0.03:
            lines += ['```', f'{rng.choice(_EN)} --{rng.choice(_EN)}={rng.randint(1, 99)}', '```']
        lines.append(f'- {sentence(rng)}')
    lines.insert(rng.randint(2, len(lines)), f'- reference {word}')
    return '\n'.join(lines) + '\n'


def note_path(rng: random.Random, n: int) -> str:
    """A workspace path: daily notes ``memory/YYYY-MM-DD.md`` mostly, otherwise nested topic folders."""
    if rng.random() < 0.6:
        day = time.gmtime(1735689600 + 86400 * n)  # from 2025-01-01, one day per note number
        return f'memory/{day.tm_year:04d}-{day.tm_mon:02d}-{day.tm_mday:02d}.md'
    return f'memory/{rng.choice(_FOLDERS)}/{rng.choice(_EN)}-{n}.md'


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding='utf-8')


def log_line(path: str, record: dict[str, Any]) -> None:
    """Append one JSON line in a single write: O_APPEND keeps lines from several processes whole."""
    data = (json.dumps(record, ensure_ascii=False) + '\n').encode('utf-8')
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read_log(path: str, offset: int) -> tuple[list[dict[str, Any]], int]:
    """Whole JSON lines appended to ``path`` since ``offset``, and the offset after them."""
    try:
        with open(path, 'rb') as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b'\n') + 1  # a line still being written is read next time
    return [json.loads(line) for line in data[:end].splitlines() if line], offset + end


def memsift_command() -> list[str]:
    """The ``memsift`` console script of this interpreter's environment (``python -m memsift`` otherwise)."""
    script = Path(sys.executable).with_name('memsift')
    return [str(script)] if script.exists() else [sys.executable, '-m', 'memsift']


def error_text(exc: BaseException) -> str:
    return f'{type(exc).__name__}: {exc}'.replace('\n', ' ')[:400]


class Figures:
    """Counters and the first error messages of one soak process, written as JSON when it stops."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.counts: dict[str, float] = {}
        self.samples: list[str] = []
        self.extra: dict[str, Any] = {}
        self.lock = threading.Lock()

    def add(self, name: str, value: float = 1) -> None:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + value

    def error(self, name: str, message: str) -> None:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + 1
            if len(self.samples) < MAX_SAMPLES:
                self.samples.append(message)

    def save(self) -> None:
        with self.lock:
            extra = {k: sorted(v) if isinstance(v, set) else v for k, v in self.extra.items()}
            data = {'counts': self.counts, 'samples': self.samples, **extra}
        tmp = f'{self.path}.tmp'
        with open(tmp, 'w', encoding='utf-8') as f:
            json.dump(data, f, ensure_ascii=False)
        os.replace(tmp, self.path)  # the parent never reads half a file


def stop_event(deadline: float) -> threading.Event:
    """Set on SIGTERM/SIGINT; soak loops also stop at ``deadline`` (wall clock, shared by all processes)."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    def at_deadline() -> None:
        stop.wait(max(0.0, deadline - time.time()))
        stop.set()

    threading.Thread(target=at_deadline, daemon=True).start()
    return stop


def say(line: str) -> None:
    """One stdout line in one write, flushed: it survives a SIGKILL right after."""
    sys.stdout.write(line + '\n')
    sys.stdout.flush()


# ---------------------------------------------------------------- kill-loop roles


def role_sync(args: dict[str, Any]) -> None:
    import memsift

    with memsift.MemoryIndex(args['ws'], memory_config(args['store'])) as index:
        say('start')
        started = time.perf_counter()
        index.sync(force=bool(args.get('force')))
        say(f'done {time.perf_counter() - started:.4f}')


def role_reopen(args: dict[str, Any]) -> None:
    import memsift

    with memsift.MemoryIndex(args['ws'], memory_config(args['store'])) as index:
        status = index.status()
        # keyword_only: a pure read of what the killed process left, without a sync that would repair it first.
        hits = index.search(args['probe'], min_score=0.0, keyword_only=True).results
        say(
            json.dumps(
                {'files': status['files'], 'chunks': status['chunks'], 'docs': status['fts']['docs'], 'hits': len(hits)}
            )
        )


def _session_leaf(path: str) -> str | None:
    """The stored leaf of the session: a resumed conversation continues from what the store holds."""
    if not os.path.exists(path):
        return None
    db = sqlite3.connect(path, timeout=10)
    try:
        row = db.execute('SELECT leaf FROM sessions WHERE key = ?', (SESSION_KEY,)).fetchone()
    except sqlite3.OperationalError:  # no table yet
        row = None
    finally:
        db.close()
    return None if row is None else row[0]


def role_append(args: dict[str, Any]) -> None:
    import memsift

    rng = random.Random(args['seed'])
    store = memsift.SessionStore(args['path'], 'main')
    parent = _session_leaf(args['path'])
    say('start')
    for n in range(10**9):
        event_id, word = f'r{args["run"]:04d}m{n:07d}', unique_word('qk', args['run'] * 100_000 + n)
        text = f'{sentence(rng)} {word} {sentence(rng)}'
        store.append(
            SESSION_KEY,
            {
                'type': 'message',
                'id': event_id,
                'parentId': parent,
                'timestamp': int(time.time() * 1000),
                'message': {'role': 'user' if n % 2 else 'assistant', 'content': text},
            },
        )
        say(f'ack {event_id} {word}')  # acknowledged: append returned
        parent = event_id


def role_session_reopen(args: dict[str, Any]) -> None:
    import memsift

    with memsift.SessionStore(args['path'], 'main') as store:
        found = store.search(args['word'], caller=SESSION_KEY, limit=5) if args.get('word') else {'results': []}
        history = store.history(SESSION_KEY, caller=SESSION_KEY, limit=5)
        ids = [hit.get('messageId') for hit in found.get('results', [])]
        say(
            json.dumps(
                {
                    'found': args.get('id') in ids,
                    'ids': ids,
                    'history': len(history.get('messages', [])),
                    'error': found.get('error') or history.get('error'),
                }
            )
        )


# ---------------------------------------------------------------- soak roles


def _soak_edit(ws: Path, rng: random.Random, folder: str, token: str) -> str:
    """Create a note or append to one of this side's notes; tokens are never removed, so they stay findable."""
    path = f'memory/{folder}/note-{rng.randrange(40)}.md'
    file = ws / path
    line = f'- {sentence(rng)} {token}\n'
    if file.exists():
        with open(file, 'a', encoding='utf-8') as f:
            f.write(line)
    else:
        write_text(file, f'# {folder}\n\n{line}')
    return path


def _soak_loop(args: dict[str, Any], side: str, commit: Callable[[], object], figures: Figures) -> None:
    """Write a unique token, ``commit`` (sync or CLI index), log ``(token, path, time commit returned)``."""
    rng = random.Random(args['seed'])
    stop = stop_event(args['deadline'])
    ws = Path(args['ws'])
    n = 0
    while not stop.is_set():
        token = unique_word(args['prefix'], n)
        n += 1
        path = _soak_edit(ws, rng, side, token)
        try:
            commit()
        except Exception as exc:  # the token stays on disk but is not logged: nobody expects it yet
            figures.error('errors', error_text(exc))
        else:
            log_line(args['log'], {'token': token, 'path': path, 't': time.time(), 'side': side})
            figures.add('writes')
        stop.wait(rng.uniform(0.0, args.get('pause', 0.3)))


def role_soak_writer(args: dict[str, Any]) -> None:
    import memsift

    figures = Figures(args['result'])
    try:
        with memsift.MemoryIndex(args['ws'], args['config']) as index:
            _soak_loop(args, 'writer', index.sync, figures)
    except Exception as exc:
        figures.error('errors', f'writer stopped: {error_text(exc)}')
    figures.save()


def role_soak_cli(args: dict[str, Any]) -> None:
    figures = Figures(args['result'])
    command = [*memsift_command(), 'index', '--workspace', args['ws'], '--config', args['config']]

    def commit() -> None:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ['(no output)']
            raise RuntimeError(f'memsift index exited {done.returncode}: {tail[0]}')

    _soak_loop(args, 'cli', commit, figures)
    figures.save()


class _Commits:
    """The commit log as seen by one reader process, refreshed by a background thread."""

    def __init__(self, path: str, stop: threading.Event) -> None:
        self.items: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.path, self.offset, self.stop = path, 0, stop
        threading.Thread(target=self._follow, daemon=True).start()

    def _follow(self) -> None:
        while not self.stop.wait(0.05):
            new, self.offset = read_log(self.path, self.offset)
            with self.lock:
                self.items.extend(new)

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.items)


def _miss_context(index: Any, commit: dict[str, Any], figures: Figures) -> str:
    """For a miss sample: the reader's index state (its background syncs fail silently, in ``syncError``) and
    whether a keyword-only search, which skips the sync and the ranking pipeline, finds the note."""
    if len(figures.samples) >= MAX_SAMPLES:
        return ''  # not reported anyway: spare the extra calls
    try:
        status = index.status()
        hits = index.search(commit['token'], max_results=10, min_score=0.0, keyword_only=True).results
        raw = [chunk_id for chunk_id, _ in index.index.search(commit['token'], k=10)]  # the BM25 index alone
        rows = index.store.chunks(raw)
    except Exception as exc:
        return f' (reader state unavailable: {error_text(exc)})'
    return (
        f' (this reader: store generation {status["generation"]}, BM25 at {status["fts"]["generation"]}, '
        f'syncError {status["syncError"]!r}, keyword_only finds it: {commit["path"] in {h.path for h in hits}}, '
        f'raw BM25 ids {raw} of which {len(rows)} in the store; the search that missed: {commit.get("debug")})'
    )


def _record_miss(index: Any, commit: dict[str, Any], age: float, figures: Figures, missed: set[str]) -> None:
    """A search that did not find ``commit``: the lag it shows, and a visibility miss once it is late."""
    lag_ms = age * 1000  # invisible at least this long after it was committed
    with figures.lock:
        if lag_ms > figures.counts.get('max_lag_ms', 0):
            figures.counts['max_lag_ms'] = lag_ms
            figures.extra['slowest'] = {**commit, 'lag_ms': round(lag_ms)}
        late = age >= VISIBLE_AFTER_S and commit['token'] not in missed
        if late:
            missed.add(commit['token'])  # once per process, whichever thread saw it
    if late:
        figures.error(
            'missed_tokens',
            f'{commit["token"]} ({commit["side"]}, {commit["path"]}) not found '
            f'{age:.2f} s after its commit{_miss_context(index, commit, figures)}',
        )


def _reader(
    index: Any, commits: _Commits, stop: threading.Event, figures: Figures, rng: random.Random, pause: float
) -> None:
    """Search each new token until found (its lag), and old tokens at random (that they stay found)."""
    seen = 0
    pending: list[dict[str, Any]] = []
    missed: set[str] = figures.extra.setdefault('missed', set())
    while not stop.is_set():
        items = commits.snapshot()
        pending += items[seen:]
        seen = len(items)
        old = [c for c in items if time.time() - c['t'] >= VISIBLE_AFTER_S]
        commit = pending[0] if pending else (rng.choice(old) if old else None)
        if commit is None:
            stop.wait(0.05)
            continue
        started = time.time()
        try:
            result = index.search(commit['token'], max_results=10, min_score=0.0)
            if result.unavailable:
                raise RuntimeError(f'search unavailable: {result.error}')
        except Exception as exc:
            figures.error('errors', f'search {commit["token"]}: {error_text(exc)}')
            stop.wait(pause)
            continue
        figures.add('searches')
        if figures.counts.get('searches', 0) % 25 == 0:  # a sync this reader started (on search) failed
            sync_error = index.status()['syncError']
            if sync_error:
                figures.error('errors', f'background sync: {sync_error}')
        age = started - commit['t']
        if commit['path'] in {hit.path for hit in result.results}:
            if pending and commit is pending[0]:
                pending.pop(0)
        else:
            commit = {**commit, 'debug': result.debug}  # what the missing search itself saw
            _record_miss(index, commit, age, figures, missed)
            if pending and commit is pending[0] and age > 30:
                pending.pop(0)  # given up on: already counted as a miss
            elif pending and commit is pending[0]:
                pending.append(pending.pop(0))  # retry later, after the other new tokens
        stop.wait(pause)


def role_soak_reader(args: dict[str, Any]) -> None:
    import memsift

    figures = Figures(args['result'])
    stop = stop_event(args['deadline'])
    try:
        with memsift.MemoryIndex(args['ws'], args['config']) as index:
            commits = _Commits(args['log'], stop)
            threads = [
                threading.Thread(
                    target=_reader,
                    args=(index, commits, stop, figures, random.Random(args['seed'] * 100 + i), args['pause']),
                )
                for i in range(args['threads'])
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    except Exception as exc:
        figures.error('errors', f'reader process stopped: {error_text(exc)}')
    figures.save()


def json_values(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """JSON objects from output that has one per line (``synced`` events) or one over several (errors)."""
    buffer = ''
    for line in lines:
        buffer += line
        if not buffer.lstrip().startswith('{'):
            yield {'status': 'error', 'error': f'not JSON: {buffer.strip()}'}
            buffer = ''
            continue
        try:
            value = json.loads(buffer)
        except ValueError:
            continue  # an object printed over several lines: wait for its end
        buffer = ''
        yield value if isinstance(value, dict) else {'status': 'error', 'error': f'not an object: {value!r}'}
    if buffer.strip():
        yield {'status': 'error', 'error': f'cut-off output: {buffer.strip()[:200]}'}


def role_watch_guard(args: dict[str, Any]) -> None:
    """``memsift watch`` has no deadline of its own: this guard stops it (SIGINT, as Ctrl-C) and reports."""
    figures = Figures(args['result'])
    stop = stop_event(args['deadline'])
    command = [*memsift_command(), 'watch', '--workspace', args['ws'], '--config', args['config'], '--json']
    watcher = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def count_stdout() -> None:
        for event in json_values(watcher.stdout):  # type: ignore[arg-type]
            if event.get('event') == 'synced':
                figures.add('syncs')
            elif event.get('status') == 'error':  # with --json, the CLI reports errors on stdout
                figures.error('errors', f'watcher: {str(event.get("error"))[:400]}')

    def count_stderr() -> None:
        for line in watcher.stderr:  # type: ignore[union-attr]
            if re.search(r'Error|Exception|Traceback|^memsift:', line):
                figures.error('errors', f'watcher: {line.strip()[:400]}')

    readers = [threading.Thread(target=f, daemon=True) for f in (count_stdout, count_stderr)]
    for thread in readers:
        thread.start()
    while not stop.wait(0.2):
        if watcher.poll() is not None:
            for thread in readers:  # its last words first, then the exit
                thread.join(timeout=5)
            figures.error('errors', f'watcher exited early with status {watcher.returncode}')
            break
    if watcher.poll() is None:
        watcher.send_signal(signal.SIGINT)
        try:
            watcher.wait(timeout=20)
        except subprocess.TimeoutExpired:
            watcher.kill()
            figures.error('errors', 'watcher did not stop within 20 s of SIGINT')
    for thread in readers:
        thread.join(timeout=5)
    figures.save()


ROLES: dict[str, Callable[[dict[str, Any]], None]] = {
    'sync': role_sync,
    'reopen': role_reopen,
    'append': role_append,
    'session-reopen': role_session_reopen,
    'soak-writer': role_soak_writer,
    'soak-cli': role_soak_cli,
    'soak-reader': role_soak_reader,
    'watch-guard': role_watch_guard,
}

if __name__ == '__main__':
    ROLES[sys.argv[1]](json.loads(sys.argv[2]))
