//! Writes: verbs, paths, content types, queries and bodies as the server
//! sees them; returned objects; error classification.

use std::time::Duration;

use serde_json::json;

use crate::kube::discovery::{ApiResource, Gvk};
use crate::kube::status::ApiErrorKind;
use crate::kube::test_support::{Reply, TestServer};
use crate::kube::writes::{Deleted, EventObjectRef, EventRecord, WriteOptions};
use recon_api_semantics::writes::{DeleteOptions, EventType, Patch, PropagationPolicy};

fn deployments() -> ApiResource {
    ApiResource::new(Gvk::new("apps", "v1", "Deployment"), "deployments", true)
}

fn returned() -> String {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns", "uid": "u-1", "resourceVersion": "8",
            "managedFields": [{"manager": "recon"}]},
        "spec": {"replicas": 3}})
    .to_string()
}

#[tokio::test]
async fn each_write_sends_the_right_verb_path_type_and_query() {
    let server = TestServer::start(|r| match (r.method.as_str(), r.path.as_str()) {
        ("DELETE", _) => Reply::json(
            200,
            json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}).to_string(),
        ),
        _ => Reply::json(200, returned()),
    })
    .await;
    let client = server.client().await;
    let res = deployments();
    let body = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns"}})
    .to_string();
    let options = WriteOptions {
        field_manager: Some("recon".into()),
        dry_run: true,
        keep_managed_fields: false,
    };

    let created = client
        .create(&res, Some("ns"), &body, &options)
        .await
        .unwrap();
    assert_eq!(created.key(), "ns/web");
    assert_eq!(created.resource_version(), "8");
    assert!(!created.has_managed_fields());
    client
        .replace(&res, Some("ns"), "web", &body, &WriteOptions::default())
        .await
        .unwrap();
    client
        .replace_status(&res, Some("ns"), "web", &body, &WriteOptions::default())
        .await
        .unwrap();
    let patches = [
        Patch::Merge("{\"spec\":{\"replicas\":2}}".into()),
        Patch::Json("[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":2}]".into()),
        Patch::StrategicMerge("{\"spec\":{\"replicas\":2}}".into()),
        Patch::Apply {
            body: body.clone(),
            field_manager: "web-controller".into(),
            force: true,
        },
    ];
    for patch in &patches {
        client
            .patch(
                &res,
                Some("ns"),
                "web",
                None,
                patch,
                &WriteOptions::default(),
            )
            .await
            .unwrap();
    }
    let kept = client
        .patch(
            &res,
            Some("ns"),
            "web",
            Some("status"),
            &patches[0],
            &WriteOptions {
                keep_managed_fields: true,
                ..WriteOptions::default()
            },
        )
        .await
        .unwrap();
    assert!(kept.has_managed_fields());
    let deleted = client
        .delete(
            &res,
            Some("ns"),
            "web",
            &DeleteOptions {
                propagation_policy: Some(PropagationPolicy::Foreground),
                precondition_uid: Some("u-1".into()),
                precondition_resource_version: Some("8".into()),
                grace_period_seconds: Some(0),
                dry_run: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(deleted, Deleted::Gone);

    let requests = server.requests();
    let seen: Vec<(&str, &str, &str, Option<&str>)> = requests
        .iter()
        .map(|r| {
            (
                r.method.as_str(),
                r.path.as_str(),
                r.query.as_str(),
                r.content_type.as_deref(),
            )
        })
        .collect();
    let item = "/apis/apps/v1/namespaces/ns/deployments/web";
    assert_eq!(
        seen,
        vec![
            (
                "POST",
                "/apis/apps/v1/namespaces/ns/deployments",
                "fieldManager=recon&dryRun=All",
                Some("application/json")
            ),
            ("PUT", item, "", Some("application/json")),
            (
                "PUT",
                "/apis/apps/v1/namespaces/ns/deployments/web/status",
                "",
                Some("application/json")
            ),
            ("PATCH", item, "", Some("application/merge-patch+json")),
            ("PATCH", item, "", Some("application/json-patch+json")),
            (
                "PATCH",
                item,
                "",
                Some("application/strategic-merge-patch+json")
            ),
            (
                "PATCH",
                item,
                "fieldManager=web-controller&force=true",
                Some("application/apply-patch+yaml")
            ),
            (
                "PATCH",
                "/apis/apps/v1/namespaces/ns/deployments/web/status",
                "",
                Some("application/merge-patch+json")
            ),
            ("DELETE", item, "", Some("application/json")),
        ]
    );
    assert_eq!(requests[0].body_json()["metadata"]["name"], "web");
    assert_eq!(
        requests[4].body_json()[0]["op"],
        "replace",
        "the JSON patch is sent as given"
    );
    let delete = requests[8].body_json();
    assert_eq!(delete["propagationPolicy"], "Foreground");
    assert_eq!(delete["preconditions"]["uid"], "u-1");
    assert_eq!(delete["preconditions"]["resourceVersion"], "8");
    assert_eq!(delete["gracePeriodSeconds"], 0);
    assert!(requests.iter().all(|r| r.uri.starts_with("/apis/apps/v1/")));
}

#[tokio::test]
async fn delete_with_finalizers_pending_returns_the_object() {
    let server = TestServer::start(|_| {
        Reply::json(
            200,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c", "namespace": "ns", "finalizers": ["x/y"],
                    "deletionTimestamp": "2026-01-01T00:00:00Z"}})
            .to_string(),
        )
    })
    .await;
    let client = server.client().await;
    let res = ApiResource::new(Gvk::new("", "v1", "ConfigMap"), "configmaps", true);
    match client
        .delete(&res, Some("ns"), "c", &DeleteOptions::default())
        .await
        .unwrap()
    {
        Deleted::Pending(object) => assert_eq!(object.key(), "ns/c"),
        other => panic!("{other:?}"),
    }
    let body = server.requests()[0].body_json();
    assert_eq!(body["kind"], "DeleteOptions");
    assert!(body.get("propagationPolicy").is_none());
}

#[tokio::test]
async fn write_errors_are_classified() {
    let server = TestServer::start(|r| match r.path.rsplit('/').next().unwrap() {
        "missing" => Reply::status(404, "NotFound", "deployments.apps \"missing\" not found"),
        "stale" => Reply::status(409, "Conflict", "the object has been modified"),
        "exists" => Reply::status(409, "AlreadyExists", "already exists"),
        "denied" => Reply::status(403, "Forbidden", "forbidden"),
        "noauth" => Reply::status(401, "Unauthorized", "Unauthorized"),
        "bad" => Reply::status(422, "Invalid", "spec.replicas: Invalid value"),
        "busy" => Reply::status(429, "TooManyRequests", "slow down").header("Retry-After", "4"),
        "down" => Reply::status(503, "ServiceUnavailable", "down"),
        "garbage" => Reply::json(200, "{not json"),
        _ => Reply::status(418, "Teapot", "odd"),
    })
    .await;
    let client = server.client().await;
    let res = deployments();
    let mut seen = Vec::new();
    for name in [
        "missing", "stale", "exists", "denied", "noauth", "bad", "busy", "down", "garbage", "odd",
    ] {
        let error = client.get(&res, Some("ns"), name).await.unwrap_err();
        seen.push((error.kind, error.code));
        if name == "busy" {
            assert_eq!(error.retry_after, Some(Duration::from_secs(4)));
        }
        if name == "stale" {
            assert!(error.is_conflict());
            assert_eq!(error.reason, "Conflict");
            assert!(error.message.contains("modified"));
        }
        if name == "garbage" {
            assert!(error.message.contains("malformed response"), "{error}");
        }
    }
    assert_eq!(
        seen,
        [
            (ApiErrorKind::NotFound, 404),
            (ApiErrorKind::Conflict, 409),
            (ApiErrorKind::Conflict, 409),
            (ApiErrorKind::Forbidden, 403),
            (ApiErrorKind::Forbidden, 401),
            (ApiErrorKind::Invalid, 422),
            (ApiErrorKind::Unavailable, 429),
            (ApiErrorKind::Unavailable, 503),
            (ApiErrorKind::Other, 0),
            (ApiErrorKind::Other, 418),
        ]
    );
}

#[tokio::test]
async fn unreachable_server_is_unavailable() {
    let port = crate::kube::test_support::closed_port().await;
    let client = crate::kube::test_support::client_for(
        &format!("http://127.0.0.1:{port}"),
        crate::kube::rate_limit::ClientRateLimiter::unlimited(crate::clock::SystemClock::shared()),
    )
    .await;
    let error = client
        .get(&deployments(), Some("ns"), "web")
        .await
        .unwrap_err();
    assert_eq!(error.kind, ApiErrorKind::Unavailable, "{error}");
    assert_eq!(error.code, 0);
}

#[tokio::test]
async fn events_are_created_in_events_k8s_io_v1() {
    let server = TestServer::start(|r| {
        let mut body = r.body_json();
        body["metadata"]["uid"] = "e-1".into();
        body["metadata"]["resourceVersion"] = "3".into();
        Reply::json(201, body.to_string())
    })
    .await;
    let client = server.client().await;
    let record = EventRecord {
        regarding: EventObjectRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: "ns".into(),
            name: "web".into(),
            uid: "u-1".into(),
            resource_version: "8".into(),
        },
        reason: "ScaledUp".into(),
        note: "scaled to 3".into(),
        event_type: EventType::Warning,
        action: "Scaling".into(),
        reporting_controller: "recon.dev/web".into(),
        reporting_instance: "host-0".into(),
        namespace: None,
    };
    let now: k8s_openapi::jiff::Timestamp = "2026-11-22T05:00:00.123456Z".parse().unwrap();
    let created = client.record_event_at(&record, now).await.unwrap();
    assert_eq!(created.namespace(), "ns");
    assert!(created.name().starts_with("web."));
    let request = &server.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/apis/events.k8s.io/v1/namespaces/ns/events");
    let body = request.body_json();
    assert_eq!(body["apiVersion"], "events.k8s.io/v1");
    assert_eq!(body["kind"], "Event");
    assert_eq!(body["reason"], "ScaledUp");
    assert_eq!(body["note"], "scaled to 3");
    assert_eq!(body["type"], "Warning");
    assert_eq!(body["action"], "Scaling");
    assert_eq!(body["reportingController"], "recon.dev/web");
    assert_eq!(body["reportingInstance"], "host-0");
    assert_eq!(body["regarding"]["kind"], "Deployment");
    assert_eq!(body["regarding"]["uid"], "u-1");
    assert_eq!(body["eventTime"], "2026-11-22T05:00:00.123456Z");
}
