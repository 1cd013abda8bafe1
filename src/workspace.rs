//! Listing an agent workspace's memory files: the stat-only scan behind every sync.
//!
//! Mirrors OpenClaw's `listMemoryFiles` (see `python/memsift/index/workspace.py`, which documents the rules):
//! the root files (1.x: `MEMORY.md`, `memory.md`; 2.x: `MEMORY.md`, `USER.md`), every `*.md` below `memory/`, and the
//! extra paths (folders scanned recursively, where
//! files with a media suffix count too). Symlinks are never followed, tool folders are skipped, a file reached
//! twice (same device and inode) is kept at its first path, and unreadable entries are left out. In Rust because
//! a sync with nothing to do is this scan plus a table lookup: Python's `os.walk` and `pathlib` took ~0.4 s for
//! 5k files, most of it building path objects.

use rustc_hash::{FxHashMap, FxHashSet};
use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use rayon::prelude::*;

use crate::chunk::{budget, chunk_memory, sha256_hex, MemoryChunk};
use crate::error::{invalid, Result};

/// Folder names never scanned: version control, dependencies and caches, not notes.
pub const IGNORED_DIRS: [&str; 10] =
    [".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox"];

/// One listed memory file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileStat {
    /// Relative to the workspace, `/`-separated (`../` for an extra path outside it).
    pub rel: OsString,
    /// The path the file was found at (the root joined with the folders walked).
    pub abs: PathBuf,
    /// Seconds since the epoch, computed as Python's `st_mtime` is (so stored values compare equal).
    pub mtime: f64,
    pub size: u64,
}

fn lstat(path: &Path) -> Option<Metadata> {
    fs::symlink_metadata(path).ok()
}

fn is_plain_dir(path: &Path) -> bool {
    lstat(path).is_some_and(|m| m.file_type().is_dir())
}

/// `*.md`, or a media suffix (lower-cased, with its dot) when `media` is not empty.
fn wanted(name: &std::ffi::OsStr, media: &[String]) -> bool {
    if name.as_encoded_bytes().ends_with(b".md") {
        return true;
    }
    if media.is_empty() {
        return false;
    }
    // Python's os.path.splitext: the suffix after the last dot, ignoring leading dots of the name.
    let name = name.to_string_lossy();
    let stem_start = name.len() - name.trim_start_matches('.').len();
    name[stem_start..].rfind('.').is_some_and(|dot| media.contains(&name[stem_start + dot..].to_lowercase()))
}

/// Lexically normalized absolute path (`.` and `..` resolved without touching the file system), as Python's
/// `os.path.abspath` on an absolute path.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `path` relative to `base` (both absolute), as Python's `os.path.relpath`, `/`-separated.
fn relative(base: &Path, path: &Path) -> OsString {
    let (base, path) = (normalize(base), normalize(path));
    let base_parts: Vec<_> = base.components().collect();
    let path_parts: Vec<_> = path.components().collect();
    let common = base_parts.iter().zip(&path_parts).take_while(|(a, b)| a == b).count();
    let mut rel = OsString::new();
    let ups = std::iter::repeat_n(std::ffi::OsStr::new(".."), base_parts.len() - common);
    for (i, part) in ups.chain(path_parts[common..].iter().map(|c| c.as_os_str())).enumerate() {
        if i > 0 {
            rel.push("/");
        }
        rel.push(part);
    }
    if rel.is_empty() {
        rel.push(".");
    }
    rel
}

struct Scan<'a> {
    workspace: &'a Path,
    seen: FxHashSet<(u64, u64)>,
    files: Vec<FileStat>,
    /// Stat a folder's files on the rayon pool (a first listing, where a cold disk answers faster to several
    /// requests) or on the calling thread (a check beside searches: one core, at the caller's priority).
    parallel: bool,
}

impl Scan<'_> {
    /// `rel`: the path relative to the workspace, `/`-separated (a walk builds it from its folder's).
    fn add(&mut self, rel: OsString, path: PathBuf, meta: &Metadata) {
        if meta.file_type().is_file() && self.seen.insert((meta.dev(), meta.ino())) {
            // Python's st_mtime: the double of the seconds plus the nanoseconds times 1e-9.
            #[allow(clippy::cast_precision_loss)]
            let mtime = meta.mtime() as f64 + meta.mtime_nsec() as f64 * 1e-9;
            self.files.push(FileStat { rel, abs: path, mtime, size: meta.size() });
        }
    }

    fn plain_file(&mut self, path: PathBuf) {
        if let Some(meta) = lstat(&path) {
            self.add(relative(self.workspace, &path), path, &meta);
        }
    }

    /// Top-down like `os.walk`: a folder's wanted files (sorted), then its sub-folders (sorted) in turn. Entry
    /// types come from the directory listing and each file is stat'ed relative to its folder, in parallel.
    fn walk(&mut self, dir: &Path, media: &[String]) {
        fn stat((name, entry): &(OsString, fs::DirEntry)) -> Option<(&OsString, PathBuf, Metadata)> {
            entry.metadata().ok().map(|m| (name, entry.path(), m))
        }
        let Ok(entries) = fs::read_dir(dir) else { return };
        let mut entries: Vec<(OsString, fs::DirEntry)> =
            entries.filter_map(std::result::Result::ok).map(|e| (e.file_name(), e)).collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut folders = Vec::new();
        let mut files = Vec::new();
        for (name, entry) in entries {
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if !IGNORED_DIRS.iter().any(|ignored| name == *ignored) {
                    folders.push(entry.path());
                }
            } else if kind.is_file() && wanted(&name, media) {
                files.push((name, entry));
            }
        }
        let stats: Vec<_> =
            if self.parallel { files.par_iter().map(stat).collect() } else { files.iter().map(stat).collect() };
        // Relative paths from the folder's, computed once: normalizing both paths per file cost more than its stat.
        let folder = relative(self.workspace, dir);
        let under = |name: &OsString| {
            if folder == "." {
                return name.clone();
            }
            let mut rel = OsString::with_capacity(folder.len() + 1 + name.len());
            rel.push(&folder);
            rel.push("/");
            rel.push(name);
            rel
        };
        for (name, path, meta) in stats.into_iter().flatten() {
            self.add(under(name), path, &meta);
        }
        for folder in folders {
            self.walk(&folder, media);
        }
    }
}

/// The memory files of `workspace` (absolute) and of `extra_roots` (absolute: a folder is walked, a file is
/// taken when it is wanted), in scan order. `root_files` are the names taken at the workspace root, in that order
/// and before `memory/`: they differ by OpenClaw version (1.x `MEMORY.md`, `memory.md`; 2.x `MEMORY.md`,
/// `USER.md`). `media` are lower-case suffixes with their dot, counted in the extra paths only. `parallel`: stat
/// each folder's files on the rayon pool (a first listing) or on the calling thread alone (a check that runs beside
/// searches, at the caller's priority: 584k files take 1.1 s against 1.0 s on two threads, the kernel's stat path
/// being the cost).
pub fn scan_memory_files(
    workspace: &Path,
    extra_roots: &[PathBuf],
    media: &[String],
    root_files: &[String],
    parallel: bool,
) -> Vec<FileStat> {
    let mut scan = Scan { workspace, seen: FxHashSet::default(), files: Vec::new(), parallel };
    for name in root_files {
        scan.plain_file(workspace.join(name));
    }
    let memory = workspace.join("memory");
    if is_plain_dir(&memory) {
        scan.walk(&memory, &[]);
    }
    for root in extra_roots {
        if is_plain_dir(root) {
            scan.walk(root, media);
        } else if root.file_name().is_some_and(|name| wanted(name, media)) {
            scan.plain_file(root.clone());
        }
    }
    scan.files
}

/// How close to its mtime a file may have been read and still be trusted: within this window a write in the same
/// mtime tick could hide behind an unchanged stat ("racy clean"). The Python layer owns the values.
#[derive(Debug, Clone, Copy)]
pub struct RacyWindows {
    /// For whole-second mtimes (FAT, HFS+, old ext4 inodes).
    pub whole_seconds: f64,
    /// For finer mtimes.
    pub fine: f64,
}

impl RacyWindows {
    /// Whether a file with `mtime`, read at `read_at`, could have been written again within its mtime tick after
    /// the read. An mtime in the future is not racy: the next write stamps an earlier time.
    #[must_use]
    pub fn racy(self, mtime: f64, read_at: f64) -> bool {
        let window = if mtime.fract() == 0.0 { self.whole_seconds } else { self.fine };
        -window < read_at - mtime && read_at - mtime < window
    }
}

/// What the store recorded for an indexed file: its stat when indexed, and when it was read.
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    pub mtime: f64,
    pub size: u64,
    pub read_at: f64,
}

/// The first bytes of a file [`FileStamps::save`] writes (the format's version is its last digit).
const STAMPS_MAGIC: &[u8] = b"MSSTAMP1";

/// Each `(path, stamp)` of a file [`FileStamps::save`] wrote, in its order, and the generation it reflects; `None`
/// (after some calls, maybe) for a missing, short or foreign file.
fn read_saved(path: &Path, mut each: impl FnMut(&[u8], Stamp)) -> Option<u64> {
    let data = fs::read(path).ok()?;
    let mut at = STAMPS_MAGIC.len();
    if data.get(..at)? != STAMPS_MAGIC {
        return None;
    }
    let mut take = |n: usize| -> Option<&[u8]> {
        let piece = data.get(at..at.checked_add(n)?)?;
        at += n;
        Some(piece)
    };
    let word = |piece: &[u8]| -> Option<[u8; 8]> { piece.try_into().ok() };
    let generation = u64::from_le_bytes(word(take(8)?)?);
    let count = u64::from_le_bytes(word(take(8)?)?);
    for _ in 0..count {
        let len = usize::try_from(u64::from_le_bytes(word(take(8)?)?)).ok()?;
        let name = take(len)?;
        let mtime = f64::from_le_bytes(word(take(8)?)?);
        let size = u64::from_le_bytes(word(take(8)?)?);
        let read_at = f64::from_le_bytes(word(take(8)?)?);
        each(name, Stamp { mtime, size, read_at });
    }
    take(1).is_none().then_some(generation)
}

/// The paths of the indexed files in a file [`FileStamps::save`] wrote (in path order, as UTF-8: a store's paths
/// are; a skipped file's stamp, which never matches, a NaN mtime, is left out) and the generation it reflects:
/// a new process's path catalogue without the stamps' table or a read of every path from the store.
#[must_use]
pub fn saved_paths(path: &Path) -> Option<(Vec<String>, u64)> {
    let mut paths = Vec::new();
    let generation = read_saved(path, |name, stamp| {
        if let (false, Ok(name)) = (stamp.mtime.is_nan(), std::str::from_utf8(name)) {
            paths.push(name.to_owned());
        }
    })?;
    Some((paths, generation))
}

/// The stamps of every indexed file, by relative path: with [`scan_memory_files`], whether a sync would find
/// nothing to do, without leaving the core.
#[derive(Debug, Default)]
pub struct FileStamps {
    stamps: FxHashMap<OsString, Stamp>,
}

impl FileStamps {
    /// Add or replace the stamp of `path`.
    pub fn insert(&mut self, path: OsString, stamp: Stamp) {
        self.stamps.insert(path, stamp);
    }

    /// Write the stamps and the store `generation` they reflect to `path` (beside it first, then renamed into
    /// place, so a reader never sees half a file), in path order: a derived copy that lets the next process skip
    /// reading every stamp from the store, and build its path catalogue from the file ([`saved_paths`]).
    ///
    /// # Errors
    /// What writing or renaming the file failed with.
    pub fn save(&self, path: &Path, generation: u64) -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::ffi::OsStrExt;
        let mut entries: Vec<(&OsString, &Stamp)> = self.stamps.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut out = Vec::with_capacity(24 + self.stamps.len() * 64);
        out.extend_from_slice(STAMPS_MAGIC);
        out.extend_from_slice(&generation.to_le_bytes());
        out.extend_from_slice(&(self.stamps.len() as u64).to_le_bytes());
        for (name, stamp) in entries {
            let bytes = name.as_bytes();
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(bytes);
            out.extend_from_slice(&stamp.mtime.to_le_bytes());
            out.extend_from_slice(&stamp.size.to_le_bytes());
            out.extend_from_slice(&stamp.read_at.to_le_bytes());
        }
        let aside = path.with_extension(format!("tmp-{}", std::process::id()));
        let mut file = fs::File::create(&aside)?;
        file.write_all(&out)?;
        file.sync_all()?;
        fs::rename(&aside, path)
    }

    /// The stamps and generation [`save`](Self::save) wrote to `path`; `None` for a missing, short or foreign
    /// file (the caller reads the store instead).
    #[must_use]
    pub fn load(path: &Path) -> Option<(Self, u64)> {
        use std::os::unix::ffi::OsStrExt;
        let mut stamps = FxHashMap::default();
        let generation = read_saved(path, |name, stamp| {
            stamps.insert(std::ffi::OsStr::from_bytes(name).to_owned(), stamp);
        })?;
        Some((Self { stamps }, generation))
    }

    /// Forget the stamp of `path`, if there is one.
    pub fn remove(&mut self, path: &OsString) {
        self.stamps.remove(path);
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.stamps.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.stamps.is_empty()
    }

    /// What a sync must look at, from `files` (a scan, one entry per path): the files it lists that are not stamped,
    /// or not with their current mtime and size, or were read within their racy window; and the stamped paths it
    /// does not list (gone). Both empty: nothing to sync.
    #[must_use]
    #[allow(clippy::float_cmp)] // the same stat gives the same double: exact on purpose
    pub fn changes<'a>(&'a self, files: &'a [FileStat], racy: RacyWindows) -> (Vec<&'a FileStat>, Vec<&'a OsString>) {
        let changed = files
            .iter()
            .filter(|file| {
                !self.stamps.get(&file.rel).is_some_and(|stamp| {
                    stamp.mtime == file.mtime && stamp.size == file.size && !racy.racy(file.mtime, stamp.read_at)
                })
            })
            .collect();
        let stamped_and_listed = files.iter().filter(|file| self.stamps.contains_key(&file.rel)).count();
        let gone = if stamped_and_listed == self.stamps.len() {
            Vec::new() // every stamped path is listed (a scan lists each path once)
        } else {
            let listed: FxHashSet<&OsString> = files.iter().map(|file| &file.rel).collect();
            let mut gone: Vec<&OsString> = self.stamps.keys().filter(|path| !listed.contains(path)).collect();
            gone.sort_unstable();
            gone
        };
        (changed, gone)
    }
}

/// Bytes of a file sniffed for NUL when deciding that it is binary (as `read_memory_file`).
const SNIFF_BYTES: usize = 8192;

/// A memory file read, hashed and chunked.
pub struct PreparedFile {
    /// sha256 (hex) of the raw text (annotations included: a change to one is a change to the file).
    pub hash: String,
    pub chunks: Vec<MemoryChunk>,
}

/// The UTF-8 text of a memory file (a leading BOM dropped), or `None` where `read_memory_file` would refuse it
/// (too large, unreadable, binary, not UTF-8): the caller then reads it in Python for the exact reason.
fn read_markdown(path: &Path, max_bytes: u64) -> Option<String> {
    if fs::metadata(path).ok()?.len() > max_bytes {
        return None;
    }
    let data = fs::read(path).ok()?;
    if u64::try_from(data.len()).map_or(true, |n| n > max_bytes) || data[..data.len().min(SNIFF_BYTES)].contains(&0) {
        return None;
    }
    let text = String::from_utf8(data).ok()?;
    Some(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// Read, hash and chunk `paths` in parallel (what a sync does to each changed file), in order; `None` for a
/// file to read again in Python (see [`read_markdown`]). Each file is chunked by [`chunk_memory`]: per entry
/// where `per_entry` (one flag per path) says so, its annotations stripped with `annotations`.
pub fn prepare_files(
    paths: &[PathBuf],
    max_bytes: u64,
    tokens: usize,
    overlap: usize,
    per_entry: &[bool],
    annotations: bool,
) -> Result<Vec<Option<PreparedFile>>> {
    if per_entry.len() != paths.len() {
        return invalid!("per_entry has {} flags for {} paths", per_entry.len(), paths.len());
    }
    // Bad sizes are refused even when no file can be read.
    budget(tokens, overlap)?;
    paths
        .par_iter()
        .zip(per_entry)
        .map(|(path, &per_entry)| {
            let Some(text) = read_markdown(path, max_bytes) else { return Ok(None) };
            let chunks = chunk_memory(&text, tokens, overlap, per_entry, annotations)?;
            Ok(Some(PreparedFile { hash: sha256_hex(&text), chunks }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("memsift-ws-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|&n| n.to_owned()).collect()
    }

    fn rels(files: &[FileStat]) -> Vec<String> {
        files.iter().map(|f| f.rel.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn lists_memory_in_walk_order_without_links_or_tool_folders() {
        let root = temp_dir("order");
        fs::write(root.join("MEMORY.md"), "a").unwrap();
        for dir in ["memory/b", "memory/a", "memory/node_modules", "notes"] {
            fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in ["memory/z.md", "memory/b/x.md", "memory/a/y.md", "memory/node_modules/n.md", "memory/t.txt"] {
            fs::write(root.join(file), "x").unwrap();
        }
        fs::write(root.join("notes/n.md"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("notes"), root.join("memory/link")).unwrap();
        std::os::unix::fs::symlink(root.join("notes/n.md"), root.join("memory/l.md")).unwrap();
        fs::hard_link(root.join("memory/z.md"), root.join("memory/zz.md")).unwrap();
        let files = scan_memory_files(&root, &[], &[], &names(&["MEMORY.md", "memory.md"]), true);
        assert_eq!(rels(&files), ["MEMORY.md", "memory/z.md", "memory/a/y.md", "memory/b/x.md"]);
        assert_eq!(files[0].size, 1);
        let meta = fs::metadata(root.join("MEMORY.md")).unwrap();
        assert!((files[0].mtime - meta.mtime() as f64).abs() < 1.0);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn stamps_tell_what_a_sync_must_read_and_what_is_gone() {
        let root = temp_dir("stamps");
        fs::create_dir_all(root.join("memory")).unwrap();
        fs::write(root.join("memory/a.md"), "a").unwrap();
        fs::write(root.join("memory/b.md"), "bb").unwrap();
        let windows = RacyWindows { whole_seconds: 2.0, fine: 0.1 };
        let scan = || scan_memory_files(&root, &[], &[], &names(&["MEMORY.md"]), false);
        let stamped = |files: &[FileStat], read_late: f64| {
            let mut stamps = FileStamps::default();
            for f in files {
                stamps.insert(f.rel.clone(), Stamp { mtime: f.mtime, size: f.size, read_at: f.mtime + read_late });
            }
            stamps
        };
        let summary = |stamps: &FileStamps, files: &[FileStat]| {
            let (changed, gone) = stamps.changes(files, windows);
            let changed: Vec<String> = changed.iter().map(|f| f.rel.to_string_lossy().into_owned()).collect();
            let gone: Vec<String> = gone.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            (changed, gone)
        };
        let none: Vec<String> = Vec::new();
        let files = scan();
        assert_eq!(summary(&stamped(&files, 5.0), &scan()), (none.clone(), none.clone()));
        // Read within the mtime tick: racy, both read again; an mtime in the future is not racy.
        assert_eq!(summary(&stamped(&files, 0.01), &scan()).0, ["memory/a.md", "memory/b.md"]);
        assert_eq!(summary(&stamped(&files, -5.0), &scan()), (none.clone(), none.clone()));
        fs::write(root.join("memory/b.md"), "bbb").unwrap();
        fs::write(root.join("memory/c.md"), "c").unwrap();
        fs::remove_file(root.join("memory/a.md")).unwrap();
        assert_eq!(
            summary(&stamped(&files, 5.0), &scan()),
            (vec!["memory/b.md".to_owned(), "memory/c.md".to_owned()], vec!["memory/a.md".to_owned()])
        );
        assert!(RacyWindows { whole_seconds: 2.0, fine: 0.1 }.racy(100.0, 101.5)); // whole seconds: a 2 s window
        assert!(!RacyWindows { whole_seconds: 2.0, fine: 0.1 }.racy(100.25, 101.5));
    }

    #[test]
    fn saved_stamps_load_as_they_were_and_a_damaged_file_loads_as_none() {
        let root = temp_dir("saved-stamps");
        let mut stamps = FileStamps::default();
        stamps.insert("memory/a.md".into(), Stamp { mtime: 1_700_000_000.123_456_7, size: 42, read_at: 1.5 });
        stamps.insert("memory/ü.md".into(), Stamp { mtime: f64::NAN, size: 0, read_at: 0.0 });
        let file = root.join("index.stamps");
        stamps.save(&file, 7).unwrap();
        let (loaded, generation) = FileStamps::load(&file).unwrap();
        assert_eq!((generation, loaded.len()), (7, 2));
        let a = loaded.stamps[&OsString::from("memory/a.md")];
        assert_eq!(
            (a.mtime.to_bits(), a.size, a.read_at.to_bits()),
            (1_700_000_000.123_456_7f64.to_bits(), 42, 1.5f64.to_bits())
        );
        assert!(loaded.stamps[&OsString::from("memory/ü.md")].mtime.is_nan());
        stamps.insert("MEMORY.md".into(), Stamp { mtime: 1.0, size: 1, read_at: 2.0 });
        stamps.insert("memory/0.md".into(), Stamp { mtime: 1.0, size: 1, read_at: 2.0 });
        stamps.save(&file, 8).unwrap();
        let indexed = (vec!["MEMORY.md".to_owned(), "memory/0.md".to_owned(), "memory/a.md".to_owned()], 8);
        assert_eq!(saved_paths(&file), Some(indexed), "in path order, the skipped file's left out");
        let data = fs::read(&file).unwrap();
        for cut in [0, 5, data.len() - 1] {
            fs::write(&file, &data[..cut]).unwrap();
            assert!(FileStamps::load(&file).is_none(), "cut at {cut}");
        }
        fs::write(&file, [data.as_slice(), b"x"].concat()).unwrap();
        assert!(FileStamps::load(&file).is_none() && saved_paths(&file).is_none());
        assert!(FileStamps::load(&root.join("missing")).is_none());
    }

    #[test]
    fn extra_paths_outside_the_workspace_are_relative_with_parent_steps() {
        let base = temp_dir("extra");
        let (root, extra) = (base.join("ws"), base.join("shared"));
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(extra.join("img")).unwrap();
        fs::write(extra.join("img/Photo.PNG"), "p").unwrap();
        fs::write(extra.join("img/.png"), "p").unwrap();
        fs::write(extra.join("a.md"), "a").unwrap();
        fs::write(base.join("single.md"), "s").unwrap();
        let media = [".png".to_owned()];
        let roots = [extra.clone(), root.join("../single.md"), base.join("missing")];
        let files = scan_memory_files(&root, &roots, &media, &[], true);
        assert_eq!(rels(&files), ["../shared/a.md", "../shared/img/Photo.PNG", "../single.md"]);
        assert_eq!(scan_memory_files(&root, &roots[..1], &[], &[], true).len(), 1);
        fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn relative_paths_match_python_relpath() {
        let rel = |base: &str, path: &str| relative(Path::new(base), Path::new(path)).into_string().unwrap();
        assert_eq!(rel("/a/b", "/a/b/c/d.md"), "c/d.md");
        assert_eq!(rel("/a/b", "/a/x/./y/../d.md"), "../x/d.md");
        assert_eq!(rel("/a/b/", "/a/b"), ".");
    }

    #[test]
    fn root_files_are_the_profile_s_names_in_its_order() {
        let root = temp_dir("roots");
        fs::create_dir_all(root.join("memory")).unwrap();
        for file in ["MEMORY.md", "memory.md", "USER.md", "DREAMS.md", "memory/a.md"] {
            fs::write(root.join(file), "x").unwrap();
        }
        std::os::unix::fs::symlink(root.join("memory/a.md"), root.join("LINK.md")).unwrap();
        let scan = |roots: &[&str]| rels(&scan_memory_files(&root, &[], &[], &names(roots), true));
        assert_eq!(scan(&["MEMORY.md", "memory.md"]), ["MEMORY.md", "memory.md", "memory/a.md"]);
        assert_eq!(scan(&["MEMORY.md", "USER.md"]), ["MEMORY.md", "USER.md", "memory/a.md"]);
        assert_eq!(scan(&["USER.md", "MEMORY.md", "LINK.md", "gone.md"]), ["USER.md", "MEMORY.md", "memory/a.md"]);
        assert_eq!(scan(&[]), ["memory/a.md"]);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn prepared_files_match_chunking_the_text_and_skip_what_python_must_explain() {
        let root = temp_dir("prepare");
        fs::write(root.join("a.md"), "\u{feff}# Title\n\nbody line\n").unwrap();
        fs::write(root.join("bin.md"), b"x\0y").unwrap();
        fs::write(root.join("latin1.md"), b"caf\xe9").unwrap();
        fs::write(root.join("big.md"), "x".repeat(100)).unwrap();
        let paths: Vec<PathBuf> =
            ["a.md", "bin.md", "latin1.md", "big.md", "gone.md"].iter().map(|n| root.join(n)).collect();
        let prepared = prepare_files(&paths, 50, 400, 80, &[false; 5], false).unwrap();
        let first = prepared[0].as_ref().unwrap();
        assert_eq!(first.hash, sha256_hex("# Title\n\nbody line\n"));
        assert_eq!(first.chunks, chunk_memory("# Title\n\nbody line\n", 400, 80, false, false).unwrap());
        assert!(prepared[1..].iter().all(Option::is_none));
        assert!(prepare_files(&paths, 50, 400, 80, &[false], false).is_err());
        assert!(prepare_files(&[], 50, 0, 0, &[], false).is_err());
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn prepared_curated_files_chunk_per_entry_and_hash_the_raw_text() {
        let root = temp_dir("curated");
        let text = "- a <!-- importance: 9 -->\n- b\n";
        for name in ["MEMORY.md", "note.md"] {
            fs::write(root.join(name), text).unwrap();
        }
        let paths = [root.join("MEMORY.md"), root.join("note.md")];
        let prepared = prepare_files(&paths, 1000, 400, 80, &[true, false], true).unwrap();
        let chunks = |i: usize| {
            let file: &PreparedFile = prepared[i].as_ref().unwrap();
            assert_eq!(file.hash, sha256_hex(text));
            file.chunks.iter().map(|c| (c.chunk.start_line, c.chunk.text.clone(), c.importance)).collect::<Vec<_>>()
        };
        assert_eq!(chunks(0), [(1, "- a".to_owned(), Some(9)), (2, "- b\n".to_owned(), None)]);
        assert_eq!(chunks(1), [(1, "- a\n- b\n".to_owned(), None)]);
        fs::remove_dir_all(root).unwrap();
    }
}
