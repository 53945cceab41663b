//! The reflector (REF-*): keeps a store in step with the server by listing
//! (with client-go's resource-version and pagination rules), replacing the
//! store's contents, then watching from the list's version; relists after
//! failures with an exponential backoff and ticks the store's periodic resync.

use std::fmt;
use std::panic::Location;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use parking_lot::{Mutex, RwLock};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::backoff::{BackoffConfig, BackoffManager};
use super::lister_watcher::{
    ErrorKind, ListOptions, ListerWatcher, LwError, WatchEvent, WatchOptions, WatchStream,
};
use super::metrics::ReflectorMetrics;
use crate::clock::{SharedClock, SystemClock};
use crate::object::Object;

/// The pager's default page size (REF-15).
pub const DEFAULT_PAGE_SIZE: u64 = 500;

/// The lower bound of the randomized watch timeout (REF-25).
pub const DEFAULT_MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// A list phase slower than this is logged (REF-20).
const SLOW_LIST_THRESHOLD: Duration = Duration::from_secs(10);

/// A watch that closes sooner than this without an event is an error (REF-37).
const SHORT_WATCH: Duration = Duration::from_secs(1);

/// Errors a store reports to the reflector.
pub type StoreError = Box<dyn std::error::Error + Send + Sync>;

/// What the reflector writes to: in an informer, the DeltaFIFO.
pub trait Store: Send + Sync {
    /// A watch `ADDED` event.
    fn add(&self, object: Object) -> Result<(), StoreError>;
    /// A watch `MODIFIED` event.
    fn update(&self, object: Object) -> Result<(), StoreError>;
    /// A watch `DELETED` event with the object's last state.
    fn delete(&self, object: Object) -> Result<(), StoreError>;
    /// A complete list at `resource_version`.
    fn replace(&self, objects: Vec<Object>, resource_version: &str) -> Result<(), StoreError>;
    /// A periodic resync tick.
    fn resync(&self) -> Result<(), StoreError>;
    /// Every event advances the version, bookmarks included (REF-36). Stores
    /// that do not track it ignore it.
    fn update_resource_version(&self, _resource_version: &str) {}
}

/// Asked on each resync tick whether to resync now (REF-21).
pub type ShouldResyncFn = Arc<dyn Fn() -> bool + Send + Sync>;

/// Called with every error `list_and_watch` returns (REF-06).
pub type WatchErrorHandler = Arc<dyn Fn(&ReflectorError) + Send + Sync>;

/// The group/version/kind the reflector expects (REF-03).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedKind {
    /// `apiVersion`, e.g. `apps/v1`.
    pub api_version: String,
    /// `kind`, e.g. `Deployment`.
    pub kind: String,
}

/// How a reflector is set up.
#[derive(Clone)]
pub struct ReflectorConfig {
    /// Used only in logs (REF-02); defaults to the constructor's call site.
    pub name: Option<String>,
    /// Events for another kind are skipped (REF-34); `None` checks nothing.
    pub expected_kind: Option<ExpectedKind>,
    /// How often to call the store's `resync`; zero never does (REF-22).
    pub resync_period: Duration,
    /// Consulted on each resync tick; `None` always resyncs.
    pub should_resync: Option<ShouldResyncFn>,
    /// Explicit list page size; 0 leaves it to the rules of REF-15.
    pub watch_list_page_size: u64,
    /// Lower bound of the randomized watch timeout (REF-25).
    pub min_watch_timeout: Duration,
    /// Backoff of relists and of watch retries (REF-04, REF-05).
    pub backoff: BackoffConfig,
    /// Passed to every list and watch.
    pub label_selector: Option<String>,
    /// Passed to every list and watch.
    pub field_selector: Option<String>,
    /// The time source.
    pub clock: SharedClock,
    /// Seeds the jitter and watch-timeout randomness.
    pub seed: u64,
    /// Receives every error of the list phase (REF-06); `None` logs it.
    pub watch_error_handler: Option<WatchErrorHandler>,
    /// Told of lists, watches, events and failures; `None` tells no one.
    pub metrics: Option<Arc<dyn ReflectorMetrics>>,
    /// Changes each time the server answers again after failing: a
    /// reflector waiting out a backoff retries at once, its backoff reset,
    /// instead of staying blind for the rest of a wait that was about an
    /// outage now over. `None`: backoffs run their course (client-go).
    pub recoveries: Option<Recoveries>,
}

/// Counts the API server's recoveries (answering again after failing).
pub type Recoveries = tokio::sync::watch::Receiver<u64>;

impl Default for ReflectorConfig {
    fn default() -> Self {
        ReflectorConfig {
            name: None,
            expected_kind: None,
            resync_period: Duration::ZERO,
            should_resync: None,
            watch_list_page_size: 0,
            min_watch_timeout: DEFAULT_MIN_WATCH_TIMEOUT,
            backoff: BackoffConfig::default(),
            label_selector: None,
            field_selector: None,
            clock: SystemClock::shared(),
            seed: fastrand::u64(..),
            watch_error_handler: None,
            metrics: None,
            recoveries: None,
        }
    }
}

/// Why a `list_and_watch` round ended without reaching the watch.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReflectorError {
    /// The list failed (REF-14).
    #[error("failed to list {description}: {source}")]
    List {
        /// The expected type.
        description: String,
        /// The classified failure.
        source: LwError,
    },
    /// The store rejected the listed items (REF-13).
    #[error("unable to sync list result: {0}")]
    Sync(String),
    /// Opening the watch failed with an error that is not retried in place
    /// (REF-28).
    #[error("failed to watch {description}: {source}")]
    Watch {
        /// The expected type.
        description: String,
        /// The classified failure.
        source: LwError,
    },
}

impl ReflectorError {
    /// The failure, as reported to the metrics.
    fn failure(&self) -> LwError {
        match self {
            ReflectorError::List { source, .. } | ReflectorError::Watch { source, .. } => {
                source.clone()
            }
            ReflectorError::Sync(message) => LwError::other(message.clone()),
        }
    }

    /// The server's `Retry-After`, when it sent one with a 429.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ReflectorError::List { source, .. } | ReflectorError::Watch { source, .. } => {
                source.retry_after
            }
            ReflectorError::Sync(_) => None,
        }
    }
}

/// How one watch stream ended abnormally (REF-30, REF-32, REF-37).
#[derive(Debug)]
enum WatchEnd {
    StopRequested,
    Server(LwError),
    Resync(String),
    VeryShort,
}

impl fmt::Display for WatchEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchEnd::StopRequested => f.write_str("stop requested"),
            WatchEnd::Server(error) => write!(f, "{error}"),
            WatchEnd::Resync(message) => write!(f, "resync failed: {message}"),
            WatchEnd::VeryShort => f.write_str(
                "very short watch: unexpected watch close - watch lasted less than a second and no items received",
            ),
        }
    }
}

#[derive(Debug, Default)]
struct VersionState {
    last_sync_resource_version: String,
    /// REF-11: the last version failed with expired / too large.
    unavailable: bool,
}

/// Lists and watches through a [`ListerWatcher`] into a [`Store`].
pub struct Reflector {
    name: String,
    description: String,
    config: ReflectorConfig,
    lister_watcher: Arc<dyn ListerWatcher>,
    store: Arc<dyn Store>,
    relist_backoff: BackoffManager,
    watch_backoff: BackoffManager,
    /// REF-07: guarded by a read/write lock, not tied to the store.
    versions: RwLock<VersionState>,
    /// REF-17: sticky once a "0" list came back paginated.
    paginated_result: Mutex<bool>,
    rng: Mutex<fastrand::Rng>,
    /// The server's recoveries as they stood when the latest list or watch
    /// was sent: a recovery after that ends the backoff that follows its
    /// failure, even one signalled before the wait begins.
    noted_recoveries: Mutex<Option<Recoveries>>,
}

impl fmt::Debug for Reflector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflector")
            .field("name", &self.name)
            .field("type", &self.description)
            .field(
                "last_sync_resource_version",
                &self.last_sync_resource_version(),
            )
            .finish()
    }
}

impl Reflector {
    /// A reflector feeding `store` from `lister_watcher`. Its default name is
    /// the caller's `file:line` (REF-02).
    #[track_caller]
    pub fn new(
        lister_watcher: Arc<dyn ListerWatcher>,
        store: Arc<dyn Store>,
        config: ReflectorConfig,
    ) -> Arc<Self> {
        let caller = Location::caller();
        let name = config
            .name
            .clone()
            .unwrap_or_else(|| format!("{}:{}", caller.file(), caller.line()));
        let description = match &config.expected_kind {
            Some(kind) => format!("{}, Kind={}", kind.api_version, kind.kind),
            None => "<unspecified>".to_string(),
        };
        let relist_backoff = BackoffManager::new(config.backoff, config.clock.clone(), config.seed);
        let watch_backoff = BackoffManager::new(
            config.backoff,
            config.clock.clone(),
            config.seed.wrapping_add(1),
        );
        let rng = Mutex::new(fastrand::Rng::with_seed(config.seed.wrapping_add(2)));
        Arc::new(Reflector {
            name,
            description,
            config,
            lister_watcher,
            store,
            relist_backoff,
            watch_backoff,
            versions: RwLock::new(VersionState::default()),
            paginated_result: Mutex::new(false),
            rng,
            noted_recoveries: Mutex::new(None),
        })
    }

    /// The name used in logs.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The expected type for display (REF-03): never parse it.
    pub fn type_description(&self) -> &str {
        &self.description
    }

    /// The version of the last successful list or the last watch event.
    pub fn last_sync_resource_version(&self) -> String {
        self.versions.read().last_sync_resource_version.clone()
    }

    /// Tells the metrics hook, if any.
    fn report(&self, event: impl FnOnce(&dyn ReflectorMetrics)) {
        if let Some(metrics) = &self.config.metrics {
            event(metrics.as_ref());
        }
    }

    /// Lists and watches until `stop` fires, backing off between rounds in
    /// sliding mode (REF-08).
    pub async fn run(self: &Arc<Self>, stop: CancellationToken) {
        tracing::debug!(reflector = %self.name, r#type = %self.description, "starting reflector");
        while !stop.is_cancelled() {
            let mut retry_after = None;
            if let Err(error) = self.list_and_watch(&stop).await {
                match &self.config.watch_error_handler {
                    Some(handler) => handler(&error),
                    None => default_watch_error_handler(&self.name, &error),
                }
                retry_after = error.retry_after();
            }
            // A throttled server's Retry-After is honoured when it is longer.
            let delay = self
                .relist_backoff
                .next_delay()
                .max(retry_after.unwrap_or_default());
            if !self.wait(&stop, delay).await {
                break;
            }
        }
        tracing::debug!(reflector = %self.name, "stopped reflector");
    }

    /// One round: list, then watch until the watch fails. Returns an error
    /// only when the list or the opening of a watch failed (REF-09).
    pub async fn list_and_watch(
        self: &Arc<Self>,
        stop: &CancellationToken,
    ) -> Result<(), ReflectorError> {
        self.list(stop).await?;
        if stop.is_cancelled() {
            return Ok(());
        }

        // REF-21: resync ticks for as long as this round lasts.
        let (resync_error_tx, mut resync_errors) = mpsc::channel::<String>(1);
        let round = stop.child_token();
        let _end_round = round.clone().drop_guard();
        if !self.config.resync_period.is_zero() {
            tokio::spawn(resync_loop(
                self.config.clone(),
                Arc::clone(&self.store),
                round,
                resync_error_tx,
            ));
        }

        loop {
            if stop.is_cancelled() {
                return Ok(());
            }
            let options = WatchOptions {
                resource_version: self.last_sync_resource_version(),
                timeout: Some(self.watch_timeout()),
                allow_bookmarks: true,
                label_selector: self.config.label_selector.clone(),
                field_selector: self.config.field_selector.clone(),
            };
            // REF-27: measured before the request is sent.
            let start = self.config.clock.now();
            self.note_recoveries();
            let opened = tokio::select! {
                _ = stop.cancelled() => return Ok(()),
                opened = self.lister_watcher.watch(&options) => opened,
            };
            let stream = match opened {
                Ok(stream) => {
                    self.report(|m| m.watch_opened());
                    stream
                }
                Err(error)
                    if matches!(
                        error.kind,
                        ErrorKind::ConnectionRefused | ErrorKind::TooManyRequests
                    ) =>
                {
                    self.report(|m| m.failed(&error));
                    tracing::debug!(reflector = %self.name, %error, "watch refused; retrying without a relist");
                    if !self.wait_watch_backoff(stop, error.retry_after).await {
                        return Ok(());
                    }
                    continue;
                }
                Err(source) => {
                    self.report(|m| m.failed(&source));
                    return Err(ReflectorError::Watch {
                        description: self.description.clone(),
                        source,
                    });
                }
            };
            match self
                .watch_handler(start, stream, &mut resync_errors, stop)
                .await
            {
                // REF-29: the server closed the watch; watch again, no relist.
                Ok(()) => continue,
                Err(WatchEnd::StopRequested) => return Ok(()),
                Err(WatchEnd::Server(error)) if error.kind == ErrorKind::Expired => {
                    // REF-30: the unavailable flag stays clear, so the relist
                    // asks for the last observed version first.
                    tracing::debug!(reflector = %self.name, %error, "watch closed");
                    return Ok(());
                }
                Err(WatchEnd::Server(error)) if error.kind == ErrorKind::TooManyRequests => {
                    self.report(|m| m.failed(&error));
                    tracing::debug!(reflector = %self.name, %error, "watch throttled; retrying without a relist");
                    if !self.wait_watch_backoff(stop, error.retry_after).await {
                        return Ok(());
                    }
                    continue;
                }
                Err(end) => {
                    let failure = match &end {
                        WatchEnd::Server(error) => error.clone(),
                        other => LwError::other(other.to_string()),
                    };
                    self.report(|m| m.failed(&failure));
                    tracing::warn!(reflector = %self.name, r#type = %self.description, "watch ended with: {end}");
                    return Ok(());
                }
            }
        }
    }

    /// Waits on the watch backoff, or for the server's `Retry-After` when
    /// that is longer; false when stopped meanwhile.
    async fn wait_watch_backoff(
        &self,
        stop: &CancellationToken,
        retry_after: Option<Duration>,
    ) -> bool {
        let delay = self
            .watch_backoff
            .next_delay()
            .max(retry_after.unwrap_or_default());
        self.wait(stop, delay).await
    }

    /// Waits `delay`, or less when the server recovers meanwhile (then both
    /// backoffs start again from their first wait); false when stopped.
    async fn wait(&self, stop: &CancellationToken, delay: Duration) -> bool {
        let noted = self.noted_recoveries.lock().clone();
        let recovered = async {
            match noted {
                Some(mut recoveries) => {
                    if recoveries.changed().await.is_err() {
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = stop.cancelled() => false,
            _ = self.config.clock.sleep(delay) => true,
            _ = recovered => {
                tracing::info!(reflector = %self.name, "the API server answers again: retrying now");
                self.relist_backoff.reset();
                self.watch_backoff.reset();
                true
            }
        }
    }

    /// Notes the server's recoveries so far, before a request is sent: only
    /// a later one ends the wait after its failure.
    fn note_recoveries(&self) {
        if let Some(recoveries) = &self.config.recoveries {
            let mut noted = recoveries.clone();
            noted.mark_unchanged();
            *self.noted_recoveries.lock() = Some(noted);
        }
    }

    /// floor(min × (1 + U[0, 1))) seconds (REF-25).
    fn watch_timeout(&self) -> Duration {
        let factor = 1.0 + self.rng.lock().f64();
        Duration::from_secs((self.config.min_watch_timeout.as_secs_f64() * factor).floor() as u64)
    }

    /// REF-10.
    fn relist_resource_version(&self) -> String {
        let versions = self.versions.read();
        if versions.unavailable {
            String::new()
        } else if versions.last_sync_resource_version.is_empty() {
            "0".to_string()
        } else {
            versions.last_sync_resource_version.clone()
        }
    }

    /// The list phase (REF-10..REF-20).
    async fn list(self: &Arc<Self>, stop: &CancellationToken) -> Result<(), ReflectorError> {
        let relist = !self.last_sync_resource_version().is_empty();
        self.note_recoveries();
        self.report(|m| m.list_started(relist));
        let result = self.list_into_store(stop).await;
        match &result {
            Ok(Some(objects)) => self.report(|m| m.listed(*objects)),
            Ok(None) => {}
            Err(error) => self.report(|m| m.failed(&error.failure())),
        }
        result.map(|_| ())
    }

    /// Lists and replaces the store's contents; the number of objects
    /// listed, or `None` when stopped first.
    async fn list_into_store(
        self: &Arc<Self>,
        stop: &CancellationToken,
    ) -> Result<Option<usize>, ReflectorError> {
        let started = self.config.clock.now();
        let requested_version = self.relist_resource_version();
        let page_size = self.page_size(&requested_version);

        // REF-19: the list runs in its own task; stop abandons it, a panic in
        // it is re-raised here.
        let this = Arc::clone(self);
        let requested = requested_version.clone();
        let mut task = tokio::spawn(async move {
            let options = this.list_options(requested);
            match this.paged_list(options, page_size).await {
                Err(error) if error.is_resource_version_unavailable() => {
                    // REF-12: retry at once, once, from a fresh version.
                    this.versions.write().unavailable = true;
                    let retry = this.list_options(this.relist_resource_version());
                    this.paged_list(retry, page_size).await
                }
                result => result,
            }
        });
        let joined = tokio::select! {
            _ = stop.cancelled() => {
                task.abort();
                return Ok(None);
            }
            joined = &mut task => joined,
        };
        let listed = match joined {
            Ok(result) => result,
            Err(join_error) if join_error.is_panic() => {
                std::panic::resume_unwind(join_error.into_panic())
            }
            Err(join_error) => {
                return Err(ReflectorError::List {
                    description: self.description.clone(),
                    source: LwError::other(join_error.to_string()),
                });
            }
        };
        let listed = listed.map_err(|source| ReflectorError::List {
            description: self.description.clone(),
            source,
        })?;

        // REF-17: judged on the version originally requested.
        if requested_version == "0" && listed.paginated {
            *self.paginated_result.lock() = true;
        }
        self.versions.write().unavailable = false;
        let count = listed.items.len();
        self.store
            .replace(listed.items, &listed.resource_version)
            .map_err(|error| ReflectorError::Sync(error.to_string()))?;
        self.versions.write().last_sync_resource_version = listed.resource_version.clone();

        let elapsed = self.config.clock.now().saturating_duration_since(started);
        if elapsed > SLOW_LIST_THRESHOLD {
            tracing::info!(reflector = %self.name, r#type = %self.description, objects = count, ?elapsed, "slow list");
        }
        tracing::debug!(
            reflector = %self.name,
            objects = count,
            resource_version = %listed.resource_version,
            paginated = listed.paginated,
            "listed"
        );
        Ok(Some(count))
    }

    fn list_options(&self, resource_version: String) -> ListOptions {
        ListOptions {
            resource_version,
            label_selector: self.config.label_selector.clone(),
            field_selector: self.config.field_selector.clone(),
            ..ListOptions::default()
        }
    }

    /// REF-15, REF-16.
    fn page_size(&self, resource_version: &str) -> u64 {
        if self.config.watch_list_page_size != 0 {
            self.config.watch_list_page_size
        } else if *self.paginated_result.lock() {
            DEFAULT_PAGE_SIZE
        } else if !resource_version.is_empty() && resource_version != "0" {
            0
        } else {
            DEFAULT_PAGE_SIZE
        }
    }

    /// client-go's pager (REF-18).
    async fn paged_list(
        &self,
        mut options: ListOptions,
        page_size: u64,
    ) -> Result<Listed, LwError> {
        if options.limit == 0 {
            options.limit = page_size;
        }
        let requested_version = options.resource_version.clone();
        let requested_match = options.resource_version_match.clone();
        let mut collected: Option<Listed> = None;
        loop {
            let page = match self.lister_watcher.list(&options).await {
                Ok(page) => {
                    self.report(|m| m.list_page(page.items.len()));
                    page
                }
                Err(error)
                    if error.kind == ErrorKind::Expired && !options.continue_token.is_empty() =>
                {
                    // A continuation expired: one full list at the requested
                    // version instead.
                    options.limit = 0;
                    options.continue_token.clear();
                    options.resource_version = requested_version;
                    options.resource_version_match = requested_match;
                    let page = self.lister_watcher.list(&options).await?;
                    self.report(|m| m.list_page(page.items.len()));
                    return Ok(Listed {
                        resource_version: page.resource_version,
                        items: page.items,
                        paginated: collected.is_some(),
                    });
                }
                Err(error) => return Err(error),
            };
            let listed = match collected.as_mut() {
                None if page.continue_token.is_empty() => {
                    return Ok(Listed {
                        resource_version: page.resource_version,
                        items: page.items,
                        paginated: false,
                    });
                }
                None => collected.insert(Listed {
                    resource_version: page.resource_version,
                    items: page.items,
                    paginated: true,
                }),
                Some(listed) => {
                    listed.items.extend(page.items);
                    listed
                }
            };
            if page.continue_token.is_empty() {
                return Ok(std::mem::take(listed));
            }
            options.continue_token = page.continue_token;
            options.resource_version.clear();
            options.resource_version_match = None;
        }
    }

    /// Feeds one watch stream into the store (REF-31..REF-37). Dropping the
    /// stream on return stops the watch.
    async fn watch_handler(
        &self,
        start: Instant,
        mut stream: WatchStream,
        resync_errors: &mut mpsc::Receiver<String>,
        stop: &CancellationToken,
    ) -> Result<(), WatchEnd> {
        let mut events = 0u64;
        loop {
            let event = tokio::select! {
                biased;
                _ = stop.cancelled() => return Err(WatchEnd::StopRequested),
                Some(message) = resync_errors.recv() => return Err(WatchEnd::Resync(message)),
                event = stream.next() => event,
            };
            let Some(event) = event else { break };
            let resource_version = match event {
                WatchEvent::Error(error) => return Err(WatchEnd::Server(error)),
                WatchEvent::Bookmark { resource_version } => resource_version,
                WatchEvent::Added(object)
                | WatchEvent::Modified(object)
                | WatchEvent::Deleted(object)
                    if !self.is_expected(&object) =>
                {
                    tracing::error!(
                        reflector = %self.name,
                        expected = %self.description,
                        got = %format_args!("{}, Kind={}", object.api_version(), object.kind()),
                        "watch event for an unexpected kind; skipped"
                    );
                    continue;
                }
                WatchEvent::Added(object) => self.apply("add", &object, |store, o| store.add(o)),
                WatchEvent::Modified(object) => {
                    self.apply("update", &object, |store, o| store.update(o))
                }
                WatchEvent::Deleted(object) => {
                    self.apply("delete", &object, |store, o| store.delete(o))
                }
            };
            self.versions.write().last_sync_resource_version = resource_version.clone();
            self.store.update_resource_version(&resource_version);
            events += 1;
        }
        let lasted = self.config.clock.now().saturating_duration_since(start);
        if lasted < SHORT_WATCH && events == 0 {
            return Err(WatchEnd::VeryShort);
        }
        tracing::debug!(reflector = %self.name, events, "watch closed by the server");
        Ok(())
    }

    /// Applies one event to the store; a store error is only logged (REF-35).
    /// Returns the event's resource version.
    fn apply(
        &self,
        action: &str,
        object: &Object,
        call: impl FnOnce(&dyn Store, Object) -> Result<(), StoreError>,
    ) -> String {
        let resource_version = object.resource_version().to_string();
        self.report(|m| m.event());
        if let Err(error) = call(self.store.as_ref(), object.clone()) {
            tracing::error!(reflector = %self.name, key = object.key(), %error, "unable to {action} watch event object to store");
        }
        resource_version
    }

    fn is_expected(&self, object: &Object) -> bool {
        match &self.config.expected_kind {
            None => true,
            Some(expected) => {
                object.kind() == expected.kind && object.api_version() == expected.api_version
            }
        }
    }
}

/// The result of the pager.
#[derive(Debug, Default)]
struct Listed {
    resource_version: String,
    items: Vec<Object>,
    paginated: bool,
}

/// Ticks `resync` on the store every period until the round ends (REF-21).
async fn resync_loop(
    config: ReflectorConfig,
    store: Arc<dyn Store>,
    round: CancellationToken,
    errors: mpsc::Sender<String>,
) {
    loop {
        tokio::select! {
            _ = round.cancelled() => return,
            _ = config.clock.sleep(config.resync_period) => {}
        }
        let due = config.should_resync.as_ref().is_none_or(|should| should());
        if due && let Err(error) = store.resync() {
            // The watch handler picks this up and ends the round (REF-23).
            let _ = errors.try_send(error.to_string());
            return;
        }
    }
}

/// REF-06: expired at debug level, everything else as an error.
fn default_watch_error_handler(name: &str, error: &ReflectorError) {
    match error {
        ReflectorError::List { source, .. } | ReflectorError::Watch { source, .. }
            if source.kind == ErrorKind::Expired =>
        {
            tracing::debug!(reflector = %name, %error, "list/watch expired");
        }
        _ => tracing::error!(reflector = %name, %error, "list/watch failed"),
    }
}
