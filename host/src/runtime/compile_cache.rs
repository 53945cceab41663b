//! Compiled components on disk, keyed by the SHA-256 of the wasm, the
//! wasmtime version and the engine's compilation settings, so a restart
//! (or a second host on the same node) loads a guest without compiling it.
//! A cache that cannot be read or written costs a compile, never a failure.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The wasmtime release the host is built with (checked against
/// `Cargo.lock` by a test), part of every cache key.
pub const WASMTIME_VERSION: &str = "48.0.8";

/// The default cache directory: `$XDG_CACHE_HOME/recon/components`, else
/// `~/.cache/recon/components`.
pub fn default_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("recon").join("components"))
}

/// Where a compiled `wasm` for `engine` is kept under `dir`.
pub fn entry_path(dir: &Path, engine: &Engine, wasm: &[u8]) -> PathBuf {
    let digest = Sha256::digest(wasm);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!(
        "{hex}-wasmtime-{WASMTIME_VERSION}-{:016x}.cwasm",
        hasher.finish()
    ))
}

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Loaded from the cache.
    Cached,
    /// Compiled now (and stored, when a cache directory is set).
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
    let path = entry_path(dir, engine, wasm);
    if path.exists() {
        // SAFETY: the file was written by `Component::serialize` of this
        // host's engine configuration (its name carries the wasm's hash and
        // the engine's compatibility hash) into a directory the host's user
        // owns; wasmtime also checks its header and version.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => return Ok((component, Source::Cached)),
            Err(e) => {
                tracing::warn!(path = %path.display(), "compiled component cache entry unusable, recompiling: {e}");
            }
        }
    }
    let component = Component::new(engine, wasm)?;
    if let Err(e) = store(&path, &component) {
        tracing::warn!(dir = %dir.display(), "cannot write the compiled component cache: {e}");
    }
    Ok((component, Source::Compiled))
}

fn store(path: &Path, component: &Component) -> wasmtime::Result<()> {
    let bytes = component.serialize()?;
    let dir = path.parent().expect("cache entries live in a directory");
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
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
}
