//! Bindings of the ranking functions: the one ranking stage and its building blocks.

use super::*;
use pyo3::types::PyDict;

/// OpenClaw's ``bm25RankToScore`` for a positive BM25 score ``r``: ``r / (1 + r)``.
///
/// >>> bm25_score_to_unit(1.0)
/// 0.5
#[pyfunction(name = "bm25_score_to_unit")]
pub(super) fn bm25_score_to_unit_py(score: Num) -> f64 {
    rank::bm25_score_to_unit(score.0)
}

/// Hybrid weights clamped to [0, 1] and normalized to sum 1 (both 0 -> 0.7 / 0.3), as OpenClaw's config does.
///
/// >>> normalize_weights(2.0, 2.0)
/// (0.5, 0.5)
#[pyfunction(name = "normalize_weights")]
pub(super) fn normalize_weights_py(vector_weight: Num, text_weight: Num) -> PyResult<(f64, f64)> {
    Ok(rank::normalize_weights(vector_weight.0, text_weight.0)?)
}

/// Jaccard similarity of the analyzer token sets of two texts (both empty -> 1).
#[pyfunction(name = "jaccard")]
pub(super) fn jaccard_py(a: Text, b: Text) -> f64 {
    rank::jaccard(Analyzer::default(), &a, &b)
}

/// MMR order (indices) with Jaccard text similarity, as OpenClaw's ``mmrRerank``.
#[pyfunction(name = "mmr")]
#[pyo3(signature = (scores, texts, lambda_ = Num(0.7)), text_signature = "(scores, texts, lambda_=0.7)")]
pub(super) fn mmr_py(py: Python<'_>, scores: Vec<Num>, texts: Vec<Text>, lambda_: Num) -> PyResult<Vec<usize>> {
    let (scores, texts, lambda_) = (nums(scores), self::texts(texts), lambda_.0);
    detached(py, move || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        rank::mmr(Analyzer::default(), &scores, &refs, lambda_)
    })
}

/// For each text (best-ranked first), the earlier texts it may repeat (``memsift.search.dedupe``'s first look).
#[pyfunction(name = "near_copy_candidates")]
pub(super) fn near_copy_candidates_py(py: Python<'_>, texts: Vec<Text>, coarse: Num) -> PyResult<Vec<Vec<usize>>> {
    let (texts, coarse) = (self::texts(texts), coarse.0);
    detached(py, move || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        Ok(crate::dedupe::near_copy_candidates(&refs, coarse))
    })
}

/// ``exp(-ln2 / half_life_days * max(0, age_days))``.
#[pyfunction(name = "decay_multiplier")]
pub(super) fn decay_multiplier_py(age_days: Num, half_life_days: Num) -> f64 {
    rank::decay_multiplier(age_days.0, half_life_days.0)
}

/// Date of a ``memory/[.../]YYYY-MM-DD[-suffix].md`` path, ``None`` if absent or invalid.
///
/// >>> memory_date_from_path("memory/2026-11-30.md")
/// datetime.date(2026, 11, 30)
#[pyfunction(name = "memory_date_from_path")]
pub(super) fn memory_date_from_path_py(py: Python<'_>, path: Text) -> PyResult<Option<Bound<'_, PyDate>>> {
    rank::memory_date_from_path(&path).map(|(y, m, d)| PyDate::new(py, y, m as u8, d as u8)).transpose()
}

/// ``MEMORY.md``, ``memory.md``, ``USER.md`` and undated files under ``memory/`` never decay.
#[pyfunction(name = "is_evergreen_path")]
pub(super) fn is_evergreen_path_py(path: Text) -> bool {
    rank::is_evergreen_path(&path)
}

/// Decayed scores (timestamps in epoch seconds), as OpenClaw's temporal decay.
#[pyfunction(name = "apply_temporal_decay")]
#[pyo3(signature = (scores, paths, sources, mtimes, now, half_life_days = Num(30.0)), text_signature = "(scores, paths, sources, mtimes, now, half_life_days=30.0)")]
pub(super) fn apply_temporal_decay_py(
    scores: Vec<Num>,
    paths: Vec<Text>,
    sources: Vec<Text>,
    mtimes: Vec<Option<Num>>,
    now: Num,
    half_life_days: Num,
) -> PyResult<Vec<f64>> {
    let (scores, paths, sources) = (nums(scores), texts(paths), texts(sources));
    let mtimes: Vec<Option<f64>> = mtimes.into_iter().map(|m| m.map(|m| m.0)).collect();
    let (now, half_life_days) = (now.0, half_life_days.0);
    let n = scores.len();
    if paths.len() != n || sources.len() != n || mtimes.len() != n {
        return Err(InvalidInputError::new_err(format!(
            "scores, paths, sources and mtimes must have the same length, got {n}, {}, {}, {}",
            paths.len(),
            sources.len(),
            mtimes.len()
        )));
    }
    let items: Vec<rank::DecayItem<'_>> = (0..n)
        .map(|i| rank::DecayItem { score: scores[i], path: &paths[i], source: &sources[i], mtime: mtimes[i] })
        .collect();
    Ok(rank::apply_temporal_decay(&items, now, half_life_days))
}

/// Ranked ``sessions_search``'s merge of its legs: ``(id, score)`` best first.
///
/// One value per candidate message in each list: its ``ids``, its ``sessions`` (keys), its keyword leg score and
/// its cosine (``None`` where that leg did not find it). Each leg is scaled over its own candidates (keyword by the
/// best score, cosines from the weakest to the best), weighted, and each message gains a tenth of the best other
/// message of its session; messages scoring 0 are left out.
///
/// >>> fuse_messages([1, 2], ["a", "b"], [4.0, None], [0.5, 0.9], 0.7, 0.3)
/// [(2, 0.7), (1, 0.3)]
#[pyfunction(name = "fuse_messages")]
pub(super) fn fuse_messages_py(
    ids: Vec<Id>,
    sessions: Vec<Text>,
    keyword: Vec<Option<Num>>,
    vector: Vec<Option<Num>>,
    vector_weight: Num,
    text_weight: Num,
) -> PyResult<Vec<(u64, f64)>> {
    let n = ids.len();
    let lengths = [sessions.len(), keyword.len(), vector.len()];
    if lengths.iter().any(|&len| len != n) {
        return Err(InvalidInputError::new_err(format!("every candidate list must have {n} items, got {lengths:?}")));
    }
    let (vector_weight, text_weight) = rank::normalize_weights(vector_weight.0, text_weight.0)?;
    let mut numbers: FxHashMap<String, usize> = FxHashMap::default();
    let candidates: Vec<rank::MessageCandidate> = (0..n)
        .map(|i| {
            let next = numbers.len();
            rank::MessageCandidate {
                id: ids[i].0,
                session: *numbers.entry(sessions[i].0.clone()).or_insert(next),
                keyword: keyword[i].map(|k| k.0).filter(|k| k.is_finite()),
                vector: vector[i].map(|v| v.0).filter(|v| v.is_finite()),
            }
        })
        .collect();
    Ok(rank::fuse_messages(&candidates, vector_weight, text_weight))
}

/// Path tokens for the FTS-only path boost, shared by every search of the process.
static PATH_TOKENS: std::sync::LazyLock<Mutex<rank::PathTokens>> = std::sync::LazyLock::new(Mutex::default);

/// memsift's ranking of one query's candidates (merge, temporal decay, path tiers, MMR, floor) in one call.
///
/// Each list holds one value per candidate: chunk ``ids``, cosine ``vector`` scores and raw BM25 ``keyword``
/// scores (0 where that leg did not find the chunk), partial ``path_scores``, exact path ``tiers`` (3 full path,
/// 2 basename, 1 stem, 0 none), and each chunk's ``paths``, ``sources``, ``mtimes`` and length in characters
/// (``chars``). ``mode`` is ``hybrid``, ``vector-only`` or ``fts-only``; ``keyword_best`` is the keyword leg's best
/// raw score; ``decay`` is ``(now, half_life_days)`` or None; ``mmr`` is ``(lambda, pool_size)`` or None, and with
/// it (in hybrid mode) the chunks' ``texts`` are needed, for MMR's similarity. ``whens`` (default all 1) is each
/// chunk's time factor from the query's time words (1 inside the window they name, less outside), multiplying the
/// merged score before decay. ``importance`` (default all ``None``) is each chunk's importance (OpenClaw 2.x
/// annotations, 1 to 10; ``None``: none): after decay, a score is multiplied by
/// ``0.75 + 0.05 * clamp(floor(importance), 1, 10)`` (0.8 to 1.25; 1 for ``None`` and for exact path hits).
/// ``lexical`` (OpenClaw 2.x; needs ``texts``) scores a keyword hit, in hybrid and FTS-only modes, as 2.x does:
/// ``min(1, r / (1 + r) + 0.45 * share + 0.2 * density + 0.18 * query tokens in the path + min(chars / 160, 0.18))``
/// (``share``: the query's distinct tokens that are whole tokens of the chunk, over their count; ``density``: that
/// count over the chunk's distinct tokens); and partial keyword matches give way as 2.x's keyword query leaves
/// them out: when 2.x would answer from its all-terms query alone (no stop word, short or numeric token lost on the
/// way to its keywords) and some keyword hit holds every query token (as itself or by its stem), a keyword hit
/// that does not counts as none; else, when some keyword hit holds one of 2.x's keywords as a whole word, a hit
/// matching through stems only counts as none (where none does, stemmed matches stand). A keyword hit that counts
/// as none is left out if no other leg found it.
///
/// Returns ``(order, scores, relaxed, explained)``: candidate indices best first (at most ``limit``), their
/// reported scores (capped at 1), whether the relaxed pass chose them, and ``None`` or, with ``explain``, per
/// candidate, in candidate order, a dict of how it was scored: ``keyword`` (the keyword score as merged),
/// ``merged`` (before the time factor and decay), ``decay`` (the multiplier) and ``dateSource`` (``path``, ``evergreen``, ``mtime``, ``none`` or ``off``),
/// ``importance`` (the importance multiplier applied after decay), ``beforeMmr`` and ``position`` (0-based;
/// ``None``: not returned), ``score``, and ``cut`` (``minScore``, ``limit``, ``partialMatch`` (with
/// ``lexical``: a partial keyword match that gave way to better ones) or ``None``).
#[pyfunction(name = "rank_candidates")]
#[pyo3(signature = (ids, vector, keyword, path_scores, tiers, paths, sources, mtimes, chars, *, mode, query, keyword_best, vector_weight, text_weight, decay, mmr, min_score, limit, texts = None, explain = false, whens = None, importance = None, lexical = false))]
#[allow(clippy::too_many_arguments)] // one call per query: the arrays and settings of the whole ranking
pub(super) fn rank_candidates_py(
    py: Python<'_>,
    ids: Vec<Id>,
    vector: Vec<Num>,
    keyword: Vec<Num>,
    path_scores: Vec<Num>,
    tiers: Vec<Int>,
    paths: Vec<Text>,
    sources: Vec<Text>,
    mtimes: Vec<Option<Num>>,
    chars: Vec<Int>,
    mode: Text,
    query: Text,
    keyword_best: Num,
    vector_weight: Num,
    text_weight: Num,
    decay: Option<(Num, Num)>,
    mmr: Option<(Num, Int)>,
    min_score: Num,
    limit: Int,
    texts: Option<Vec<Text>>,
    explain: bool,
    whens: Option<Vec<Num>>,
    importance: Option<Vec<Option<Num>>>,
    lexical: bool,
) -> PyResult<Py<PyAny>> {
    let n = ids.len();
    let lengths = [
        vector.len(),
        keyword.len(),
        path_scores.len(),
        tiers.len(),
        paths.len(),
        sources.len(),
        mtimes.len(),
        chars.len(),
        texts.as_ref().map_or(n, Vec::len),
        whens.as_ref().map_or(n, Vec::len),
        importance.as_ref().map_or(n, Vec::len),
    ];
    if lengths.iter().any(|&len| len != n) {
        return Err(InvalidInputError::new_err(format!("every candidate list must have {n} items, got {lengths:?}")));
    }
    let mode = rank::Mode::parse(&mode)?;
    let mmr = match mmr {
        Some((lambda, pool)) => Some((lambda.0, count(pool, "mmr pool size")?)),
        None => None,
    };
    let limit = count(limit, "limit")?;
    if mode == rank::Mode::Hybrid && mmr.is_some() && texts.is_none() {
        return Err(InvalidInputError::new_err("MMR compares the chunks' texts: pass texts=[...] with mmr"));
    }
    if lexical && mode != rank::Mode::VectorOnly && texts.is_none() {
        return Err(InvalidInputError::new_err(
            "lexical scoring reads the chunks' texts: pass texts=[...] with lexical=True",
        ));
    }
    let chars = chars.into_iter().map(|c| count(c, "chars")).collect::<PyResult<Vec<usize>>>()?;
    let ranked = detached(py, move || {
        let candidates: Vec<rank::Candidate<'_>> = (0..n)
            .map(|i| rank::Candidate {
                id: ids[i].0,
                vector: vector[i].0,
                keyword: keyword[i].0,
                path_score: path_scores[i].0,
                tier: u8::try_from(tiers[i].0.clamp(0, 3)).unwrap_or(0),
                path: &paths[i],
                source: &sources[i],
                mtime: mtimes[i].map(|m| m.0),
                chars: chars[i],
                text: texts.as_ref().map_or("", |texts| &texts[i]),
                when: whens.as_ref().map_or(1.0, |whens| whens[i].0),
                importance: importance.as_ref().and_then(|importance| importance[i].map(|v| v.0)),
            })
            .collect();
        let params = rank::RankParams {
            mode,
            vector_weight: vector_weight.0,
            text_weight: text_weight.0,
            keyword_best: keyword_best.0,
            query: &query,
            decay: decay.map(|(now, half_life)| (now.0, half_life.0)),
            mmr,
            min_score: min_score.0,
            limit,
            explain,
            lexical,
        };
        let mut path_tokens = PATH_TOKENS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        rank::rank(Analyzer::default(), &candidates, &params, &mut path_tokens)
    })?;
    if !explain {
        let none: Option<Py<PyList>> = None;
        return Ok((ranked.order, ranked.scores, ranked.relaxed, none).into_pyobject(py)?.into_any().unbind());
    }
    let rows = PyList::empty(py);
    for e in &ranked.explained {
        let row = PyDict::new(py);
        row.set_item("keyword", e.keyword)?;
        row.set_item("merged", e.merged)?;
        row.set_item("decay", e.decay)?;
        row.set_item("dateSource", e.date_source)?;
        row.set_item("importance", e.importance)?;
        row.set_item("beforeMmr", e.before_mmr)?;
        row.set_item("position", e.position)?;
        row.set_item("score", e.score)?;
        row.set_item("cut", e.cut)?;
        rows.append(row)?;
    }
    Ok((ranked.order, ranked.scores, ranked.relaxed, rows).into_pyobject(py)?.into_any().unbind())
}
