"""Type stubs for the native module ``memsift._core``.

Users import these names from :mod:`memsift`; ``_core`` is an implementation detail.
"""

import os
from collections.abc import Sequence
from datetime import date
from typing import Any, Literal, final

from typing_extensions import Self

import numpy as np
import numpy.typing as npt

__version__: str

# ---------------------------------------------------------------- errors

class MemsiftError(Exception):
    """Root of every error memsift raises."""

class InvalidInputError(MemsiftError):
    """An argument has the wrong shape, type or range (the message names it)."""

class SearchIndexError(MemsiftError):
    """The BM25 index could not be opened, written or read (the message names the path)."""

class InternalError(MemsiftError):
    """A bug inside memsift's Rust core (a caught panic); please report it."""

# ---------------------------------------------------------------- analyzer

@final
class Analyzer:
    """memsift's text analyzer: the one tokenizer used by BM25, queries, sessions and MMR.

    Args:
        stem: Apply the English Snowball stemmer to plain Latin words.

    >>> Analyzer().tokenize("BBDown视频下载")
    ['bbdown', '视', '视频', '频', '频下', '下', '下载', '载']
    """

    def __new__(cls, stem: bool = True) -> Self: ...
    @property
    def stem(self) -> bool: ...
    def tokenize(self, text: str) -> list[str]:
        """Tokenize one text."""
    def tokenize_batch(self, texts: Sequence[str]) -> list[list[str]]:
        """Tokenize many texts in parallel with the GIL released."""
    def count_tokens(self, text: str) -> int:
        """Number of tokens ``tokenize`` would return, without building Python strings."""
    def query_terms(self, text: str) -> list[tuple[str, float]]:
        """The distinct terms of a search query with their weights, in first-seen order: how often the query says
        each, with English stopwords and CJK particles dropped (all kept when the query has nothing else) and an
        identifier counting as one word shared by its parts plus half a word for the whole compound.

        >>> Analyzer().query_terms("when did the cats meet the cat?")
        [('cat', 2.0), ('meet', 1.0)]
        >>> Analyzer().query_terms("ERR_CONN_RESET")
        [('err_conn_reset', 0.5), ('err', 0.3333333432674408), ('conn', 0.3333333432674408), ('reset', 0.3333333432674408)]
        """

def tokenize(text: str) -> list[str]:
    """Tokenize with the default analyzer (``Analyzer(stem=True)``).

    >>> tokenize("ERR_CONN_RESET in v2.3.1")
    ['err_conn_reset', 'err', 'conn', 'reset', 'in', 'v2.3.1', 'v2', '3', '1']
    """

# ---------------------------------------------------------------- chunker

@final
class Chunk:
    """One chunk of a Markdown file (1-based inclusive line range, sha256 of ``text``)."""

    start_line: int
    end_line: int
    text: str
    hash: str
    def __new__(cls, start_line: int, end_line: int, text: str, hash: str) -> Self: ...
    def __eq__(self, other: object, /) -> bool: ...

def chunk_markdown(text: str, tokens: int = 400, overlap: int = 80) -> list[Chunk]:
    r"""Split Markdown into line-packed chunks exactly as OpenClaw's ``chunkMarkdown``.

    Args:
        text: The file content.
        tokens: Target chunk size in estimated tokens (4 chars, or 1 CJK char, per token).
        overlap: Tokens of trailing whole lines carried into the next chunk.

    Raises:
        InvalidInputError: ``tokens < 1``, ``overlap < 0`` or ``overlap >= tokens``.

    >>> [(c.start_line, c.end_line) for c in chunk_markdown("a\nb\n\nc")]
    [(1, 4)]
    """

def chunk_memory(
    text: str, tokens: int = 400, overlap: int = 80, per_entry: bool = False, annotations: bool = False
) -> list[tuple[int, int, str, str, int | None]]:
    r"""Chunk a memory file as OpenClaw 2.x indexes it: ``(start_line, end_line, text, hash, importance)`` per chunk.

    Args:
        text: The file content.
        tokens: Target chunk size in estimated tokens, as for :func:`chunk_markdown`.
        overlap: Tokens of trailing whole lines carried into the next chunk (never from one entry into the next).
        per_entry: Chunk each entry on its own (2.x does so for the root ``MEMORY.md`` and ``USER.md``): an entry
            starts at each line starting with ``- `` or a Markdown heading (and at line 1); its chunks get the
            highest ``<!-- importance: N -->`` (N in 1..10) on its lines that end with an annotation (a heading's
            chunks: on their own lines), else ``None``.
        annotations: Strip the ``importance``/``trigger``/``project`` annotations closed on their line from the
            chunks' text (2.x does so in every memory file), and the spaces they leave at line ends; line numbers
            are unchanged. ``hash`` is the sha256 of the text returned.

    Without ``per_entry``, importance is ``None`` and the chunks are :func:`chunk_markdown`'s (of the stripped text
    with ``annotations``).

    Raises:
        InvalidInputError: ``tokens < 1``, ``overlap < 0`` or ``overlap >= tokens``.

    >>> text = "# Facts\n- Port is 8080. <!-- importance: 9 -->\n- Host is a."
    >>> [(s, e, t, i) for s, e, t, _, i in chunk_memory(text, per_entry=True, annotations=True)]
    [(1, 1, '# Facts', None), (2, 2, '- Port is 8080.', 9), (3, 3, '- Host is a.', None)]
    """

def estimate_chars(text: str) -> int:
    """OpenClaw's weighted length: UTF-16 length with CJK/full-width characters counted 4x.

    >>> estimate_chars("ab视频")
    10
    """

# ---------------------------------------------------------------- BM25

@final
class Bm25Index:
    """A BM25 chunk index on tantivy, in RAM (``path=None``) or in a directory.

    >>> idx = Bm25Index()
    >>> idx.add([1, 2], ["memory/a.md", "memory/b.md"], ["memory"] * 2, ["tantivy index", "sqlite store"])
    >>> idx.commit(generation=1)
    >>> [i for i, _ in idx.search("index")]
    [1]
    """

    def __new__(cls, path: str | os.PathLike[str] | None = None, *, stem: bool = True, writer_memory_mb: int = 64) -> Self: ...
    @property
    def path(self) -> str | None: ...
    @property
    def stem(self) -> bool: ...
    @property
    def num_docs(self) -> int:
        """Documents visible to searches (committed)."""
    @property
    def generation(self) -> int | None:
        """Store generation recorded by the commit searches see (``None`` if never given)."""
    def add(
        self, ids: npt.ArrayLike, paths: Sequence[str], sources: Sequence[str], texts: Sequence[str]
    ) -> None:
        """Stage documents (visible after ``commit``). Existing ids are not replaced: delete first."""
    def delete_ids(self, ids: npt.ArrayLike) -> None: ...
    def delete_path(self, path: str) -> None: ...
    def clear(self) -> None:
        """Stage deletion of every document."""
    def commit(self, generation: int | None = None, *, compact: bool = True) -> None:
        """Make staged changes durable and searchable, recording ``generation``; ``compact`` merges a small
        index into one segment (faster queries).
        """
    def rollback(self) -> None:
        """Drop staged, uncommitted changes."""
    def reload(self) -> None:
        """Pick up commits made by another handle on the same directory."""
    def merge_segments(self) -> int:
        """Merge every segment into one and delete the files no commit uses any more; returns how many segments
        there were. Searches keep reading the previous segments until the merge lands.
        """
    def release_writer(self) -> None:
        """Drop the writer (uncommitted changes are discarded) so another process can write."""
    def search(
        self, query: str, k: int = 10, *, sources: Sequence[str] | None = None
    ) -> list[tuple[int, float]]:
        """Ranked OR query over ``text``; returns ``(id, bm25_score)`` best first. Never raises on query syntax."""
    def search_batch(
        self, queries: Sequence[str], k: int = 10, *, sources: Sequence[str] | None = None
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search` for many queries at once: one call, the GIL released once, queries run in parallel.

        >>> idx = Bm25Index()
        >>> idx.add([1, 2], ["a.md", "b.md"], ["memory"] * 2, ["tantivy index", "sqlite store"])
        >>> idx.commit()
        >>> [[i for i, _ in hits] for hits in idx.search_batch(["index", "store", "none"])]
        [[1], [2], []]
        """
    def search_paths(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        """Ranked OR query over the analyzed path field."""
    def __len__(self) -> int: ...

# ---------------------------------------------------------------- vectors

@final
class VectorStore:
    """Contiguous vector store with exact SIMD top-k and usearch HNSW above a size threshold.

    ``i8_from``: from this many vectors the store keeps them as i8 (a quarter of f32's memory), whatever ``dtype``,
    and answers every search with the exact i8 scan instead of the graph (which it drops): the scan reads 1M x 384
    in ~12 ms on 2 cores and is exact, where a graph would need thousands of candidates to keep recall@10 at 0.95.
    ``u4_from``: from this many vectors an i8 store also keeps 4-bit codes of them (an eighth of f32's memory) and
    its scan ranks every row by them first, reading half the bytes, then scores the best 1,000 exactly.

    >>> import numpy as np
    >>> vs = VectorStore(3)
    >>> vs.add(np.array([7, 8], dtype=np.uint64), np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32))
    >>> ids, scores = vs.search(np.array([1, 0.1, 0], dtype=np.float32), k=1)
    >>> ids.tolist()
    [7]
    """

    def __new__(
        cls,
        dims: int,
        *,
        metric: Literal["cosine", "dot"] = "cosine",
        dtype: Literal["f32", "f16", "i8"] = "f32",
        ann_threshold: int = 20000,
        connectivity: int = 16,
        expansion_add: int = 64,
        expansion_search: int = 96,
        i8_from: int | None = None,
        u4_from: int | None = None,
    ) -> Self: ...
    @property
    def dims(self) -> int: ...
    @property
    def metric(self) -> str: ...
    @property
    def dtype(self) -> str: ...
    @property
    def ann_active(self) -> bool:
        """True when searches use the HNSW index (``ann_threshold <= len < i8_from``)."""
    @property
    def u4_active(self) -> bool:
        """True when searches rank with 4-bit codes first (an i8 store of at least ``u4_from`` vectors)."""
    @property
    def one_bit_active(self) -> bool:
        """True when searches rank with 1-bit codes before the 4-bit ones (at least 250,000 vectors with 4-bit codes,
        on a CPU with a byte-shuffle kernel: AVX2 or later)."""
    def __len__(self) -> int: ...
    def __contains__(self, id: object, /) -> bool: ...
    def add(self, ids: npt.ArrayLike, vectors: npt.NDArray[np.float32]) -> None:
        """Insert or replace vectors; ``vectors`` is float32 ``(n, dims)`` (other inputs are converted once)."""
    def remove(self, ids: npt.ArrayLike) -> int:
        """Remove ids; returns how many were present."""
    def clear(self) -> None: ...
    def ids(self) -> npt.NDArray[np.uint64]:
        """The stored ids (``uint64``), in no particular order."""
    def save(self, path: str | os.PathLike[str], tag: int = 0) -> None:
        """Write the store (ids, vectors and the HNSW graph when active) to ``path`` with an integer ``tag``, through a
        temporary file renamed over ``path``: a reader sees the old file or the new one.

        Raises:
            SearchIndexError: the file cannot be written (the message names it).
        """
    @staticmethod
    def load(
        path: str | os.PathLike[str],
        *,
        ann_threshold: int = 20000,
        connectivity: int = 16,
        expansion_add: int = 64,
        expansion_search: int = 96,
        i8_from: int | None = None,
        u4_from: int | None = None,
    ) -> tuple[VectorStore, int]:
        """Read a store written by :meth:`save`: ``(store, tag)``. The HNSW graph loads as saved (no rebuild); the
        keyword arguments, as for the constructor, apply to later growth.

        Raises:
            SearchIndexError: the file is missing, torn or not a vector file (the message names it).

        >>> import numpy as np, tempfile, os
        >>> vs = VectorStore(2)
        >>> vs.add(np.array([7], dtype=np.uint64), np.array([[1, 0]], dtype=np.float32))
        >>> path = os.path.join(tempfile.mkdtemp(), 'vectors.bin')
        >>> vs.save(path, tag=3)
        >>> loaded, tag = VectorStore.load(path)
        >>> (len(loaded), tag, loaded.ids().tolist())
        (1, 3, [7])
        """
    def search(
        self, query: npt.NDArray[np.float32], k: int = 10, *, exact: bool | None = None
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
        """Top-k ``(ids, scores)`` best first; ``exact=None`` uses HNSW or 4-bit codes when active, ``exact=True``
        neither."""
    def search_batch(
        self, queries: npt.NDArray[np.float32], k: int = 10, *, exact: bool | None = None
    ) -> list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]]: ...

# ---------------------------------------------------------------- ranking

def bm25_score_to_unit(score: float) -> float:
    """OpenClaw's ``bm25RankToScore`` for a positive BM25 score ``r``: ``r / (1 + r)``.

    >>> bm25_score_to_unit(1.0)
    0.5
    """

def normalize_weights(vector_weight: float, text_weight: float) -> tuple[float, float]:
    """Hybrid weights clamped to [0, 1] and normalized to sum 1 (both 0 -> 0.7 / 0.3), as OpenClaw's config does.

    >>> normalize_weights(2.0, 2.0)
    (0.5, 0.5)
    """

def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the analyzer token sets of two texts (both empty -> 1)."""

def mmr(scores: Sequence[float], texts: Sequence[str], lambda_: float = 0.7) -> list[int]:
    """MMR order (indices) with Jaccard text similarity, as OpenClaw's ``mmrRerank``."""

def near_copy_candidates(texts: Sequence[str], coarse: float) -> list[list[int]]:
    """For each text (best-ranked first), the earlier texts it may repeat (``memsift.search.dedupe``'s first look)."""

def fuse_messages(
    ids: Sequence[int],
    sessions: Sequence[str],
    keyword: Sequence[float | None],
    vector: Sequence[float | None],
    vector_weight: float,
    text_weight: float,
) -> list[tuple[int, float]]:
    """Ranked ``sessions_search``'s merge of its legs: ``(id, score)`` best first.

    One value per candidate message in each list: its ``ids``, its ``sessions`` (keys), its keyword leg score and
    its cosine (``None`` where that leg did not find it). Each leg is scaled over its own candidates (keyword by the
    best score, cosines from the weakest to the best), weighted, and each message gains a tenth of the best other
    message of its session; messages scoring 0 are left out.

    >>> fuse_messages([1, 2], ["a", "b"], [4.0, None], [0.5, 0.9], 0.7, 0.3)
    [(2, 0.7), (1, 0.3)]
    """

def rank_candidates(
    ids: Sequence[int],
    vector: Sequence[float],
    keyword: Sequence[float],
    path_scores: Sequence[float],
    tiers: Sequence[int],
    paths: Sequence[str],
    sources: Sequence[str],
    mtimes: Sequence[float | None],
    chars: Sequence[int],
    *,
    mode: Literal['hybrid', 'vector-only', 'fts-only'],
    query: str,
    keyword_best: float,
    vector_weight: float,
    text_weight: float,
    decay: tuple[float, float] | None,
    mmr: tuple[float, int] | None,
    min_score: float,
    limit: int,
    texts: Sequence[str] | None = None,
    explain: bool = False,
    whens: Sequence[float] | None = None,
    importance: Sequence[int | None] | None = None,
    lexical: bool = False,
) -> tuple[list[int], list[float], bool, list[dict[str, Any]] | None]:
    """memsift's ranking of one query's candidates (merge, temporal decay, path tiers, MMR, floor) in one call.

    Each list holds one value per candidate: chunk ``ids``, cosine ``vector`` scores and raw BM25 ``keyword``
    scores (0 where that leg did not find the chunk), partial ``path_scores``, exact path ``tiers`` (3 full path,
    2 basename, 1 stem, 0 none), and each chunk's ``paths``, ``sources``, ``mtimes`` and length in characters
    (``chars``). ``mode`` is ``hybrid``, ``vector-only`` or ``fts-only``; ``keyword_best`` is the keyword leg's best
    raw score; ``decay`` is ``(now, half_life_days)`` or None; ``mmr`` is ``(lambda, pool_size)`` or None, and with
    it (in hybrid mode) the chunks' ``texts`` are needed, for MMR's similarity. ``whens`` (default all 1) is each
    chunk's time factor from the query's time words (1 inside the window they name, less outside), multiplying the
    merged score before decay. ``importance`` (default all ``None``) is each chunk's importance (OpenClaw 2.x
    annotations, 1 to 10; ``None``: none): after decay, a score is multiplied by
    ``0.75 + 0.05 * clamp(floor(importance), 1, 10)`` (0.8 to 1.25; 1 for ``None`` and for exact path hits).
    ``lexical`` (OpenClaw 2.x; needs ``texts``) scores a keyword hit, in hybrid and FTS-only modes, as 2.x does:
    ``min(1, r / (1 + r) + 0.45 * share + 0.2 * density + 0.18 * query tokens in the path + min(chars / 160, 0.18))``
    (``share``: the query's distinct tokens that are whole tokens of the chunk, over their count; ``density``: that
    count over the chunk's distinct tokens); and partial keyword matches give way as 2.x's keyword query leaves
    them out: when 2.x would answer from its all-terms query alone (no stop word, short or numeric token lost on the
    way to its keywords) and some keyword hit holds every query token (as itself or by its stem), a keyword hit
    that does not counts as none; else, when some keyword hit holds one of 2.x's keywords as a whole word, a hit
    matching through stems only counts as none (where none does, stemmed matches stand). A keyword hit that counts
    as none is left out if no other leg found it.

    Returns ``(order, scores, relaxed, explained)``: candidate indices best first (at most ``limit``), their
    reported scores (capped at 1), whether the relaxed pass chose them, and ``None`` or, with ``explain``, per
    candidate, in candidate order, a dict of how it was scored: ``keyword`` (the keyword score as merged),
    ``merged`` (before the time factor and decay), ``decay`` (the multiplier) and ``dateSource`` (``path``, ``evergreen``, ``mtime``, ``none`` or ``off``),
    ``importance`` (the importance multiplier applied after decay), ``beforeMmr`` and ``position`` (0-based;
    ``None``: not returned), ``score``, and ``cut`` (``minScore``, ``limit``, ``partialMatch`` (with
    ``lexical``: a partial keyword match that gave way to better ones) or ``None``).
    """

def decay_multiplier(age_days: float, half_life_days: float) -> float:
    """``exp(-ln2 / half_life_days * max(0, age_days))``."""

def memory_date_from_path(path: str) -> date | None:
    """Date of a ``memory/[.../]YYYY-MM-DD[-suffix].md`` path, ``None`` if absent or invalid.

    >>> memory_date_from_path("memory/2026-11-30.md")
    datetime.date(2026, 11, 30)
    """

def is_evergreen_path(path: str) -> bool:
    """``MEMORY.md``, ``memory.md``, ``USER.md`` and undated files under ``memory/`` never decay."""

def apply_temporal_decay(
    scores: Sequence[float],
    paths: Sequence[str],
    sources: Sequence[str],
    mtimes: Sequence[float | None],
    now: float,
    half_life_days: float = 30.0,
) -> list[float]:
    """Decayed scores (timestamps in epoch seconds), as OpenClaw's temporal decay."""

def simd_kernels() -> str:
    """Name of the SIMD kernel set picked for this CPU (``avx512``, ``avx2``, ``neon`` or ``scalar``).

    ``MEMSIFT_SIMD`` set to one of these names before the first vector search picks that set instead, when this
    CPU can run it; any other value leaves the choice to the CPU's features.
    """

# ---------------------------------------------------------------- redaction

@final
class Redactor:
    r"""Masks secrets in text: the given user patterns (``logging.redactPatterns``) first, then the built-in rules.

    A plain pattern is case-insensitive; ``/body/flags`` takes its own flags (``i``, ``m``, ``s``). A pattern with
    a capture group masks group 1 (the whole match if group 1 did not take part); one without masks the whole
    match. Patterns use Rust regex syntax and run in linear time; one that cannot compile (look-around,
    back-references, too big) raises ``InvalidInputError`` whose message starts with ``logging.redactPatterns[i]: ``.

    >>> Redactor([r"codename (\w+)"]).redact("codename nightingale, DB_PASSWORD=hunter2hunter2")
    'codename ***, DB_PASSWORD=***'
    """

    def __new__(cls, patterns: Sequence[str] = ...) -> Self: ...
    def redact(self, text: str) -> str:
        """``text`` with every secret masked; text without secrets comes back unchanged."""
    def redact_many(self, texts: Sequence[str]) -> list[str]:
        """:meth:`redact` of each text, in order (in parallel, without the GIL)."""
    def redact_for_search(self, text: str) -> str:
        """``text`` as a search indexes it: :meth:`redact`'s text with every mask it wrote replaced by ``***``, so no
        fragment of a secret is searchable (a guessed secret reads as any other of its shape)."""
    def redact_for_search_many(self, texts: Sequence[str]) -> list[str]:
        """:meth:`redact_for_search` of each text, in order (in parallel, without the GIL)."""

@final
class PathCatalogue:
    """The indexed paths of one store generation, for exact path queries (reference §6).

    Args:
        paths: Workspace-relative paths; within a tier, matches come in this order.

    >>> catalogue = PathCatalogue(['memory/2026-11-28.md'])
    >>> [catalogue.exact(q) for q in ('memory/2026-11-28.md', '2026-11-28.MD', './2026-11-28', 'other')]
    [[('memory/2026-11-28.md', 3)], [('memory/2026-11-28.md', 2)], [('memory/2026-11-28.md', 1)], []]"""

    def __new__(cls, paths: Sequence[str]) -> PathCatalogue: ...
    def exact(self, query: str) -> list[tuple[str, int]]:
        """Files the query names exactly, as ``(path, tier)``: 3 = the full path, 2 = the basename (a query without
        ``/``), 1 = the stem; best tier first, each path once. Matching is on OpenClaw's normalization (trimmed,
        ``\\`` as ``/``, no leading ``./``, NFC, lower case)."""
    @staticmethod
    def of_saved_stamps(path: str | os.PathLike[str]) -> tuple[PathCatalogue, int] | None:
        """The catalogue of the indexed files in the stamps :meth:`FileStamps.save` wrote to ``path`` (a skipped
        file's left out) and the store generation they reflect, read without the GIL; ``None`` for a missing, short
        or foreign file. A process's first search builds it so instead of reading every path from the store."""
    def paths(self) -> list[str]:
        """Every path, sorted."""
    def __len__(self) -> int: ...
    def __contains__(self, path: str, /) -> bool:
        """Whether ``path`` is one of the catalogue's paths, exactly (no normalization)."""

def prepare_files(
    paths: Sequence[str | os.PathLike[str]],
    max_bytes: int,
    tokens: int = 400,
    overlap: int = 80,
    per_entry: Sequence[bool] | None = None,
    annotations: bool = False,
) -> list[tuple[str, list[tuple[int, int, str, str, int | None]]] | None]:
    """Read, hash and chunk memory files in parallel, without the GIL: what a sync does to each changed file.

    Returns, per path in order, ``(sha256 hex of the raw text, [(start_line, end_line, text, hash, importance),
    ...])`` (the chunks of :func:`chunk_memory`), or ``None`` where :func:`memsift.index.workspace.read_memory_file`
    would refuse the file (too large, unreadable, binary, not UTF-8), so the caller reads it there for the reason.
    ``per_entry`` (one flag per path, default all ``False``) chunks those files per entry, with their importance;
    ``annotations`` strips the annotations from every file's chunks (see :func:`chunk_memory`).

    Raises:
        InvalidInputError: ``tokens < 1``, ``overlap < 0`` or ``overlap >= tokens``; ``per_entry`` is not one flag
            per path.

    >>> import tempfile, pathlib
    >>> note = pathlib.Path(tempfile.mkdtemp()) / 'a.md'
    >>> _ = note.write_text('# Title\\nbody\\n')
    >>> [(len(h), [(s, e, t, i) for s, e, t, _, i in chunks]) for h, chunks in prepare_files([str(note)], 1000)]
    [(64, [(1, 3, '# Title\\nbody\\n', None)])]"""

def scan_memory_files(
    workspace: str | os.PathLike[str],
    extra_roots: Sequence[str | os.PathLike[str]],
    media: Sequence[str],
    root_files: Sequence[str] = ('MEMORY.md', 'memory.md'),
) -> list[tuple[str, str, float, int]]:
    """The memory files of ``workspace`` and ``extra_roots`` (absolute paths), stat only, in scan order, as
    ``(relative path, path, st_mtime, size)``; see :func:`memsift.index.workspace.list_memory_files` for the rules.
    ``media``: lower-case suffixes with their dot, counted in the extra paths only. ``root_files``: the file names
    taken at the workspace root, in that order, before ``memory/`` (OpenClaw 1.x: ``MEMORY.md``, ``memory.md``;
    2.x: ``MEMORY.md``, ``USER.md``).

    Raises:
        InvalidInputError: a name in ``root_files`` is not a plain file name (empty, ``.``, ``..`` or with a ``/``).

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / 'MEMORY.md').write_text('# Facts')
    >>> _ = (root / 'USER.md').write_text('- Terse')
    >>> [(rel, size) for rel, _, _, size in scan_memory_files(str(root), [], [])]
    [('MEMORY.md', 7)]
    >>> [rel for rel, _, _, _ in scan_memory_files(str(root), [], [], root_files=['MEMORY.md', 'USER.md'])]
    ['MEMORY.md', 'USER.md']"""

@final
class FileStamps:
    """The store's stamp of every indexed file, held in the core: :meth:`changes` tells what a sync must look at (the
    scan and the compare) with the GIL released throughout, so searches running beside the check are not slowed by
    it (a Python loop over 584k files held them up to seconds on 2 cores).

    >>> import tempfile, pathlib, os
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / 'MEMORY.md').write_text('# Facts')
    >>> stamps = FileStamps()
    >>> stat = os.stat(root / 'MEMORY.md')
    >>> stamps.extend([('MEMORY.md', stat.st_mtime, stat.st_size, stat.st_mtime + 5)])
    >>> len(stamps), stamps.changes(str(root), [], [], ['MEMORY.md'], 2.0, 0.1)
    (1, ([], []))
    >>> _ = (root / 'MEMORY.md').write_text('# Facts, more')
    >>> [rel for rel, _, _, _ in stamps.changes(str(root), [], [], ['MEMORY.md'], 2.0, 0.1)[0]]
    ['MEMORY.md']"""

    def __new__(cls) -> FileStamps: ...
    def extend(self, stamps: Sequence[tuple[str, float, int, float]]) -> None:
        """Add ``(path, st_mtime, size, read_at)`` stamps (a path given again replaces its stamp)."""
    def save(self, path: str | os.PathLike[str], generation: int) -> bool:
        """Write the stamps and the store ``generation`` they reflect to ``path`` (aside, then renamed into place),
        without the GIL; ``False`` when the file could not be written (it is a derived copy: nothing else changes)."""
    @staticmethod
    def load(path: str | os.PathLike[str]) -> tuple[FileStamps, int] | None:
        """The stamps and generation :meth:`save` wrote to ``path``, or ``None`` for a missing, short or foreign file."""
    def remove(self, paths: Sequence[str]) -> None:
        """Forget the stamps of ``paths`` (those it holds)."""
    def __len__(self) -> int: ...
    def changes(
        self,
        workspace: str | os.PathLike[str],
        extra_roots: Sequence[str | os.PathLike[str]],
        media: Sequence[str],
        root_files: Sequence[str],
        racy_s: float,
        racy_fine_s: float,
    ) -> tuple[list[tuple[str, str, float, int]], list[str]]:
        """What a sync must look at: the memory files :func:`scan_memory_files` lists (same arguments; the scan runs on
        the calling thread alone, so that its priority holds) that are not stamped, or not with their current mtime
        and size, or were read within ``racy_s`` (whole-second mtimes) or ``racy_fine_s`` of their mtime, as
        ``(relative path, path, st_mtime, size)``; and the stamped paths it does not list, sorted. Both empty: nothing
        to sync.

        Raises:
            InvalidInputError: a name in ``root_files`` is not a plain file name."""

@final
class MessageIndex:
    """An in-RAM BM25 index of transcript messages for ranked ``sessions_search``, fed the session store's full-text
    rows (analyzer tokens, space-separated); searches re-rank BM25 candidates by how much of the question each
    message covers, by the message each replies to (the one before it in its session; add a session's rows in
    order) and by how well their session as a whole answers.

    >>> index = MessageIndex()
    >>> index.add([1, 2], ["agent:main:a", "agent:main:b"], ["carolin went support group", "support support"])
    >>> [i for i, _ in index.search("When did Caroline go to the support group?")]
    [1, 2]
    >>> [i for i, _ in index.search("support", exclude=["agent:main:a"])]
    [2]
    """

    def __new__(cls, *, stem: bool = True) -> Self: ...
    def add(self, ids: Sequence[int], sessions: Sequence[str], tokens: Sequence[str]) -> None:
        """Index rows (ids, their session keys and token strings) and make them searchable."""
    def delete_sessions(self, sessions: Sequence[str]) -> None:
        """Remove the rows of these sessions (gone from searches after the next ``add``)."""
    def clear(self) -> None:
        """Remove every row."""
    @property
    def num_docs(self) -> int:
        """Rows searchable now."""
    def search(
        self, query: str, k: int = 10, *, only: Sequence[str] | None = None, exclude: Sequence[str] | None = None
    ) -> list[tuple[int, float]]:
        """The best ``k`` messages for ``query`` as ``(id, score)``, best first: from the sessions in ``only`` when
        given, else from all but those in ``exclude``."""
    def __len__(self) -> int: ...
