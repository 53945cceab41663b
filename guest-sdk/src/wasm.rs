//! The component side: [`WitBackend`] implements [`Backend`] with the WIT
//! imports, and [`manifest`] / [`reconcile`] are what
//! [`crate::export_reconciler!`]'s export calls. The manifest and the
//! reconcile request and action are converted here; every other record is
//! shared with the bindings as it is.

use std::time::Duration;

use crate::backend::{Backend, Event, Level, WriteOp};
use crate::bindings::exports::recon::controller::reconciler as wit;
use crate::bindings::recon::controller::{cache, client, log, queue};
use crate::context::Context;
use crate::manifest::{IndexSource, KeyMapping, Manifest, Verb};
use crate::reconciler::Reconciler;
use crate::types::{Action, Error, Gvk, Meta, ObjectKey, RawObject, Request, Result};

/// The host, through the component's imports.
pub struct WitBackend;

/// A duration in the WIT's nanoseconds, saturating at `u64::MAX` (584 years).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Backend for WitBackend {
    fn get(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Result<Option<RawObject>> {
        cache::get(kind, namespace, name)
    }

    fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<RawObject>> {
        cache::list(kind, namespace, label_selector)
    }

    fn get_meta(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Result<Option<Meta>> {
        cache::get_meta(kind, namespace, name)
    }

    fn list_meta(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<Meta>> {
        cache::list_meta(kind, namespace, label_selector)
    }

    fn by_index(&self, kind: &Gvk, index: &str, value: &str) -> Result<Vec<RawObject>> {
        cache::by_index(kind, index, value)
    }

    fn write(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        write: WriteOp<'_>,
    ) -> Result<Option<RawObject>> {
        match write {
            WriteOp::Create { json } => client::create(kind, namespace, json).map(Some),
            WriteOp::Replace {
                name,
                json,
                status: false,
            } => client::replace(kind, namespace, name, json).map(Some),
            WriteOp::Replace {
                name,
                json,
                status: true,
            } => client::update_status(kind, namespace, name, json).map(Some),
            WriteOp::Patch {
                name,
                body,
                status: false,
            } => client::patch(kind, namespace, name, body).map(Some),
            WriteOp::Patch {
                name,
                body,
                status: true,
            } => client::patch_status(kind, namespace, name, body).map(Some),
            WriteOp::Delete { name, options } => {
                client::delete(kind, namespace, name, options).map(|()| None)
            }
        }
    }

    fn record_event(&self, event: &Event) -> Result<()> {
        client::record_event(event)
    }

    fn enqueue(&self, key: &ObjectKey) -> Result<()> {
        queue::enqueue(key)
    }

    fn enqueue_after(&self, key: &ObjectKey, delay: Duration) -> Result<()> {
        queue::enqueue_after(key, nanos(delay))
    }

    fn enqueue_rate_limited(&self, key: &ObjectKey) -> Result<()> {
        queue::enqueue_rate_limited(key)
    }

    fn forget(&self, key: &ObjectKey) {
        queue::forget(key);
    }

    fn num_requeues(&self, key: &ObjectKey) -> u32 {
        queue::num_requeues(key)
    }

    fn log(&self, level: Level, message: &str, fields: &[(String, String)]) {
        log::log(level, message, fields);
    }
}

fn verb(verb: Verb) -> wit::Verb {
    match verb {
        Verb::Create => wit::Verb::Create,
        Verb::Replace => wit::Verb::Replace,
        Verb::Patch => wit::Verb::Patch,
        Verb::Delete => wit::Verb::Delete,
        Verb::UpdateStatus => wit::Verb::UpdateStatus,
    }
}

fn index_source(source: IndexSource) -> wit::IndexSource {
    match source {
        IndexSource::Label(key) => wit::IndexSource::Label(key),
        IndexSource::Annotation(key) => wit::IndexSource::Annotation(key),
        IndexSource::Field(path) => wit::IndexSource::Field(path),
        IndexSource::Fields(paths) => wit::IndexSource::Fields(paths),
        IndexSource::OwnerUid => wit::IndexSource::OwnerUid,
    }
}

fn key_mapping(mapping: KeyMapping) -> wit::KeyMapping {
    match mapping {
        KeyMapping::ControllerOwner => wit::KeyMapping::ControllerOwner,
        KeyMapping::Label(key) => wit::KeyMapping::Label(key),
        KeyMapping::Annotation(key) => wit::KeyMapping::Annotation(key),
        KeyMapping::ByIndex(index) => wit::KeyMapping::ByIndex(index),
        KeyMapping::Namespace => wit::KeyMapping::Namespace,
    }
}

impl From<Manifest> for wit::ControllerManifest {
    fn from(m: Manifest) -> Self {
        Self {
            name: m.name,
            primary: m.primary,
            primary_label_selector: m.primary_label_selector,
            owns: m.owns,
            watches: m
                .watches
                .into_iter()
                .map(|w| wit::Watch {
                    kind: w.kind,
                    mapping: key_mapping(w.mapping),
                    label_selector: w.label_selector,
                })
                .collect(),
            indexes: m
                .indexes
                .into_iter()
                .map(|i| wit::IndexSpec {
                    name: i.name,
                    kind: i.kind,
                    source: index_source(i.source),
                })
                .collect(),
            resync_period: m.resync_period.map(nanos),
            concurrency: m.concurrency,
            writes: m
                .writes
                .into_iter()
                .map(|p| wit::Permission {
                    kind: p.kind,
                    verbs: p.verbs.into_iter().map(verb).collect(),
                })
                .collect(),
            prune_fields: m
                .prune_fields
                .into_iter()
                .map(|p| wit::PrunedField {
                    kind: p.kind,
                    path: p.path,
                })
                .collect(),
            keep_managed_fields: m.keep_managed_fields,
            metadata_only: m.metadata_only,
        }
    }
}

/// The `manifest` export of `R`.
pub fn manifest<R: Reconciler>() -> wit::ControllerManifest {
    one_line_panics();
    R::manifest().into()
}

/// Makes a panic one line on stderr, `panicked at FILE:LINE:COL: MESSAGE`
/// with the message's own line breaks escaped, so that the host logs it as
/// one record (Rust's default hook writes three lines and a note).
fn one_line_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let message = info
                .payload_as_str()
                .unwrap_or("(a panic without a message)");
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_else(|| "an unknown place".to_string());
            eprintln!("panicked at {location}: {}", message.replace('\n', "\\n"));
        }));
    });
}

/// The `reconcile` export of `R`.
pub fn reconcile<R: Reconciler>(request: wit::Request) -> Result<wit::Action, Error> {
    one_line_panics();
    let ctx = Context::new(&WitBackend);
    let request = Request {
        key: request.key,
        attempt: request.attempt,
    };
    Ok(match R::reconcile(&ctx, request)? {
        Action::Done => wit::Action::Done,
        Action::Requeue => wit::Action::Requeue,
        Action::RequeueAfter(delay) => wit::Action::RequeueAfter(nanos(delay)),
    })
}
