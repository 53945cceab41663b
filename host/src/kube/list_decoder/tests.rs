//! The streaming list decoder: the same page whatever the chunking, items
//! typed from their list, strings that look like structure, and malformed
//! bodies refused with the cause.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::ListDecoder;
use crate::informer::ListPage;

const MAX: usize = 1 << 20;

fn decode(chunks: &[&[u8]]) -> Result<ListPage, String> {
    let mut decoder = ListDecoder::new(super::super::Decoding::whole(true), MAX);
    for chunk in chunks {
        decoder.feed(chunk).map_err(|e| e.message)?;
    }
    decoder.finish().map_err(|e| e.message)
}

fn decode_whole(body: &str) -> Result<ListPage, String> {
    decode(&[body.as_bytes()])
}

/// `body` cut at every point in `cuts` (sorted, within the body).
fn decode_cut(body: &str, cuts: &[usize]) -> Result<ListPage, String> {
    let bytes = body.as_bytes();
    let mut chunks = Vec::new();
    let mut from = 0;
    for &cut in cuts {
        chunks.push(&bytes[from..cut]);
        from = cut;
    }
    chunks.push(&bytes[from..]);
    decode(&chunks)
}

fn pod(name: &str, tricky: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": "3",
               "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
               "annotations": {"note": tricky}},
           "spec": {"containers": [{"name": "c", "args": [tricky, "]", "}", "{["]}]}})
}

#[test]
fn a_page_s_items_are_typed_from_the_list_and_pruned() {
    let body = json!({"kind": "PodList", "apiVersion": "v1",
        "metadata": {"resourceVersion": "42", "continue": "more"},
        "items": [pod("a", "x"), pod("b", "y")]})
    .to_string();
    let page = decode_whole(&body).unwrap();
    assert_eq!(page.resource_version, "42");
    assert_eq!(page.continue_token, "more");
    let keys: Vec<&str> = page.items.iter().map(|o| o.key()).collect();
    assert_eq!(keys, ["ns/a", "ns/b"]);
    for item in &page.items {
        assert_eq!((item.api_version(), item.kind()), ("v1", "Pod"));
        assert!(!item.has_managed_fields());
    }
}

#[test]
fn strings_that_look_like_structure_stay_strings() {
    let tricky = r#"he said "}]," then \"items\": [ {"#;
    let body = json!({"kind": "PodList", "apiVersion": "v1",
        "metadata": {"resourceVersion": "1", "items": [1, 2], "note": "\"items\":["},
        "items": [pod("a", tricky), pod("b", "\\")]})
    .to_string();
    let page = decode_whole(&body).unwrap();
    assert_eq!(page.items.len(), 2);
    let first: Value = serde_json::from_str(&page.items[0].json()).unwrap();
    assert_eq!(first["metadata"]["annotations"]["note"], tricky);
    let second: Value = serde_json::from_str(&page.items[1].json()).unwrap();
    assert_eq!(second["spec"]["containers"][0]["args"][0], "\\");
}

#[test]
fn a_list_that_names_its_type_after_its_items_still_types_them() {
    let body = format!(
        r#"{{"items": [{}, {{"metadata":{{"name":"b"}}}}], "metadata": {{"resourceVersion": "9"}}, "apiVersion": "v1", "kind": "PodList"}}"#,
        pod("a", "x")
    );
    let page = decode_whole(&body).unwrap();
    assert_eq!(page.resource_version, "9");
    assert_eq!(page.items.len(), 2);
    assert_eq!(page.items[0].kind(), "Pod");
    assert_eq!(page.items[1].kind(), "Pod");
    assert_eq!(
        page.items[1].json(),
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"}}"#
    );
}

#[test]
fn empty_and_missing_items_are_empty_pages() {
    for body in [
        r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}"#,
        r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":null}"#,
        r#" {"metadata":{"resourceVersion":"5"}} "#,
        "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[ \n ]}\n",
    ] {
        let page = decode_whole(body).unwrap_or_else(|e| panic!("{body}: {e}"));
        assert_eq!(page.resource_version, "5", "{body}");
        assert!(page.items.is_empty(), "{body}");
    }
}

#[test]
fn malformed_bodies_are_refused_naming_the_cause() {
    let cases = [
        ("", "not a JSON object"),
        ("  ", "not a JSON object"),
        ("[]", "not a JSON object"),
        (r#"{"items": [ {"metadata": "#, "ends inside a value"),
        (r#"{"items": [{"metadata": {}}]}"#, "malformed list item 0"),
        (
            r#"{"items": [{"metadata": {"name": "a"}}, 7]}"#,
            "malformed list item 1: not an object",
        ),
        (
            r#"{"items": ["a"]}"#,
            "malformed list item 0: not an object",
        ),
        (r#"{"items": {}}"#, "malformed list body"),
        (r#"{"items": []} x"#, "malformed list body"),
        (r#"{"items": [], "items": []}"#, "malformed list body"),
        (r#"{"metadata": 5, "items": []}"#, "malformed list body"),
        (
            r#"{"metadata": {"resourceVersion": 5}}"#,
            "malformed list body",
        ),
    ];
    for (body, expected) in cases {
        let error = decode_whole(body).expect_err(body);
        assert!(error.contains(expected), "{body}: {error}");
    }
    let error = decode(&[b"{\"items\": [{\"metadata\": {\"name\": \"\xff\"}}]}"]).unwrap_err();
    assert!(
        error.contains("malformed list item 0: not UTF-8"),
        "{error}"
    );
}

#[test]
fn an_item_over_the_limit_is_refused_and_the_buffer_stays_bounded() {
    let big = "x".repeat(2_000);
    let body = json!({"items": [pod("a", "x"), pod("b", &big)]}).to_string();
    let mut decoder = ListDecoder::new(super::super::Decoding::whole(true), 1_500);
    let error = decoder.feed(body.as_bytes()).unwrap_err();
    assert!(
        error
            .message
            .contains("malformed list item 1: longer than 1500 bytes"),
        "{error}"
    );
}

/// A list body of `count` items with the type members before or after
/// them, and the expected keys.
fn list_body(count: usize, tricky: &str, type_first: bool) -> (String, Vec<String>) {
    let items: Vec<Value> = (0..count).map(|i| pod(&format!("p{i}"), tricky)).collect();
    let items = Value::Array(items).to_string();
    let body = if type_first {
        format!(
            r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"77"}},"items":{items}}}"#
        )
    } else {
        format!(
            r#"{{ "items" : {items} , "metadata":{{"resourceVersion":"77"}},"apiVersion":"v1","kind":"PodList"}}"#
        )
    };
    let keys = (0..count).map(|i| format!("ns/p{i}")).collect();
    (body, keys)
}

proptest! {
    /// However the body is cut into chunks, the page is the one the whole
    /// body gives, and its items are the list's, typed from it.
    #[test]
    fn any_chunking_gives_the_same_page(
        count in 0usize..6,
        tricky in "[\\PC\"\\\\{}\\[\\],:]{0,12}",
        type_first in any::<bool>(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let (body, keys) = list_body(count, &tricky, type_first);
        let whole = decode_whole(&body).expect("the whole body decodes");
        let keys_seen: Vec<&str> = whole.items.iter().map(|o| o.key()).collect();
        prop_assert_eq!(&keys_seen, &keys);
        prop_assert_eq!(&whole.resource_version, "77");
        for item in &whole.items {
            prop_assert_eq!(item.kind(), "Pod");
            let parsed: Value = serde_json::from_str(&item.json()).unwrap();
            prop_assert_eq!(&parsed["metadata"]["annotations"]["note"], &json!(tricky));
        }
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(body.len() + 1)).collect();
        cuts.sort_unstable();
        let chunked = decode_cut(&body, &cuts).expect("the chunked body decodes");
        prop_assert_eq!(&chunked.items, &whole.items);
        prop_assert_eq!(chunked.resource_version, whole.resource_version);
        prop_assert_eq!(chunked.continue_token, whole.continue_token);
    }

    /// A body cut short anywhere is an error, never a shorter page.
    #[test]
    fn a_truncated_body_is_an_error(count in 1usize..4, at in any::<prop::sample::Index>()) {
        let (body, _) = list_body(count, "}]", true);
        let end = at.index(body.len());
        prop_assert!(decode_whole(&body[..end]).is_err());
    }
}
