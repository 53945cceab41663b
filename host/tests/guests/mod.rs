//! Locating the example guests built by `just examples`
//! (`cargo build --profile guest --target wasm32-wasip2 ...`).

use std::path::PathBuf;

/// The built component of the example crate `name` (its lib name, e.g.
/// `sample_controller`). Panics with instructions when it was not built.
pub fn guest_wasm(name: &str) -> PathBuf {
    let dir = match std::env::var_os("RECON_GUESTS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/wasm32-wasip2/guest"),
    };
    let path = dir.join(format!("{name}.wasm"));
    assert!(
        path.is_file(),
        "{} is missing: build the example guests first with `just examples`",
        path.display()
    );
    path
}

/// A compiled-component cache shared by the tests of one build.
pub fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("components")
}
