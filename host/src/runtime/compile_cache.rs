//! Compiled components on disk, so a restart (or a second host on the same
//! node) loads a guest without compiling it. A cache that cannot be used,
//! read or written costs a compile, never a failure.
//!
//! An entry is two files named by the SHA-256 of the wasm, the wasmtime
//! version and the engine's compatibility hash: `NAME.cwasm`, the output of
//! `Component::serialize`, and `NAME.record`, written by the host after it,
//! holding the SHA-256 of the `.cwasm` bytes, the SHA-256 of the source
//! component and the engine configuration (wasmtime version and
//! compatibility hash). A load reads the `.cwasm` into memory once, hashes
//! those bytes, compares everything with the record and deserializes the
//! same bytes. Whatever does not match (no record, a corrupt record, other
//! bytes) is compiled again, with a warning naming the file and the reason,
//! and the entry is rewritten.
//!
//! This defends against accidental corruption (a torn write, a bad disk), a
//! `.cwasm` swapped for another one (even another guest's compiled by the
//! same engine, which wasmtime's own header checks accept), entries left by
//! an older host or another engine, and a cache directory other users could
//! write: the host creates the directory 0700 and refuses it (compiling
//! instead, with a warning) when it is group- or world-writable or owned by
//! another user; entries are written 0600 through a temporary file and a
//! rename.
//!
//! It does not defend against anyone who already runs as the host's user
//! (or as root): they can rewrite a `.cwasm` and its record alike. The
//! record is a plain hash, not a signature: a key the host could read from
//! disk would be readable by them too. Native code loaded from the cache
//! runs as the host, so the directory must stay the host's own.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The wasmtime release the host is built with (checked against
/// `Cargo.lock` by a test), part of every cache key.
pub const WASMTIME_VERSION: &str = "48.0.8";

/// The first line of every record: the format and its version.
const RECORD_FORMAT: &str = "recon compiled component record 1";

/// The default cache directory: `$XDG_CACHE_HOME/recon/components`, else
/// `~/.cache/recon/components`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("recon").join("components"))
}

/// Where a compiled `wasm` for `engine` is kept under `dir`; its record is
/// the same path with the extension `record`.
pub fn entry_path(dir: &Path, engine: &Engine, wasm: &[u8]) -> PathBuf {
    dir.join(format!(
        "{}-wasmtime-{WASMTIME_VERSION}-{}.cwasm",
        sha256_hex(wasm),
        engine_hash(engine)
    ))
}

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Loaded from the cache.
    Cached,
    /// Compiled now (and stored, when a cache directory is set and usable).
    Compiled,
}

/// Loads `wasm` compiled for `engine` from `dir`, or compiles it and stores
/// the result there. Blocking: call from a blocking thread.
pub fn load_or_compile(
    engine: &Engine,
    dir: Option<&Path>,
    wasm: &[u8],
) -> wasmtime::Result<(Component, Source)> {
    let Some(dir) = dir else {
        return Ok((Component::new(engine, wasm)?, Source::Compiled));
    };
    if let Err(reason) = prepare_dir(dir) {
        tracing::warn!(dir = %dir.display(), "compiled component cache not used, compiling: {reason}");
        return Ok((Component::new(engine, wasm)?, Source::Compiled));
    }
    let entry = Entry::new(dir, engine, wasm);
    match entry.load(engine) {
        Ok(Some(component)) => return Ok((component, Source::Cached)),
        Ok(None) => {}
        Err(reason) => {
            tracing::warn!(path = %entry.compiled.display(), "compiled component cache entry not used, recompiling: {reason}");
        }
    }
    let component = Component::new(engine, wasm)?;
    if let Err(e) = entry.store(&component) {
        tracing::warn!(path = %entry.compiled.display(), "cannot write the compiled component cache entry: {e}");
    }
    Ok((component, Source::Compiled))
}

/// One cache entry: its two files and what its record must say.
struct Entry {
    compiled: PathBuf,
    record: PathBuf,
    source_sha256: String,
    engine_hash: String,
}

impl Entry {
    fn new(dir: &Path, engine: &Engine, wasm: &[u8]) -> Entry {
        let compiled = entry_path(dir, engine, wasm);
        Entry {
            record: compiled.with_extension("record"),
            compiled,
            source_sha256: sha256_hex(wasm),
            engine_hash: engine_hash(engine),
        }
    }

    /// The cached component; `None` when there is no entry, the reason when
    /// there is one that must not be used.
    fn load(&self, engine: &Engine) -> Result<Option<Component>, String> {
        let record = match std::fs::read(&self.record) {
            Ok(record) => record,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return if self.compiled.exists() {
                    Err(format!("its record {} is missing", self.record.display()))
                } else {
                    Ok(None)
                };
            }
            Err(e) => return Err(format!("cannot read {}: {e}", self.record.display())),
        };
        let record = Record::parse(&record)
            .map_err(|reason| format!("{}: {reason}", self.record.display()))?;
        if record.wasmtime != WASMTIME_VERSION || record.engine != self.engine_hash {
            return Err(format!(
                "it was compiled by another engine (wasmtime {}, engine {}; this host: wasmtime {WASMTIME_VERSION}, engine {})",
                record.wasmtime, record.engine, self.engine_hash
            ));
        }
        if record.source != self.source_sha256 {
            return Err(format!(
                "its record is for another component (sha256 {})",
                record.source
            ));
        }
        let bytes = std::fs::read(&self.compiled).map_err(|e| format!("cannot read it: {e}"))?;
        let actual = sha256_hex(&bytes);
        if actual != record.compiled {
            return Err(format!(
                "its content does not match its record (sha256 {actual}, recorded {})",
                record.compiled
            ));
        }
        // SAFETY: these are the very bytes whose SHA-256 the host recorded
        // when it serialized this component with this engine configuration,
        // in a directory only the host's user can write (see the module
        // documentation for what that does not cover); wasmtime also checks
        // their header, version and compatibility.
        match unsafe { Component::deserialize(engine, &bytes) } {
            Ok(component) => Ok(Some(component)),
            Err(e) => Err(format!("wasmtime rejected it: {e}")),
        }
    }

    /// Writes the compiled component, then its record.
    fn store(&self, component: &Component) -> wasmtime::Result<()> {
        let bytes = component.serialize()?;
        let record = Record {
            wasmtime: WASMTIME_VERSION.to_string(),
            engine: self.engine_hash.clone(),
            source: self.source_sha256.clone(),
            compiled: sha256_hex(&bytes),
        };
        write_private(&self.compiled, &bytes)?;
        write_private(&self.record, record.to_text().as_bytes())?;
        Ok(())
    }
}

/// What the host records about a compiled component it wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    /// The wasmtime version that compiled it.
    wasmtime: String,
    /// The engine's compatibility hash, as in the entry's name.
    engine: String,
    /// SHA-256 of the source component, hex.
    source: String,
    /// SHA-256 of the `.cwasm` bytes, hex.
    compiled: String,
}

impl Record {
    fn to_text(&self) -> String {
        format!(
            "{RECORD_FORMAT}\nwasmtime {}\nengine {}\nsource-sha256 {}\ncwasm-sha256 {}\n",
            self.wasmtime, self.engine, self.source, self.compiled
        )
    }

    fn parse(bytes: &[u8]) -> Result<Record, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "the record is not UTF-8".to_string())?;
        let mut lines = text.lines();
        if lines.next() != Some(RECORD_FORMAT) {
            return Err(format!("the record does not start with {RECORD_FORMAT:?}"));
        }
        let mut field = |name: &str| -> Result<String, String> {
            lines
                .next()
                .and_then(|line| line.strip_prefix(name))
                .and_then(|rest| rest.strip_prefix(' '))
                .filter(|value| !value.is_empty())
                .map(str::to_string)
                .ok_or_else(|| format!("the record has no {name} line where expected"))
        };
        let record = Record {
            wasmtime: field("wasmtime")?,
            engine: field("engine")?,
            source: field("source-sha256")?,
            compiled: field("cwasm-sha256")?,
        };
        if lines.next().is_some() {
            return Err("the record has lines after cwasm-sha256".to_string());
        }
        Ok(record)
    }
}

/// Creates `dir` (0700) when missing, and checks that only the host's user
/// can write it.
#[cfg(unix)]
fn prepare_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};

    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create it: {e}"))?;
    let metadata = std::fs::metadata(dir).map_err(|e| format!("cannot inspect it: {e}"))?;
    if !metadata.is_dir() {
        return Err("it is not a directory".to_string());
    }
    let user = rustix::process::geteuid().as_raw();
    if metadata.uid() != user {
        return Err(format!(
            "it is owned by uid {}, not by this host's user (uid {user})",
            metadata.uid()
        ));
    }
    let mode = metadata.permissions().mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "it is group- or world-writable (mode {mode:03o}); make it 0700"
        ));
    }
    Ok(())
}

/// Creates `dir` when missing.
#[cfg(not(unix))]
fn prepare_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create it: {e}"))
}

/// Writes `bytes` to `path` (0600 on unix) through a temporary file in the
/// same directory and a rename, so readers see the old file or the new one.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // Unique per write: concurrent loads of one guest never write the same
    // temporary file.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let tmp = path.with_extension(format!(
        "tmp{}-{}",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&tmp)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The engine's compatibility hash as 16 hex digits.
fn engine_hash(engine: &Engine) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn wasmtime_version_matches_the_lock_file() {
        let lock = include_str!("../../../Cargo.lock");
        let version = lock
            .split("[[package]]")
            .find(|p| p.contains("\nname = \"wasmtime\"\n"))
            .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
            .expect("wasmtime in Cargo.lock")
            .trim_matches('"');
        assert_eq!(version, WASMTIME_VERSION);
    }

    #[test]
    fn keys_differ_by_content_and_carry_the_version() {
        let engine = Engine::default();
        let dir = Path::new("/cache");
        let a = entry_path(dir, &engine, b"a");
        let b = entry_path(dir, &engine, b"b");
        assert_ne!(a, b);
        assert_eq!(a, entry_path(dir, &engine, b"a"));
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb")
        );
        assert!(name.contains(WASMTIME_VERSION));
    }

    /// A fresh directory path (not created) for one test.
    fn temp_dir(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("recon-compile-cache-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A component importing one function named `name`, so components
    /// tell each other apart by their imports.
    fn component(name: &str) -> Vec<u8> {
        wat::parse_str(format!("(component (import \"{name}\" (func)))")).unwrap()
    }

    fn imports(engine: &Engine, component: &Component) -> Vec<String> {
        component
            .component_type()
            .imports(engine)
            .map(|(name, _)| name.to_string())
            .collect()
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    #[test]
    fn a_stored_entry_loads_from_the_cache() {
        let engine = Engine::default();
        let dir = temp_dir("cached");
        let wasm = component("a");
        let (first, source) = load_or_compile(&engine, Some(&dir), &wasm).unwrap();
        assert_eq!(source, Source::Compiled);
        assert_eq!(imports(&engine, &first), ["a"]);
        let entry = Entry::new(&dir, &engine, &wasm);
        assert_eq!(mode(&entry.compiled), 0o600);
        assert_eq!(mode(&entry.record), 0o600);
        let (second, source) = load_or_compile(&engine, Some(&dir), &wasm).unwrap();
        assert_eq!(source, Source::Cached);
        assert_eq!(imports(&engine, &second), ["a"]);
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file is left: {names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_created_directory_is_private() {
        let engine = Engine::default();
        let base = temp_dir("private");
        let dir = base.join("recon").join("components");
        load_or_compile(&engine, Some(&dir), &component("a")).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&base), 0o700);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_swapped_compiled_component_is_compiled_again() {
        let engine = Engine::default();
        let dir = temp_dir("swapped");
        let (a, b) = (component("a"), component("b"));
        load_or_compile(&engine, Some(&dir), &a).unwrap();
        load_or_compile(&engine, Some(&dir), &b).unwrap();
        let entry = Entry::new(&dir, &engine, &a);
        // Another guest's code, compiled by this very engine: wasmtime
        // alone would accept it.
        std::fs::copy(Entry::new(&dir, &engine, &b).compiled, &entry.compiled).unwrap();

        let reason = entry
            .load(&engine)
            .expect_err("the swapped entry is refused");
        assert!(reason.contains("does not match its record"), "{reason}");
        let (component, source) = load_or_compile(&engine, Some(&dir), &a).unwrap();
        assert_eq!(source, Source::Compiled);
        assert_eq!(imports(&engine, &component), ["a"]);
        let (component, source) = load_or_compile(&engine, Some(&dir), &a).unwrap();
        assert_eq!(source, Source::Cached, "the entry was rewritten");
        assert_eq!(imports(&engine, &component), ["a"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bad_record_or_entry_is_compiled_again() {
        let engine = Engine::default();
        let dir = temp_dir("corrupt");
        let wasm = component("a");
        let entry = Entry::new(&dir, &engine, &wasm);
        let truncate = |path: &Path| {
            let bytes = std::fs::read(path).unwrap();
            std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
        };
        let edit_record = |from: &str, to: &str| {
            let text = std::fs::read_to_string(&entry.record).unwrap();
            assert!(text.contains(from), "{text}");
            std::fs::write(&entry.record, text.replace(from, to)).unwrap();
        };
        let cases: [(&str, &dyn Fn(), &str); 7] = [
            ("truncated record", &|| truncate(&entry.record), "has no"),
            (
                "garbage record",
                &|| std::fs::write(&entry.record, [0xff, 0, 1]).unwrap(),
                "not UTF-8",
            ),
            (
                "missing record",
                &|| std::fs::remove_file(&entry.record).unwrap(),
                "is missing",
            ),
            (
                "another engine",
                &|| edit_record(&format!("engine {}", entry.engine_hash), "engine 0"),
                "another engine",
            ),
            (
                "another source",
                &|| edit_record(&entry.source_sha256, &"0".repeat(64)),
                "another component",
            ),
            (
                "truncated entry",
                &|| truncate(&entry.compiled),
                "does not match its record",
            ),
            (
                "missing entry",
                &|| std::fs::remove_file(&entry.compiled).unwrap(),
                "cannot read it",
            ),
        ];
        for (case, damage, expected) in cases {
            load_or_compile(&engine, Some(&dir), &wasm).unwrap();
            damage();
            let reason = entry.load(&engine).expect_err(case);
            assert!(reason.contains(expected), "{case}: {reason}");
            let (component, source) = load_or_compile(&engine, Some(&dir), &wasm).unwrap();
            assert_eq!(source, Source::Compiled, "{case}");
            assert_eq!(imports(&engine, &component), ["a"], "{case}");
            assert!(entry.load(&engine).unwrap().is_some(), "{case}: rewritten");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_others_can_write_is_not_used() {
        let engine = Engine::default();
        for (test, mode) in [("group-writable", 0o770), ("world-writable", 0o757)] {
            let dir = temp_dir(test);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
            let reason = prepare_dir(&dir).unwrap_err();
            assert!(reason.contains("group- or world-writable"), "{reason}");
            for _ in 0..2 {
                let (component, source) =
                    load_or_compile(&engine, Some(&dir), &component("a")).unwrap();
                assert_eq!(source, Source::Compiled, "{test}");
                assert_eq!(imports(&engine, &component), ["a"]);
            }
            assert_eq!(
                std::fs::read_dir(&dir).unwrap().count(),
                0,
                "{test}: nothing is written"
            );
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn records_round_trip_and_reject_extra_lines() {
        let record = Record {
            wasmtime: WASMTIME_VERSION.to_string(),
            engine: "0123456789abcdef".to_string(),
            source: "a".repeat(64),
            compiled: "b".repeat(64),
        };
        let text = record.to_text();
        assert_eq!(Record::parse(text.as_bytes()), Ok(record));
        let extra = format!("{text}cwasm-sha256 {}\n", "c".repeat(64));
        assert!(Record::parse(extra.as_bytes()).is_err());
    }
}
