//! `host new`: a standalone guest, buildable outside this repository. In
//! Rust, a crate: its own `Cargo.toml` (its own workspace, the `guest`
//! profile, the SDK as a path or git dependency), a reconciler of one kind
//! with fake-cluster tests, a `cargo guest` alias and a Justfile to build,
//! inspect and run it; the files are the templates in
//! `host/templates/guest/`. In Python and JavaScript, the same reconciler
//! and tests over those languages' SDKs (pytest, `node --test`) with the
//! build of the component (componentize-py, `recon-guest-build`): the
//! templates in `host/templates/guest-python/` and `host/templates/guest-js/`.

use std::path::{Path, PathBuf};

use recon_api_semantics::names::is_dns_label;
use recon_host::built_in_kinds::{BuiltInKind, built_in_kinds};

/// The language of a new guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Lang {
    /// A crate over `guest-sdk/`, built with cargo.
    #[default]
    Rust,
    /// Modules over `guest-sdk-python/`, built with componentize-py.
    Python,
    /// An npm package over `guest-sdk-js/`, built with componentize-js.
    Js,
}

impl Lang {
    /// The language's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::Python => "Python",
            Lang::Js => "JavaScript",
        }
    }

    /// The SDK's directory in a checkout.
    pub fn sdk_dir(self) -> &'static str {
        match self {
            Lang::Rust => "guest-sdk",
            Lang::Python => "guest-sdk-python",
            Lang::Js => "guest-sdk-js",
        }
    }

    /// A file every SDK directory of the language holds, relative to it.
    fn sdk_marker(self) -> &'static str {
        match self {
            Lang::Rust => "Cargo.toml",
            Lang::Python => "recon_guest/__init__.py",
            Lang::Js => "bin/build.js",
        }
    }

    /// Whether `dir` is an SDK of the language; a Python SDK also needs the
    /// WIT of its checkout (`../wit`), which componentize-py reads.
    pub fn is_sdk(self, dir: &Path) -> bool {
        dir.join(self.sdk_marker()).is_file()
            && (self != Lang::Python || dir.join("../wit/controller.wit").is_file())
    }
}

/// Where the generated guest takes the SDK from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkSource {
    /// A checkout's SDK directory of the guest's language (`guest-sdk/`,
    /// `guest-sdk-python/`, `guest-sdk-js/`).
    Path(PathBuf),
    /// The repository holding the SDK, at a branch, tag or commit (Rust
    /// only).
    Git { url: String, rev: Option<String> },
}

/// The SDK of `lang` of the source tree this host was built from, if it is
/// still there.
pub fn built_in_sdk_of(lang: Lang) -> Option<PathBuf> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(lang.sdk_dir());
    if !lang.is_sdk(&dir) {
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
    pub lang: Lang,
    pub sdk: SdkSource,
}

/// A primary kind as `--kind` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// The k8s-openapi type of a built-in kind
    /// (`k8s_openapi::api::apps::v1::Deployment`); `None` for a custom
    /// resource, whose type the crate defines.
    pub built_in: Option<&'static str>,
    /// The plural (the resource name in URLs).
    pub plural: String,
    /// Whether the kind is cluster-scoped.
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
        "--kind {kind:?}: not a kind of its built-in API group in the k8s-openapi this host \
         was built with; the group has {known}"
    )]
    UnknownBuiltIn { kind: String, known: String },
    #[error(
        "this host was not built from a source tree that is still here, so it has no SDK to point \
         to: pass --sdk-path DIR (a checkout's guest-sdk/) or --sdk-git URL of the repository"
    )]
    NoSdk,
    #[error(
        "this host was not built from a source tree that is still here, so it has no {lang} SDK \
         to point to: pass --sdk-path DIR (a checkout's {dir}/)",
        lang = .0.name(),
        dir = .0.sdk_dir()
    )]
    NoSdkOf(Lang),
    #[error("--sdk-path {}: no guest-sdk/Cargo.toml there", .0.display())]
    BadSdkPath(PathBuf),
    #[error(
        "--sdk-path {}: not a checkout's {dir}/ (no {marker} there{wit})",
        .path.display(),
        dir = .lang.sdk_dir(),
        marker = .lang.sdk_marker(),
        wit = if *.lang == Lang::Python { ", or no ../wit/controller.wit beside it" } else { "" }
    )]
    BadSdkPathOf { path: PathBuf, lang: Lang },
    #[error(
        "--sdk-git: a {lang} guest takes its SDK from a checkout, not from git: pass --sdk-path \
         DIR (a checkout's {dir}/), or nothing for the one of the source tree this host was built \
         from",
        lang = .0.name(),
        dir = .0.sdk_dir()
    )]
    SdkGitOf(Lang),
    #[error("{}: {source}", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

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
        // A built-in group's kinds are all known to k8s-openapi.
        let in_group: Vec<&BuiltInKind> = built_in_kinds()
            .iter()
            .filter(|k| k.group == group)
            .collect();
        if !in_group.is_empty() {
            if plural.is_some() || cluster_scoped {
                return Err(ScaffoldError::BuiltInShape(text.to_string()));
            }
            let Some(known) = in_group
                .iter()
                .find(|k| k.version == version && k.kind == kind)
            else {
                let kinds: Vec<String> = in_group
                    .iter()
                    .map(|k| format!("{}/{}", k.version, k.kind))
                    .collect();
                return Err(ScaffoldError::UnknownBuiltIn {
                    kind: text.to_string(),
                    known: kinds.join(", "),
                });
            };
            return Ok(Kind {
                group: group.to_string(),
                version: version.to_string(),
                kind: kind.to_string(),
                built_in: Some(known.rust_type),
                plural: known.plural.to_string(),
                cluster_scoped: known.cluster_scoped,
            });
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
            built_in: None,
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

/// `s` quoted for a POSIX shell.
fn shell_string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The files of the new guest, relative to its directory.
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
    let mut type_ = type_name(&name);
    if type_ == guest.kind.kind {
        type_.push_str("Reconciler");
    }
    match guest.lang {
        Lang::Rust => rust_files(guest, name, type_),
        Lang::Python | Lang::Js => {
            let SdkSource::Path(sdk) = &guest.sdk else {
                return Err(ScaffoldError::SdkGitOf(guest.lang));
            };
            Ok(interpreted_files(guest.lang, &guest.kind, sdk, name, type_))
        }
    }
}

/// A Python or JavaScript guest: objects are dicts / plain objects, so a
/// custom resource needs no type of its own, only its group, version and
/// kind; the scope decides the tests' example key.
fn interpreted_files(
    lang: Lang,
    kind: &Kind,
    sdk: &Path,
    name: String,
    type_: String,
) -> Vec<(PathBuf, String)> {
    let sdk_text = sdk.to_string_lossy().into_owned();
    let cluster_scoped = kind.cluster_scoped;
    let (key_namespace, key_doc) = match (lang, cluster_scoped) {
        (Lang::Python, false) => ("\"default\"", ": in `default`, the kind being namespaced"),
        (Lang::Js, false) => ("'default'", ": in `default`, the kind being namespaced"),
        (Lang::Python, true) => ("None", ": no namespace, the kind being cluster-scoped"),
        (_, true) => ("null", ": no namespace, the kind being cluster-scoped"),
        (Lang::Rust, false) => unreachable!("a Rust guest is a crate"),
    };
    let vars = [
        ("guest", name.clone()),
        ("crate", name.replace('-', "_")),
        ("Type", type_),
        ("Kind", kind.kind.clone()),
        ("kind", format!("{} {}", kind.api_version(), kind.kind)),
        ("label", format!("{name}.recon.dev/seen")),
        ("group", kind.group.clone()),
        ("version", kind.version.clone()),
        (
            "scope_doc",
            match (cluster_scoped, kind.built_in) {
                (true, Some(_)) => "cluster-scoped".to_string(),
                (false, Some(_)) => "namespaced".to_string(),
                (true, None) => format!(
                    "a cluster-scoped custom resource, plural `{}`: check both against its \
                     CustomResourceDefinition",
                    kind.plural
                ),
                (false, None) => format!(
                    "a namespaced custom resource, plural `{}`: check both against its \
                     CustomResourceDefinition",
                    kind.plural
                ),
            },
        ),
        ("key_namespace", key_namespace.to_string()),
        ("key_doc", key_doc.to_string()),
        ("sdk", sdk_text.clone()),
        ("sdk_shell", shell_string(&sdk_text)),
        (
            "wit_shell",
            shell_string(&sdk.parent().unwrap_or(sdk).join("wit").to_string_lossy()),
        ),
        (
            "sdk_json",
            serde_json::Value::String(format!("file:{sdk_text}")).to_string(),
        ),
    ];
    let templates: &[(&str, &str)] = match lang {
        Lang::Python => &[
            (
                "reconciler.py",
                include_str!("../templates/guest-python/reconciler.py.in"),
            ),
            (
                "app.py",
                include_str!("../templates/guest-python/app.py.in"),
            ),
            (
                "tests/test_reconciler.py",
                include_str!("../templates/guest-python/tests/test_reconciler.py.in"),
            ),
            (
                "pytest.ini",
                include_str!("../templates/guest-python/pytest.ini.in"),
            ),
            (
                "build.sh",
                include_str!("../templates/guest-python/build.sh.in"),
            ),
            (
                "Justfile",
                include_str!("../templates/guest-python/Justfile.in"),
            ),
            (
                ".gitignore",
                include_str!("../templates/guest-python/gitignore.in"),
            ),
            (
                "README.md",
                include_str!("../templates/guest-python/README.md.in"),
            ),
        ],
        _ => &[
            (
                "package.json",
                include_str!("../templates/guest-js/package.json.in"),
            ),
            (
                "src/lib.js",
                include_str!("../templates/guest-js/lib.js.in"),
            ),
            (
                "src/component.js",
                include_str!("../templates/guest-js/component.js.in"),
            ),
            (
                "test/reconciler.test.js",
                include_str!("../templates/guest-js/reconciler.test.js.in"),
            ),
            (
                "Justfile",
                include_str!("../templates/guest-js/Justfile.in"),
            ),
            (
                ".gitignore",
                include_str!("../templates/guest-js/gitignore.in"),
            ),
            (
                "README.md",
                include_str!("../templates/guest-js/README.md.in"),
            ),
        ],
    };
    templates
        .iter()
        .map(|(path, template)| (PathBuf::from(path), render(template, &vars)))
        .collect()
}

/// The files of a new Rust crate.
fn rust_files(
    guest: &NewGuest,
    name: String,
    type_: String,
) -> Result<Vec<(PathBuf, String)>, ScaffoldError> {
    let kind = &guest.kind;
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
    let (kind_module, kind_path, extra_dependencies) = match kind.built_in {
        Some(rust_type) => (
            String::new(),
            format!("recon_guest_sdk::{rust_type}"),
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
    if kind.built_in.is_none() {
        files.push((
            PathBuf::from("src/kind.rs"),
            render(include_str!("../templates/guest/kind.rs.in"), &vars),
        ));
    }
    Ok(files)
}

/// Writes the new guest into its directory, which must not exist or be
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
            std::fs::create_dir_all(path.parent().expect("a file in the guest has a parent"))?;
            std::fs::write(path, &text)?;
            if path.extension().is_some_and(|e| e == "sh") {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
            }
            Ok::<(), std::io::Error>(())
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
        assert_eq!(
            (cm.group.as_str(), cm.built_in),
            ("", Some("k8s_openapi::api::core::v1::ConfigMap"))
        );
        assert_eq!(cm.api_version(), "v1");
        assert!(!cm.cluster_scoped);
        let deploy = parse("apps/v1/Deployment").unwrap();
        assert_eq!(
            deploy.built_in,
            Some("k8s_openapi::api::apps::v1::Deployment")
        );
        assert_eq!(deploy.plural, "deployments");
        let role = parse("rbac.authorization.k8s.io/v1/ClusterRole").unwrap();
        assert_eq!(
            role.built_in,
            Some("k8s_openapi::api::rbac::v1::ClusterRole")
        );
        assert!(role.cluster_scoped);
        let crd = parse("apiextensions.k8s.io/v1/CustomResourceDefinition").unwrap();
        assert!(crd.cluster_scoped);
        let widget = parse("example.com/v1alpha1/Widget").unwrap();
        assert_eq!(widget.built_in, None);
        assert_eq!(widget.api_version(), "example.com/v1alpha1");
        assert_eq!(widget.plural, "widgets");
    }

    #[test]
    fn a_kind_a_built_in_group_lacks_is_refused_with_the_group_s_kinds() {
        for text in ["apps/v1/Deploymnt", "apps/v2/Deployment"] {
            let error = parse(text).unwrap_err();
            assert!(
                matches!(error, ScaffoldError::UnknownBuiltIn { .. }),
                "{text}: {error}"
            );
            let message = error.to_string();
            assert!(message.contains(&format!("--kind {text:?}")), "{message}");
            assert!(message.contains("v1/Deployment"), "{message}");
            assert!(message.contains("v1/StatefulSet"), "{message}");
        }
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
            lang: Lang::Rust,
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
    fn python_and_javascript_guests_fill_every_placeholder_and_take_the_scope() {
        for (lang, kind, key) in [
            (
                Lang::Python,
                "v1/ConfigMap",
                "ObjectKey(\"default\", \"example\")",
            ),
            (
                Lang::Python,
                "rbac.authorization.k8s.io/v1/ClusterRole",
                "ObjectKey(None,",
            ),
            (Lang::Js, "example.com/v1/Widget", "namespace: 'default'"),
            (Lang::Js, "v1/Node", "namespace: null"),
        ] {
            let guest = NewGuest {
                dir: PathBuf::from("/tmp/labeler"),
                kind: parse(kind).unwrap(),
                lang,
                sdk: SdkSource::Path(PathBuf::from("/src/it's/sdk")),
            };
            let files = files(&guest).unwrap();
            // The Justfile's own `{{wasm}}` and `{{kubeconfig}}` stay.
            for (path, text) in files.iter().filter(|(p, _)| p != Path::new("Justfile")) {
                assert!(!text.contains("{{"), "{lang:?} {}: {text}", path.display());
            }
            let tests = files
                .iter()
                .find(|(p, _)| p.starts_with("tests") || p.starts_with("test"))
                .unwrap();
            assert!(tests.1.contains(key), "{kind}: {}", tests.1);
        }
        let guest = NewGuest {
            dir: PathBuf::from("/tmp/labeler"),
            kind: parse("v1/ConfigMap").unwrap(),
            lang: Lang::Python,
            sdk: SdkSource::Path(PathBuf::from("/src/it's/sdk")),
        };
        let build = files(&guest)
            .unwrap()
            .into_iter()
            .find(|(p, _)| p == Path::new("build.sh"))
            .unwrap()
            .1;
        assert!(build.contains("sdk='/src/it'\\''s/sdk'"), "{build}");
        assert!(build.contains("wit='/src/it'\\''s/wit'"), "{build}");
        let git = NewGuest {
            sdk: SdkSource::Git {
                url: "https://example.com/recon.git".into(),
                rev: None,
            },
            ..guest
        };
        assert!(matches!(
            files(&git),
            Err(ScaffoldError::SdkGitOf(Lang::Python))
        ));
    }

    #[test]
    fn the_sdk_dependency_is_a_path_or_a_git_repository() {
        let guest = |sdk| NewGuest {
            dir: PathBuf::from("/tmp/labeler"),
            kind: parse("v1/ConfigMap").unwrap(),
            lang: Lang::Rust,
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
