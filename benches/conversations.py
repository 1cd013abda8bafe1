"""Conversational retrieval: can ``sessions_search`` find the message that answers a question asked in plain words?

The dev set is built from three sets (``--sets``, all by default); the first two are the shared retrieval sets,
whose labels point into single sentences:

* **SciFact** (English): every abstract becomes a run of messages, its sentences (alternating user and assistant
  turns); each claim with labelled evidence is a question, and its evidence sentences are the answer messages.
* **CMRC 2018** (Chinese): every passage becomes a run of messages, its sentences; each question's answer messages
  are the sentences of its passage that contain the labelled answer text.
* **Chit Chat** (English, real chats): the BYU Perception, Control and Cognition lab's Chit Chat Challenge, 7,168
  open-domain conversations between two people (138k turns, with real timestamps and anonymous sender ids), from
  the ``chitchat-dataset`` package on PyPI (0.9.0, MIT licence, the data ships inside it; the set is skipped with a
  note when it is not installed). Each conversation is a session (``--haystack``: the first N by id, default 2,000;
  0 for none) and each turn (one sender's consecutive messages) a message, its first sender the user; the
  questions are known-item probes as ``memsift eval`` makes them: ``--chitchat-questions`` turns of at least eight
  words (default 300, picked by ``--seed``), each cut to a half-remembered 50-70 % of its content words; the turn
  is the one answer.

Four consecutive documents of SciFact and CMRC make one session, so a session changes topic as real ones do; they
get synthetic timestamps, the chats their own.

Every question is searched over all sessions of all sets at once (about 59,000 messages from SciFact and CMRC, and
about 40,000 chat turns at the default haystack), so each set's sessions are the others' distractors. For each
method the bench reports the share of questions answered (any hit), evidence recall@5 / @10 (an answer message
among the first k) and session@5 / @10 (a hit among the first k in a session that holds an answer message: the
right conversation found, if not the right message):

* ``all-terms``: OpenClaw's ``sessions_search`` (``tools.sessions.search.mode: all-terms``);
* ``ranked``: memsift's default, all-terms hits first, topped up with ranked partial matches;
* ``ranked+local``: ranked with the semantic leg on the local model the agent tools give transcripts
  (bge-small-en-v1.5 where its package is installed, else all-MiniLM-L6-v2; both English-only, so Chinese
  questions keep the keyword answer; ``--model`` names another, e.g. ``multilingual-e5-small`` reads both
  languages);
* ``bm25s``: plain BM25 over the same messages (bm25s with PyStemmer and its English stopwords; jieba words for
  Chinese), the reference a user would reach for;
* ``notes``: ``memory_search`` (``MemoryIndex``, keyword only) over daily notes written from the same sessions, as
  OpenClaw's session memory / memory flush writes them: one ``memory/<YYYY-MM-DD>-<n>.md`` per session (the date of
  its first message), a ``# <session key>`` heading, then one ``<role>: <text>`` line per message;
* ``notes+local``: the same with the local model's vector leg merged in (hybrid; the notes' default model,
  all-MiniLM-L6-v2, unless ``--model`` names another).

For ``notes`` and ``notes+local`` a result is a chunk of a note, so ``recall@k`` means "an evidence turn inside one
of the first k chunks"; a chunk holds many turns, so it is not comparable one-to-one with a message-level hit.

``--latency`` times ``SessionStore.search`` (p50/p95, ms) on a store grown to ``--messages`` messages (default
100,000) by adding more copies of the sessions; ``--methods`` picks rows (default all-terms, ranked and
ranked+vectors, random vectors; ``ranked+local`` embeds every message with the local model first, reports messages
per second, and embeds each question inside the timing).

``--locomo [PATH]`` measures LoCoMo-dev instead (``../shared/data/locomo-dev/locomo-dev.json`` by default, read in
place; skipped with a note when missing), as its README says: each of its long conversations is its own haystack
(one ``SessionStore`` or notes workspace per conversation, as the published LoCoMo retrieval figures do); each
session is one transcript, its first speaker the user and the other the assistant, one ``Name: utterance`` message
per turn (image captions left out), stamped from ``session_<n>_date_time`` one minute apart; questions of categories
1-4 (multi-hop, temporal, open-domain, single-hop; category 5, adversarial, has no evidence) are asked an hour after
the conversation's last turn (``now``). Evidence ids that are not ``D<session>:<turn>`` are read leniently and
counted (the first JSON line). Measures per method, model and category: turn recall@5/@10 (an evidence turn among
the first k messages) and session recall@5/@10 (a hit among the first k in an evidence session); for notes each
session is a daily note (``memory/<YYYY-MM-DD>-<n>.md``, its date-time as the heading, one ``Name: utterance`` line
per turn) and turn recall@k is chunk recall@k (an evidence turn inside one of the first k chunks). Methods (default:
all): ``ranked`` (keyword only), ``bm25s`` (on the same messages), ``ranked+local`` and ``notes+local`` once per
``--models`` entry (all-MiniLM-L6-v2, bge-small-en-v1.5, multilingual-e5-small, and ``default``: no model named, as
the agent tools pick it; a model that is not installed is skipped with a note), ``notes`` (keyword only). A model's
message vectors are embedded once per run and shared by its methods. It prints one JSON line per method, model and
category, then Markdown tables; ``--json OUT`` writes every figure and per-question hit, ``--failures OUT`` each
question missed at 5 (JSON lines: conversation, category, question, answer, evidence ids and turns, the first 5
hits with their turn ids).

Examples (from the repository root; needs ``pip install -e '.[bench]' PyStemmer``):
    .venv/bin/python benches/conversations.py
    .venv/bin/python benches/conversations.py --sets chitchat --haystack 7168 --chitchat-questions 1000
    .venv/bin/python benches/conversations.py --methods ranked+local --model multilingual-e5-small
    .venv/bin/python benches/conversations.py --latency --messages 100000
    .venv/bin/python benches/conversations.py --latency --messages 10000 --methods ranked,ranked+local
    .venv/bin/python benches/conversations.py --locomo --json /tmp/locomo.json --failures /tmp/locomo-missed.jsonl
    .venv/bin/python benches/conversations.py --locomo --methods ranked,ranked+local --models bge-small-en-v1.5
"""

from __future__ import annotations

import argparse
import bisect
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import _beir

import memsift
from memsift.index.evaluate import content_units, half_remembered
from memsift.sessions import SessionStore

CALLER = 'agent:main:main'
SETS = ('scifact', 'cmrc2018', 'chitchat')
SYNTHETIC_EPOCH_MS = 1_700_000_000_000
"""The timestamp of a session's first message when the set has none of its own (one ms apart after it)."""
_ENGLISH_SENTENCE = re.compile(r'(?<=[.!?])\s+(?=[A-Z0-9(\[])')
_CHINESE_SENTENCE = re.compile(r'(?<=[。！？；])')
_NEWLINE = re.compile(r'\r\n?|\n')
DOCUMENTS_PER_SESSION = 4
CHITCHAT_MIN_WORDS = 8
"""Words a chat turn needs to make a probe: shorter turns ("lol", "how are you?") are not things one searches for."""


@dataclass
class Conversations:
    """Sessions of messages and questions whose answers are known messages."""

    sessions: dict[str, list[str]] = field(default_factory=dict)
    """session key -> message texts in order."""
    roles: dict[str, list[str]] = field(default_factory=dict)
    """session key -> each message's role, for sessions with real senders (others alternate user, assistant)."""
    timestamps: dict[str, list[int]] = field(default_factory=dict)
    """session key -> each message's time (epoch ms), for sessions with real ones (others get synthetic ones)."""
    questions: list[tuple[str, str, str, set[tuple[str, int]]]] = field(default_factory=list)
    """``(set name, question id, text, {(session key, message index)})``."""
    headings: dict[str, str] = field(default_factory=dict)
    """session key -> its note's heading (default: the key), for sets with one of their own (LoCoMo's dates)."""
    named: bool = False
    """Whether each message already starts with its speaker (``Name: utterance``): its note line is the text alone."""


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


def _epoch_ms(iso: str) -> int:
    """``2018-05-05T21:01:14Z`` -> milliseconds since the epoch (``fromisoformat`` reads ``Z`` only from 3.11)."""
    return int(datetime.fromisoformat(iso.replace('Z', '+00:00')).timestamp() * 1000)


def chitchat(path: Path, into: Conversations, haystack: int, probes: int, seed: int) -> None:
    """The first ``haystack`` Chit Chat conversations (by id) as sessions, one message per turn; up to ``probes``
    of their turns, picked by ``seed``, as half-remembered known-item questions."""
    data = json.loads(path.read_text(encoding='utf-8'))
    turns: list[tuple[str, int, str]] = []  # (session key, message index, text) of every turn kept
    for conv_id in sorted(data)[:haystack]:
        key = f'agent:main:chitchat-{conv_id}'
        first = data[conv_id]['messages'][0][0]['sender']
        messages: list[str] = []
        roles: list[str] = []
        stamps: list[int] = []
        for turn in data[conv_id]['messages']:
            text = ' '.join(m['text'] for m in turn).strip()
            if not text:
                continue  # a dozen turns are blank: nothing to find, and no message to store
            turns.append((key, len(messages), text))
            messages.append(text)
            roles.append('user' if turn[0]['sender'] == first else 'assistant')
            stamps.append(_epoch_ms(turn[0]['timestamp']))
        into.sessions[key], into.roles[key], into.timestamps[key] = messages, roles, stamps
    # A turn said word for word elsewhere ("haha that's so true though!") has no one right answer.
    seen = Counter(text.lower() for _, _, text in turns)
    candidates = [t for t in turns if len(t[2].split()) >= CHITCHAT_MIN_WORDS and seen[t[2].lower()] == 1]
    rng = random.Random(seed)
    # memsift eval's own probe maker: content_units drops stopwords, half_remembered keeps 50-70 % of the rest.
    for n in sorted(rng.sample(range(len(candidates)), min(probes, len(candidates)))):
        key, index, text = candidates[n]
        units = [u.lower() for u in content_units(text)]
        query = half_remembered(units, rng) if len(units) > 1 else ' '.join(units)  # it keeps two words at least
        if query.strip():
            into.questions.append(('chitchat', f'{key.rsplit("chitchat-", 1)[1]}:{index}', query, {(key, index)}))


def build(
    data_root: Path, sets: Sequence[str] = SETS, haystack: int = 2000, probes: int = 300, seed: int = 0
) -> Conversations:
    """The dev set of ``sets`` (exits with a reason when a shared set is missing; skips chitchat with a note when
    its package is not installed, unless it is the only set asked for)."""
    unknown = sorted(set(sets) - set(SETS))
    if unknown:
        _beir.fail(f'unknown set(s) {", ".join(unknown)}; choose from {", ".join(SETS)}')
    documents = Conversations()
    for name, load in (('scifact', scifact), ('cmrc2018', cmrc)):
        if name not in sets:
            continue
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
    if 'chitchat' in sets:
        try:
            import chitchat_dataset
        except ImportError:
            why = 'the chitchat set needs the chitchat-dataset package (pip install chitchat-dataset==0.9.0)'
            if set(sets) == {'chitchat'}:
                _beir.fail(why)
            print(f'skipping chitchat: {why}', file=sys.stderr)
        else:  # the package is its data: dataset.json beside its __init__
            path = Path(chitchat_dataset.__file__).with_name('dataset.json')
            chitchat(path, conversations, haystack, probes, seed)
    return conversations


def fill(
    store: SessionStore,
    sessions: dict[str, list[str]],
    copies: int = 1,
    roles: Mapping[str, Sequence[str]] | None = None,
    timestamps: Mapping[str, Sequence[int]] | None = None,
) -> int:
    """Append every session's messages to ``store`` (``copies`` times, under distinct keys); returns the count.

    A session in ``roles`` / ``timestamps`` takes its messages' roles / times from there; others alternate user and
    assistant, stamped :data:`SYNTHETIC_EPOCH_MS` + their index."""
    roles, timestamps = roles or {}, timestamps or {}
    count = 0
    for copy in range(copies):
        for key, messages in sessions.items():
            role, stamp = roles.get(key), timestamps.get(key)
            events = [
                {
                    'type': 'message',
                    'id': _message_id(i),
                    'timestamp': stamp[i] if stamp else SYNTHETIC_EPOCH_MS + i,
                    'message': {'role': role[i] if role else ('user' if i % 2 == 0 else 'assistant'), 'content': text},
                }
                for i, text in enumerate(messages)
            ]
            store.append_many(key if copy == 0 else f'{key}-copy{copy}', events)
            count += len(events)
    return count


def store_search(
    store: SessionStore, limit: int, now: datetime | None = None
) -> Callable[[str], list[tuple[str, int]]]:
    """``(session key, message index)`` of ``sessions_search`` hits (``now``: the time the question is asked at)."""

    def search(question: str) -> list[tuple[str, int]]:
        hits = store.search(question, CALLER, limit=limit, now=now)['results']
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


@dataclass
class Notes:
    """Daily notes written from the sessions: each session's file and each of its messages' line in it."""

    files: dict[str, str] = field(default_factory=dict)
    """session key -> its note, relative to the workspace (``memory/2023-11-14-1.md``)."""
    sessions: dict[str, str] = field(default_factory=dict)
    """note path -> its session key."""
    lines: dict[str, list[int]] = field(default_factory=dict)
    """session key -> each message's 1-based line in its note."""


def write_notes(conversations: Conversations, root: Path) -> Notes:
    """One note per session under ``root/memory``, as OpenClaw's session memory / memory flush writes them:
    ``memory/<YYYY-MM-DD>-<n>.md`` (the UTC date of the first message, ``n`` counting that date's notes), a
    ``# <session key>`` heading (or the session's own, :attr:`Conversations.headings`), then one ``<role>: <text>``
    line per message (``<text>`` alone when :attr:`Conversations.named`), its newlines made spaces."""
    (root / 'memory').mkdir(parents=True)
    notes = Notes()
    per_date: Counter[str] = Counter()
    for key, messages in conversations.sessions.items():
        roles, stamps = conversations.roles.get(key), conversations.timestamps.get(key)
        first = stamps[0] if stamps else SYNTHETIC_EPOCH_MS
        date = datetime.fromtimestamp(first / 1000, tz=timezone.utc).strftime('%Y-%m-%d')
        per_date[date] += 1
        path = f'memory/{date}-{per_date[date]}.md'
        lines = [f'# {conversations.headings.get(key, key)}']
        notes.lines[key] = []
        for i, text in enumerate(messages):
            role = roles[i] if roles else ('user' if i % 2 == 0 else 'assistant')
            line = _NEWLINE.sub(' ', text)
            lines.append(line if conversations.named else f'{role}: {line}')
            notes.lines[key].append(len(lines))
        (root / path).write_bytes(('\n'.join(lines) + '\n').encode('utf-8'))
        notes.files[key], notes.sessions[path] = path, key
    return notes


def notes_search(
    conversations: Conversations, directory: Path, method: str, model: str | None, now: datetime | None = None
) -> tuple[memsift.MemoryIndex, Callable[[str], list[tuple[str, range]]]]:
    """``memory_search`` over notes written from the sessions (``notes``: keyword only; ``notes+local``: hybrid
    with the local model), temporal decay off (the dates are synthetic); hits are ``(session key, the range of
    message indices whose lines the chunk spans)``; ``now``: the time the question is asked at. The caller closes
    the index."""
    notes = write_notes(conversations, directory / 'workspace')
    local = method == 'notes+local'
    settings = {
        'provider': 'local' if local else 'none',
        **({'model': model} if local and model else {}),
        'store': {'path': str(directory / f'{method}.sqlite')},
        'query': {'hybrid': {'temporalDecay': {'enabled': False}}},
    }
    index = memsift.MemoryIndex(directory / 'workspace', {'agents': {'defaults': {'memorySearch': settings}}})
    if local and index.provider is None:
        index.close()
        _beir.fail(f'{method} needs the local model: {index.resolution.reason}')
    report = index.sync()
    if local:
        print(json.dumps({'embedded': index.chunks_embedded, 'embed_s': round(report.seconds)}), flush=True)

    def search(question: str) -> list[tuple[str, range]]:
        result = index.search(question, max_results=10, min_score=0.0, now=now)
        if result.unavailable:
            _beir.fail(f'{method}: {result.error}')
        hits = []
        for hit in result.results:
            key = notes.sessions[hit.path]
            lines = notes.lines[key]
            first, last = bisect.bisect_left(lines, hit.start_line), bisect.bisect_right(lines, hit.end_line)
            hits.append((key, range(first, last)))
        return hits

    return index, search


def _answers(hit: tuple[str, int | range], answers: set[tuple[str, int]]) -> bool:
    """Whether a hit is an answer message or, for a note's chunk (a range of message indices), holds one."""
    key, where = hit
    if isinstance(where, range):
        return any(k == key and i in where for k, i in answers)
    return hit in answers


def evaluate(conversations: Conversations, method: str, search: Callable[[str], list]) -> Iterator[dict]:
    """One record per set: questions, answered share, evidence recall@5 and @10 (an answer message among the first
    k hits; for notes, among the messages of the first k chunks), session@5 and @10 (a hit among the first k in a
    session that holds an answer message)."""
    by_set: dict[str, list[tuple[bool, bool, bool, bool, bool]]] = {}
    for name, _, text, answers in conversations.questions:
        hits = search(text)
        sessions = {key for key, _ in answers}
        by_set.setdefault(name, []).append(
            (
                bool(hits),
                any(_answers(h, answers) for h in hits[:5]),
                any(_answers(h, answers) for h in hits[:10]),
                any(key in sessions for key, _ in hits[:5]),
                any(key in sessions for key, _ in hits[:10]),
            )
        )
    for name, rows in by_set.items():
        yield {
            'set': name,
            'method': method,
            'questions': len(rows),
            'answered': round(sum(r[0] for r in rows) / len(rows), 4),
            'recall@5': round(sum(r[1] for r in rows) / len(rows), 4),
            'recall@10': round(sum(r[2] for r in rows) / len(rows), 4),
            'session@5': round(sum(r[3] for r in rows) / len(rows), 4),
            'session@10': round(sum(r[4] for r in rows) / len(rows), 4),
        }


LOCOMO_PATH = _beir.DEFAULT_DATA_ROOT / 'locomo-dev' / 'locomo-dev.json'
"""``../shared/data/locomo-dev/locomo-dev.json`` relative to the repository root (read in place, never copied)."""
LOCOMO_CATEGORIES = {1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop'}
"""LoCoMo's question categories with evidence (5, adversarial, has none), as the paper and its released data name
them: ``When did ...`` questions are category 2, questions that need world knowledge besides the chat category 3."""
LOCOMO_METHODS = ('ranked', 'bm25s', 'ranked+local', 'notes', 'notes+local')
LOCOMO_MODELS = ('default', 'all-MiniLM-L6-v2', 'bge-small-en-v1.5', 'multilingual-e5-small')
"""``default``: no model named, the local model the agent tools pick (transcripts: bge-small-en-v1.5 where it is
installed; notes: all-MiniLM-L6-v2)."""
LOCOMO_TURN_GAP_MS = 60_000
"""A session's turns are stamped one minute apart from its ``session_<n>_date_time``."""
_DIA_ID = re.compile(r'D\d+:\d+')
_DIA_ID_LOOSE = re.compile(r'D:?(\d+):(\d+)')


@dataclass
class Locomo:
    """One LoCoMo conversation as its own haystack: its sessions as transcripts, its questions with their facts."""

    sample: str
    conversations: Conversations
    dia: dict[str, list[str]]
    """session key -> each message's LoCoMo turn id (``D3:11``)."""
    asked: datetime
    """When its questions are asked: an hour after its last session's last turn."""
    facts: dict[str, dict] = field(default_factory=dict)
    """question id -> category, question, answer and the evidence ids as the data gives them."""


def _locomo_time(text: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` -> that time (UTC)."""
    return datetime.strptime(text.strip(), '%I:%M %p on %d %B, %Y').replace(tzinfo=timezone.utc)


def load_locomo(path: Path, counts: Counter[str]) -> list[Locomo]:
    """Each conversation of LoCoMo's layout as a :class:`Locomo`: each session a transcript (its first speaker the
    user, the other the assistant; one ``Name: utterance`` message per turn, image captions left out), each question
    of categories 1-4 with its evidence turns. Evidence ids that are not ``D<session>:<turn>`` are read leniently
    (``D8:6; D9:17`` -> two ids, ``D:11:26`` -> ``D11:26``) and counted in ``counts``, as are ids naming no turn and
    questions left with no evidence turn (skipped)."""
    data = json.loads(path.read_text(encoding='utf-8'))
    out = []
    for sample in data:
        name, chat = sample['sample_id'], sample['conversation']
        conv = Conversations(named=True)
        dia: dict[str, list[str]] = {}
        where: dict[str, tuple[str, int]] = {}
        numbers = sorted(int(k.split('_')[1]) for k in chat if re.fullmatch(r'session_\d+', k))
        last = datetime.min.replace(tzinfo=timezone.utc)
        for n in numbers:
            turns = [t for t in chat[f'session_{n}'] if str(t.get('text', '')).strip()]
            if not turns:
                counts['empty sessions'] += 1
                continue
            key = f'agent:main:locomo-{name}-s{n}'
            start = _locomo_time(chat[f'session_{n}_date_time'])
            first = turns[0]['speaker']
            conv.sessions[key] = [f'{t["speaker"]}: {t["text"]}' for t in turns]
            conv.roles[key] = ['user' if t['speaker'] == first else 'assistant' for t in turns]
            stamps = [int(start.timestamp() * 1000) + i * LOCOMO_TURN_GAP_MS for i in range(len(turns))]
            conv.timestamps[key] = stamps
            conv.headings[key] = chat[f'session_{n}_date_time']
            dia[key] = [t['dia_id'] for t in turns]
            where.update({t['dia_id']: (key, i) for i, t in enumerate(turns)})
            last = max(last, datetime.fromtimestamp(stamps[-1] / 1000, tz=timezone.utc))
            counts['turns'] += len(turns)
            counts['sessions'] += 1
        item = Locomo(name, conv, dia, last + timedelta(hours=1))
        for number, qa in enumerate(sample['qa']):
            category = LOCOMO_CATEGORIES.get(qa.get('category'))
            if category is None:
                counts['questions of category 5 (no evidence)'] += 1
                continue
            ids = []
            for raw in qa.get('evidence') or []:
                if _DIA_ID.fullmatch(raw):
                    ids.append(raw)
                    continue
                read = [f'D{s}:{t}' for s, t in _DIA_ID_LOOSE.findall(raw)]
                counts['malformed evidence ids'] += 1
                counts['malformed evidence ids read leniently' if read else 'malformed evidence ids dropped'] += 1
                ids.extend(read)
            known = [i for i in ids if i in where]
            counts['evidence ids naming no turn'] += len(ids) - len(known)
            if not known:
                counts['questions with no evidence turn (skipped)'] += 1
                continue
            qid = f'{name}:q{number}'
            conv.questions.append((category, qid, str(qa['question']), {where[i] for i in known}))
            item.facts[qid] = {
                'category': category,
                'question': str(qa['question']),
                'answer': qa.get('answer'),
                'evidence': qa.get('evidence'),
                'evidence_turns': known,
                'evidence_text': [conv.sessions[where[i][0]][where[i][1]] for i in known],
            }
            counts['questions'] += 1
        out.append(item)
    return out


class CachedEmbeddings:
    """Embeds documents through a per-model cache shared by every conversation and method of a run (the default
    setup runs the same model as a named one: its turns are embedded once)."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], object] = {}

    def embed(self, provider) -> Callable[[list[str]], object]:
        import numpy as np

        def embed(texts: list[str]):
            missing = list(dict.fromkeys(t for t in texts if (provider.model, t) not in self._vectors))
            if missing:
                for text, vector in zip(missing, provider.embed_documents(missing)):
                    self._vectors[provider.model, text] = vector
            return np.stack([self._vectors[provider.model, t] for t in texts]).astype(np.float32)

        return embed


def _locomo_providers(models: Sequence[str]) -> tuple[dict[str, object], list[str]]:
    """The transcript provider of each model that loads (``default``: as the agent tools pick it), and a note for
    each that does not."""
    from memsift.config import load_config
    from memsift.providers.local import LocalEmbeddings, LocalModelUnavailable, transcript_embeddings

    providers: dict[str, object] = {}
    notes = []
    for model in models:
        search_config = {'provider': 'local', **({} if model == 'default' else {'model': model})}
        config = load_config({'agents': {'defaults': {'memorySearch': search_config}}})
        try:
            providers[model] = transcript_embeddings(LocalEmbeddings(config), config)
        except LocalModelUnavailable as exc:
            notes.append(f'skipping {model}: {exc}')
    return providers, notes


def _locomo_hit(item: Locomo, hit: tuple[str, int | range]) -> dict:
    """A returned message or chunk with its LoCoMo turn ids and text, for the failures file."""
    key, where = hit
    ids = item.dia[key]
    messages = item.conversations.sessions[key]
    if isinstance(where, range):
        span = [ids[i] for i in where]
        return {'turns': f'{span[0]}..{span[-1]}' if span else key, 'text': ' | '.join(messages[i] for i in where)}
    return {'turns': ids[where], 'text': messages[where]}


def judge_locomo(item: Locomo, method: str, search: Callable[[str], list]) -> list[dict]:
    """One row per question: turn (or chunk) recall and session recall at 5 and 10, and the first 5 hits."""
    rows = []
    for category, qid, text, answers in item.conversations.questions:
        hits = search(text)
        sessions = {key for key, _ in answers}
        rows.append(
            {
                'conversation': item.sample,
                'method': method,
                'id': qid,
                **item.facts[qid],
                'turn@5': any(_answers(h, answers) for h in hits[:5]),
                'turn@10': any(_answers(h, answers) for h in hits[:10]),
                'session@5': any(key in sessions for key, _ in hits[:5]),
                'session@10': any(key in sessions for key, _ in hits[:10]),
                'top5': [_locomo_hit(item, h) for h in hits[:5]],
            }
        )
    return rows


def summarize_locomo(method: str, model: str | None, rows: list[dict]) -> list[dict]:
    """Per category and overall: questions and the four recalls (for notes, turn@k is chunk recall@k)."""
    out = []
    for category in [*LOCOMO_CATEGORIES.values(), 'overall']:
        chosen = [r for r in rows if category in ('overall', r['category'])]
        if not chosen:
            continue
        out.append(
            {
                'set': 'locomo',
                'method': method,
                'model': model,
                'category': category,
                'questions': len(chosen),
                **{m: round(sum(r[m] for r in chosen) / len(chosen), 4) for m in LOCOMO_MEASURES},
            }
        )
    return out


LOCOMO_MEASURES = ('turn@5', 'session@5', 'turn@10', 'session@10')


def locomo_table(records: list[dict], at: int) -> str:
    """A Markdown table: one row per method and model, ``turn@k / session@k`` per category and overall."""
    columns = [*LOCOMO_CATEGORIES.values(), 'overall']
    counts = {r['category']: r['questions'] for r in records}
    head = ['method', *(f'{c} ({counts.get(c, 0)})' for c in columns)]
    lines = ['| ' + ' | '.join(head) + ' |', '|---' + '|--:' * len(columns) + '|']
    rows: dict[str, dict[str, str]] = {}
    for r in records:
        label = r['method'] + (f' {r["model"]}' if r['model'] else '')
        rows.setdefault(label, {})[r['category']] = f'{r[f"turn@{at}"]:.3f} / {r[f"session@{at}"]:.3f}'
    for label, cells in rows.items():
        lines.append('| ' + ' | '.join([label, *(cells.get(c, '-') for c in columns)]) + ' |')
    return '\n'.join(lines)


def locomo(
    path: Path,
    methods: Sequence[str],
    models: Sequence[str],
    directory: Path,
    questions: int | None = None,
    json_out: Path | None = None,
    failures_out: Path | None = None,
) -> None:
    """LoCoMo-dev as its README measures it: each conversation its own haystack (one store or notes workspace per
    conversation and method), questions of categories 1-4; prints one JSON line per method, model and category,
    then the tables; ``--json`` / ``--failures`` write everything / each question missed at 5."""
    if not path.is_file():
        print(f'skipping locomo: {path} is missing (pass --locomo PATH)', file=sys.stderr)
        return
    counts: Counter[str] = Counter()
    items = load_locomo(path, counts)
    if questions:
        total = sum(len(i.conversations.questions) for i in items)
        step = max(1, total // questions)
        for item in items:
            item.conversations.questions = item.conversations.questions[::step]
    print(json.dumps({'locomo': str(path), 'conversations': len(items), **counts}), flush=True)
    unknown = sorted(set(methods) - {*LOCOMO_METHODS, 'all-terms'})
    if unknown:
        _beir.fail(f'unknown method(s) {", ".join(unknown)} for locomo; choose from {", ".join(LOCOMO_METHODS)}')
    providers: dict[str, object] = {}
    skipped: list[str] = []
    if any(m.endswith('+local') for m in methods):
        providers, skipped = _locomo_providers(models)
        for note in skipped:
            print(note, file=sys.stderr)
    runs: list[tuple[str, str | None]] = []
    for method in methods:
        if method.endswith('+local'):
            runs.extend((method, m) for m in providers)
        else:
            runs.append((method, None))
    cache = CachedEmbeddings()
    records: list[dict] = []
    missed: list[dict] = []
    scored: list[dict] = []
    for run, (method, model) in enumerate(runs):
        rows: list[dict] = []
        start = time.perf_counter()
        label = model
        for item in items:
            where = directory / f'{run}-{item.sample}'
            where.mkdir()
            conv = item.conversations
            if method == 'bm25s':
                rows += judge_locomo(item, method, bm25s_search(conv, 10))
            elif method in ('notes', 'notes+local'):
                named = None if model in (None, 'default') else model
                index, search = notes_search(conv, where, method, named, item.asked)
                if model == 'default':
                    label = f'default ({index.provider.model if index.provider else "none"})'
                rows += judge_locomo(item, method, search)
                index.close()
            else:
                mode = 'all-terms' if method == 'all-terms' else 'ranked'
                with SessionStore(where / 'sessions.sqlite', visibility='agent', search_mode=mode) as store:
                    fill(store, conv.sessions, 1, conv.roles, conv.timestamps)
                    if model is not None:
                        provider = providers[model]
                        if model == 'default':
                            label = f'default ({provider.model})'  # type: ignore[attr-defined]
                        store.use_embeddings(provider, embed=cache.embed(provider), background=False)  # type: ignore[arg-type]
                        assert store.vectors is not None
                        store.vectors.embed_pending()
                    rows += judge_locomo(item, method, store_search(store, 10, item.asked))
        summary = summarize_locomo(method, label, rows)
        for record in summary:
            record['seconds'] = round(time.perf_counter() - start)
            print(json.dumps(record), flush=True)
        records += summary
        missed += [{**r, 'model': label} for r in rows if not r['turn@5']]
        scored += [
            {k: r[k] for k in ('conversation', 'id', 'category', *LOCOMO_MEASURES)} | {'method': method, 'model': label}
            for r in rows
        ]
    print('\nturn / session recall@5 (notes: chunk / session recall@5)\n')
    print(locomo_table(records, 5))
    print('\nturn / session recall@10 (notes: chunk / session recall@10)\n')
    print(locomo_table(records, 10), flush=True)
    if json_out is not None:
        report = {
            'data': str(path),
            'counts': dict(counts),
            'skipped': skipped,
            'results': records,
            'questions': scored,
        }
        json_out.write_text(json.dumps(report, indent=1) + '\n', encoding='utf-8')
    if failures_out is not None:
        with failures_out.open('w', encoding='utf-8') as f:
            for row in missed:
                f.write(json.dumps(row, ensure_ascii=False, default=str) + '\n')


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


LATENCY_METHODS = ('all-terms', 'ranked', 'ranked+vectors')


def transcript_provider(model: str | None):
    """The local provider ranked ``sessions_search`` embeds messages with: as the agent tools choose (bge-small
    where installed) or ``model``."""
    from memsift.config import load_config
    from memsift.providers.local import LocalEmbeddings, transcript_embeddings

    search_config = {'provider': 'local', **({'model': model} if model else {})}
    config = load_config({'agents': {'defaults': {'memorySearch': search_config}}})
    return transcript_embeddings(LocalEmbeddings(config), config)


def latency(
    conversations: Conversations,
    messages: int,
    directory: Path,
    methods: Sequence[str] = LATENCY_METHODS,
    model: str | None = None,
) -> Iterator[dict]:
    """p50 / p95 of ``SessionStore.search`` over a store of about ``messages`` messages: all-terms, ranked,
    ranked with a vector leg of random 384-dim vectors for every message, and (``ranked+local``) ranked with the
    local model's vectors, the query embedded inside the timing and the store's messages embedded first
    (``embed_per_s``: messages per second)."""
    per_copy = sum(len(m) for m in conversations.sessions.values())
    copies = max(1, round(messages / per_copy))
    questions = [text for _, _, text, _ in conversations.questions][:: max(1, len(conversations.questions) // 400)]
    for method in methods:
        mode = 'all-terms' if method == 'all-terms' else 'ranked'
        extra: dict = {}
        with SessionStore(directory / 'latency.sqlite', visibility='agent', search_mode=mode) as store:
            if method != 'all-terms' and not any(True for _ in store.sessions()):
                fill(store, conversations.sessions, copies, conversations.roles, conversations.timestamps)
            if method in ('ranked+vectors', 'ranked+local'):
                provider = RandomVectors() if method == 'ranked+vectors' else transcript_provider(model)
                store.use_embeddings(provider, background=False)  # type: ignore[arg-type]
                assert store.vectors is not None
                start = time.perf_counter()
                embedded = store.vectors.embed_pending()
                if method == 'ranked+local':
                    seconds = time.perf_counter() - start
                    extra = {'model': provider.model, 'embedded': embedded, 'embed_per_s': round(embedded / seconds, 1)}
            if method == 'all-terms':
                start = time.perf_counter()
                count = fill(store, conversations.sessions, copies, conversations.roles, conversations.timestamps)
                build_s = time.perf_counter() - start
            else:
                count = sum(s['events'] for s in store.sessions())
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
                **extra,
            }


def main() -> None:
    """Build the dev set, run every method and print one JSON line per set and method."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', type=Path, default=_beir.DEFAULT_DATA_ROOT, help='the shared data sets')
    parser.add_argument(
        '--methods',
        help='comma-separated: all-terms, ranked, ranked+local, bm25s, notes, notes+local (default: all-terms,'
        f'ranked,bm25s; with --locomo: {",".join(LOCOMO_METHODS)})',
    )
    parser.add_argument(
        '--model', help='the local model of ranked+local and notes+local (default: the one the agent tools choose)'
    )
    parser.add_argument('--latency', action='store_true', help='time searches on a grown store instead')
    parser.add_argument('--messages', type=int, default=100_000, help='store size for --latency')
    parser.add_argument('--questions', type=int, help='use every n-th question so that about this many remain')
    parser.add_argument(
        '--sets', default=','.join(SETS), help=f'comma-separated data sets to build (default {",".join(SETS)})'
    )
    parser.add_argument(
        '--haystack', type=int, default=2000, help='Chit Chat conversations to add, the first N by id (0: none)'
    )
    parser.add_argument(
        '--chitchat-questions', type=int, default=300, help='known-item probes made from Chit Chat turns (at most)'
    )
    parser.add_argument('--seed', type=int, default=0, help='which Chit Chat turns and words the probes use')
    parser.add_argument(
        '--locomo',
        type=Path,
        nargs='?',
        const=LOCOMO_PATH,
        metavar='PATH',
        help=f'measure LoCoMo-dev instead (default PATH: {LOCOMO_PATH}; skipped with a note when it is missing)',
    )
    parser.add_argument(
        '--models',
        default=','.join(LOCOMO_MODELS),
        help='--locomo: the local models of ranked+local and notes+local, comma-separated (default: all;'
        ' "default" is the one the agent tools pick; --model names a single one)',
    )
    parser.add_argument('--json', type=Path, metavar='OUT', help='--locomo: write every figure to OUT')
    parser.add_argument(
        '--failures', type=Path, metavar='OUT', help='--locomo: write each question missed at 5 to OUT (JSON lines)'
    )
    args = parser.parse_args()
    if args.locomo is not None:
        methods = (args.methods or ','.join(LOCOMO_METHODS)).split(',')
        models = [args.model] if args.model else [m for m in args.models.split(',') if m]
        with tempfile.TemporaryDirectory() as tmp:
            locomo(args.locomo, methods, models, Path(tmp), args.questions, args.json, args.failures)
        return
    latency_methods = args.methods.split(',') if args.methods else LATENCY_METHODS
    args.methods = args.methods or 'all-terms,ranked,bm25s'
    sets = [name for name in args.sets.split(',') if name]
    conversations = build(args.data_root, sets, args.haystack, args.chitchat_questions, args.seed)
    if not conversations.questions:
        _beir.fail(f'no questions in {", ".join(sets)} (--haystack 0 leaves chitchat none)')
    if args.questions:
        step = max(1, len(conversations.questions) // args.questions)
        conversations.questions = conversations.questions[::step]
    with tempfile.TemporaryDirectory() as tmp:
        if args.latency:
            unknown = sorted(set(latency_methods) - {*LATENCY_METHODS, 'ranked+local'})
            if unknown:
                choices = ', '.join([*LATENCY_METHODS, 'ranked+local'])
                _beir.fail(f'unknown --latency method(s) {", ".join(unknown)}: choose from {choices}')
            for record in latency(conversations, args.messages, Path(tmp), latency_methods, args.model):
                print(json.dumps(record), flush=True)
            return
        stores: dict[str, SessionStore] = {}
        indexes: list[memsift.MemoryIndex] = []
        search: Callable[[str], list]
        for method in args.methods.split(','):
            if method == 'bm25s':
                search = bm25s_search(conversations, 10)
            elif method in ('notes', 'notes+local'):
                index, search = notes_search(conversations, Path(tmp) / method, method, args.model)
                indexes.append(index)
            elif method in ('all-terms', 'ranked', 'ranked+local'):
                mode = 'all-terms' if method == 'all-terms' else 'ranked'
                store = SessionStore(Path(tmp) / f'{method}.sqlite', visibility='agent', search_mode=mode)
                stores[method] = store
                fill(store, conversations.sessions, 1, conversations.roles, conversations.timestamps)
                if method == 'ranked+local':
                    provider = transcript_provider(args.model)
                    print(json.dumps({'model': provider.model}), flush=True)
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
        for index in indexes:
            index.close()


if __name__ == '__main__':
    main()
