"""What users install: the `make wheels` wheel and sdist, `memsift --version`, and the forced scalar SIMD path.

The wheel tests read ``target/wheels`` (``make setup`` builds it there); a checkout that only ran
``maturin develop`` has none, and they skip saying so. ``scripts/install_test.py`` installs the same files into
clean environments without a Rust toolchain (CI runs it after the tests).
"""

import json
import os
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import tomllib

import memsift
from memsift.tools.cli import main

REPO = Path(__file__).resolve().parents[2]
WHEELS = REPO / 'target' / 'wheels'


def cargo_version() -> str:
    cargo_toml = REPO / 'Cargo.toml'
    if not cargo_toml.is_file():
        pytest.skip(f'{cargo_toml} not found (tests run outside the source tree)')
    with cargo_toml.open('rb') as f:
        return str(tomllib.load(f)['package']['version'])


def built(pattern: str) -> Path:
    found = sorted(WHEELS.glob(pattern.format(version=cargo_version())))
    if not found:
        pytest.skip(f'no {pattern.format(version=cargo_version())} in {WHEELS}: `make wheels` builds it')
    return found[0]


def test_cli_version_is_the_cargo_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(['--version'])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f'memsift {cargo_version()}'
    assert memsift.__version__ == cargo_version()


def elf_section_names(binary: bytes) -> set[str]:
    """The section names of a 64-bit little-endian ELF file (what ``readelf -S`` lists)."""
    assert binary[:4] == b'\x7fELF' and binary[4] == 2 and binary[5] == 1, 'not a 64-bit little-endian ELF file'
    (shoff,) = struct.unpack_from('<Q', binary, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', binary, 0x3A)
    headers = [struct.unpack_from('<IIQQQQ', binary, shoff + i * shentsize) for i in range(shnum)]
    names_at, names_size = headers[shstrndx][4], headers[shstrndx][5]
    names = binary[names_at : names_at + names_size]
    return {names[h[0] : names.index(b'\0', h[0])].decode() for h in headers}


def test_the_wheel_is_abi3_manylinux_stripped_typed_and_licensed():
    wheel = built('memsift-{version}-cp310-abi3-*.whl')
    tags = wheel.name.removesuffix('.whl').split('-')[4]
    assert tags.startswith(('manylinux_', 'manylinux2014_')), f'{wheel.name}: not a manylinux platform tag'
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        dist_info = f'memsift-{cargo_version()}.dist-info'
        for required in ('memsift/py.typed', 'memsift/_core.pyi', 'memsift/__init__.py', 'memsift/_core.abi3.so'):
            assert required in names, f'{wheel.name} lacks {required}'
        licences = {Path(n).name for n in names if n.startswith(f'{dist_info}/licenses/')}
        assert {'LICENSE', 'LICENSE-THIRD-PARTY.md'} <= licences, f'{wheel.name} licence files: {sorted(licences)}'
        metadata = archive.read(f'{dist_info}/METADATA').decode()
        assert f'\nVersion: {cargo_version()}\n' in metadata
        assert '\nRequires-Python: >=3.10\n' in metadata
        sections = elf_section_names(archive.read('memsift/_core.abi3.so'))
    assert not {'.debug_info', '.debug_line', '.symtab'} & sections, (
        f'the extension is not stripped: {sorted(sections)}'
    )
    # One abi3 wheel per platform, and nothing from the build tree (a stray .so, tests, target/).
    assert not [n for n in names if n.startswith(('tests/', 'target/', 'src/')) or n.endswith('.pyc')]


def test_the_sdist_holds_everything_a_build_needs():
    sdist = built('memsift-{version}.tar.gz')
    prefix = f'memsift-{cargo_version()}/'
    with tarfile.open(sdist) as archive:
        names = {n.removeprefix(prefix) for n in archive.getnames()}
    needed = {
        'Cargo.toml', 'Cargo.lock', 'pyproject.toml', 'README.md', 'LICENSE', 'LICENSE-THIRD-PARTY.md',
        'src/lib.rs', 'src/simd.rs', 'python/memsift/__init__.py', 'python/memsift/py.typed', 'python/memsift/_core.pyi',
    }  # fmt: skip
    assert needed <= names, f'{sdist.name} lacks {sorted(needed - names)}'
    assert not [n for n in names if n.startswith(('target/', '.venv/', '.git/'))], 'build outputs leaked into the sdist'


SCALAR_PROBE = """
import json, numpy as np, memsift
rng = np.random.default_rng(7)
rows = rng.standard_normal((500, 384)).astype(np.float32)
queries = rng.standard_normal((5, 384)).astype(np.float32)
found = {}
for dtype in ('f32', 'f16', 'i8'):
    store = memsift.VectorStore(384, dtype=dtype)
    store.add(np.arange(500, dtype=np.uint64), rows)
    found[dtype] = [[ids.tolist(), scores.tolist()] for ids, scores in (store.search(q, k=10) for q in queries)]
print(json.dumps({'kernels': memsift._core.simd_kernels(), 'found': found}))
"""


def probe(simd: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != 'MEMSIFT_SIMD'}
    if simd is not None:
        env['MEMSIFT_SIMD'] = simd
    done = subprocess.run([sys.executable, '-c', SCALAR_PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_forced_scalar_kernels_find_what_the_detected_ones_find():
    detected, scalar, unknown = probe(None), probe('scalar'), probe('no-such-isa')
    assert scalar['kernels'] == 'scalar'
    assert unknown['kernels'] == detected['kernels'], 'an unknown MEMSIFT_SIMD value must leave the choice to the CPU'
    for dtype, per_query in detected['found'].items():
        for (ids, scores), (scalar_ids, scalar_scores) in zip(per_query, scalar['found'][dtype], strict=True):
            assert scalar_ids == ids, f'{dtype}: scalar kernels ranked differently'
            assert scalar_scores == pytest.approx(scores, abs=1e-4), dtype
