//! The smallest useful reconciler: a ConfigMap annotated
//! `recon.dev/mirror-to: ns-a,ns-b` is copied into those namespaces and kept
//! in sync.
//!
//! - A copy has the source's name, `data` and `binaryData`, the label
//!   `recon.dev/mirror-of: <namespace>.<name>` (found through a label index)
//!   and the annotation `recon.dev/mirror-source: <namespace>/<name>` (the
//!   watch on copies maps a change to, or the deletion of, a copy back to
//!   its source, which then repairs it).
//! - Copies in namespaces the annotation no longer names are deleted; when
//!   the annotation is removed every copy is, and the finalizer goes.
//! - The finalizer `recon.dev/mirror` makes deleting the source delete
//!   every copy first (owner references cannot cross namespaces).
//! - A ConfigMap of the same name that is not a copy of this source is
//!   never overwritten: a Warning event says so and the others are still
//!   mirrored. The source's own namespace is never a target.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use recon_guest_sdk::finalizer::{self, FinalizerEvent};
use recon_guest_sdk::{
    Action, Context, DeleteOptions, Error, EventType, IndexSource, KeyMapping, Manifest,
    ObjectMetaExt, Reconciler, Request, Result, Verb,
};

/// The annotation on a source naming the target namespaces, comma-separated.
pub const MIRROR_TO: &str = "recon.dev/mirror-to";
/// The label on a copy: `<namespace>.<name>` of its source.
pub const MIRROR_OF: &str = "recon.dev/mirror-of";
/// The annotation on a copy: `<namespace>/<name>` of its source.
pub const MIRROR_SOURCE: &str = "recon.dev/mirror-source";
/// The finalizer on a source that has copies.
pub const FINALIZER: &str = "recon.dev/mirror";
/// The index of copies by their `recon.dev/mirror-of` label.
const COPIES_INDEX: &str = "mirror-of";

pub struct ConfigMapMirror;

impl Reconciler for ConfigMapMirror {
    fn manifest() -> Manifest {
        Manifest::new::<ConfigMap>("configmap-mirror")
            .watches_selected::<ConfigMap>(KeyMapping::Annotation(MIRROR_SOURCE.into()), MIRROR_OF)
            .index::<ConfigMap>(COPIES_INDEX, IndexSource::Label(MIRROR_OF.into()))
            .resync_every(Duration::from_secs(600))
            .writes::<ConfigMap>(&[Verb::Create, Verb::Replace, Verb::Patch, Verb::Delete])
            .records_events()
    }

    fn reconcile(ctx: &Context<'_>, request: Request) -> Result<Action> {
        let key = &request.key;
        let Some(source) = ctx.get::<ConfigMap>(key.namespace.as_deref(), &key.name)? else {
            return Ok(Action::Done);
        };
        let meta = &source.metadata;
        let annotated = meta.annotation(MIRROR_TO).is_some();
        let finalized = meta.has_finalizer(FINALIZER);
        if !annotated && !finalized {
            // Not a source: an unrelated ConfigMap, or a copy.
            return Ok(Action::Done);
        }
        if !annotated && meta.deletion_timestamp.is_none() {
            // Mirroring stopped: the copies go, then the finalizer.
            delete_copies(ctx, &source, &BTreeSet::new())?;
            finalizer::remove(ctx, &source, FINALIZER)?;
            return Ok(Action::Done);
        }
        finalizer::finalizer(ctx, FINALIZER, source, |event| match event {
            FinalizerEvent::Apply(source) => mirror(ctx, &source),
            FinalizerEvent::Cleanup(source) => {
                delete_copies(ctx, &source, &BTreeSet::new())?;
                Ok(Action::Done)
            }
        })
    }
}

recon_guest_sdk::export_reconciler!(ConfigMapMirror);

/// A namespace name: a DNS-1123 label.
fn valid_namespace(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// The source's identity: its namespace and name, and how copies name it.
struct Source<'a> {
    namespace: &'a str,
    name: &'a str,
    /// `<namespace>.<name>`, the copies' label value.
    mirror_of: String,
    /// `<namespace>/<name>`, the copies' annotation value.
    reference: String,
}

impl<'a> Source<'a> {
    fn of(source: &'a ConfigMap) -> Self {
        let namespace = source.metadata.namespace.as_deref().unwrap_or_default();
        let name = source.metadata.name.as_deref().unwrap_or_default();
        Self {
            namespace,
            name,
            mirror_of: format!("{namespace}.{name}"),
            reference: format!("{namespace}/{name}"),
        }
    }
}

/// A map, `None` when empty: the API server does not keep empty maps.
fn non_empty<V>(map: &Option<BTreeMap<String, V>>) -> Option<&BTreeMap<String, V>> {
    map.as_ref().filter(|m| !m.is_empty())
}

/// `copy` made a current copy of `source` (other labels and annotations kept).
fn make_copy(copy: &mut ConfigMap, source: &ConfigMap, id: &Source<'_>) {
    copy.data = source.data.clone();
    copy.binary_data = source.binary_data.clone();
    copy.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(MIRROR_OF.to_string(), id.mirror_of.clone());
    copy.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(MIRROR_SOURCE.to_string(), id.reference.clone());
}

/// Whether `copy` is a current copy of `source`.
fn is_current(copy: &ConfigMap, source: &ConfigMap, id: &Source<'_>) -> bool {
    non_empty(&copy.data) == non_empty(&source.data)
        && non_empty(&copy.binary_data) == non_empty(&source.binary_data)
        && copy.metadata.label(MIRROR_OF) == Some(id.mirror_of.as_str())
        && copy.metadata.annotation(MIRROR_SOURCE) == Some(id.reference.as_str())
}

/// Creates or updates the copies the annotation asks for, deletes the
/// others. Every target is attempted; the first error is returned.
fn mirror(ctx: &Context<'_>, source: &ConfigMap) -> Result<Action> {
    let id = Source::of(source);
    if id.mirror_of.len() > 63 {
        ctx.event(
            source,
            EventType::Warning,
            "MirrorNameTooLong",
            "Mirror",
            &format!(
                "cannot mirror: the label value {:?} would be longer than 63 characters",
                id.mirror_of
            ),
        )?;
        return Ok(Action::Done);
    }
    let mut targets = BTreeSet::new();
    let requested = source.metadata.annotation(MIRROR_TO).unwrap_or_default();
    for target in requested
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        if !valid_namespace(target) {
            ctx.event(
                source,
                EventType::Warning,
                "InvalidMirrorTarget",
                "Mirror",
                &format!("{target:?} is not a namespace name"),
            )?;
        } else if target != id.namespace {
            targets.insert(target);
        }
    }

    let mut first_error = None;
    for &target in &targets {
        if let Err(e) = mirror_into(ctx, source, &id, target) {
            ctx.warn("mirroring failed", &[("namespace", &target), ("error", &e)]);
            first_error.get_or_insert(e);
        }
    }
    delete_copies(ctx, source, &targets)?;
    match first_error {
        Some(e) => Err(e),
        None => Ok(Action::Done),
    }
}

fn mirror_into(ctx: &Context<'_>, source: &ConfigMap, id: &Source<'_>, target: &str) -> Result<()> {
    match ctx.get::<ConfigMap>(Some(target), id.name)? {
        None => {
            let mut copy = ConfigMap {
                metadata: ObjectMeta {
                    namespace: Some(target.to_string()),
                    name: Some(id.name.to_string()),
                    ..ObjectMeta::default()
                },
                ..ConfigMap::default()
            };
            make_copy(&mut copy, source, id);
            ctx.create(&copy)?;
            ctx.info("created copy", &[("namespace", &target)]);
        }
        Some(existing) if existing.metadata.label(MIRROR_OF) != Some(id.mirror_of.as_str()) => {
            ctx.event(
                source,
                EventType::Warning,
                "MirrorConflict",
                "Mirror",
                &format!(
                    "ConfigMap \"{target}/{}\" exists and is not a mirror of {}",
                    id.name, id.reference
                ),
            )?;
        }
        Some(existing) if is_current(&existing, source, id) => {}
        Some(mut existing) => {
            make_copy(&mut existing, source, id);
            ctx.replace(&existing)?;
            ctx.info("updated copy", &[("namespace", &target)]);
        }
    }
    Ok(())
}

/// Deletes the copies of `source` outside `keep` (each only if it is still
/// the object found: uid precondition).
fn delete_copies(ctx: &Context<'_>, source: &ConfigMap, keep: &BTreeSet<&str>) -> Result<()> {
    let id = Source::of(source);
    let copies: Vec<ConfigMap> = ctx.by_index(COPIES_INDEX, &id.mirror_of)?;
    for copy in copies {
        let namespace = copy.metadata.namespace.as_deref().unwrap_or_default();
        if keep.contains(namespace) {
            continue;
        }
        let options = DeleteOptions {
            precondition_uid: copy.metadata.uid.clone(),
            ..DeleteOptions::default()
        };
        let name = copy.metadata.name.as_deref().unwrap_or_default();
        match ctx.delete::<ConfigMap>(Some(namespace), name, &options) {
            Ok(()) | Err(Error::NotFound) => {
                ctx.info("deleted copy", &[("namespace", &namespace)]);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
