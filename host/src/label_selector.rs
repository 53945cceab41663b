//! Label selectors, from the `recon-label-selector` crate the guest SDK
//! shares: parsed as the API server parses them, matched against cached
//! objects' labels (guests' cache reads and handlers) and the dev server's
//! JSON objects.

pub use recon_label_selector::{Labels, ParseError, Requirement, Selector as LabelSelector};

use crate::object::Object;

impl Labels for Object {
    fn label(&self, key: &str) -> Option<&str> {
        Object::label(self, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_objects_match_by_their_labels() {
        let object = Object::from_json(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"app":"web","tier":"front"}}}"#,
        )
        .unwrap();
        let matches = |s: &str| LabelSelector::parse(s).unwrap().matches(&object);
        assert!(matches("app=web,tier in (front,back)"));
        assert!(matches("!missing"));
        assert!(!matches("app=db"));
    }
}
