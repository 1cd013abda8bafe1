"""Conversational retrieval: can ``sessions_search`` find the message that answers a question asked in plain words?

The dev set is built from the shared retrieval sets, whose labels point into single sentences:

* **SciFact** (English): every abstract becomes a run of messages, its sentences (alternating user and assistant
  turns); each claim with labelled evidence is a question, and its evidence sentences are the answer messages.
* **CMRC 2018** (Chinese): every passage becomes a run of messages, its sentences; each question's answer messages
  are the sentences of its passage that contain the labelled answer text.

Four consecutive documents make one session, so a session changes topic as real ones do.

Every question is searched over all sessions of both sets at once (about 64,000 messages), so each set's sessions
are the other's distractors. For each method the bench reports the share of questions answered (any hit) and
evidence recall@5 / @10 (an answer message among the first k):

* ``all-terms``: OpenClaw's ``sessions_search`` (``tools.sessions.search.mode: all-terms``);
* ``ranked``: memsift's default, all-terms hits first, topped up with ranked partial matches;
* ``ranked+local``: ranked with the semantic leg on the local model (all-MiniLM-L6-v2 by default, English-only, so
  Chinese questions keep the keyword answer; ``--model multilingual-e5-small`` reads both languages);
* ``bm25s``: plain BM25 over the same messages (bm25s with PyStemmer and its English stopwords; jieba words for
  Chinese), the reference a user would reach for.

``--latency`` times ``SessionStore.search`` (p50/p95, ms) on a store grown to ``--messages`` messages (default
100,000) by adding more copies of the sessions.

Examples (from the repository root; needs ``pip install -e '.[bench]' PyStemmer``):
    .venv/bin/python benches/conversations.py
    .venv/bin/python benches/conversations.py --methods ranked+local --model multilingual-e5-small
    .venv/bin/python benches/conversations.py --latency --messages 100000
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import _beir

from memsift.sessions import SessionStore

CALLER = 'agent:main:main'
_ENGLISH_SENTENCE = re.compile(r'(?<=[.!?])\s+(?=[A-Z0-9(\[])')
_CHINESE_SENTENCE = re.compile(r'(?<=[。！？；])')
DOCUMENTS_PER_SESSION = 4


@dataclass
class Conversations:
    """Sessions of messages and questions whose answers are known messages."""

    sessions: dict[str, list[str]] = field(default_factory=dict)
    """session key -> message texts in order."""
    questions: list[tuple[str, str, str, set[tuple[str, int]]]] = field(default_factory=list)
    """``(set name, question id, text, {(session key, message index)})``."""


def _message_id(index: int) -> str:
    return f'm{index}'


def scifact(root: Path, into: Conversations) -> None:
    """SciFact abstracts as sessions, claims with labelled evidence sentences as questions."""
    corpus = {d['_id']: d for d in _beir.read_jsonl(root / 'corpus.jsonl')}
    for doc_id, doc in corpus.items():
        into.sessions[f'agent:main:scifact-{doc_id}'] = [s for s in _ENGLISH_SENTENCE.split(doc['text']) if s.strip()]
    for query in _beir.read_jsonl(root / 'queries.jsonl'):
        answers = {
            (f'agent:main:scifact-{doc_id}', i)
            for doc_id, labels in (query.get('metadata') or {}).items()
            for label in labels
            for i in label['sentences']
            if i < len(into.sessions.get(f'agent:main:scifact-{doc_id}', ()))
        }
        if answers:
            into.questions.append(('scifact', query['_id'], query['text'], answers))


def cmrc(root: Path, into: Conversations) -> None:
    """CMRC 2018 passages as sessions, questions answered by the sentences holding their answer text."""
    for doc in _beir.read_jsonl(root / 'corpus.jsonl'):
        into.sessions[f'agent:main:cmrc-{doc["_id"]}'] = [s for s in _CHINESE_SENTENCE.split(doc['text']) if s.strip()]
    qrels = _beir.load_qrels(root / 'qrels' / 'test.tsv')
    for query in _beir.read_jsonl(root / 'queries.jsonl'):
        texts = (query.get('metadata') or {}).get('answers') or []
        answers = {
            (key, i)
            for doc_id in qrels.get(query['_id'], {})
            for key in [f'agent:main:cmrc-{doc_id}']
            for i, message in enumerate(into.sessions.get(key, ()))
            if any(t and t in message for t in texts)
        }
        if answers:
            into.questions.append(('cmrc2018', query['_id'], query['text'], answers))


def build(data_root: Path) -> Conversations:
    """The dev set from the shared data (exits with a reason when a set is missing)."""
    documents = Conversations()
    for name, load in (('scifact', scifact), ('cmrc2018', cmrc)):
        if not (data_root / name / 'corpus.jsonl').is_file():
            _beir.fail(f'{data_root / name} is missing; set --data-root')
        load(data_root / name, documents)
    # Documents -> sessions of DOCUMENTS_PER_SESSION each, their answers renumbered.
    conversations = Conversations()
    moved: dict[tuple[str, int], tuple[str, int]] = {}
    for n, (key, messages) in enumerate(documents.sessions.items()):
        session = f'{key.rsplit("-", 1)[0]}-{n // DOCUMENTS_PER_SESSION}'
        held = conversations.sessions.setdefault(session, [])
        moved.update({(key, i): (session, len(held) + i) for i in range(len(messages))})
        held.extend(messages)
    conversations.questions = [
        (name, qid, text, {moved[a] for a in answers})
        for name, qid, text, answers in documents.questions
        if text.strip()  # a blank question is refused by sessions_search (InvalidInputError)
    ]
    return conversations


def fill(store: SessionStore, sessions: dict[str, list[str]], copies: int = 1) -> int:
    """Append every session's messages to ``store`` (``copies`` times, under distinct keys); returns the count."""
    count = 0
    for copy in range(copies):
        for key, messages in sessions.items():
            events = [
                {
                    'type': 'message',
                    'id': _message_id(i),
                    'timestamp': 1_700_000_000_000 + i,
                    'message': {'role': 'user' if i % 2 == 0 else 'assistant', 'content': text},
                }
                for i, text in enumerate(messages)
            ]
            store.append_many(key if copy == 0 else f'{key}-copy{copy}', events)
            count += len(events)
    return count


def store_search(store: SessionStore, limit: int) -> Callable[[str], list[tuple[str, int]]]:
    """``(session key, message index)`` of ``sessions_search`` hits."""

    def search(question: str) -> list[tuple[str, int]]:
        hits = store.search(question, CALLER, limit=limit)['results']
        return [(h['sessionKey'], int(h['messageId'][1:])) for h in hits]

    return search


def bm25s_search(conversations: Conversations, limit: int) -> Callable[[str], list[tuple[str, int]]]:
    """Plain BM25 over the same messages: bm25s, PyStemmer, English stopwords; jieba words for Chinese text."""
    import bm25s
    import jieba
    import Stemmer

    jieba.setLogLevel(60)
    stemmer = Stemmer.Stemmer('english')
    stopwords = set(bm25s.stopwords.STOPWORDS_EN)
    han = re.compile(r'[\u4e00-\u9fff]')

    def tokenize(text: str) -> list[str]:
        if han.search(text):
            return [t.lower() for t in jieba.lcut_for_search(text) if any(c.isalnum() for c in t)]
        words = [w for w in re.findall(r'(?u)\b\w\w+\b', text.lower()) if w not in stopwords]
        return stemmer.stemWords(words)

    ids = [(key, i) for key, messages in conversations.sessions.items() for i in range(len(messages))]
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index([tokenize(t) for ms in conversations.sessions.values() for t in ms], show_progress=False)

    def search(question: str) -> list[tuple[str, int]]:
        tokens = [t for t in tokenize(question) if t in retriever.vocab_dict]
        if not tokens:
            return []
        docs, scores = retriever.retrieve([tokens], k=limit, show_progress=False)
        return [ids[d] for d, s in zip(docs[0], scores[0]) if s > 0]

    return search


def evaluate(conversations: Conversations, method: str, search: Callable[[str], list]) -> Iterator[dict]:
    """One record per set: questions, answered share, evidence recall@5 and @10."""
    by_set: dict[str, list[tuple[bool, bool, bool]]] = {}
    for name, _, text, answers in conversations.questions:
        hits = search(text)
        by_set.setdefault(name, []).append(
            (bool(hits), any(h in answers for h in hits[:5]), any(h in answers for h in hits[:10]))
        )
    for name, rows in by_set.items():
        yield {
            'set': name,
            'method': method,
            'questions': len(rows),
            'answered': round(sum(r[0] for r in rows) / len(rows), 4),
            'recall@5': round(sum(r[1] for r in rows) / len(rows), 4),
            'recall@10': round(sum(r[2] for r in rows) / len(rows), 4),
        }


class RandomVectors:
    """A stand-in provider for timing only: instant random unit vectors (the search cost does not depend on what
    the vectors mean; the query embedding is excluded from the timing, as the target says)."""

    id, model, dims = 'random', 'random', 384

    def __init__(self) -> None:
        import numpy as np

        self._np, self._rng = np, np.random.default_rng(7)

    def embed_query(self, text: str):
        return self._rng.standard_normal(self.dims).astype(self._np.float32)

    def embed_documents(self, texts):
        return self._rng.standard_normal((len(texts), self.dims)).astype(self._np.float32)


def latency(conversations: Conversations, messages: int, directory: Path) -> Iterator[dict]:
    """p50 / p95 of ``SessionStore.search`` over a store of about ``messages`` messages: all-terms, ranked, and
    ranked with a vector leg of 384-dim vectors for every message."""
    per_copy = sum(len(m) for m in conversations.sessions.values())
    copies = max(1, round(messages / per_copy))
    questions = [text for _, _, text, _ in conversations.questions][:: max(1, len(conversations.questions) // 400)]
    for method in ('all-terms', 'ranked', 'ranked+vectors'):
        mode = 'all-terms' if method == 'all-terms' else 'ranked'
        with SessionStore(directory / 'latency.sqlite', visibility='agent', search_mode=mode) as store:
            if method == 'ranked+vectors':
                store.use_embeddings(RandomVectors(), background=False)  # type: ignore[arg-type]
                assert store.vectors is not None
                store.vectors.embed_pending()
            if method == 'all-terms':
                start = time.perf_counter()
                count = fill(store, conversations.sessions, copies)
                build_s = time.perf_counter() - start
            else:
                count = sum(s['events'] for s in store.sessions())
                if not count:
                    count = fill(store, conversations.sessions, copies)
                build_s = None
            start = time.perf_counter()
            store.search(questions[0], CALLER, limit=10)  # ranked: builds the in-memory index
            first_ms = (time.perf_counter() - start) * 1000
            for q in questions[:20]:  # warm the page cache
                store.search(q, CALLER, limit=10)
            times = []
            for q in questions:
                start = time.perf_counter()
                store.search(q, CALLER, limit=10)
                times.append((time.perf_counter() - start) * 1000)
            times.sort()
            yield {
                'method': method,
                'messages': count,
                'queries': len(times),
                'p50_ms': round(statistics.median(times), 2),
                'p95_ms': round(times[int(len(times) * 0.95)], 2),
                'first_search_ms': round(first_ms, 1),
                **({'build_s': round(build_s, 1)} if build_s is not None else {}),
            }


def main() -> None:
    """Build the dev set, run every method and print one JSON line per set and method."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', type=Path, default=_beir.DEFAULT_DATA_ROOT, help='the shared data sets')
    parser.add_argument(
        '--methods', default='all-terms,ranked,bm25s', help='comma-separated: all-terms, ranked, ranked+local, bm25s'
    )
    parser.add_argument('--model', help='the local model of ranked+local (default all-MiniLM-L6-v2)')
    parser.add_argument('--latency', action='store_true', help='time searches on a grown store instead')
    parser.add_argument('--messages', type=int, default=100_000, help='store size for --latency')
    parser.add_argument('--questions', type=int, help='use every n-th question so that about this many remain')
    args = parser.parse_args()
    conversations = build(args.data_root)
    if args.questions:
        step = max(1, len(conversations.questions) // args.questions)
        conversations.questions = conversations.questions[::step]
    with tempfile.TemporaryDirectory() as tmp:
        if args.latency:
            for record in latency(conversations, args.messages, Path(tmp)):
                print(json.dumps(record), flush=True)
            return
        stores: dict[str, SessionStore] = {}
        for method in args.methods.split(','):
            if method == 'bm25s':
                search = bm25s_search(conversations, 10)
            elif method in ('all-terms', 'ranked', 'ranked+local'):
                mode = 'all-terms' if method == 'all-terms' else 'ranked'
                store = SessionStore(Path(tmp) / f'{method}.sqlite', visibility='agent', search_mode=mode)
                stores[method] = store
                fill(store, conversations.sessions)
                if method == 'ranked+local':
                    from memsift.config import load_config
                    from memsift.providers.local import LocalEmbeddings

                    search_config = {'provider': 'local', **({'model': args.model} if args.model else {})}
                    provider = LocalEmbeddings(load_config({'memory': {'search': search_config}}))
                    store.use_embeddings(provider, background=False)
                    start = time.perf_counter()
                    assert store.vectors is not None
                    embedded = store.vectors.embed_pending()
                    print(json.dumps({'embedded': embedded, 'embed_s': round(time.perf_counter() - start)}), flush=True)
                search = store_search(store, 10)
            else:
                sys.exit(f'unknown method {method!r}')
            for record in evaluate(conversations, method, search):
                print(json.dumps(record), flush=True)
        for store in stores.values():
            store.close()


if __name__ == '__main__':
    main()
