//! The operator's policy: what each guest may do, granted by name from a
//! file (`host run --policy FILE`, YAML or JSON) instead of by the guest's
//! own manifest. A grant names the kinds a guest may read (watch, cache,
//! get, list), whole or as metadata only, the kinds and verbs it may write, whether it may record
//! events, optionally the namespaces it may act in, and the host
//! directories it alone may use. A manifest asking
//! for more than its guest's grant is refused at load with every excess
//! listed; a guest the policy does not name is refused. The namespaces a
//! guest acts in are its grant's within the host's (`--namespace`).
//!
//! It is a module of its own, beside the runtime and the controller rather
//! than inside either, because it is neither: the runtime checks that a
//! manifest is well-formed and knows nothing of clusters, and the
//! controller enforces what a guest holds; the policy is the operator's
//! decision of what each guest holds. `docs/POLICY.md` is its reference.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde_saphyr::{Location, Spanned};

use crate::runtime::Preopen;
use crate::runtime::manifest::{Manifest, Verb, event_kind};
use recon_api_semantics::Gvk;
use recon_api_semantics::names::is_dns_label;

/// The namespaces a guest may act in: reads, writes and events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Namespaces {
    /// Every namespace.
    All,
    /// Only these (possibly none).
    Only(BTreeSet<String>),
}

impl Namespaces {
    /// The namespaces of repeated `--namespace` flags: every namespace when
    /// there are none.
    pub fn from_flags(names: &[String]) -> Namespaces {
        if names.is_empty() {
            Namespaces::All
        } else {
            Namespaces::Only(names.iter().cloned().collect())
        }
    }

    /// Whether `namespace` is one of them.
    pub fn contains(&self, namespace: &str) -> bool {
        match self {
            Namespaces::All => true,
            Namespaces::Only(names) => names.contains(namespace),
        }
    }

    /// The namespaces in both.
    pub fn intersection(&self, other: &Namespaces) -> Namespaces {
        match (self, other) {
            (Namespaces::All, other) | (other, Namespaces::All) => other.clone(),
            (Namespaces::Only(a), Namespaces::Only(b)) => {
                Namespaces::Only(a.intersection(b).cloned().collect())
            }
        }
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        matches!(self, Namespaces::Only(names) if names.is_empty())
    }

    /// What an informer watches for each: `None` (all namespaces) for
    /// [`Namespaces::All`], else each namespace.
    pub fn watched(&self) -> Vec<Option<String>> {
        match self {
            Namespaces::All => vec![None],
            Namespaces::Only(names) => names.iter().cloned().map(Some).collect(),
        }
    }
}

impl fmt::Display for Namespaces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Namespaces::All => f.write_str("every namespace"),
            Namespaces::Only(names) if names.is_empty() => f.write_str("no namespace"),
            Namespaces::Only(names) => {
                f.write_str(&names.iter().cloned().collect::<Vec<_>>().join(", "))
            }
        }
    }
}

/// A kind as operators write it: `v1/Secret`, `apps/v1/Deployment`.
pub fn kind_name(kind: &Gvk) -> String {
    format!("{}/{}", kind.api_version(), kind.kind)
}

/// A place in a policy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Why a policy file was refused; the host does not start.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read.
    #[error("policy {file}: cannot read: {source}")]
    Read {
        /// The file.
        file: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Not YAML of the policy's shape: a syntax error, an unknown field or
    /// verb, a missing field, a value of the wrong type.
    #[error("policy {file}: {}", .source.without_snippet())]
    Parse {
        /// The file.
        file: String,
        /// What the parser found, with its place.
        source: Box<serde_saphyr::Error>,
    },
    /// Two grants for one guest.
    #[error("policy {at}: guest {name:?} is granted twice (first at line {first_line})")]
    DuplicateGuest {
        /// The second grant's name.
        at: Place,
        /// The guest.
        name: String,
        /// The line of the first grant's name.
        first_line: u64,
    },
    /// A guest name no manifest can have.
    #[error(
        "policy {at}: guest name {name:?} is not a DNS label: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'"
    )]
    InvalidGuestName {
        /// The name.
        at: Place,
        /// The name as written.
        name: String,
    },
    /// A namespace name no namespace can have.
    #[error(
        "policy {at}: guest {guest}: namespace {namespace:?} is not a DNS label: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'"
    )]
    InvalidNamespace {
        /// The namespace.
        at: Place,
        /// The guest.
        guest: String,
        /// The namespace as written.
        namespace: String,
    },
    /// `namespaces: []`.
    #[error(
        "policy {at}: guest {guest}: an empty namespaces list grants nothing; leave it out to grant every namespace"
    )]
    NoNamespaces {
        /// The list.
        at: Place,
        /// The guest.
        guest: String,
    },
    /// An `apiVersion` / `kind` pair that names no kind.
    #[error(
        "policy {at}: guest {guest}: apiVersion {api_version:?}, kind {kind:?} is not a kind: apiVersion is `v1` or `group/version` and kind is not empty"
    )]
    InvalidKind {
        /// The entry's apiVersion.
        at: Place,
        /// The guest.
        guest: String,
        /// As written.
        api_version: String,
        /// As written.
        kind: String,
    },
    /// A directory entry that cannot be granted.
    #[error("policy {at}: guest {guest}: {problem}")]
    InvalidDir {
        /// The entry's path.
        at: Place,
        /// The guest.
        guest: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A write entry with no verb.
    #[error("policy {at}: guest {guest}: the writes of {kind} list no verb")]
    NoVerbs {
        /// The verbs list.
        at: Place,
        /// The guest.
        guest: String,
        /// The kind, as `apiVersion/Kind`.
        kind: String,
    },
}

/// Something a manifest asks for that its grant does not give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Excess {
    /// Reading (watching, caching) a kind.
    Read(Gvk),
    /// Writing a kind with these verbs.
    /// Reading a kind whole that is granted as metadata only.
    WholeRead(Gvk),
    Write {
        /// The kind.
        kind: Gvk,
        /// The verbs not granted.
        verbs: Vec<Verb>,
    },
    /// Recording events.
    Events,
}

impl fmt::Display for Excess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Excess::Read(kind) => write!(f, "reads {}", kind_name(kind)),
            Excess::WholeRead(kind) => write!(
                f,
                "reads {} whole (granted as metadata only: the manifest must read it metadata-only)",
                kind_name(kind)
            ),
            Excess::Write { kind, verbs } => {
                let verbs: Vec<&str> = verbs.iter().map(|v| v.as_str()).collect();
                write!(f, "writes {} ({})", kind_name(kind), verbs.join(", "))
            }
            Excess::Events => write!(
                f,
                "records events (create of {}; granted by `events: true`)",
                kind_name(&event_kind())
            ),
        }
    }
}

/// Excesses as one line: `reads v1/Secret; writes v1/Secret (create)`.
pub fn listed(excess: &[Excess]) -> String {
    excess
        .iter()
        .map(Excess::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why a guest's manifest was refused under a policy; that guest does not
/// start, the others do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    /// The policy has no grant for the guest.
    #[error("guest {guest}: the policy {file} does not name it, so it is granted nothing")]
    NotNamed {
        /// The guest.
        guest: String,
        /// The policy file.
        file: String,
    },
    /// The manifest asks for more than the grant.
    #[error(
        "guest {guest}: its manifest asks for more than the policy {file} grants: {}",
        listed(.excess)
    )]
    Excess {
        /// The guest.
        guest: String,
        /// The policy file.
        file: String,
        /// Everything asked for and not granted.
        excess: Vec<Excess>,
    },
    /// None of the grant's namespaces is one the host watches.
    #[error(
        "guest {guest}: the policy {file} grants it {granted}, none of which the host watches (--namespace: {host})"
    )]
    NoNamespace {
        /// The guest.
        guest: String,
        /// The policy file.
        file: String,
        /// The grant's namespaces.
        granted: Namespaces,
        /// The host's.
        host: Namespaces,
    },
}

/// What the policy grants one guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The guest's name (its manifest's).
    pub name: String,
    /// Where it may act.
    pub namespaces: Namespaces,
    /// Kinds it may read whole (or as metadata only).
    pub reads: BTreeSet<Gvk>,
    /// Kinds it may read as metadata only: listed and watched as
    /// `PartialObjectMetadata` (the manifest's `metadata-only`).
    pub metadata_reads: BTreeSet<Gvk>,
    /// Kinds it may write, with the verbs.
    pub writes: BTreeMap<Gvk, BTreeSet<Verb>>,
    /// Whether it may record events (`create` of `events.k8s.io/v1` Events).
    pub events: bool,
    /// Host directories only this guest's reconciles see.
    pub dirs: Vec<Preopen>,
}

impl Grant {
    /// What a guest is granted without a policy: what its `manifest`
    /// asks for, in `namespaces`.
    pub fn of_manifest(manifest: &Manifest, namespaces: &Namespaces) -> Grant {
        let mut writes: BTreeMap<Gvk, BTreeSet<Verb>> = BTreeMap::new();
        for permission in &manifest.writes {
            writes
                .entry(permission.kind.clone())
                .or_default()
                .extend(permission.verbs.iter().copied());
        }
        Grant {
            name: manifest.name.clone(),
            namespaces: namespaces.clone(),
            reads: manifest
                .watched_kinds()
                .into_iter()
                .filter(|kind| !manifest.metadata_only.contains(kind))
                .cloned()
                .collect(),
            metadata_reads: manifest.metadata_only.iter().cloned().collect(),
            writes,
            events: manifest.allows_events(),
            dirs: Vec::new(),
        }
    }

    /// Whether `verb` on `kind` is granted; `events` grants `create` of
    /// events as a write entry would.
    pub fn allows(&self, kind: &Gvk, verb: Verb) -> bool {
        (self.events && verb == Verb::Create && *kind == event_kind())
            || self
                .writes
                .get(kind)
                .is_some_and(|verbs| verbs.contains(&verb))
    }

    /// What `manifest` asks for beyond this grant, in manifest order.
    pub fn excess(&self, manifest: &Manifest) -> Vec<Excess> {
        let mut excess: Vec<Excess> = manifest
            .watched_kinds()
            .into_iter()
            .filter(|kind| !self.reads.contains(*kind))
            .filter_map(|kind| {
                let metadata_only = manifest.metadata_only.contains(kind);
                match self.metadata_reads.contains(kind) {
                    true if metadata_only => None,
                    true => Some(Excess::WholeRead(kind.clone())),
                    false => Some(Excess::Read(kind.clone())),
                }
            })
            .collect();
        for permission in &manifest.writes {
            let mut verbs: Vec<Verb> = Vec::new();
            for &verb in &permission.verbs {
                if self.allows(&permission.kind, verb) || verbs.contains(&verb) {
                    continue;
                }
                if verb == Verb::Create && permission.kind == event_kind() {
                    excess.push(Excess::Events);
                } else {
                    verbs.push(verb);
                }
            }
            if !verbs.is_empty() {
                excess.push(Excess::Write {
                    kind: permission.kind.clone(),
                    verbs,
                });
            }
        }
        excess
    }
}

/// A policy file, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    file: String,
    grants: Vec<Grant>,
}

impl Policy {
    /// Reads and checks the policy at `path`.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let file = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => Policy::parse(&file, &text),
            Err(source) => Err(PolicyError::Read { file, source }),
        }
    }

    /// Checks the policy text of `file`.
    pub fn parse(file: &str, text: &str) -> Result<Policy, PolicyError> {
        let parsed: PolicyFile =
            serde_saphyr::from_str(text).map_err(|source| PolicyError::Parse {
                file: file.to_string(),
                source: Box::new(source),
            })?;
        let place = |at: Location| Place {
            file: file.to_string(),
            line: at.line(),
            column: at.column(),
        };
        let mut grants: Vec<Grant> = Vec::new();
        let mut first_lines: BTreeMap<String, u64> = BTreeMap::new();
        for entry in parsed.guests {
            let name = entry.name.value.clone();
            if !is_dns_label(&name) {
                return Err(PolicyError::InvalidGuestName {
                    at: place(entry.name.referenced),
                    name,
                });
            }
            if let Some(&first_line) = first_lines.get(&name) {
                return Err(PolicyError::DuplicateGuest {
                    at: place(entry.name.referenced),
                    name,
                    first_line,
                });
            }
            first_lines.insert(name.clone(), entry.name.referenced.line());
            let namespaces = match entry.namespaces {
                None => Namespaces::All,
                Some(list) if list.value.is_empty() => {
                    return Err(PolicyError::NoNamespaces {
                        at: place(list.referenced),
                        guest: name,
                    });
                }
                Some(list) => {
                    let mut names = BTreeSet::new();
                    for namespace in list.value {
                        if !is_dns_label(&namespace.value) {
                            return Err(PolicyError::InvalidNamespace {
                                at: place(namespace.referenced),
                                guest: name,
                                namespace: namespace.value,
                            });
                        }
                        names.insert(namespace.value);
                    }
                    Namespaces::Only(names)
                }
            };
            let kind = |api_version: &Spanned<String>, kind: &str| {
                parse_kind(&api_version.value, kind).ok_or_else(|| PolicyError::InvalidKind {
                    at: place(api_version.referenced),
                    guest: name.clone(),
                    api_version: api_version.value.clone(),
                    kind: kind.to_string(),
                })
            };
            let mut reads = BTreeSet::new();
            let mut metadata_reads = BTreeSet::new();
            for read in &entry.reads {
                let read_kind = kind(&read.api_version, &read.kind)?;
                match read.metadata_only {
                    true => metadata_reads.insert(read_kind),
                    false => reads.insert(read_kind),
                };
            }
            let mut writes: BTreeMap<Gvk, BTreeSet<Verb>> = BTreeMap::new();
            for write in &entry.writes {
                let written = kind(&write.api_version, &write.kind)?;
                if write.verbs.value.is_empty() {
                    return Err(PolicyError::NoVerbs {
                        at: place(write.verbs.referenced),
                        guest: name.clone(),
                        kind: kind_name(&written),
                    });
                }
                writes
                    .entry(written)
                    .or_default()
                    .extend(write.verbs.value.iter().copied());
            }
            let mut dirs: Vec<Preopen> = Vec::new();
            for dir in entry.dirs {
                let invalid = |at: Location, problem: String| PolicyError::InvalidDir {
                    at: place(at),
                    guest: name.clone(),
                    problem,
                };
                let mount = dir.mount_path.value;
                if !mount.starts_with('/') {
                    return Err(invalid(
                        dir.mount_path.referenced,
                        format!("mountPath {mount:?} is not absolute"),
                    ));
                }
                if dirs.iter().any(|d| d.guest == mount) {
                    return Err(invalid(
                        dir.mount_path.referenced,
                        format!("mountPath {mount} is granted twice"),
                    ));
                }
                let host = std::path::PathBuf::from(&dir.host_path.value);
                if !host.is_dir() {
                    return Err(invalid(
                        dir.host_path.referenced,
                        format!("hostPath {} is not a directory", host.display()),
                    ));
                }
                dirs.push(Preopen {
                    host,
                    guest: mount,
                    read_only: dir.read_only,
                });
            }
            grants.push(Grant {
                name,
                namespaces,
                reads,
                metadata_reads,
                writes,
                events: entry.events,
                dirs,
            });
        }
        Ok(Policy {
            file: file.to_string(),
            grants,
        })
    }

    /// The file the policy was read from.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The grant of the guest named `name`, if any.
    pub fn grant(&self, name: &str) -> Option<&Grant> {
        self.grants.iter().find(|grant| grant.name == name)
    }

    /// Checks `manifest` against its guest's grant: the namespaces the
    /// guest may act in (the grant's within `host`'s), or why it is refused.
    pub fn admit(&self, manifest: &Manifest, host: &Namespaces) -> Result<Namespaces, GrantError> {
        let guest = manifest.name.clone();
        let file = self.file.clone();
        let Some(grant) = self.grant(&manifest.name) else {
            return Err(GrantError::NotNamed { guest, file });
        };
        let excess = grant.excess(manifest);
        if !excess.is_empty() {
            return Err(GrantError::Excess {
                guest,
                file,
                excess,
            });
        }
        let namespaces = grant.namespaces.intersection(host);
        if namespaces.is_empty() {
            return Err(GrantError::NoNamespace {
                guest,
                file,
                granted: grant.namespaces.clone(),
                host: host.clone(),
            });
        }
        Ok(namespaces)
    }
}

/// `v1` or `group/version` and a kind; `None` when that is not a kind.
fn parse_kind(api_version: &str, kind: &str) -> Option<Gvk> {
    let parts: Vec<&str> = api_version.split('/').collect();
    let well_formed = match parts.as_slice() {
        [version] | [_, version] => !version.is_empty() && parts.iter().all(|p| !p.is_empty()),
        _ => false,
    };
    (well_formed && !kind.is_empty()).then(|| Gvk::from_api_version(api_version, kind))
}

/// The file's shape.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    guests: Vec<GuestEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GuestEntry {
    name: Spanned<String>,
    #[serde(default)]
    namespaces: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    reads: Vec<KindEntry>,
    #[serde(default)]
    writes: Vec<WriteEntry>,
    #[serde(default)]
    events: bool,
    #[serde(default)]
    dirs: Vec<DirEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct DirEntry {
    host_path: Spanned<String>,
    mount_path: Spanned<String>,
    #[serde(default)]
    read_only: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct KindEntry {
    api_version: Spanned<String>,
    kind: String,
    /// Granted as metadata only.
    #[serde(default)]
    metadata_only: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WriteEntry {
    api_version: Spanned<String>,
    kind: String,
    verbs: Spanned<Vec<Verb>>,
}

#[cfg(test)]
mod tests;
