//! What one guest's imports reach once it is wired: the caches of the kinds
//! its manifest watches, its own workqueue, and writes through the host's
//! client — only the kinds and verbs the manifest declares (events too: a
//! `create` of `events.k8s.io/v1` Events), with bodies of the kind
//! declared, at the guest's QPS / burst, with the guest's name as field
//! manager. Reads, writes and events are confined to the namespaces the
//! guest may act in: outside them they are `forbidden` and nothing is sent
//! (a cluster-scoped kind is written wherever its write is allowed).

use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;

use super::GuestQueue;
use super::indexes::indexer_name;
use super::view::{GuestView, KindView};
use crate::kube::{ApiClient, ApiError, ApiErrorKind, Gvk};
use crate::kube::{ApiResource, Discovery, DiscoveryError};
use crate::kube::{Deleted, EventObjectRef, EventRecord, WriteOptions};
use crate::label_selector::LabelSelector;
use crate::object::Object;
use crate::policy::Namespaces;
use crate::runtime::Guest;
use crate::runtime::Limit;
use crate::runtime::manifest::{Verb, event_kind};
use crate::runtime::services::{GuestError, GuestEvent, GuestServices, QueueOp, Write};
use recon_api_semantics::writes::Patch;

/// API access for a guest's writes.
#[derive(Clone)]
pub struct Writer {
    /// The client, limited by the guest's bucket (`ApiClient::for_guest`).
    pub client: ApiClient,
    /// Kind → resource.
    pub discovery: Arc<Discovery>,
    /// `reportingInstance` of events (the host's identity, e.g. its pod).
    pub reporting_instance: String,
}

/// The services of one wired guest.
pub struct ControllerServices {
    guest: Guest,
    view: GuestView,
    queue: Arc<GuestQueue>,
    /// The most keys the guest's own adds may find queued.
    max_queue_depth: usize,
    writer: Option<Writer>,
}

impl ControllerServices {
    /// Services over the guest's view of the caches and its queue, refusing
    /// the guest's adds while `max_queue_depth` keys are queued; without a
    /// writer every allowed write fails as unavailable.
    pub fn new(
        guest: Guest,
        view: GuestView,
        queue: Arc<GuestQueue>,
        max_queue_depth: usize,
        writer: Option<Writer>,
    ) -> Self {
        ControllerServices {
            guest,
            view,
            queue,
            max_queue_depth,
            writer,
        }
    }

    /// The caches the guest reads.
    pub fn view(&self) -> &GuestView {
        &self.view
    }

    fn cache(&self, kind: &Gvk) -> Result<&KindView, GuestError> {
        self.view.kind(kind).ok_or_else(|| {
            self.forbidden(format!(
                "{kind} is not cached for {}: only kinds its manifest watches (primary, owns, watches) can be read",
                self.guest.name()
            ))
        })
    }

    /// Refuses to `what` (read a kind, write one, record an event) in a
    /// namespace the guest may not act in.
    fn check_namespace(
        &self,
        namespace: &str,
        what: impl FnOnce() -> String,
    ) -> Result<(), GuestError> {
        let namespaces = self.view.namespaces();
        if namespaces.contains(namespace) {
            Ok(())
        } else {
            Err(self.forbidden(format!(
                "{} may not {} in namespace {namespace}: it may act only in {namespaces}",
                self.guest.name(),
                what()
            )))
        }
    }

    /// Refuses a write to a namespaced kind outside the guest's namespaces,
    /// or across all of them (no namespace); a cluster-scoped kind needs
    /// only its write permission.
    fn check_write_namespace(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        verb: Verb,
    ) -> Result<(), GuestError> {
        if !resource.namespaced {
            return Ok(());
        }
        let what = || format!("{} {}", verb.as_str(), resource.gvk);
        match namespace {
            Some(namespace) => self.check_namespace(namespace, what),
            None if matches!(self.view.namespaces(), Namespaces::All) => Ok(()),
            None => Err(self.forbidden(format!(
                "{} may not {} without a namespace: it may act only in {}",
                self.guest.name(),
                what(),
                self.view.namespaces()
            ))),
        }
    }

    /// Refuses what the guest's grant does not allow, and counts it.
    fn forbidden(&self, message: String) -> GuestError {
        self.guest.limiter().exceeded(Limit::Permission);
        GuestError::Forbidden(message)
    }

    fn writer(&self) -> Result<&Writer, GuestError> {
        self.writer
            .as_ref()
            .ok_or_else(|| GuestError::Unavailable("this host has no API server connection".into()))
    }

    fn check(&self, kind: &Gvk, verb: Verb) -> Result<(), GuestError> {
        if self.guest.manifest().allows(kind, verb) {
            Ok(())
        } else {
            Err(self.forbidden(format!(
                "{} may not {} {kind}: its manifest does not declare it",
                self.guest.name(),
                verb.as_str()
            )))
        }
    }

    fn options(&self) -> WriteOptions {
        WriteOptions {
            field_manager: Some(self.guest.name().to_string()),
            ..WriteOptions::default()
        }
    }
}

fn verb_of(write: &Write) -> Verb {
    match write {
        Write::Create { .. } => Verb::Create,
        Write::Replace { status: false, .. } => Verb::Replace,
        Write::Patch { status: false, .. } => Verb::Patch,
        Write::Replace { status: true, .. } | Write::Patch { status: true, .. } => {
            Verb::UpdateStatus
        }
        Write::Delete { .. } => Verb::Delete,
    }
}

/// The type fields of an object body.
#[derive(Deserialize)]
struct TypeMeta {
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
    kind: Option<String>,
}

/// Refuses a body (of a create, a replace, a status update or an apply)
/// whose `apiVersion` or `kind` is not the kind written: the permission
/// checked is the declared kind's, so the body must not be another's. A
/// body without them is left to the server, which fills them in from the
/// URL; merge and JSON patches carry no kind.
fn check_body_kind(write: &Write) -> Result<(), GuestError> {
    let body = match write {
        Write::Create { json, .. } | Write::Replace { json, .. } => json,
        Write::Patch {
            patch: Patch::Apply { body, .. },
            ..
        } => body,
        Write::Patch { .. } | Write::Delete { .. } => return Ok(()),
    };
    let declared = &write.target().kind;
    let meta: TypeMeta = serde_json::from_str(body).map_err(|e| {
        GuestError::Invalid(format!(
            "the body written as {declared} is not a JSON object: {e}"
        ))
    })?;
    let api_version = meta.api_version.filter(|v| !v.is_empty());
    let kind = meta.kind.filter(|k| !k.is_empty());
    let body_kind = Gvk::from_api_version(
        api_version.as_deref().unwrap_or(&declared.api_version()),
        kind.as_deref().unwrap_or(&declared.kind),
    );
    if body_kind != *declared {
        return Err(GuestError::Invalid(format!(
            "the body is a {body_kind} but the write is declared for {declared}"
        )));
    }
    Ok(())
}

fn discovery_error(error: DiscoveryError) -> GuestError {
    match error {
        DiscoveryError::UnknownKind(_) => GuestError::Invalid(error.to_string()),
        DiscoveryError::Request { source, .. } => source.into(),
    }
}

#[async_trait]
impl GuestServices for ControllerServices {
    fn get(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Object>, GuestError> {
        let cache = self.cache(kind)?;
        let key = match namespace {
            Some(ns) if !ns.is_empty() => {
                self.check_namespace(ns, || format!("read {kind}"))?;
                format!("{ns}/{name}")
            }
            _ => name.to_string(),
        };
        Ok(cache.get(&key))
    }

    fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        selector: &LabelSelector,
    ) -> Result<Vec<Object>, GuestError> {
        let cache = self.cache(kind)?;
        if let Some(ns) = namespace {
            self.check_namespace(ns, || format!("read {kind}"))?;
        }
        let objects = cache
            .list(namespace)
            .map_err(|e| GuestError::Other(e.to_string()))?;
        Ok(objects
            .into_iter()
            .filter(|o| selector.matches(o))
            .collect())
    }

    fn by_index(&self, kind: &Gvk, index: &str, value: &str) -> Result<Vec<Object>, GuestError> {
        self.cache(kind)?
            .by_index(&indexer_name(self.guest.name(), index), value)
            .map_err(|_| {
                GuestError::Invalid(format!(
                    "no index {index:?} is declared on {kind} in the manifest"
                ))
            })
    }

    fn queue(&self, key: &str, op: QueueOp) -> Result<(), GuestError> {
        // Ready and delayed keys; keys from the informers are never
        // refused, only the guest's own adds.
        let depth = self.queue.len() + self.queue.delaying_queue().waiting_len();
        if depth >= self.max_queue_depth {
            self.guest.limiter().exceeded(Limit::QueueDepth);
            return Err(GuestError::Unavailable(format!(
                "the queue of {} holds {depth} keys, the most --max-queue-depth allows; retry later",
                self.guest.name()
            )));
        }
        let key: Arc<str> = Arc::from(key);
        match op {
            QueueOp::Add => self.queue.add(key),
            QueueOp::AddAfter(delay) => self.queue.add_after(key, delay),
            QueueOp::AddRateLimited => self.queue.add_rate_limited(key),
        }
        Ok(())
    }

    fn forget(&self, key: &str) {
        self.queue.forget(&Arc::from(key));
    }

    fn num_requeues(&self, key: &str) -> u32 {
        self.queue.num_requeues(&Arc::from(key))
    }

    async fn write(&self, write: Write) -> Result<Option<Object>, GuestError> {
        let target = write.target();
        let verb = verb_of(&write);
        self.check(&target.kind, verb)?;
        check_body_kind(&write)?;
        let writer = self.writer()?;
        let resource = writer
            .discovery
            .resolve(&target.kind)
            .await
            .map_err(discovery_error)?;
        let namespace = target.namespace.as_deref();
        self.check_write_namespace(&resource, namespace, verb)?;
        let client = &writer.client;
        let options = self.options();
        let stored = match &write {
            Write::Create { json, .. } => client.create(&resource, namespace, json, &options).await,
            Write::Replace {
                name,
                json,
                status: false,
                ..
            } => {
                client
                    .replace(&resource, namespace, name, json, &options)
                    .await
            }
            Write::Replace {
                name,
                json,
                status: true,
                ..
            } => {
                client
                    .replace_status(&resource, namespace, name, json, &options)
                    .await
            }
            Write::Patch {
                name,
                patch,
                status,
                ..
            } => {
                let subresource = status.then_some("status");
                client
                    .patch(&resource, namespace, name, subresource, patch, &options)
                    .await
            }
            Write::Delete { name, options, .. } => {
                return match client.delete(&resource, namespace, name, options).await? {
                    Deleted::Pending(object) => Ok(Some(object)),
                    Deleted::Gone => Ok(None),
                };
            }
        };
        Ok(Some(stored?))
    }

    async fn record_event(&self, event: GuestEvent) -> Result<(), GuestError> {
        if !self.guest.manifest().allows_events() {
            return Err(self.forbidden(format!(
                "{} may not record events: its manifest does not declare create of {} (records_events() in the guest SDK)",
                self.guest.name(),
                event_kind()
            )));
        }
        let writer = self.writer()?;
        let record = EventRecord {
            regarding: EventObjectRef {
                api_version: event.regarding_kind.api_version(),
                kind: event.regarding_kind.kind.clone(),
                namespace: event.namespace.clone().unwrap_or_default(),
                name: event.name,
                uid: event.uid,
                resource_version: String::new(),
            },
            reason: event.reason,
            note: event.note,
            event_type: event.event_type,
            action: event.action,
            reporting_controller: self.guest.name().to_string(),
            reporting_instance: writer.reporting_instance.clone(),
            namespace: None,
        };
        self.check_namespace(&record.event_namespace(), || "record an event".to_string())?;
        writer.client.record_event(&record).await?;
        Ok(())
    }
}

/// A failed API request as the guest sees it.
impl From<ApiError> for GuestError {
    fn from(error: ApiError) -> Self {
        let message = error.message;
        match error.kind {
            ApiErrorKind::NotFound => GuestError::NotFound,
            ApiErrorKind::Conflict if error.reason == "AlreadyExists" => {
                GuestError::AlreadyExists(message)
            }
            ApiErrorKind::Conflict => GuestError::Conflict(message),
            ApiErrorKind::Forbidden => GuestError::Forbidden(message),
            ApiErrorKind::Invalid => GuestError::Invalid(message),
            ApiErrorKind::Unavailable => GuestError::Unavailable(message),
            ApiErrorKind::Other => GuestError::Other(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::services::Target;

    fn api_error(kind: ApiErrorKind, reason: &str) -> ApiError {
        ApiError {
            reason: reason.to_string(),
            ..ApiError::new(kind, "the server said so")
        }
    }

    #[test]
    fn api_errors_keep_their_class() {
        assert_eq!(
            GuestError::from(api_error(ApiErrorKind::Conflict, "AlreadyExists")),
            GuestError::AlreadyExists("the server said so".into())
        );
        assert_eq!(
            GuestError::from(api_error(ApiErrorKind::Conflict, "Conflict")),
            GuestError::Conflict("the server said so".into())
        );
        assert_eq!(
            GuestError::from(api_error(ApiErrorKind::NotFound, "NotFound")),
            GuestError::NotFound
        );
        assert_eq!(
            GuestError::from(api_error(ApiErrorKind::Unavailable, "")),
            GuestError::Unavailable("the server said so".into())
        );
    }

    fn create(kind: Gvk, json: &str) -> Write {
        Write::Create {
            target: Target {
                kind,
                namespace: Some("default".into()),
            },
            json: json.into(),
        }
    }

    #[test]
    fn a_body_of_another_kind_is_invalid_and_names_both() {
        let configmap = Gvk::new("", "v1", "ConfigMap");
        let refused = check_body_kind(&create(
            configmap.clone(),
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}"#,
        ));
        let Err(GuestError::Invalid(message)) = refused else {
            panic!("{refused:?}");
        };
        assert!(
            message.contains("v1, Kind=Secret") && message.contains("v1, Kind=ConfigMap"),
            "{message}"
        );
        let group = check_body_kind(&create(
            configmap.clone(),
            r#"{"apiVersion":"apps/v1","kind":"ConfigMap"}"#,
        ));
        assert!(
            matches!(&group, Err(GuestError::Invalid(m)) if m.contains("apps/v1, Kind=ConfigMap")),
            "{group:?}"
        );
        let apply = Write::Patch {
            target: Target {
                kind: configmap.clone(),
                namespace: None,
            },
            name: "n".into(),
            patch: Patch::Apply {
                body: r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole"}"#
                    .into(),
                field_manager: "g".into(),
                force: false,
            },
            status: false,
        };
        assert!(matches!(
            check_body_kind(&apply),
            Err(GuestError::Invalid(_))
        ));
        let status = Write::Replace {
            target: Target {
                kind: configmap.clone(),
                namespace: None,
            },
            name: "n".into(),
            json: r#"{"apiVersion":"v1","kind":"Pod"}"#.into(),
            status: true,
        };
        assert!(matches!(
            check_body_kind(&status),
            Err(GuestError::Invalid(_))
        ));
        assert!(matches!(
            check_body_kind(&create(configmap.clone(), "[1]")),
            Err(GuestError::Invalid(_))
        ));
    }

    #[test]
    fn a_body_of_the_declared_kind_or_without_one_passes_as_do_merge_patches() {
        let deployment = Gvk::new("apps", "v1", "Deployment");
        for body in [
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{}}"#,
            r#"{"metadata":{"name":"d"}}"#,
            r#"{"apiVersion":"","kind":""}"#,
        ] {
            assert_eq!(check_body_kind(&create(deployment.clone(), body)), Ok(()));
        }
        let merge = Write::Patch {
            target: Target {
                kind: deployment,
                namespace: Some("default".into()),
            },
            name: "d".into(),
            patch: Patch::Merge(r#"{"kind":"Secret"}"#.into()),
            status: false,
        };
        assert_eq!(check_body_kind(&merge), Ok(()));
    }
}
