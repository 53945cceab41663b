//! The indexer: client-go's thread-safe store with indices (spec section 5,
//! IDX). It owns the cached [`Object`]s of one kind keyed by their object
//! key, and for every registered index the map from indexed value to the
//! objects filed under it.
//!
//! Objects carry their own key (KEY-01), so the "key function" of client-go's
//! `cache` store (IDX-03) is [`Object::key`], and key errors surface when the
//! object is built (KEY-03), never in the store. Index sets hold the objects
//! themselves (a reference count each), always the current version of each.
//!
//! Not provided: `Resync()`, deprecated and a no-op in client-go (IDX-04).

use std::borrow::Cow;
use std::hash::BuildHasher;
use std::mem;
use std::sync::Arc;

use foldhash::fast::RandomState;
use hashbrown::hash_map::EntryRef;
use hashbrown::hash_table::Entry;
use hashbrown::{HashMap, HashSet, HashTable};
use parking_lot::{RwLock, RwLockUpgradableReadGuard};

use crate::object::Object;

/// Computes the indexed values of an object (IDX-01). Values may borrow from
/// the object, so the common single-field indices allocate no strings.
pub type IndexFunc = Arc<dyn Fn(&Object) -> Result<Vec<Cow<'_, str>>, IndexError> + Send + Sync>;

/// The name the namespace index is registered under (IDX-19).
pub const NAMESPACE_INDEX: &str = "namespace";

/// Wraps a closure as an [`IndexFunc`], giving it the signature that lets
/// its values borrow from the object.
pub fn index_func<F>(f: F) -> IndexFunc
where
    F: for<'o> Fn(&'o Object) -> Result<Vec<Cow<'o, str>>, IndexError> + Send + Sync + 'static,
{
    Arc::new(f)
}

/// The namespace index function (IDX-19): `[namespace]`, with cluster-scoped
/// objects filed under `""`. It cannot fail: every [`Object`] has metadata.
pub fn namespace_index_func() -> IndexFunc {
    index_func(|obj| Ok(vec![Cow::Borrowed(obj.namespace())]))
}

/// Errors of index queries and registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// No index is registered under this name (IDX-17).
    #[error("index with name {0:?} does not exist")]
    UnknownIndex(String),
    /// An index of this name is already registered.
    #[error("indexer conflict: {0:?} is already registered")]
    Conflict(String),
    /// Indexers were added to a store that holds data (IDX-16): client-go
    /// calls the result undefined; this store refuses.
    #[error("cannot add indexers to a store that already holds {0} objects")]
    NotEmpty(usize),
    /// An index function could not compute the values of an object.
    #[error("index function failed: {0}")]
    Func(String),
}

/// The objects filed under one indexed value, keyed by object key.
type Set = HashTable<Object>;

/// Index: indexed value → the objects filed under it (IDX-01).
type Index = HashMap<Box<str>, Set>;

struct Inner {
    hasher: RandomState,
    items: HashTable<Object>,
    /// Registered index functions, parallel to `indices`.
    indexers: Vec<(String, IndexFunc)>,
    indices: Vec<Index>,
}

/// A thread-safe indexed store of [`Object`]s (IDX-04). Writers take the
/// write lock; readers share the read lock (IDX-07). Every method takes
/// `&self`; lookups return clones, which are reference-count increments.
pub struct Indexer {
    inner: RwLock<Inner>,
}

impl Indexer {
    /// A store with the given indices (IDX-16 `Indexers`).
    ///
    /// # Panics
    ///
    /// When two indexers share a name.
    pub fn new(indexers: Vec<(String, IndexFunc)>) -> Indexer {
        let store = Indexer {
            inner: RwLock::new(Inner {
                hasher: RandomState::default(),
                items: HashTable::new(),
                indexers: Vec::new(),
                indices: Vec::new(),
            }),
        };
        store
            .add_indexers(indexers)
            .expect("indexer names are distinct");
        store
    }

    /// A store with only the namespace index (IDX-19).
    pub fn with_namespace_index() -> Indexer {
        Indexer::new(vec![(NAMESPACE_INDEX.to_owned(), namespace_index_func())])
    }

    /// Inserts or replaces the object under its key and updates every index
    /// (IDX-05, IDX-08, IDX-10, IDX-11). Returns the previous object.
    ///
    /// # Panics
    ///
    /// When an index function fails (IDX-08): a fatal invariant failure. The
    /// store is left unchanged.
    pub fn add(&self, obj: Object) -> Option<Object> {
        let mut guard = self.inner.write();
        let inner = &mut *guard;
        let h = &inner.hasher;
        let hash = h.hash_one(obj.key());
        let entry = inner
            .items
            .entry(hash, |o| o.key() == obj.key(), |o| h.hash_one(o.key()));
        let old = match &entry {
            Entry::Occupied(e) => Some(e.get().clone()),
            Entry::Vacant(_) => None,
        };
        // Every index function runs before anything changes.
        let new_values = values_of(&inner.indexers, &obj);
        let old_values = old.as_ref().map(|o| values_of(&inner.indexers, o));
        match entry {
            Entry::Occupied(mut e) => *e.get_mut() = obj.clone(),
            Entry::Vacant(e) => {
                e.insert(obj.clone());
            }
        }
        for (i, index) in inner.indices.iter_mut().enumerate() {
            let old = old_values.as_ref().map_or(&[][..], |v| &v[i][..]);
            update_index(index, h, obj.key(), old, &new_values[i], Some(&obj));
        }
        old
    }

    /// The same as [`Indexer::add`] (IDX-05).
    pub fn update(&self, obj: Object) -> Option<Object> {
        self.add(obj)
    }

    /// Removes the object stored under `key` from the store and its indices
    /// and returns it; a missing key is a no-op (IDX-06).
    pub fn delete(&self, key: &str) -> Option<Object> {
        let mut guard = self.inner.write();
        let inner = &mut *guard;
        let h = &inner.hasher;
        let entry = inner
            .items
            .find_entry(h.hash_one(key), |o| o.key() == key)
            .ok()?;
        let old = entry.get().clone();
        // Every index function runs before anything changes.
        let old_values = values_of(&inner.indexers, &old);
        entry.remove();
        for (index, old_values) in inner.indices.iter_mut().zip(&old_values) {
            update_index(index, h, key, old_values, &[], None);
        }
        Some(old)
    }

    /// The object stored under `key` (IDX-21).
    pub fn get_by_key(&self, key: &str) -> Option<Object> {
        let inner = self.inner.read();
        inner
            .items
            .find(inner.hasher.hash_one(key), |o| o.key() == key)
            .cloned()
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Object> {
        self.inner.read().items.iter().cloned().collect()
    }

    /// Every stored key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        let inner = self.inner.read();
        inner.items.iter().map(|o| o.key().to_owned()).collect()
    }

    /// The number of stored objects.
    pub fn len(&self) -> usize {
        self.inner.read().items.len()
    }

    /// Whether the store holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Swaps out every item for `objects` (the last one wins for a repeated
    /// key) and rebuilds every index from scratch (IDX-18). Readers keep
    /// reading the old contents while the new ones are built; the swap is
    /// atomic and the old contents are freed outside the lock.
    ///
    /// # Panics
    ///
    /// When an index function fails (IDX-08); the store is left unchanged.
    pub fn replace(&self, objects: Vec<Object>) {
        let guard = self.inner.upgradable_read();
        let h = &guard.hasher;
        let mut items = HashTable::with_capacity(objects.len());
        for obj in objects {
            upsert(&mut items, h, &obj);
        }
        // Object by object, every index at once: index functions that share
        // work per object (one parse for several field indexes) do it once.
        let mut indices: Vec<Index> = guard.indexers.iter().map(|_| Index::new()).collect();
        for obj in &items {
            for (index, values) in indices.iter_mut().zip(values_of(&guard.indexers, obj)) {
                for value in values {
                    upsert(set_for(index, &value), h, obj);
                }
            }
        }
        let mut inner = RwLockUpgradableReadGuard::upgrade(guard);
        let old_items = mem::replace(&mut inner.items, items);
        let old_indices = mem::replace(&mut inner.indices, indices);
        drop(inner);
        drop((old_items, old_indices));
    }

    /// Every stored object whose values in index `name` overlap the values
    /// of `obj` (IDX-12). An index function error is returned, not a panic:
    /// `obj` is not part of the store.
    pub fn index(&self, name: &str, obj: &Object) -> Result<Vec<Object>, IndexError> {
        let inner = self.inner.read();
        let i = inner.position(name)?;
        let values = (inner.indexers[i].1)(obj)?;
        let index = &inner.indices[i];
        let sets = values.iter().filter_map(|v| index.get(&**v));
        if values.len() == 1 {
            return Ok(sets.flat_map(|set| set.iter().cloned()).collect());
        }
        let mut seen = HashSet::new();
        Ok(sets
            .flat_map(|set| set.iter())
            .filter(|o| seen.insert(o.key()))
            .cloned()
            .collect())
    }

    /// The keys of the objects filed under `value` in index `name` (IDX-13).
    pub fn index_keys(&self, name: &str, value: &str) -> Result<Vec<String>, IndexError> {
        let inner = self.inner.read();
        let set = inner.set(name, value)?;
        Ok(set.map_or_else(Vec::new, |s| s.iter().map(|o| o.key().to_owned()).collect()))
    }

    /// The objects filed under `value` in index `name` (IDX-14).
    pub fn by_index(&self, name: &str, value: &str) -> Result<Vec<Object>, IndexError> {
        let inner = self.inner.read();
        let set = inner.set(name, value)?;
        Ok(set.map_or_else(Vec::new, |s| s.iter().cloned().collect()))
    }

    /// Every value currently present in index `name` (IDX-15); empty for an
    /// unknown index, as in client-go.
    pub fn list_index_func_values(&self, name: &str) -> Vec<String> {
        let inner = self.inner.read();
        inner.position(name).map_or_else(
            |_| Vec::new(),
            |i| inner.indices[i].keys().map(|v| v.to_string()).collect(),
        )
    }

    /// The names of the registered indices (IDX-16).
    pub fn index_names(&self) -> Vec<String> {
        let inner = self.inner.read();
        inner.indexers.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The registered indexers (IDX-16 `GetIndexers`).
    pub fn get_indexers(&self) -> Vec<(String, IndexFunc)> {
        self.inner.read().indexers.clone()
    }

    /// Registers more indices (IDX-16). Refused once the store holds data
    /// (client-go calls that undefined) and for a name already registered;
    /// on error nothing is added.
    pub fn add_indexers(&self, indexers: Vec<(String, IndexFunc)>) -> Result<(), IndexError> {
        let mut inner = self.inner.write();
        if !inner.items.is_empty() {
            return Err(IndexError::NotEmpty(inner.items.len()));
        }
        for (i, (name, _)) in indexers.iter().enumerate() {
            let taken = inner.indexers.iter().chain(&indexers[..i]);
            if taken.into_iter().any(|(n, _)| n == name) {
                return Err(IndexError::Conflict(name.clone()));
            }
        }
        for indexer in indexers {
            inner.indexers.push(indexer);
            inner.indices.push(Index::new());
        }
        Ok(())
    }

    /// Registers more indices on a store that may hold data, building each
    /// over the stored objects first (what client-go's `AddIndexers` does
    /// on an informer that has started, since 1.27). A name already
    /// registered is refused and nothing is added.
    ///
    /// # Panics
    ///
    /// When an index function fails (IDX-08); the store is left unchanged.
    pub fn extend_indexers(&self, indexers: Vec<(String, IndexFunc)>) -> Result<(), IndexError> {
        let guard = self.inner.upgradable_read();
        for (i, (name, _)) in indexers.iter().enumerate() {
            let taken = guard.indexers.iter().chain(&indexers[..i]);
            if taken.into_iter().any(|(n, _)| n == name) {
                return Err(IndexError::Conflict(name.clone()));
            }
        }
        let h = &guard.hasher;
        let mut indices: Vec<Index> = indexers.iter().map(|_| Index::new()).collect();
        for obj in &guard.items {
            for (index, values) in indices.iter_mut().zip(values_of(&indexers, obj)) {
                for value in values {
                    upsert(set_for(index, &value), h, obj);
                }
            }
        }
        let mut inner = RwLockUpgradableReadGuard::upgrade(guard);
        inner.indexers.extend(indexers);
        inner.indices.extend(indices);
        Ok(())
    }

    /// Drops the indices named `names` (those not registered are
    /// ignored): they are no longer computed, and asking for them is an
    /// unknown index. Beyond client-go, which cannot remove an indexer.
    pub fn remove_indexers(&self, names: &[String]) {
        let mut inner = self.inner.write();
        let Inner {
            indexers, indices, ..
        } = &mut *inner;
        let mut kept = indexers.iter().map(|(name, _)| !names.contains(name));
        indices.retain(|_| kept.next().unwrap_or(true));
        indexers.retain(|(name, _)| !names.contains(name));
    }
}

impl Inner {
    fn position(&self, name: &str) -> Result<usize, IndexError> {
        self.indexers
            .iter()
            .position(|(n, _)| n == name)
            .ok_or_else(|| IndexError::UnknownIndex(name.to_owned()))
    }

    fn set(&self, name: &str, value: &str) -> Result<Option<&Set>, IndexError> {
        Ok(self.indices[self.position(name)?].get(value))
    }
}

/// The values of `obj` in one index.
///
/// # Panics
///
/// When the index function fails (IDX-08), naming the index and the key.
fn values<'o>(name: &str, f: &IndexFunc, obj: &'o Object) -> Vec<Cow<'o, str>> {
    f(obj).unwrap_or_else(|err| {
        panic!(
            "index function {name:?} failed for object {:?}: {err}",
            obj.key()
        )
    })
}

/// The values of `obj` in every index, in registration order.
fn values_of<'o>(indexers: &[(String, IndexFunc)], obj: &'o Object) -> Vec<Vec<Cow<'o, str>>> {
    indexers
        .iter()
        .map(|(name, f)| values(name, f, obj))
        .collect()
}

/// Inserts `obj` into `set`, replacing the version stored under its key.
fn upsert(set: &mut Set, h: &RandomState, obj: &Object) {
    let entry = set.entry(
        h.hash_one(obj.key()),
        |o| o.key() == obj.key(),
        |o| h.hash_one(o.key()),
    );
    match entry {
        Entry::Occupied(mut e) => *e.get_mut() = obj.clone(),
        Entry::Vacant(e) => {
            e.insert(obj.clone());
        }
    }
}

/// The set of `value` in `index`, created when missing (IDX-09).
fn set_for<'i>(index: &'i mut Index, value: &str) -> &'i mut Set {
    match index.entry_ref(value) {
        EntryRef::Occupied(e) => e.into_mut(),
        EntryRef::Vacant(e) => e.insert_with_key(value.into(), Set::new()),
    }
}

/// Moves `key` from its old values to its new ones in one index (IDX-10):
/// it leaves the sets of old values that are not new values (emptied sets
/// are dropped, IDX-11) and is inserted into, or replaced in, the set of
/// every new value, so the index holds only the current object under
/// exactly the new values. Keeping a value that is in both lists is
/// client-go's single-value fast path, generalised.
fn update_index(
    index: &mut Index,
    h: &RandomState,
    key: &str,
    old: &[Cow<'_, str>],
    new: &[Cow<'_, str>],
    obj: Option<&Object>,
) {
    for value in old {
        if new.contains(value) {
            continue;
        }
        if let Some(set) = index.get_mut(&**value) {
            if let Ok(entry) = set.find_entry(h.hash_one(key), |o| o.key() == key) {
                entry.remove();
            }
            if set.is_empty() {
                index.remove(&**value);
            }
        }
    }
    if let Some(obj) = obj {
        for value in new {
            upsert(set_for(index, value), h, obj);
        }
    }
}

#[cfg(test)]
mod tests;
