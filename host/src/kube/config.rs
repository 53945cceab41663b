//! Connection configuration: a `kube-client` [`Config`] from a kubeconfig
//! (`--kubeconfig PATH`, else `KUBECONFIG`, else `~/.kube/config`) with an
//! optional `--context`, or from the in-cluster service account. Auth
//! (token, client certificate, exec plugins) is whatever `kube-client`
//! supports. Errors name the file and the cause.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kube_client::config::{InClusterError, KubeConfigOptions, Kubeconfig, KubeconfigError};
use kube_client::{Client, Config};

use super::client::ApiClient;
use super::rate_limit::ClientRateLimiter;

/// Where to connect to, as given on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectOptions {
    /// `--kubeconfig`: a kubeconfig file; overrides `KUBECONFIG`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`: a context of the kubeconfig instead of its current one.
    pub context: Option<String>,
    /// Use the in-cluster service account, ignoring any kubeconfig.
    pub in_cluster: bool,
}

/// Why no client configuration could be built.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The kubeconfig does not make sense (e.g. `no context named "foo"`).
    #[error("kubeconfig {path}: {problem}")]
    Kubeconfig {
        /// The file (or `KUBECONFIG` list) it came from.
        path: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The kubeconfig could not be read, parsed, merged or resolved.
    #[error("kubeconfig {path}: {source}")]
    KubeconfigRead {
        /// The file (or `KUBECONFIG` list) it came from.
        path: String,
        /// What `kube-client` found wrong.
        #[source]
        source: KubeconfigError,
    },
    /// In-cluster configuration failed.
    #[error("in-cluster configuration: {0}")]
    InCluster(#[source] InClusterError),
    /// Neither a kubeconfig nor an in-cluster environment was found.
    #[error(
        "no kubeconfig found (no --kubeconfig, no KUBECONFIG, no {default}) and not running in a cluster"
    )]
    NotFound {
        /// The default path looked at.
        default: String,
    },
    /// The transport could not be built from the configuration.
    #[error("client: {0}")]
    Client(#[source] kube_client::Error),
}

fn kubeconfig_error(path: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError::Kubeconfig {
        path: path.to_string(),
        problem: problem.into(),
    }
}

fn read_error(path: &str) -> impl FnOnce(KubeconfigError) -> ConfigError {
    let path = path.to_string();
    move |source| ConfigError::KubeconfigRead { path, source }
}

/// Reads a kubeconfig file and builds a configuration for `context` (its
/// current context when `None`).
pub async fn config_from_kubeconfig_file(
    path: &Path,
    context: Option<&str>,
) -> Result<Config, ConfigError> {
    let shown = path.display().to_string();
    if !path.exists() {
        return Err(kubeconfig_error(&shown, "no such file"));
    }
    let kubeconfig = Kubeconfig::read_from(path).map_err(read_error(&shown))?;
    config_from_kubeconfig(kubeconfig, &shown, context).await
}

/// Builds a configuration from a parsed kubeconfig; `shown` names it in
/// errors.
pub async fn config_from_kubeconfig(
    kubeconfig: Kubeconfig,
    shown: &str,
    context: Option<&str>,
) -> Result<Config, ConfigError> {
    let context_name = match context {
        Some(name) => name.to_string(),
        None => kubeconfig
            .current_context
            .clone()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                kubeconfig_error(shown, "no current-context set and no --context given")
            })?,
    };
    let Some(named) = kubeconfig.contexts.iter().find(|c| c.name == context_name) else {
        return Err(kubeconfig_error(
            shown,
            format!("no context named {context_name:?}"),
        ));
    };
    if let Some(ctx) = &named.context {
        if !kubeconfig.clusters.iter().any(|c| c.name == ctx.cluster) {
            return Err(kubeconfig_error(
                shown,
                format!(
                    "context {context_name:?} names cluster {:?}, which is not defined",
                    ctx.cluster
                ),
            ));
        }
        if let Some(user) = &ctx.user
            && !kubeconfig.auth_infos.iter().any(|u| &u.name == user)
        {
            return Err(kubeconfig_error(
                shown,
                format!("context {context_name:?} names user {user:?}, which is not defined"),
            ));
        }
    }
    let options = KubeConfigOptions {
        context: Some(context_name),
        cluster: None,
        user: None,
    };
    let mut config = Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(read_error(shown))?;
    // The reflector and the guests decide about retries, not the transport.
    config.default_retry = false;
    Ok(config)
}

/// Resolves [`ConnectOptions`] into a configuration: in-cluster when asked;
/// else `--kubeconfig`, `KUBECONFIG`, `~/.kube/config` in that order; else
/// in-cluster when `KUBERNETES_SERVICE_HOST` is set.
pub async fn load_config(options: &ConnectOptions) -> Result<Config, ConfigError> {
    load_config_with_env(options, &|name| std::env::var_os(name)).await
}

/// [`load_config`] reading the environment (`KUBECONFIG`, `HOME`,
/// `KUBERNETES_SERVICE_HOST`) through `env`.
///
/// A `KUBECONFIG` list is merged in order (the first file to set a value
/// wins); files of the list that do not exist are skipped, as client-go
/// does, unless none exists.
pub async fn load_config_with_env(
    options: &ConnectOptions,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Config, ConfigError> {
    if options.in_cluster {
        return in_cluster();
    }
    if let Some(path) = &options.kubeconfig {
        return config_from_kubeconfig_file(path, options.context.as_deref()).await;
    }
    if let Some(value) = env("KUBECONFIG").filter(|v| !v.is_empty()) {
        let shown = value.to_string_lossy().into_owned();
        let paths: Vec<PathBuf> = std::env::split_paths(&value)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        if let [path] = &paths[..] {
            return config_from_kubeconfig_file(path, options.context.as_deref()).await;
        }
        let mut merged: Option<Kubeconfig> = None;
        for path in paths.iter().filter(|p| p.exists()) {
            let shown = path.display().to_string();
            let next = Kubeconfig::read_from(path).map_err(read_error(&shown))?;
            merged = Some(match merged {
                None => next,
                Some(merged) => merged.merge(next).map_err(read_error(&shown))?,
            });
        }
        let Some(kubeconfig) = merged else {
            return Err(kubeconfig_error(&shown, "none of the files exists"));
        };
        return config_from_kubeconfig(kubeconfig, &shown, options.context.as_deref()).await;
    }
    let default = env("HOME").map(|home| Path::new(&home).join(".kube").join("config"));
    if let Some(path) = default.as_ref().filter(|p| p.exists()) {
        return config_from_kubeconfig_file(path, options.context.as_deref()).await;
    }
    if env("KUBERNETES_SERVICE_HOST").is_some() {
        return in_cluster();
    }
    Err(ConfigError::NotFound {
        default: default
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "~/.kube/config".to_string()),
    })
}

fn in_cluster() -> Result<Config, ConfigError> {
    let mut config = Config::incluster().map_err(ConfigError::InCluster)?;
    config.default_retry = false;
    Ok(config)
}

/// Builds the `kube-client` transport for a configuration. Must be called
/// inside a Tokio runtime (the transport spawns a worker task).
pub fn build_kube_client(config: Config) -> Result<Client, ConfigError> {
    Client::try_from(config).map_err(ConfigError::Client)
}

/// Builds a rate-limited [`ApiClient`] from a kubeconfig given as text (the
/// embedded dev server hands out its own this way), using its current
/// context; `shown` names the kubeconfig in errors.
pub async fn connect_with_kubeconfig_text(
    text: &str,
    shown: &str,
    limiter: Arc<ClientRateLimiter>,
) -> Result<ApiClient, ConfigError> {
    let kubeconfig = Kubeconfig::from_yaml(text).map_err(read_error(shown))?;
    let config = config_from_kubeconfig(kubeconfig, shown, None).await?;
    Ok(ApiClient::new(build_kube_client(config)?, limiter))
}

/// Resolves the options and builds a rate-limited [`ApiClient`].
pub async fn connect(
    options: &ConnectOptions,
    limiter: Arc<ClientRateLimiter>,
) -> Result<ApiClient, ConfigError> {
    let config = load_config(options).await?;
    Ok(ApiClient::new(build_kube_client(config)?, limiter))
}
