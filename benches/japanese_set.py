"""Build a Japanese retrieval set in BEIR layout from Debian's Japanese manual pages (``manpages-ja``, JM Project).

Each page's description (``説明``) section is a document, and its one-line summary from the name section is
the query (``ls - ディレクトリの内容をリスト表示する`` gives ``ディレクトリの内容をリスト表示する``); pages that
share a summary are all relevant to it. Queries that name the command are dropped, so a hit cannot come from the
command's name alone. The pages are read from ``/usr/share/man/ja`` when the package is installed, else from
``--deb`` (``apt-get download manpages-ja``); the set is written outside the repository.

Example (from the repository root):
    (cd /tmp && apt-get download manpages-ja)
    .venv/bin/python benches/japanese_set.py --deb /tmp/manpages-ja_*.deb --out /tmp/manpages-ja
    .venv/bin/python benches/quality.py --data /tmp/manpages-ja --mode semantic --model multilingual-e5-small
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import tempfile
from pathlib import Path

NAME_HEADINGS = ('名前', '名称', 'NAME')
DESCRIPTION_HEADINGS = ('説明', '詳細', 'DESCRIPTION')
MAX_DOCUMENT = 2000
"""Characters of the description kept per document (a long page's start says what it does)."""


def roff_to_text(source: str) -> list[tuple[str, str]]:
    """``(section heading, plain text)`` per ``.SH`` section of a roff man page: macros dropped, font escapes
    removed, the text of ``.B``/``.I``-style lines kept."""
    sections: list[tuple[str, list[str]]] = [('', [])]
    for line in source.splitlines():
        if line.startswith(('.\\"', '\'\\"')):
            continue
        if line.startswith('.SH'):
            sections.append((line[3:].strip().strip('"'), []))
            continue
        if line.startswith('.'):
            macro, _, rest = line.partition(' ')
            if macro not in ('.B', '.I', '.BR', '.IR', '.BI', '.IB', '.RB', '.RI', '.SM') or not rest:
                continue
            line = rest.replace('"', '')
        line = re.sub(r'\\f(\(..|\[[^]]*\]|.)', '', line)
        line = re.sub(r'\\[/,]', '', line).replace('\\-', '-').replace('\\&', '').replace('\\e', '\\')
        line = re.sub(r'\\\((..)', ' ', line)
        sections[-1][1].append(line)
    return [(heading, ' '.join(' '.join(lines).split())) for heading, lines in sections]


def page_entry(path: Path) -> tuple[str, str, str] | None:
    """``(command, summary, description)`` of one page, or ``None`` when a part is missing."""
    try:
        sections = dict(roff_to_text(gzip.decompress(path.read_bytes()).decode('utf-8')))
    except (OSError, UnicodeDecodeError, EOFError):
        return None
    name = next((sections[h] for h in NAME_HEADINGS if h in sections), '')
    description = next((sections[h] for h in DESCRIPTION_HEADINGS if h in sections), '')
    command, dash, summary = name.partition(' - ')
    if not dash or len(summary) < 6 or len(description) < 40:
        return None
    summary = summary.strip()
    names = {n.strip() for n in command.split(',')}
    if any(n and n.lower() in summary.lower() for n in names):
        return None
    return command.strip(), summary, description[:MAX_DOCUMENT]


def man_root(deb: Path | None, scratch: Path) -> Path:
    installed = Path('/usr/share/man/ja')
    if deb is None:
        if not installed.is_dir():
            raise SystemExit('manpages-ja is not installed: pass --deb (apt-get download manpages-ja)')
        return installed
    subprocess.run(['dpkg-deb', '-x', str(deb), str(scratch)], check=True)
    return scratch / 'usr' / 'share' / 'man' / 'ja'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--deb', type=Path, help='a downloaded manpages-ja .deb (else the installed pages)')
    parser.add_argument('--out', type=Path, required=True, help='where to write corpus.jsonl, queries.jsonl, qrels/')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        pages = sorted(man_root(args.deb, Path(scratch)).glob('man*/*.gz'))
        entries = [(path.name.removesuffix('.gz'), entry) for path in pages if (entry := page_entry(path))]
    by_summary: dict[str, list[str]] = {}
    for doc_id, (_, summary, _) in entries:
        by_summary.setdefault(summary, []).append(doc_id)
    (args.out / 'qrels').mkdir(parents=True, exist_ok=True)
    with (args.out / 'corpus.jsonl').open('w', encoding='utf-8') as corpus:
        for doc_id, (_, _, description) in entries:
            corpus.write(json.dumps({'_id': doc_id, 'title': '', 'text': description}, ensure_ascii=False) + '\n')
    qrels_path = args.out / 'qrels' / 'test.tsv'
    with (args.out / 'queries.jsonl').open('w', encoding='utf-8') as queries, qrels_path.open('w') as qrels:
        qrels.write('query-id\tcorpus-id\tscore\n')
        for number, (summary, doc_ids) in enumerate(sorted(by_summary.items())):
            queries.write(json.dumps({'_id': f'q{number}', 'text': summary}, ensure_ascii=False) + '\n')
            qrels.writelines(f'q{number}\t{doc_id}\t1\n' for doc_id in doc_ids)
    (args.out / 'SOURCE.md').write_text(
        'Built by benches/japanese_set.py from Debian manpages-ja (JM Project translations; each page keeps the\n'
        "licence of its original manual page). Document: a page's 説明 section; query: its one-line summary.\n"
    )
    print(f'{len(entries)} documents, {len(by_summary)} queries in {args.out}')


if __name__ == '__main__':
    main()
