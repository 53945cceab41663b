# recon's developer entry points. `just --list` shows them all.

# Run the tests (formatting and lints first).
default: test

# Install what a fresh machine lacks (just itself is installed by scripts/bootstrap).
setup:
    bash scripts/bootstrap

# Formatting, lints with warnings as errors, then every test.
test: fmt-check lint
    cargo test --workspace

# Check formatting without changing files.
fmt-check:
    cargo fmt --all -- --check

# Clippy over everything, warnings are errors.
lint:
    cargo clippy --workspace --all-targets -- -D warnings

# The native core against the embedded dev API server: informer over HTTPS, rate-limited workqueue, workers, faults.
demo:
    cargo run --release -p host --example demo

# Benchmarks: print figures, assert nothing.
bench:
    cargo bench -p host --benches
