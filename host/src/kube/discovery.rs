//! Discovery: maps a group/version/kind to the resource that serves it (its
//! plural name, scope, verbs and subresources) from `/api`, `/api/v1`,
//! `/apis` and `/apis/{group}/{version}`, CRDs included. The map is cached;
//! a kind that is not in it triggers one refresh before it is reported
//! unknown.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList, APIVersions};
use parking_lot::RwLock;
use serde::de::DeserializeOwned;

pub use recon_api_semantics::Gvk;

use super::client::{ApiClient, SendError};
use super::status::{ApiError, ApiErrorKind};

/// A resource as discovery describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiResource {
    /// The kind the resource serves.
    pub gvk: Gvk,
    /// The plural resource name used in paths, e.g. `configmaps`.
    pub plural: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// The verbs the resource supports (`list`, `watch`, `create`, …).
    pub verbs: Vec<String>,
    /// Subresource names, e.g. `status`, `scale`.
    pub subresources: Vec<String>,
}

impl ApiResource {
    /// A resource described by hand (tests, well-known kinds).
    pub fn new(gvk: Gvk, plural: &str, namespaced: bool) -> Self {
        ApiResource {
            gvk,
            plural: plural.to_string(),
            namespaced,
            verbs: Vec::new(),
            subresources: Vec::new(),
        }
    }

    /// `/api/v1` or `/apis/{group}/{version}`.
    pub fn group_version_path(&self) -> String {
        if self.gvk.group.is_empty() {
            format!("/api/{}", self.gvk.version)
        } else {
            format!("/apis/{}/{}", self.gvk.group, self.gvk.version)
        }
    }

    /// The collection path, in `namespace` when given and the resource is
    /// namespaced (`None` for a namespaced resource means all namespaces).
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.namespaced => format!(
                "{}/namespaces/{}/{}",
                self.group_version_path(),
                ns,
                self.plural
            ),
            _ => format!("{}/{}", self.group_version_path(), self.plural),
        }
    }

    /// The path of one object.
    pub fn object_path(&self, namespace: Option<&str>, name: &str) -> String {
        format!("{}/{}", self.collection_path(namespace), name)
    }

    /// Whether the resource supports `verb`.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Whether the resource has `subresource` (e.g. `status`).
    pub fn has_subresource(&self, subresource: &str) -> bool {
        self.subresources.iter().any(|s| s == subresource)
    }
}

/// Why a kind could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    /// The server serves no such kind, even after a refresh.
    #[error("unknown kind {0}: the server does not serve it")]
    UnknownKind(Gvk),
    /// A discovery request failed.
    #[error("discovery of {path} failed: {source}")]
    Request {
        /// The path requested.
        path: String,
        /// The classified failure.
        source: ApiError,
    },
}

/// The discovery cache.
#[derive(Debug)]
pub struct Discovery {
    client: ApiClient,
    resources: RwLock<Option<HashMap<Gvk, ApiResource>>>,
    /// How many refreshes completed; read before a lookup so that a miss
    /// refreshes only if nobody refreshed since.
    generation: AtomicU64,
    /// Serializes refreshes.
    refresh: tokio::sync::Mutex<()>,
}

impl Discovery {
    /// An empty cache that fetches on first use.
    pub fn new(client: ApiClient) -> Self {
        Discovery {
            client,
            resources: RwLock::new(None),
            generation: AtomicU64::new(0),
            refresh: tokio::sync::Mutex::new(()),
        }
    }

    /// How many full refreshes ran so far.
    pub fn refreshes(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The resource serving `gvk`: from the cache, else after one refresh.
    pub async fn resolve(&self, gvk: &Gvk) -> Result<ApiResource, DiscoveryError> {
        let seen = self.refreshes();
        if let Some(found) = self.cached(gvk) {
            return Ok(found);
        }
        self.refresh_if_unchanged(seen).await?;
        self.cached(gvk)
            .ok_or_else(|| DiscoveryError::UnknownKind(gvk.clone()))
    }

    /// Every resource known after the last refresh (fetching once if never).
    pub async fn all(&self) -> Result<Vec<ApiResource>, DiscoveryError> {
        if self.resources.read().is_none() {
            self.refresh_if_unchanged(self.refreshes()).await?;
        }
        let mut all: Vec<ApiResource> = self
            .resources
            .read()
            .as_ref()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default();
        all.sort_by(|a, b| a.gvk.cmp(&b.gvk));
        Ok(all)
    }

    /// Fetches everything again now.
    pub async fn refresh(&self) -> Result<(), DiscoveryError> {
        self.refresh_if_unchanged(self.refreshes()).await
    }

    fn cached(&self, gvk: &Gvk) -> Option<ApiResource> {
        self.resources.read().as_ref()?.get(gvk).cloned()
    }

    /// Refreshes unless another caller refreshed since `seen` (so concurrent
    /// misses cost one refresh).
    async fn refresh_if_unchanged(&self, seen: u64) -> Result<(), DiscoveryError> {
        let _refreshing = self.refresh.lock().await;
        if self.refreshes() != seen {
            return Ok(());
        }
        let fetched = self.fetch().await?;
        *self.resources.write() = Some(fetched);
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    async fn fetch(&self) -> Result<HashMap<Gvk, ApiResource>, DiscoveryError> {
        let mut map = HashMap::new();
        let core: APIVersions = self.get("/api").await?;
        for version in core.versions {
            let path = format!("/api/{version}");
            let list: APIResourceList = self.get(&path).await?;
            add_resources(&mut map, "", &version, list);
        }
        let groups: APIGroupList = self.get("/apis").await?;
        for group in groups.groups {
            for version in group.versions {
                let path = format!("/apis/{}", version.group_version);
                let list: APIResourceList = match self.get(&path).await {
                    Ok(list) => list,
                    // An aggregated API that is down must not hide the rest
                    // (as kubectl does, the group is left out).
                    Err(DiscoveryError::Request { source, .. })
                        if matches!(
                            source.kind,
                            ApiErrorKind::Unavailable | ApiErrorKind::NotFound
                        ) =>
                    {
                        tracing::warn!(%path, error = %source, "discovery: group version unavailable; skipped");
                        continue;
                    }
                    Err(error) => return Err(error),
                };
                add_resources(&mut map, &group.name, &version.version, list);
            }
        }
        Ok(map)
    }

    async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, DiscoveryError> {
        let request = http::Request::get(path)
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(|e| DiscoveryError::Request {
                path: path.to_string(),
                source: ApiError::new(ApiErrorKind::Other, e.to_string()),
            })?;
        let body = self
            .client
            .send_for_bytes(request)
            .await
            .map_err(|e: SendError| DiscoveryError::Request {
                path: path.to_string(),
                source: e.to_api_error(),
            })?;
        serde_json::from_slice(&body).map_err(|e| DiscoveryError::Request {
            path: path.to_string(),
            source: ApiError::new(
                ApiErrorKind::Other,
                format!("malformed discovery document: {e}"),
            ),
        })
    }
}

fn add_resources(
    map: &mut HashMap<Gvk, ApiResource>,
    group: &str,
    version: &str,
    list: APIResourceList,
) {
    let mut subresources: Vec<(String, String)> = Vec::new();
    let mut by_plural: HashMap<String, Gvk> = HashMap::new();
    for resource in list.resources {
        if let Some((parent, sub)) = resource.name.split_once('/') {
            subresources.push((parent.to_string(), sub.to_string()));
            continue;
        }
        // A resource may name its own group/version (rare; kept as given).
        let gvk = Gvk::new(
            resource.group.as_deref().unwrap_or(group),
            resource.version.as_deref().unwrap_or(version),
            &resource.kind,
        );
        by_plural.insert(resource.name.clone(), gvk.clone());
        map.insert(
            gvk.clone(),
            ApiResource {
                gvk,
                plural: resource.name,
                namespaced: resource.namespaced,
                verbs: resource.verbs,
                subresources: Vec::new(),
            },
        );
    }
    for (parent, sub) in subresources {
        if let Some(gvk) = by_plural.get(&parent)
            && let Some(resource) = map.get_mut(gvk)
        {
            resource.subresources.push(sub);
        }
    }
}
