//! A guest's log records as `tracing` events whose fields are the guest's
//! own, so text logs show `reason="conflict"` and JSON logs carry
//! `"reason": "conflict"` beside the host's `guest` and `key`.
//!
//! `tracing` names an event's fields at its callsite, which must live for
//! the whole process. The host makes one callsite per level and list of
//! field names that guests use, and keeps at most [`MAX_CALLSITES`] of them
//! (their names together at most [`MAX_NAME_BYTES`]): a record whose names
//! would make a new callsite past either cap carries its fields joined in
//! one `fields` field, as does a record with more than [`MAX_FIELDS`]
//! fields. A field name that is one of the host's own (`message`, `guest`,
//! `key`, `fields`) or is repeated gets a `field.` prefix or loses the
//! repeat.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

use parking_lot::Mutex;
use tracing::field::{Field, FieldSet, Value};
use tracing::level_filters::LevelFilter;
use tracing::{Event, Level, Metadata};
use tracing_core::Kind;
use tracing_core::callsite::{self, Callsite, Identifier};
use tracing_core::subscriber::Interest;

/// The most fields of one record that become fields of their own.
pub(crate) const MAX_FIELDS: usize = 16;
/// The most callsites (level and list of field names) the host makes.
pub(crate) const MAX_CALLSITES: usize = 1024;
/// The most bytes of field names all callsites hold together.
pub(crate) const MAX_NAME_BYTES: usize = 64 << 10;
/// The longest field name kept as a field of its own.
pub(crate) const MAX_NAME_LEN: usize = 64;

/// The host's own fields, first in every guest record.
const HOST_FIELDS: [&str; 3] = ["message", "guest", "key"];
/// The field of joined fields when a record cannot have its own.
const JOINED: &str = "fields";

/// A callsite made at run time: its metadata names the fields.
struct GuestCallsite {
    metadata: OnceLock<Metadata<'static>>,
}

impl Callsite for GuestCallsite {
    fn set_interest(&self, _: Interest) {
        // Asked again at every record through `Dispatch::enabled`.
    }

    fn metadata(&self) -> &Metadata<'_> {
        self.metadata.get().expect("set before it is registered")
    }
}

/// The callsites made so far, and their caps.
struct Callsites {
    by_names: HashMap<(Level, Vec<String>), &'static GuestCallsite>,
    name_bytes: usize,
    max_callsites: usize,
    max_name_bytes: usize,
}

impl Callsites {
    fn new(max_callsites: usize, max_name_bytes: usize) -> Mutex<Callsites> {
        Mutex::new(Callsites {
            by_names: HashMap::new(),
            name_bytes: 0,
            max_callsites,
            max_name_bytes,
        })
    }
}

/// The process's callsites, within [`MAX_CALLSITES`] and [`MAX_NAME_BYTES`].
fn callsites() -> &'static Mutex<Callsites> {
    static CALLSITES: OnceLock<Mutex<Callsites>> = OnceLock::new();
    CALLSITES.get_or_init(|| Callsites::new(MAX_CALLSITES, MAX_NAME_BYTES))
}

/// The callsite of `level` with the host's fields and then `names`; none
/// past the caps.
fn callsite(
    sites: &Mutex<Callsites>,
    level: Level,
    names: &[String],
) -> Option<&'static Metadata<'static>> {
    let mut sites = sites.lock();
    let key = (level, names.to_vec());
    if let Some(site) = sites.by_names.get(&key) {
        return Some(site.metadata());
    }
    let bytes: usize = names.iter().map(String::len).sum();
    if sites.by_names.len() >= sites.max_callsites
        || sites.name_bytes + bytes > sites.max_name_bytes
    {
        return None;
    }
    // Leaked on purpose, within the caps above: a callsite lives as long
    // as the process.
    let all: Vec<&'static str> = HOST_FIELDS
        .iter()
        .copied()
        .chain(
            names
                .iter()
                .map(|n| &*Box::leak(n.clone().into_boxed_str())),
        )
        .collect();
    let all: &'static [&'static str] = Box::leak(all.into_boxed_slice());
    let site: &'static GuestCallsite = Box::leak(Box::new(GuestCallsite {
        metadata: OnceLock::new(),
    }));
    let _ = site.metadata.set(Metadata::new(
        "guest log",
        "guest",
        level,
        None,
        None,
        None,
        FieldSet::new(all, Identifier(site)),
        Kind::EVENT,
    ));
    callsite::register(site);
    sites.by_names.insert(key, site);
    sites.name_bytes += bytes;
    Some(site.metadata())
}

/// The names `fields` are recorded under: host names prefixed, repeats
/// and the empty name dropped (by index, so values stay paired).
fn field_names(fields: &[(String, String)]) -> Vec<(usize, String)> {
    let mut names: Vec<(usize, String)> = Vec::with_capacity(fields.len());
    for (i, (name, _)) in fields.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        let name = if HOST_FIELDS.contains(&name.as_str()) || name == JOINED {
            format!("field.{name}")
        } else {
            name.clone()
        };
        if !names.iter().any(|(_, n)| *n == name) {
            names.push((i, name));
        }
    }
    names
}

/// One log call of a guest.
pub(crate) struct Record<'a> {
    pub level: Level,
    /// The guest's name.
    pub guest: &'a str,
    /// The key being reconciled, empty outside a reconcile.
    pub key: &'a str,
    pub message: &'a str,
    pub fields: &'a [(String, String)],
}

/// Writes `record`, its fields as fields of their own where the caps
/// allow; the values together are cut to `max_value` bytes.
pub(crate) fn emit(record: &Record<'_>, max_value: usize) {
    emit_with(callsites(), record, max_value)
}

/// [`emit`] with the callsites of `sites`.
fn emit_with(sites: &Mutex<Callsites>, record: &Record<'_>, max_value: usize) {
    let &Record {
        level,
        guest,
        key,
        message,
        fields,
    } = record;
    if level > LevelFilter::current() {
        return;
    }
    let names = field_names(fields);
    let own = names.len() <= MAX_FIELDS
        && names.iter().all(|(_, n)| n.len() <= MAX_NAME_LEN)
        && names.iter().all(|(_, n)| is_field_name(n));
    let metadata = own
        .then(|| {
            let list: Vec<String> = names.iter().map(|(_, n)| n.clone()).collect();
            callsite(sites, level, &list)
        })
        .flatten();
    let Some(metadata) = metadata else {
        let joined = join_fields(fields, max_value);
        emit_joined(level, guest, key, message, &joined);
        return;
    };
    if !tracing::dispatcher::get_default(|d| d.enabled(metadata)) {
        return;
    }
    // The values share the line's limit, in order.
    let mut budget = max_value;
    let values: Vec<&str> = names
        .iter()
        .map(|(i, _)| {
            let value = &fields[*i].1;
            let value = &value[..value.floor_char_boundary(budget)];
            budget -= value.len();
            value
        })
        .collect();
    let set: Vec<Field> = metadata.fields().iter().collect();
    let message = format_args!("{message}");
    let mut pairs: [(&Field, Option<&dyn Value>); HOST_FIELDS.len() + MAX_FIELDS] =
        [(&set[0], None); HOST_FIELDS.len() + MAX_FIELDS];
    pairs[0] = (&set[0], Some(&message as &dyn Value));
    pairs[1] = (&set[1], Some(&guest as &dyn Value));
    pairs[2] = (&set[2], Some(&key as &dyn Value));
    for (i, value) in values.iter().enumerate() {
        pairs[HOST_FIELDS.len() + i] = (&set[HOST_FIELDS.len() + i], Some(value as &dyn Value));
    }
    Event::dispatch(metadata, &metadata.fields().value_set(&pairs));
}

/// A name a log line shows as it is: letters, digits and `_.-/`.
fn is_field_name(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'/'))
}

/// The record with its fields joined into one.
fn emit_joined(level: Level, guest: &str, key: &str, message: &str, fields: &str) {
    match level {
        Level::TRACE => tracing::trace!(target: "guest", guest, key, fields, "{message}"),
        Level::DEBUG => tracing::debug!(target: "guest", guest, key, fields, "{message}"),
        Level::INFO => tracing::info!(target: "guest", guest, key, fields, "{message}"),
        Level::WARN => tracing::warn!(target: "guest", guest, key, fields, "{message}"),
        _ => tracing::error!(target: "guest", guest, key, fields, "{message}"),
    }
}

/// `k="v" ...`, built no further than just past `max` bytes (each value
/// is quoted from at most `max` bytes), so a huge field costs no copy.
fn join_fields(fields: &[(String, String)], max: usize) -> String {
    let mut joined = String::new();
    for (k, v) in fields {
        if joined.len() > max {
            break;
        }
        if !joined.is_empty() {
            joined.push(' ');
        }
        let (k, v) = (
            &k[..k.floor_char_boundary(max)],
            &v[..v.floor_char_boundary(max)],
        );
        let _ = write!(joined, "{k}={v:?}");
    }
    joined[..joined.floor_char_boundary(max)].to_string()
}

#[cfg(test)]
mod tests;
