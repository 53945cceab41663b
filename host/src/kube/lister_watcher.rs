//! [`HttpListerWatcher`]: the native core's [`ListerWatcher`] over HTTP for
//! any kind, as dynamic objects. A list body is decoded as it arrives, each
//! item parsed once straight into the cached [`Object`] form
//! ([`super::list_decoder`]). A watch body is streamed line by line, each
//! event parsed once into an [`Object`]; errors are classified as the
//! reflector needs them (see [`super::status::classify_status`]).

use std::borrow::Cow;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::BytesMut;
use futures::StreamExt;
use hyper::body::Body as _;
use kube_client::client::Body;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::Decoding;
use super::client::{ApiClient, SendError, with_query};
use super::discovery::{ApiResource, Discovery, DiscoveryError, Gvk};
use super::list_decoder::{ListDecoder, RawListMeta};

use super::status::{Status, classify_status, classify_transport};
use crate::informer::{
    ListOptions, ListPage, ListerWatcher, LwError, WatchEvent, WatchOptions, WatchStream,
};
use crate::object::Compactor;

/// The longest watch event line accepted.
pub const DEFAULT_MAX_LINE: usize = 64 << 20;

/// Lists and watches one resource, optionally in one namespace and with
/// selectors, over HTTP.
#[derive(Debug, Clone)]
pub struct HttpListerWatcher {
    client: ApiClient,
    resource: ApiResource,
    namespace: Option<String>,
    label_selector: Option<String>,
    field_selector: Option<String>,
    decoding: Decoding,
    max_line: usize,
}

impl HttpListerWatcher {
    /// Lists and watches `resource` in `namespace` (all namespaces, or a
    /// cluster-scoped resource, when `None`). Objects are pruned of
    /// `metadata.managedFields` by default.
    pub fn new(client: ApiClient, resource: ApiResource, namespace: Option<String>) -> Self {
        HttpListerWatcher {
            client,
            resource,
            namespace,
            label_selector: None,
            field_selector: None,
            decoding: Decoding::whole(true),
            max_line: DEFAULT_MAX_LINE,
        }
    }

    /// Resolves `gvk` through `discovery` (refreshing once on a miss) and
    /// lists and watches it in `namespace`.
    pub async fn for_gvk(
        client: ApiClient,
        discovery: &Discovery,
        gvk: &Gvk,
        namespace: Option<String>,
    ) -> Result<Self, DiscoveryError> {
        let resource = discovery.resolve(gvk).await?;
        Ok(Self::new(client, resource, namespace))
    }

    /// A label selector ANDed with any the caller passes in the options.
    pub fn with_label_selector(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }

    /// A field selector ANDed with any the caller passes in the options.
    pub fn with_field_selector(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }

    /// Whether to drop `metadata.managedFields` (default true).
    pub fn with_pruning(mut self, prune_managed_fields: bool) -> Self {
        self.decoding.prune = prune_managed_fields;
        self
    }

    /// Compresses every object it lists or watches with `compactor` (the
    /// informer's), as each arrives.
    pub fn with_compactor(mut self, compactor: Arc<Compactor>) -> Self {
        self.decoding.compactor = Some(compactor);
        self
    }

    /// Lists and watches metadata only, as client-go's metadata informers
    /// do: the server is asked for `PartialObjectMetadata`, and every
    /// object is kept as one (default false).
    pub fn with_metadata_only(mut self, metadata_only: bool) -> Self {
        self.decoding.metadata_only = metadata_only;
        self
    }

    /// What a request asks for: `metadata` when listing and watching
    /// metadata only, else plain JSON.
    fn accept(&self, metadata: &'static str) -> &'static str {
        if self.decoding.metadata_only {
            metadata
        } else {
            "application/json"
        }
    }

    /// The longest watch event line accepted (default 64 MiB).
    pub fn with_max_line(mut self, max_line: usize) -> Self {
        self.max_line = max_line;
        self
    }

    /// The resource listed and watched.
    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    fn selector(own: &Option<String>, passed: &Option<String>) -> Option<String> {
        match (own.as_deref(), passed.as_deref()) {
            (Some(a), Some(b)) if !a.is_empty() && !b.is_empty() => Some(format!("{a},{b}")),
            (Some(a), _) if !a.is_empty() => Some(a.to_string()),
            (_, Some(b)) if !b.is_empty() => Some(b.to_string()),
            _ => None,
        }
    }

    /// The collection path with `query` and the selectors (this watcher's
    /// ANDed with those `passed`) appended.
    fn collection_query(
        &self,
        mut query: Vec<(&str, String)>,
        label_selector: &Option<String>,
        field_selector: &Option<String>,
    ) -> String {
        if let Some(selector) = Self::selector(&self.label_selector, label_selector) {
            query.push(("labelSelector", selector));
        }
        if let Some(selector) = Self::selector(&self.field_selector, field_selector) {
            query.push(("fieldSelector", selector));
        }
        with_query(
            &self.resource.collection_path(self.namespace.as_deref()),
            &query,
        )
    }

    /// The path of a list request.
    pub fn list_path(&self, options: &ListOptions) -> String {
        let mut query: Vec<(&str, String)> = Vec::new();
        if options.limit > 0 {
            query.push(("limit", options.limit.to_string()));
        }
        if !options.continue_token.is_empty() {
            query.push(("continue", options.continue_token.clone()));
        }
        if !options.resource_version.is_empty() {
            query.push(("resourceVersion", options.resource_version.clone()));
        }
        if let Some(matching) = &options.resource_version_match
            && !matching.is_empty()
        {
            query.push(("resourceVersionMatch", matching.clone()));
        }
        self.collection_query(query, &options.label_selector, &options.field_selector)
    }

    /// The path of a watch request.
    pub fn watch_path(&self, options: &WatchOptions) -> String {
        let mut query: Vec<(&str, String)> = vec![("watch", "true".to_string())];
        if !options.resource_version.is_empty() {
            query.push(("resourceVersion", options.resource_version.clone()));
        }
        if let Some(timeout) = options.timeout {
            // Rounded up: 0 would mean the server's default.
            let seconds = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
            query.push(("timeoutSeconds", seconds.max(1).to_string()));
        }
        if options.allow_bookmarks {
            query.push(("allowWatchBookmarks", "true".to_string()));
        }
        self.collection_query(query, &options.label_selector, &options.field_selector)
    }

    /// Parses one whole list body (for tests and benchmarks; a list from
    /// the server is decoded as it arrives).
    pub fn parse_list(&self, body: &[u8]) -> Result<ListPage, LwError> {
        let mut decoder = ListDecoder::new(self.decoding.clone(), self.max_line);
        decoder.feed(body)?;
        decoder.finish()
    }
}

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    object: &'a RawValue,
}

#[derive(Deserialize, Default)]
struct BookmarkObject<'a> {
    #[serde(borrow, default)]
    metadata: RawListMeta<'a>,
}

fn send_error_to_lw(error: SendError) -> LwError {
    match error {
        SendError::Transport(error) => classify_transport(&error),
        SendError::Status {
            status,
            retry_after,
            ..
        } => classify_status(&status, retry_after),
    }
}

/// What a list asks for when it wants metadata only; the plain
/// `application/json` last, for a server that cannot answer so (client-go's
/// metadata client asks the same, with protobuf first).
const ACCEPT_METADATA_LIST: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// The same for a watch, whose events carry one object each.
const ACCEPT_METADATA: &str =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

fn get_request(path: &str, accept: &str) -> Result<http::Request<Vec<u8>>, LwError> {
    http::Request::get(path)
        .header(http::header::ACCEPT, accept)
        .body(Vec::new())
        .map_err(|e| LwError::other(format!("invalid request {path}: {e}")))
}

#[async_trait]
impl ListerWatcher for HttpListerWatcher {
    async fn list(&self, options: &ListOptions) -> Result<ListPage, LwError> {
        let request = get_request(&self.list_path(options), self.accept(ACCEPT_METADATA_LIST))?;
        let response = self.client.send(request).await.map_err(send_error_to_lw)?;
        let mut body = response.into_body();
        let mut decoder = ListDecoder::new(self.decoding.clone(), self.max_line);
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            let frame = frame.map_err(|e| classify_transport(&e))?;
            if let Ok(data) = frame.into_data() {
                decoder.feed(&data)?;
            }
        }
        decoder.finish()
    }

    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream, LwError> {
        let request = get_request(&self.watch_path(options), self.accept(ACCEPT_METADATA))?;
        let response = self.client.send(request).await.map_err(send_error_to_lw)?;
        let decoder = EventDecoder {
            body: response.into_body(),
            buffer: BytesMut::new(),
            scanned: 0,
            max_line: self.max_line,
            finished: false,
            decoding: self.decoding.clone(),
        };
        Ok(futures::stream::unfold(decoder, |mut decoder| async move {
            let event = decoder.next_event().await?;
            Some((event, decoder))
        })
        .boxed())
    }
}

/// Splits a watch body into lines and decodes each into an event.
struct EventDecoder {
    body: Body,
    buffer: BytesMut,
    /// How much of `buffer` is known to hold no newline.
    scanned: usize,
    max_line: usize,
    finished: bool,
    decoding: Decoding,
}

enum Line {
    Data(BytesMut),
    TooLong,
    End,
}

impl EventDecoder {
    async fn next_event(&mut self) -> Option<WatchEvent> {
        loop {
            if self.finished {
                return None;
            }
            match self.next_line().await {
                Line::End => {
                    self.finished = true;
                    return None;
                }
                Line::TooLong => {
                    self.finished = true;
                    return Some(WatchEvent::Error(LwError::other(format!(
                        "malformed watch event: line longer than {} bytes",
                        self.max_line
                    ))));
                }
                Line::Data(line) => {
                    let text = line.trim_ascii();
                    if text.is_empty() {
                        continue;
                    }
                    match decode_event(text, &self.decoding) {
                        Ok(event) => return Some(event),
                        Err(message) => {
                            self.finished = true;
                            return Some(WatchEvent::Error(LwError::other(format!(
                                "malformed watch event: {message}"
                            ))));
                        }
                    }
                }
            }
        }
    }

    async fn next_line(&mut self) -> Line {
        loop {
            if let Some(at) = self.buffer[self.scanned..].iter().position(|&b| b == b'\n') {
                let end = self.scanned + at;
                let line = self.buffer.split_to(end + 1);
                self.scanned = 0;
                if end > self.max_line {
                    return Line::TooLong;
                }
                return Line::Data(line);
            }
            self.scanned = self.buffer.len();
            if self.buffer.len() > self.max_line {
                return Line::TooLong;
            }
            let frame = std::future::poll_fn(|cx| Pin::new(&mut self.body).poll_frame(cx)).await;
            match frame {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.extend_from_slice(&data);
                    }
                }
                Some(Err(error)) => {
                    // As client-go: a broken stream ends the watch quietly;
                    // the reflector watches again.
                    tracing::debug!(error = %error, "watch stream ended with a transport error");
                    return Line::End;
                }
                None => {
                    if self.buffer.is_empty() {
                        return Line::End;
                    }
                    // The last line had no newline.
                    self.scanned = 0;
                    return Line::Data(self.buffer.split());
                }
            }
        }
    }
}

fn decode_event(line: &[u8], decoding: &Decoding) -> Result<WatchEvent, String> {
    let event: RawEvent<'_> = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    let json = event.object.get();
    let object = |json: &str| {
        decoding
            .object(json)
            .map_err(|e| format!("{} object: {e}", event.kind))
    };
    match &*event.kind {
        "ADDED" => Ok(WatchEvent::Added(object(json)?)),
        "MODIFIED" => Ok(WatchEvent::Modified(object(json)?)),
        "DELETED" => Ok(WatchEvent::Deleted(object(json)?)),
        "BOOKMARK" => {
            let bookmark: BookmarkObject<'_> =
                serde_json::from_str(json).map_err(|e| format!("BOOKMARK object: {e}"))?;
            Ok(WatchEvent::Bookmark {
                resource_version: bookmark
                    .metadata
                    .resource_version
                    .map(Cow::into_owned)
                    .unwrap_or_default(),
            })
        }
        "ERROR" => {
            let status: Status =
                serde_json::from_str(json).map_err(|e| format!("ERROR object: {e}"))?;
            Ok(WatchEvent::Error(classify_status(&status, None)))
        }
        other => Err(format!("unknown event type {other:?}")),
    }
}

/// Lists and watches a kind that is resolved through discovery on first use
/// rather than up front, so an informer can start before the kind is served
/// (a CRD installed after the host): until discovery finds it, every list
/// fails and the reflector backs off and retries.
pub struct DiscoveredListerWatcher {
    client: ApiClient,
    discovery: std::sync::Arc<Discovery>,
    gvk: Gvk,
    namespace: Option<String>,
    label_selector: Option<String>,
    /// What the resolved lister-watcher decodes objects into.
    decoding: Decoding,
    resolved: tokio::sync::OnceCell<HttpListerWatcher>,
}

impl DiscoveredListerWatcher {
    /// Lists and watches `gvk` in `namespace` (all when `None`) with an
    /// optional label selector; `managedFields` are pruned.
    pub fn new(
        client: ApiClient,
        discovery: std::sync::Arc<Discovery>,
        gvk: Gvk,
        namespace: Option<String>,
        label_selector: Option<String>,
    ) -> Self {
        DiscoveredListerWatcher {
            client,
            discovery,
            gvk,
            namespace,
            label_selector,
            decoding: Decoding::whole(true),
            resolved: tokio::sync::OnceCell::new(),
        }
    }

    /// Compresses every object it lists or watches with `compactor`.
    pub fn with_compactor(mut self, compactor: Option<Arc<Compactor>>) -> Self {
        self.decoding.compactor = compactor;
        self
    }

    /// Whether objects are pruned of `metadata.managedFields` (the default).
    pub fn with_pruning(mut self, prune_managed_fields: bool) -> Self {
        self.decoding.prune = prune_managed_fields;
        self
    }

    /// Whether it lists and watches metadata only
    /// ([`HttpListerWatcher::with_metadata_only`]).
    pub fn with_metadata_only(mut self, metadata_only: bool) -> Self {
        self.decoding.metadata_only = metadata_only;
        self
    }

    async fn inner(&self) -> Result<&HttpListerWatcher, LwError> {
        self.resolved
            .get_or_try_init(|| async {
                let resource = self
                    .discovery
                    .resolve(&self.gvk)
                    .await
                    .map_err(|e| match e {
                        DiscoveryError::UnknownKind(_) => LwError::other(format!(
                            "{e} (not installed yet? retrying with backoff)"
                        )),
                        // No status code: no answer came.
                        DiscoveryError::Request { ref source, .. } if source.code == 0 => {
                            LwError::unreachable(e.to_string())
                        }
                        DiscoveryError::Request { .. } => LwError::other(e.to_string()),
                    })?;
                let mut lw =
                    HttpListerWatcher::new(self.client.clone(), resource, self.namespace.clone());
                if let Some(selector) = &self.label_selector {
                    lw = lw.with_label_selector(selector.clone());
                }
                lw.decoding = self.decoding.clone();
                Ok(lw)
            })
            .await
    }
}

#[async_trait]
impl ListerWatcher for DiscoveredListerWatcher {
    async fn list(&self, options: &ListOptions) -> Result<ListPage, LwError> {
        self.inner().await?.list(options).await
    }

    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream, LwError> {
        self.inner().await?.watch(options).await
    }
}
