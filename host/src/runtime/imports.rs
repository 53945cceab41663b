//! The host side of the WIT imports (`cache`, `queue`, `client`, `log`) and
//! the state of one guest instance's store. Conversions between WIT records
//! and host types live here; what the calls reach is the instance's
//! [`GuestServices`].

use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Handle;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, ResourceTable, WasmList, WasmStr};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::recon::controller::{cache, client, log, queue, types};
use super::guest_log;
use super::guest_threads::on_host;
use super::limits::{GuestLimiter, LogAdmission};
use super::sandbox::{GuestOutput, MemoryLimiter};
use super::services::{GuestError, GuestEvent, GuestServices, QueueOp, Target, Write};
use super::stale_writes::{StaleWrites, WriteShape};
use crate::label_selector::LabelSelector;
use crate::object::Object;
use recon_api_semantics::Gvk;
use recon_api_semantics::writes::{DeleteOptions, EventType, Patch, PropagationPolicy};

/// The data of one instance's store.
pub(crate) struct GuestState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) stderr: GuestOutput,
    pub(crate) stdout: GuestOutput,
    /// The guest's limits and name, shared by its instances.
    pub(crate) limits: Arc<GuestLimiter>,
    pub(crate) services: Arc<dyn GuestServices>,
    /// The key being reconciled, for log lines.
    pub(crate) key: Option<String>,
    /// The writes of the current reconcile that met a stale view.
    pub(crate) stale: Arc<StaleWrites>,
    /// The host's runtime: writes and events are sent from there, not from
    /// the guest threads.
    pub(crate) host: Handle,
}

impl WasiView for GuestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl From<GuestError> for types::Error {
    fn from(error: GuestError) -> Self {
        match error {
            GuestError::NotFound => types::Error::NotFound,
            GuestError::Conflict(m) => types::Error::Conflict(m),
            GuestError::AlreadyExists(m) => types::Error::AlreadyExists(m),
            GuestError::Forbidden(m) => types::Error::Forbidden(m),
            GuestError::Invalid(m) => types::Error::Invalid(m),
            GuestError::Unavailable(m) => types::Error::Unavailable(m),
            GuestError::TooLarge(m) => types::Error::TooLarge(m),
            GuestError::Other(m) => types::Error::Other(m),
        }
    }
}

impl From<types::Error> for GuestError {
    fn from(error: types::Error) -> Self {
        match error {
            types::Error::NotFound => GuestError::NotFound,
            types::Error::Conflict(m) => GuestError::Conflict(m),
            types::Error::AlreadyExists(m) => GuestError::AlreadyExists(m),
            types::Error::Forbidden(m) => GuestError::Forbidden(m),
            types::Error::Invalid(m) => GuestError::Invalid(m),
            types::Error::Unavailable(m) => GuestError::Unavailable(m),
            types::Error::TooLarge(m) => GuestError::TooLarge(m),
            types::Error::Other(m) => GuestError::Other(m),
        }
    }
}

fn gvk(kind: types::Gvk) -> Gvk {
    Gvk {
        group: kind.group,
        version: kind.version,
        kind: kind.kind,
    }
}

fn pairs<'a>(it: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<(String, String)> {
    it.map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The WIT metadata of a cached object.
pub(crate) fn object_meta(object: &Object) -> types::ObjectMeta {
    let namespace = object.namespace();
    types::ObjectMeta {
        key: types::ObjectKey {
            namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
            name: object.name().to_string(),
        },
        uid: object.uid().to_string(),
        resource_version: object.resource_version().to_string(),
        generation: object.generation(),
        labels: pairs(object.labels()),
        annotations: pairs(object.annotations()),
        owner_references: object
            .owner_references()
            .map(|o| types::OwnerRef {
                api_version: o.api_version.to_string(),
                kind: o.kind.to_string(),
                name: o.name.to_string(),
                uid: o.uid.to_string(),
                controller: o.controller,
                block_owner_deletion: o.block_owner_deletion,
            })
            .collect(),
        finalizers: object.finalizers().map(str::to_string).collect(),
        deletion_timestamp: object.deletion_timestamp().map(str::to_string),
    }
}

/// Bytes a string costs once handed over, beyond its own: its pointer and
/// length in the guest.
const STRING_COST: usize = 8;

/// Bytes an object's metadata costs once handed over: its strings and
/// their handles.
fn meta_size(object: &Object) -> usize {
    let string = |s: &str| s.len() + STRING_COST;
    let pairs = |it: &mut dyn Iterator<Item = (&str, &str)>| -> usize {
        it.map(|(k, v)| string(k) + string(v)).sum()
    };
    string(object.namespace())
        + string(object.name())
        + string(object.uid())
        + string(object.resource_version())
        + 8
        + pairs(&mut object.labels())
        + pairs(&mut object.annotations())
        + object
            .owner_references()
            .map(|o| string(o.api_version) + string(o.kind) + string(o.name) + string(o.uid) + 2)
            .sum::<usize>()
        + object.finalizers().map(string).sum::<usize>()
        + object.deletion_timestamp().map_or(0, string)
}

/// Bytes a whole object costs once handed over.
fn object_size(object: &Object) -> usize {
    meta_size(object) + object.json_len() + STRING_COST
}

fn wit_object(object: &Object) -> types::Object {
    types::Object {
        meta: object_meta(object),
        json: object.json().into_owned(),
    }
}

/// `namespace/name`, or `name` for a cluster-scoped key.
pub(crate) fn key_string(key: &types::ObjectKey) -> String {
    recon_api_semantics::mapping::object_key(key.namespace.as_deref(), &key.name)
}

impl GuestState {
    /// The cached object `name` of `kind` in `namespace`, handed over as
    /// `convert` makes it (`what` names the read).
    fn get_as<T>(
        &self,
        what: &str,
        kind: types::Gvk,
        namespace: Option<String>,
        name: String,
        size: fn(&Object) -> usize,
        convert: fn(&Object) -> T,
    ) -> Result<Option<T>, types::Error> {
        let kind = gvk(kind);
        let mut found = self.services.get(&kind, namespace.as_deref(), &name)?;
        let handed = self.hand_over(
            format_args!("{what} of {kind}"),
            found.as_mut_slice(),
            size,
            convert,
        );
        Ok(handed?.pop())
    }

    /// The cached objects of `kind` in `namespace` matching
    /// `label_selector`, handed over as `convert` makes them (`what` names
    /// the read).
    fn list_as<T>(
        &self,
        what: &str,
        kind: types::Gvk,
        namespace: Option<String>,
        label_selector: Option<String>,
        size: fn(&Object) -> usize,
        convert: fn(&Object) -> T,
    ) -> Result<Vec<T>, types::Error> {
        let selector = LabelSelector::parse(label_selector.as_deref().unwrap_or(""))
            .map_err(|e| types::Error::Invalid(format!("label selector: {e}")))?;
        let kind = gvk(kind);
        let mut objects = self.services.list(&kind, namespace.as_deref(), &selector)?;
        self.hand_over(
            format_args!("{what} of {kind}"),
            &mut objects,
            size,
            convert,
        )
    }

    /// Hands `objects` over ordered by key, as `convert` makes them, once
    /// their size by `size` is within the read limit (`what` names the
    /// read). They are ordered only then: a refused answer costs one pass
    /// over it, not a sort, which no epoch tick can cut short.
    fn hand_over<T>(
        &self,
        what: std::fmt::Arguments<'_>,
        objects: &mut [Object],
        size: fn(&Object) -> usize,
        convert: fn(&Object) -> T,
    ) -> Result<Vec<T>, types::Error> {
        let bytes = objects.iter().map(size).sum();
        self.limits.check_read(&what, bytes)?;
        objects.sort_by(Object::cmp_key);
        Ok(objects.iter().map(convert).collect())
    }
}

impl types::Host for GuestState {}

impl cache::Host for GuestState {
    fn get(
        &mut self,
        kind: types::Gvk,
        namespace: Option<String>,
        name: String,
    ) -> Result<Option<types::Object>, types::Error> {
        self.get_as("get", kind, namespace, name, object_size, wit_object)
    }

    fn get_meta(
        &mut self,
        kind: types::Gvk,
        namespace: Option<String>,
        name: String,
    ) -> Result<Option<types::ObjectMeta>, types::Error> {
        self.get_as("get-meta", kind, namespace, name, meta_size, object_meta)
    }

    fn list(
        &mut self,
        kind: types::Gvk,
        namespace: Option<String>,
        label_selector: Option<String>,
    ) -> Result<Vec<types::Object>, types::Error> {
        self.list_as(
            "list",
            kind,
            namespace,
            label_selector,
            object_size,
            wit_object,
        )
    }

    fn list_meta(
        &mut self,
        kind: types::Gvk,
        namespace: Option<String>,
        label_selector: Option<String>,
    ) -> Result<Vec<types::ObjectMeta>, types::Error> {
        self.list_as(
            "list-meta",
            kind,
            namespace,
            label_selector,
            meta_size,
            object_meta,
        )
    }

    fn by_index(
        &mut self,
        kind: types::Gvk,
        index: String,
        value: String,
    ) -> Result<Vec<types::Object>, types::Error> {
        let kind = gvk(kind);
        let mut objects = self.services.by_index(&kind, &index, &value)?;
        self.hand_over(
            format_args!("by-index of {kind}"),
            &mut objects,
            object_size,
            wit_object,
        )
    }
}

impl GuestState {
    /// Adds a checked `key` to the guest's queue.
    fn add(&self, key: &types::ObjectKey, op: QueueOp) -> Result<(), types::Error> {
        self.limits.check_key(key.namespace.as_deref(), &key.name)?;
        Ok(self.services.queue(&key_string(key), op)?)
    }
}

impl queue::Host for GuestState {
    fn enqueue(&mut self, key: types::ObjectKey) -> Result<(), types::Error> {
        self.add(&key, QueueOp::Add)
    }

    fn enqueue_after(
        &mut self,
        key: types::ObjectKey,
        delay: types::Duration,
    ) -> Result<(), types::Error> {
        self.add(&key, QueueOp::AddAfter(Duration::from_nanos(delay)))
    }

    fn enqueue_rate_limited(&mut self, key: types::ObjectKey) -> Result<(), types::Error> {
        self.add(&key, QueueOp::AddRateLimited)
    }

    fn forget(&mut self, key: types::ObjectKey) {
        self.services.forget(&key_string(&key));
    }

    fn num_requeues(&mut self, key: types::ObjectKey) -> u32 {
        self.services.num_requeues(&key_string(&key))
    }
}

fn target(kind: types::Gvk, namespace: Option<String>) -> Target {
    Target {
        kind: gvk(kind),
        namespace: namespace.filter(|ns| !ns.is_empty()),
    }
}

/// A write or event whose request the host's runtime dropped as it shut
/// down.
fn shutting_down() -> GuestError {
    GuestError::Unavailable("the host is shutting down".into())
}

impl GuestState {
    fn patch_of(&self, body: client::PatchBody) -> Patch {
        match body {
            client::PatchBody::Merge(json) => Patch::Merge(json),
            client::PatchBody::Json(json) => Patch::Json(json),
            client::PatchBody::Apply(apply) => Patch::Apply {
                body: apply.json,
                field_manager: self.limits.guest().to_string(),
                force: apply.force,
            },
        }
    }

    /// Sends a write that returns an object.
    fn send(
        &self,
        write: Write,
    ) -> impl Future<Output = Result<types::Object, types::Error>> + Send + 'static {
        let checked = self.limits.check_body(write.body_len());
        let written = self.write(write);
        async move {
            checked?;
            match written.await? {
                Some(object) => Ok(wit_object(&object)),
                None => Err(types::Error::Other(
                    "the server returned no object".to_string(),
                )),
            }
        }
    }

    /// Sends a write; a failure that says the guest's view was stale is
    /// recorded for the reconcile's outcome.
    fn write(
        &self,
        write: Write,
    ) -> impl Future<Output = Result<Option<Object>, GuestError>> + Send + 'static {
        let services = Arc::clone(&self.services);
        let stale = Arc::clone(&self.stale);
        let host = self.host.clone();
        async move {
            let shape = WriteShape::of(&write);
            let result = on_host(&host, {
                let services = Arc::clone(&services);
                async move { services.write(write).await }
            })
            .await
            .unwrap_or_else(|| Err(shutting_down()));
            if let Err(error) = &result {
                stale.record(&shape, error, |kind, namespace, name| {
                    matches!(services.get(kind, namespace, name), Ok(Some(_)))
                });
            }
            result
        }
    }
}

impl client::Host for GuestState {
    async fn create(
        &mut self,
        kind: types::Gvk,
        namespace: Option<String>,
        json: String,
    ) -> Result<types::Object, types::Error> {
        let write = Write::Create {
            target: target(kind, namespace),
            json,
        };
        self.send(write).await
    }

    async fn replace(
        &mut self,
        kind: types::Gvk,
        namespace: Option<String>,
        name: String,
        json: String,
    ) -> Result<types::Object, types::Error> {
        let write = Write::Replace {
            target: target(kind, namespace),
            name,
            json,
            status: false,
        };
        self.send(write).await
    }

    async fn patch(
        &mut self,
        kind: types::Gvk,
        namespace: Option<String>,
        name: String,
        body: client::PatchBody,
    ) -> Result<types::Object, types::Error> {
        let write = Write::Patch {
            target: target(kind, namespace),
            name,
            patch: self.patch_of(body),
            status: false,
        };
        self.send(write).await
    }

    async fn update_status(
        &mut self,
        kind: types::Gvk,
        namespace: Option<String>,
        name: String,
        json: String,
    ) -> Result<types::Object, types::Error> {
        let write = Write::Replace {
            target: target(kind, namespace),
            name,
            json,
            status: true,
        };
        self.send(write).await
    }

    async fn patch_status(
        &mut self,
        kind: types::Gvk,
        namespace: Option<String>,
        name: String,
        body: client::PatchBody,
    ) -> Result<types::Object, types::Error> {
        let write = Write::Patch {
            target: target(kind, namespace),
            name,
            patch: self.patch_of(body),
            status: true,
        };
        self.send(write).await
    }

    async fn delete(
        &mut self,
        kind: types::Gvk,
        namespace: Option<String>,
        name: String,
        options: client::DeleteOptions,
    ) -> Result<(), types::Error> {
        let write = Write::Delete {
            target: target(kind, namespace),
            name,
            options: DeleteOptions {
                propagation_policy: options.propagation.map(|p| match p {
                    client::Propagation::Orphan => PropagationPolicy::Orphan,
                    client::Propagation::Background => PropagationPolicy::Background,
                    client::Propagation::Foreground => PropagationPolicy::Foreground,
                }),
                precondition_uid: options.precondition_uid,
                precondition_resource_version: options.precondition_resource_version,
                ..DeleteOptions::default()
            },
        };
        self.write(write).await?;
        Ok(())
    }

    async fn record_event(&mut self, event: client::Event) -> Result<(), types::Error> {
        let event = GuestEvent {
            regarding_kind: gvk(event.regarding_kind),
            namespace: event.regarding.namespace.filter(|ns| !ns.is_empty()),
            name: event.regarding.name,
            uid: event.regarding_uid,
            event_type: match event.event_type {
                client::EventType::Normal => EventType::Normal,
                client::EventType::Warning => EventType::Warning,
            },
            reason: event.reason,
            action: event.action,
            note: event.note,
        };
        self.limits.check_body(event.text_len())?;
        let services = Arc::clone(&self.services);
        let recorded = on_host(
            &self.host,
            async move { services.record_event(event).await },
        );
        Ok(recorded.await.unwrap_or_else(|| Err(shutting_down()))?)
    }
}

/// The `log` import, defined by hand rather than through the bindings so
/// that a message or field is read in place from the guest's memory and
/// only what the line may hold (`--max-log-line`) is copied: an 8 MiB
/// message costs a bounds check and a UTF-8 check, not an 8 MiB copy, and
/// a line over the guest's log rate is dropped before anything is read.
pub(crate) fn add_log_to_linker(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    // The interface of the package version of `WORLD`.
    let version = super::WORLD.rsplit_once('@').map_or("", |(_, v)| v);
    linker
        .instance(&format!("recon:controller/log@{version}"))?
        .func_wrap("log", |store, (level, message, fields): LogParams| {
            log(store, level, message, fields)
        })
}

type LogParams = (log::Level, WasmStr, WasmList<(WasmStr, WasmStr)>);

fn log(
    mut store: StoreContextMut<'_, GuestState>,
    level: log::Level,
    message: WasmStr,
    fields: WasmList<(WasmStr, WasmStr)>,
) -> wasmtime::Result<()> {
    let limits = Arc::clone(&store.data().limits);
    match limits.admit_log_line() {
        LogAdmission::Drop => return Ok(()),
        LogAdmission::Write { dropped: 0 } => {}
        LogAdmission::Write { dropped } => log_dropped(limits.guest(), dropped),
    }
    let max = limits.limits().max_log_line;
    // One more field than a structured record may have keeps a record with
    // too many fields joined, as it would be with all of them.
    let mut kept = Vec::with_capacity(fields.len().min(guest_log::MAX_FIELDS + 1));
    for i in 0..fields.len().min(guest_log::MAX_FIELDS + 1) {
        let Some(field) = fields.get(&mut store, i) else {
            break;
        };
        let (name, value) = field?;
        let name = prefix(&name.to_str(&store)?, max);
        let value = prefix(&value.to_str(&store)?, max);
        kept.push((name, value));
    }
    let message = message.to_str(&store)?;
    let message = limits.cut(&message);
    let state = store.data();
    let record = guest_log::Record {
        level: match level {
            log::Level::Trace => tracing::Level::TRACE,
            log::Level::Debug => tracing::Level::DEBUG,
            log::Level::Info => tracing::Level::INFO,
            log::Level::Warn => tracing::Level::WARN,
            log::Level::Error => tracing::Level::ERROR,
        },
        guest: limits.guest(),
        key: state.key.as_deref().unwrap_or(""),
        message: &message,
        fields: &kept,
    };
    guest_log::emit(&record, max);
    Ok(())
}

/// At most the first `max` bytes of `text` (whole characters), copied; a
/// longer one keeps one more character so that it still reads as too
/// long where length decides.
fn prefix(text: &str, max: usize) -> String {
    text[..text.ceil_char_boundary(max.saturating_add(1).min(text.len()))].to_string()
}

/// Says, once the guest may log again, how many of its lines were dropped.
pub(crate) fn log_dropped(guest: &str, dropped: u64) {
    tracing::warn!(
        target: "guest",
        guest,
        dropped,
        "{dropped} log lines of the guest were dropped, over its log rate (--guest-log-rate)"
    );
}
