//! Which writes of one reconcile failed because the guest's view was
//! stale: optimistic concurrency doing its job, not an error. They are a
//! conflict (the object changed since the guest read it), already-exists
//! on a create of an object the guest's cache does not hold yet, and
//! not-found on a write to an object deleted meanwhile (a finalizer patch
//! of an object already gone). A reconcile that returns such an outcome
//! of its own write is requeued with backoff, as client-go requeues a
//! conflict, and counted as a requeue rather than an error; the same
//! outcome returned without such a write stays an error.

use std::sync::atomic::{AtomicU8, Ordering};

use recon_api_semantics::Gvk;

use super::services::{GuestError, Write};

const CONFLICT: u8 = 1;
const NOT_FOUND: u8 = 2;
const ALREADY_EXISTS: u8 = 4;

/// The outcomes of optimistic concurrency that `error` may be.
fn outcome(error: &GuestError) -> Option<u8> {
    match error {
        GuestError::Conflict(_) => Some(CONFLICT),
        GuestError::NotFound => Some(NOT_FOUND),
        GuestError::AlreadyExists(_) => Some(ALREADY_EXISTS),
        _ => None,
    }
}

/// What judging a write's failure needs to know of the write.
pub(crate) enum WriteShape {
    /// A create: its kind, namespace and name (`None` when the body has
    /// no name, e.g. `generateName`).
    Create {
        kind: Gvk,
        namespace: Option<String>,
        name: Option<String>,
    },
    /// A write to an object that exists (replace, patch, delete).
    Existing,
}

#[derive(serde::Deserialize)]
struct Named {
    #[serde(default)]
    metadata: NamedMeta,
}

#[derive(serde::Deserialize, Default)]
struct NamedMeta {
    #[serde(default)]
    name: Option<String>,
}

impl WriteShape {
    /// The shape of `write`.
    pub(crate) fn of(write: &Write) -> WriteShape {
        match write {
            Write::Create { target, json } => WriteShape::Create {
                kind: target.kind.clone(),
                namespace: target.namespace.clone(),
                name: serde_json::from_str::<Named>(json)
                    .ok()
                    .and_then(|named| named.metadata.name),
            },
            _ => WriteShape::Existing,
        }
    }
}

/// The stale-view outcomes the writes of the current reconcile met.
#[derive(Debug, Default)]
pub(crate) struct StaleWrites(AtomicU8);

impl StaleWrites {
    /// Forgets the outcomes of the last reconcile.
    pub(crate) fn clear(&self) {
        self.0.store(0, Ordering::Relaxed);
    }

    /// Records `error`, how a write shaped `shape` failed, when it says the
    /// guest's view was stale; `cached(kind, namespace, name)` tells
    /// whether the guest's cache holds an object a create found already
    /// there (then the guest could have known, and it is an error).
    pub(crate) fn record(
        &self,
        shape: &WriteShape,
        error: &GuestError,
        cached: impl FnOnce(&Gvk, Option<&str>, &str) -> bool,
    ) {
        let stale = match (error, shape) {
            (GuestError::Conflict(_), _) => true,
            (GuestError::NotFound, WriteShape::Existing) => true,
            (
                GuestError::AlreadyExists(_),
                WriteShape::Create {
                    kind,
                    namespace,
                    name: Some(name),
                },
            ) => !cached(kind, namespace.as_deref(), name),
            _ => false,
        };
        if let Some(bit) = outcome(error).filter(|_| stale) {
            self.0.fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// Whether `error`, which a reconcile returned, is an outcome its own
    /// writes met with a stale view.
    pub(crate) fn explains(&self, error: &GuestError) -> bool {
        outcome(error).is_some_and(|bit| self.0.load(Ordering::Relaxed) & bit != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::services::Target;

    fn configmaps() -> Target {
        Target {
            kind: Gvk::new("", "v1", "ConfigMap"),
            namespace: Some("default".into()),
        }
    }

    fn create(json: &str) -> WriteShape {
        WriteShape::of(&Write::Create {
            target: configmaps(),
            json: json.into(),
        })
    }

    #[test]
    fn only_outcomes_of_a_stale_view_are_recorded_and_explained() {
        let stale = StaleWrites::default();
        let existing = WriteShape::Existing;
        let named = create(r#"{"metadata":{"name":"a"},"data":{}}"#);
        let unnamed = create(r#"{"metadata":{"generateName":"a-"}}"#);
        let uncached = |_: &Gvk, _: Option<&str>, _: &str| false;
        let conflict = GuestError::Conflict("the object has been modified".into());
        let exists = GuestError::AlreadyExists("configmaps \"a\" already exists".into());

        assert!(!stale.explains(&conflict), "nothing recorded yet");
        // Not found on a create (its namespace is missing) is an error.
        stale.record(&named, &GuestError::NotFound, uncached);
        assert!(!stale.explains(&GuestError::NotFound));
        // Already-exists without a name to look up is an error too.
        stale.record(&unnamed, &exists, uncached);
        assert!(!stale.explains(&exists));
        // Errors that are not optimistic concurrency are never stale.
        let forbidden = GuestError::Forbidden("no".into());
        stale.record(&existing, &forbidden, uncached);
        assert!(!stale.explains(&forbidden));

        stale.record(&existing, &conflict, uncached);
        assert!(stale.explains(&GuestError::Conflict("any message".into())));
        assert!(!stale.explains(&GuestError::NotFound));
        stale.record(&existing, &GuestError::NotFound, uncached);
        assert!(stale.explains(&GuestError::NotFound));
        // A create of what the guest's cache holds is the guest's error.
        stale.record(&named, &exists, |kind, namespace, name| {
            assert_eq!(
                (kind.kind.as_str(), namespace, name),
                ("ConfigMap", Some("default"), "a")
            );
            true
        });
        assert!(!stale.explains(&exists));
        // Its cache does not hold it yet: the create raced another.
        stale.record(&named, &exists, uncached);
        assert!(stale.explains(&exists));

        stale.clear();
        assert!(!stale.explains(&conflict));
        assert!(!stale.explains(&GuestError::NotFound));
        assert!(!stale.explains(&exists));
    }
}
