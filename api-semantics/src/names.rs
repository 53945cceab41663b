//! Namespaces and object names as the API server accepts them, and the
//! checks of an object key (`namespace/name`, or `name`) built of them.

/// A DNS-1123 label, as namespaces are: 1-63 of `a-z`, `0-9` and `-`,
/// starting and ending alphanumeric.
pub fn is_dns_label(s: &str) -> bool {
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// What is wrong with an object name, if anything: every kind's names are
/// path segments (not `.` or `..`, no `/` or `%`) of at most 253 bytes.
pub fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.len() > 253 {
        Some("is longer than 253 bytes")
    } else if name == "." || name == ".." {
        Some("may not be '.' or '..'")
    } else if name.contains(['/', '%']) {
        Some("may not contain '/' or '%'")
    } else if name.chars().any(char::is_control) {
        Some("may not contain control characters")
    } else {
        None
    }
}

/// What is wrong with the key of an object in `namespace` (none or empty
/// for a cluster-scoped one) named `name`, if anything, in words that
/// quote the offending part (cut to 64 characters).
pub fn key_problem(namespace: Option<&str>, name: &str) -> Option<String> {
    match namespace.filter(|ns| !ns.is_empty()) {
        Some(ns) if !is_dns_label(ns) => Some(format!(
            "namespace {:?} is not a DNS label (1-63 of a-z, 0-9 and '-', starting and ending alphanumeric)",
            shorten(ns)
        )),
        _ => name_problem(name).map(|p| format!("name {:?} {p}", shorten(name))),
    }
}

/// The first 64 characters of `text`, for messages about it.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((end, _)) => format!("{}… ({} bytes)", &text[..end], text.len()),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_are_dns_labels() {
        for ok in ["a", "default", "kube-system", "a1", &"n".repeat(63)] {
            assert!(is_dns_label(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a.b", "a_b", &"n".repeat(64)] {
            assert!(!is_dns_label(bad), "{bad}");
        }
    }

    #[test]
    fn names_are_path_segments_of_at_most_253_bytes() {
        assert_eq!(name_problem("web-1.example"), None);
        assert_eq!(name_problem(&"n".repeat(253)), None);
        assert_eq!(name_problem(""), Some("is empty"));
        assert_eq!(
            name_problem(&"n".repeat(254)),
            Some("is longer than 253 bytes")
        );
        assert_eq!(name_problem(".."), Some("may not be '.' or '..'"));
        assert_eq!(name_problem("a/b"), Some("may not contain '/' or '%'"));
        assert_eq!(
            name_problem("a\nb"),
            Some("may not contain control characters")
        );
    }

    #[test]
    fn a_key_names_its_bad_part_cut_short() {
        assert_eq!(key_problem(Some("default"), "web"), None);
        assert_eq!(key_problem(None, "node-1"), None);
        assert_eq!(key_problem(Some(""), "node-1"), None);
        let namespace = key_problem(Some("Bad"), "web").unwrap();
        assert!(namespace.starts_with("namespace \"Bad\" is not a DNS label"));
        let long = key_problem(Some("a"), &"x".repeat(1 << 20)).unwrap();
        assert!(long.contains("(1048576 bytes)"), "{long}");
        assert!(long.len() < 200, "{long}");
    }
}
