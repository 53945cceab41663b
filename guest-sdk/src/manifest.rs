//! The [`Manifest`]: everything the host needs to wire a reconciler up (the
//! WIT `controller-manifest`), with a builder. Which kinds are cached (the
//! primary kind, owned kinds, watches), how changes map to primary keys,
//! declared indexes, and which writes are allowed (recording events among
//! them: [`Manifest::records_events`]). It is the host's own type, from
//! `recon_api_semantics::manifest`, and [`Manifest::validate`] is the
//! host's own check of it at load; the conversion to the WIT record lives
//! in the wasm backend, and `testing::FakeCluster` reads the manifest to
//! enforce the same rules the host does.
//!
//! ```
//! use std::time::Duration;
//! use k8s_openapi::api::apps::v1::Deployment;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use recon_guest_sdk::{KeyMapping, Manifest, Verb};
//!
//! let manifest = Manifest::new::<Deployment>("web")
//!     .watches::<ConfigMap>(KeyMapping::Label("app".into()))
//!     .resync_every(Duration::from_secs(600))
//!     .writes::<ConfigMap>(&[Verb::Create, Verb::Patch]);
//! assert!(manifest.allows(&recon_guest_sdk::gvk_of::<ConfigMap>(), Verb::Patch));
//! assert_eq!(manifest.validate(), Ok(()));
//! ```

pub use recon_api_semantics::manifest::{
    IndexSource, IndexSpec, KeyMapping, Manifest, ManifestError, Permission, PrunedField, Verb,
    Watch, event_kind,
};

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};

    use std::time::Duration;

    use super::*;
    use crate::types::{Gvk, gvk_of};

    #[test]
    fn the_builder_fills_every_field() {
        let m = Manifest::new::<Deployment>("web")
            .primary_selector("tier=frontend")
            .owns::<ConfigMap>()
            .watches_selected::<Secret>(KeyMapping::ByIndex("secrets".into()), "managed")
            .index::<Deployment>("secrets", IndexSource::Field("spec.secretName".into()))
            .resync_every(Duration::from_secs(60))
            .concurrency(4)
            .writes::<ConfigMap>(&[Verb::Create])
            .writes::<ConfigMap>(&[Verb::Create, Verb::Delete])
            .prune::<ConfigMap>("data");
        assert_eq!(m.name, "web");
        assert_eq!(m.primary, gvk_of::<Deployment>());
        assert_eq!(m.primary_label_selector.as_deref(), Some("tier=frontend"));
        assert_eq!(m.owns, vec![gvk_of::<ConfigMap>()]);
        assert_eq!(
            m.watches,
            vec![Watch {
                kind: gvk_of::<Secret>(),
                mapping: KeyMapping::ByIndex("secrets".into()),
                label_selector: Some("managed".into()),
            }]
        );
        assert_eq!(m.indexes.len(), 1);
        assert_eq!(m.resync_period, Some(Duration::from_secs(60)));
        assert_eq!(m.concurrency, Some(4));
        assert_eq!(
            m.writes,
            vec![Permission {
                kind: gvk_of::<ConfigMap>(),
                verbs: vec![Verb::Create, Verb::Delete],
            }]
        );
        assert_eq!(
            m.prune_fields,
            vec![PrunedField {
                kind: gvk_of::<ConfigMap>(),
                path: "data".into()
            }]
        );
        assert!(m.allows(&gvk_of::<ConfigMap>(), Verb::Delete));
        assert!(!m.allows(&gvk_of::<ConfigMap>(), Verb::Patch));
        assert!(!m.allows(&gvk_of::<Secret>(), Verb::Create));
        assert!(!m.allows_events());
        assert_eq!(m.validate(), Ok(()));
    }

    #[test]
    fn recording_events_is_a_create_of_events_k8s_io_events() {
        let m = Manifest::new::<ConfigMap>("m").records_events();
        assert_eq!(
            m.writes,
            vec![Permission {
                kind: Gvk::new("events.k8s.io", "v1", "Event"),
                verbs: vec![Verb::Create],
            }]
        );
        assert!(m.allows_events());
        assert!(!Manifest::new::<ConfigMap>("m").allows_events());
    }

    #[test]
    fn validate_names_what_the_host_would_refuse() {
        let invalid = |m: Manifest| m.validate().is_err();
        assert!(invalid(Manifest::new::<ConfigMap>("")));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").primary_selector("a in (")
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m")
                .index::<ConfigMap>("i", IndexSource::OwnerUid)
                .index::<ConfigMap>("i", IndexSource::Label("a".into()))
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m")
                .watches::<Secret>(KeyMapping::ByIndex("missing".into()))
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m")
                .index::<Secret>("by-secret", IndexSource::OwnerUid)
                .watches::<Secret>(KeyMapping::ByIndex("by-secret".into()))
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").watches::<Secret>(KeyMapping::Namespace)
        ));
        assert!(
            Manifest::new::<Namespace>("m")
                .watches::<Secret>(KeyMapping::Namespace)
                .validate()
                .is_ok()
        );
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").index::<ConfigMap>("i", IndexSource::Fields(vec![]))
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").prune::<Secret>("data")
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").prune::<ConfigMap>("metadata.labels")
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").keep_managed_fields::<Secret>()
        ));
        let kept = Manifest::new::<ConfigMap>("m")
            .keep_managed_fields::<ConfigMap>()
            .keep_managed_fields::<ConfigMap>();
        assert!(kept.validate().is_ok());
        assert_eq!(kept.keep_managed_fields, [gvk_of::<ConfigMap>()]);
    }
}
