//! A reconciler of a cluster-scoped kind fed by namespaced ones: every
//! Namespace labelled `recon.dev/inventory=true` carries the annotation
//! `recon.dev/configmaps: <count>`, the number of ConfigMaps in it, kept
//! current as ConfigMaps come and go.
//!
//! - The primary kind is `v1` `Namespace`, cached only when labelled.
//! - ConfigMaps are watched with the `namespace` key mapping: a change of
//!   any ConfigMap reconciles the Namespace it is in.
//! - It reads and writes metadata only (`get_meta`, `list_meta`,
//!   `patch_merge_meta`): no object crosses as JSON or is parsed, and the
//!   ConfigMaps' `data` and `binaryData` are pruned from its cache (a
//!   guest sharing that cache and reading `data` keeps them).

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use recon_guest_sdk::serde_json::json;
use recon_guest_sdk::{Action, Context, KeyMapping, Manifest, Reconciler, Request, Result, Verb};

/// The label that opts a Namespace in.
pub const OPT_IN: &str = "recon.dev/inventory=true";
/// The annotation holding the count.
pub const COUNT: &str = "recon.dev/configmaps";

pub struct NamespaceInventory;

impl Reconciler for NamespaceInventory {
    fn manifest() -> Manifest {
        Manifest::new::<Namespace>("namespace-inventory")
            .primary_selector(OPT_IN)
            .watches::<ConfigMap>(KeyMapping::Namespace)
            .prune::<ConfigMap>("data")
            .prune::<ConfigMap>("binaryData")
            .writes::<Namespace>(&[Verb::Patch])
    }

    fn reconcile(ctx: &Context<'_>, request: Request) -> Result<Action> {
        let name = &request.key.name;
        // Metadata is all it reads and writes: no object is parsed.
        // Not cached: deleted, or not opted in (the cache holds labelled
        // Namespaces only).
        let Some(namespace) = ctx.get_meta::<Namespace>(None, name)? else {
            return Ok(Action::Done);
        };
        if namespace.deletion_timestamp.is_some() {
            return Ok(Action::Done);
        }
        let count = ctx
            .list_meta::<ConfigMap>(Some(name), None)?
            .len()
            .to_string();
        if namespace.annotation(COUNT) != Some(count.as_str()) {
            let patch = json!({"metadata": {"annotations": {COUNT: count}}});
            ctx.patch_merge_meta::<Namespace>(None, name, &patch)?;
        }
        Ok(Action::Done)
    }
}

recon_guest_sdk::export_reconciler!(NamespaceInventory);

#[cfg(test)]
mod tests;
