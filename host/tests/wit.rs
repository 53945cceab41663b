//! The WIT package in `wit/` parses, resolves, and has the shape the host and
//! guests rely on: package `recon:controller@0.4.0`, world `controller`
//! importing `cache`, `queue`, `client` and `log` and exporting `reconciler`,
//! each with its functions, all documented.

use std::collections::BTreeSet;
use std::path::Path;

use wit_parser::{Resolve, WorldItem, WorldKey};

fn package() -> (Resolve, wit_parser::PackageId) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    let mut resolve = Resolve::default();
    let (package, _) = resolve.push_dir(&dir).expect("wit/ parses and resolves");
    (resolve, package)
}

/// The functions of the interface `name` in the package.
fn functions(resolve: &Resolve, package: wit_parser::PackageId, name: &str) -> BTreeSet<String> {
    let id = resolve.packages[package].interfaces[name];
    resolve.interfaces[id].functions.keys().cloned().collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[test]
fn the_package_is_recon_controller_0_2_0_with_one_documented_world() {
    let (resolve, package) = package();
    assert_eq!(
        resolve.packages[package].name.to_string(),
        "recon:controller@0.4.0"
    );
    assert!(
        resolve.packages[package].docs.contents.is_some(),
        "the package is documented"
    );
    let world = resolve
        .select_world(&[package], Some("controller"))
        .expect("world controller");
    assert!(
        resolve.worlds[world].docs.contents.is_some(),
        "the world is documented"
    );
}

#[test]
fn the_world_imports_cache_queue_client_log_and_exports_reconciler() {
    let (resolve, package) = package();
    let world = &resolve.worlds[resolve
        .select_world(&[package], Some("controller"))
        .unwrap()];
    let names = |items: &wit_parser::IndexMap<WorldKey, WorldItem>| -> BTreeSet<String> {
        items
            .iter()
            .filter(|(_, item)| matches!(item, WorldItem::Interface { .. }))
            .map(|(key, _)| resolve.name_world_key(key))
            .collect()
    };
    assert_eq!(
        names(&world.imports),
        set(&[
            "recon:controller/cache@0.4.0",
            "recon:controller/client@0.4.0",
            "recon:controller/log@0.4.0",
            "recon:controller/queue@0.4.0",
            "recon:controller/types@0.4.0",
        ])
    );
    assert_eq!(
        names(&world.exports),
        set(&["recon:controller/reconciler@0.4.0"])
    );
}

#[test]
fn every_interface_has_its_functions() {
    let (resolve, package) = package();
    assert_eq!(
        functions(&resolve, package, "cache"),
        set(&["by-index", "get", "get-meta", "list", "list-meta"])
    );
    assert_eq!(
        functions(&resolve, package, "queue"),
        set(&[
            "enqueue",
            "enqueue-after",
            "enqueue-rate-limited",
            "forget",
            "num-requeues"
        ])
    );
    assert_eq!(
        functions(&resolve, package, "client"),
        set(&[
            "create",
            "delete",
            "patch",
            "patch-status",
            "record-event",
            "replace",
            "update-status"
        ])
    );
    assert_eq!(functions(&resolve, package, "log"), set(&["log"]));
    assert_eq!(
        functions(&resolve, package, "reconciler"),
        set(&["manifest", "reconcile"])
    );
}

#[test]
fn every_interface_and_exported_function_is_documented() {
    let (resolve, package) = package();
    for (name, id) in &resolve.packages[package].interfaces {
        assert!(
            resolve.interfaces[*id].docs.contents.is_some(),
            "interface {name} has no doc comment"
        );
    }
    let reconciler = resolve.packages[package].interfaces["reconciler"];
    for (name, function) in &resolve.interfaces[reconciler].functions {
        assert!(
            function.docs.contents.is_some(),
            "reconciler.{name} has no doc comment"
        );
    }
}
