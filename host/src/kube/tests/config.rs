//! Kubeconfig loading: the current context, `--context`, and clear errors
//! for a missing context, malformed YAML and a missing file.

use std::ffi::OsString;

use crate::clock::SystemClock;
use crate::kube::config::{
    ConfigError, ConnectOptions, config_from_kubeconfig_file, connect_with_kubeconfig_text,
    load_config, load_config_with_env,
};
use crate::kube::rate_limit::ClientRateLimiter;
use crate::kube::test_support::{kubeconfig_yaml, temp_dir, write_kubeconfig};

#[tokio::test]
async fn the_current_context_is_used_by_default() {
    let path = write_kubeconfig(&kubeconfig_yaml("http://127.0.0.1:6443"));
    let config = load_config(&ConnectOptions {
        kubeconfig: Some(path),
        ..ConnectOptions::default()
    })
    .await
    .unwrap();
    assert_eq!(config.cluster_url.to_string(), "http://127.0.0.1:6443/");
    assert_eq!(config.default_namespace, "team-a");
    assert!(!config.default_retry);
}

#[tokio::test]
async fn context_selects_another_cluster() {
    let path = write_kubeconfig(&kubeconfig_yaml("http://127.0.0.1:6443"));
    let config = config_from_kubeconfig_file(&path, Some("other"))
        .await
        .unwrap();
    assert_eq!(config.cluster_url.to_string(), "http://127.0.0.1:1/");
    assert_eq!(config.default_namespace, "default");
}

#[tokio::test]
async fn a_missing_context_is_named() {
    let path = write_kubeconfig(&kubeconfig_yaml("http://127.0.0.1:6443"));
    let error = config_from_kubeconfig_file(&path, Some("foo"))
        .await
        .unwrap_err();
    assert!(matches!(error, ConfigError::Kubeconfig { .. }));
    assert_eq!(
        error.to_string(),
        format!("kubeconfig {}: no context named \"foo\"", path.display())
    );
}

#[tokio::test]
async fn a_context_naming_an_undefined_cluster_is_named() {
    let yaml =
        kubeconfig_yaml("http://127.0.0.1:6443").replace("cluster: other", "cluster: nowhere");
    let path = write_kubeconfig(&yaml);
    let error = config_from_kubeconfig_file(&path, Some("other"))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("names cluster \"nowhere\", which is not defined"),
        "{error}"
    );
}

#[tokio::test]
async fn no_current_context_is_explained() {
    let yaml = kubeconfig_yaml("http://127.0.0.1:6443").replace("current-context: test\n", "");
    let path = write_kubeconfig(&yaml);
    let error = config_from_kubeconfig_file(&path, None).await.unwrap_err();
    assert!(error.to_string().contains("no current-context"), "{error}");
}

#[tokio::test]
async fn malformed_yaml_names_the_file_and_the_location() {
    let path = write_kubeconfig("apiVersion: v1\nclusters:\n- name: a\n  cluster: [unclosed\n");
    let error = config_from_kubeconfig_file(&path, None).await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("kubeconfig {}:", path.display())),
        "{message}"
    );
    assert!(message.contains("parse"), "{message}");
    assert!(message.contains("line"), "{message}");
    println!("{message}");
}

#[tokio::test]
async fn a_missing_file_is_named() {
    let path = temp_dir().join("absent");
    let error = load_config(&ConnectOptions {
        kubeconfig: Some(path.clone()),
        context: Some("x".into()),
        in_cluster: false,
    })
    .await
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("kubeconfig {}: no such file", path.display())
    );
}

#[tokio::test]
async fn in_cluster_without_a_service_account_is_an_error() {
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
        // Running inside a pod: in-cluster configuration may well work.
        return;
    }
    let error = load_config(&ConnectOptions {
        in_cluster: true,
        ..ConnectOptions::default()
    })
    .await
    .unwrap_err();
    assert!(
        error.to_string().starts_with("in-cluster configuration:"),
        "{error}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn exec_and_token_auth_reach_the_server() {
    use std::os::unix::fs::PermissionsExt;

    use crate::clock::SystemClock;
    use crate::kube::config::connect;
    use crate::kube::discovery::{ApiResource, Gvk};
    use crate::kube::rate_limit::ClientRateLimiter;
    use crate::kube::test_support::{Reply, TOKEN, TestServer};

    let server = TestServer::start(|r| match r.authorization.as_deref() {
        Some("Bearer from-exec-plugin") | Some("Bearer test-token-123") => Reply::json(
            200,
            "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"}}",
        ),
        _ => Reply::status(401, "Unauthorized", "Unauthorized"),
    })
    .await;
    let dir = temp_dir();
    let plugin = dir.join("credential-plugin.sh");
    std::fs::write(
        &plugin,
        "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"from-exec-plugin\"}}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let yaml = format!(
        "{}- name: exec
  context:
    cluster: test
    user: exec
",
        kubeconfig_yaml(&server.url())
    )
    .replace(
        "users:\n",
        &format!(
            "users:
- name: exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: {}
      interactiveMode: Never
",
            plugin.display()
        ),
    );
    let path = dir.join("config");
    std::fs::write(&path, yaml).unwrap();
    let res = ApiResource::new(Gvk::new("", "v1", "ConfigMap"), "configmaps", true);
    for context in ["test", "exec"] {
        let client = connect(
            &ConnectOptions {
                kubeconfig: Some(path.clone()),
                context: Some(context.into()),
                in_cluster: false,
            },
            ClientRateLimiter::unlimited(SystemClock::shared()),
        )
        .await
        .unwrap();
        let object = client.get(&res, Some("ns"), "x").await.unwrap();
        assert_eq!(object.name(), "x");
    }
    let seen: Vec<Option<String>> = server
        .requests()
        .into_iter()
        .map(|r| r.authorization)
        .collect();
    assert_eq!(
        seen,
        [
            Some(format!("Bearer {TOKEN}")),
            Some("Bearer from-exec-plugin".to_string())
        ]
    );
}

fn fake_env(vars: Vec<(&'static str, OsString)>) -> impl Fn(&str) -> Option<OsString> {
    move |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    }
}

#[tokio::test]
async fn kubeconfig_env_lists_are_merged_in_order_and_home_is_the_fallback() {
    let first = write_kubeconfig(&kubeconfig_yaml("http://127.0.0.1:7001"));
    let second = write_kubeconfig(
        &kubeconfig_yaml("http://127.0.0.1:7002")
            .replace("current-context: test", "current-context: extra")
            .replace("name: other", "name: extra")
            .replace("cluster: other", "cluster: extra"),
    );
    let missing = temp_dir().join("missing");
    let list = std::env::join_paths([missing.clone(), first.clone(), second.clone()]).unwrap();
    let env = fake_env(vec![("KUBECONFIG", list.clone())]);
    // The first file's current context and clusters win.
    let config = load_config_with_env(&ConnectOptions::default(), &env)
        .await
        .unwrap();
    assert_eq!(config.cluster_url.to_string(), "http://127.0.0.1:7001/");
    // Contexts only the second file defines are there too.
    let config = load_config_with_env(
        &ConnectOptions {
            context: Some("extra".into()),
            ..ConnectOptions::default()
        },
        &env,
    )
    .await
    .unwrap();
    assert_eq!(config.cluster_url.to_string(), "http://127.0.0.1:1/");
    // --kubeconfig overrides KUBECONFIG.
    let config = load_config_with_env(
        &ConnectOptions {
            kubeconfig: Some(second.clone()),
            ..ConnectOptions::default()
        },
        &env,
    )
    .await
    .unwrap();
    assert_eq!(config.cluster_url.to_string(), "http://127.0.0.1:1/");
    // A list of files none of which exists.
    let env = fake_env(vec![(
        "KUBECONFIG",
        std::env::join_paths([missing.clone(), missing.join("x")]).unwrap(),
    )]);
    let error = load_config_with_env(&ConnectOptions::default(), &env)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("none of the files exists"),
        "{error}"
    );

    // No KUBECONFIG: $HOME/.kube/config.
    let home = temp_dir();
    std::fs::create_dir_all(home.join(".kube")).unwrap();
    std::fs::copy(&first, home.join(".kube/config")).unwrap();
    let env = fake_env(vec![("HOME", home.clone().into_os_string())]);
    let config = load_config_with_env(&ConnectOptions::default(), &env)
        .await
        .unwrap();
    assert_eq!(config.cluster_url.to_string(), "http://127.0.0.1:7001/");

    // Nothing at all.
    let empty_home = temp_dir();
    let env = fake_env(vec![("HOME", empty_home.clone().into_os_string())]);
    let error = load_config_with_env(&ConnectOptions::default(), &env)
        .await
        .unwrap_err();
    assert!(matches!(error, ConfigError::NotFound { .. }));
    assert!(
        error.to_string().contains("not running in a cluster"),
        "{error}"
    );
}

#[tokio::test]
async fn a_kubeconfig_given_as_text_connects_and_malformed_text_is_named() {
    let limiter = ClientRateLimiter::unlimited(SystemClock::shared());
    let text = kubeconfig_yaml("http://127.0.0.1:6443");
    connect_with_kubeconfig_text(&text, "inline", limiter.clone())
        .await
        .expect("a valid kubeconfig connects");
    let Err(error) = connect_with_kubeconfig_text("clusters: [", "inline", limiter).await else {
        panic!("malformed YAML must be an error");
    };
    assert!(
        matches!(&error, ConfigError::KubeconfigRead { path, .. } if path == "inline"),
        "{error}"
    );
}
