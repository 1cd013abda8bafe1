"""What the ``memsift`` command prints: JSON for ``--json``, and the lines a person reads otherwise.

Each function turns one result (a report, a status dict, search hits) into text; the commands decide where it goes
(stdout, or stderr for notes beside machine-readable output) and which exit status goes with it.

>>> size(999), size(1_234_567), size(None)
('999 B', '1.2 MB', '?')
>>> print_json({'status': 'error', 'error': '记忆'})
{
  "status": "error",
  "error": "记忆"
}
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memsift.index.evaluate import EvalReport
    from memsift.index.memory_index import MemoryIndex
    from memsift.index.sync import Progress, SyncReport
    from memsift.search.results import SearchResult

__all__ = [
    'disk_line',
    'eval_lines',
    'explain_line',
    'json_line',
    'migrate_lines',
    'print_json',
    'report_line',
    'search_lines',
    'serving_line',
    'sessions_text',
    'size',
    'status_lines',
    'sync_progress',
    'synced_line',
    'written_line',
]


def print_json(data: Any) -> None:
    """``--json`` output: indented, non-ASCII text as it is."""
    print(json.dumps(data, ensure_ascii=False, indent=2))


def json_line(data: Any) -> str:
    """One event as one line of JSON, for output read line by line as it comes (``watch``, ``mcp``)."""
    return json.dumps(data)


@contextmanager
def sync_progress(enabled: bool, index: MemoryIndex) -> Iterator[Progress | None]:
    """A rich progress bar on a terminal (files done of all, time left, and chunks/s while a model embeds);
    nothing when output is piped or JSON."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
    from rich.progress import Progress as Bar

    with Bar(
        TextColumn('indexing'),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn('files'),
        TimeRemainingColumn(),
        TextColumn('{task.fields[embedding]}'),
        TextColumn('{task.description}'),
        transient=True,
    ) as bar:
        task = bar.add_task('', total=None, embedding='')
        started, embedded_before = time.monotonic(), index.chunks_embedded

        def update(done: int, total: int, path: str) -> None:
            embedded = index.chunks_embedded - embedded_before
            rate = embedded / max(time.monotonic() - started, 1e-3)
            embedding = f'{embedded:,} chunks embedded, {rate:,.1f} chunks/s' if embedded else ''
            bar.update(task, completed=done, total=total, description=path[-40:], embedding=embedding)

        yield update


def report_line(report: SyncReport) -> str:
    """A sync in one line: files added, updated, removed, unchanged (and skipped), chunks written, seconds."""
    parts = [
        f'{len(report.added)} added',
        f'{len(report.updated)} updated',
        f'{len(report.removed)} removed',
        f'{report.unchanged} unchanged',
    ]
    if report.skipped:
        parts.append(f'{len(report.skipped)} skipped')
    return f'indexed: {", ".join(parts)} · {report.chunks_written} chunks written · {report.seconds:.2f} s'


def synced_line(event: dict[str, Any]) -> str:
    """``memsift watch``'s line for each sync the watcher made."""
    return f'synced: {event["files"]} files · {event["chunks"]} chunks'


def search_lines(result: SearchResult, explain: bool) -> Iterator[str]:
    """Each hit as its score and lines, then its snippet (and, with ``explain``, how it was scored and what was
    cut)."""
    if not result.results:
        yield 'no results'
    for hit in result.results:
        yield f'{hit.score:.3f}  {hit.path}:{hit.start_line}-{hit.end_line}'
        snippet = ' '.join(hit.snippet.split())
        yield f'       {snippet[:200]}{"…" if len(snippet) > 200 else ""}'
        if hit.explain is not None:
            yield f'       {explain_line(hit.explain)}'
    for cut in result.debug.get('cut', []) if explain else []:
        yield f'  cut  {cut["score"]:.3f}  {cut["path"]}:{cut["startLine"]}-{cut["endLine"]} ({cut["cut"]})'


def explain_line(why: dict[str, Any]) -> str:
    """One line of how a result was scored: legs, weights, merge, decay, path tier, MMR (and rerank) moves."""
    parts = [
        f'bm25 {why["bm25"]:.3f} → {why["bm25Normalized"]:.3f}',
        f'cosine {why["cosine"]:.3f}',
        f'weights {why["vectorWeight"]:.2f}/{why["textWeight"]:.2f}',
        f'merged {why["merged"]:.3f}',
        f'decay ×{why["decay"]:.3f} ({why["dateSource"]})',
    ]
    if why['pathTier'] or why['pathScore']:
        parts.append(f'path tier {why["pathTier"]}, path score {why["pathScore"]:.3f}')
    moves = f'#{why["positionBeforeMmr"]} before MMR'
    if 'positionBeforeRerank' in why:
        moves += f', #{why["positionBeforeRerank"]} before rerank'
    parts.append(f'{moves}, #{why["position"]} now')
    return ' · '.join(parts)


def status_lines(data: Mapping[str, Any]) -> Iterator[str]:
    """``index.status()`` as aligned ``Name: value`` lines, then skipped files and issues."""
    vector = data['vector']
    lines = [
        ('Provider', f'{data["provider"]} (requested: {data["requestedProvider"]})'),
        ('Model', data['model']),
        ('Sources', ', '.join(data['sources'])),
        ('Extra paths', ', '.join(data['extraPaths']) or '-'),
        ('Indexed', f'{data["files"]} files · {data["chunks"]} chunks'),
        ('Dirty', 'yes' if data['dirty'] else 'no'),
        ('Store', data['store']['location'] if data['store']['backend'] == 'postgres' else data['dbPath']),
        ('Workspace', data['workspaceDir']),
        ('FTS', f'ready · {data["fts"]["docs"]} chunks · {data["fts"]["tokenizer"]}'),
        ('Vector', f'{vector["dims"]} dims · {vector["vectors"]} vectors' if vector['enabled'] else 'off (FTS-only)'),
        ('Embedding cache', f'{data["cache"]["entries"]} entries' if data['cache']['enabled'] else 'off'),
        ('Disk', disk_line(data['disk'])),
        ('Rerank', _rerank_line(data['rerank'])),
        ('Index identity', data['identity']['status']),
        ('Sync', sync_line(data)),
    ]
    for name, value in lines:
        yield f'{name + ":":17}{value}'
    if data['skipped']:
        yield f'Skipped:         {len(data["skipped"])} files'
        for item in data['skipped']:
            yield f'  {item["path"]}: {item["reason"]}'
    for issue in data.get('issues', []):
        yield f'Issue:           {issue}'


def sync_line(data: Mapping[str, Any]) -> str:
    """Whether a sync runs now, what the last check of every file cost, how changes are noticed, the last error."""
    sync, watch = data['sync'], data['watch']
    parts = ['running' if sync['running'] else 'idle']
    if sync['checkMs'] is not None:
        parts.append(f'last check {sync["checkMs"]:.0f} ms')
    parts.append(f'watch {watch["mode"]}' + (f' ({watch["fallbackReason"]})' if watch['fallbackReason'] else ''))
    if data['syncError']:
        parts.append(f'last error: {data["syncError"]}')
    return ' · '.join(parts)


def size(count: int | None) -> str:
    """Bytes in decimal units, as disk tools show them; ``?`` where SQLite could not tell."""
    if count is None:
        return '?'
    value, unit = float(count), 'B'
    for larger in ('KB', 'MB', 'GB'):
        if value < 1000:
            break
        value, unit = value / 1000, larger
    return f'{value:.0f} {unit}' if unit == 'B' else f'{value:.1f} {unit}'


def disk_line(disk: dict[str, Any]) -> str:
    """The index's disk use: in all, the store and its cache, the keyword index, the vectors."""
    return (
        f'{size(disk["total"])} (store {size(disk["store"])}, of it cache {size(disk["embeddingCache"])}; '
        f'keyword index {size(disk["keywordIndex"])}; vectors {size(disk["vectors"])})'
    )


def _rerank_line(rerank: dict[str, Any]) -> str:
    if not rerank['enabled']:
        return 'off'
    name = '/'.join(str(part) for part in (rerank['provider'], rerank['model']) if part)
    return f'{name} · top {rerank["topN"]}' + (f' · cannot run: {rerank["error"]}' if rerank['error'] else '')


def migrate_lines(report: dict[str, Any]) -> Iterator[str]:
    """What a migration copied, store by store, and whether each copy verified."""
    memory = report['memory']
    yield (
        f'memory: {memory["target"]["files"]} files, {memory["target"]["chunks"]} chunks, '
        f'{memory["target"]["vectors"]} vectors ({memory["filesCopied"]} files copied, '
        f'{memory["filesAlreadyThere"]} already there) · {"verified" if memory["verified"] else "DIFFERENT"}'
    )
    if 'sessions' in report:
        sessions = report['sessions']
        yield (
            f'sessions: {sessions["target"]["sessions"]} sessions, {sessions["target"]["events"]} events '
            f'({sessions["sessionsCopied"]} copied) · {"verified" if sessions["verified"] else "DIFFERENT"}'
        )


def eval_lines(report: EvalReport) -> Iterator[str]:
    """The probes' provenance, a table of hit@1, hit@5, MRR@10 and median time per mode, then notes and verdict."""
    reranker = f' · reranker {report.reranker}' if report.reranker else ''
    yield (
        f'{len(report.probes)} probes from {report.files} of {report.indexed_files} files ({report.chunks} chunks) '
        f'· provider {report.provider}/{report.model}{reranker} · seed {report.seed}\n'
    )
    yield f'{"mode":15}{"hit@1":>8}{"hit@5":>8}{"MRR@10":>8}{"p50 ms":>9}'
    for score in report.modes:
        if score.ran:
            yield (
                f'{score.mode:15}{score.hit_at_1:>8.3f}{score.hit_at_5:>8.3f}{score.mrr_at_10:>8.3f}'
                f'{score.p50_ms:>9.1f}'
            )
        else:
            yield f'{score.mode:15}  {score.note}'
    notes = [f'{score.mode}: {score.note}' for score in report.modes if score.ran and score.note]
    yield '\n' + '\n'.join([*notes, report.verdict])


def sessions_text(command: str, data: Mapping[str, Any]) -> str:
    """The text of a ``memsift sessions`` command's result (``import``, ``search``, ``status`` or ``history``)."""
    if command == 'import':
        return f'imported {data["events"]} events into {data["sessionKey"]} ({data["skipped"]} lines skipped)'
    if command == 'search':
        text = (
            '\n'.join(
                f'{h["score"]:.3f}{"~" if h.get("match") == "partial" else " "} {h["sessionKey"]}  {h["role"]}  '
                f'{h["snippet"]}'
                for h in data.get('results', [])
            )
            or 'no results'
        )
        if any(h.get('match') == 'partial' for h in data.get('results', [])):
            text += '\n(~: partial match, holding some of the words)'
        return text
    if command == 'status':
        vectors = ', '.join(f'{v["messages"]} by {v["key"]}' for v in data['vectors']) or 'none'
        return (
            f'{data["path"]}\n{data["sessions"]} sessions, {data["messages"]} indexed messages, search mode '
            f'{data["searchMode"]}{" (indexing)" if data["indexing"] else ""}\nmessage vectors: {vectors}'
        )
    return '\n'.join(f'[{m["role"]}] {m["content"]}' for m in data.get('messages', []))


def serving_line(agent: str, workspace: str, where: str, token: bool, write: bool = False) -> str:
    """``memsift mcp``'s line once it serves: which agent, from where, on which transport (and whether clients may
    write memory)."""
    notes = ' (bearer token required)' if token else ''
    notes += ' (memory_write on: clients may append notes under memory/)' if write else ''
    return f'memsift mcp: serving agent {agent} ({workspace}) on {where}{notes}'


def written_line(written: Mapping[str, Any]) -> str:
    """``memsift write``'s line: where the note went, as ``memsift get`` reads it back.

    >>> written_line({'path': 'memory/2026-11-28.md', 'startLine': 3, 'endLine': 4, 'chars': 41})
    'wrote memory/2026-11-28.md:3-4 (41 characters)'
    """
    return f'wrote {written["path"]}:{written["startLine"]}-{written["endLine"]} ({written["chars"]} characters)'
