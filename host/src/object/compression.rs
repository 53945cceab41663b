//! Cached objects compressed with a dictionary learnt from the cache.
//!
//! The objects of one informer are mostly alike: Pods of one workload share
//! their template, containers, volumes, tolerations and the shape of their
//! status, and differ in names, uids, addresses and times. A zstd
//! dictionary trained on the first objects an informer sees captures what
//! repeats, and an object compressed with it keeps little more than what is
//! its own (a 5.7 KB Pod of the fixture's shape becomes about 0.1–0.2 KB).
//!
//! A [`Compactor`] belongs to one informer. It keeps objects plain while it
//! collects [`SAMPLES`] of them, trains its [`Dictionary`] once, then
//! compresses every object it is given that compression makes smaller.
//! The metadata the cache reads (key, labels, owners, ...) stays plain in
//! the object, so only [`Object::json`] decompresses.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;
use triomphe::ThinArc;
use zstd::zstd_safe::{CCtx, CDict, DCtx, DDict};

use super::{
    HEADER_LEN, OFF_API_VERSION, OFF_DELETION, OFF_JSON, OFF_KEY, OFF_KIND, OFF_N_ANNOTATIONS,
    OFF_N_FINALIZERS, OFF_N_LABELS, OFF_N_OWNERS, OFF_RV, OFF_UID, OWNER_LEN, Object, PAIR_LEN,
    SPAN_LEN,
};

/// How many objects a [`Compactor`] learns its dictionary from.
pub const SAMPLES: usize = 256;

/// The most sample bytes a [`Compactor`] collects: an informer of large
/// objects trains on fewer of them.
pub const MAX_SAMPLE_BYTES: usize = 4 << 20;

/// The fewest samples a dictionary is trained on.
const MIN_SAMPLES: usize = 8;

/// The size of a trained dictionary.
pub const DICTIONARY_SIZE: usize = 32 << 10;

/// zstd's compression level: its default, as fast as level 1 on objects
/// this small and a little smaller.
const LEVEL: i32 = 3;

/// A zstd dictionary prepared for compressing and decompressing.
pub struct Dictionary {
    compress: CDict<'static>,
    decompress: DDict<'static>,
    len: usize,
}

/// Why a dictionary could not be trained, or an object (de)compressed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("zstd: {0}")]
pub struct CompressionError(String);

thread_local! {
    /// Each thread's compression and decompression contexts, made on first
    /// use: a context is reused across calls and dictionaries.
    static CONTEXTS: RefCell<(Option<CCtx<'static>>, Option<DCtx<'static>>)> =
        const { RefCell::new((None, None)) };
}

fn zstd_error(code: usize) -> CompressionError {
    CompressionError(zstd::zstd_safe::get_error_name(code).to_owned())
}

impl Dictionary {
    /// Trains a dictionary of at most `size` bytes on `samples`: the
    /// concatenated JSON of objects, `sizes` long each.
    pub fn train(
        samples: &[u8],
        sizes: &[usize],
        size: usize,
    ) -> Result<Dictionary, CompressionError> {
        let trained = zstd::dict::from_continuous(samples, sizes, size)
            .map_err(|e| CompressionError(e.to_string()))?;
        Ok(Dictionary::from_bytes(&trained))
    }

    /// A dictionary from its bytes (as trained).
    pub fn from_bytes(bytes: &[u8]) -> Dictionary {
        Dictionary {
            compress: CDict::create(bytes, LEVEL),
            decompress: DDict::create(bytes),
            len: bytes.len(),
        }
    }

    /// The dictionary's size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the dictionary is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The memory the prepared dictionary takes, for both directions.
    pub fn heap_size(&self) -> usize {
        self.compress.sizeof() + self.decompress.sizeof()
    }

    /// Compresses `input` into `out` (cleared first).
    fn compress(&self, input: &[u8], out: &mut Vec<u8>) -> Result<(), CompressionError> {
        out.clear();
        out.reserve(zstd::zstd_safe::compress_bound(input.len()));
        CONTEXTS.with_borrow_mut(|(cctx, _)| {
            cctx.get_or_insert_with(CCtx::create)
                .compress_using_cdict(out, input, &self.compress)
                .map(drop)
                .map_err(zstd_error)
        })
    }

    /// Decompresses `input`, which holds `len` bytes of UTF-8.
    pub(super) fn decompress(&self, input: &[u8], len: usize) -> Result<String, CompressionError> {
        let mut out = Vec::with_capacity(len);
        CONTEXTS.with_borrow_mut(|(_, dctx)| {
            dctx.get_or_insert_with(DCtx::create)
                .decompress_using_ddict(&mut out, input, &self.decompress)
                .map_err(zstd_error)
        })?;
        if out.len() != len {
            return Err(CompressionError(format!(
                "decompressed {} bytes where {len} were compressed",
                out.len()
            )));
        }
        String::from_utf8(out).map_err(|e| CompressionError(e.to_string()))
    }
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Dictionary({} bytes)", self.len)
    }
}

/// Learns one informer's dictionary and compresses its objects.
pub struct Compactor {
    state: Mutex<State>,
}

enum State {
    /// Collecting samples: their JSON, concatenated, and each one's length.
    Learning { samples: Vec<u8>, sizes: Vec<usize> },
    /// Compressing with the trained dictionary.
    Ready(Arc<Dictionary>),
    /// Training failed: objects stay plain.
    Off,
}

impl Default for Compactor {
    fn default() -> Self {
        Compactor::new()
    }
}

impl fmt::Debug for Compactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.state.lock() {
            State::Learning { sizes, .. } => write!(f, "Compactor(learning, {})", sizes.len()),
            State::Ready(dictionary) => write!(f, "Compactor({dictionary:?})"),
            State::Off => f.write_str("Compactor(off)"),
        }
    }
}

impl Compactor {
    /// A compactor that has seen no object yet.
    pub fn new() -> Compactor {
        Compactor {
            state: Mutex::new(State::Learning {
                samples: Vec::new(),
                sizes: Vec::new(),
            }),
        }
    }

    /// A compactor that compresses with `dictionary` from the start.
    pub fn with_dictionary(dictionary: Arc<Dictionary>) -> Compactor {
        Compactor {
            state: Mutex::new(State::Ready(dictionary)),
        }
    }

    /// The trained dictionary, once there is one.
    pub fn dictionary(&self) -> Option<Arc<Dictionary>> {
        match &*self.state.lock() {
            State::Ready(dictionary) => Some(Arc::clone(dictionary)),
            State::Learning { .. } | State::Off => None,
        }
    }

    /// `object` compressed with the dictionary, when there is one and it
    /// makes the object smaller; else `object` itself (also a sample, while
    /// the compactor learns).
    pub fn compact(&self, object: Object) -> Object {
        if object.is_compressed() {
            return object;
        }
        let dictionary = {
            let mut state = self.state.lock();
            match &mut *state {
                State::Ready(dictionary) => Arc::clone(dictionary),
                State::Off => return object,
                State::Learning { samples, sizes } => {
                    let json = object.json();
                    if samples.len() + json.len() <= MAX_SAMPLE_BYTES {
                        samples.extend_from_slice(json.as_bytes());
                        sizes.push(json.len());
                    }
                    let full = samples.len() + json.len() > MAX_SAMPLE_BYTES;
                    if sizes.len() >= SAMPLES || full && sizes.len() >= MIN_SAMPLES {
                        *state = match Dictionary::train(samples, sizes, DICTIONARY_SIZE) {
                            Ok(dictionary) => State::Ready(Arc::new(dictionary)),
                            Err(error) => {
                                tracing::debug!(%error, "no dictionary for the cache; its objects stay plain");
                                State::Off
                            }
                        };
                    } else if full {
                        *state = State::Off;
                    }
                    return object;
                }
            }
        };
        object.compressed(&dictionary).unwrap_or(object)
    }
}

thread_local! {
    /// The compressed bytes of the object being compacted.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Object {
    /// This object with its JSON compressed with `dictionary`: `None` when
    /// it is compressed already, or compression would not make it smaller.
    pub fn compressed(&self, dictionary: &Arc<Dictionary>) -> Option<Object> {
        if self.is_compressed() {
            return None;
        }
        SCRATCH.with_borrow_mut(|packed| {
            let json = self.bytes_at(OFF_JSON);
            dictionary.compress(json, packed).ok()?;
            if packed.len() >= json.len() {
                return None;
            }
            Some(self.repacked(packed, dictionary))
        })
    }

    /// The positions of every span but the JSON's: the header's, then the
    /// table's.
    fn metadata_spans(&self) -> Vec<usize> {
        let mut slots = vec![
            OFF_KEY,
            OFF_UID,
            OFF_RV,
            OFF_API_VERSION,
            OFF_KIND,
            OFF_DELETION,
        ];
        let pairs = (self.u32_at(OFF_N_LABELS) + self.u32_at(OFF_N_ANNOTATIONS)) as usize;
        for i in 0..pairs {
            let at = HEADER_LEN + i * PAIR_LEN;
            slots.extend([at, at + SPAN_LEN]);
        }
        let owners = self.owners_at();
        for i in 0..self.u32_at(OFF_N_OWNERS) as usize {
            let at = owners + i * OWNER_LEN;
            slots.extend((0..4).map(|field| at + field * SPAN_LEN));
        }
        let finalizers = self.finalizers_at();
        slots
            .extend((0..self.u32_at(OFF_N_FINALIZERS) as usize).map(|i| finalizers + i * SPAN_LEN));
        slots
    }

    /// The buffer with `packed` in place of the JSON: the strings that were
    /// spans into the JSON are copied to the end of the tail.
    fn repacked(&self, packed: &[u8], dictionary: &Arc<Dictionary>) -> Object {
        let json_at = self.u32_at(OFF_JSON) as usize;
        let json_end = json_at + self.u32_at(OFF_JSON + 4) as usize;
        let tail = &self.buf()[json_end..];
        let new_tail_at = json_at + packed.len();

        let mut buf = Vec::with_capacity(new_tail_at + tail.len() + 256);
        buf.extend_from_slice(&self.buf()[..json_at]);
        buf.extend_from_slice(packed);
        buf.extend_from_slice(tail);
        for slot in self.metadata_spans() {
            let offset = self.u32_at(slot) as usize;
            let len = self.u32_at(slot + 4) as usize;
            let moved = if len == 0 {
                0
            } else if offset >= json_end {
                new_tail_at + (offset - json_end)
            } else {
                let at = buf.len();
                buf.extend_from_slice(&self.buf()[offset..offset + len]);
                at
            };
            buf[slot..slot + 4].copy_from_slice(&(moved as u32).to_le_bytes());
        }
        buf[OFF_JSON + 4..OFF_JSON + 8].copy_from_slice(&(packed.len() as u32).to_le_bytes());
        Object(ThinArc::from_header_and_slice(
            Some(Arc::clone(dictionary)),
            &buf,
        ))
    }
}

#[cfg(test)]
mod tests;
