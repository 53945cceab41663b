//! Policy files as operators write them, and the grant check against
//! manifests.

use super::*;
use crate::runtime::manifest::{KeyMapping, Permission, Watch};

const MIRROR: &str = "\
guests:
  - name: configmap-mirror
    namespaces: [default, team-a]
    reads:  [{apiVersion: v1, kind: ConfigMap}]
    writes: [{apiVersion: v1, kind: ConfigMap, verbs: [create, replace, patch, delete]}]
    events: true
  - name: sample-controller
    reads:
      - apiVersion: samplecontroller.k8s.io/v1alpha1
        kind: Foo
      - apiVersion: apps/v1
        kind: Deployment
    writes:
      - apiVersion: apps/v1
        kind: Deployment
        verbs: [create]
      - apiVersion: apps/v1
        kind: Deployment
        verbs: [replace]
      - apiVersion: samplecontroller.k8s.io/v1alpha1
        kind: Foo
        verbs: [update-status]
";

fn configmap() -> Gvk {
    Gvk::new("", "v1", "ConfigMap")
}

fn mirror_manifest() -> Manifest {
    Manifest {
        name: "configmap-mirror".into(),
        primary: configmap(),
        primary_label_selector: None,
        owns: vec![],
        watches: vec![Watch {
            kind: configmap(),
            mapping: KeyMapping::Annotation("recon.dev/mirror-source".into()),
            label_selector: Some("recon.dev/mirror-of".into()),
        }],
        indexes: vec![],
        resync_period: None,
        concurrency: None,
        writes: vec![
            Permission {
                kind: configmap(),
                verbs: vec![Verb::Create, Verb::Replace, Verb::Patch, Verb::Delete],
            },
            Permission {
                kind: event_kind(),
                verbs: vec![Verb::Create],
            },
        ],
        prune_fields: vec![],
        keep_managed_fields: vec![],
        metadata_only: vec![],
    }
}

fn only(names: &[&str]) -> Namespaces {
    Namespaces::Only(names.iter().map(|n| n.to_string()).collect())
}

fn parse_error(text: &str) -> String {
    match Policy::parse("policy.yaml", text) {
        Ok(policy) => panic!("accepted: {policy:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_policy_grants_each_guest_by_name() {
    let policy = Policy::parse("policy.yaml", MIRROR).unwrap();
    assert_eq!(policy.file(), "policy.yaml");
    let mirror = policy.grant("configmap-mirror").unwrap();
    assert_eq!(mirror.namespaces, only(&["default", "team-a"]));
    assert_eq!(mirror.reads, BTreeSet::from([configmap()]));
    assert!(mirror.allows(&configmap(), Verb::Delete));
    assert!(!mirror.allows(&configmap(), Verb::UpdateStatus));
    assert!(mirror.allows(&event_kind(), Verb::Create), "events: true");
    assert!(!mirror.allows(&event_kind(), Verb::Delete));

    let sample = policy.grant("sample-controller").unwrap();
    assert_eq!(sample.namespaces, Namespaces::All);
    assert!(!sample.events);
    let deployment = Gvk::new("apps", "v1", "Deployment");
    assert_eq!(
        sample.writes[&deployment],
        BTreeSet::from([Verb::Create, Verb::Replace]),
        "entries of one kind add up"
    );
    assert!(sample.allows(
        &Gvk::new("samplecontroller.k8s.io", "v1alpha1", "Foo"),
        Verb::UpdateStatus
    ));
    assert!(policy.grant("hostile").is_none());
}

#[test]
fn json_is_a_policy_too() {
    let policy = Policy::parse(
        "policy.json",
        r#"{"guests": [{"name": "a", "reads": [{"apiVersion": "v1", "kind": "Secret"}]}]}"#,
    )
    .unwrap();
    let a = policy.grant("a").unwrap();
    assert_eq!(a.reads, BTreeSet::from([Gvk::new("", "v1", "Secret")]));
    assert!(a.writes.is_empty() && !a.events);
}

#[test]
fn a_manifest_within_its_grant_is_admitted_in_the_namespaces_both_allow() {
    let policy = Policy::parse("policy.yaml", MIRROR).unwrap();
    let manifest = mirror_manifest();
    assert_eq!(
        policy.admit(&manifest, &Namespaces::All),
        Ok(only(&["default", "team-a"]))
    );
    assert_eq!(
        policy.admit(&manifest, &only(&["team-a", "team-b"])),
        Ok(only(&["team-a"]))
    );
    let refused = policy
        .admit(&manifest, &only(&["kube-system"]))
        .unwrap_err();
    assert!(matches!(refused, GrantError::NoNamespace { .. }));
    assert_eq!(
        refused.to_string(),
        "guest configmap-mirror: the policy policy.yaml grants it default, team-a, none of which the host watches (--namespace: kube-system)"
    );
}

#[test]
fn every_excess_is_listed() {
    let policy = Policy::parse(
        "policy.yaml",
        "guests: [{name: configmap-mirror, reads: [{apiVersion: v1, kind: ConfigMap}], \
         writes: [{apiVersion: v1, kind: ConfigMap, verbs: [patch]}]}]",
    )
    .unwrap();
    let mut manifest = mirror_manifest();
    manifest.owns.push(Gvk::new("", "v1", "Secret"));
    manifest.watches.push(Watch {
        kind: Gvk::new("apps", "v1", "Deployment"),
        mapping: KeyMapping::ControllerOwner,
        label_selector: None,
    });
    manifest.writes.push(Permission {
        kind: Gvk::new("rbac.authorization.k8s.io", "v1", "ClusterRole"),
        verbs: vec![Verb::Create],
    });
    let refused = policy.admit(&manifest, &Namespaces::All).unwrap_err();
    assert_eq!(
        refused,
        GrantError::Excess {
            guest: "configmap-mirror".into(),
            file: "policy.yaml".into(),
            excess: vec![
                Excess::Read(Gvk::new("", "v1", "Secret")),
                Excess::Read(Gvk::new("apps", "v1", "Deployment")),
                Excess::Write {
                    kind: configmap(),
                    verbs: vec![Verb::Create, Verb::Replace, Verb::Delete],
                },
                Excess::Events,
                Excess::Write {
                    kind: Gvk::new("rbac.authorization.k8s.io", "v1", "ClusterRole"),
                    verbs: vec![Verb::Create],
                },
            ],
        }
    );
    assert_eq!(
        refused.to_string(),
        "guest configmap-mirror: its manifest asks for more than the policy policy.yaml grants: \
         reads v1/Secret; reads apps/v1/Deployment; \
         writes v1/ConfigMap (create, replace, delete); \
         records events (create of events.k8s.io/v1/Event; granted by `events: true`); \
         writes rbac.authorization.k8s.io/v1/ClusterRole (create)"
    );
}

#[test]
fn a_kind_granted_as_metadata_only_admits_only_a_metadata_only_read() {
    let policy = Policy::parse(
        "policy.yaml",
        "guests: [{name: configmap-mirror, events: true, reads: [{apiVersion: v1, kind: ConfigMap}, \
         {apiVersion: v1, kind: Secret, metadataOnly: true}], \
         writes: [{apiVersion: v1, kind: ConfigMap, verbs: [create, replace, patch, delete]}]}]",
    )
    .unwrap();
    let secret = Gvk::new("", "v1", "Secret");
    let mut manifest = mirror_manifest();
    manifest.owns.push(secret.clone());
    let refused = policy.admit(&manifest, &Namespaces::All).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "guest configmap-mirror: its manifest asks for more than the policy policy.yaml grants: \
         reads v1/Secret whole (granted as metadata only: the manifest must read it metadata-only)"
    );
    manifest.metadata_only.push(secret);
    assert_eq!(
        policy.admit(&manifest, &Namespaces::All),
        Ok(Namespaces::All)
    );
    // A kind granted whole may be read as metadata only too.
    manifest.metadata_only.push(configmap());
    assert!(policy.admit(&manifest, &Namespaces::All).is_ok());
}

/// Without a policy a reload is granted what the first version asked for:
/// a kind it read as metadata only stays so.
#[test]
fn a_first_version_reading_metadata_only_grants_no_whole_reads() {
    let secret = Gvk::new("", "v1", "Secret");
    let mut first = mirror_manifest();
    first.owns.push(secret.clone());
    first.metadata_only.push(secret.clone());
    let granted = Grant::of_manifest(&first, &Namespaces::All);
    assert!(granted.excess(&first).is_empty());
    let mut whole = first.clone();
    whole.metadata_only.clear();
    assert_eq!(granted.excess(&whole), [Excess::WholeRead(secret)]);
}

#[test]
fn events_may_also_be_granted_as_a_write() {
    let policy = Policy::parse(
        "policy.yaml",
        "guests: [{name: configmap-mirror, reads: [{apiVersion: v1, kind: ConfigMap}], writes: [\
         {apiVersion: v1, kind: ConfigMap, verbs: [create, replace, patch, delete]}, \
         {apiVersion: events.k8s.io/v1, kind: Event, verbs: [create]}]}]",
    )
    .unwrap();
    assert!(policy.admit(&mirror_manifest(), &Namespaces::All).is_ok());
}

#[test]
fn a_guest_the_policy_does_not_name_is_refused() {
    let policy = Policy::parse("policy.yaml", "guests: []").unwrap();
    let refused = policy
        .admit(&mirror_manifest(), &Namespaces::All)
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "guest configmap-mirror: the policy policy.yaml does not name it, so it is granted nothing"
    );
}

#[test]
fn unknown_fields_and_verbs_are_refused_with_their_place() {
    let unknown_field = parse_error("guests:\n  - name: a\n    reads: []\n    secrets: all\n");
    assert!(
        unknown_field.starts_with("policy policy.yaml: ")
            && unknown_field.contains("secrets")
            && unknown_field.contains("line 4"),
        "{unknown_field}"
    );
    let unknown_verb = parse_error(
        "guests:\n  - name: a\n    writes:\n      - {apiVersion: v1, kind: Secret, verbs: [get]}\n",
    );
    assert!(
        unknown_verb.contains("get")
            && unknown_verb.contains("update-status")
            && unknown_verb.contains("line 4"),
        "{unknown_verb}"
    );
    let top = parse_error("guest: []\n");
    assert!(top.contains("guest"), "{top}");
}

#[test]
fn malformed_files_are_refused_with_their_place() {
    let syntax = parse_error("guests:\n  - name: a\n    reads: [{apiVersion: v1\n");
    assert!(syntax.starts_with("policy policy.yaml: "), "{syntax}");
    assert!(syntax.contains("line"), "{syntax}");
    let wrong_type = parse_error("guests:\n  - name: a\n    events: sometimes\n");
    assert!(wrong_type.contains("line 3"), "{wrong_type}");
    let missing = parse_error("guests:\n  - reads: []\n");
    assert!(missing.contains("name"), "{missing}");
}

#[test]
fn duplicate_guests_and_bad_names_are_refused_with_their_place() {
    assert_eq!(
        parse_error("guests:\n  - name: a\n  - name: b\n  - name: a\n"),
        "policy policy.yaml:4:11: guest \"a\" is granted twice (first at line 2)"
    );
    assert_eq!(
        parse_error("guests:\n  - name: Not_A_Label\n"),
        "policy policy.yaml:2:11: guest name \"Not_A_Label\" is not a DNS label: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'"
    );
    let long = "n".repeat(64);
    assert_eq!(
        parse_error(&format!(
            "guests:\n  - name: a\n    namespaces: [default, {long}]\n"
        )),
        format!(
            "policy policy.yaml:3:27: guest a: namespace \"{long}\" is not a DNS label: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'"
        )
    );
    assert_eq!(
        parse_error("guests:\n  - name: a\n    namespaces: []\n"),
        "policy policy.yaml:3:17: guest a: an empty namespaces list grants nothing; leave it out to grant every namespace"
    );
    assert_eq!(
        parse_error("guests:\n  - name: a\n    reads: [{apiVersion: a/b/c, kind: X}]\n"),
        "policy policy.yaml:3:26: guest a: apiVersion \"a/b/c\", kind \"X\" is not a kind: apiVersion is `v1` or `group/version` and kind is not empty"
    );
    assert!(
        parse_error(
            "guests:\n  - name: a\n    writes: [{apiVersion: v1, kind: '', verbs: [create]}]\n"
        )
        .contains("is not a kind")
    );
    assert_eq!(
        parse_error(
            "guests:\n  - name: a\n    writes: [{apiVersion: v1, kind: Secret, verbs: []}]\n"
        ),
        "policy policy.yaml:3:52: guest a: the writes of v1/Secret list no verb"
    );
}

#[test]
fn directories_are_granted_per_guest_and_must_exist_once_each() {
    let tmp = std::env::temp_dir().join(format!("recon-policy-dirs-{}", std::process::id()));
    let (data, conf) = (tmp.join("data"), tmp.join("conf"));
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&conf).unwrap();
    let (data_s, conf_s) = (data.display(), conf.display());
    let policy = Policy::parse(
        "policy.yaml",
        &format!(
            "guests:
  - name: a
    dirs:
      - {{hostPath: {data_s}, mountPath: /data}}
      - {{hostPath: {conf_s}, mountPath: /etc/conf, readOnly: true}}
  - name: b
"
        ),
    )
    .unwrap();
    assert_eq!(
        policy.grant("a").unwrap().dirs,
        vec![
            Preopen {
                host: data.clone(),
                guest: "/data".into(),
                read_only: false,
            },
            Preopen {
                host: conf.clone(),
                guest: "/etc/conf".into(),
                read_only: true,
            },
        ]
    );
    assert!(policy.grant("b").unwrap().dirs.is_empty(), "b gets none");
    assert_eq!(
        parse_error(&format!(
            "guests:\n  - name: a\n    dirs: [{{hostPath: {data_s}, mountPath: data}}]\n"
        )),
        format!(
            "policy policy.yaml:3:{}: guest a: mountPath \"data\" is not absolute",
            36 + data_s.to_string().len()
        )
    );
    assert!(
        parse_error(&format!(
            "guests:\n  - name: a\n    dirs: [{{hostPath: {data_s}, mountPath: /d}}, {{hostPath: {conf_s}, mountPath: /d}}]\n"
        ))
        .ends_with("guest a: mountPath /d is granted twice")
    );
    let missing = tmp.join("missing");
    assert_eq!(
        parse_error(&format!(
            "guests:\n  - name: a\n    dirs: [{{hostPath: {}, mountPath: /d}}]\n",
            missing.display()
        )),
        format!(
            "policy policy.yaml:3:23: guest a: hostPath {} is not a directory",
            missing.display()
        )
    );
    assert!(
        parse_error(
            "guests:\n  - name: a\n    dirs: [{hostPath: /tmp, mountPath: /d, mode: rw}]\n"
        )
        .contains("mode"),
        "unknown fields are refused"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn an_unreadable_file_names_it() {
    let missing = Path::new("/nonexistent/policy.yaml");
    let error = Policy::load(missing).unwrap_err();
    assert!(matches!(error, PolicyError::Read { .. }));
    assert!(
        error
            .to_string()
            .starts_with("policy /nonexistent/policy.yaml: cannot read: "),
        "{error}"
    );
}

#[test]
fn namespaces_intersect_and_list_what_informers_watch() {
    let host = Namespaces::from_flags(&["default".into(), "team-a".into()]);
    assert_eq!(Namespaces::from_flags(&[]), Namespaces::All);
    assert_eq!(Namespaces::All.intersection(&host), host);
    assert_eq!(
        host.intersection(&only(&["team-a", "team-b"])),
        only(&["team-a"])
    );
    assert!(host.intersection(&only(&["x"])).is_empty());
    assert!(host.contains("team-a") && !host.contains("kube-system"));
    assert!(Namespaces::All.contains("kube-system"));
    assert_eq!(Namespaces::All.watched(), vec![None]);
    assert_eq!(
        host.watched(),
        vec![Some("default".to_string()), Some("team-a".to_string())]
    );
    assert_eq!(host.to_string(), "default, team-a");
    assert_eq!(Namespaces::All.to_string(), "every namespace");
}
