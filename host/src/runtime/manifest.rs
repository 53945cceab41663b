//! A guest's manifest as the host takes it: the WIT `controller-manifest`
//! turned into the shared [`Manifest`] and checked once at load, so the
//! controller wiring never meets a malformed one. The checks are the
//! shared crate's ([`Manifest::validate`], which the guest SDK's
//! `FakeCluster` applies too), then the host's own: that the field paths
//! of built-in kinds name fields those kinds have. The manifest
//! serializes to the JSON `host inspect` prints. Recording events is a
//! declared write like any other: `create` of [`event_kind`].

use std::time::Duration;

use super::bindings::exports::recon::controller::reconciler as wit;
use super::bindings::recon::controller::types::Gvk as WitGvk;
use crate::built_in_kinds::{built_in_kind, usable};
use recon_api_semantics::Gvk;
pub use recon_api_semantics::manifest::{
    IndexSource, IndexSpec, KeyMapping, Manifest, ManifestError, Permission, PrunedField, Verb,
    Watch, event_kind,
};

/// Takes the record a guest's `manifest()` returned, and checks it in time
/// linear in its size.
pub fn from_wit(m: wit::ControllerManifest) -> Result<Manifest, ManifestError> {
    let manifest = Manifest {
        name: m.name,
        primary: gvk(m.primary),
        primary_label_selector: selector(m.primary_label_selector),
        owns: m.owns.into_iter().map(gvk).collect(),
        watches: m
            .watches
            .into_iter()
            .map(|watch| Watch {
                kind: gvk(watch.kind),
                mapping: match watch.mapping {
                    wit::KeyMapping::ControllerOwner => KeyMapping::ControllerOwner,
                    wit::KeyMapping::Label(l) => KeyMapping::Label(l),
                    wit::KeyMapping::Annotation(a) => KeyMapping::Annotation(a),
                    wit::KeyMapping::ByIndex(name) => KeyMapping::ByIndex(name),
                    wit::KeyMapping::Namespace => KeyMapping::Namespace,
                },
                label_selector: selector(watch.label_selector),
            })
            .collect(),
        indexes: m
            .indexes
            .into_iter()
            .map(|index| IndexSpec {
                name: index.name,
                kind: gvk(index.kind),
                source: match index.source {
                    wit::IndexSource::Label(l) => IndexSource::Label(l),
                    wit::IndexSource::Annotation(a) => IndexSource::Annotation(a),
                    wit::IndexSource::Field(f) => IndexSource::Field(f),
                    wit::IndexSource::Fields(paths) => IndexSource::Fields(paths),
                    wit::IndexSource::OwnerUid => IndexSource::OwnerUid,
                },
            })
            .collect(),
        resync_period: m.resync_period.map(Duration::from_nanos),
        concurrency: m.concurrency,
        writes: m
            .writes
            .into_iter()
            .map(|permission| Permission {
                kind: gvk(permission.kind),
                verbs: permission.verbs.into_iter().map(verb).collect(),
            })
            .collect(),
        prune_fields: m
            .prune_fields
            .into_iter()
            .map(|pruned| PrunedField {
                kind: gvk(pruned.kind),
                path: pruned.path,
            })
            .collect(),
        keep_managed_fields: m.keep_managed_fields.into_iter().map(gvk).collect(),
        metadata_only: m.metadata_only.into_iter().map(gvk).collect(),
    };
    manifest.validate()?;
    check_built_in_paths(&manifest)?;
    Ok(manifest)
}

fn gvk(kind: WitGvk) -> Gvk {
    Gvk {
        group: kind.group,
        version: kind.version,
        kind: kind.kind,
    }
}

/// A blank selector selects everything, as no selector does.
fn selector(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty())
}

fn verb(verb: wit::Verb) -> Verb {
    match verb {
        wit::Verb::Create => Verb::Create,
        wit::Verb::Replace => Verb::Replace,
        wit::Verb::Patch => Verb::Patch,
        wit::Verb::Delete => Verb::Delete,
        wit::Verb::UpdateStatus => Verb::UpdateStatus,
    }
}

/// Checks that every field path of a built-in kind names fields the kind
/// has, and that an index's ends at strings. Custom resources (and kinds
/// newer than this host) are not known here; `host run` checks their
/// paths against the schemas the server serves.
fn check_built_in_paths(manifest: &Manifest) -> Result<(), ManifestError> {
    for used in manifest.field_paths() {
        let Some(built_in) = built_in_kind(used.kind) else {
            continue;
        };
        let reached = built_in.field_path(used.path);
        usable(built_in.kind, used.path, reached, used.indexed)
            .map_err(|error| ManifestError(format!("{}: {error}", used.what)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use recon_api_semantics::manifest::{
        MAX_INDEXES, MAX_OWNS, MAX_PRUNE_FIELDS, MAX_WATCHES, MAX_WRITES,
    };

    fn kind(group: &str, version: &str, kind: &str) -> WitGvk {
        WitGvk {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    fn configmaps() -> WitGvk {
        kind("", "v1", "ConfigMap")
    }

    fn manifest() -> wit::ControllerManifest {
        wit::ControllerManifest {
            name: "mirror".into(),
            primary: configmaps(),
            primary_label_selector: None,
            owns: vec![kind("apps", "v1", "Deployment")],
            watches: vec![wit::Watch {
                kind: kind("", "v1", "Secret"),
                mapping: wit::KeyMapping::ByIndex("by-secret".into()),
                label_selector: Some("app=web".into()),
            }],
            indexes: vec![wit::IndexSpec {
                name: "by-secret".into(),
                kind: configmaps(),
                source: wit::IndexSource::Field("data.secret".into()),
            }],
            resync_period: None,
            concurrency: Some(2),
            writes: vec![wit::Permission {
                kind: configmaps(),
                verbs: vec![wit::Verb::Create, wit::Verb::Patch],
            }],
            prune_fields: vec![pruned("data.big")],
            keep_managed_fields: vec![],
            metadata_only: vec![],
        }
    }

    fn pruned(path: &str) -> wit::PrunedField {
        wit::PrunedField {
            kind: configmaps(),
            path: path.into(),
        }
    }

    fn refused(m: wit::ControllerManifest) -> String {
        from_wit(m).unwrap_err().0
    }

    /// Why the well-formed manifest is refused once `change` has changed it.
    fn refused_after(change: impl FnOnce(&mut wit::ControllerManifest)) -> String {
        let mut m = manifest();
        change(&mut m);
        refused(m)
    }

    fn field_index(i: usize) -> wit::IndexSpec {
        wit::IndexSpec {
            name: format!("i-{i}"),
            kind: configmaps(),
            source: wit::IndexSource::Field(format!("data.k{i}")),
        }
    }

    #[test]
    fn a_well_formed_manifest_is_taken() {
        let m = from_wit(manifest()).unwrap();
        assert_eq!(m.name, "mirror");
        assert!(m.allows(&Gvk::new("", "v1", "ConfigMap"), Verb::Patch));
        assert!(!m.allows(&Gvk::new("", "v1", "ConfigMap"), Verb::Delete));
        assert_eq!(m.watched_kinds().len(), 3);
    }

    #[test]
    fn counts_over_their_caps_are_refused_before_anything_else() {
        let mut m = manifest();
        m.indexes = (0..MAX_INDEXES).map(field_index).collect();
        m.watches.clear();
        assert!(from_wit(m.clone()).is_ok(), "the cap itself is allowed");
        // A hundred thousand indexes are refused at once, however bad they
        // are otherwise.
        m.indexes = (0..100_000).map(field_index).collect();
        m.name = "Not A Name".into();
        assert_eq!(
            refused(m),
            "100000 indexes declared; a manifest may declare at most 16"
        );
        for (build, what, max) in [
            (
                Box::new(|m: &mut wit::ControllerManifest, n| {
                    m.watches = vec![m.watches[0].clone(); n]
                }) as Box<dyn Fn(&mut wit::ControllerManifest, usize)>,
                "watches",
                MAX_WATCHES,
            ),
            (
                Box::new(|m, n| m.owns = vec![configmaps(); n]),
                "owned kinds",
                MAX_OWNS,
            ),
            (
                Box::new(|m, n| m.writes = vec![m.writes[0].clone(); n]),
                "write permissions",
                MAX_WRITES,
            ),
            (
                Box::new(|m, n| m.prune_fields = vec![pruned("data.x"); n]),
                "pruned fields",
                MAX_PRUNE_FIELDS,
            ),
        ] {
            assert_eq!(
                refused_after(|m| build(m, max + 1)),
                format!(
                    "{} {what} declared; a manifest may declare at most {max}",
                    max + 1
                )
            );
        }
    }

    #[test]
    fn long_strings_deep_paths_and_repeated_verbs_are_refused() {
        assert!(
            refused_after(
                |m| m.watches[0].label_selector = Some(format!("app in ({})", "a,".repeat(10_000)))
            )
            .starts_with("a string of 20009 bytes (\"app in (a,a,")
        );
        assert_eq!(
            refused_after(
                |m| m.indexes[0].source = wit::IndexSource::Field(vec!["a"; 17].join("."))
            ),
            "index \"by-secret\": field path of 17 segments; at most 16"
        );
        assert_eq!(
            refused_after(|m| m.prune_fields = vec![pruned("data..x")]),
            "prune field of v1, Kind=ConfigMap: field path \"data..x\" is not a dot-separated path"
        );
        assert_eq!(
            refused_after(
                |m| m.indexes[0].source = wit::IndexSource::Fields(vec!["data.a".into(); 17])
            ),
            "index \"by-secret\" reads 17 paths; an index may read at most 16"
        );
        assert_eq!(
            refused_after(|m| m.writes[0].verbs = vec![wit::Verb::Create; 6]),
            "writes of ConfigMap: 6 verbs listed; there are 5"
        );
    }

    #[test]
    fn indexes_are_unique_and_mappings_name_declared_ones() {
        assert_eq!(
            refused_after(|m| m.indexes.push(m.indexes[0].clone())),
            "index \"by-secret\" of v1, Kind=ConfigMap is declared twice"
        );
        assert!(
            refused_after(|m| m.watches[0].mapping = wit::KeyMapping::ByIndex("nope".into()))
                .contains("maps keys through index \"nope\", which is not declared")
        );
        assert_eq!(
            refused_after(|m| {
                m.indexes[0].kind = kind("", "v1", "Pod");
                m.indexes[0].source = wit::IndexSource::Field("spec.nodeName".into());
                m.watches[0].mapping = wit::KeyMapping::Label("x".into());
            }),
            "index \"by-secret\" is on v1, Kind=Pod, which the manifest does not watch"
        );
    }

    #[test]
    fn an_index_reads_several_paths_each_checked() {
        let mut m = manifest();
        m.indexes[0].source =
            wit::IndexSource::Fields(vec!["data.a".into(), "metadata.annotations.source".into()]);
        let taken = from_wit(m.clone()).unwrap();
        assert_eq!(
            taken.indexes[0].source,
            IndexSource::Fields(vec!["data.a".into(), "metadata.annotations.source".into()])
        );
        m.indexes[0].source = wit::IndexSource::Fields(vec!["data.a".into(), "x.".into()]);
        assert_eq!(
            refused(m.clone()),
            "index \"by-secret\": field path \"x.\" is not a dot-separated path"
        );
        m.indexes[0].source = wit::IndexSource::Fields(vec![]);
        assert_eq!(refused(m), "index \"by-secret\" reads no paths");
    }

    #[test]
    fn the_namespace_mapping_needs_namespaces_as_the_primary_kind() {
        let mut m = manifest();
        m.watches[0].mapping = wit::KeyMapping::Namespace;
        assert_eq!(
            refused(m.clone()),
            "watch of v1, Kind=Secret maps keys to the object's namespace, which needs the primary kind v1, Kind=Namespace (not v1, Kind=ConfigMap)"
        );
        m.primary = kind("", "v1", "Namespace");
        m.indexes.clear();
        m.prune_fields.clear();
        let taken = from_wit(m).unwrap();
        assert_eq!(taken.watches[0].mapping, KeyMapping::Namespace);
    }

    #[test]
    fn pruned_fields_belong_to_a_watched_kind() {
        let taken = from_wit(manifest()).unwrap();
        assert_eq!(
            taken.prune_fields,
            [PrunedField {
                kind: Gvk::new("", "v1", "ConfigMap"),
                path: "data.big".into()
            }]
        );
        assert_eq!(
            refused_after(|m| {
                m.prune_fields[0].kind = kind("", "v1", "Pod");
                m.prune_fields[0].path = "spec.overhead".into();
            }),
            "prune field \"spec.overhead\" is on v1, Kind=Pod, which the manifest does not watch"
        );
        assert!(
            refused_after(|m| m.prune_fields = vec![pruned("metadata.labels")])
                .contains("only metadata.managedFields may be pruned")
        );
    }

    #[test]
    fn managed_fields_are_kept_only_of_watched_kinds_each_once() {
        let mut m = manifest();
        m.keep_managed_fields = vec![kind("apps", "v1", "Deployment")];
        let taken = from_wit(m.clone()).unwrap();
        assert_eq!(
            taken.keep_managed_fields,
            [Gvk::new("apps", "v1", "Deployment")]
        );
        m.keep_managed_fields.push(kind("apps", "v1", "Deployment"));
        assert_eq!(
            refused(m.clone()),
            "keeps managedFields of apps/v1, Kind=Deployment twice"
        );
        m.keep_managed_fields = vec![kind("", "v1", "Pod")];
        assert_eq!(
            refused(m),
            "keeps managedFields of v1, Kind=Pod, which the manifest does not watch"
        );
    }

    #[test]
    fn kinds_read_as_metadata_only_are_watched_named_once_and_indexed_by_metadata() {
        let secrets = || kind("", "v1", "Secret");
        let mut m = manifest();
        m.metadata_only = vec![secrets()];
        m.indexes.push(wit::IndexSpec {
            name: "by-owner".into(),
            kind: secrets(),
            source: wit::IndexSource::Fields(vec!["metadata.labels.owner".into()]),
        });
        let taken = from_wit(m.clone()).unwrap();
        assert_eq!(taken.metadata_only, [Gvk::new("", "v1", "Secret")]);
        let mut twice = m.clone();
        twice.metadata_only.push(secrets());
        assert_eq!(
            refused(twice),
            "reads v1, Kind=Secret as metadata only twice"
        );
        let mut unwatched = m.clone();
        unwatched.metadata_only = vec![kind("", "v1", "Pod")];
        assert_eq!(
            refused(unwatched),
            "reads v1, Kind=Pod as metadata only, but the manifest does not watch it"
        );
        let mut by_data = m.clone();
        by_data.indexes[1].source = wit::IndexSource::Field("data.token".into());
        assert_eq!(
            refused(by_data),
            "index \"by-owner\" reads \"data.token\" of v1, Kind=Secret, which the manifest reads as metadata only: its cached objects hold metadata alone"
        );
        let mut pruning = m;
        pruning.metadata_only = vec![configmaps()];
        pruning.indexes.truncate(0);
        pruning.watches[0].mapping = wit::KeyMapping::Label("app".into());
        assert_eq!(
            refused(pruning),
            "prune field \"data.big\" of v1, Kind=ConfigMap, which the manifest reads as metadata only: its cached objects hold metadata alone"
        );
    }

    #[test]
    fn field_paths_of_built_in_kinds_name_fields_they_have() {
        assert_eq!(
            refused_after(|m| m.indexes[0].source = wit::IndexSource::Field("dta.secret".into())),
            "index \"by-secret\": field path \"dta.secret\": a ConfigMap (ConfigMap) has no field \"dta\"; did you mean \"data\"?"
        );
        assert_eq!(
            refused_after(|m| m.indexes[0].source =
                wit::IndexSource::Fields(vec!["data.a".into(), "metadata.labels".into()])),
            "index \"by-secret\": field path \"metadata.labels\" of ConfigMap ends at a map; an index reads strings"
        );
        assert_eq!(
            refused_after(|m| m.prune_fields = vec![pruned("immutable.x")]),
            "prune field of v1, Kind=ConfigMap: field path \"immutable.x\": ConfigMap's immutable is a boolean, which has no field \"x\""
        );
        // A pruned field may be anything; an index may read a list's strings.
        let mut m = manifest();
        m.prune_fields = vec![pruned("data"), pruned("immutable")];
        m.indexes[0].source = wit::IndexSource::Field("metadata.finalizers".into());
        from_wit(m).unwrap();
        // A custom resource's paths are not known to the host.
        let mut m = manifest();
        let foo = kind("samplecontroller.k8s.io", "v1alpha1", "Foo");
        m.owns.push(foo.clone());
        m.indexes[0].kind = foo.clone();
        m.indexes[0].source = wit::IndexSource::Field("spec.anything".into());
        m.watches[0].mapping = wit::KeyMapping::Label("x".into());
        from_wit(m).unwrap();
    }
}
