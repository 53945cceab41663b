//! Writes for guests and the host: create, replace, patch (merge, JSON
//! patch, strategic merge, server-side apply), delete, status updates and
//! `events.k8s.io/v1` events, all through the rate-limited [`ApiClient`].
//! Each returns the server's object in cached form ([`Object`], pruned of
//! `managedFields` unless asked otherwise) or a classified [`ApiError`].

use std::borrow::Cow;

use http::{Method, Request};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use serde::Deserialize;

use super::client::{ApiClient, with_query};
use super::discovery::ApiResource;
use super::parse_object;
use super::status::{ApiError, ApiErrorKind};
use crate::object::Object;
use recon_api_semantics::writes::{DeleteOptions, EventType, Patch};

/// Options common to create, replace, patch and status updates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// `fieldManager`; required for server-side apply (taken from the patch
    /// there).
    pub field_manager: Option<String>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Keep `metadata.managedFields` in the returned object.
    pub keep_managed_fields: bool,
}

/// What a delete returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deleted {
    /// The object still exists (finalizers pending); its current state.
    Pending(Object),
    /// The object is gone (the server returned a `Status` or the last
    /// state of the object without finalizers).
    Gone,
}

/// What an object the event is about looks like.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventObjectRef {
    /// `apiVersion` of the object.
    pub api_version: String,
    /// `kind` of the object.
    pub kind: String,
    /// Namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID, when known.
    pub uid: String,
    /// resourceVersion, when known.
    pub resource_version: String,
}

impl EventObjectRef {
    /// A reference to a cached object.
    pub fn from_object(object: &Object) -> Self {
        EventObjectRef {
            api_version: object.api_version().to_string(),
            kind: object.kind().to_string(),
            namespace: object.namespace().to_string(),
            name: object.name().to_string(),
            uid: object.uid().to_string(),
            resource_version: object.resource_version().to_string(),
        }
    }

    fn to_reference(&self) -> ObjectReference {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        ObjectReference {
            api_version: some(&self.api_version),
            kind: some(&self.kind),
            namespace: some(&self.namespace),
            name: some(&self.name),
            uid: some(&self.uid),
            resource_version: some(&self.resource_version),
            field_path: None,
        }
    }
}

/// An `events.k8s.io/v1` event to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRecord {
    /// The object the event is about.
    pub regarding: EventObjectRef,
    /// `reason`: short, CamelCase (e.g. `ScaledUp`).
    pub reason: String,
    /// `note`: human-readable detail.
    pub note: String,
    /// `type`.
    pub event_type: EventType,
    /// `action`: what was done (e.g. `Scaling`).
    pub action: String,
    /// `reportingController`, e.g. `recon.dev/web-controller`.
    pub reporting_controller: String,
    /// `reportingInstance`, e.g. the host's pod name.
    pub reporting_instance: String,
    /// The event's namespace; the regarding object's (or `default` for a
    /// cluster-scoped object) when `None`.
    pub namespace: Option<String>,
}

impl EventRecord {
    /// The `Event` object this record creates at `now`.
    pub fn to_event(&self, now: Timestamp) -> Event {
        let namespace = self.event_namespace();
        let nanos = now.as_nanosecond();
        Event {
            metadata: ObjectMeta {
                // client-go's naming: `{regarding name}.{unix nanos in hex}`.
                name: Some(format!("{}.{:x}", self.regarding.name, nanos)),
                namespace: Some(namespace.into_owned()),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            reason: Some(self.reason.clone()),
            note: Some(self.note.clone()),
            type_: Some(
                match self.event_type {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_string(),
            ),
            action: Some(self.action.clone()),
            reporting_controller: Some(self.reporting_controller.clone()),
            reporting_instance: Some(self.reporting_instance.clone()),
            regarding: Some(self.regarding.to_reference()),
            ..Event::default()
        }
    }

    /// The namespace the event is created in: [`EventRecord::namespace`],
    /// else the regarding object's, else `default` (a cluster-scoped
    /// object's events), as client-go's recorder does.
    pub fn event_namespace(&self) -> Cow<'_, str> {
        match &self.namespace {
            Some(ns) => Cow::Borrowed(ns),
            None if !self.regarding.namespace.is_empty() => {
                Cow::Borrowed(&self.regarding.namespace)
            }
            None => Cow::Borrowed("default"),
        }
    }
}

/// The resource of `events.k8s.io/v1` events.
pub fn events_resource() -> ApiResource {
    ApiResource::new(
        super::discovery::Gvk::new("events.k8s.io", "v1", "Event"),
        "events",
        true,
    )
}

fn write_query(options: &WriteOptions) -> Vec<(&'static str, String)> {
    let mut query = Vec::new();
    if let Some(manager) = &options.field_manager {
        query.push(("fieldManager", manager.clone()));
    }
    if options.dry_run {
        query.push(("dryRun", "All".to_string()));
    }
    query
}

#[derive(Deserialize)]
struct KindOnly<'a> {
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
}

impl ApiClient {
    /// Sends one request with a body and reads the body of a success.
    async fn request(
        &self,
        method: Method,
        path: String,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<bytes::Bytes, ApiError> {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::CONTENT_TYPE, content_type)
            .body(body)
            .map_err(|e| ApiError::new(ApiErrorKind::Other, format!("invalid request: {e}")))?;
        self.send_for_bytes(request)
            .await
            .map_err(|e| e.to_api_error())
    }

    fn parse_returned(body: &[u8], keep_managed_fields: bool) -> Result<Object, ApiError> {
        let malformed = |e: &dyn std::fmt::Display| {
            ApiError::new(ApiErrorKind::Other, format!("malformed response: {e}"))
        };
        let text = std::str::from_utf8(body).map_err(|e| malformed(&e))?;
        parse_object(text, !keep_managed_fields).map_err(|e| malformed(&e))
    }

    /// Sends `object_json` to `path` with `method` and the query of
    /// `options`, and parses the object returned.
    async fn send_object(
        &self,
        method: Method,
        path: &str,
        object_json: &str,
        options: &WriteOptions,
    ) -> Result<Object, ApiError> {
        let body = self
            .request(
                method,
                with_query(path, &write_query(options)),
                "application/json",
                object_json.as_bytes().to_vec(),
            )
            .await?;
        Self::parse_returned(&body, options.keep_managed_fields)
    }

    /// Reads one object (`GET`).
    pub async fn get(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Object, ApiError> {
        let body = self
            .request(
                Method::GET,
                resource.object_path(namespace, name),
                "application/json",
                Vec::new(),
            )
            .await?;
        Self::parse_returned(&body, false)
    }

    /// Creates an object (`POST` to the collection).
    pub async fn create(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        object_json: &str,
        options: &WriteOptions,
    ) -> Result<Object, ApiError> {
        let path = resource.collection_path(namespace);
        self.send_object(Method::POST, &path, object_json, options)
            .await
    }

    /// Replaces an object (`PUT`); a stale `metadata.resourceVersion` in the
    /// body gets a conflict.
    pub async fn replace(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        object_json: &str,
        options: &WriteOptions,
    ) -> Result<Object, ApiError> {
        let path = resource.object_path(namespace, name);
        self.send_object(Method::PUT, &path, object_json, options)
            .await
    }

    /// Replaces an object's status (`PUT …/status`).
    pub async fn replace_status(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        object_json: &str,
        options: &WriteOptions,
    ) -> Result<Object, ApiError> {
        let path = format!("{}/status", resource.object_path(namespace, name));
        self.send_object(Method::PUT, &path, object_json, options)
            .await
    }

    /// Patches an object, or its `subresource` (e.g. `status`) when given.
    pub async fn patch(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        patch: &Patch,
        options: &WriteOptions,
    ) -> Result<Object, ApiError> {
        let mut path = resource.object_path(namespace, name);
        if let Some(sub) = subresource {
            path.push('/');
            path.push_str(sub);
        }
        let mut query = write_query(options);
        if let Patch::Apply {
            field_manager,
            force,
            ..
        } = patch
        {
            query.retain(|(k, _)| *k != "fieldManager");
            query.insert(0, ("fieldManager", field_manager.clone()));
            if *force {
                query.push(("force", "true".to_string()));
            }
        }
        let body = self
            .request(
                Method::PATCH,
                with_query(&path, &query),
                patch.content_type(),
                patch.body().as_bytes().to_vec(),
            )
            .await?;
        Self::parse_returned(&body, options.keep_managed_fields)
    }

    /// Deletes an object.
    pub async fn delete(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        let mut body = serde_json::json!({"kind": "DeleteOptions", "apiVersion": "v1"});
        if let Some(policy) = options.propagation_policy {
            body["propagationPolicy"] = policy.as_str().into();
        }
        if options.precondition_uid.is_some() || options.precondition_resource_version.is_some() {
            let mut preconditions = serde_json::Map::new();
            if let Some(uid) = &options.precondition_uid {
                preconditions.insert("uid".into(), uid.clone().into());
            }
            if let Some(rv) = &options.precondition_resource_version {
                preconditions.insert("resourceVersion".into(), rv.clone().into());
            }
            body["preconditions"] = preconditions.into();
        }
        if let Some(grace) = options.grace_period_seconds {
            body["gracePeriodSeconds"] = grace.into();
        }
        if options.dry_run {
            body["dryRun"] = serde_json::json!(["All"]);
        }
        let returned = self
            .request(
                Method::DELETE,
                resource.object_path(namespace, name),
                "application/json",
                body.to_string().into_bytes(),
            )
            .await?;
        let is_status = serde_json::from_slice::<KindOnly<'_>>(&returned)
            .ok()
            .and_then(|k| k.kind)
            .is_some_and(|k| k == "Status");
        if is_status || returned.trim_ascii().is_empty() {
            return Ok(Deleted::Gone);
        }
        let object = Self::parse_returned(&returned, false)?;
        if object.deletion_timestamp().is_some() && object.finalizers().len() > 0 {
            Ok(Deleted::Pending(object))
        } else {
            Ok(Deleted::Gone)
        }
    }

    /// Records an `events.k8s.io/v1` event now.
    pub async fn record_event(&self, event: &EventRecord) -> Result<Object, ApiError> {
        self.record_event_at(event, Timestamp::now()).await
    }

    /// Records an `events.k8s.io/v1` event with `eventTime` `now`.
    pub async fn record_event_at(
        &self,
        event: &EventRecord,
        now: Timestamp,
    ) -> Result<Object, ApiError> {
        let body = serde_json::to_string(&event.to_event(now))
            .map_err(|e| ApiError::new(ApiErrorKind::Other, format!("cannot encode event: {e}")))?;
        let namespace = event.event_namespace();
        self.create(
            &events_resource(),
            Some(&namespace),
            &body,
            &WriteOptions::default(),
        )
        .await
    }
}
