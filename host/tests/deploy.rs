//! The deployment artifacts under `deploy/`: the kustomization applies to
//! the dev API server with kubectl (twice, the second time changing
//! nothing) and yields the objects docs/DEPLOYING.md describes; the
//! ClusterRole, and the policy the host runs with, grant exactly what the
//! sample-controller guest's manifest needs; the CRD copy matches the
//! example's; the Grafana dashboard queries
//! exactly the metrics listed in `deploy/grafana/metrics.txt`; the image
//! (deploy/Containerfile) runs the static host from scratch as a non-root
//! user, and deploy/Dockerfile's final stage is the same image.

mod guests;
// Shared with the dev server's tests; only part of it is used here.
#[allow(dead_code)]
#[path = "devserver/kubectl.rs"]
mod kubectl;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use recon_devserver::store::ResourceType;
use recon_host::kube::Gvk;
use recon_host::policy::Policy;
use recon_host::runtime::manifest::{Verb, event_kind};
use serde_json::Value;

use kubectl::{Kubectl, kubectl_server};

const NAMESPACE: &str = "recon-system";
const SERVICE_ACCOUNT: &str = "recon-host";
const CLUSTER_ROLE: &str = "recon-host-sample-controller";
/// The policy ConfigMap's name, before the hash of its content.
const POLICY_CONFIGMAP: &str = "recon-host-policy-";
/// The host's default `--shutdown-timeout`, in seconds.
const SHUTDOWN_TIMEOUT_SECS: i64 = 30;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the host crate lives in the workspace")
        .to_path_buf()
}

fn read(relative: &str) -> String {
    let path = repo().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap_or_else(|| panic!("not a string: {s}")))
        .collect()
}

// ---------------------------------------------------------------------------
// kustomize + kubectl against the dev server

/// What the test learns from the cluster, for the checks after kubectl.
struct Applied {
    objects: BTreeMap<&'static str, Value>,
    types: Vec<ResourceType>,
    manifest: Value,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kustomization_applies_idempotently_and_yields_the_documented_objects() {
    let (dir, server, kubeconfig) = kubectl_server("deploy").await;
    let store = server.store();
    let applied = tokio::task::spawn_blocking(move || {
        let k = Kubectl::new(&kubeconfig, &dir.0);
        let kustomization = repo().join("deploy/kustomize");
        let kustomization = kustomization.to_str().unwrap();

        // First apply: every object is created.
        let first = k.ok(&["apply", "-k", kustomization]);
        let mut created: Vec<&str> = first.lines().filter(|l| !l.trim().is_empty()).collect();
        created.sort_unstable();
        // The policy ConfigMap's name ends in a hash of its content.
        let policy_configmap = created
            .iter()
            .find_map(|l| {
                l.strip_prefix("configmap/")?
                    .strip_suffix(" created")
                    .filter(|name| name.starts_with(POLICY_CONFIGMAP))
            })
            .unwrap_or_else(|| panic!("no policy ConfigMap created: {first}"))
            .to_string();
        let hashed = format!("configmap/{policy_configmap} created");
        assert_eq!(
            created,
            [
                "clusterrole.rbac.authorization.k8s.io/recon-host-sample-controller created",
                "clusterrolebinding.rbac.authorization.k8s.io/recon-host-sample-controller created",
                hashed.as_str(),
                "customresourcedefinition.apiextensions.k8s.io/foos.samplecontroller.k8s.io created",
                "deployment.apps/recon-host created",
                "namespace/recon-system created",
                "role.rbac.authorization.k8s.io/recon-host-leader-election created",
                "rolebinding.rbac.authorization.k8s.io/recon-host-leader-election created",
                "service/recon-host-metrics created",
                "serviceaccount/recon-host created",
            ],
            "{first}"
        );

        // Second apply: the same objects, all unchanged.
        let second = k.ok(&["apply", "-k", kustomization]);
        let mut unchanged: Vec<&str> = second
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                l.strip_suffix(" unchanged")
                    .unwrap_or_else(|| panic!("the second apply changed something: {l:?}\n{second}"))
            })
            .collect();
        unchanged.sort_unstable();
        let names: Vec<&str> = created
            .iter()
            .map(|l| l.strip_suffix(" created").unwrap())
            .collect();
        assert_eq!(unchanged, names, "{second}");

        let get = |args: &[&str]| json_of(&k.ok(&[args, &["-o", "json"]].concat()));
        // Each object the checks read: their name for it, its kind and
        // name, and whether it is in the host's namespace.
        let wanted = [
            ("namespace", "namespace", NAMESPACE, false),
            ("crd", "crd", "foos.samplecontroller.k8s.io", false),
            ("serviceaccount", "serviceaccount", SERVICE_ACCOUNT, true),
            ("clusterrole", "clusterrole", CLUSTER_ROLE, false),
            ("clusterrolebinding", "clusterrolebinding", CLUSTER_ROLE, false),
            ("role", "role", "recon-host-leader-election", true),
            ("rolebinding", "rolebinding", "recon-host-leader-election", true),
            ("deployment", "deployment", "recon-host", true),
            ("service", "service", "recon-host-metrics", true),
            ("policy", "configmap", &policy_configmap, true),
        ];
        let mut objects = BTreeMap::new();
        for (what, kind, name, namespaced) in wanted {
            let namespace: &[&str] = if namespaced { &["-n", NAMESPACE] } else { &[] };
            objects.insert(what, get(&[namespace, &["get", kind, name]].concat()));
        }
        // The CRD's kind is served.
        let foos = get(&["get", "foos", "-A"]);
        assert_eq!(foos["kind"], "List", "{foos}");

        Applied {
            objects,
            types: store.resource_types(),
            manifest: sample_controller_manifest(),
        }
    })
    .await
    .unwrap();
    server.shutdown().await;

    let o = &applied.objects;
    check_namespace(&o["namespace"]);
    check_crd(&o["crd"]);
    assert_eq!(o["serviceaccount"]["metadata"]["namespace"], NAMESPACE);
    check_cluster_role(&o["clusterrole"], &applied.manifest, &applied.types);
    check_binding(&o["clusterrolebinding"], "ClusterRole", CLUSTER_ROLE);
    check_leader_election_role(&o["role"]);
    check_binding(&o["rolebinding"], "Role", "recon-host-leader-election");
    let pod_labels = check_deployment(&o["deployment"]);
    check_service(&o["service"], &o["deployment"], &pod_labels);
    check_policy(&o["policy"], &o["deployment"], &applied.manifest);
}

fn check_namespace(ns: &Value) {
    assert_eq!(ns["status"]["phase"], "Active", "{ns}");
    // The pod spec meets the restricted Pod Security Standard the namespace enforces.
    assert_eq!(
        ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted",
        "{ns}"
    );
}

fn check_crd(crd: &Value) {
    let conditions = crd["status"]["conditions"]
        .as_array()
        .unwrap_or_else(|| panic!("no conditions: {crd}"));
    for wanted in ["Established", "NamesAccepted"] {
        assert!(
            conditions
                .iter()
                .any(|c| c["type"] == wanted && c["status"] == "True"),
            "{wanted} is not True: {crd}"
        );
    }
    let versions = crd["spec"]["versions"].as_array().unwrap();
    assert!(
        versions
            .iter()
            .any(|v| v["name"] == "v1alpha1" && v["served"] == true && v["storage"] == true),
        "{crd}"
    );
}

/// `(apiGroup, resource, verb)` triples a set of RBAC rules grants.
fn grants(role: &Value) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for rule in role["rules"]
        .as_array()
        .unwrap_or_else(|| panic!("no rules: {role}"))
    {
        assert!(
            rule.get("nonResourceURLs").is_none() && rule.get("resourceNames").is_none(),
            "unexpected rule shape: {rule}"
        );
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    for s in [group, resource, verb] {
                        assert!(!s.contains('*'), "wildcard in {rule}");
                    }
                    out.insert((group.into(), resource.into(), verb.into()));
                }
            }
        }
    }
    out
}

fn grant(group: &str, resource: &str, verb: &str) -> (String, String, String) {
    (group.into(), resource.into(), verb.into())
}

/// The manifest `host inspect` prints for the example sample-controller.
fn sample_controller_manifest() -> Value {
    let wasm = guests::guest_wasm("sample_controller");
    let out = Command::new(env!("CARGO_BIN_EXE_host"))
        .arg("inspect")
        .arg(&wasm)
        .env("XDG_CACHE_HOME", guests::cache_dir())
        .stdin(Stdio::null())
        .output()
        .expect("run host inspect");
    assert!(
        out.status.success(),
        "host inspect {} failed: {}",
        wasm.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&String::from_utf8_lossy(&out.stdout))
}

/// The kinds a manifest (as `host inspect` prints it) reads: primary,
/// owned, watched.
fn read_kinds(manifest: &Value) -> impl Iterator<Item = &Value> {
    std::iter::once(&manifest["primary"])
        .chain(manifest["owns"].as_array().unwrap())
        .chain(
            manifest["watches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| &w["kind"]),
        )
}

fn gvk(kind: &Value) -> Gvk {
    let part = |name: &str| kind[name].as_str().unwrap_or_else(|| panic!("{kind}"));
    Gvk::new(part("group"), part("version"), part("kind"))
}

/// The ClusterRole grants what the guest's manifest calls for and nothing
/// else: get/list/watch of every kind it reads, and its writes (events
/// among them) as RBAC verbs.
fn check_cluster_role(role: &Value, manifest: &Value, types: &[ResourceType]) {
    let plural = |gvk: &Value| -> (String, String) {
        let t = types
            .iter()
            .find(|t| {
                t.group == gvk["group"] && t.version == gvk["version"] && t.kind == gvk["kind"]
            })
            .unwrap_or_else(|| panic!("the dev server does not serve {gvk}"));
        (t.group.clone(), t.plural.clone())
    };
    let mut wanted = BTreeSet::new();
    for gvk in read_kinds(manifest) {
        let (group, resource) = plural(gvk);
        for verb in ["get", "list", "watch"] {
            wanted.insert(grant(&group, &resource, verb));
        }
    }
    for permission in manifest["writes"].as_array().unwrap() {
        let (group, resource) = plural(&permission["kind"]);
        for verb in strings(&permission["verbs"]) {
            let (resource, verb) = match verb {
                "create" => (resource.clone(), "create"),
                "replace" => (resource.clone(), "update"),
                "patch" => (resource.clone(), "patch"),
                "delete" => (resource.clone(), "delete"),
                // The sample-controller replaces its status (PUT); a guest
                // that patches status also needs `patch` on it.
                "update-status" => (format!("{resource}/status"), "update"),
                other => panic!("a manifest verb this test does not know: {other}"),
            };
            wanted.insert(grant(&group, &resource, verb));
        }
    }

    // Spelled out, so that a manifest read wrongly cannot make this pass.
    for must in [
        grant("samplecontroller.k8s.io", "foos", "get"),
        grant("samplecontroller.k8s.io", "foos", "list"),
        grant("samplecontroller.k8s.io", "foos", "watch"),
        grant("samplecontroller.k8s.io", "foos/status", "update"),
        grant("apps", "deployments", "create"),
        grant("apps", "deployments", "update"),
        grant("apps", "deployments", "watch"),
        grant("events.k8s.io", "events", "create"),
    ] {
        assert!(
            wanted.contains(&must),
            "{must:?} not derived from {manifest}"
        );
    }
    assert_eq!(
        grants(role),
        wanted,
        "the ClusterRole is not exactly what the sample-controller's manifest needs"
    );
}

/// The policy ConfigMap holds `deploy/kustomize/policy.yaml`, the pods
/// mount it where `--policy` reads it, and it grants the guest exactly what
/// its manifest asks for: its reads, its writes, its events.
fn check_policy(configmap: &Value, deployment: &Value, manifest: &Value) {
    let text = read("deploy/kustomize/policy.yaml");
    assert_eq!(
        configmap["data"]["policy.yaml"].as_str(),
        Some(text.as_str()),
        "{configmap}"
    );
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let args = strings(&container["args"]);
    let path = flag(&args, "--policy").expect("a --policy");
    let (dir, file) = path.rsplit_once('/').unwrap();
    assert_eq!(file, "policy.yaml");
    let mount = container["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"] == dir)
        .unwrap_or_else(|| panic!("nothing mounted at {dir}"));
    assert_eq!(mount["readOnly"], true);
    let volume = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .expect("the policy volume");
    assert_eq!(
        volume["configMap"]["name"], configmap["metadata"]["name"],
        "{volume}"
    );

    let policy = Policy::parse("deploy/kustomize/policy.yaml", &text).unwrap();
    let name = manifest["name"].as_str().unwrap();
    let granted = policy.grant(name).expect("the policy names the guest");
    let reads: BTreeSet<Gvk> = read_kinds(manifest).map(gvk).collect();
    assert_eq!(granted.reads, reads, "reads");
    let mut writes: BTreeMap<Gvk, BTreeSet<Verb>> = BTreeMap::new();
    for permission in manifest["writes"].as_array().unwrap() {
        let verbs = permission["verbs"].as_array().unwrap().iter();
        writes
            .entry(gvk(&permission["kind"]))
            .or_default()
            .extend(verbs.map(|v| serde_json::from_value::<Verb>(v.clone()).unwrap()));
    }
    let events = writes.remove(&event_kind());
    assert_eq!(
        granted.events,
        events == Some(BTreeSet::from([Verb::Create])),
        "events"
    );
    assert_eq!(granted.writes, writes, "writes");
    assert!(
        granted.events && granted.namespaces == recon_host::policy::Namespaces::All,
        "the sample-controller records events in every namespace, as the ClusterRole allows"
    );
}

fn check_binding(binding: &Value, role_kind: &str, role_name: &str) {
    assert_eq!(
        binding["roleRef"],
        serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name}),
        "{binding}"
    );
    assert_eq!(
        binding["subjects"],
        serde_json::json!([{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}]),
        "{binding}"
    );
}

fn check_leader_election_role(role: &Value) {
    assert_eq!(role["metadata"]["namespace"], NAMESPACE, "{role}");
    let wanted: BTreeSet<_> = ["get", "create", "update"]
        .into_iter()
        .map(|v| grant("coordination.k8s.io", "leases", v))
        .collect();
    assert_eq!(grants(role), wanted);
}

/// The value of `--flag` in `args`.
fn flag<'a>(args: &[&'a str], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| *a == flag)
        .and_then(|i| args.get(i + 1).copied())
}

/// A container port by name or number.
fn container_port(container: &Value, port: &Value) -> i64 {
    if let Some(n) = port.as_i64() {
        return n;
    }
    let name = port.as_str().unwrap_or_else(|| panic!("bad port {port}"));
    container["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .and_then(|p| p["containerPort"].as_i64())
        .unwrap_or_else(|| panic!("no container port named {name}"))
}

/// Checks the Deployment; returns the pod template's labels.
fn check_deployment(deployment: &Value) -> BTreeMap<String, Value> {
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 2, "two replicas, one leading");
    let pod = &spec["template"]["spec"];
    let labels: BTreeMap<String, Value> =
        serde_json::from_value(spec["template"]["metadata"]["labels"].clone()).unwrap();
    for (k, v) in spec["selector"]["matchLabels"].as_object().unwrap() {
        assert_eq!(
            labels.get(k),
            Some(v),
            "the selector does not match the pods"
        );
    }
    assert_eq!(pod["serviceAccountName"], SERVICE_ACCOUNT);
    let grace = pod["terminationGracePeriodSeconds"].as_i64().unwrap();
    assert!(
        grace > SHUTDOWN_TIMEOUT_SECS,
        "terminationGracePeriodSeconds {grace} must exceed the host's shutdown timeout"
    );
    let pod_security = &pod["securityContext"];
    assert_eq!(pod_security["runAsNonRoot"], true);
    assert_eq!(pod_security["seccompProfile"]["type"], "RuntimeDefault");

    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    // kustomization.yaml's `images:` sets the tag.
    assert_eq!(c["image"], "recon-host:latest");

    let args = strings(&c["args"]);
    assert_eq!(args[0], "run");
    assert!(args.contains(&"--leader-elect"), "{args:?}");
    assert_eq!(flag(&args, "--leader-election-namespace"), Some(NAMESPACE));
    assert_eq!(
        flag(&args, "--leader-election-id"),
        Some("recon-host-sample-controller")
    );
    assert_eq!(flag(&args, "--log-format"), Some("json"));
    // The guest it runs is one the image carries.
    let guest = flag(&args, "--guest").expect("a --guest");
    let guest_file = guest
        .strip_prefix("/guests/")
        .expect("a guest under /guests");
    let image_guests = image_guests();
    assert!(
        image_guests.iter().any(|g| g == guest_file),
        "{guest} is not among the image's guests {image_guests:?}"
    );

    let env = c["env"].as_array().unwrap();
    let pod_name = env
        .iter()
        .find(|e| e["name"] == "POD_NAME")
        .expect("POD_NAME");
    assert_eq!(
        pod_name["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.name"
    );

    let ports: BTreeMap<String, i64> = c["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["containerPort"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ports.get("metrics"), Some(&8080), "{ports:?}");
    assert_eq!(ports.get("health"), Some(&8081), "{ports:?}");
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        let get = &c[probe]["httpGet"];
        assert_eq!(get["path"], path, "{probe}");
        assert_eq!(container_port(c, &get["port"]), 8081, "{probe}");
    }

    assert_eq!(c["resources"]["requests"]["cpu"], "100m");
    assert_eq!(c["resources"]["requests"]["memory"], "64Mi");
    assert_eq!(c["resources"]["limits"]["memory"], "256Mi");

    let sc = &c["securityContext"];
    assert_eq!(sc["readOnlyRootFilesystem"], true, "{sc}");
    assert_eq!(sc["runAsNonRoot"], true, "{sc}");
    let uid = sc["runAsUser"].as_i64().expect("runAsUser");
    assert_ne!(uid, 0, "{sc}");
    assert_eq!(
        uid,
        image_user_uid(),
        "the image's USER and runAsUser differ"
    );
    assert_eq!(sc["allowPrivilegeEscalation"], false, "{sc}");
    assert_eq!(
        sc["capabilities"]["drop"],
        serde_json::json!(["ALL"]),
        "{sc}"
    );
    assert_eq!(sc["seccompProfile"]["type"], "RuntimeDefault", "{sc}");

    // The guests compiled into the image's cache are seen: no volume hides
    // the cache directory.
    let cache_dir = image_env("RECON_CACHE_DIR");
    for mount in c["volumeMounts"].as_array().unwrap() {
        let path = mount["mountPath"].as_str().unwrap();
        assert!(
            !cache_dir.starts_with(&format!("{path}/")) && cache_dir != path,
            "{path} is mounted over the image's compiled-guest cache {cache_dir}"
        );
    }
    if let Some(e) = env.iter().find(|e| e["name"] == "RECON_CACHE_DIR") {
        assert_eq!(e["value"], cache_dir.as_str());
    }
    labels
}

fn check_service(service: &Value, deployment: &Value, pod_labels: &BTreeMap<String, Value>) {
    assert_eq!(
        service["metadata"]["annotations"]["prometheus.io/scrape"], "true",
        "{service}"
    );
    let selector = service["spec"]["selector"].as_object().unwrap();
    assert!(!selector.is_empty());
    for (k, v) in selector {
        assert_eq!(
            pod_labels.get(k),
            Some(v),
            "the Service does not select the pods"
        );
    }
    let ports = service["spec"]["ports"].as_array().unwrap();
    assert_eq!(ports.len(), 1, "{service}");
    assert_eq!(ports[0]["name"], "metrics");
    assert_eq!(ports[0]["port"], 8080);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container_port(container, &ports[0]["targetPort"]), 8080);
}

// ---------------------------------------------------------------------------
// Files checked as text

#[test]
fn crd_copy_is_identical_to_the_example() {
    assert_eq!(
        read("deploy/kustomize/crd.yaml"),
        read("examples/sample-controller/artifacts/crd.yaml"),
        "deploy/kustomize/crd.yaml drifted from examples/sample-controller/artifacts/crd.yaml: copy it again"
    );
}

/// A Containerfile's instructions, continuation lines joined, comments and
/// parser directives dropped: `(INSTRUCTION, arguments)`.
fn instructions(relative: &str) -> Vec<(String, String)> {
    let text = read(relative);
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (current.is_empty() && trimmed.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                let (instruction, args) = current
                    .split_once(char::is_whitespace)
                    .unwrap_or((&current, ""));
                out.push((instruction.to_ascii_uppercase(), args.trim().to_string()));
                current.clear();
            }
        }
    }
    assert!(current.is_empty(), "{relative} ends in a continuation");
    out
}

/// The arguments of each `instruction` in `all`, in order.
fn args_of<'a>(all: &'a [(String, String)], instruction: &str) -> Vec<&'a str> {
    all.iter()
        .filter(|(i, _)| i == instruction)
        .map(|(_, a)| a.as_str())
        .collect()
}

/// The instructions of the last stage (from its FROM on).
fn final_stage(all: &[(String, String)]) -> Vec<(String, String)> {
    let start = all.iter().rposition(|(i, _)| i == "FROM").expect("a FROM");
    all[start..].to_vec()
}

/// The image `just image` builds: deploy/Containerfile's instructions.
fn image() -> Vec<(String, String)> {
    instructions("deploy/Containerfile")
}

fn image_user_uid() -> i64 {
    let image = image();
    let user = args_of(&image, "USER").pop().expect("the image sets USER");
    let uid = user.split(':').next().unwrap();
    uid.parse()
        .unwrap_or_else(|_| panic!("USER {user}: give a numeric uid (runAsNonRoot needs one)"))
}

fn image_env(name: &str) -> String {
    args_of(&image(), "ENV")
        .into_iter()
        .flat_map(str::split_whitespace)
        .find_map(|pair| {
            pair.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('='))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| panic!("the image does not set {name}"))
}

/// The guests scripts/image stages under /guests (file names).
fn image_guests() -> Vec<String> {
    let script = read("scripts/image");
    let list = script
        .lines()
        .find_map(|l| l.strip_prefix("guests=("))
        .expect("scripts/image lists its guests: guests=(...)")
        .trim_end_matches(')');
    list.split_whitespace()
        .map(|g| format!("{g}.wasm"))
        .collect()
}

#[test]
fn image_runs_the_static_host_from_scratch_as_non_root() {
    let image = image();
    let froms = args_of(&image, "FROM");
    assert_eq!(froms, ["scratch"], "one stage, from nothing");
    assert_eq!(image_user_uid(), 65532, "the image runs as a non-root uid");

    // Two COPYs: the staged root filesystem, and the compiled-guest cache
    // owned by the user the host runs as (the host refuses a cache
    // directory of another user's).
    let copies = args_of(&image, "COPY");
    assert_eq!(
        copies,
        ["rootfs/ /", "--chown=65532:65532 cache/ /var/cache/recon/"]
    );
    assert_eq!(image_env("RECON_CACHE_DIR"), "/var/cache/recon/components");
    assert_eq!(
        image_env("SSL_CERT_FILE"),
        "/etc/ssl/certs/ca-certificates.crt"
    );
    let labels = args_of(&image, "LABEL").join(" ");
    for label in ["title", "description", "licenses", "version", "revision"] {
        assert!(
            labels.contains(&format!("org.opencontainers.image.{label}=")),
            "no org.opencontainers.image.{label} label"
        );
    }
    assert!(
        args_of(&image, "RUN").is_empty(),
        "FROM scratch has nothing to run: stage the context in scripts/image"
    );

    let entrypoint = args_of(&image, "ENTRYPOINT")
        .first()
        .map(|a| json_of(a))
        .expect("an ENTRYPOINT");
    assert_eq!(entrypoint, serde_json::json!(["/usr/local/bin/host"]));
    let cmd = args_of(&image, "CMD")
        .first()
        .map(|a| json_of(a))
        .expect("a CMD");
    let cmd = strings(&cmd);
    assert_eq!(cmd[0], "run");
    let guest = flag(&cmd, "--guest").expect("CMD runs a guest");
    let guest_file = guest
        .strip_prefix("/guests/")
        .expect("a guest under /guests");
    let guests = image_guests();
    for wanted in ["sample_controller.wasm", "configmap_mirror.wasm"] {
        assert!(guests.iter().any(|g| g == wanted), "{wanted}: {guests:?}");
    }
    assert!(
        guests.iter().any(|g| g == guest_file),
        "{guest}: {guests:?}"
    );
    let exposed: BTreeSet<&str> = args_of(&image, "EXPOSE")
        .into_iter()
        .flat_map(str::split_whitespace)
        .collect();
    assert_eq!(exposed, BTreeSet::from(["8080", "8081"]));
}

#[test]
fn dockerfile_builds_the_image_just_image_builds() {
    let all = instructions("deploy/Dockerfile");
    let froms = args_of(&all, "FROM");
    assert_eq!(
        froms.len(),
        3,
        "an npm stage, a build stage and the image: {froms:?}"
    );

    // The builder's Rust is the workspace's rust-version, and it stages the
    // context with the script `just image` uses.
    let cargo_toml = read("Cargo.toml");
    let rust_version = cargo_toml
        .lines()
        .find_map(|l| l.trim().strip_prefix("rust-version = "))
        .expect("rust-version in Cargo.toml")
        .trim_matches('"');
    assert_eq!(
        froms[1],
        &format!("rust:{rust_version}-slim-bookworm AS build"),
        "the builder image is pinned to the workspace's rust-version"
    );
    let build = args_of(&all, "RUN").join("\n");
    for needle in [
        "npm ci --ignore-scripts",
        "musl-tools",
        "rustup target add wasm32-wasip2 x86_64-unknown-linux-musl",
        "bash scripts/image stage /out",
    ] {
        assert!(build.contains(needle), "the build does not run {needle:?}");
    }
    // scripts/image shrinks the guests with jco (scripts/optimize-guests):
    // Node.js 20 (guest-sdk-js's engines) and the locked npm packages come
    // from the npm stage into the build stage.
    assert!(froms[0].starts_with("node:20-"), "{froms:?}");
    let copies = args_of(&all, "COPY").join("\n");
    for needle in [
        "--from=npm /usr/local/bin/node /usr/local/bin/node",
        "--from=npm /src/guest-sdk-js/node_modules guest-sdk-js/node_modules",
    ] {
        assert!(copies.contains(needle), "the build stage lacks {needle:?}");
    }

    // The final stage is deploy/Containerfile with its context taken from
    // the build stage's /out.
    let from_build: Vec<(String, String)> = final_stage(&all)
        .into_iter()
        .map(|(instruction, args)| {
            let args = match args.strip_prefix("--from=build ") {
                Some(rest) => rest.replace("/out/", ""),
                None => args,
            };
            (instruction, args)
        })
        .collect();
    assert_eq!(from_build, image());

    // The build context is the repository root: target/ and .git stay out.
    let ignore = read(".dockerignore");
    let ignored: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    for wanted in ["target", ".git", "**/node_modules"] {
        assert!(
            ignored.iter().any(|l| l.trim_matches('/') == wanted),
            ".dockerignore does not exclude {wanted}"
        );
    }
}

// ---------------------------------------------------------------------------
// Grafana dashboard

/// Metric names a PromQL expression selects: identifiers that are not
/// functions, aggregations, keywords or label names, with label matchers,
/// ranges and strings skipped.
fn promql_metrics(expr: &str) -> Vec<String> {
    const AGGREGATIONS: &[&str] = &[
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
        "limitk",
        "limit_ratio",
    ];
    const KEYWORDS: &[&str] = &["bool", "and", "or", "unless", "offset", "inf", "nan"];
    const GROUPING: &[&str] = &[
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
    ];
    let chars: Vec<char> = expr.chars().collect();
    let mut names = Vec::new();
    let mut i = 0;
    // From the quote at `i` to just past the closing one.
    let skip_string = |mut i: usize| -> usize {
        let quote = chars[i];
        i += 1;
        while i < chars.len() && chars[i] != quote {
            if chars[i] == '\\' {
                i += 1;
            }
            i += 1;
        }
        assert!(i < chars.len(), "unterminated string in {expr}");
        i + 1
    };
    // From the opening delimiter at `i` to just past its match.
    let skip = |mut i: usize, open: char, close: char| -> usize {
        let mut depth = 0;
        while i < chars.len() {
            match chars[i] {
                '"' | '\'' | '`' => {
                    i = skip_string(i);
                    continue;
                }
                c if c == open => depth += 1,
                c if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        panic!("unbalanced {open}{close} in {expr}");
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            i = skip(i, '{', '}');
        } else if c == '[' {
            i = skip(i, '[', ']');
        } else if c == '"' || c == '\'' || c == '`' {
            i = skip_string(i);
        } else if c.is_ascii_digit() || c == '.' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || "_:".contains(chars[i])) {
                i += 1;
            }
            let ident: String = chars[start..i].iter().collect();
            let mut next = i;
            while next < chars.len() && chars[next].is_whitespace() {
                next += 1;
            }
            let call = chars.get(next) == Some(&'(');
            if GROUPING.contains(&ident.as_str()) {
                if call {
                    i = skip(next, '(', ')');
                }
            } else if AGGREGATIONS.contains(&ident.as_str())
                || KEYWORDS.contains(&ident.to_ascii_lowercase().as_str())
                || call
            {
                // A function, an aggregation or a keyword.
            } else {
                names.push(ident);
            }
        } else {
            i += 1;
        }
    }
    names
}

#[test]
fn promql_metric_extraction() {
    assert_eq!(
        promql_metrics(
            r#"histogram_quantile(0.99, sum by (le, name) (rate(workqueue_work_duration_seconds_bucket{name=~"$guest", x="a{b}"}[$__rate_interval])))"#
        ),
        ["workqueue_work_duration_seconds_bucket"]
    );
    assert_eq!(
        promql_metrics(
            "sum without (instance) (a_total) / on (job) group_left (x) max(b) > bool 1e3"
        ),
        ["a_total", "b"]
    );
}

#[test]
fn dashboard_queries_exactly_the_listed_metrics() {
    let listed_text = read("deploy/grafana/metrics.txt");
    let listed: Vec<&str> = listed_text.lines().collect();
    let known: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(known.len(), listed.len(), "duplicates in metrics.txt");
    for name in &listed {
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "metrics.txt: {name:?} is not a metric name"
        );
    }

    let dashboard = json_of(&read("deploy/grafana/recon-dashboard.json"));
    assert!(dashboard["title"].is_string());
    assert!(dashboard["schemaVersion"].as_i64().unwrap() >= 36);
    let variables = dashboard["templating"]["list"].as_array().unwrap();
    let variable = |name: &str| {
        variables
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("no ${name} variable"))
    };
    let datasource = variable("datasource");
    assert_eq!(datasource["type"], "datasource");
    assert_eq!(datasource["query"], "prometheus");
    let guest = variable("guest");
    assert_eq!(
        guest["query"]["query"],
        "label_values(workqueue_depth, name)"
    );

    let panels = dashboard["panels"].as_array().unwrap();
    let mut ids = BTreeSet::new();
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut queries = 0;
    for panel in panels {
        let id = panel["id"].as_i64().expect("panel id");
        assert!(ids.insert(id), "panel id {id} repeats");
        assert!(panel["gridPos"]["w"].as_i64().unwrap() > 0);
        if panel["type"] == "row" {
            continue;
        }
        let title = panel["title"].as_str().unwrap();
        assert_eq!(panel["datasource"]["uid"], "${datasource}", "{title}");
        let targets = panel["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "{title} has no query");
        for target in targets {
            let expr = target["expr"].as_str().unwrap();
            let names = promql_metrics(expr);
            assert!(!names.is_empty(), "{title}: no metric in {expr}");
            for name in names {
                let base = if known.contains(name.as_str()) {
                    name.as_str()
                } else {
                    ["_bucket", "_sum", "_count"]
                        .iter()
                        .find_map(|s| name.strip_suffix(s))
                        .unwrap_or(&name)
                };
                assert!(
                    known.contains(base),
                    "{title}: {name} (in {expr}) is not in deploy/grafana/metrics.txt"
                );
                if name.ends_with("_bucket") {
                    assert!(
                        expr.contains("histogram_quantile") && expr.contains("by (le"),
                        "{title}: {name} outside histogram_quantile by le"
                    );
                }
                used.insert(base.to_string());
            }
            queries += 1;
        }
    }
    assert!(queries > 0, "the dashboard has no queries");
    let unused: Vec<&&str> = known.iter().filter(|n| !used.contains(**n)).collect();
    assert!(unused.is_empty(), "no panel shows {unused:?}");
}
