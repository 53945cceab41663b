//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's
//! semantics: a candidate acquires the lease when it is free, released or
//! expired (judged by when *this* candidate last saw it change, never by the
//! timestamps in it), the leader renews it every retry period and gives up
//! leadership when it cannot renew within the renew deadline, and a leader
//! that stops releases it so another takes over at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use parking_lot::Mutex;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::clock::SharedClock;
use crate::kube::WriteOptions;
use crate::kube::{ApiClient, ApiResource, Gvk};

/// client-go's `JitterFactor` of the acquire loop.
const JITTER_FACTOR: f64 = 1.2;

/// The lease and its timings.
#[derive(Debug, Clone)]
pub struct LeaderElectionConfig {
    /// The lease's namespace.
    pub namespace: String,
    /// The lease's name.
    pub name: String,
    /// This candidate's identity, unique among candidates.
    pub identity: String,
    /// How long followers wait after the last renewal they saw before
    /// taking over (default 15 s).
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a renewal before it gives up
    /// leadership (default 10 s).
    pub renew_deadline: Duration,
    /// How often candidates try to acquire and the leader renews
    /// (default 2 s).
    pub retry_period: Duration,
}

impl LeaderElectionConfig {
    /// client-go's defaults for the lease `namespace/name`.
    pub fn new(namespace: &str, name: &str, identity: &str) -> LeaderElectionConfig {
        LeaderElectionConfig {
            namespace: namespace.to_string(),
            name: name.to_string(),
            identity: identity.to_string(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// client-go's checks: lease duration > renew deadline > 1.2 × retry
    /// period > 0, and a name and an identity.
    pub fn validate(&self) -> Result<(), String> {
        if self.name.is_empty() || self.namespace.is_empty() {
            return Err("leader election needs a lease name and namespace".into());
        }
        if self.identity.is_empty() {
            return Err("leader election needs an identity".into());
        }
        if self.retry_period.is_zero() {
            return Err("the leader election retry period must be above zero".into());
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(format!(
                "the lease duration ({:?}) must be longer than the renew deadline ({:?})",
                self.lease_duration, self.renew_deadline
            ));
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return Err(format!(
                "the renew deadline ({:?}) must be longer than {JITTER_FACTOR} × the retry period ({:?})",
                self.renew_deadline, self.retry_period
            ));
        }
        Ok(())
    }
}

/// The leader lost its lease.
#[derive(Debug, thiserror::Error)]
#[error("leader election lost: lease {lease} was not renewed within {deadline:?}")]
pub struct LeadershipLost {
    /// `namespace/name`.
    pub lease: String,
    /// The renew deadline.
    pub deadline: Duration,
}

/// One candidate.
pub struct LeaderElector {
    config: LeaderElectionConfig,
    client: ApiClient,
    clock: SharedClock,
    status: Option<Gauge>,
    /// The lease as last seen and when this candidate saw it change.
    observed: Mutex<Option<(LeaseSpec, Instant)>>,
}

/// What [`LeaderElector::read`] found.
enum Read {
    Found(Box<Lease>),
    Missing,
    Failed,
}

/// How [`LeaderElector::write`] sends a lease.
#[derive(Debug, Clone, Copy)]
enum Write {
    Create,
    Replace,
}

fn lease_resource() -> ApiResource {
    ApiResource::new(
        Gvk::new("coordination.k8s.io", "v1", "Lease"),
        "leases",
        true,
    )
}

impl LeaderElector {
    /// A candidate for `config`'s lease; `status` (when given) is 1 while it
    /// leads.
    pub fn new(
        config: LeaderElectionConfig,
        client: ApiClient,
        clock: SharedClock,
        status: Option<Gauge>,
    ) -> Arc<LeaderElector> {
        Arc::new(LeaderElector {
            config,
            client,
            clock,
            status,
            observed: Mutex::new(None),
        })
    }

    fn lease_name(&self) -> String {
        format!("{}/{}", self.config.namespace, self.config.name)
    }

    /// Campaigns until it leads, then renews until `release` fires (and
    /// then releases the lease) or a renewal misses the deadline. `leading`
    /// follows: `true` from acquisition until release or loss.
    pub async fn run(
        &self,
        release: &CancellationToken,
        leading: &watch::Sender<bool>,
    ) -> Result<(), LeadershipLost> {
        tracing::info!(lease = %self.lease_name(), identity = %self.config.identity, "attempting to acquire the leader lease");
        loop {
            if release.is_cancelled() {
                return Ok(());
            }
            if self.try_acquire_or_renew().await {
                break;
            }
            let jitter = 1.0 + fastrand::f64() * JITTER_FACTOR;
            if !self
                .sleep(self.config.retry_period.mul_f64(jitter), release)
                .await
            {
                return Ok(());
            }
        }
        tracing::info!(lease = %self.lease_name(), identity = %self.config.identity, "acquired the leader lease");
        self.set_leading(leading, true);
        loop {
            if !self.sleep(self.config.retry_period, release).await {
                break;
            }
            if !self.renew(release).await {
                if release.is_cancelled() {
                    break;
                }
                self.set_leading(leading, false);
                return Err(LeadershipLost {
                    lease: self.lease_name(),
                    deadline: self.config.renew_deadline,
                });
            }
        }
        self.release().await;
        self.set_leading(leading, false);
        Ok(())
    }

    /// Sets the status gauge, then tells `leading`: whoever wakes on the
    /// change already reads the gauge that goes with it.
    fn set_leading(&self, leading: &watch::Sender<bool>, leads: bool) {
        if let Some(status) = &self.status {
            status.set(i64::from(leads));
        }
        leading.send_replace(leads);
    }

    /// Sleeps `duration` on the clock; false when `release` fires first.
    async fn sleep(&self, duration: Duration, release: &CancellationToken) -> bool {
        tokio::select! {
            _ = release.cancelled() => false,
            _ = self.clock.sleep(duration) => true,
        }
    }

    /// Tries to renew every retry period until it succeeds (true) or the
    /// renew deadline passes or `release` fires (false).
    async fn renew(&self, release: &CancellationToken) -> bool {
        let deadline = self.clock.now() + self.config.renew_deadline;
        loop {
            let remaining = deadline.saturating_duration_since(self.clock.now());
            if remaining.is_zero() {
                return false;
            }
            let renewed = tokio::select! {
                _ = release.cancelled() => return false,
                _ = self.clock.sleep(remaining) => return false,
                renewed = self.try_acquire_or_renew() => renewed,
            };
            if renewed {
                return true;
            }
            let remaining = deadline.saturating_duration_since(self.clock.now());
            if !self
                .sleep(self.config.retry_period.min(remaining), release)
                .await
            {
                return false;
            }
        }
    }

    /// True when this candidate holds the lease as last seen.
    pub fn is_leader(&self) -> bool {
        self.observed
            .lock()
            .as_ref()
            .and_then(|(spec, _)| spec.holder_identity.as_deref())
            == Some(self.config.identity.as_str())
    }

    fn observe(&self, spec: LeaseSpec, at: Instant) {
        *self.observed.lock() = Some((spec, at));
    }

    /// client-go's `tryAcquireOrRenew`: creates the lease when missing,
    /// else takes it over (when free, released or expired) or renews it
    /// (when held), with an optimistic-concurrency update.
    async fn try_acquire_or_renew(&self) -> bool {
        let now = Timestamp::now();
        let mut lease = match self.read().await {
            Read::Found(lease) => *lease,
            Read::Missing => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.config.name.clone()),
                        namespace: Some(self.config.namespace.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(self.spec(now, MicroTime(now), 0)),
                };
                return self.write(lease, Write::Create).await;
            }
            Read::Failed => return false,
        };
        let old = lease.spec.clone().unwrap_or_default();
        let seen = self.clock.now();
        let observed_at = {
            let mut observed = self.observed.lock();
            match &*observed {
                Some((spec, at)) if *spec == old => *at,
                _ => {
                    *observed = Some((old.clone(), seen));
                    seen
                }
            }
        };
        let holder = old.holder_identity.as_deref().unwrap_or("");
        let held_by_me = holder == self.config.identity;
        let duration = Duration::from_secs(old.lease_duration_seconds.unwrap_or(0).max(0) as u64);
        if !holder.is_empty() && !held_by_me && observed_at + duration > seen {
            return false;
        }
        // A renewal keeps the acquire time and the count; a takeover counts
        // one more transition.
        let transitions = old.lease_transitions.unwrap_or(0);
        lease.spec = Some(match (&old.acquire_time, held_by_me) {
            (Some(acquired), true) => self.spec(now, acquired.clone(), transitions),
            _ => self.spec(now, MicroTime(now), transitions + 1),
        });
        self.write(lease, Write::Replace).await
    }

    /// Creates or replaces (with optimistic concurrency) the lease as this
    /// candidate's record; true, and remembered as observed now, when the
    /// server took it.
    async fn write(&self, lease: Lease, how: Write) -> bool {
        let json = serde_json::to_string(&lease).expect("a Lease serializes");
        let (resource, namespace, options) = (
            lease_resource(),
            Some(self.config.namespace.as_str()),
            WriteOptions::default(),
        );
        let written = match how {
            Write::Create => {
                self.client
                    .create(&resource, namespace, &json, &options)
                    .await
            }
            Write::Replace => {
                self.client
                    .replace(&resource, namespace, &self.config.name, &json, &options)
                    .await
            }
        };
        match written {
            Ok(_) => {
                self.observe(lease.spec.unwrap_or_default(), self.clock.now());
                true
            }
            // Another candidate wrote first (409, stale or already exists):
            // the normal race.
            Err(error) if error.is_conflict() => {
                tracing::debug!(lease = %self.lease_name(), %error, "the lease changed meanwhile");
                false
            }
            Err(error) => {
                tracing::warn!(lease = %self.lease_name(), %error, "writing the lease failed");
                false
            }
        }
    }

    /// The record this candidate writes at `now`.
    fn spec(&self, now: Timestamp, acquire_time: MicroTime, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.config.identity.clone()),
            lease_duration_seconds: Some(self.config.lease_duration.as_secs() as i32),
            acquire_time: Some(acquire_time),
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }

    /// Gives the lease up so another candidate takes over at once: an empty
    /// holder and a one-second duration, as client-go's release writes.
    async fn release(&self) {
        if !self.is_leader() {
            return;
        }
        let Read::Found(lease) = self.read().await else {
            return;
        };
        let mut lease = *lease;
        let old = lease.spec.clone().unwrap_or_default();
        if old.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return;
        }
        let now = Timestamp::now();
        lease.spec = Some(LeaseSpec {
            holder_identity: Some(String::new()),
            lease_duration_seconds: Some(1),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            lease_transitions: old.lease_transitions,
            ..LeaseSpec::default()
        });
        if self.write(lease, Write::Replace).await {
            tracing::info!(lease = %self.lease_name(), "released the leader lease");
        } else {
            tracing::warn!(lease = %self.lease_name(), "releasing the lease failed");
        }
    }

    /// Reads the lease; a failure is logged.
    async fn read(&self) -> Read {
        let namespace = Some(self.config.namespace.as_str());
        match self
            .client
            .get(&lease_resource(), namespace, &self.config.name)
            .await
        {
            Ok(object) => match serde_json::from_str(&object.json()) {
                Ok(lease) => Read::Found(Box::new(lease)),
                Err(error) => {
                    tracing::warn!(lease = %self.lease_name(), %error, "the lease is malformed");
                    Read::Failed
                }
            },
            Err(error) if error.is_not_found() => Read::Missing,
            Err(error) => {
                tracing::warn!(lease = %self.lease_name(), %error, "reading the lease failed");
                Read::Failed
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SystemClock;
    use crate::kube::ClientRateLimiter;
    use crate::kube::connect_with_kubeconfig_text;
    use recon_devserver::{DevServer, DevServerConfig, DevServerHandle};

    const RETRY: Duration = Duration::from_millis(200);

    async fn candidate(server: &DevServerHandle, identity: &str) -> (Arc<LeaderElector>, Gauge) {
        let client = connect_with_kubeconfig_text(
            server.kubeconfig(),
            "dev server",
            ClientRateLimiter::unlimited(SystemClock::shared()),
        )
        .await
        .unwrap();
        let config = LeaderElectionConfig {
            lease_duration: Duration::from_secs(2),
            renew_deadline: Duration::from_secs(1),
            retry_period: RETRY,
            ..LeaderElectionConfig::new("default", "test-lease", identity)
        };
        config.validate().unwrap();
        let status = Gauge::default();
        let elector =
            LeaderElector::new(config, client, SystemClock::shared(), Some(status.clone()));
        (elector, status)
    }

    /// Runs `elector` in a task: its leadership, what stops it, its end.
    fn campaign(
        elector: &Arc<LeaderElector>,
    ) -> (
        watch::Receiver<bool>,
        CancellationToken,
        tokio::task::JoinHandle<Result<(), LeadershipLost>>,
    ) {
        let (tx, rx) = watch::channel(false);
        let release = CancellationToken::new();
        let (elector, stop) = (Arc::clone(elector), release.clone());
        let task = tokio::spawn(async move { elector.run(&stop, &tx).await });
        (rx, release, task)
    }

    async fn leads(leading: &mut watch::Receiver<bool>, within: Duration) -> bool {
        tokio::time::timeout(within, leading.wait_for(|leads| *leads))
            .await
            .is_ok()
    }

    fn lease(server: &DevServerHandle) -> serde_json::Value {
        let store = server.store();
        let leases = store
            .resource_type("coordination.k8s.io", "v1", "leases")
            .unwrap();
        store.get(&leases, Some("default"), "test-lease").unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_candidate_leads_and_its_release_hands_over_at_once() {
        let server = DevServer::start(DevServerConfig::default()).await.unwrap();
        let (a, a_status) = candidate(&server, "a").await;
        let (b, b_status) = candidate(&server, "b").await;
        let (mut a_leads, a_release, a_task) = campaign(&a);
        assert!(leads(&mut a_leads, Duration::from_secs(10)).await);
        assert_eq!(a_status.get(), 1);
        let created = lease(&server);
        assert_eq!(created["spec"]["holderIdentity"], "a");
        assert_eq!(created["spec"]["leaseDurationSeconds"], 2);
        assert_eq!(created["spec"]["leaseTransitions"], 0);

        let (mut b_leads, b_release, b_task) = campaign(&b);
        // Several of b's retries pass while a renews: b never leads.
        assert!(!leads(&mut b_leads, RETRY * 6).await);
        assert_eq!(b_status.get(), 0);
        let renewed = lease(&server);
        assert_eq!(renewed["spec"]["holderIdentity"], "a");
        assert_eq!(
            renewed["spec"]["acquireTime"],
            created["spec"]["acquireTime"]
        );
        assert_ne!(renewed["spec"]["renewTime"], created["spec"]["renewTime"]);

        // a releases: an empty holder, and b takes over at its next retry,
        // long before the two-second lease would have expired.
        let released = Instant::now();
        a_release.cancel();
        a_task.await.unwrap().unwrap();
        assert!(!*a_leads.borrow());
        assert_eq!(a_status.get(), 0);
        assert!(leads(&mut b_leads, Duration::from_secs(10)).await);
        assert!(
            released.elapsed() < Duration::from_secs(2),
            "{:?}",
            released.elapsed()
        );
        let taken = lease(&server);
        assert_eq!(taken["spec"]["holderIdentity"], "b");
        assert_eq!(taken["spec"]["leaseTransitions"], 1);
        b_release.cancel();
        b_task.await.unwrap().unwrap();
        assert_eq!(lease(&server)["spec"]["holderIdentity"], "");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_leader_that_cannot_renew_gives_up_at_the_renew_deadline() {
        let server = DevServer::start(DevServerConfig::default()).await.unwrap();
        let (a, status) = candidate(&server, "a").await;
        let (mut leading, _release, task) = campaign(&a);
        assert!(leads(&mut leading, Duration::from_secs(10)).await);
        let failing = Instant::now();
        server.fail_next(u64::MAX, 500);
        let lost = tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("the leader gave up")
            .unwrap()
            .unwrap_err();
        let took = failing.elapsed();
        // The first failed renewal comes a retry period after the last good
        // one; the deadline runs from there.
        assert!(took >= Duration::from_secs(1), "gave up after {took:?}");
        assert!(took < Duration::from_secs(3), "gave up after {took:?}");
        assert!(lost.to_string().contains("default/test-lease"), "{lost}");
        assert!(!*leading.borrow());
        assert_eq!(status.get(), 0);
    }

    #[test]
    fn timings_follow_client_go_checks() {
        let config = LeaderElectionConfig::new("ns", "lease", "me");
        assert_eq!(config.validate(), Ok(()), "the defaults are valid");
        let with = |lease: u64, renew: u64, retry: u64| LeaderElectionConfig {
            lease_duration: Duration::from_millis(lease),
            renew_deadline: Duration::from_millis(renew),
            retry_period: Duration::from_millis(retry),
            ..config.clone()
        };
        assert!(
            with(10_000, 10_000, 2_000)
                .validate()
                .unwrap_err()
                .contains("longer than the renew deadline")
        );
        assert!(
            with(15_000, 2_400, 2_000)
                .validate()
                .unwrap_err()
                .contains("1.2 × the retry period")
        );
        assert_eq!(with(15_000, 2_401, 2_000).validate(), Ok(()));
        assert!(with(15_000, 10_000, 0).validate().is_err());
        let anonymous = LeaderElectionConfig::new("ns", "lease", "");
        assert!(anonymous.validate().unwrap_err().contains("identity"));
    }
}
