"""How many pairs of results each near-duplicate threshold of ``query.dedupe`` would merge; one JSON line per set.

``memsift.search.dedupe`` folds a result into a better-ranked one when their normalized texts are equal, or when
their word-shingle Jaccard reaches ``NEAR_DUPLICATE`` and they hold the same numbers. This script shows what each
threshold would do:

- ``beir``: the pairs that meet in one result list: the top 30 of each test query (memsift's BM25 over the corpus)
  of every dataset under ``--data-root``. Distinct documents: every merge is a false one (unless the corpus itself
  holds copies; ``corpus_exact_groups`` counts documents whose normalized text repeats).
- ``docs``: every pair of chunks of the repository's Markdown (README, CONTRIBUTING, CHANGELOG, docs/): distinct text.
- ``notes``: synthetic daily notes (``# 2026-MM-DD`` and 1-6 bullets of SciFact sentences, some under section
  headings) paired with an edited copy. Copies that should merge: ``date`` (another date heading), ``reorder`` (the
  bullets shuffled), ``format`` (bullet style, emphasis, punctuation, spacing), ``typo`` (two letters of one word
  swapped). Pairs that should not: ``other`` (another note in the same template, same date), ``value`` (one number in
  a bullet changed: another fact), ``word`` (one word of a bullet replaced by another word: often another fact).

For each set: ``pairs``; ``exact`` (equal normalized text); ``merged``: by threshold, the share (notes) or the count
(beir, docs) of pairs merged, with the number guard (the rule the search uses) and ``jaccard_only`` without it;
``chosen``: what the search's rule merges, and for notes ``chosen_by_bullets`` (the share by the note's number of
bullets); and ``near``: the pairs closest to ``NEAR_DUPLICATE`` on either side, their similarity and text starts.

    .venv/bin/python benches/dedupe.py [--data-root ../shared/data] [--notes 400] [--seed 0]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
from pathlib import Path

import _beir

import memsift
from memsift.search.dedupe import NEAR_DUPLICATE, fingerprint, same_fact, similarity

THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
TOP = 30
"""Results per query whose pairs are compared (the search ranks 2 × limit; 30 covers a maxResults of 15)."""
SHOWN = 3
"""Examples on each side of the threshold."""
REPO = Path(__file__).resolve().parent.parent


def measure(name: str, pairs: list[tuple[str, str]], share: bool = False) -> dict:
    """The line of one set: how many of ``pairs`` each threshold merges, and the examples nearest the chosen one."""
    prints = {text: fingerprint(text) for pair in pairs for text in pair}
    rows = []
    for a, b in pairs:
        fa, fb = prints[a], prints[b]
        rows.append((similarity(fa.shingles, fb.shingles), fa.text == fb.text, fa.numbers == fb.numbers, a, b))

    def merged(t: float, guard: bool) -> float:
        n = sum(1 for sim, exact, numbers, _, _ in rows if exact or (sim >= t and (numbers or not guard)))
        return round(n / len(rows), 4) if share else n

    def example(row: tuple) -> dict:
        sim, _, numbers, a, b = row
        return {'similarity': round(sim, 3), 'sameNumbers': numbers, 'a': _short(a), 'b': _short(b)}

    below = sorted((r for r in rows if not r[1] and r[0] < NEAR_DUPLICATE), key=lambda r: -r[0])[:SHOWN]
    above = sorted((r for r in rows if not r[1] and r[0] >= NEAR_DUPLICATE), key=lambda r: r[0])[:SHOWN]
    by_size: dict[int, list[bool]] = {}
    for _, _, _, a, b in rows:
        by_size.setdefault(sum(line[:2] in ('- ', '* ') for line in a.splitlines()), []).append(
            same_fact(prints[a], prints[b])
        )
    return {
        'set': name,
        'pairs': len(rows),
        'exact': sum(1 for r in rows if r[1]),
        'merged': {str(t): merged(t, True) for t in THRESHOLDS},
        'jaccard_only': {str(t): merged(t, False) for t in THRESHOLDS},
        'chosen': {
            'threshold': NEAR_DUPLICATE,
            'merged': sum(1 for r in rows if same_fact(prints[r[3]], prints[r[4]])),
        },
        **({'chosen_by_bullets': {n: round(sum(v) / len(v), 3) for n, v in sorted(by_size.items())}} if share else {}),
        'near': {'above': [example(r) for r in above], 'below': [example(r) for r in below]},
    }


def _short(text: str, chars: int = 160) -> str:
    text = ' '.join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + '…'


# ---------------------------------------------------------------- the sets


def beir_pairs(path: Path) -> tuple[list[tuple[str, str]], int]:
    """The pairs of documents that meet in one query's top :data:`TOP`, and how many documents repeat another's
    normalized text anywhere in the corpus."""
    data = _beir.load_dataset(path)
    index = memsift.Bm25Index(None)
    index.add(list(range(len(data.docs))), data.doc_ids, ['memory'] * len(data.docs), data.docs)
    index.commit()
    seen: set[tuple[int, int]] = set()
    for _, text in data.queries:
        hits = sorted(i for i, _ in index.search(text, k=TOP))
        seen.update(itertools.combinations(hits, 2))
    texts = [fingerprint(doc).text for doc in data.docs]
    repeats = len(texts) - len(set(texts))
    return [(data.docs[a], data.docs[b]) for a, b in sorted(seen)], repeats


def docs_pairs() -> list[tuple[str, str]]:
    files = [REPO / 'README.md', REPO / 'CONTRIBUTING.md', REPO / 'CHANGELOG.md', *sorted((REPO / 'docs').glob('*.md'))]
    chunks = [c.text for f in files if f.exists() for c in memsift.chunk_markdown(f.read_text(encoding='utf-8'))]
    return list(itertools.combinations(chunks, 2))


def sentences(path: Path, rng: random.Random) -> list[str]:
    """SciFact sentences of 6-30 words, shuffled: the facts of the synthetic notes."""
    out = []
    for doc in _beir.load_dataset(path).docs:
        for sentence in re.split(r'(?<=[.!?])\s+', doc.replace('\n', ' ')):
            if 6 <= len(sentence.split()) <= 30:
                out.append(sentence.strip())
    rng.shuffle(out)
    return out


def note(date: str, bullets: list[str], sections: bool, style: str = '-') -> str:
    lines = [f'# {date}', '']
    for i, bullet in enumerate(bullets):
        if sections and i in (0, (len(bullets) + 1) // 2):
            lines += ['', '## Decisions' if i == 0 else '## Follow-ups']
        lines.append(f'{style} {bullet}')
    return '\n'.join(lines) + '\n'


def swap_letters(rng: random.Random, sentence: str) -> str:
    words = sentence.split()
    long = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    if not long:
        return sentence + ' (fixed)'
    i = rng.choice(long)
    w = words[i]
    j = rng.randrange(1, len(w) - 2)
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return ' '.join(words)


def change_value(rng: random.Random, sentence: str) -> str | None:
    """One number of ``sentence`` changed (``None`` when it has none)."""
    numbers = list(re.finditer(r'\d+', sentence))
    if not numbers:
        return None
    m = rng.choice(numbers)
    return sentence[: m.start()] + str(int(m.group()) + rng.randint(1, 9)) + sentence[m.end() :]


def change_word(rng: random.Random, sentence: str, vocabulary: list[str]) -> str:
    words = sentence.split()
    i = rng.randrange(len(words))
    words[i] = rng.choice(vocabulary)
    return ' '.join(words)


def notes_sets(path: Path, count: int, seed: int) -> dict[str, list[tuple[str, str]]]:
    rng = random.Random(seed)
    facts = sentences(path, rng)
    vocabulary = sorted({w for f in facts[:2000] for w in f.split() if w.isalpha() and len(w) > 3})
    sets: dict[str, list[tuple[str, str]]] = {k: [] for k in ('date', 'reorder', 'format', 'typo', 'other', 'value')}
    sets['word'] = []
    pool = iter(facts)
    for n in range(count):
        size = 1 + n % 6
        bullets = [next(pool) for _ in range(size)]
        sections = n % 3 == 0
        date = f'2026-{1 + n % 12:02d}-{1 + n % 28:02d}'
        base = note(date, bullets, sections)
        sets['date'].append((base, note(f'2026-{1 + n % 12:02d}-{2 + n % 27:02d}', bullets, sections)))
        if size > 1:
            shuffled = bullets[:]
            while shuffled == bullets:
                rng.shuffle(shuffled)
            sets['reorder'].append((base, note(date, shuffled, sections)))
        styled = [b.rstrip('.') + ';' if i % 2 else b.replace(' ', '  ', 1) for i, b in enumerate(bullets)]
        first = styled[0].split(' ', 1)
        styled[0] = f'**{first[0]}** {first[1]}' if len(first) == 2 else styled[0]
        sets['format'].append((base, note(date, styled, sections, style='*')))
        i = rng.randrange(size)
        sets['typo'].append(
            (base, note(date, [*bullets[:i], swap_letters(rng, bullets[i]), *bullets[i + 1 :]], sections))
        )
        sets['other'].append((base, note(date, [next(pool) for _ in range(size)], sections)))
        changed = change_value(rng, bullets[i])
        if changed is not None:
            sets['value'].append((base, note(date, [*bullets[:i], changed, *bullets[i + 1 :]], sections)))
        sets['word'].append(
            (base, note(date, [*bullets[:i], change_word(rng, bullets[i], vocabulary), *bullets[i + 1 :]], sections))
        )
    return sets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', type=Path, default=REPO.parent / 'shared' / 'data')
    parser.add_argument('--notes', type=int, default=400, help='synthetic daily notes (each with one copy per edit)')
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    for path in _beir.dataset_dirs(args.data_root):
        pairs, repeats = beir_pairs(path)
        print(json.dumps({**measure(f'beir/{path.name}', pairs), 'corpus_exact_groups': repeats}, ensure_ascii=False))
        sys.stdout.flush()
    print(json.dumps(measure('docs', docs_pairs()), ensure_ascii=False))
    scifact = args.data_root / 'scifact'
    if scifact.is_dir():
        for name, pairs in notes_sets(scifact, args.notes, args.seed).items():
            print(json.dumps(measure(f'notes/{name}', pairs, share=True), ensure_ascii=False))


if __name__ == '__main__':
    main()
