//! The cached object: one immutable, `Arc`-shared allocation holding an
//! object's JSON exactly once plus its parsed metadata, and the object-key
//! rules (spec section 1, KEY).
//!
//! # Layout
//!
//! An [`Object`] is a single reference-counted allocation (a thin `Arc`:
//! one pointer) holding the dictionary its JSON is compressed with, if it
//! is, and a buffer laid out as
//!
//! ```text
//! [ header | span table | JSON | tail: key, then strings that had escapes ]
//! ```
//!
//! All integers are little-endian. A *span* is `(offset u32, len u32)` into
//! the same buffer. The header holds `generation` (i64), flags, the four
//! table counts and the spans of the JSON, the key and the scalar metadata
//! strings. The table holds, in order, label and annotation pairs
//! (two spans each), owner references (four spans plus a flags word) and
//! finalizers (one span each).
//!
//! Metadata strings are not copied: a string that had no escapes in the JSON
//! is a span into the JSON itself; one that had escapes is stored unescaped
//! in the tail. The key (`"ns/name"` or `"name"`) is built once, in the tail;
//! the namespace and name are sub-spans of it.
//!
//! Invariant: every span is built from a `&str` (a borrowed slice of the
//! JSON at character boundaries, or an owned `String`), so it always holds
//! valid UTF-8; accessors still re-check with `str::from_utf8`, which keeps
//! the module free of `unsafe` and is cheap next to the work callers do.
//!
//! A cached object may hold its JSON compressed with a dictionary learnt
//! from the objects of its informer ([`compression`]): then the JSON region
//! holds the compressed bytes, every metadata string lives in the tail, and
//! [`Object::json`] decompresses.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::error::Category;
use serde_json::value::RawValue;
use triomphe::ThinArc;

pub use compression::{Compactor, Dictionary};

pub mod compression;

const OFF_GENERATION: usize = 0;
const OFF_FLAGS: usize = 8;
const OFF_N_LABELS: usize = 12;
const OFF_N_ANNOTATIONS: usize = 16;
const OFF_N_OWNERS: usize = 20;
const OFF_N_FINALIZERS: usize = 24;
const OFF_JSON: usize = 28;
const OFF_KEY: usize = 36;
const OFF_NS_LEN: usize = 44;
const OFF_UID: usize = 48;
const OFF_RV: usize = 56;
const OFF_API_VERSION: usize = 64;
const OFF_KIND: usize = 72;
const OFF_DELETION: usize = 80;
/// The length of the JSON itself, which differs from the JSON span's when
/// the span holds it compressed.
const OFF_JSON_LEN: usize = 88;
const HEADER_LEN: usize = 92;

const SPAN_LEN: usize = 8;
const PAIR_LEN: usize = 2 * SPAN_LEN;
const OWNER_LEN: usize = 4 * SPAN_LEN + 4;

const FLAG_MANAGED_FIELDS: u32 = 1;
const FLAG_DELETION_TIMESTAMP: u32 = 1 << 1;
const OWNER_CONTROLLER: u32 = 1;
const OWNER_BLOCK_OWNER_DELETION: u32 = 1 << 1;

/// Why a JSON document cannot become a cached [`Object`].
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// The input is not well-formed JSON.
    #[error("invalid JSON: {0}")]
    InvalidJson(#[source] serde_json::Error),
    /// The input is well-formed JSON but not an object.
    #[error("not a JSON object: {0}")]
    NotAnObject(#[source] serde_json::Error),
    /// No `metadata` member, or `metadata` is null (KEY-03).
    #[error("object has no meta")]
    NoMeta,
    /// `metadata` is present but is not a JSON object (KEY-03).
    #[error("object has no meta: metadata is not a JSON object")]
    MetaNotAnObject,
    /// `metadata.name` is absent or empty. A stored object must have a name;
    /// `generateName` is resolved by the API server, never by a cache.
    #[error("metadata has no name (a stored object must have metadata.name)")]
    NoName,
    /// A metadata member (or `apiVersion` / `kind`) has the wrong shape.
    #[error("invalid {field}: {source}")]
    InvalidField {
        /// The JSON path of the member, such as `metadata.labels`.
        field: &'static str,
        /// What the JSON parser reported.
        #[source]
        source: serde_json::Error,
    },
    /// The object does not fit the 32-bit offsets of the layout (4 GiB).
    #[error("object too large: {0} bytes")]
    TooLarge(usize),
}

/// A key that cannot be split into namespace and name (KEY-06).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected key format: {key:?}")]
pub struct KeyError {
    /// The offending key.
    pub key: String,
}

/// Splits a key back into `(namespace, name)` (KEY-06): no `/` gives
/// `("", name)`, exactly one gives `(namespace, name)`, more is an error.
pub fn split_key(key: &str) -> Result<(&str, &str), KeyError> {
    recon_api_semantics::mapping::split_key(key).ok_or_else(|| KeyError {
        key: key.to_owned(),
    })
}

/// One entry of `metadata.ownerReferences`, borrowed from an [`Object`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerRef<'a> {
    /// `apiVersion` of the owner.
    pub api_version: &'a str,
    /// `kind` of the owner.
    pub kind: &'a str,
    /// `name` of the owner.
    pub name: &'a str,
    /// `uid` of the owner.
    pub uid: &'a str,
    /// `controller`, false when absent.
    pub controller: bool,
    /// `blockOwnerDeletion`, false when absent.
    pub block_owner_deletion: bool,
}

/// An immutable cached object: its JSON plus parsed metadata, in one shared
/// allocation. `Clone` is one reference-count increment.
///
/// Equality compares the buffers (pointer first, then bytes) when both are
/// plain or compressed with the same dictionary, else the JSON. The buffer
/// is a deterministic function of the JSON kept and the dictionary, so two
/// objects are equal exactly when they hold the same JSON.
///
/// The dictionary lives in the object's own allocation, so a clone is one
/// reference-count increment, whatever the object's form.
#[derive(Clone)]
pub struct Object(ThinArc<Option<Arc<Dictionary>>, u8>);

impl Object {
    /// Parses an object as served, keeping every member.
    pub fn from_json(json: &str) -> Result<Object, ObjectError> {
        build(json, false)
    }

    /// Parses an object and drops `metadata.managedFields` on the way; the
    /// rest of the JSON is kept byte for byte.
    pub fn from_json_pruned(json: &str) -> Result<Object, ObjectError> {
        build(json, true)
    }

    /// This object without `metadata.managedFields`: a clone when it has
    /// none (an O(1) check), a re-parsed copy otherwise.
    pub fn without_managed_fields(&self) -> Object {
        if self.has_managed_fields() {
            build(&self.json(), true).expect("a cached object's JSON re-parses")
        } else {
            self.clone()
        }
    }

    /// Whether the JSON holds a `metadata.managedFields` member.
    pub fn has_managed_fields(&self) -> bool {
        self.flags() & FLAG_MANAGED_FIELDS != 0
    }

    /// Whether `other` is this very object (a clone of it), not merely an
    /// equal one.
    pub fn is_same(&self, other: &Object) -> bool {
        self.0.ptr() == other.0.ptr()
    }

    /// The JSON of the object (compact if it came in compact): borrowed, or
    /// decompressed when the object holds it compressed.
    pub fn json(&self) -> Cow<'_, str> {
        match self.dictionary() {
            None => Cow::Borrowed(self.str_at(OFF_JSON)),
            Some(dictionary) => Cow::Owned(
                dictionary
                    .decompress(self.bytes_at(OFF_JSON), self.json_len())
                    .expect("a cached object's JSON decompresses with its dictionary"),
            ),
        }
    }

    /// The length in bytes of [`Object::json`], without decompressing it.
    pub fn json_len(&self) -> usize {
        self.u32_at(OFF_JSON_LEN) as usize
    }

    /// Whether the object holds its JSON compressed.
    pub fn is_compressed(&self) -> bool {
        self.dictionary().is_some()
    }

    /// The dictionary the JSON is compressed with, when it is.
    fn dictionary(&self) -> Option<&Arc<Dictionary>> {
        self.0.header.header.as_ref()
    }

    /// The buffer: header, span table, JSON and tail.
    fn buf(&self) -> &[u8] {
        &self.0.slice
    }

    /// The object's key (KEY-01): `"namespace/name"`, or `"name"` when the
    /// namespace is empty.
    pub fn key(&self) -> &str {
        self.str_at(OFF_KEY)
    }

    /// Orders two objects by key, as `self.key().cmp(other.key())` does
    /// (`str` orders by its UTF-8 bytes), without re-checking either key's
    /// UTF-8: sorting a list compares each key many times, and the check
    /// was most of the work of a guest's `list`.
    pub fn cmp_key(&self, other: &Object) -> std::cmp::Ordering {
        self.bytes_at(OFF_KEY).cmp(other.bytes_at(OFF_KEY))
    }

    /// `metadata.namespace`; empty for cluster-scoped objects.
    pub fn namespace(&self) -> &str {
        let ns_len = self.u32_at(OFF_NS_LEN) as usize;
        &self.key()[..ns_len]
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        let ns_len = self.u32_at(OFF_NS_LEN) as usize;
        let key = self.key();
        if ns_len == 0 { key } else { &key[ns_len + 1..] }
    }

    /// `metadata.uid`; empty when absent.
    pub fn uid(&self) -> &str {
        self.str_at(OFF_UID)
    }

    /// `metadata.resourceVersion`; empty when absent.
    pub fn resource_version(&self) -> &str {
        self.str_at(OFF_RV)
    }

    /// `metadata.generation`; 0 when absent.
    pub fn generation(&self) -> i64 {
        i64::from_le_bytes(self.array_at(OFF_GENERATION))
    }

    /// `apiVersion`; empty when absent (list items often lack it).
    pub fn api_version(&self) -> &str {
        self.str_at(OFF_API_VERSION)
    }

    /// `kind`; empty when absent (list items often lack it).
    pub fn kind(&self) -> &str {
        self.str_at(OFF_KIND)
    }

    /// `metadata.labels` in JSON order.
    pub fn labels(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        self.pairs(self.labels_at(), self.u32_at(OFF_N_LABELS))
    }

    /// The value of one label.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.lookup(self.labels_at(), self.u32_at(OFF_N_LABELS), key)
    }

    /// `metadata.annotations` in JSON order.
    pub fn annotations(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        self.pairs(self.annotations_at(), self.u32_at(OFF_N_ANNOTATIONS))
    }

    /// The value of one annotation.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.lookup(self.annotations_at(), self.u32_at(OFF_N_ANNOTATIONS), key)
    }

    /// `metadata.ownerReferences` in JSON order.
    pub fn owner_references(&self) -> impl ExactSizeIterator<Item = OwnerRef<'_>> {
        let base = self.owners_at();
        (0..self.u32_at(OFF_N_OWNERS) as usize).map(move |i| self.owner_at(base + i * OWNER_LEN))
    }

    /// The first owner reference with `controller: true`.
    pub fn controller_ref(&self) -> Option<OwnerRef<'_>> {
        self.owner_references().find(|owner| owner.controller)
    }

    /// `metadata.finalizers` in JSON order.
    pub fn finalizers(&self) -> impl ExactSizeIterator<Item = &str> {
        let base = self.finalizers_at();
        (0..self.u32_at(OFF_N_FINALIZERS) as usize).map(move |i| self.str_at(base + i * SPAN_LEN))
    }

    /// `metadata.deletionTimestamp`, when set.
    pub fn deletion_timestamp(&self) -> Option<&str> {
        (self.flags() & FLAG_DELETION_TIMESTAMP != 0).then(|| self.str_at(OFF_DELETION))
    }

    /// Bytes of the object's own heap allocation: the reference count, the
    /// dictionary's pointer and the buffer's length, plus the buffer,
    /// padded to the counts' alignment. A dictionary is shared by many
    /// objects and not counted.
    pub fn heap_size(&self) -> usize {
        (3 * size_of::<usize>() + self.buf().len()).next_multiple_of(align_of::<usize>())
    }

    fn flags(&self) -> u32 {
        self.u32_at(OFF_FLAGS)
    }

    fn array_at<const N: usize>(&self, at: usize) -> [u8; N] {
        self.buf()[at..at + N]
            .try_into()
            .expect("header field inside the buffer")
    }

    fn u32_at(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.array_at(at))
    }

    fn bytes_at(&self, span_at: usize) -> &[u8] {
        let offset = self.u32_at(span_at) as usize;
        let len = self.u32_at(span_at + 4) as usize;
        &self.buf()[offset..offset + len]
    }

    fn str_at(&self, span_at: usize) -> &str {
        std::str::from_utf8(self.bytes_at(span_at)).expect("spans are built from &str")
    }

    fn labels_at(&self) -> usize {
        HEADER_LEN
    }

    fn annotations_at(&self) -> usize {
        self.labels_at() + self.u32_at(OFF_N_LABELS) as usize * PAIR_LEN
    }

    fn owners_at(&self) -> usize {
        self.annotations_at() + self.u32_at(OFF_N_ANNOTATIONS) as usize * PAIR_LEN
    }

    fn finalizers_at(&self) -> usize {
        self.owners_at() + self.u32_at(OFF_N_OWNERS) as usize * OWNER_LEN
    }

    fn pairs(&self, base: usize, count: u32) -> impl ExactSizeIterator<Item = (&str, &str)> {
        (0..count as usize).map(move |i| {
            let at = base + i * PAIR_LEN;
            (self.str_at(at), self.str_at(at + SPAN_LEN))
        })
    }

    fn lookup(&self, base: usize, count: u32, key: &str) -> Option<&str> {
        (0..count as usize)
            .map(|i| base + i * PAIR_LEN)
            .find(|&at| self.bytes_at(at) == key.as_bytes())
            .map(|at| self.str_at(at + SPAN_LEN))
    }

    fn owner_at(&self, at: usize) -> OwnerRef<'_> {
        let flags = self.u32_at(at + 4 * SPAN_LEN);
        OwnerRef {
            api_version: self.str_at(at),
            kind: self.str_at(at + SPAN_LEN),
            name: self.str_at(at + 2 * SPAN_LEN),
            uid: self.str_at(at + 3 * SPAN_LEN),
            controller: flags & OWNER_CONTROLLER != 0,
            block_owner_deletion: flags & OWNER_BLOCK_OWNER_DELETION != 0,
        }
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Self) -> bool {
        if self.is_same(other) {
            return true;
        }
        let same_form = match (self.dictionary(), other.dictionary()) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        if same_form {
            self.buf() == other.buf()
        } else {
            self.json_len() == other.json_len() && self.json() == other.json()
        }
    }
}

impl Eq for Object {}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Object({} {} rv={})",
            self.kind(),
            self.key(),
            self.resource_version()
        )
    }
}

// ---------------------------------------------------------------------------
// Parsing

/// A JSON string: borrowed from the input when it had no escapes, unescaped
/// and owned otherwise. (serde's `#[serde(borrow)] Cow<str>` does not borrow
/// through `Option`, hence this small wrapper.)
struct Str<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for StrVisitor<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(StrVisitor(PhantomData))
    }
}

/// The members of a JSON object in document order, values left raw.
struct Members<'a>(Vec<(Str<'a>, &'a RawValue)>);

/// A JSON object of strings (labels, annotations) in document order.
struct Pairs<'a>(Vec<(Str<'a>, Str<'a>)>);

/// Deserializes a JSON object into its `(key, value)` members in order.
fn visit_map<'de, A: MapAccess<'de>, K, V>(mut map: A) -> Result<Vec<(K, V)>, A::Error>
where
    K: Deserialize<'de>,
    V: Deserialize<'de>,
{
    let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0));
    while let Some(member) = map.next_entry()? {
        members.push(member);
    }
    Ok(members)
}

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for MembersVisitor<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Members<'a>, A::Error> {
                visit_map(map).map(Members)
            }
        }
        deserializer.deserialize_map(MembersVisitor(PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Pairs<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PairsVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for PairsVisitor<'a> {
            type Value = Pairs<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Pairs<'a>, A::Error> {
                visit_map(map).map(Pairs)
            }
        }
        deserializer.deserialize_map(PairsVisitor(PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawOwnerRef<'a> {
    #[serde(borrow, default)]
    api_version: Option<Str<'a>>,
    #[serde(borrow, default)]
    kind: Option<Str<'a>>,
    #[serde(borrow, default)]
    name: Option<Str<'a>>,
    #[serde(borrow, default)]
    uid: Option<Str<'a>>,
    #[serde(default)]
    controller: Option<bool>,
    #[serde(default)]
    block_owner_deletion: Option<bool>,
}

/// Parses one member's raw value; `null` reads as absent.
fn field<'a, T: Deserialize<'a>>(
    raw: &'a RawValue,
    field: &'static str,
) -> Result<Option<T>, ObjectError> {
    serde_json::from_str(raw.get()).map_err(|source| ObjectError::InvalidField { field, source })
}

/// Keeps the last of duplicate keys, as JSON decoders (and Go's) do.
fn dedup_last<'a>(pairs: Vec<(Str<'a>, Str<'a>)>) -> Vec<(Cow<'a, str>, Cow<'a, str>)> {
    let mut out: Vec<(Cow<'a, str>, Cow<'a, str>)> = Vec::with_capacity(pairs.len());
    if pairs.len() <= 16 {
        for (k, v) in pairs {
            match out.iter_mut().find(|(seen, _)| *seen == k.0) {
                Some(slot) => slot.1 = v.0,
                None => out.push((k.0, v.0)),
            }
        }
    } else {
        let mut index: hashbrown::HashMap<Cow<'a, str>, usize, foldhash::fast::RandomState> =
            hashbrown::HashMap::with_capacity_and_hasher(pairs.len(), Default::default());
        for (k, v) in pairs {
            match index.get(&k.0) {
                Some(&i) => out[i].1 = v.0,
                None => {
                    index.insert(k.0.clone(), out.len());
                    out.push((k.0, v.0));
                }
            }
        }
    }
    out
}

fn offset_in(input: &str, raw: &str) -> usize {
    let offset = raw.as_ptr() as usize - input.as_ptr() as usize;
    debug_assert!(offset + raw.len() <= input.len());
    offset
}

/// Where a string of the final buffer comes from.
#[derive(Clone, Copy, Default)]
struct Span {
    in_tail: bool,
    offset: usize,
    len: usize,
}

/// Turns parsed strings into spans: borrowed ones into the kept JSON, owned
/// ones into the tail.
struct Spans<'a> {
    input: &'a str,
    /// The ranges of the input that make up the final JSON, in order.
    keep: Vec<Range<usize>>,
    tail: String,
}

impl Spans<'_> {
    fn json_offset(&self, input_offset: usize) -> usize {
        let mut before = 0;
        for range in &self.keep {
            if range.contains(&input_offset) {
                return before + input_offset - range.start;
            }
            before += range.len();
        }
        unreachable!("a parsed string lies inside the kept JSON")
    }

    fn span(&mut self, s: Cow<'_, str>) -> Span {
        match s {
            _ if s.is_empty() => Span::default(),
            Cow::Borrowed(b) => Span {
                in_tail: false,
                offset: self.json_offset(offset_in(self.input, b)),
                len: b.len(),
            },
            Cow::Owned(o) => {
                let offset = self.tail.len();
                self.tail.push_str(&o);
                Span {
                    in_tail: true,
                    offset,
                    len: o.len(),
                }
            }
        }
    }

    fn opt_span(&mut self, s: Option<Cow<'_, str>>) -> Span {
        s.map_or_else(Span::default, |s| self.span(s))
    }
}

/// Writes header and table fields into the final buffer.
struct Writer {
    buf: Vec<u8>,
    json_at: usize,
    tail_at: usize,
}

impl Writer {
    fn put_u32(&mut self, at: usize, v: u32) {
        self.buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    fn put_span(&mut self, at: usize, span: Span) {
        let offset = match span {
            Span { len: 0, .. } => 0,
            Span { in_tail: true, .. } => self.tail_at + span.offset,
            Span { in_tail: false, .. } => self.json_at + span.offset,
        };
        // The total length was checked to fit in u32.
        self.put_u32(at, offset as u32);
        self.put_u32(at + 4, span.len as u32);
    }
}

fn classify(err: serde_json::Error) -> ObjectError {
    match err.classify() {
        Category::Data => ObjectError::NotAnObject(err),
        Category::Io | Category::Syntax | Category::Eof => ObjectError::InvalidJson(err),
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).expect("counts are bounded by the checked buffer length")
}

fn build(input: &str, prune: bool) -> Result<Object, ObjectError> {
    let top: Members<'_> = serde_json::from_str(input).map_err(classify)?;
    let mut metadata = None;
    let mut api_version = None;
    let mut kind = None;
    for (key, raw) in top.0 {
        match &*key.0 {
            "metadata" => metadata = Some(raw),
            "apiVersion" => api_version = field::<Str<'_>>(raw, "apiVersion")?.map(|s| s.0),
            "kind" => kind = field::<Str<'_>>(raw, "kind")?.map(|s| s.0),
            _ => {}
        }
    }
    let metadata = metadata.ok_or(ObjectError::NoMeta)?;
    let members: Members<'_> = serde_json::from_str::<Option<Members<'_>>>(metadata.get())
        .map_err(|_| ObjectError::MetaNotAnObject)?
        .ok_or(ObjectError::NoMeta)?;

    let mut name = None;
    let mut namespace = None;
    let mut uid = None;
    let mut resource_version = None;
    let mut deletion_timestamp = None;
    let mut generation: i64 = 0;
    let mut labels = Vec::new();
    let mut annotations = Vec::new();
    let mut owners = Vec::new();
    let mut finalizers = Vec::new();
    let mut managed_fields = false;

    // Pruning: the final JSON is the input minus each dropped member, found
    // between the end of the previous member's value and the end of its own.
    let meta_open = offset_in(input, metadata.get()) + 1;
    let mut keep = Vec::new();
    let mut cursor = 0;
    let mut kept_any = false;
    let mut prev_end = meta_open;

    for (i, (key, raw)) in members.0.iter().enumerate() {
        let end = offset_in(input, raw.get()) + raw.get().len();
        let dropped = prune && key.0 == "managedFields";
        if dropped {
            keep.push(cursor..prev_end);
            cursor = end;
        } else if i > 0 && !kept_any {
            // Every member before this one was dropped: drop its leading comma.
            let comma = input[prev_end..end]
                .find(',')
                .expect("members are separated by commas");
            cursor = prev_end + comma + 1;
        }
        kept_any |= !dropped;
        prev_end = end;

        match &*key.0 {
            "name" => name = field::<Str<'_>>(raw, "metadata.name")?.map(|s| s.0),
            "namespace" => namespace = field::<Str<'_>>(raw, "metadata.namespace")?.map(|s| s.0),
            "uid" => uid = field::<Str<'_>>(raw, "metadata.uid")?.map(|s| s.0),
            "resourceVersion" => {
                resource_version = field::<Str<'_>>(raw, "metadata.resourceVersion")?.map(|s| s.0);
            }
            "deletionTimestamp" => {
                deletion_timestamp =
                    field::<Str<'_>>(raw, "metadata.deletionTimestamp")?.map(|s| s.0);
            }
            "generation" => generation = field(raw, "metadata.generation")?.unwrap_or(0),
            "labels" => {
                labels = field::<Pairs<'_>>(raw, "metadata.labels")?
                    .map_or_else(Vec::new, |p| dedup_last(p.0));
            }
            "annotations" => {
                annotations = field::<Pairs<'_>>(raw, "metadata.annotations")?
                    .map_or_else(Vec::new, |p| dedup_last(p.0));
            }
            "ownerReferences" => {
                owners = field::<Vec<RawOwnerRef<'_>>>(raw, "metadata.ownerReferences")?
                    .unwrap_or_default();
            }
            "finalizers" => {
                finalizers = field::<Vec<Str<'_>>>(raw, "metadata.finalizers")?.unwrap_or_default();
            }
            "managedFields" => managed_fields = !dropped,
            _ => {}
        }
    }
    keep.push(cursor..input.len());
    keep.retain(|r| !r.is_empty());

    let name = name.filter(|n| !n.is_empty()).ok_or(ObjectError::NoName)?;
    let namespace = namespace.unwrap_or_default();

    let json_len: usize = keep.iter().map(Range::len).sum();
    let mut spans = Spans {
        input,
        keep,
        tail: String::new(),
    };
    // The key opens the tail; the namespace and the name are sub-spans of it.
    if !namespace.is_empty() {
        spans.tail.push_str(&namespace);
        spans.tail.push('/');
    }
    spans.tail.push_str(&name);
    let key = Span {
        in_tail: true,
        offset: 0,
        len: spans.tail.len(),
    };
    let uid = spans.opt_span(uid);
    let resource_version = spans.opt_span(resource_version);
    let api_version = spans.opt_span(api_version);
    let kind = spans.opt_span(kind);
    let has_deletion_timestamp = deletion_timestamp.is_some();
    let deletion = spans.opt_span(deletion_timestamp);
    let labels: Vec<(Span, Span)> = labels
        .into_iter()
        .map(|(k, v)| (spans.span(k), spans.span(v)))
        .collect();
    let annotations: Vec<(Span, Span)> = annotations
        .into_iter()
        .map(|(k, v)| (spans.span(k), spans.span(v)))
        .collect();
    let owners: Vec<([Span; 4], u32)> = owners
        .into_iter()
        .map(|o| {
            let fields =
                [o.api_version, o.kind, o.name, o.uid].map(|s| spans.opt_span(s.map(|s| s.0)));
            let mut flags = 0;
            if o.controller == Some(true) {
                flags |= OWNER_CONTROLLER;
            }
            if o.block_owner_deletion == Some(true) {
                flags |= OWNER_BLOCK_OWNER_DELETION;
            }
            (fields, flags)
        })
        .collect();
    let finalizers: Vec<Span> = finalizers.into_iter().map(|f| spans.span(f.0)).collect();

    let table_len = (labels.len() + annotations.len()) * PAIR_LEN
        + owners.len() * OWNER_LEN
        + finalizers.len() * SPAN_LEN;
    let json_at = HEADER_LEN + table_len;
    let tail_at = json_at + json_len;
    let total = tail_at + spans.tail.len();
    if u32::try_from(total).is_err() {
        return Err(ObjectError::TooLarge(total));
    }

    let mut w = Writer {
        buf: Vec::with_capacity(total),
        json_at,
        tail_at,
    };
    w.buf.resize(json_at, 0);
    for range in &spans.keep {
        w.buf.extend_from_slice(input[range.clone()].as_bytes());
    }
    w.buf.extend_from_slice(spans.tail.as_bytes());

    w.buf[OFF_GENERATION..OFF_GENERATION + 8].copy_from_slice(&generation.to_le_bytes());
    let mut flags = 0;
    if managed_fields {
        flags |= FLAG_MANAGED_FIELDS;
    }
    if has_deletion_timestamp {
        flags |= FLAG_DELETION_TIMESTAMP;
    }
    w.put_u32(OFF_FLAGS, flags);
    w.put_u32(OFF_N_LABELS, count(labels.len()));
    w.put_u32(OFF_N_ANNOTATIONS, count(annotations.len()));
    w.put_u32(OFF_N_OWNERS, count(owners.len()));
    w.put_u32(OFF_N_FINALIZERS, count(finalizers.len()));
    w.put_u32(OFF_JSON_LEN, count(json_len));
    w.put_span(
        OFF_JSON,
        Span {
            in_tail: false,
            offset: 0,
            len: json_len,
        },
    );
    w.put_span(OFF_KEY, key);
    w.put_u32(
        OFF_NS_LEN,
        count(if namespace.is_empty() {
            0
        } else {
            namespace.len()
        }),
    );
    w.put_span(OFF_UID, uid);
    w.put_span(OFF_RV, resource_version);
    w.put_span(OFF_API_VERSION, api_version);
    w.put_span(OFF_KIND, kind);
    w.put_span(OFF_DELETION, deletion);
    let mut at = HEADER_LEN;
    for (k, v) in labels.iter().chain(&annotations) {
        w.put_span(at, *k);
        w.put_span(at + SPAN_LEN, *v);
        at += PAIR_LEN;
    }
    for (fields, owner_flags) in &owners {
        for (i, span) in fields.iter().enumerate() {
            w.put_span(at + i * SPAN_LEN, *span);
        }
        w.put_u32(at + 4 * SPAN_LEN, *owner_flags);
        at += OWNER_LEN;
    }
    for span in &finalizers {
        w.put_span(at, *span);
        at += SPAN_LEN;
    }
    debug_assert_eq!(at, json_at);
    Ok(Object(ThinArc::from_header_and_slice(None, &w.buf)))
}

#[cfg(test)]
mod tests;
