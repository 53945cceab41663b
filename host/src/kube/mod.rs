//! API access: configuration and auth ([`connect`]), the rate-limited client
//! ([`ApiClient`], [`ClientRateLimiter`]), error classification
//! ([`ApiError`]), discovery ([`Discovery`]), the HTTP list/watch of the
//! native core ([`HttpListerWatcher`]), writes ([`WriteOptions`]),
//! whether the server answers ([`Reachability`]) and the schemas it serves
//! for custom resources ([`served_schema`]).

mod client;
mod config;
mod discovery;
mod list_decoder;
mod lister_watcher;
mod openapi;
mod rate_limit;
mod reachability;
mod status;
mod writes;

pub use client::{ApiClient, RawResponse, SendError};
pub use config::{ConfigError, ConnectOptions, connect, connect_with_kubeconfig_text, load_config};
pub use discovery::{ApiResource, Discovery, DiscoveryError, Gvk};
pub use lister_watcher::{DiscoveredListerWatcher, HttpListerWatcher};
pub use openapi::{ServedSchema, served_schema};
pub use rate_limit::{ClientMetrics, ClientRateLimiter, NoopClientMetrics, RateLimit};
pub use reachability::{PROBE_INTERVAL, Reachability, probe_while_down};
pub use status::{ApiError, ApiErrorKind};
pub use writes::{Deleted, EventObjectRef, EventRecord, WriteOptions};

use std::sync::Arc;

use crate::object::{Compactor, Object, ObjectError};

/// How objects the server sends become their cached form.
#[derive(Debug, Clone)]
struct Decoding {
    /// Drop `metadata.managedFields`.
    prune: bool,
    /// Compresses them as they arrive, so a list never holds them plain.
    compactor: Option<Arc<Compactor>>,
    /// Keep each object's metadata alone, as a `PartialObjectMetadata`.
    metadata_only: bool,
}

impl Decoding {
    /// Decodes whole objects, pruned of `metadata.managedFields` when
    /// `prune`, neither compressed nor reduced to metadata.
    fn whole(prune: bool) -> Decoding {
        Decoding {
            prune,
            compactor: None,
            metadata_only: false,
        }
    }

    /// Parses one object the server sent into its cached form.
    fn object(&self, json: &str) -> Result<Object, ObjectError> {
        let partial;
        let json = if self.metadata_only {
            partial = partial_object_metadata(json)?;
            &partial
        } else {
            json
        };
        let object = if self.prune {
            Object::from_json_pruned(json)
        } else {
            Object::from_json(json)
        }?;
        Ok(match &self.compactor {
            Some(compactor) => compactor.compact(object),
            None => object,
        })
    }
}

/// Parses one object the server sent, pruned of `metadata.managedFields`
/// when `prune`, and not compressed.
fn parse_object(json: &str, prune: bool) -> Result<Object, ObjectError> {
    Decoding::whole(prune).object(json)
}

/// `json` as a metadata informer holds it: a `PartialObjectMetadata` of its
/// metadata alone, whatever the server sent. A server answers a metadata
/// list or watch in that form; one that cannot sends whole objects (the
/// `application/json` it may fall back to), which are cut down here, so a
/// reader of metadata only never holds the rest.
fn partial_object_metadata(json: &str) -> Result<String, ObjectError> {
    #[derive(serde::Deserialize)]
    struct Whole<'a> {
        #[serde(borrow)]
        metadata: Option<&'a serde_json::value::RawValue>,
    }
    let whole: Whole = serde_json::from_str(json).map_err(|e| {
        if e.is_data() {
            ObjectError::NotAnObject(e)
        } else {
            ObjectError::InvalidJson(e)
        }
    })?;
    let metadata = whole.metadata.ok_or(ObjectError::NoMeta)?;
    Ok(format!(
        r#"{{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{}}}"#,
        metadata.get()
    ))
}

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
