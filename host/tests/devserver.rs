//! The dev API server against kubectl (the `host dev-server` binary and the
//! in-process server) and at the HTTP level (discovery, Status errors, watch
//! streaming, bookmarks, 410 after compaction, fault injection).

#[path = "devserver/differential.rs"]
mod differential;
#[path = "devserver/http.rs"]
mod http_client;
#[path = "devserver/kubectl.rs"]
mod kubectl;

use std::process::Stdio;
use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use recon_devserver::{DevServer, DevServerConfig, DevServerHandle};
use serde_json::{Value, json};

use http_client::{
    WatchStream, call, call_accepting, call_as, call_text, get, get_accepting, get_bytes,
    merge_patch, patch, post, put,
};
use kubectl::{
    Kubectl, ServerProcess, TempDir, kubectl_server, line_reader, require_kubectl, wait_for_line,
};

const CONFIGMAP: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels:
    app: demo
data:
  color: blue
"#;

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: REPLICAS
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
"#;

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.samplecontroller.k8s.io
spec:
  group: samplecontroller.k8s.io
  scope: Namespaced
  names:
    kind: Foo
    plural: foos
    singular: foo
    listKind: FooList
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Deployment
      type: string
      jsonPath: .spec.deploymentName
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

const FOO: &str = r#"apiVersion: samplecontroller.k8s.io/v1alpha1
kind: Foo
metadata:
  name: example-foo
spec:
  deploymentName: example-foo
  replicas: 1
"#;

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The whole kubectl workflow against the `host dev-server` binary over HTTPS.
#[test]
fn kubectl_workflow_against_the_binary() {
    require_kubectl();
    let dir = TempDir::new("kubectl");
    let mut server = ServerProcess::spawn(&dir.0, &["--bookmark-interval", "1s"]);
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    let k = Kubectl::new(&server.kubeconfig, &dir.0);

    // The server answers with its version and the built-in namespaces.
    let version = json_of(&k.ok(&["version", "-o", "json"]));
    assert_eq!(version["serverVersion"]["gitVersion"], "v1.33.0-recon-dev");
    assert!(k.ok(&["get", "namespaces"]).contains("default"));
    assert!(
        k.ok(&["get", "ns"]).contains("kube-system"),
        "short names resolve"
    );

    // apply: a ConfigMap, a Deployment (twice: the second sends a strategic
    // merge patch), a CRD and an instance of it.
    assert!(
        k.apply(&dir.0, "cm.yaml", CONFIGMAP)
            .contains("configmap/settings created")
    );
    let dep1 = DEPLOYMENT.replace("REPLICAS", "1");
    assert!(
        k.apply(&dir.0, "dep.yaml", &dep1)
            .contains("deployment.apps/web created")
    );
    let dep2 = DEPLOYMENT
        .replace("REPLICAS", "2")
        .replace("nginx:1.27", "nginx:1.28");
    assert!(
        k.apply(&dir.0, "dep.yaml", &dep2)
            .contains("deployment.apps/web configured")
    );
    assert!(k.apply(&dir.0, "crd.yaml", CRD).contains("created"));
    let foo_path = dir.0.join("foo.yaml");
    std::fs::write(&foo_path, FOO).unwrap();
    let out = k.ok_eventually(&["apply", "-f", foo_path.to_str().unwrap()], 25);
    assert!(
        out.contains("foo.samplecontroller.k8s.io/example-foo created"),
        "{out}"
    );

    // get, also as JSON.
    assert!(k.ok(&["get", "cm"]).contains("settings"));
    let cm = json_of(&k.ok(&["get", "configmap", "settings", "-o", "json"]));
    assert_eq!(cm["data"]["color"], "blue");
    assert_eq!(cm["metadata"]["labels"]["app"], "demo");
    assert!(
        cm["metadata"]["uid"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let dep = json_of(&k.ok(&["get", "deployment", "web", "-o", "json"]));
    assert_eq!(dep["spec"]["replicas"], 2);
    let containers = &dep["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers.as_array().map(Vec::len), Some(1), "{dep}");
    assert_eq!(containers[0]["image"], "nginx:1.28");
    assert_eq!(containers[0]["name"], "nginx");
    assert!(!dep.to_string().contains("$setElementOrder"), "{dep}");
    let all = k.ok(&["get", "all"]);
    assert!(all.lines().any(|l| l.contains("web")), "{all}");
    let foo = json_of(&k.ok(&["get", "foos", "example-foo", "-o", "json"]));
    assert_eq!(foo["spec"]["deploymentName"], "example-foo");
    assert_eq!(foo["kind"], "Foo");
    // The CRD's printer columns, and the built-in kinds' printers', from
    // the server's Tables.
    let printed = |args: &[&str]| {
        let out = k.ok(args);
        let words = |line: Option<&str>| -> Vec<String> {
            line.unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect()
        };
        let mut lines = out.lines();
        (words(lines.next()), words(lines.next()), out.clone())
    };
    let (header, row, foos) = printed(&["get", "foos"]);
    assert_eq!(header, ["NAME", "DEPLOYMENT", "REPLICAS", "AGE"], "{foos}");
    assert_eq!(row[..3], ["example-foo", "example-foo", "1"], "{foos}");
    assert!(row[3].ends_with('s'), "an age in seconds: {foos}");
    let (header, row, web) = printed(&["get", "deployment", "web"]);
    assert_eq!(
        header,
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        "{web}"
    );
    assert_eq!(row[..4], ["web", "0/2", "0", "0"], "{web}");
    let (header, row, settings) = printed(&["get", "configmap", "settings", "-o", "wide"]);
    assert_eq!(header, ["NAME", "DATA", "AGE"], "{settings}");
    assert_eq!(row[..2], ["settings", "1"], "{settings}");

    // get -w sees a change made meanwhile, printed in the Table's columns
    // (the watch's Tables after the first carry none).
    let mut watcher = k
        .command(&["get", "configmaps", "-w"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn kubectl get -w");
    let lines = line_reader(watcher.stdout.take().unwrap());
    wait_for_line(&lines, "settings", Duration::from_secs(30));
    k.apply(
        &dir.0,
        "cm2.yaml",
        &CONFIGMAP.replace("name: settings", "name: created-while-watching"),
    );
    let watched = wait_for_line(&lines, "created-while-watching", Duration::from_secs(30));
    let cells: Vec<&str> = watched.split_whitespace().collect();
    assert_eq!(cells[..2], ["created-while-watching", "1"], "{watched}");
    let _ = watcher.kill();
    let _ = watcher.wait();

    // patch: merge and JSON.
    k.ok(&[
        "patch",
        "configmap",
        "settings",
        "--type=merge",
        "-p",
        r#"{"data":{"size":"L"}}"#,
    ]);
    k.ok(&[
        "patch",
        "configmap",
        "settings",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/data/color","value":"red"}]"#,
    ]);
    let cm = json_of(&k.ok(&["get", "configmap", "settings", "-o", "json"]));
    assert_eq!(cm["data"], json!({"color": "red", "size": "L"}));

    // scale through the scale subresource.
    assert!(
        k.ok(&["scale", "deployment", "web", "--replicas=3"])
            .contains("scaled")
    );
    let replicas = k.ok(&[
        "get",
        "deployment",
        "web",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(replicas.trim(), "3");

    // delete.
    assert!(
        k.ok(&["delete", "configmap", "settings"])
            .contains("deleted")
    );
    let out = k.run(&["get", "configmap", "settings"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("NotFound"));
    assert!(k.ok(&["delete", "foo", "example-foo"]).contains("deleted"));

    // The generators of `kubectl create <kind>` send protobuf, decoded for
    // every built-in kind.
    k.ok(&["create", "namespace", "made-by-generator"]);
    k.ok(&[
        "create",
        "configmap",
        "gen",
        "-n",
        "made-by-generator",
        "--from-literal=a=b",
    ]);
    k.ok(&[
        "create",
        "secret",
        "generic",
        "gen",
        "--from-literal=p=secret",
    ]);
    k.ok(&["create", "serviceaccount", "gen"]);
    let cm = json_of(&k.ok(&["get", "cm", "gen", "-n", "made-by-generator", "-o", "json"]));
    assert_eq!(cm["data"], json!({"a": "b"}));
    let secret = json_of(&k.ok(&["get", "secret", "gen", "-o", "json"]));
    assert_eq!(secret["data"], json!({"p": "c2VjcmV0"}));
    k.ok(&[
        "create",
        "deployment",
        "gen",
        "--image=nginx",
        "--replicas=0",
    ]);
    let deployment = json_of(&k.ok(&["get", "deployment", "gen", "-o", "json"]));
    // A pointer's zero is kept; the zeros Go writes for the fields that are
    // no pointers (`paused`, `minReadySeconds`) are not; defaults follow.
    assert_eq!(deployment["spec"]["replicas"], 0, "{deployment}");
    assert_eq!(
        deployment["spec"]["selector"],
        json!({"matchLabels": {"app": "gen"}})
    );
    assert_eq!(deployment["spec"]["strategy"]["type"], "RollingUpdate");
    assert!(deployment["spec"].get("paused").is_none(), "{deployment}");
    assert!(
        deployment["spec"].get("minReadySeconds").is_none(),
        "{deployment}"
    );
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx");
    assert_eq!(container["imagePullPolicy"], "Always");
    k.ok(&["create", "service", "clusterip", "gen", "--tcp=80:8080"]);
    let service = json_of(&k.ok(&["get", "service", "gen", "-o", "json"]));
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}])
    );

    // A wrong token is refused.
    let out = k.run(&["--token=wrong", "get", "namespaces"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Unauthorized"), "{stderr}");

    // SIGTERM stops it cleanly.
    let status = server.terminate();
    assert!(status.success(), "exit status {status:?}");
}

/// `kubectl get CATEGORY` finds a custom resource through the categories
/// its CRD names, as discovery lists them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_gets_the_kinds_of_a_category_a_crd_names() {
    let (dir, server, kubeconfig) = kubectl_server("categories").await;
    let store = server.store();
    let crds = store
        .resource_type("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .unwrap();
    let crd = json!({
        "metadata": {"name": "ships.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "ships", "singular": "ship", "kind": "Ship", "categories": ["fleet"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    });
    store.create(&crds, None, crd, None).unwrap();
    let ships = store.resource_type("example.com", "v1", "ships").unwrap();
    let ship =
        json!({"apiVersion": "example.com/v1", "kind": "Ship", "metadata": {"name": "argo"}});
    store.create(&ships, Some("default"), ship, None).unwrap();
    let listed = tokio::task::spawn_blocking(move || {
        let k = Kubectl::new(&kubeconfig, &dir.0);
        k.ok(&["get", "fleet", "--no-headers", "-o", "name"])
    })
    .await
    .unwrap();
    assert_eq!(listed.trim(), "ship.example.com/argo");
    server.shutdown().await;
}

/// `kubectl explain` reads a built-in kind's schema, and the schemas it
/// refers to, from the server's OpenAPI v3 document of its group/version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explains_built_in_kinds() {
    let (dir, server, kubeconfig) = kubectl_server("explain").await;
    let (replicas, ports) = tokio::task::spawn_blocking(move || {
        let k = Kubectl::new(&kubeconfig, &dir.0);
        (
            k.ok(&["explain", "deployments.spec.replicas"]),
            k.ok(&["explain", "pods.spec.containers.ports"]),
        )
    })
    .await
    .unwrap();
    assert!(replicas.contains("GROUP:      apps"), "{replicas}");
    assert!(replicas.contains("FIELD: replicas <integer>"), "{replicas}");
    assert!(
        replicas.contains("Number of desired pods."),
        "the field's description: {replicas}"
    );
    assert!(ports.contains("FIELD: ports <[]ContainerPort>"), "{ports}");
    assert!(
        ports.contains("containerPort\t<integer> -required-"),
        "{ports}"
    );
    server.shutdown().await;
}

/// The kinds a controller beyond Deployments meets, as kubectl applies,
/// lists and prints them: Jobs and CronJobs (in `all`, with an HPA), claims,
/// Nodes (their Table's status and roles from conditions and labels),
/// Ingresses, PodDisruptionBudgets, StorageClasses, PriorityClasses and
/// NetworkPolicies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_lists_and_prints_the_other_built_in_kinds() {
    let (dir, server, kubeconfig) = kubectl_server("kinds").await;
    let (applied, listed, all, nodes) = tokio::task::spawn_blocking(move || {
        let k = Kubectl::new(&kubeconfig, &dir.0);
        let applied = k.apply(&dir.0, "kinds.yaml", OTHER_KINDS);
        let listed = k.ok(&[
            "get",
            "jobs,cronjobs,pvc,ingresses,hpa,pdb,storageclasses,priorityclasses,netpol",
            "-o",
            "name",
        ]);
        let all = k.ok(&["get", "all", "-o", "name"]);
        let nodes = k.ok(&["get", "nodes", "--no-headers"]);
        (applied, listed, all, nodes)
    })
    .await
    .unwrap();
    assert_eq!(applied.lines().count(), 10, "{applied}");
    let mut listed: Vec<&str> = listed.lines().collect();
    listed.sort_unstable();
    assert_eq!(
        listed,
        [
            "cronjob.batch/hello",
            "horizontalpodautoscaler.autoscaling/web",
            "ingress.networking.k8s.io/web",
            "job.batch/pi",
            "networkpolicy.networking.k8s.io/deny",
            "persistentvolumeclaim/data",
            "poddisruptionbudget.policy/web",
            "priorityclass.scheduling.k8s.io/high",
            "storageclass.storage.k8s.io/fast",
        ]
    );
    for name in [
        "job.batch/pi",
        "cronjob.batch/hello",
        "horizontalpodautoscaler.autoscaling/web",
    ] {
        assert!(all.lines().any(|line| line == name), "{name} in {all}");
    }
    let columns: Vec<&str> = nodes.split_whitespace().collect();
    assert_eq!(
        columns[..3],
        ["node-1", "Ready", "control-plane"],
        "{nodes}"
    );
    assert_eq!(columns[4], "v1.33.1", "{nodes}");
    server.shutdown().await;
}

/// One object of each kind `kubectl_applies_lists_and_prints_the_other_built_in_kinds` applies.
const OTHER_KINDS: &str = r#"apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  template:
    metadata: {labels: {app: pi}}
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: perl}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: hello}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {node-role.kubernetes.io/control-plane: ""}}
status:
  conditions: [{type: Ready, status: "True"}]
  nodeInfo: {kubeletVersion: v1.33.1}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  rules: [{host: example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 5
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: example.com/fast
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny}
spec: {podSelector: {}}
"#;

/// A CRD whose kind, Widget, has a schema with a described field.
const WIDGET_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: integer
                description: How big the widget is.
              note:
                type: string
                nullable: true
"#;

/// kubectl reads `/openapi/v2` (protobuf) where it still uses Swagger 2.0:
/// `kubectl explain --output=plaintext-openapiv2` finds a built-in kind's
/// and a custom resource's fields there, and a `kind: List` file, which
/// kubectl validates itself against those schemas, is refused for unknown
/// fields of a built-in kind and of a custom resource (nothing is created)
/// and applied when its objects are valid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_reads_the_openapi_v2_document() {
    let (dir, server, kubeconfig) = kubectl_server("openapi-v2").await;
    tokio::task::spawn_blocking(move || {
        let k = Kubectl::new(&kubeconfig, &dir.0);
        let replicas = k.ok(&[
            "explain",
            "deployments.spec.replicas",
            "--output=plaintext-openapiv2",
        ]);
        assert!(replicas.contains("KIND:     Deployment"), "{replicas}");
        assert!(replicas.contains("FIELD:    replicas <integer>"), "{replicas}");
        assert!(replicas.contains("Number of desired pods."), "{replicas}");

        k.apply(&dir.0, "crd.yaml", WIDGET_CRD);
        let size = k.ok_eventually(
            &["explain", "widgets.spec.size", "--output=plaintext-openapiv2"],
            50,
        );
        assert!(size.contains("VERSION:  example.com/v1"), "{size}");
        assert!(size.contains("FIELD:    size <integer>"), "{size}");
        assert!(size.contains("How big the widget is."), "{size}");

        let invalid = dir.0.join("invalid.yaml");
        std::fs::write(
            &invalid,
            "apiVersion: v1\nkind: List\nitems:\n\
             - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}, datta: {x: y}}\n\
             - {apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {size: 2, colour: red}}\n",
        )
        .unwrap();
        let refused = k.run(&["apply", "-f", invalid.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success(), "{stderr}");
        assert!(
            stderr.contains(r#"unknown field "datta" in io.k8s.api.core.v1.ConfigMap"#),
            "{stderr}"
        );
        assert!(
            stderr.contains(r#"unknown field "colour" in com.example.v1.Widget.spec"#),
            "{stderr}"
        );
        let missing = k.run(&["get", "configmap", "a"]);
        assert!(!missing.status.success(), "the list was not applied");

        let valid = DEPLOYMENT.replace("REPLICAS", "1").replace('\n', "\n  ");
        let list = format!(
            "apiVersion: v1\nkind: List\nitems:\n- {valid}\n\
             - {{apiVersion: example.com/v1, kind: Widget, metadata: {{name: w}}, spec: {{size: 2, note: null}}}}\n"
        );
        let applied = k.apply(&dir.0, "valid.yaml", &list);
        assert!(applied.contains("deployment.apps/web created"), "{applied}");
        assert!(applied.contains("widget.example.com/w created"), "{applied}");
    })
    .await
    .unwrap();
    server.shutdown().await;
}

/// `kubectl apply --server-side` by two field managers: the second one's
/// change of the first one's field is refused with kubectl's conflict
/// report, `--force-conflicts` takes the field over, and a field the
/// manager stops applying goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_server_side_apply_conflicts_and_forces() {
    let (dir, server, kubeconfig) = kubectl_server("ssa").await;
    tokio::task::spawn_blocking(move || {
        let k = Kubectl::new(&kubeconfig, &dir.0);
        let path = dir.0.join("settings.yaml");
        let write = |data: &str| {
            let text = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n{data}"
            );
            std::fs::write(&path, text).unwrap();
        };
        let apply = |manager: &str, extra: &[&str]| {
            let mut args = vec!["apply", "--server-side", "--field-manager", manager, "-f"];
            args.push(path.to_str().unwrap());
            args.extend_from_slice(extra);
            k.run(&args)
        };
        write("  level: info\n  mode: fast\n");
        assert!(apply("ops", &[]).status.success());
        write("  level: debug\n");
        let refused = apply("dev", &[]);
        assert!(!refused.status.success());
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains("conflict")
                && stderr.contains(".data.level")
                && stderr.contains("\"ops\""),
            "{stderr}"
        );
        assert!(apply("dev", &["--force-conflicts"]).status.success());
        let data = k.ok(&["get", "configmap", "settings", "-o", "jsonpath={.data}"]);
        assert_eq!(data, r#"{"level":"debug","mode":"fast"}"#);
        // ops stops applying mode, which goes, and applies dev's level: both
        // own it now.
        write("  level: debug\n");
        assert!(apply("ops", &[]).status.success());
        let data = k.ok(&["get", "configmap", "settings", "-o", "jsonpath={.data}"]);
        assert_eq!(data, r#"{"level":"debug"}"#);
        let managers = k.ok(&[
            "get",
            "configmap",
            "settings",
            "-o",
            "jsonpath={range .metadata.managedFields[*]}{.manager}/{.operation} {end}",
        ]);
        assert_eq!(managers.trim(), "ops/Apply dev/Apply");
    })
    .await
    .unwrap();
    server.shutdown().await;
}

/// `kubectl get --chunk-size=10` pages through 25 ConfigMaps with `limit` and
/// `continue` (in-process server, TLS, request log).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_pages_with_chunk_size() {
    let (dir, server, kubeconfig) = kubectl_server("paging").await;
    let store_writes = {
        let kubeconfig = kubeconfig.clone();
        let cache = dir.0.clone();
        tokio::task::spawn_blocking(move || {
            let k = Kubectl::new(&kubeconfig, &cache);
            let items: Vec<Value> = (0..25)
                .map(|i| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("page-{i:02}")}}))
                .collect();
            let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
            let path = cache.join("pages.json");
            std::fs::write(&path, list.to_string()).unwrap();
            k.ok(&["apply", "-f", path.to_str().unwrap()]);
            k.ok(&["get", "configmaps", "--chunk-size=10", "--no-headers"])
        })
    };
    server.clear_request_log();
    let listed = store_writes.await.unwrap();
    let names: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let expected: Vec<String> = (0..25).map(|i| format!("page-{i:02}")).collect();
    assert_eq!(names, expected);
    let log = server.request_log();
    let pages: Vec<&String> = log
        .iter()
        .filter(|l| {
            l.starts_with("GET /api/v1/namespaces/default/configmaps?") && l.contains("limit=10")
        })
        .collect();
    assert_eq!(pages.len(), 3, "{log:#?}");
    assert!(!pages[0].contains("continue="), "{}", pages[0]);
    assert!(
        pages[1].contains("continue=") && pages[2].contains("continue="),
        "{pages:?}"
    );
    server.shutdown().await;
}

// ---------------------------------------------------------------------------
// HTTP level (in-process server over plain HTTP)

async fn plain_server(bookmark_interval: Duration) -> DevServerHandle {
    DevServer::start(DevServerConfig {
        tls: false,
        bookmark_interval,
        ..DevServerConfig::default()
    })
    .await
    .expect("start the dev server")
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn assert_status(body: &Value, code: u16, reason: &str) {
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["apiVersion"], "v1", "{body}");
    assert_eq!(body["status"], "Failure", "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["reason"], reason, "{body}");
}

#[tokio::test]
async fn discovery_documents() {
    let h = plain_server(Duration::from_secs(60)).await;
    let v = get(&h, "/version").await;
    assert_eq!(v.status, StatusCode::OK);
    assert_eq!(v.body["gitVersion"], "v1.33.0-recon-dev");

    let api = get(&h, "/api").await.body;
    assert_eq!(api["kind"], "APIVersions");
    assert_eq!(api["versions"], json!(["v1"]));

    let core = get(&h, "/api/v1").await.body;
    assert_eq!(core["kind"], "APIResourceList");
    assert_eq!(core["groupVersion"], "v1");
    let names: Vec<&str> = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    for expected in ["namespaces", "configmaps", "pods", "pods/status"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let cm = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "configmaps")
        .unwrap();
    assert_eq!(cm["kind"], "ConfigMap");
    assert_eq!(cm["namespaced"], true);
    assert!(cm["verbs"].as_array().unwrap().contains(&json!("watch")));

    let groups = get(&h, "/apis").await.body;
    assert_eq!(groups["kind"], "APIGroupList");
    let apps = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "apps")
        .expect("apps group");
    assert_eq!(apps["preferredVersion"]["groupVersion"], "apps/v1");

    let group = get(&h, "/apis/apps").await.body;
    assert_eq!(group["kind"], "APIGroup");
    assert_eq!(group["name"], "apps");

    let apps_v1 = get(&h, "/apis/apps/v1").await.body;
    let scale = apps_v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .expect("deployments/scale");
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["group"], "autoscaling");

    let openapi = get(&h, "/openapi/v3").await.body;
    assert_eq!(
        openapi["paths"]["api/v1"]["serverRelativeURL"],
        "/openapi/v3/api/v1"
    );
    let gv = get(&h, "/openapi/v3/apis/apps/v1").await;
    assert_eq!(gv.status, StatusCode::OK);
    assert_eq!(gv.body["openapi"], "3.0.0");

    let missing = get(&h, "/apis/nothing.example.com").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_status(&missing.body, 404, "NotFound");
    h.shutdown().await;
}

/// `/openapi/v2` answers JSON or protobuf as `Accept` asks (406 to
/// anything else), with an ETag that an `If-None-Match` gets a 304 for;
/// a CRD's kind is in the next document, under a new ETag.
#[tokio::test]
async fn openapi_v2_answers_json_or_protobuf_with_every_served_kind() {
    const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
    let h = plain_server(Duration::from_secs(60)).await;
    let json_accept = [("accept", "application/json")];
    let (status, headers, body) = get_bytes(&h, "/openapi/v2", &json_accept).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["vary"], "Accept");
    let etag = headers["etag"].to_str().unwrap().to_string();
    let doc: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(doc["swagger"], "2.0");
    assert_eq!(
        doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert!(
        patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation"),
        "{patch}"
    );

    // kubectl's Accept: the protobuf type in its older spelling.
    let kubectl_accept = [(
        "accept",
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    )];
    let (status, headers, body) = get_bytes(&h, "/openapi/v2", &kubectl_accept).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], PROTOBUF);
    assert_eq!(headers["etag"], etag.as_str());
    // `swagger` (field 1) is "2.0", `info` (field 2) follows.
    assert_eq!(&body[..6], b"\x0a\x032.0\x12");
    assert!(body.len() > 100_000, "{} bytes", body.len());

    let unchanged = [("accept", PROTOBUF), ("if-none-match", etag.as_str())];
    let (status, _, body) = get_bytes(&h, "/openapi/v2", &unchanged).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert!(body.is_empty());
    let (status, headers, body) = get_bytes(&h, "/openapi/v2", &[("accept", "text/html")]).await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(headers["vary"], "Accept");
    assert!(body.is_empty());

    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                              "spec": {"type": "object", "properties": {
                                  "size": {"type": "integer", "default": 1},
                                  "note": {"type": "string", "nullable": true}}}}}}}]
        }
    });
    let r = post(
        &h,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let deadline = Instant::now() + Duration::from_secs(10);
    let (headers, doc) = loop {
        let (_, headers, body) = get_bytes(&h, "/openapi/v2", &json_accept).await;
        let doc: Value = serde_json::from_slice(&body).unwrap();
        if doc["definitions"].get("com.example.v1.Widget").is_some() || Instant::now() > deadline {
            break (headers, doc);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_ne!(headers["etag"], etag.as_str());
    let widget = &doc["definitions"]["com.example.v1.Widget"];
    assert_eq!(
        widget["x-kubernetes-group-version-kind"],
        json!([{"group": "example.com", "kind": "Widget", "version": "v1"}])
    );
    assert_eq!(
        widget["properties"]["spec"]["properties"],
        json!({"size": {"type": "integer"}, "note": {}})
    );
    assert_eq!(
        widget["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    h.shutdown().await;
}

#[tokio::test]
async fn a_crd_kind_is_discoverable_and_served() {
    let h = plain_server(Duration::from_secs(60)).await;
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "foos.samplecontroller.k8s.io"},
        "spec": {
            "group": "samplecontroller.k8s.io",
            "scope": "Namespaced",
            "names": {"kind": "Foo", "plural": "foos", "singular": "foo", "listKind": "FooList"},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                          "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    });
    let r = post(
        &h,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let path = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos";
    let deadline = Instant::now() + Duration::from_secs(10);
    let created = loop {
        let r = post(
            &h,
            path,
            json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo", "metadata": {"name": "f1"}, "spec": {"x": 1}}),
        )
        .await;
        if r.status == StatusCode::CREATED || Instant::now() > deadline {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let gv = get(&h, "/apis/samplecontroller.k8s.io/v1alpha1").await.body;
    let names: Vec<&str> = gv["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"foos") && names.contains(&"foos/status"),
        "{names:?}"
    );
    let groups = get(&h, "/apis").await.body;
    assert!(
        groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "samplecontroller.k8s.io"),
        "{groups}"
    );
    let list = get(&h, path).await.body;
    assert_eq!(list["kind"], "FooList");
    assert_eq!(list["apiVersion"], "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(list["items"][0]["metadata"]["name"], "f1");
    h.shutdown().await;
}

#[tokio::test]
async fn bearer_token_is_required() {
    let h = plain_server(Duration::from_secs(60)).await;
    let none = call_as(&h, Method::GET, "/api/v1/namespaces", None, None, None).await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED);
    assert_status(&none.body, 401, "Unauthorized");
    let wrong = call_as(
        &h,
        Method::GET,
        "/api/v1/namespaces",
        None,
        None,
        Some("nope"),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    let admin = call_as(
        &h,
        Method::POST,
        "/recon-admin/compact",
        None,
        None,
        Some("nope"),
    )
    .await;
    assert_eq!(admin.status, StatusCode::UNAUTHORIZED);
    let health = call_as(&h, Method::GET, "/healthz", None, None, None).await;
    assert_eq!(health.status, StatusCode::OK);
    let ok = get(&h, "/api/v1/namespaces").await;
    assert_eq!(ok.status, StatusCode::OK);
    assert_eq!(h.token().len(), 32);
    assert!(h.token().chars().all(|c| c.is_ascii_hexdigit()));
    h.shutdown().await;
}

#[tokio::test]
async fn crud_lists_and_status_errors() {
    let h = plain_server(Duration::from_secs(60)).await;
    let created = post(&h, CMS, configmap("a")).await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(created.body["metadata"]["namespace"], "default");
    let rv = created.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();

    // 409 AlreadyExists, 404 NotFound, 404 for an unknown resource.
    let again = post(&h, CMS, configmap("a")).await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_status(&again.body, 409, "AlreadyExists");
    let missing = get(&h, &format!("{CMS}/nope")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_status(&missing.body, 404, "NotFound");
    let unknown = get(&h, "/api/v1/namespaces/default/widgets").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_status(&unknown.body, 404, "NotFound");
    // Outside the API, kube-apiserver's path mux answers in plain text.
    let elsewhere = get(&h, "/no/such/path").await;
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND);
    assert_eq!(
        elsewhere.headers["content-type"],
        "text/plain; charset=utf-8"
    );
    assert_eq!(elsewhere.body, Value::Null, "not a Status");
    let cluster_scoped_in_ns = get(&h, "/api/v1/namespaces/default/namespaces").await;
    assert_eq!(cluster_scoped_in_ns.status, StatusCode::NOT_FOUND);

    // Update, then a stale update → 409 Conflict.
    let mut obj = created.body.clone();
    obj["data"]["k"] = json!("v2");
    let updated = put(&h, &format!("{CMS}/a"), obj.clone()).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.body);
    assert_eq!(updated.body["data"]["k"], "v2");
    obj["metadata"]["resourceVersion"] = json!(rv);
    let stale = put(&h, &format!("{CMS}/a"), obj).await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    assert_status(&stale.body, 409, "Conflict");

    // Patches by content type; an unknown patch type is 415; a dryRun
    // value other than All is 422.
    let merged = merge_patch(&h, &format!("{CMS}/a"), json!({"data": {"m": "1"}})).await;
    assert_eq!(merged.status, StatusCode::OK, "{}", merged.body);
    assert_eq!(merged.body["data"]["m"], "1");
    let jp = patch(
        &h,
        &format!("{CMS}/a"),
        "application/json-patch+json",
        json!([{"op": "add", "path": "/data/j", "value": "2"}]),
    )
    .await;
    assert_eq!(jp.status, StatusCode::OK, "{}", jp.body);
    assert_eq!(jp.body["data"]["j"], "2");
    let applied = patch(
        &h,
        &format!("{CMS}/b?fieldManager=test&force=true"),
        "application/apply-patch+yaml",
        configmap("b"),
    )
    .await;
    assert!(applied.status.is_success(), "{}", applied.body);
    let bad_type = patch(&h, &format!("{CMS}/a"), "text/plain", json!({})).await;
    assert_eq!(bad_type.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let dry = call(
        &h,
        Method::POST,
        &format!("{CMS}?dryRun=Some"),
        Some("application/json"),
        Some(configmap("c")),
    )
    .await;
    assert_eq!(dry.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_status(&dry.body, 422, "Invalid");
    assert_eq!(
        dry.body["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\""
    );

    // Lists: kind, apiVersion, resourceVersion; all-namespaces; paging.
    for i in 0..5 {
        post(&h, CMS, configmap(&format!("p{i}"))).await;
    }
    let list = get(&h, CMS).await.body;
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["apiVersion"], "v1");
    assert!(
        list["metadata"]["resourceVersion"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    assert_eq!(list["items"].as_array().unwrap().len(), 7);
    let all = get(&h, "/api/v1/configmaps").await.body;
    assert_eq!(all["items"].as_array().unwrap().len(), 7);
    let mut names = Vec::new();
    let mut path = format!("{CMS}?limit=3");
    for _ in 0..10 {
        let page = get(&h, &path).await.body;
        names.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_string()),
        );
        match page["metadata"]["continue"].as_str() {
            Some(c) if !c.is_empty() => {
                assert!(page["metadata"]["remainingItemCount"].as_u64().is_some());
                path = format!("{CMS}?limit=3&continue={c}");
            }
            _ => break,
        }
    }
    assert_eq!(names.len(), 7, "{names:?}");

    // Delete, then 404.
    let deleted = call(&h, Method::DELETE, &format!("{CMS}/a"), None, None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    let gone = get(&h, &format!("{CMS}/a")).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    h.shutdown().await;
}

#[tokio::test]
async fn watch_streams_events_bookmarks_and_ends_on_timeout() {
    let h = plain_server(Duration::from_millis(200)).await;
    post(&h, CMS, configmap("w0")).await;
    let list = get(&h, CMS).await.body;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();

    // Without a resourceVersion: ADDED for what exists, then live events.
    let mut w = WatchStream::open(&h, &format!("{CMS}?watch=true")).await;
    assert_eq!(w.status, StatusCode::OK);
    let first = w.next(Duration::from_secs(5)).await.expect("ADDED");
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["metadata"]["name"], "w0");
    post(&h, CMS, configmap("w1")).await;
    let ev = w.next(Duration::from_secs(5)).await.expect("ADDED w1");
    assert_eq!(
        (
            ev["type"].as_str(),
            ev["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("w1"))
    );
    drop(w);

    // From the list RV, with bookmarks: MODIFIED, DELETED and BOOKMARKs.
    let mut w = WatchStream::open(
        &h,
        &format!("{CMS}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=3"),
    )
    .await;
    let ev = w
        .next_non_bookmark(Duration::from_secs(5))
        .await
        .expect("replayed w1");
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"]["metadata"]["name"], "w1");
    merge_patch(&h, &format!("{CMS}/w0"), json!({"data": {"x": "y"}})).await;
    let ev = w
        .next_non_bookmark(Duration::from_secs(5))
        .await
        .expect("MODIFIED");
    assert_eq!(ev["type"], "MODIFIED");
    assert_eq!(ev["object"]["data"]["x"], "y");
    let modified_rv: u64 = ev["object"]["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    call(&h, Method::DELETE, &format!("{CMS}/w1"), None, None).await;
    let ev = w
        .next_non_bookmark(Duration::from_secs(5))
        .await
        .expect("DELETED");
    assert_eq!(ev["type"], "DELETED");
    let mut bookmark = None;
    for _ in 0..20 {
        let ev = w
            .next(Duration::from_secs(5))
            .await
            .expect("a bookmark before the timeout");
        if ev["type"] == "BOOKMARK" {
            bookmark = Some(ev);
            break;
        }
    }
    let bookmark = bookmark.expect("BOOKMARK");
    assert_eq!(bookmark["object"]["kind"], "ConfigMap");
    assert_eq!(bookmark["object"]["apiVersion"], "v1");
    let brv: u64 = bookmark["object"]["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        brv >= modified_rv,
        "bookmark {brv} before event {modified_rv}"
    );

    // timeoutSeconds=3 ends the stream.
    let started = Instant::now();
    while w.next(Duration::from_secs(10)).await.is_some() {}
    assert!(started.elapsed() < Duration::from_secs(10));

    // Without allowWatchBookmarks there are none.
    let mut w = WatchStream::open(
        &h,
        &format!("{CMS}?watch=true&resourceVersion={rv}&timeoutSeconds=1"),
    )
    .await;
    while let Some(ev) = w.next(Duration::from_secs(5)).await {
        assert_ne!(ev["type"], "BOOKMARK", "{ev}");
    }
    h.shutdown().await;
}

/// A watch list, as client-go's reflector asks for one with the
/// WatchListClient feature: the current objects as ADDED, then a BOOKMARK
/// annotated `k8s.io/initial-events-end`, then live events; its options
/// are checked as `ValidateListOptions` checks a watch's.
#[tokio::test]
async fn a_watch_list_streams_the_state_then_marks_its_end() {
    let h = plain_server(Duration::from_secs(60)).await;
    post(&h, CMS, configmap("l0")).await;
    post(&h, CMS, configmap("l1")).await;
    let mut w = WatchStream::open(
        &h,
        &format!("{CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=10"),
    )
    .await;
    let mut initial = Vec::new();
    for _ in 0..3 {
        initial.push(w.next(Duration::from_secs(5)).await.expect("an event"));
    }
    let types: Vec<&str> = initial
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["ADDED", "ADDED", "BOOKMARK"]);
    assert_eq!(
        initial[2]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    post(&h, CMS, configmap("l2")).await;
    let live = w.next(Duration::from_secs(5)).await.expect("a live event");
    assert_eq!(
        (&live["type"], &live["object"]["metadata"]["name"]),
        (&json!("ADDED"), &json!("l2"))
    );
    let refused = get(&h, &format!("{CMS}?watch=1&sendInitialEvents=true")).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused.body["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true]"
    );
    let refused = get(
        &h,
        &format!("{CMS}?watch=1&resourceVersionMatch=NotOlderThan"),
    )
    .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    h.shutdown().await;
}

/// As kube-apiserver's watch cache: with `allowWatchBookmarks`, besides
/// the periodic BOOKMARK (a minute here) one comes about 2 s before
/// `timeoutSeconds` ends the watch, at the version the client has seen.
#[tokio::test]
async fn a_bookmark_comes_two_seconds_before_the_watch_times_out() {
    let h = plain_server(Duration::from_secs(60)).await;
    let rv = post(&h, CMS, configmap("b0")).await.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let opened = Instant::now();
    let mut w = WatchStream::open(
        &h,
        &format!("{CMS}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=4"),
    )
    .await;
    let mut bookmarks = Vec::new();
    while let Some(ev) = w.next(Duration::from_secs(10)).await {
        assert_eq!(ev["type"], "BOOKMARK", "{ev}");
        bookmarks.push((opened.elapsed(), ev));
    }
    let ended = opened.elapsed();
    assert_eq!(bookmarks.len(), 1, "{bookmarks:?}");
    let (at, bookmark) = &bookmarks[0];
    assert!(
        *at >= Duration::from_millis(1_900),
        "not before 2 s: {at:?}"
    );
    assert!(*at < ended, "before the end");
    assert_eq!(
        bookmark["object"]["metadata"]["resourceVersion"],
        rv.as_str()
    );
    assert_eq!(bookmark["object"]["kind"], "ConfigMap");

    // A watch of 2 s or less has no time for one.
    let mut w = WatchStream::open(
        &h,
        &format!("{CMS}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=2"),
    )
    .await;
    let event = w.next(Duration::from_secs(10)).await;
    assert!(event.is_none(), "no event expected: {event:?}");
    h.shutdown().await;
}

#[tokio::test]
async fn watch_from_a_compacted_version_gets_410_and_drops_end_watches() {
    let h = plain_server(Duration::from_secs(60)).await;
    let old = post(&h, CMS, configmap("c0")).await.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    for i in 1..5 {
        post(&h, CMS, configmap(&format!("c{i}"))).await;
    }
    h.compact();
    let mut w = WatchStream::open(&h, &format!("{CMS}?watch=true&resourceVersion={old}")).await;
    let ev = w
        .next(Duration::from_secs(5))
        .await
        .expect("an ERROR event");
    assert_eq!(ev["type"], "ERROR", "{ev}");
    assert_status(&ev["object"], 410, "Expired");
    assert!(
        w.next(Duration::from_secs(5)).await.is_none(),
        "the stream ends after ERROR"
    );

    // The same over the admin API.
    let r = post(&h, "/recon-admin/compact", json!({})).await;
    assert_eq!(r.status, StatusCode::OK);

    // Dropping watches ends open streams, in-process and over HTTP.
    let mut w = WatchStream::open(&h, &format!("{CMS}?watch=true")).await;
    for _ in 0..5 {
        assert_eq!(
            w.next(Duration::from_secs(5)).await.unwrap()["type"],
            "ADDED"
        );
    }
    h.drop_watches();
    assert!(w.next(Duration::from_secs(5)).await.is_none());
    let rv = get(&h, CMS).await.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut w = WatchStream::open(&h, &format!("{CMS}?watch=true&resourceVersion={rv}")).await;
    let r = post(&h, "/recon-admin/drop-watches", json!({})).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(w.next(Duration::from_secs(5)).await.is_none());
    h.shutdown().await;
}

#[tokio::test]
async fn injected_failures_latency_and_request_log() {
    let h = plain_server(Duration::from_secs(60)).await;
    h.fail_next(2, 429);
    for _ in 0..2 {
        let r = get(&h, CMS).await;
        assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(r.headers.get("retry-after").unwrap(), "1");
        assert_status(&r.body, 429, "TooManyRequests");
    }
    assert_eq!(get(&h, CMS).await.status, StatusCode::OK);

    h.fail_next(1, 500);
    let r = get(&h, CMS).await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_status(&r.body, 500, "InternalError");
    assert_eq!(get(&h, CMS).await.status, StatusCode::OK);

    // Over HTTP.
    let r = post(&h, "/recon-admin/fail?count=1&code=500", json!({})).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(get(&h, CMS).await.status, StatusCode::INTERNAL_SERVER_ERROR);
    let bad = post(&h, "/recon-admin/fail?count=1&code=404", json!({})).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);

    h.set_latency(Duration::from_millis(300));
    let started = Instant::now();
    assert_eq!(get(&h, CMS).await.status, StatusCode::OK);
    assert!(started.elapsed() >= Duration::from_millis(300));
    h.set_latency(Duration::ZERO);
    post(&h, "/recon-admin/latency?ms=200", json!({})).await;
    let started = Instant::now();
    get(&h, CMS).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    post(&h, "/recon-admin/latency?ms=0", json!({})).await;

    h.clear_request_log();
    get(&h, &format!("{CMS}?limit=5&labelSelector=app%3Dx")).await;
    post(&h, CMS, configmap("logged")).await;
    assert_eq!(
        h.request_log(),
        [
            format!("GET {CMS}?limit=5&labelSelector=app%3Dx"),
            format!("POST {CMS}"),
        ]
    );
    let over_http = get(&h, "/recon-admin/requests").await.body;
    assert_eq!(
        over_http.as_array().unwrap().len(),
        2,
        "admin requests are not logged"
    );
    h.shutdown().await;
}

#[tokio::test]
async fn scale_subresource_reads_and_writes_spec_replicas() {
    let h = plain_server(Duration::from_secs(60)).await;
    let deps = "/apis/apps/v1/namespaces/default/deployments";
    let dep = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}
    });
    assert_eq!(post(&h, deps, dep).await.status, StatusCode::CREATED);
    let scale = get(&h, &format!("{deps}/d/scale")).await.body;
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"]["replicas"], 1);
    assert_eq!(scale["status"]["selector"], "app=d");
    let patched = merge_patch(
        &h,
        &format!("{deps}/d/scale"),
        json!({"spec": {"replicas": 4}}),
    )
    .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    assert_eq!(patched.body["spec"]["replicas"], 4);
    let mut scale = patched.body.clone();
    scale["spec"]["replicas"] = json!(2);
    let r = put(&h, &format!("{deps}/d/scale"), scale.clone()).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        get(&h, &format!("{deps}/d")).await.body["spec"]["replicas"],
        2
    );
    let stale = put(&h, &format!("{deps}/d/scale"), scale).await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    let no_scale = get(&h, &format!("{CMS}/x/scale")).await;
    assert_eq!(no_scale.status, StatusCode::NOT_FOUND);
    h.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_watches_and_refuses_connections() {
    let h = plain_server(Duration::from_secs(60)).await;
    let mut w = WatchStream::open(&h, &format!("{CMS}?watch=true")).await;
    let addr = h.addr();
    tokio::time::timeout(Duration::from_secs(10), h.shutdown())
        .await
        .expect("shutdown within 10 s");
    assert!(w.next(Duration::from_secs(5)).await.is_none());
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

/// An outage refuses connections and drops open ones and watches; after
/// it the server listens on the same address with the same store, so a
/// watch from the last resourceVersion resumes without a relist.
#[tokio::test]
async fn an_outage_refuses_connections_then_serves_the_same_store() {
    let h = plain_server(Duration::from_secs(60)).await;
    let created = post(&h, CMS, configmap("before")).await;
    assert_eq!(created.status, StatusCode::CREATED);
    let rv = created.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut w = WatchStream::open(&h, &format!("{CMS}?watch=true&resourceVersion={rv}")).await;
    let addr = h.addr();

    h.outage(Duration::from_secs(3600)).await;
    assert!(
        w.next(Duration::from_secs(5)).await.is_none(),
        "the watch is dropped"
    );
    let refused = tokio::net::TcpStream::connect(addr).await;
    assert_eq!(
        refused.expect_err("connections are refused").kind(),
        std::io::ErrorKind::ConnectionRefused
    );
    let store = h.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    store
        .create(&configmaps, Some("default"), configmap("during"), None)
        .expect("the store takes writes meanwhile");

    h.end_outage().await;
    let listed = get(&h, CMS).await;
    assert_eq!(listed.status, StatusCode::OK);
    let names: Vec<&str> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["before", "during"]);
    let mut w = WatchStream::open(&h, &format!("{CMS}?watch=true&resourceVersion={rv}")).await;
    let event = w.next(Duration::from_secs(5)).await.expect("an event");
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "during");

    // Over HTTP: the answer arrives, then the outage runs its course.
    let r = post(&h, "/recon-admin/outage?seconds=1", json!({})).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        w.next(Duration::from_secs(5)).await.is_none(),
        "the watch is dropped"
    );
    tokio::time::timeout(Duration::from_secs(10), h.serving())
        .await
        .expect("serving again after the outage's second");
    assert_eq!(get(&h, CMS).await.status, StatusCode::OK);
    let bad = post(&h, "/recon-admin/outage?seconds=0", json!({})).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    h.shutdown().await;
}

/// kube-client (rustls) reads the kubeconfig, trusts the generated CA,
/// sends the token, parses lists, Status errors and watch events, and
/// dry runs keep the connection.
#[tokio::test]
async fn kube_client_talks_to_the_tls_server() {
    use futures::TryStreamExt;
    use kube_client::config::{KubeConfigOptions, Kubeconfig};
    use kube_client::core::WatchEvent;

    let h = DevServer::start(DevServerConfig::default()).await.unwrap();
    assert!(h.url().starts_with("https://127.0.0.1:"));
    let kubeconfig = Kubeconfig::from_yaml(h.kubeconfig()).expect("kubeconfig parses");
    let config =
        kube_client::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .expect("config");
    let client = kube_client::Client::try_from(config).expect("client");

    let body = serde_json::to_vec(&configmap("kc")).unwrap();
    let created: Value = client
        .request(
            http::Request::post(CMS)
                .header("content-type", "application/json")
                .body(body)
                .unwrap(),
        )
        .await
        .expect("create over TLS");
    assert_eq!(created["metadata"]["name"], "kc");
    let list: Value = client
        .request(http::Request::get(CMS).body(vec![]).unwrap())
        .await
        .expect("list");
    assert_eq!(list["kind"], "ConfigMapList");
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();

    match client
        .request::<Value>(
            http::Request::get(format!("{CMS}/missing"))
                .body(vec![])
                .unwrap(),
        )
        .await
    {
        Err(kube_client::Error::Api(status)) => {
            assert_eq!(status.code, 404);
            assert_eq!(status.reason, "NotFound");
        }
        other => panic!("expected a 404 Status, got {other:?}"),
    }

    let events = client
        .request_events::<Value>(
            http::Request::get(format!(
                "{CMS}?watch=true&resourceVersion={rv}&timeoutSeconds=5"
            ))
            .body(vec![])
            .unwrap(),
        )
        .await
        .expect("watch");
    let mut events = Box::pin(events);
    let patch = serde_json::to_vec(&json!({"data": {"k": "changed"}})).unwrap();
    let _: Value = client
        .request(
            http::Request::patch(format!("{CMS}/kc"))
                .header("content-type", "application/merge-patch+json")
                .body(patch)
                .unwrap(),
        )
        .await
        .expect("patch");
    let event = tokio::time::timeout(Duration::from_secs(5), events.try_next())
        .await
        .expect("an event within 5 s")
        .expect("a well-formed event")
        .expect("the stream is open");
    match event {
        WatchEvent::Modified(obj) => assert_eq!(obj["data"]["k"], "changed"),
        other => panic!("expected MODIFIED, got {other:?}"),
    }

    // Dry runs over TLS answer as the writes would, store nothing, and
    // leave the connection to the next request.
    let body = serde_json::to_vec(&configmap("dry")).unwrap();
    let dry: Value = client
        .request(
            http::Request::post(format!("{CMS}?dryRun=All"))
                .header("content-type", "application/json")
                .body(body)
                .unwrap(),
        )
        .await
        .expect("a dry-run create over TLS");
    assert_eq!(dry["metadata"]["name"], "dry");
    let deleted: Value = client
        .request(
            http::Request::delete(format!("{CMS}/kc?dryRun=All"))
                .body(vec![])
                .unwrap(),
        )
        .await
        .expect("a dry-run delete over TLS");
    assert_eq!(deleted["status"], "Success");
    let names: Value = client
        .request(http::Request::get(CMS).body(vec![]).unwrap())
        .await
        .expect("a list after the dry runs");
    let names: Vec<&str> = names["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["kc"], "nothing created, nothing deleted");
    h.shutdown().await;
}

/// `Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`
/// (client-go's metadata informers, controller-runtime's metadata-only
/// watches): GET, list and watch answer with the objects' metadata alone;
/// an `as=Table` range gets a Table.
#[tokio::test]
async fn metadata_only_clients_get_partial_object_metadata_from_reads_and_writes() {
    const LIST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    const ITEM: &str =
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
    let h = plain_server(Duration::from_secs(60)).await;
    let mut labelled = configmap("m1");
    labelled["metadata"]["labels"] = json!({"tier": "x"});
    let created = post(&h, CMS, labelled).await.body;

    let item = get_accepting(&h, &format!("{CMS}/m1"), ITEM).await;
    assert_eq!(item.status, StatusCode::OK, "{}", item.body);
    assert_eq!(
        item.body,
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
               "metadata": created["metadata"]})
    );

    let list = get_accepting(&h, CMS, LIST).await.body;
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["apiVersion"], "meta.k8s.io/v1");
    assert!(list["metadata"]["resourceVersion"].is_string(), "{list}");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["kind"], "PartialObjectMetadata");
    assert_eq!(items[0]["metadata"]["labels"]["tier"], "x");
    assert!(items[0].get("data").is_none(), "{}", items[0]);

    // kubectl's Table request gets the ConfigMap printer's Table.
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let table = get_accepting(&h, &format!("{CMS}/m1"), table).await.body;
    assert_eq!(table["kind"], "Table", "{table}");
    let names: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Data", "Age"]);
    let data = created["data"].as_object().map_or(0, |d| d.len());
    assert_eq!(table["rows"][0]["cells"][0], "m1");
    assert_eq!(table["rows"][0]["cells"][1], data);
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");

    let rv = list["metadata"]["resourceVersion"].as_str().unwrap();
    let mut w = WatchStream::open_accepting(
        &h,
        &format!("{CMS}?watch=true&resourceVersion={rv}"),
        Some(LIST),
    )
    .await;
    post(&h, CMS, configmap("m2")).await;
    let added = w.next_non_bookmark(Duration::from_secs(5)).await.unwrap();
    assert_eq!(added["type"], "ADDED");
    assert_eq!(added["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(added["object"]["metadata"]["name"], "m2");
    assert!(added["object"].get("data").is_none(), "{added}");

    // Writes answer in the shape asked too (the object's new metadata); a
    // DELETE's Status stays a Status.
    let patched = call_accepting(
        &h,
        Method::PATCH,
        &format!("{CMS}/m1"),
        Some("application/merge-patch+json"),
        Some(json!({"metadata": {"labels": {"tier": "y"}}})),
        ITEM,
    )
    .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    assert_eq!(patched.body["kind"], "PartialObjectMetadata");
    assert_eq!(patched.body["metadata"]["labels"]["tier"], "y");
    assert!(patched.body.get("data").is_none(), "{}", patched.body);
    let gone = call_accepting(&h, Method::DELETE, &format!("{CMS}/m2"), None, None, ITEM).await;
    assert_eq!(gone.body["kind"], "Status", "{}", gone.body);
    let all = call_accepting(&h, Method::DELETE, CMS, None, None, LIST).await;
    assert_eq!(
        all.body["kind"], "PartialObjectMetadataList",
        "{}",
        all.body
    );
    assert_eq!(all.body["items"][0]["kind"], "PartialObjectMetadata");
    assert_eq!(all.body["items"][0]["metadata"]["name"], "m1");
    h.shutdown().await;
}

/// A DELETE answers as kube-apiserver's registries do: the object while
/// finalizers keep it, the object for kinds that return it (service
/// accounts, custom resources), else a Status once it is gone.
#[tokio::test]
async fn delete_answers_with_the_object_or_a_status_as_the_kind_does() {
    let h = plain_server(Duration::from_secs(60)).await;
    let mut kept = configmap("kept");
    kept["metadata"]["finalizers"] = json!(["example.com/hold"]);
    post(&h, CMS, kept).await;
    let pending = call(&h, Method::DELETE, &format!("{CMS}/kept"), None, None).await;
    assert_eq!(pending.status, StatusCode::OK, "{}", pending.body);
    assert_eq!(pending.body["kind"], "ConfigMap", "{}", pending.body);
    assert!(pending.body["metadata"]["deletionTimestamp"].is_string());

    const SAS: &str = "/api/v1/namespaces/default/serviceaccounts";
    post(&h, SAS, json!({"metadata": {"name": "robot"}})).await;
    let sa = call(&h, Method::DELETE, &format!("{SAS}/robot"), None, None).await;
    assert_eq!(sa.status, StatusCode::OK, "{}", sa.body);
    assert_eq!(sa.body["kind"], "ServiceAccount", "{}", sa.body);
    assert_eq!(sa.body["metadata"]["name"], "robot");
    assert_eq!(
        get(&h, &format!("{SAS}/robot")).await.status,
        StatusCode::NOT_FOUND
    );

    const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
    let web = json!({"metadata": {"name": "web"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}});
    let created = post(&h, DEPLOYMENTS, web).await;
    let gone = call(
        &h,
        Method::DELETE,
        &format!("{DEPLOYMENTS}/web"),
        None,
        None,
    )
    .await;
    assert_eq!(gone.body["kind"], "Status", "{}", gone.body);
    assert_eq!(gone.body["details"]["group"], "apps");
    assert_eq!(gone.body["details"]["kind"], "deployments");
    assert_eq!(gone.body["details"]["uid"], created.body["metadata"]["uid"]);
    h.shutdown().await;
}

/// A PUT follows the kind's strategy: it creates a missing Lease (201, as
/// client-go's lease lock may), is 404 for a missing ConfigMap, and a
/// Lease's PUT without `resourceVersion` is a 422 naming the field; a
/// Lease's MicroTimes are decoded as the server's; a created Pod carries
/// its QoS class.
#[tokio::test]
async fn a_put_creates_or_refuses_as_the_kinds_strategy_says() {
    let h = plain_server(Duration::from_secs(60)).await;
    const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
    let lease = json!({"metadata": {"name": "lock"}, "spec": {
        "holderIdentity": "a", "renewTime": "2026-11-26T17:41:48.500000+01:00"}});
    let put = |path: String, body: Value| {
        let h = &h;
        async move { call(h, Method::PUT, &path, None, Some(body)).await }
    };
    let created = put(format!("{LEASES}/lock"), lease.clone()).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["kind"], "Lease");
    // A MicroTime is stored in UTC; one without its six digits is refused.
    assert_eq!(
        created.body["spec"]["renewTime"],
        "2026-11-26T16:41:48.500000Z"
    );
    let mut seconds = created.body.clone();
    seconds["spec"]["renewTime"] = json!("2026-11-26T16:41:48Z");
    let refused = put(format!("{LEASES}/lock"), seconds).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused.body["message"],
        "Lease in version \"v1\" cannot be handled as a Lease: parsing time \"2026-11-26T16:41:48Z\" \
         as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"Z\" as \".000000\""
    );
    let unversioned = put(format!("{LEASES}/lock"), lease).await;
    assert_eq!(unversioned.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        unversioned.body["message"],
        "leases.coordination.k8s.io \"lock\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
    assert_eq!(unversioned.body["details"]["kind"], "leases");
    let renewed = put(format!("{LEASES}/lock"), created.body.clone()).await;
    assert_eq!(renewed.status, StatusCode::OK, "{}", renewed.body);

    let missing = put(format!("{CMS}/absent"), configmap("absent")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);

    const PODS: &str = "/api/v1/namespaces/default/pods";
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "nginx:1.27", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}});
    let pod = post(&h, PODS, pod).await;
    assert_eq!(pod.body["status"]["qosClass"], "Guaranteed", "{}", pod.body);
    h.shutdown().await;
}

/// `kubectl get -w` asks for Tables: each watch event carries a Table of
/// its object, the first with the column definitions and the later ones
/// without (the apiserver's watch sets `NoHeaders` after the first).
#[tokio::test]
async fn a_watch_asking_for_tables_gets_one_row_tables_headed_once() {
    const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let h = plain_server(Duration::from_secs(60)).await;
    let rv = get(&h, CMS).await.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut w = WatchStream::open_accepting(
        &h,
        &format!("{CMS}?watch=true&resourceVersion={rv}"),
        Some(TABLE),
    )
    .await;
    post(&h, CMS, configmap("first")).await;
    post(&h, CMS, configmap("second")).await;
    let first = w.next_non_bookmark(Duration::from_secs(10)).await.unwrap();
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "Table", "{first}");
    assert_eq!(first["object"]["columnDefinitions"][1]["name"], "Data");
    assert_eq!(first["object"]["rows"][0]["cells"][0], "first");
    let second = w.next_non_bookmark(Duration::from_secs(10)).await.unwrap();
    assert_eq!(
        second["object"]["columnDefinitions"],
        Value::Null,
        "{second}"
    );
    assert_eq!(second["object"]["rows"][0]["cells"][0], "second");
    h.shutdown().await;
}

/// The differential suite (`devserver/differential/*.yaml`): each case, on a
/// fresh server, answers as its `server` line says kube-apiserver does.
#[tokio::test]
async fn the_differential_cases_answer_as_kube_apiserver_does() {
    let cases = differential::cases();
    assert!(cases.len() >= 99, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        assert!(!case.server.is_empty(), "{} names no source", case.name);
        let h = plain_server(Duration::from_secs(60)).await;
        failures.extend(differential::run(&h, case).await);
        h.shutdown().await;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Built-in kinds get kube-apiserver's defaults on every write: a
/// Namespace its name label and finalizer, a Deployment its strategy,
/// limits and Pod template defaults, a Service its type, port protocol and
/// target and a cluster IP that an update leaving it out keeps.
#[tokio::test]
async fn built_in_kinds_get_the_server_s_defaults() {
    let h = plain_server(Duration::from_secs(60)).await;
    let ns = post(
        &h,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "team-a"}}),
    )
    .await;
    assert_eq!(ns.status, StatusCode::CREATED, "{}", ns.body);
    assert_eq!(
        ns.body["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "team-a"
    );
    assert_eq!(ns.body["spec"]["finalizers"], json!(["kubernetes"]));

    const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
    let web = post(
        &h,
        DEPLOYMENTS,
        json!({"metadata": {"name": "web"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}),
    )
    .await;
    assert_eq!(web.status, StatusCode::CREATED, "{}", web.body);
    let spec = &web.body["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["strategy"]["rollingUpdate"]["maxSurge"], "25%");
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
    assert_eq!(
        spec["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    // Defaults are no change: the same body again writes nothing.
    let mut again = web.body.clone();
    again["spec"] = json!({"selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}});
    let same = put(&h, &format!("{DEPLOYMENTS}/web"), again).await;
    assert_eq!(same.status, StatusCode::OK, "{}", same.body);
    assert_eq!(
        same.body["metadata"]["resourceVersion"],
        web.body["metadata"]["resourceVersion"]
    );
    assert_eq!(same.body["metadata"]["generation"], 1);

    const SERVICES: &str = "/api/v1/namespaces/default/services";
    let svc = post(
        &h,
        SERVICES,
        json!({"metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}),
    )
    .await;
    assert_eq!(svc.status, StatusCode::CREATED, "{}", svc.body);
    let ip = svc.body["spec"]["clusterIP"].as_str().unwrap().to_string();
    assert!(ip.starts_with("10.96."), "{ip}");
    assert_eq!(svc.body["spec"]["clusterIPs"], json!([ip]));
    assert_eq!(svc.body["spec"]["type"], "ClusterIP");
    assert_eq!(
        svc.body["spec"]["ports"][0],
        json!({"port": 80, "protocol": "TCP", "targetPort": 80})
    );
    let other = post(
        &h,
        SERVICES,
        json!({"metadata": {"name": "other"}, "spec": {"ports": [{"port": 81}]}}),
    )
    .await;
    assert_ne!(other.body["spec"]["clusterIP"], ip.as_str());
    let mut replaced = svc.body.clone();
    replaced["spec"] = json!({"selector": {"app": "web2"}, "ports": [{"port": 80}]});
    let kept = put(&h, &format!("{SERVICES}/web"), replaced).await;
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.body);
    assert_eq!(kept.body["spec"]["clusterIP"], ip.as_str());
    assert_eq!(kept.body["spec"]["selector"]["app"], "web2");
    h.shutdown().await;
}

/// A custom resource's writes meet its CRD's structural schema as on a
/// real server: undeclared fields pruned with a `Warning` each (refused
/// under `fieldValidation=Strict`, silent under `Ignore`), defaults filled
/// in, violations a 422 listing every cause.
#[tokio::test]
async fn custom_resources_are_pruned_defaulted_and_validated_by_their_schema() {
    let h = plain_server(Duration::from_secs(60)).await;
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"},
                        "size": {"type": "integer", "minimum": 1, "default": 3},
                        "colour": {"type": "string", "enum": ["red", "blue"]}}},
                    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]
        }
    });
    let served = post(
        &h,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd,
    )
    .await;
    assert_eq!(served.status, StatusCode::CREATED, "{}", served.body);
    const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";
    let widget = |name: &str, spec: Value| json!({"metadata": {"name": name}, "spec": spec});
    let warnings = |reply: &http_client::Reply| -> Vec<String> {
        reply
            .headers
            .get_all(http::header::WARNING)
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect()
    };

    let made = post(&h, WIDGETS, widget("w", json!({"name": "w", "extra": 1}))).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    assert_eq!(made.body["spec"], json!({"name": "w", "size": 3}));
    assert_eq!(warnings(&made), [r#"299 - "unknown field \"spec.extra\"""#]);
    assert_eq!(
        get(&h, &format!("{WIDGETS}/w")).await.body["spec"],
        made.body["spec"]
    );

    let strict = call(
        &h,
        Method::POST,
        &format!("{WIDGETS}?fieldValidation=Strict"),
        Some("application/json"),
        Some(widget("s", json!({"name": "s", "extra": 1, "more": 2}))),
    )
    .await;
    assert_eq!(strict.status, StatusCode::BAD_REQUEST, "{}", strict.body);
    assert_eq!(
        strict.body["message"],
        r#"Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.extra", unknown field "spec.more""#
    );
    let quiet = call(
        &h,
        Method::POST,
        &format!("{WIDGETS}?fieldValidation=Ignore"),
        Some("application/json"),
        Some(widget("q", json!({"name": "q", "extra": 1}))),
    )
    .await;
    assert_eq!(quiet.status, StatusCode::CREATED, "{}", quiet.body);
    assert!(warnings(&quiet).is_empty());
    assert!(quiet.body["spec"].get("extra").is_none());
    let bogus = call(
        &h,
        Method::POST,
        &format!("{WIDGETS}?fieldValidation=Loud"),
        Some("application/json"),
        Some(widget("b", json!({"name": "b"}))),
    )
    .await;
    assert_eq!(
        bogus.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        bogus.body
    );

    let bad = post(
        &h,
        WIDGETS,
        widget("bad", json!({"size": 0, "colour": "green"})),
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert_status(&bad.body, 422, "Invalid");
    assert_eq!(
        bad.body["message"],
        r#"Widget.example.com "bad" is invalid: [spec.name: Required value, spec.colour: Unsupported value: "green": supported values: "red", "blue", spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1]"#
    );
    assert_eq!(bad.body["details"]["kind"], "Widget");
    assert_eq!(bad.body["details"]["group"], "example.com");
    assert_eq!(
        bad.body["details"]["causes"][0],
        json!({"reason": "FieldValueRequired", "message": "Required value", "field": "spec.name"})
    );
    assert_eq!(
        get(&h, &format!("{WIDGETS}/bad")).await.status,
        StatusCode::NOT_FOUND
    );

    // Patches: the result is validated, the patch's undeclared fields warned of.
    let wrong = merge_patch(
        &h,
        &format!("{WIDGETS}/w"),
        json!({"spec": {"size": "big"}}),
    )
    .await;
    assert_eq!(
        wrong.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        wrong.body
    );
    let patched = merge_patch(
        &h,
        &format!("{WIDGETS}/w"),
        json!({"spec": {"size": 5, "stray": true}}),
    )
    .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    assert_eq!(patched.body["spec"], json!({"name": "w", "size": 5}));
    assert_eq!(
        warnings(&patched),
        [r#"299 - "unknown field \"spec.stray\"""#]
    );
    // Status is checked through its subresource too.
    let mut status = patched.body.clone();
    status["status"] = json!({"ready": "yes"});
    let not_bool = put(&h, &format!("{WIDGETS}/w/status"), status).await;
    assert_eq!(
        not_bool.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        not_bool.body
    );

    // kubectl's get asks for a Table: without printer columns, Name and Age.
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let listed = get_accepting(&h, WIDGETS, table).await.body;
    assert_eq!(listed["kind"], "Table", "{listed}");
    assert_eq!(listed["apiVersion"], "meta.k8s.io/v1");
    assert!(
        listed["metadata"]["resourceVersion"].is_string(),
        "{listed}"
    );
    let names: Vec<&Value> = listed["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(names, [&json!("Name"), &json!("Age")]);
    let row = &listed["rows"][0];
    assert_eq!(row["cells"][0], "q");
    assert!(row["cells"][1].as_str().unwrap().ends_with('s'), "{row}");
    assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(row["object"]["metadata"]["name"], "q");
    let one = get_accepting(&h, &format!("{WIDGETS}/w"), table).await.body;
    assert_eq!(one["rows"].as_array().map(Vec::len), Some(1), "{one}");
    h.shutdown().await;
}

/// YAML bodies are taken where the content type says YAML: a create as
/// `application/yaml`, a server-side apply as `application/apply-patch+yaml`;
/// malformed YAML is a 400 naming the cause.
#[tokio::test]
async fn yaml_bodies_create_and_apply() {
    let h = plain_server(Duration::from_secs(60)).await;
    let created = call_text(
        &h,
        Method::POST,
        CMS,
        "application/yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n",
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["data"]["k"], "v");
    let applied = call_text(
        &h,
        Method::PATCH,
        &format!("{CMS}/from-yaml?fieldManager=tester"),
        "application/apply-patch+yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: applied # a comment\n  n: '2'\n",
    )
    .await;
    assert_eq!(applied.status, StatusCode::OK, "{}", applied.body);
    assert_eq!(applied.body["data"], json!({"k": "applied", "n": "2"}));
    let broken = call_text(
        &h,
        Method::POST,
        CMS,
        "application/yaml",
        "metadata: [unclosed\n",
    )
    .await;
    assert_eq!(broken.status, StatusCode::BAD_REQUEST, "{}", broken.body);
    assert!(
        broken.body["message"]
            .as_str()
            .unwrap()
            .starts_with("error converting YAML to JSON: "),
        "{}",
        broken.body
    );
    h.shutdown().await;
}

/// `dryRun=All` writes answer as the writes would (defaults, uid,
/// generation, conflicts, garbage collection) and change nothing: the
/// store's version stays, no watch sees an event, a created object has no
/// resourceVersion and an existing one keeps its own.
#[tokio::test]
async fn dry_run_writes_answer_as_the_writes_would_and_change_nothing() {
    let h = plain_server(Duration::from_secs(60)).await;
    let created = post(&h, CMS, configmap("real")).await.body;
    let version = created["metadata"]["resourceVersion"].clone();
    let list_version = |list: Value| list["metadata"]["resourceVersion"].clone();
    let before = list_version(get(&h, CMS).await.body);
    let mut watch = WatchStream::open(
        &h,
        &format!(
            "{CMS}?watch=true&resourceVersion={}",
            before.as_str().unwrap()
        ),
    )
    .await;

    let made = call(
        &h,
        Method::POST,
        &format!("{CMS}?dryRun=All&fieldManager=tester"),
        Some("application/json"),
        Some(json!({"metadata": {"generateName": "made-"}, "data": {"k": "v"}})),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let name = made.body["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("made-"), "{}", made.body);
    assert!(made.body["metadata"]["uid"].is_string(), "{}", made.body);
    assert!(made.body["metadata"]["creationTimestamp"].is_string());
    assert_eq!(
        made.body["metadata"]["managedFields"][0]["manager"],
        "tester"
    );
    assert!(
        made.body["metadata"].get("resourceVersion").is_none(),
        "{}",
        made.body
    );
    assert_eq!(
        get(&h, &format!("{CMS}/{name}")).await.status,
        StatusCode::NOT_FOUND
    );

    let exists = call(
        &h,
        Method::POST,
        &format!("{CMS}?dryRun=All"),
        Some("application/json"),
        Some(configmap("real")),
    )
    .await;
    assert_eq!(exists.status, StatusCode::CONFLICT, "{}", exists.body);

    let mut changed = created.clone();
    changed["data"] = json!({"k": "changed"});
    let replaced = call(
        &h,
        Method::PUT,
        &format!("{CMS}/real?dryRun=All"),
        Some("application/json"),
        Some(changed),
    )
    .await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.body);
    assert_eq!(replaced.body["data"]["k"], "changed");
    assert_eq!(replaced.body["metadata"]["resourceVersion"], version);
    let patched = call(
        &h,
        Method::PATCH,
        &format!("{CMS}/real?dryRun=All"),
        Some("application/merge-patch+json"),
        Some(json!({"data": {"p": "1"}})),
    )
    .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    assert_eq!(patched.body["data"]["p"], "1");
    assert_eq!(patched.body["metadata"]["resourceVersion"], version);

    let deleted = call(
        &h,
        Method::DELETE,
        &format!("{CMS}/real?dryRun=All"),
        None,
        None,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert_eq!(deleted.body["status"], "Success", "{}", deleted.body);
    let everything = call(&h, Method::DELETE, &format!("{CMS}?dryRun=All"), None, None).await;
    assert_eq!(everything.status, StatusCode::OK, "{}", everything.body);
    assert_eq!(everything.body["items"].as_array().unwrap().len(), 1);

    // A dry-run Namespace delete does not take its objects with it.
    let ns = call(
        &h,
        Method::DELETE,
        "/api/v1/namespaces/default?dryRun=All",
        None,
        None,
    )
    .await;
    assert_eq!(ns.status, StatusCode::OK, "{}", ns.body);
    assert!(
        ns.body["metadata"]["deletionTimestamp"].is_string(),
        "{}",
        ns.body
    );

    let stored = get(&h, &format!("{CMS}/real")).await.body;
    assert_eq!(stored, created);
    assert_eq!(list_version(get(&h, CMS).await.body), before);
    let namespace = get(&h, "/api/v1/namespaces/default").await.body;
    assert!(
        namespace["metadata"].get("deletionTimestamp").is_none(),
        "{namespace}"
    );
    // The one event after the dry runs is the real write that follows.
    post(&h, CMS, configmap("after")).await;
    let event = watch.next(Duration::from_secs(5)).await.expect("an event");
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "after");
    h.shutdown().await;
}

#[tokio::test]
async fn delete_options_item_watch_and_delete_collection() {
    let h = plain_server(Duration::from_secs(60)).await;
    let created = post(&h, CMS, configmap("d1")).await.body;
    let uid = created["metadata"]["uid"].as_str().unwrap().to_string();

    // Watching one item (GET item?watch) sees only that item.
    let mut w = WatchStream::open(&h, &format!("{CMS}/d1?watch=true")).await;
    assert_eq!(
        w.next(Duration::from_secs(5)).await.unwrap()["type"],
        "ADDED"
    );
    post(&h, CMS, configmap("other")).await;

    // A wrong uid precondition is a 409; a bad propagation policy a 400;
    // a dry run (in the body's options) answers as the delete would and
    // leaves the object, its watch seeing nothing.
    let wrong = call(
        &h,
        Method::DELETE,
        &format!("{CMS}/d1"),
        Some("application/json"),
        Some(
            json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "nope"}}),
        ),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::CONFLICT, "{}", wrong.body);
    let bad = call(
        &h,
        Method::DELETE,
        &format!("{CMS}/d1?propagationPolicy=Sideways"),
        None,
        None,
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let dry = call(
        &h,
        Method::DELETE,
        &format!("{CMS}/d1"),
        Some("application/json"),
        Some(json!({"dryRun": ["All"]})),
    )
    .await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.body);
    assert_eq!(dry.body["details"]["uid"], uid.as_str(), "{}", dry.body);
    assert_eq!(get(&h, &format!("{CMS}/d1")).await.status, StatusCode::OK);

    let ok = call(
        &h,
        Method::DELETE,
        &format!("{CMS}/d1?propagationPolicy=Background"),
        Some("application/json"),
        Some(json!({"preconditions": {"uid": uid}})),
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    // A ConfigMap's registry does not return the deleted object: the
    // answer is a Status naming it, with the resource as `kind`.
    assert_eq!(
        ok.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
               "details": {"name": "d1", "kind": "configmaps", "uid": uid}}),
    );
    let ev = w.next(Duration::from_secs(5)).await.expect("DELETED");
    assert_eq!(ev["type"], "DELETED");
    assert_eq!(ev["object"]["metadata"]["name"], "d1");
    drop(w);

    // DELETE on the collection honours the label selector.
    let mut labelled = configmap("l1");
    labelled["metadata"]["labels"] = json!({"tier": "x"});
    post(&h, CMS, labelled).await;
    let gone = call(
        &h,
        Method::DELETE,
        &format!("{CMS}?labelSelector=tier%3Dx"),
        None,
        None,
    )
    .await;
    assert_eq!(gone.status, StatusCode::OK, "{}", gone.body);
    assert_eq!(gone.body["items"].as_array().unwrap().len(), 1);
    let left: Vec<String> = get(&h, CMS).await.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(left, ["other"]);
    h.shutdown().await;
}
