"""The manifest builder and its checks (the Rust SDK's `manifest.rs`
tests), and label selectors as the `label-selector` crate parses them."""

import pytest

from recon_guest import (
    CONFIG_MAP,
    DEPLOYMENT,
    EVENT_KIND,
    NAMESPACE,
    SECRET,
    Gvk,
    IndexSource,
    Invalid,
    KeyMapping,
    Manifest,
    Permission,
    PrunedField,
    Verb,
    Watch,
)
from recon_guest.selector import Selector


def test_the_builder_fills_every_field():
    m = (
        Manifest("web", DEPLOYMENT)
        .primary_selector("tier=frontend")
        .owns_kind(CONFIG_MAP)
        .watch(SECRET, KeyMapping.by_index("secrets"), selector="managed")
        .index(DEPLOYMENT, "secrets", IndexSource.field("spec.secretName"))
        .resync_every(60)
        .with_concurrency(4)
        .allow(CONFIG_MAP, [Verb.CREATE])
        .allow(CONFIG_MAP, [Verb.CREATE, Verb.DELETE])
        .prune(CONFIG_MAP, "data")
        .keep_managed_fields(CONFIG_MAP)
        .keep_managed_fields(CONFIG_MAP)
    )
    assert m.name == "web"
    assert m.primary == DEPLOYMENT
    assert m.primary_label_selector == "tier=frontend"
    assert m.owns == [CONFIG_MAP]
    assert m.watches == [Watch(SECRET, KeyMapping.by_index("secrets"), "managed")]
    assert len(m.indexes) == 1
    assert m.resync_period == 60
    assert m.concurrency == 4
    assert m.writes == [Permission(CONFIG_MAP, [Verb.CREATE, Verb.DELETE])]
    assert m.prune_fields == [PrunedField(CONFIG_MAP, "data")]
    assert m.managed_fields_kept == [CONFIG_MAP]
    m.validate()
    with pytest.raises(Invalid, match="keeps managedFields of .*Namespace.*, which the manifest does not watch"):
        Manifest("web", DEPLOYMENT).keep_managed_fields(NAMESPACE).validate()
    names = Manifest("names", CONFIG_MAP).watch(SECRET, KeyMapping.label("app")).metadata_only(SECRET)
    assert names.metadata_only(SECRET).metadata_only_kinds == [SECRET]
    names.validate()
    with pytest.raises(Invalid, match="reads .*Namespace.* as metadata only, but the manifest does not watch it"):
        Manifest("web", DEPLOYMENT).metadata_only(NAMESPACE).validate()
    with pytest.raises(Invalid, match='reads "data.password" of .*Secret.*, which the manifest reads as metadata only'):
        names.index(SECRET, "by-data", IndexSource.field("data.password")).validate()
    assert m.allows(CONFIG_MAP, Verb.DELETE)
    assert not m.allows(CONFIG_MAP, Verb.PATCH)
    assert not m.allows(SECRET, Verb.CREATE)
    assert not m.allows_events()
    m.validate()


def test_recording_events_is_a_create_of_events_k8s_io_events():
    m = Manifest("m", CONFIG_MAP).records_events()
    assert m.writes == [Permission(Gvk("events.k8s.io", "v1", "Event"), [Verb.CREATE])]
    assert EVENT_KIND == Gvk("events.k8s.io", "v1", "Event")
    assert m.allows_events()
    assert not Manifest("m", CONFIG_MAP).allows_events()


@pytest.mark.parametrize(
    "manifest",
    [
        Manifest("", CONFIG_MAP),
        Manifest("m", CONFIG_MAP).primary_selector("a in ("),
        Manifest("m", CONFIG_MAP)
        .index(CONFIG_MAP, "i", IndexSource.OWNER_UID)
        .index(CONFIG_MAP, "i", IndexSource.label("a")),
        Manifest("m", CONFIG_MAP).watch(SECRET, KeyMapping.by_index("missing")),
        Manifest("m", CONFIG_MAP)
        .index(SECRET, "by-secret", IndexSource.OWNER_UID)
        .watch(SECRET, KeyMapping.by_index("by-secret")),
        Manifest("m", CONFIG_MAP).watch(SECRET, KeyMapping.NAMESPACE),
        Manifest("m", CONFIG_MAP).index(CONFIG_MAP, "i", IndexSource.fields([])),
        Manifest("m", CONFIG_MAP).prune(SECRET, "data"),
        Manifest("m", CONFIG_MAP).prune(CONFIG_MAP, "metadata.labels"),
    ],
)
def test_validate_names_what_the_host_would_refuse(manifest):
    with pytest.raises(Invalid):
        manifest.validate()


def test_a_namespace_mapping_needs_a_namespace_primary():
    Manifest("m", NAMESPACE).watch(SECRET, KeyMapping.NAMESPACE).validate()


def test_selectors_parse_and_match_as_the_host_does():
    labels = {"app": "web", "tier": "front", "legacy": ""}
    for text, matches in [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app!=web", False),
        ("app in (db,web)", True),
        ("app notin (web)", False),
        ("tier,!missing", True),
        ("!legacy", False),
        ("legacy=", True),
        ("example.com/role in (a, )", False),
    ]:
        assert Selector.parse(text).matches(labels) is matches, text
    for bad in ["a in (", "a b", "=a", "Bad Key=x", "a=b c", "a in x", "-a=b", "a=-b"]:
        with pytest.raises(Invalid, match="label selector"):
            Selector.parse(bad)
