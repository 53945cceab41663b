# recon's developer entry points. `just --list` shows them all.

# Run the tests (formatting and lints first).
default: test

# Install what a fresh machine lacks (just itself is installed by scripts/bootstrap).
setup:
    bash scripts/bootstrap

# Build the example reconcilers as WebAssembly components (target/wasm32-wasip2/guest/*.wasm): the Rust ones with cargo, then shrunk by Binaryen (scripts/optimize-guests; the hostile test guest stays as compiled), the Python ones with componentize-py, the JavaScript one with componentize-js (rebuilt only when its bundle changed).
examples:
    cargo build --profile guest --target wasm32-wasip2 -p configmap-mirror -p sample-controller -p hostile -p namespace-inventory
    bash scripts/optimize-guests target/wasm32-wasip2/guest/configmap_mirror.wasm target/wasm32-wasip2/guest/sample_controller.wasm target/wasm32-wasip2/guest/namespace_inventory.wasm
    bash scripts/python-guest examples/configmap-mirror-py configmap_mirror_py
    node guest-sdk-js/bin/build.js examples/configmap-mirror-js/src/component.js -o target/wasm32-wasip2/guest/configmap_mirror_js.wasm

# Formatting, lints with warnings as errors, then every test (the host's tests run the example guests), a guest's life end to end (scripts/guest-walk), then the operator image built and run.
test: fmt-check lint examples python-test js-test
    cargo test --workspace
    bash scripts/guest-walk
    just image
    bash scripts/image-test

# The Python guest SDK's and the Python examples' tests, natively with pytest against the SDK's fake cluster.
python-test:
    cd guest-sdk-python && python3 -m pytest -q
    cd examples/configmap-mirror-py && python3 -m pytest -q

# The JavaScript guest SDK's and the JavaScript example's tests, natively with node --test against the SDK's fake cluster.
js-test:
    cd guest-sdk-js && node --test test/
    cd examples/configmap-mirror-js && node --test test/

# The operator image localhost/recon-host:dev: the static host and the example guests, FROM scratch (buildah, deploy/Containerfile).
image:
    bash scripts/image

# Run the image against the dev API server, push it to a local registry and pull it back by digest (`just image` first).
image-test:
    bash scripts/image-test

# Push the image (`just image` first): `just image-push docker://registry.example.com/recon-host:v1`.
image-push dest:
    bash scripts/image push {{dest}}

# Check formatting without changing files.
fmt-check:
    cargo fmt --all -- --check

# Clippy over everything, native and for the guests' target, and the API docs with their links; warnings are errors.
lint:
    cargo clippy --workspace --all-targets -- -D warnings
    cargo clippy --target wasm32-wasip2 -p recon-label-selector -p recon-api-semantics -p recon-guest-sdk -p configmap-mirror -p sample-controller -p hostile -p namespace-inventory -- -D warnings
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

# The sample-controller on the embedded dev API server: a Foo becomes a Deployment, driven with kubectl.
demo: examples
    cargo build --release -p host
    bash scripts/demo

# A guest's life end to end: host new, cargo test, cargo guest, host push to a local registry, host run --watch from it, then an edit taken up live.
guest-walk: examples
    cargo build -p host
    bash scripts/guest-walk

# The native core alone against the dev API server: informer over HTTPS, workqueue, workers, faults.
demo-core:
    cargo run --release -p host --example demo

# Benchmarks: print figures, assert nothing.
bench: examples
    cargo bench -p host --benches
