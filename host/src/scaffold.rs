//! `host new`: a standalone guest crate, buildable outside this repository —
//! its own `Cargo.toml` (its own workspace, the `guest` profile, the SDK as a
//! path or git dependency), a reconciler of one kind with fake-cluster
//! tests, a `cargo guest` alias and a Justfile to build, inspect and run it.
//! The files are the templates in `host/templates/guest/`.

use std::path::{Path, PathBuf};

use recon_api_semantics::names::is_dns_label;

/// Where the generated crate takes the SDK from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkSource {
    /// A checkout's `guest-sdk/` directory.
    Path(PathBuf),
    /// The repository holding the SDK, at a branch, tag or commit.
    Git { url: String, rev: Option<String> },
}

/// The SDK of the source tree this host was built from, if it is still
/// there.
pub fn built_in_sdk() -> Option<PathBuf> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../guest-sdk"));
    if !dir.join("Cargo.toml").is_file() {
        return None;
    }
    dir.canonicalize().ok()
}

/// A guest to create.
#[derive(Debug, Clone)]
pub struct NewGuest {
    /// The directory; its name is the guest's and the crate's.
    pub dir: PathBuf,
    /// The primary kind.
    pub kind: Kind,
    pub sdk: SdkSource,
}

/// A primary kind as `--kind` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Where k8s-openapi has the type, for a built-in kind; `None` for a
    /// custom resource, whose type the crate defines.
    pub module: Option<&'static str>,
    /// A custom resource's plural.
    pub plural: String,
    /// A custom resource's scope.
    pub cluster_scoped: bool,
}

/// Why no guest was created.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error("{}: exists and is not empty", .0.display())]
    NotEmpty(PathBuf),
    #[error(
        "{}: the directory's name {name:?} becomes the guest's and the crate's name, so it must be \
         1-63 of a-z, 0-9 and '-', starting with a letter and not ending with '-'",
        .dir.display()
    )]
    BadName { dir: PathBuf, name: String },
    #[error(
        "--kind {0:?}: expected GROUP/VERSION/KIND or, for the core group, VERSION/KIND \
         (v1/ConfigMap, apps/v1/Deployment, example.com/v1alpha1/Widget)"
    )]
    BadKind(String),
    #[error("--plural {0:?}: expected 1-63 of a-z, 0-9 and '-'")]
    BadPlural(String),
    #[error(
        "--plural and --cluster-scoped describe a custom resource; {0} is built in, \
         k8s-openapi knows its plural and scope"
    )]
    BuiltInShape(String),
    #[error(
        "this host was not built from a source tree that is still here, so it has no SDK to point \
         to: pass --sdk-path DIR (a checkout's guest-sdk/) or --sdk-git URL of the repository"
    )]
    NoSdk,
    #[error("--sdk-path {}: no guest-sdk/Cargo.toml there", .0.display())]
    BadSdkPath(PathBuf),
    #[error("{}: {source}", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The built-in API groups and where k8s-openapi keeps their types.
const BUILT_IN_GROUPS: &[(&str, &str)] = &[
    ("", "api::core"),
    ("admissionregistration.k8s.io", "api::admissionregistration"),
    (
        "apiextensions.k8s.io",
        "apiextensions_apiserver::pkg::apis::apiextensions",
    ),
    (
        "apiregistration.k8s.io",
        "kube_aggregator::pkg::apis::apiregistration",
    ),
    ("apps", "api::apps"),
    ("authentication.k8s.io", "api::authentication"),
    ("authorization.k8s.io", "api::authorization"),
    ("autoscaling", "api::autoscaling"),
    ("batch", "api::batch"),
    ("certificates.k8s.io", "api::certificates"),
    ("coordination.k8s.io", "api::coordination"),
    ("discovery.k8s.io", "api::discovery"),
    ("events.k8s.io", "api::events"),
    ("flowcontrol.apiserver.k8s.io", "api::flowcontrol"),
    ("internal.apiserver.k8s.io", "api::apiserverinternal"),
    ("networking.k8s.io", "api::networking"),
    ("node.k8s.io", "api::node"),
    ("policy", "api::policy"),
    ("rbac.authorization.k8s.io", "api::rbac"),
    ("resource.k8s.io", "api::resource"),
    ("scheduling.k8s.io", "api::scheduling"),
    ("storage.k8s.io", "api::storage"),
    ("storagemigration.k8s.io", "api::storagemigration"),
];

impl Kind {
    /// Parses `GROUP/VERSION/KIND` or `VERSION/KIND` (the core group);
    /// `plural` and `cluster_scoped` apply to a custom resource only.
    pub fn parse(
        text: &str,
        plural: Option<&str>,
        cluster_scoped: bool,
    ) -> Result<Kind, ScaffoldError> {
        let bad = || ScaffoldError::BadKind(text.to_string());
        let parts: Vec<&str> = text.split('/').collect();
        let (group, version, kind) = match parts[..] {
            [version, kind] => ("", version, kind),
            [group, version, kind] if !group.is_empty() => (group, version, kind),
            _ => return Err(bad()),
        };
        let group_ok = group.is_empty() || group.split('.').all(is_dns_label);
        if !group_ok || !is_version(version) || !is_kind(kind) {
            return Err(bad());
        }
        let module = BUILT_IN_GROUPS
            .iter()
            .find(|(g, _)| *g == group)
            .map(|(_, module)| *module);
        if module.is_some() && (plural.is_some() || cluster_scoped) {
            return Err(ScaffoldError::BuiltInShape(text.to_string()));
        }
        let plural = match plural {
            Some(p) if is_dns_label(p) => p.to_string(),
            Some(p) => return Err(ScaffoldError::BadPlural(p.to_string())),
            None => plural_of(kind),
        };
        Ok(Kind {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            module,
            plural,
            cluster_scoped,
        })
    }

    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        match self.group.as_str() {
            "" => self.version.clone(),
            group => format!("{group}/{}", self.version),
        }
    }
}

/// `v1`, `v1beta2`, `v2alpha1`.
fn is_version(version: &str) -> bool {
    let Some(rest) = version.strip_prefix('v') else {
        return false;
    };
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (major, rest) = rest.split_at(digits);
    let level = ["alpha", "beta"]
        .iter()
        .find_map(|level| rest.strip_prefix(level));
    !major.is_empty()
        && !major.starts_with('0')
        && match level {
            None => rest.is_empty(),
            Some(n) => !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()),
        }
}

/// `ConfigMap`: an upper-case ASCII letter, then ASCII letters and digits.
fn is_kind(kind: &str) -> bool {
    kind.starts_with(|c: char| c.is_ascii_uppercase())
        && kind.chars().all(|c| c.is_ascii_alphanumeric())
        && kind.len() <= 63
}

/// A custom resource's default plural: the kind in lower case, plus `es`
/// after s, x, z, ch and sh, `ies` for a y after a consonant, else `s`.
fn plural_of(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if lower.ends_with(['s', 'x', 'z']) || lower.ends_with("ch") || lower.ends_with("sh") {
        return format!("{lower}es");
    }
    format!("{lower}s")
}

/// `my-guest` → `MyGuest`.
fn type_name(name: &str) -> String {
    name.split('-')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Replaces each `{{key}}` of `vars` in `template`.
fn render(template: &str, vars: &[(&str, String)]) -> String {
    vars.iter()
        .fold(template.to_string(), |text, (key, value)| {
            text.replace(&format!("{{{{{key}}}}}"), value)
        })
}

/// The files of the new crate, relative to its directory.
pub fn files(guest: &NewGuest) -> Result<Vec<(PathBuf, String)>, ScaffoldError> {
    let name = guest
        .dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    if !is_dns_label(&name) || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(ScaffoldError::BadName {
            dir: guest.dir.clone(),
            name,
        });
    }
    let kind = &guest.kind;
    let mut type_ = type_name(&name);
    if type_ == kind.kind {
        type_.push_str("Reconciler");
    }
    let sdk = match &guest.sdk {
        SdkSource::Path(path) => format!("{{ path = {} }}", toml_string(&path.to_string_lossy())),
        SdkSource::Git { url, rev: None } => format!("{{ git = {} }}", toml_string(url)),
        SdkSource::Git {
            url,
            rev: Some(rev),
        } => {
            format!(
                "{{ git = {}, rev = {} }}",
                toml_string(url),
                toml_string(rev)
            )
        }
    };
    let (kind_module, kind_path, extra_dependencies) = match kind.module {
        Some(module) => (
            String::new(),
            format!(
                "recon_guest_sdk::k8s_openapi::{module}::{}::{}",
                kind.version, kind.kind
            ),
            String::new(),
        ),
        None => (
            "\nmod kind;\n".to_string(),
            format!("kind::{}", kind.kind),
            "# The custom resource's derives.\nserde = { version = \"1\", features = [\"derive\"] }\n"
                .to_string(),
        ),
    };
    let vars = [
        ("package", name.clone()),
        ("crate", name.replace('-', "_")),
        ("guest", name.clone()),
        ("Type", type_),
        ("Kind", kind.kind.clone()),
        ("kind", format!("{} {}", kind.api_version(), kind.kind)),
        ("label", format!("{name}.recon.dev/seen")),
        ("sdk", sdk),
        ("extra_dependencies", extra_dependencies),
        ("kind_module", kind_module),
        ("kind_path", kind_path),
        ("api_version", kind.api_version()),
        ("group", kind.group.clone()),
        ("version", kind.version.clone()),
        ("plural", kind.plural.clone()),
        (
            "scope",
            match kind.cluster_scoped {
                true => "ClusterResourceScope",
                false => "NamespaceResourceScope",
            }
            .to_string(),
        ),
        (
            "scope_doc",
            match kind.cluster_scoped {
                true => "cluster-scoped",
                false => "namespaced",
            }
            .to_string(),
        ),
    ];
    const TEMPLATES: &[(&str, &str)] = &[
        (
            "Cargo.toml",
            include_str!("../templates/guest/Cargo.toml.in"),
        ),
        (
            ".cargo/config.toml",
            include_str!("../templates/guest/cargo-config.toml.in"),
        ),
        (
            ".gitignore",
            include_str!("../templates/guest/gitignore.in"),
        ),
        ("Justfile", include_str!("../templates/guest/Justfile.in")),
        ("README.md", include_str!("../templates/guest/README.md.in")),
        ("src/lib.rs", include_str!("../templates/guest/lib.rs.in")),
        (
            "src/tests.rs",
            include_str!("../templates/guest/tests.rs.in"),
        ),
    ];
    let mut files: Vec<(PathBuf, String)> = TEMPLATES
        .iter()
        .map(|(path, template)| (PathBuf::from(path), render(template, &vars)))
        .collect();
    if kind.module.is_none() {
        files.push((
            PathBuf::from("src/kind.rs"),
            render(include_str!("../templates/guest/kind.rs.in"), &vars),
        ));
    }
    Ok(files)
}

/// Writes the new crate into its directory, which must not exist or be
/// empty.
pub fn create(guest: &NewGuest) -> Result<(), ScaffoldError> {
    let files = files(guest)?;
    let occupied = std::fs::read_dir(&guest.dir)
        .map(|mut entries| entries.next().is_some())
        .unwrap_or(false);
    if occupied {
        return Err(ScaffoldError::NotEmpty(guest.dir.clone()));
    }
    for (relative, text) in files {
        let path = guest.dir.join(relative);
        let write = |path: &Path| {
            std::fs::create_dir_all(path.parent().expect("a file in the crate has a parent"))?;
            std::fs::write(path, &text)
        };
        write(&path).map_err(|source| ScaffoldError::Write { path, source })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Kind, ScaffoldError> {
        Kind::parse(text, None, false)
    }

    #[test]
    fn built_in_kinds_map_to_k8s_openapi_and_others_are_custom() {
        let cm = parse("v1/ConfigMap").unwrap();
        assert_eq!((cm.group.as_str(), cm.module), ("", Some("api::core")));
        assert_eq!(cm.api_version(), "v1");
        let deploy = parse("apps/v1/Deployment").unwrap();
        assert_eq!(deploy.module, Some("api::apps"));
        let role = parse("rbac.authorization.k8s.io/v1/ClusterRole").unwrap();
        assert_eq!(role.module, Some("api::rbac"));
        let widget = parse("example.com/v1alpha1/Widget").unwrap();
        assert_eq!(widget.module, None);
        assert_eq!(widget.api_version(), "example.com/v1alpha1");
        assert_eq!(widget.plural, "widgets");
    }

    #[test]
    fn malformed_kinds_are_refused() {
        for text in [
            "ConfigMap",
            "/v1/ConfigMap",
            "apps/v1/deployment",
            "apps/1/Deployment",
            "apps/v1beta/Deployment",
            "apps/v01/Deployment",
            "Example.com/v1/Widget",
            "a/b/v1/Widget",
            "apps/v1/Deploy-ment",
        ] {
            assert!(
                matches!(parse(text), Err(ScaffoldError::BadKind(_))),
                "{text}"
            );
        }
        assert!(matches!(
            Kind::parse("apps/v1/Deployment", Some("deploys"), false),
            Err(ScaffoldError::BuiltInShape(_))
        ));
        assert!(matches!(
            Kind::parse("example.com/v1/Widget", Some("Widgets"), false),
            Err(ScaffoldError::BadPlural(_))
        ));
    }

    #[test]
    fn plurals_follow_english_spelling() {
        for (kind, plural) in [
            ("Widget", "widgets"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Ingress", "ingresses"),
            ("Box", "boxes"),
            ("Patch", "patches"),
        ] {
            assert_eq!(plural_of(kind), plural);
        }
    }

    #[test]
    fn names_become_types_and_bad_directories_are_refused() {
        assert_eq!(type_name("my-guest"), "MyGuest");
        let guest = |dir: &str| NewGuest {
            dir: PathBuf::from(dir),
            kind: parse("v1/ConfigMap").unwrap(),
            sdk: SdkSource::Path(PathBuf::from("/sdk")),
        };
        for bad in ["/tmp/My_Guest", "/tmp/9lives", "/tmp/x-"] {
            assert!(
                matches!(files(&guest(bad)), Err(ScaffoldError::BadName { .. })),
                "{bad}"
            );
        }
        let files = files(&guest("/tmp/config-map")).unwrap();
        let lib = &files.iter().find(|(p, _)| p.ends_with("lib.rs")).unwrap().1;
        assert!(lib.contains("pub struct ConfigMapReconciler;"), "{lib}");
        assert!(!lib.contains("{{"), "every placeholder is filled: {lib}");
    }

    #[test]
    fn the_sdk_dependency_is_a_path_or_a_git_repository() {
        let guest = |sdk| NewGuest {
            dir: PathBuf::from("/tmp/labeler"),
            kind: parse("v1/ConfigMap").unwrap(),
            sdk,
        };
        let manifest = |sdk| {
            files(&guest(sdk))
                .unwrap()
                .into_iter()
                .find(|(p, _)| p == Path::new("Cargo.toml"))
                .unwrap()
                .1
        };
        let path = manifest(SdkSource::Path(PathBuf::from("/src/recon/guest-sdk")));
        assert!(
            path.contains("recon-guest-sdk = { path = \"/src/recon/guest-sdk\" }"),
            "{path}"
        );
        let git = manifest(SdkSource::Git {
            url: "https://example.com/recon.git".into(),
            rev: Some("v0.1.0".into()),
        });
        assert!(
            git.contains(
                "recon-guest-sdk = { git = \"https://example.com/recon.git\", rev = \"v0.1.0\" }"
            ),
            "{git}"
        );
    }
}
