//! [`ListDecoder`]: decodes a list response body as it arrives. Each item
//! of the top-level `items` array is parsed into its cached [`Object`] as
//! soon as its last byte is in, and its text dropped, so a list never holds
//! its whole body: only the item in progress and the list's envelope (every
//! member but the items, which a server keeps small) are buffered.
//!
//! The decoder only finds where items begin and end (strings, escapes and
//! nesting, across chunk boundaries); the JSON itself is checked by the
//! parsers: each item by the object parser, the envelope — the body with
//! `"items":[]` — by serde_json once the body has ended.
//!
//! List items from a real server usually lack `apiVersion` and `kind` (the
//! typed lists of built-in kinds omit them). When an item's first member is
//! neither, both are filled in from the list (`ConfigMapList` →
//! `ConfigMap`, the list's `apiVersion`) by prefixing them to the item's
//! JSON: one copy of the item, no extra parse. Should an item carry them
//! further down, the item's own value wins (the object parser keeps the
//! last member). The list's `apiVersion` and `kind` are read when its items
//! begin (servers send them first); items of a list that names them only
//! after its items are kept as text until the end.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Decoding;
use crate::informer::{ListPage, LwError};
use crate::object::Object;

/// Where the decoder stands in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In the list object, outside its items (or before it begins).
    Envelope,
    /// In the `items` array, between items.
    Between,
    /// In an item.
    Item,
}

/// Decodes one list body fed in chunks; see the module's doc.
pub(crate) struct ListDecoder {
    /// How items become their cached form.
    decoding: Decoding,
    /// The longest item (and envelope) accepted, in bytes.
    max_len: usize,
    place: Place,
    /// Whether the body's first value has begun.
    begun: bool,
    /// Open objects and arrays around the current byte.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a member name.
    expect_name: bool,
    /// Whether the string being read is a member name at depth 1.
    reading_name: bool,
    /// The member name last read at depth 1 (up to a few bytes: only
    /// `items` is looked for).
    name: Vec<u8>,
    name_too_long: bool,
    /// The value after a depth-1 `:` has not begun yet.
    awaiting_value: bool,
    /// Whether the `items` array was seen.
    seen_items: bool,
    envelope: Vec<u8>,
    item: Vec<u8>,
    /// `{"apiVersion":…,"kind":…,` for items that lack both; `None` when
    /// the list names neither.
    prefix: Option<String>,
    /// Whether `prefix` is known (the list's head was read).
    prefix_known: bool,
    /// Items whose list type was not known yet when they ended.
    pending: Vec<String>,
    items: Vec<Object>,
    /// Items ended so far (for error messages).
    count: usize,
    /// A buffer for prefixed items.
    scratch: String,
}

impl ListDecoder {
    /// A decoder that makes each item's cached form as `decoding` says and
    /// refuses items (and an envelope) longer than `max_len` bytes.
    pub(crate) fn new(decoding: Decoding, max_len: usize) -> Self {
        ListDecoder {
            decoding,
            max_len,
            place: Place::Envelope,
            begun: false,
            depth: 0,
            in_string: false,
            escaped: false,
            expect_name: false,
            reading_name: false,
            name: Vec::new(),
            name_too_long: false,
            awaiting_value: false,
            seen_items: false,
            envelope: Vec::new(),
            item: Vec::new(),
            prefix: None,
            prefix_known: false,
            pending: Vec::new(),
            items: Vec::new(),
            count: 0,
            scratch: String::new(),
        }
    }

    /// Takes the next chunk of the body; items that end in it are parsed.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<(), LwError> {
        // Bytes from `start` on belong to the current place's buffer
        // (nothing between items).
        let mut start = 0;
        let mut at = 0;
        while at < chunk.len() {
            let byte = chunk[at];
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if byte == b'\\' {
                    self.escaped = true;
                } else if byte == b'"' {
                    self.in_string = false;
                    if self.reading_name {
                        self.reading_name = false;
                        self.expect_name = false;
                    }
                } else if self.reading_name {
                    if self.name.len() < 8 {
                        self.name.push(byte);
                    } else {
                        self.name_too_long = true;
                    }
                }
                at += 1;
                continue;
            }
            match (self.place, byte) {
                (_, b' ' | b'\t' | b'\n' | b'\r') => {}
                (Place::Between, b',') => {}
                (Place::Between, b'{') => {
                    start = at;
                    self.place = Place::Item;
                    self.depth += 1;
                }
                (Place::Between, b']') => {
                    // The array closes: the envelope gets `]` after `[`.
                    start = at;
                    self.place = Place::Envelope;
                    self.depth -= 1;
                }
                (Place::Between, _) => {
                    return Err(self.malformed_item("not an object"));
                }
                (Place::Item, b'"') => self.in_string = true,
                (Place::Item, b'{' | b'[') => self.depth += 1,
                (Place::Item, b'}' | b']') => {
                    self.depth -= 1;
                    if self.depth == 2 {
                        self.keep(&chunk[start..=at], Place::Item)?;
                        self.item_ended()?;
                        self.place = Place::Between;
                        start = at + 1;
                    }
                }
                (Place::Item, _) => {}
                (Place::Envelope, _) => {
                    if !self.begun {
                        if byte != b'{' {
                            return Err(LwError::other(
                                "malformed list body: not a JSON object".to_string(),
                            ));
                        }
                        self.begun = true;
                    }
                    let value_begins = self.depth == 1 && self.awaiting_value;
                    match byte {
                        b'"' => {
                            self.in_string = true;
                            if self.depth == 1 && self.expect_name {
                                self.reading_name = true;
                                self.name.clear();
                                self.name_too_long = false;
                            }
                        }
                        b'{' | b'[' => {
                            self.depth += 1;
                            if self.depth == 1 {
                                self.expect_name = true;
                            }
                        }
                        b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                        b',' if self.depth == 1 => self.expect_name = true,
                        b':' if self.depth == 1 => self.awaiting_value = true,
                        _ => {}
                    }
                    if value_begins && byte != b':' {
                        self.awaiting_value = false;
                        let items = !self.name_too_long && self.name == b"items";
                        if items && byte == b'[' && !self.seen_items {
                            // The envelope keeps `[`; the items go their own way.
                            self.keep(&chunk[start..=at], Place::Envelope)?;
                            start = at + 1;
                            self.items_begin()?;
                            self.place = Place::Between;
                        }
                    }
                }
            }
            at += 1;
        }
        if self.place != Place::Between {
            self.keep(&chunk[start..], self.place)?;
        }
        Ok(())
    }

    /// The body has ended: the list's items and its version and continue
    /// token.
    pub(crate) fn finish(mut self) -> Result<ListPage, LwError> {
        if !self.begun {
            return Err(LwError::other(
                "malformed list body: not a JSON object".to_string(),
            ));
        }
        if self.in_string || self.depth != 0 || self.place != Place::Envelope {
            return Err(LwError::other(
                "malformed list body: it ends inside a value".to_string(),
            ));
        }
        let list: RawList<'_> = serde_json::from_slice(&self.envelope)
            .map_err(|e| LwError::other(format!("malformed list body: {e}")))?;
        if !self.pending.is_empty() {
            let prefix = type_meta_prefix(list.api_version.as_deref(), list.kind.as_deref());
            let first = self.count - self.pending.len();
            for (offset, json) in std::mem::take(&mut self.pending).iter().enumerate() {
                let object = parse_item(json, prefix.as_deref(), &self.decoding, &mut self.scratch)
                    .map_err(|e| item_error(first + offset, &e))?;
                self.items.push(object);
            }
        }
        let metadata = list.metadata.unwrap_or_default();
        Ok(ListPage {
            resource_version: metadata
                .resource_version
                .map(Cow::into_owned)
                .unwrap_or_default(),
            continue_token: metadata
                .continue_token
                .map(Cow::into_owned)
                .unwrap_or_default(),
            items: self.items,
        })
    }

    /// Appends `bytes` to the buffer of `place`, within the length limit.
    fn keep(&mut self, bytes: &[u8], place: Place) -> Result<(), LwError> {
        let buffer = match place {
            Place::Envelope => &mut self.envelope,
            Place::Item => &mut self.item,
            Place::Between => return Ok(()),
        };
        if buffer.len() + bytes.len() > self.max_len {
            return Err(match place {
                Place::Item => self.malformed_item(&format!("longer than {} bytes", self.max_len)),
                _ => LwError::other(format!(
                    "malformed list body: its members besides items exceed {} bytes",
                    self.max_len
                )),
            });
        }
        buffer.extend_from_slice(bytes);
        Ok(())
    }

    /// The `items` array begins: the list's type, as far as the envelope
    /// so far names it.
    fn items_begin(&mut self) -> Result<(), LwError> {
        self.seen_items = true;
        // The envelope so far ends in `"items":[`; closed, it parses.
        let mut head = self.envelope.clone();
        head.extend_from_slice(b"]}");
        let list: RawList<'_> = serde_json::from_slice(&head)
            .map_err(|e| LwError::other(format!("malformed list body: {e}")))?;
        if list.api_version.is_some() && list.kind.is_some() {
            self.prefix = type_meta_prefix(list.api_version.as_deref(), list.kind.as_deref());
            self.prefix_known = true;
        }
        Ok(())
    }

    /// The item in `self.item` is complete: parse it (or keep it for later).
    fn item_ended(&mut self) -> Result<(), LwError> {
        let index = self.count;
        self.count += 1;
        let text = std::str::from_utf8(&self.item)
            .map_err(|e| item_error(index, &format!("not UTF-8: {e}")))?;
        if self.prefix_known {
            let object = parse_item(
                text,
                self.prefix.as_deref(),
                &self.decoding,
                &mut self.scratch,
            )
            .map_err(|e| item_error(index, &e))?;
            self.items.push(object);
        } else {
            self.pending.push(text.to_string());
        }
        self.item.clear();
        if self.item.capacity() > ITEM_CAPACITY_KEPT {
            self.item.shrink_to(ITEM_CAPACITY_KEPT);
        }
        Ok(())
    }

    fn malformed_item(&self, why: &str) -> LwError {
        item_error(self.count, why)
    }
}

/// The item buffer's capacity kept between items: one large item does not
/// pin its size for the rest of the list.
const ITEM_CAPACITY_KEPT: usize = 1 << 20;

fn item_error(index: usize, why: &str) -> LwError {
    LwError::other(format!("malformed list item {index}: {why}"))
}

/// `{"apiVersion":…,"kind":…,` for the items of a list of `kind` (`…List`).
fn type_meta_prefix(api_version: Option<&str>, list_kind: Option<&str>) -> Option<String> {
    let kind = list_kind
        .and_then(|k| k.strip_suffix("List"))
        .filter(|k| !k.is_empty())?;
    let api_version = api_version.filter(|v| !v.is_empty())?;
    Some(format!(
        "{{\"apiVersion\":{},\"kind\":{},",
        serde_json::to_string(api_version).unwrap_or_default(),
        serde_json::to_string(kind).unwrap_or_default()
    ))
}

/// Parses one item, prefixed with the list's type when it names none.
fn parse_item(
    json: &str,
    prefix: Option<&str>,
    decoding: &Decoding,
    buffer: &mut String,
) -> Result<Object, String> {
    let parsed = match (prefix, needs_type_meta(json)) {
        (Some(prefix), Some(rest)) => {
            buffer.clear();
            buffer.push_str(prefix);
            if rest.trim_start().starts_with('}') {
                // `{}` has no members: drop the prefix's comma.
                buffer.pop();
            }
            buffer.push_str(rest);
            decoding.object(buffer)
        }
        _ => decoding.object(json),
    };
    parsed.map_err(|e| e.to_string())
}

/// When `json` is an object whose first member is neither `apiVersion` nor
/// `kind`, the text after its opening brace.
fn needs_type_meta(json: &str) -> Option<&str> {
    let rest = json.trim_start().strip_prefix('{')?;
    let first = rest.trim_start();
    if first.starts_with("\"apiVersion\"") || first.starts_with("\"kind\"") {
        None
    } else {
        Some(rest)
    }
}

#[derive(Deserialize)]
struct RawList<'a> {
    #[serde(rename = "apiVersion", borrow, default)]
    api_version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    metadata: Option<RawListMeta<'a>>,
    /// Checked to be an array or null; the items went their own way.
    #[serde(rename = "items", borrow, default)]
    _items: Option<Vec<&'a RawValue>>,
}

/// A list's or a bookmark's `metadata`: its version and continue token.
#[derive(Deserialize, Default)]
pub(crate) struct RawListMeta<'a> {
    #[serde(rename = "resourceVersion", borrow, default)]
    pub(crate) resource_version: Option<Cow<'a, str>>,
    #[serde(rename = "continue", borrow, default)]
    pub(crate) continue_token: Option<Cow<'a, str>>,
}

#[cfg(test)]
mod tests;
