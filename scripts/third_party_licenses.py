#!/usr/bin/env python3
"""Generate LICENSE-THIRD-PARTY.md: the licences of the Rust crates statically linked into memsift's extension.

The release wheel links every crate memsift depends on at run time (usearch's C++ and numkong's C sources included),
so it has to ship their licence texts. This script asks ``cargo metadata`` for the resolved dependency graph, keeps
the crates reached from ``memsift`` through normal dependency edges that apply on Linux x86_64 / aarch64, and writes
their licence texts, read from the crate sources cargo has downloaded, to ``LICENSE-THIRD-PARTY.md``.

    python scripts/third_party_licenses.py          # (re)write LICENSE-THIRD-PARTY.md
    python scripts/third_party_licenses.py --check  # exit 1 if the committed file is out of date

Standard library only; run it after any change to Cargo.toml or Cargo.lock.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTPUT_NAME = 'LICENSE-THIRD-PARTY.md'
ROOT_PACKAGE = 'memsift'

# Top-level files of a crate that carry its licence. NOTICE and COPYRIGHT files are copyright statements particular to
# one crate, so they are printed verbatim under it; the others are licence texts, printed once each in the appendix.
LICENCE_PREFIXES = ('license', 'licence', 'copying', 'notice', 'copyright')
VERBATIM_PREFIXES = ('notice', 'copyright')

# The platforms the release wheels are built for. A dependency edge with a `target` (a target triple or a `cfg(...)`
# expression) is followed when it applies to at least one of them; cfg names they do not set (custom ones such as
# `rustix_use_libc`, `miri` or `getrandom_backend`) evaluate to false, as they do in an ordinary build.
_LINUX = {
    'target_os': {'linux'},
    'target_family': {'unix'},
    'target_vendor': {'unknown'},
    'target_endian': {'little'},
    'target_pointer_width': {'64'},
    'target_has_atomic': {'8', '16', '32', '64', 'ptr'},
    'target_abi': {''},
    'panic': {'unwind'},
}
_ARCH = {
    'x86_64': {'target_arch': {'x86_64'}, 'target_feature': {'fxsr', 'sse', 'sse2'}},
    'aarch64': {'target_arch': {'aarch64'}, 'target_feature': {'neon', 'fp'}},
}
PLATFORMS: dict[str, dict[str, set[str]]] = {
    f'{arch}-unknown-linux-{env}': {**_LINUX, **extra, 'target_env': {env}}
    for arch, extra in _ARCH.items()
    for env in ('gnu', 'musl')
}
PLATFORM_FLAGS = frozenset({'unix'})  # bare cfg names set on these platforms (`cfg(unix)`)

# Licence texts recognised as the standard text of an SPDX id, for crates that ship no licence file of their own.
STANDARD_MARKERS = {
    'Apache-2.0': ('apache license', 'version 2.0', 'terms and conditions for use', 'end of terms and conditions'),
    'MIT': ('permission is hereby granted, free of charge', 'the software is provided "as is"'),
}


# ---------------------------------------------------------------- cargo metadata and the dependency graph


def cargo_metadata(root: Path = ROOT) -> dict:
    """``cargo metadata`` for the workspace at ``root``: offline first, then allowed to fetch the crate sources."""
    base = ['cargo', 'metadata', '--format-version', '1', '--locked', '--manifest-path', str(root / 'Cargo.toml')]
    try:
        out = subprocess.run([*base, '--offline'], cwd=root, capture_output=True, text=True, check=True).stdout
    except subprocess.CalledProcessError:
        result = subprocess.run(base, cwd=root, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f'cargo metadata failed:\n{result.stderr}') from None
        out = result.stdout
    return json.loads(out)


def _tokens(expr: str) -> list[str]:
    return re.findall(r'"[^"]*"|[A-Za-z_][A-Za-z0-9_\-]*|[(),=]', expr)


def _eval_cfg(tokens: list[str], pos: int, platform: dict[str, set[str]]) -> tuple[bool, int]:
    """Evaluate the cfg predicate starting at ``tokens[pos]``; return its value and the position after it."""
    name = tokens[pos]
    pos += 1
    if pos < len(tokens) and tokens[pos] == '(':  # all(...), any(...), not(...)
        values = []
        pos += 1
        while tokens[pos] != ')':
            value, pos = _eval_cfg(tokens, pos, platform)
            values.append(value)
            if tokens[pos] == ',':
                pos += 1
        pos += 1
        if name == 'all':
            return all(values), pos
        if name == 'any':
            return any(values), pos
        if name == 'not':
            return not values[0], pos
        raise ValueError(f'unknown cfg operator {name!r}')
    if pos < len(tokens) and tokens[pos] == '=':  # key = "value"
        value = tokens[pos + 1].strip('"')
        return value in platform.get(name, set()), pos + 2
    return name in PLATFORM_FLAGS, pos  # a bare name: unix, windows, miri, ...


def target_applies(target: str | None) -> bool:
    """Whether a dependency edge's ``target`` applies to a release platform (None: every platform)."""
    if target is None:
        return True
    if not target.startswith('cfg('):
        return target in PLATFORMS  # a plain target triple
    tokens = _tokens(target[len('cfg(') : -1])
    for platform in PLATFORMS.values():
        value, pos = _eval_cfg(tokens, 0, platform)
        if pos != len(tokens):
            raise ValueError(f'cannot parse target {target!r}')
        if value:
            return True
    return False


def _declaration_active(declaration: dict, parent: dict, features: set[str]) -> bool:
    """Whether a dependency declared in ``parent``'s manifest is switched on: not optional, or enabled by one of the
    parent's resolved ``features`` (its implicit feature, ``dep:name`` or ``name/feature``; not ``name?/feature``)."""
    if not declaration['optional']:
        return True
    key = declaration.get('rename') or declaration['name']
    if key in features:
        return True
    enables = (item for feature in features for item in parent['features'].get(feature, ()))
    return any(item == f'dep:{key}' or item.startswith(f'{key}/') for item in enables)


def is_linked_edge(dep: dict, parent: dict, child: dict, features: set[str]) -> bool:
    """The edge rule. cargo metadata merges every declaration of a dependency into one edge, so an edge is followed
    when ``dep_kinds`` has an entry with ``kind`` null (a normal dependency; 'dev' and 'build' ones are not linked
    into the library) and a ``target`` that is null or applies to Linux x86_64 / aarch64, gnu or musl (see
    ``target_applies``), and the parent's manifest declares the child with that kind and target either non-optional
    or enabled by the parent's resolved features. Without that last check an optional dependency declared for Linux
    but enabled only on another platform (rustix's errno), or an optional one that is only a dev-dependency in
    practice (time's time-macros), would be listed; with it the set matches ``cargo tree -e normal --target ...``.
    """
    for kind in dep['dep_kinds']:
        if kind['kind'] is not None or not target_applies(kind['target']):
            continue
        declarations = [
            d
            for d in parent['dependencies']
            if d['name'] == child['name'] and d['kind'] is None and d['target'] == kind['target']
        ]
        if not declarations or any(_declaration_active(d, parent, features) for d in declarations):
            return True
    return False


def linked_packages(metadata: dict) -> list[dict]:
    """The packages compiled into memsift's library, memsift excluded, sorted by name and version."""
    packages = {package['id']: package for package in metadata['packages']}
    nodes = {node['id']: node for node in metadata['resolve']['nodes']}
    roots = [pid for pid in metadata['workspace_members'] if packages[pid]['name'] == ROOT_PACKAGE]
    if len(roots) != 1:
        raise SystemExit(f'cannot find the {ROOT_PACKAGE} package in cargo metadata')
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = nodes[stack.pop()]
        parent, features = packages[node['id']], set(node['features'])
        for dep in node['deps']:
            if dep['pkg'] not in seen and is_linked_edge(dep, parent, packages[dep['pkg']], features):
                seen.add(dep['pkg'])
                stack.append(dep['pkg'])
    seen.difference_update(roots)
    return sorted((packages[pid] for pid in seen), key=lambda p: (p['name'], _version_key(p['version'])))


def _version_key(version: str) -> tuple:
    return tuple((0, int(part), '') if part.isdigit() else (1, 0, part) for part in re.split(r'[.+-]', version))


def computed_crates(root: Path = ROOT) -> set[tuple[str, str]]:
    """The (name, version) pairs the generated file lists, for ``root``'s current Cargo.lock."""
    return {(p['name'], p['version']) for p in linked_packages(cargo_metadata(root))}


# ---------------------------------------------------------------- licence texts


def _clean(text: str) -> str:
    lines = [line.rstrip() for line in text.replace('\r\n', '\n').replace('\r', '\n').split('\n')]
    return '\n'.join(lines).strip('\n')


def _normal_hash(text: str) -> str:
    return hashlib.sha256(' '.join(text.split()).encode()).hexdigest()


def _standard_id(text: str) -> str | None:
    lowered = ' '.join(text.lower().split())
    for spdx, markers in STANDARD_MARKERS.items():
        if all(marker in lowered for marker in markers):
            return spdx
    return None


@dataclass
class Text:
    """A distinct licence text (by whitespace-normalised hash) and the crate files that carry it."""

    body: str
    number: int = 0
    users: list[str] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f'text-{self.number}'


@dataclass
class Crate:
    name: str
    version: str
    licence: str
    repository: str
    texts: list[tuple[str, str]]  # (file name, hash of a Text)
    notices: list[tuple[str, str]]  # (file name, verbatim body)

    @property
    def label(self) -> str:
        return f'{self.name} {self.version}'


def licence_files(package: dict) -> list[Path]:
    """The crate's licence files: top-level LICENSE*, LICENCE*, COPYING*, NOTICE*, COPYRIGHT* and ``license_file``."""
    crate_dir = Path(package['manifest_path']).parent
    files = {p for p in crate_dir.iterdir() if p.is_file() and p.name.lower().startswith(LICENCE_PREFIXES)}
    if package.get('license_file'):
        extra = crate_dir / package['license_file']
        if extra.is_file():
            files.add(extra)
    return sorted(files, key=lambda p: (p.name.lower(), p.name))


def collect(packages: Iterable[dict]) -> tuple[list[Crate], dict[str, Text]]:
    crates: list[Crate] = []
    texts: dict[str, Text] = {}
    for package in packages:
        crate = Crate(
            name=package['name'],
            version=package['version'],
            licence=package.get('license') or f'see {package.get("license_file")}',
            repository=package.get('repository') or package.get('homepage') or '',
            texts=[],
            notices=[],
        )
        crate_dir = Path(package['manifest_path']).parent
        for path in licence_files(package):
            body = _clean(path.read_text(encoding='utf-8', errors='replace'))
            rel = path.relative_to(crate_dir).as_posix() if path.is_relative_to(crate_dir) else path.name
            if not body:
                continue
            if path.name.lower().startswith(VERBATIM_PREFIXES):
                crate.notices.append((rel, body))
                continue
            digest = _normal_hash(body)
            texts.setdefault(digest, Text(body)).users.append(f'{crate.label} (`{rel}`)')
            crate.texts.append((rel, digest))
        crates.append(crate)
    return crates, texts


def _standard_texts(texts: dict[str, Text]) -> dict[str, str]:
    """SPDX id -> hash of the text used as that id's standard one: the most widely shipped copy; for MIT, preferring a
    copy without a copyright line (one that names no particular holder)."""
    chosen: dict[str, str] = {}
    for spdx in STANDARD_MARKERS:
        candidates = [(digest, text) for digest, text in texts.items() if _standard_id(text.body) == spdx]

        def rank(item: tuple[str, Text], spdx: str = spdx) -> tuple:
            digest, text = item
            names_holder = spdx == 'MIT' and 'copyright' in text.body.lower()
            return (names_holder, -len(text.users), digest)

        if candidates:
            chosen[spdx] = min(candidates, key=rank)[0]
    return chosen


def _spdx_ids(expression: str) -> list[str]:
    ids = re.findall(r'[A-Za-z0-9.\-+]+', expression.replace('/', ' OR '))
    return sorted({i for i in ids if i not in {'OR', 'AND', 'WITH', 'or', 'and'}}, key=str.lower)


# ---------------------------------------------------------------- rendering


def _fence(body: str) -> str:
    longest = max((len(run) for run in re.findall(r'`+', body)), default=0)
    return '`' * max(3, longest + 1)


def _block(body: str) -> list[str]:
    fence = _fence(body)
    return [f'{fence}text', body, fence]


def _cell(value: str) -> str:
    return value.replace('|', '\\|')


def render(packages: list[dict]) -> str:
    crates, texts = collect(packages)
    standard = _standard_texts(texts)
    by_repository: dict[str, Crate] = {}
    for crate in crates:
        if crate.texts and crate.repository:
            by_repository.setdefault(crate.repository.rstrip('/').lower(), crate)

    # Crates without a licence file point at a sibling crate's texts (same repository) or at the standard texts.
    fallback: dict[str, tuple[str, list[str]]] = {}
    for crate in crates:
        if crate.texts:
            continue
        sibling = by_repository.get(crate.repository.rstrip('/').lower())
        if sibling is not None:
            fallback[crate.label] = (f'sibling:{sibling.label}', [d for _, d in sibling.texts])
            continue
        digests = [standard[i] for i in _spdx_ids(crate.licence) if i in standard]
        fallback[crate.label] = ('standard', digests)
        for digest in digests:
            texts[digest].users.append(f'{crate.label} (standard text, no licence file shipped)')

    # Number the texts in order of first use, crate by crate.
    order: list[str] = []
    for crate in crates:
        for digest in [d for _, d in crate.texts] + fallback.get(crate.label, ('', []))[1]:
            if digest not in order:
                order.append(digest)
    for number, digest in enumerate(order, 1):
        texts[digest].number = number

    out = [
        '# Third-party licences',
        '',
        "memsift's compiled extension (`memsift._core`) statically links the Rust crates below, including the C++ of",
        'usearch and the C of numkong that their build scripts compile. This file gathers their licences and notices.',
        "memsift's own licence is in [LICENSE](LICENSE).",
        '',
        'Generated by `python scripts/third_party_licenses.py` from `cargo metadata` (normal dependencies of memsift',
        'on Linux x86_64 / aarch64; dev- and build-dependencies are not linked and are left out); do not edit by hand.',
        'Each distinct licence text is printed once, under [Licence texts](#licence-texts), and referred to by number;',
        'NOTICE and COPYRIGHT files are printed in full under their crate.',
        '',
        '## Summary',
        '',
        f'{len(crates)} crates.',
        '',
        '| Crate | Version | Licence |',
        '| --- | --- | --- |',
    ]
    out += [f'| {_cell(c.name)} | {_cell(c.version)} | {_cell(c.licence)} |' for c in crates]
    out += ['', '## Crates', '']
    for crate in crates:
        out += [f'### {crate.label}', '', f'- Licence: `{crate.licence}`']
        if crate.repository:
            out.append(f'- Repository: <{crate.repository}>')
        for rel, digest in crate.texts:
            out.append(f'- `{rel}`: [Text {texts[digest].number}](#{texts[digest].anchor})')
        if not crate.texts:
            how, digests = fallback[crate.label]
            refs = ', '.join(f'[Text {texts[d].number}](#{texts[d].anchor})' for d in digests)
            if how.startswith('sibling:'):
                out.append(
                    f'- No licence file ships in this crate; it comes from the same repository as '
                    f'{how.removeprefix("sibling:")}, whose licence texts apply: {refs}.'
                )
            else:
                missing = [i for i in _spdx_ids(crate.licence) if i not in standard]
                line = f'- No licence file ships in this crate; its licence is the standard text of `{crate.licence}`'
                line += f': {refs}' if refs else ''
                if missing:
                    links = ', '.join(f'<https://spdx.org/licenses/{i}.html>' for i in missing)
                    line += f' (not reproduced here: {links})'
                out.append(line + '.')
        for rel, body in crate.notices:
            out += ['', f'`{rel}`:', '', *_block(body)]
        out.append('')
    out += ['## Licence texts', '']
    for digest in order:
        text = texts[digest]
        kind = _standard_id(text.body)
        title = f'Text {text.number}' + (f' ({kind})' if kind else '')
        out += [f'<a id="{text.anchor}"></a>', '', f'### {title}', '', 'Used by: ' + ', '.join(text.users) + '.', '']
        out += [*_block(text.body), '']
    return '\n'.join(out).rstrip('\n') + '\n'


def crates_in_file(text: str) -> set[tuple[str, str]]:
    """The (name, version) pairs listed in a generated file's summary table."""
    rows = re.findall(r'^\| (?!Crate \|)(?!--- \|)([^|\s]+) \| ([^|\s]+) \|', text, flags=re.MULTILINE)
    return set(rows)


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--check', action='store_true', help=f'exit 1 if {OUTPUT_NAME} is not up to date')
    args = parser.parse_args(argv)

    packages = linked_packages(cargo_metadata(ROOT))
    generated = render(packages)
    target = ROOT / OUTPUT_NAME
    if not args.check:
        target.write_text(generated, encoding='utf-8')
        print(f'wrote {target.name}: {len(packages)} crates, {len(generated.encode())} bytes')
        return 0

    committed = target.read_text(encoding='utf-8') if target.is_file() else None
    if committed == generated:
        print(f'{OUTPUT_NAME} is up to date ({len(packages)} crates)')
        return 0
    if committed is None:
        print(f'{OUTPUT_NAME} is missing; run `python scripts/third_party_licenses.py`', file=sys.stderr)
        return 1
    want = {(p['name'], p['version']) for p in packages}
    have = crates_in_file(committed)
    lines = [f'{OUTPUT_NAME} is out of date; run `python scripts/third_party_licenses.py` and commit the result']
    lines += [f'  added:   {n} {v}' for n, v in sorted(want - have)]
    lines += [f'  removed: {n} {v}' for n, v in sorted(have - want)]
    if want == have:
        lines.append('  (same crates; licence texts, metadata or layout differ)')
    print('\n'.join(lines), file=sys.stderr)
    return 1


if __name__ == '__main__':
    sys.exit(main())
