"""The benchmark report: runs the suites, keeps their figures and writes ``benches/report/README.md`` with tables and
PNG plots (matplotlib, in the ``bench`` extra).

    make report                                  # runs every suite (about 25 minutes on 2 cores), then renders
    .venv/bin/python benches/report.py --only cli,quality
    .venv/bin/python benches/report.py --render  # re-render from the kept figures, running nothing

Suites, each kept as ``benches/report/data/<suite>.json`` with the date it ran:

- ``speed``: ``speed.py --json --sections 2,3,4`` (BM25, vectors, the memory index at 10k and 100k chunks beside
  the OpenClaw-architecture baseline);
- ``cli``: ``cli.py`` (memsift processes beside the real OpenClaw 2026.9.6 and QMD 2.8.3, installed with npm when
  missing);
- ``million``: ``million.py`` at 100k and 1M chunks (hybrid p50/p95, recall@10, vector file, reopen, peak RSS;
  about 10 minutes and 2 GB of disk);
- ``quality``: ``quality.py`` nDCG@10 per dataset and mode (memsift BM25 with and without stemming, the full
  pipeline keyword-only, and bm25s as the peer).

A suite that cannot run (no node, no datasets) says why in the log and the report keeps its last figures, with
their date.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _beir

BENCHES = Path(__file__).resolve().parent
REPORT = BENCHES / 'report'
DATA = REPORT / 'data'
SUITES = ('speed', 'cli', 'million', 'quality')
MILLION_HEADER = ['chunks', 'hybrid p50 / p95', 'recall@10 vector / hybrid', 'vectors', 'vector file', 'reopen',
                  'index', 'peak RSS']  # fmt: skip
MODE_LABELS = {
    ('bm25', True): 'memsift BM25',
    ('bm25', False): 'memsift BM25, no stemming',
    ('fts', None): 'memsift pipeline, keyword-only',
    ('bm25s-stemmed', None): 'bm25s, stemmed, English stopwords (peer)',
}


def log(message: str) -> None:
    print(f'report: {message}', file=sys.stderr, flush=True)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith('{')]


def run(command: list[str], timeout: float) -> str:
    # OpenBLAS settings of the dev machine put numpy on a slow path that flatters memsift (see speed.py).
    env = {k: v for k, v in os.environ.items() if k not in ('OPENBLAS_CORETYPE', 'OPENBLAS_L2_SIZE')}
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, cwd=BENCHES.parent,
                          env=env)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f'{" ".join(command[1:3])} exited {done.returncode}: {done.stderr.strip()[-600:]}')
    return done.stdout


def run_speed(data_root: Path) -> dict:
    out = run([sys.executable, str(BENCHES / 'speed.py'), '--json', '--sections', '2,3,4', '--data-root',
               str(data_root)], timeout=3600)  # fmt: skip
    return json.loads(out.strip().splitlines()[-1])


def run_cli(data_root: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / 'cli.json'
        run([sys.executable, str(BENCHES / 'cli.py'), '--data', str(data_root), '--json', str(target)], timeout=3600)
        return json.loads(target.read_text(encoding='utf-8'))


def run_million(data_root: Path) -> dict:
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for chunks in (100_000, 1_000_000):
            target = Path(tmp) / f'million-{chunks}.json'
            run([sys.executable, str(BENCHES / 'million.py'), '--data', str(data_root), '--chunks', str(chunks),
                 '--json', str(target)], timeout=3600)  # fmt: skip
            runs.append(json.loads(target.read_text(encoding='utf-8')))
    return {'runs': runs}


def run_quality(data_root: Path) -> dict:
    quality = [sys.executable, str(BENCHES / 'quality.py')]
    records = json_lines(run([*quality, '--mode', 'all', '--data-root', str(data_root)], timeout=3600))
    for path in _beir.dataset_dirs(data_root):
        peer = json_lines(run([*quality, '--mode', 'bm25s', '--data', str(path)], timeout=3600))
        records += [r for r in peer if r['mode'] == 'bm25s-stemmed' and r.get('stopwords') == 'en']
    return {'records': records}


RUNNERS: dict[str, Callable[[Path], dict]] = {
    'speed': run_speed,
    'cli': run_cli,
    'million': run_million,
    'quality': run_quality,
}


def refresh(suites: list[str], data_root: Path) -> None:
    """Run ``suites``; each result replaces its kept figures only when the run succeeded."""
    DATA.mkdir(parents=True, exist_ok=True)
    for suite in suites:
        log(f'running {suite} ...')
        started = time.perf_counter()
        try:
            result = RUNNERS[suite](data_root)
        except Exception as exc:  # the last figures stay, with their date
            log(f'{suite} did not run ({type(exc).__name__}: {exc}); keeping its last figures')
            continue
        result['date'] = time.strftime('%Y-%m-%d')
        (DATA / f'{suite}.json').write_text(json.dumps(result, indent=1), encoding='utf-8')
        log(f'{suite} done in {time.perf_counter() - started:.0f} s')


def kept(suite: str) -> dict | None:
    path = DATA / f'{suite}.json'
    return json.loads(path.read_text(encoding='utf-8')) if path.is_file() else None


# ------------------------------------------------------------------------------------------------ plots
def pyplot() -> Any:
    import matplotlib

    matplotlib.use('Agg')  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def latency_by_size(speed: dict, million: dict | None) -> dict[str, dict[int, float]]:
    """p50 milliseconds by corpus size (chunks) per series, from section 4's search rows and ``million.py``'s runs."""
    series: dict[str, dict[int, float]] = {}
    for record in million['runs'] if million else []:
        series.setdefault('memsift hybrid (million.py)', {})[record['chunks']] = record['hybrid_p50_ms']
    for row in speed['rows']:
        match = re.match(r'search (FTS-only|hybrid) p50, ([\d,]+) chunks', row['task'])
        if not match:
            continue
        mode, size = match.group(1), int(match.group(2).replace(',', ''))
        series.setdefault(f'memsift {mode}', {})[size] = 1000 / row['memsift']
        if row.get('peer_value'):
            series.setdefault(f'{row["peer"]} ({mode})', {})[size] = 1000 / row['peer_value']
    return series


def plot_latency(speed: dict, million: dict | None, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, points in sorted(latency_by_size(speed, million).items()):
        sizes = sorted(points)
        ax.plot(sizes, [points[s] for s in sizes], marker='o', linewidth=2.5 if name.startswith('memsift') else 1.2,
                label=name)  # fmt: skip
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xlabel('memory size (chunks)')
    ax.set_ylabel('search latency p50 (ms, log)')
    ax.set_title('memory_search latency by memory size (lower is better)')
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(fontsize=7, loc='upper left')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_bars(path: Path, title: str, unit: str, bars: list[tuple[str, float]], log_scale: bool = False) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.45 * len(bars)))
    labels, values = [b[0] for b in bars], [b[1] for b in bars]
    peers = ('openclaw', 'qmd')
    colors = ['#b0b0b0' if any(p in label.lower() for p in peers) else '#2b7bba' for label in labels]  # peers grey
    ax.barh(labels, values, color=colors)
    for y, value in enumerate(values):
        ax.text(value, y, f' {value:,.3g} {unit}', va='center', fontsize=8)
    if log_scale:
        ax.set_xscale('log')
    ax.invert_yaxis()
    fig.suptitle(title)  # over the whole figure: long labels leave the axes narrow
    ax.set_xlabel(unit + (' (log)' if log_scale else ''))
    ax.margins(x=0.25)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_quality(quality: dict, path: Path) -> None:
    plt = pyplot()
    records = quality['records']
    datasets = sorted({r['dataset'] for r in records})
    modes = [key for key in MODE_LABELS if any(mode_key(r) == key for r in records)]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(1, len(modes))
    for i, key in enumerate(modes):
        values = [
            next((r['ndcg@10'] for r in records if r['dataset'] == d and mode_key(r) == key), 0) for d in datasets
        ]
        ax.bar([x + i * width for x in range(len(datasets))], values, width, label=MODE_LABELS[key])
    ax.set_xticks([x + width * (len(modes) - 1) / 2 for x in range(len(datasets))], datasets)
    ax.set_ylabel('nDCG@10')
    ax.set_ylim(0, 1)
    ax.set_title('Retrieval quality per dataset and mode (higher is better)')
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def mode_key(record: dict) -> tuple[str, bool | None]:
    return (record['mode'], record.get('stem') if record['mode'] == 'bm25' else None)


# ------------------------------------------------------------------------------------------------ the page
def scan_kind(run: dict) -> str:
    """How a million.py run's vector leg searched: the graph, or a scan of i8 rows (first by 4-bit codes)."""
    if run['ann']:
        return f'{run["dtype"]}, HNSW graph'
    return f'{run["dtype"]} scan' + (', 4-bit codes first' if run.get('fourBit') else '')


def table(rows: list[list[str]], header: list[str]) -> str:
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    return '\n'.join(lines + ['| ' + ' | '.join(row) + ' |' for row in rows])


def number(value: float | None) -> str:
    if value is None:
        return '-'
    return f'{value:,.0f}' if abs(value) >= 100 else f'{value:,.3g}'


def render() -> str:
    """Write the plots and return the Markdown page."""
    speed, cli, million, quality = kept('speed'), kept('cli'), kept('million'), kept('quality')
    parts = [
        '# memsift benchmark report',
        'Written by `benches/report.py` (`make report`); each section says when its figures were measured. '
        'Speed is measured on the development machine (2 cores, shared: absolute times vary run to run, ratios '
        'measured in the same run hold). Peers run in the same run: the real OpenClaw 2026.9.6 (Node 24) and QMD '
        '2.8.3 for the command line, an OpenClaw-architecture baseline (SQLite FTS5 + sqlite-vec, as OpenClaw '
        'stores memory) for the in-process figures, and bm25s for BM25.',
    ]
    if speed is not None:
        plot_latency(speed, million, REPORT / 'latency.png')
        parts += [
            f'## Search latency by memory size (measured {speed["date"]})',
            '![search latency by memory size](latency.png)',
            'Keyword-only and hybrid `memory_search` p50 at 10k and 100k chunks of SciFact notes (`speed.py`), and '
            'hybrid at 100k and 1M chunks from `million.py` (SciFact copies, jittered text-derived vectors).',
        ]
        build = [r for r in speed['rows'] if r['task'].startswith('index build FTS-only')]
        bars = []
        for r in build:
            size = r['task'].rsplit(', ', 1)[-1]
            bars.append((f'memsift, {size}', r['memsift']))
            if r.get('peer_value'):
                bars.append((f'{r["peer"]}, {size}', r['peer_value']))
        if cli is not None:
            size = float(re.search(r'([\d.]+) MB', cli['workspace']).group(1))
            bars += [(f'memsift index CLI, {cli["workspace"]}', r['value']) for r in cli['rows'] if r['unit'] == 'MB/s']
            index_s = next((r['value'] for r in cli['rows'] if r['what'].startswith('`openclaw memory index')), None)
            if index_s:
                bars.append((f'openclaw memory index, {cli["workspace"]}', size / index_s))
            qmd_s = next((r['value'] for r in cli['rows'] if r['what'].startswith('`qmd collection add')), None)
            if qmd_s:
                bars.append((f'qmd collection add, {cli["workspace"]}', size / qmd_s))
        plot_bars(REPORT / 'index.png', 'Keyword-only index build (higher is better)', 'MB/s', bars, log_scale=True)
        parts += [f'## Indexing throughput (measured {speed["date"]})', '![index throughput](index.png)']
    if million is not None:
        rows = [[f'{r["chunks"]:,}', f'{r["hybrid_p50_ms"]:.1f} / {r["hybrid_p95_ms"]:.1f} ms',
                 f'{r["vector_leg_recall@10"]:.3f} / {r["hybrid_recall@10"]:.3f}', scan_kind(r),
                 f'{r["vector_file_mb"]} MB', f'{r["reopen_s"]} s', f'{r["index_s"]} s', f'{r["peak_rss_mb"]:,} MB']
                for r in million['runs']]  # fmt: skip
        parts += [
            f'## A memory of a million chunks (measured {million["date"]})',
            'Hybrid `memory_search` (OpenClaw defaults) on SciFact notes copied until they make the chunk count; '
            'recall@10 of the vector leg and of the hybrid top-10 against the exact scan. From 20k vectors the '
            'memory index keeps them as i8 and scans them; from 100k it ranks by 4-bit codes first (half the bytes '
            'to read) and scores the best 1,000 exactly.',
            table(rows, MILLION_HEADER),
        ]
    if cli is not None:
        cli_bars = [(r['what'].split(' (')[0].replace('`', ''), r['value']) for r in cli['rows'] if r['unit'] == 's']
        plot_bars(REPORT / 'cli.png', 'Command-line wall time per process (lower is better)', 's', cli_bars, True)
        rows = [[r['what'], f'{r["value"] * 1000:.1f} ms' if r['unit'] == 's' and r['value'] < 1 else
                 f'{number(r["value"])} {r["unit"]}', r['target'], {True: 'yes', False: 'no', None: ''}[r['met']],
                 r['note']] for r in cli['rows']]  # fmt: skip
        parts += [
            f'## Command line (measured {cli["date"]})',
            '![command-line wall time](cli.png)',
            f'SciFact as memory notes ({cli["workspace"]}), keyword-only, medians of separate processes.',
            table(rows, ['what', 'value', 'target', 'met', 'note']),
        ]
        if cli.get('error'):
            parts.append(f'OpenClaw did not run: {cli["error"]}')
    if quality is not None:
        plot_quality(quality, REPORT / 'quality.png')
        rows = [[r['dataset'], MODE_LABELS.get(mode_key(r), r['mode']), f'{r["ndcg@10"]:.4f}',
                 f'{r["recall@10"]:.4f}', str(r['queries'])] for r in quality['records']]  # fmt: skip
        parts += [
            f'## Quality (measured {quality["date"]})',
            '![quality per dataset and mode](quality.png)',
            table(rows, ['dataset', 'mode', 'nDCG@10', 'recall@10', 'queries']),
        ]
    if speed is not None:
        parts.append(f'## All speed rows (measured {speed["date"]})')
        parts.append(f'Environment: `{json.dumps(speed["environment"])}`')
        by_section: dict[str, list[dict]] = {}
        for r in speed['rows']:
            by_section.setdefault(r['section'], []).append(r)
        for section, rows in by_section.items():
            parts.append(f'### {section}')
            parts.append(
                table(
                    [
                        [
                            r['task'],
                            r['unit'],
                            number(r['memsift']),
                            r['peer'] or '-',
                            number(r['peer_value']),
                            f'{r["ratio"]:.2f}x' if r.get('ratio') else '-',
                            r['check'],
                        ]
                        for r in rows
                    ],
                    ['task', 'unit', 'memsift', 'peer', 'peer value', 'ratio', 'check'],
                )
            )
    return '\n\n'.join(parts) + '\n'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--data-root', type=Path, default=_beir.DEFAULT_DATA_ROOT)
    parser.add_argument('--only', help='comma-separated suites to run (default: all): ' + ', '.join(SUITES))
    parser.add_argument('--render', action='store_true', help='run nothing: render the kept figures')
    args = parser.parse_args()
    if not args.render:
        suites = args.only.split(',') if args.only else list(SUITES)
        unknown = set(suites) - set(SUITES)
        if unknown:
            parser.error(f'unknown suites: {", ".join(sorted(unknown))}')
        refresh(suites, args.data_root)
    REPORT.mkdir(exist_ok=True)
    (REPORT / 'README.md').write_text(render(), encoding='utf-8')
    log(f'wrote {REPORT / "README.md"}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
