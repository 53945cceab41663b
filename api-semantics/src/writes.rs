//! The values a write carries, as the API server reads them: the patch
//! types and their media types, delete options and propagation policies,
//! and the type of an Event. The host sends them and the dev server
//! receives them, so both read one definition. The check of a delete's
//! preconditions is here too, for the dev server and the fake cluster.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

/// The type of a PATCH, named by its request's `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/strategic-merge-patch+json` (built-in kinds only).
    StrategicMerge,
    /// `application/apply-patch+yaml`: server-side apply.
    Apply,
}

impl PatchType {
    /// Every patch type, in the order the API server lists their media
    /// types when it refuses another.
    pub const ALL: [PatchType; 4] = [
        PatchType::Json,
        PatchType::Merge,
        PatchType::Apply,
        PatchType::StrategicMerge,
    ];

    /// The media type a client sends.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Json => "application/json-patch+json",
            PatchType::StrategicMerge => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }

    /// The patch type of a request's media type (parameters such as
    /// `; charset=utf-8` ignored); the API server also takes apply
    /// configurations as `application/apply-patch+json`.
    pub fn from_content_type(content_type: &str) -> Option<PatchType> {
        let media_type = content_type.split(';').next().unwrap_or_default().trim();
        if media_type == "application/apply-patch+json" {
            return Some(PatchType::Apply);
        }
        PatchType::ALL
            .into_iter()
            .find(|patch_type| patch_type.content_type() == media_type)
    }
}

/// A patch and its type, as a client sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Patch {
    /// `application/merge-patch+json` (RFC 7386).
    Merge(String),
    /// `application/json-patch+json` (RFC 6902).
    Json(String),
    /// `application/strategic-merge-patch+json` (built-in kinds only).
    StrategicMerge(String),
    /// `application/apply-patch+yaml`: server-side apply of a full intent.
    Apply {
        /// The applied configuration (JSON is valid YAML).
        body: String,
        /// `fieldManager`, required by the server.
        field_manager: String,
        /// `force`: take over fields owned by other managers.
        force: bool,
    },
}

impl Patch {
    /// Its type.
    pub fn patch_type(&self) -> PatchType {
        match self {
            Patch::Merge(_) => PatchType::Merge,
            Patch::Json(_) => PatchType::Json,
            Patch::StrategicMerge(_) => PatchType::StrategicMerge,
            Patch::Apply { .. } => PatchType::Apply,
        }
    }

    /// The media type the server expects.
    pub fn content_type(&self) -> &'static str {
        self.patch_type().content_type()
    }

    /// The request body.
    pub fn body(&self) -> &str {
        match self {
            Patch::Merge(body)
            | Patch::Json(body)
            | Patch::StrategicMerge(body)
            | Patch::Apply { body, .. } => body,
        }
    }
}

/// `propagationPolicy` of a delete: what happens to the object's
/// dependents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagationPolicy {
    /// Dependents are deleted before the owner.
    Foreground,
    /// The owner goes at once, dependents in the background.
    Background,
    /// Dependents are kept.
    Orphan,
}

impl PropagationPolicy {
    /// As the API writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            PropagationPolicy::Foreground => "Foreground",
            PropagationPolicy::Background => "Background",
            PropagationPolicy::Orphan => "Orphan",
        }
    }
}

impl FromStr for PropagationPolicy {
    type Err = String;

    /// Parses `Orphan`, `Background` or `Foreground`; anything else is the
    /// API server's message.
    fn from_str(s: &str) -> Result<Self, String> {
        [
            PropagationPolicy::Orphan,
            PropagationPolicy::Background,
            PropagationPolicy::Foreground,
        ]
        .into_iter()
        .find(|policy| policy.as_str() == s)
        .ok_or_else(|| {
            format!("propagationPolicy {s:?} is not one of Orphan, Background, Foreground")
        })
    }
}

impl fmt::Display for PropagationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Options of a delete (a `DeleteOptions` body or its query parameters).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// `propagationPolicy`; `None`: the kind's default.
    pub propagation_policy: Option<PropagationPolicy>,
    /// `preconditions.uid`: delete only this incarnation.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`: delete only this version.
    pub precondition_resource_version: Option<String>,
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<i64>,
    /// `dryRun: ["All"]`.
    pub dry_run: bool,
}

/// Why a delete's preconditions fail for the stored `obj`, in the API
/// server's words (the message of its 409 Conflict): a `uid` or a
/// `resource_version` that is given and is not the object's, the uid
/// checked first. `None` when they hold.
pub fn delete_precondition_failure(
    obj: &Value,
    uid: Option<&str>,
    resource_version: Option<&str>,
) -> Option<String> {
    let preconditions = [
        ("UID", "uid", uid),
        ("ResourceVersion", "resourceVersion", resource_version),
    ];
    preconditions
        .into_iter()
        .find_map(|(label, field, expected)| {
            let expected = expected?;
            let actual = obj
                .get("metadata")
                .and_then(|meta| meta.get(field))
                .and_then(Value::as_str)
                .unwrap_or("");
            (expected != actual).then(|| {
                format!(
                    "Precondition failed: {label} in precondition: {expected}, \
                     {label} in object meta: {actual}"
                )
            })
        })
}

/// `type` of an Event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// `Normal`.
    Normal,
    /// `Warning`.
    Warning,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_name_patch_types_both_ways() {
        for patch_type in PatchType::ALL {
            assert_eq!(
                PatchType::from_content_type(patch_type.content_type()),
                Some(patch_type)
            );
        }
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json; charset=utf-8"),
            Some(PatchType::Merge)
        );
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+json"),
            Some(PatchType::Apply)
        );
        assert_eq!(PatchType::from_content_type("application/json"), None);
        let apply = Patch::Apply {
            body: "{}".into(),
            field_manager: "m".into(),
            force: true,
        };
        assert_eq!(apply.content_type(), "application/apply-patch+yaml");
        assert_eq!(apply.body(), "{}");
    }

    #[test]
    fn delete_preconditions_name_the_first_that_fails() {
        let obj = serde_json::json!({"metadata": {"uid": "u1", "resourceVersion": "7"}});
        assert_eq!(delete_precondition_failure(&obj, None, None), None);
        assert_eq!(
            delete_precondition_failure(&obj, Some("u1"), Some("7")),
            None
        );
        assert_eq!(
            delete_precondition_failure(&obj, Some("u2"), Some("8")).as_deref(),
            Some("Precondition failed: UID in precondition: u2, UID in object meta: u1")
        );
        assert_eq!(
            delete_precondition_failure(&obj, Some("u1"), Some("8")).as_deref(),
            Some(
                "Precondition failed: ResourceVersion in precondition: 8, \
                 ResourceVersion in object meta: 7"
            )
        );
        let bare = serde_json::json!({});
        assert_eq!(
            delete_precondition_failure(&bare, None, Some("1")).as_deref(),
            Some(
                "Precondition failed: ResourceVersion in precondition: 1, \
                 ResourceVersion in object meta: "
            )
        );
    }

    #[test]
    fn propagation_policies_read_back_what_they_write() {
        for policy in [
            PropagationPolicy::Orphan,
            PropagationPolicy::Background,
            PropagationPolicy::Foreground,
        ] {
            assert_eq!(policy.as_str().parse(), Ok(policy));
        }
        assert_eq!(
            "orphan".parse::<PropagationPolicy>(),
            Err(
                "propagationPolicy \"orphan\" is not one of Orphan, Background, Foreground"
                    .to_string()
            )
        );
    }
}
