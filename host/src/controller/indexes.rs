//! Declared indexes computed natively: a manifest's index specs become the
//! indexer's index functions, under names private to the guest.
//!
//! Field indexes are the costly kind: their values sit somewhere in the
//! object's JSON. All the field indexes of one informer, whichever guests
//! declared them, share one pass over each object: a streaming walk that
//! follows the declared paths and skips everything else without building
//! it. So a guest's field indexes cost the shared cache one scan per
//! change, however many there are, and never delay another guest's sync
//! by more than that.

use std::borrow::Cow;
use std::sync::Arc;

use parking_lot::Mutex;
use recon_api_semantics::fields::{field_values, segments};

use crate::informer::{IndexError, IndexFunc, index_func};
use crate::object::Object;
use crate::runtime::manifest::IndexSource;

/// The indexer's name for `guest`'s index `index`: guests never see each
/// other's indexes, whatever they name them.
pub fn indexer_name(guest: &str, index: &str) -> String {
    format!("{guest}/{index}")
}

/// The index function of one declared source.
#[cfg(test)]
pub(crate) fn index_function(source: &IndexSource) -> IndexFunc {
    let mut functions = index_functions(vec![(String::new(), source.clone())]);
    functions.remove(0).1
}

/// The index functions of one informer's declared indexes, each under its
/// indexer name; the field indexes among them share one pass per object.
pub fn index_functions(indexes: Vec<(String, IndexSource)>) -> Vec<(String, IndexFunc)> {
    let paths: Vec<Vec<String>> = indexes
        .iter()
        .flat_map(|(_, source)| source.paths().iter().map(|p| segments(p)))
        .collect();
    let fields = Arc::new(FieldIndexes {
        paths,
        last: Mutex::new(None),
    });
    let mut slot = 0;
    indexes
        .into_iter()
        .map(|(name, source)| {
            let function = match source {
                IndexSource::Label(label) => index_func(move |object: &Object| {
                    Ok(object
                        .label(&label)
                        .map(|v| vec![Cow::Borrowed(v)])
                        .unwrap_or_default())
                }),
                IndexSource::Annotation(annotation) => index_func(move |object: &Object| {
                    Ok(object
                        .annotation(&annotation)
                        .map(|v| vec![Cow::Borrowed(v)])
                        .unwrap_or_default())
                }),
                IndexSource::OwnerUid => index_func(|object: &Object| {
                    Ok(object
                        .owner_references()
                        .map(|owner| Cow::Borrowed(owner.uid))
                        .collect())
                }),
                IndexSource::Field(_) => {
                    let (fields, path) = (Arc::clone(&fields), slot);
                    slot += 1;
                    index_func(move |object: &Object| {
                        let values = fields.values(object)?;
                        Ok(values[path].iter().cloned().map(Cow::Owned).collect())
                    })
                }
                IndexSource::Fields(paths) => {
                    let (fields, first) = (Arc::clone(&fields), slot);
                    slot += paths.len();
                    let slots = first..slot;
                    index_func(move |object: &Object| {
                        let values = fields.values(object)?;
                        let mut found: Vec<Cow<'_, str>> = Vec::new();
                        for value in slots.clone().flat_map(|path| &values[path]) {
                            if !found.iter().any(|f| f == value) {
                                found.push(Cow::Owned(value.clone()));
                            }
                        }
                        Ok(found)
                    })
                }
            };
            (name, function)
        })
        .collect()
}

/// The strings found at each path of one object.
type FieldValues = Arc<Vec<Vec<String>>>;

/// The field indexes of one informer: their paths, and the values of the
/// last object walked (the indexer asks each index of an object in turn).
struct FieldIndexes {
    paths: Vec<Vec<String>>,
    last: Mutex<Option<(Object, FieldValues)>>,
}

impl FieldIndexes {
    /// The strings at every path in `object`, one walk per object.
    fn values(&self, object: &Object) -> Result<FieldValues, IndexError> {
        let mut last = self.last.lock();
        if let Some((walked, values)) = &*last
            && walked.is_same(object)
        {
            return Ok(Arc::clone(values));
        }
        let values = Arc::new(
            field_values(&self.paths, &object.json())
                .map_err(|e| IndexError::Func(format!("{}: not JSON: {e}", object.key())))?,
        );
        *last = Some((object.clone(), Arc::clone(&values)));
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Object {
        Object::from_json(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns",
            "labels":{"app":"web"},"annotations":{"team":"a"},
            "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u1","controller":true},
                               {"apiVersion":"v1","kind":"Node","name":"n","uid":"u2"}]},
            "spec":{"volumes":[{"name":"a","secret":{"secretName":"s1"}},{"name":"b","configMap":{"name":"c"}},
                               {"name":"c","secret":{"secretName":"s2"}}],"nodeName":"n1"}}"#,
        )
        .unwrap()
    }

    fn values(source: IndexSource) -> Vec<String> {
        let object = pod();
        index_function(&source)(&object)
            .unwrap()
            .into_iter()
            .map(Cow::into_owned)
            .collect()
    }

    #[test]
    fn every_source_indexes_what_it_names() {
        assert_eq!(values(IndexSource::Label("app".into())), ["web"]);
        assert!(values(IndexSource::Label("missing".into())).is_empty());
        assert_eq!(values(IndexSource::Annotation("team".into())), ["a"]);
        assert_eq!(values(IndexSource::OwnerUid), ["u1", "u2"]);
        assert_eq!(values(IndexSource::Field("spec.nodeName".into())), ["n1"]);
        assert_eq!(
            values(IndexSource::Field("spec.volumes.secret.secretName".into())),
            ["s1", "s2"]
        );
        assert!(values(IndexSource::Field("spec.volumes".into())).is_empty());
        assert!(values(IndexSource::Field("spec.nope.x".into())).is_empty());
        // Several paths give their strings together, each once.
        assert_eq!(
            values(IndexSource::Fields(vec![
                "spec.volumes.configMap.name".into(),
                "spec.volumes.secret.secretName".into(),
                "spec.nope".into(),
                "spec.volumes.configMap.name".into(),
            ])),
            ["c", "s1", "s2"]
        );
    }

    #[test]
    fn the_field_indexes_of_an_informer_share_one_walk_and_agree_with_each_alone() {
        let sources = [
            IndexSource::Field("spec.nodeName".into()),
            IndexSource::Label("app".into()),
            IndexSource::Field("spec.volumes.secret.secretName".into()),
            IndexSource::Field("spec.volumes.name".into()),
            IndexSource::Field("spec.volumes".into()),
            IndexSource::Fields(vec!["spec.nodeName".into(), "spec.volumes.name".into()]),
            IndexSource::Field("metadata.ownerReferences.uid".into()),
            IndexSource::Field("spec.nodeName".into()),
        ];
        let together = index_functions(
            sources
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("i{i}"), s.clone()))
                .collect(),
        );
        let object = pod();
        for ((name, function), source) in together.iter().zip(&sources) {
            let shared: Vec<String> = function(&object)
                .unwrap()
                .into_iter()
                .map(Cow::into_owned)
                .collect();
            assert_eq!(shared, values(source.clone()), "{name}");
        }
        // The walk was shared: the cached values are the pod's.
        assert_eq!(
            together[3].1(&object).unwrap(),
            [Cow::Borrowed("a"), Cow::Borrowed("b"), Cow::Borrowed("c")]
        );
        // Another object is walked anew, not answered from the last.
        let other = Object::from_json(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q","namespace":"ns"},"spec":{"nodeName":"n2"}}"#,
        )
        .unwrap();
        assert_eq!(together[0].1(&other).unwrap(), [Cow::Borrowed("n2")]);
        assert_eq!(together[0].1(&object).unwrap(), [Cow::Borrowed("n1")]);
    }

    #[test]
    fn names_are_private_to_the_guest() {
        assert_ne!(indexer_name("a", "x"), indexer_name("b", "x"));
    }
}
