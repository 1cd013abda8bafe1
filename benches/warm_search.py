"""Warm keyword ``memory_search`` on the SciFact notes, this tree against a baseline build, alternating in one run.

Writes BEIR SciFact as 5,183 memory notes once; each tree indexes them into its own store (keyword-only,
``provider: "none"``, OpenClaw 1.x's defaults otherwise). Then, for ``--rounds`` rounds, each tree in turn runs a
fresh process that opens its index, answers every query once unmeasured (warm-up), and times
``MemoryTools.memory_search`` on each of ``--queries`` SciFact questions. A round's figure is the mean latency;
the report gives each tree's best round and the ratio. Speed is compared only inside one run: the trees alternate,
so a load that comes and goes hits both.

The baseline is a ``python/`` folder holding another memsift with its built ``_core`` (for instance a
``git worktree`` of the commit before issue 29, built with ``cargo build --profile quick --lib``, its
``lib_core.so`` copied to ``python/memsift/_core.abi3.so``).

    .venv/bin/python benches/warm_search.py --baseline /tmp/base/python [--queries 300] [--rounds 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import _beir
from _notes import scifact_notes, write_workspace

ROOT = Path(__file__).resolve().parents[1]
SCIFACT_CHUNKS = 8_900
"""The whole corpus once: 5,183 notes."""

CHILD = r"""
import json, sys, time
from memsift.tools import MemoryTools

workspace, db, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
config = {'agents': {'defaults': {'memorySearch': {'provider': 'none', 'store': {'path': db}}}}}
with MemoryTools.open(workspace, config, sync=False) as tools:
    tools.index.sync()
    for query in queries:
        tools.memory_search(query)
    times = []
    for query in queries:
        start = time.perf_counter()
        tools.memory_search(query)
        times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def round_of(tree: str, workspace: Path, db: Path, queries: list[str]) -> list[float]:
    """One process of ``tree``'s memsift: the per-query seconds of its measured pass."""
    env = {**os.environ, 'PYTHONPATH': tree}  # ahead of the venv's own path to this tree
    done = subprocess.run(
        [sys.executable, '-c', CHILD, str(workspace), str(db), json.dumps(queries)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f'{tree}: {done.stderr.strip()[-1200:]}')
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--baseline', required=True, metavar='DIR', help='a python/ folder of another memsift build')
    parser.add_argument('--data', type=Path, default=_beir.DEFAULT_DATA_ROOT, help='folder of the BEIR datasets')
    parser.add_argument('--queries', type=int, default=300)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--json', type=Path, metavar='OUT', help='also write the figures as JSON')
    args = parser.parse_args(argv)
    _beir.require_dataset_dir(args.data / 'scifact')
    data = _beir.load_dataset(args.data / 'scifact')
    queries = [text for _, text in data.queries][: args.queries]
    trees = {'this': str(ROOT / 'python'), 'baseline': str(Path(args.baseline).resolve())}
    means: dict[str, list[float]] = {name: [] for name in trees}
    medians: dict[str, list[float]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix='memsift-warm-') as tmp_name:
        tmp = Path(tmp_name)
        ws = write_workspace(tmp / 'ws', scifact_notes(data), SCIFACT_CHUNKS)
        print(f'workspace: {ws.describe()}; {len(queries)} queries x {args.rounds} rounds', file=sys.stderr)
        for r in range(args.rounds):
            order = list(trees) if r % 2 == 0 else list(reversed(trees))
            for name in order:
                times = round_of(trees[name], ws.root, tmp / f'{name}.sqlite', queries)
                means[name].append(statistics.fmean(times))
                medians[name].append(statistics.median(times))
                print(f'round {r + 1} {name}: mean {means[name][-1] * 1000:.3f} ms', file=sys.stderr)
    best = {name: min(values) for name, values in means.items()}
    report = {
        'queries': len(queries),
        'rounds': args.rounds,
        'mean_ms': {name: [round(v * 1000, 3) for v in values] for name, values in means.items()},
        'median_ms': {name: [round(v * 1000, 3) for v in values] for name, values in medians.items()},
        'best_mean_ms': {name: round(v * 1000, 3) for name, v in best.items()},
        'this_over_baseline': round(best['this'] / best['baseline'], 3),
    }
    print('| tree | best mean | means per round | medians per round |\n|---|---|---|---|')
    for name in trees:
        rounds = ', '.join(f'{v:.2f}' for v in report['mean_ms'][name])
        middles = ', '.join(f'{v:.2f}' for v in report['median_ms'][name])
        print(f'| {name} | {report["best_mean_ms"][name]:.2f} ms | {rounds} | {middles} |')
    print(f'this / baseline (best means): {report["this_over_baseline"]:.3f}x (target <= 1.0)')
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding='utf-8')
    return 0


if __name__ == '__main__':
    sys.exit(main())
