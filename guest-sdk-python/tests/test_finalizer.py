"""The finalizer helper against the fake cluster: the Rust SDK's
`finalizer.rs` tests (its property tests as fixed cases over several
finalizer lists)."""

import pytest

from recon_guest import CONFIG_MAP, Action, Invalid, Manifest, ObjectKey, Unavailable, Verb, finalizer
from recon_guest.finalizer import add, remove
from recon_guest.testing import FakeCluster

NAME = "recon.dev/test"


class Finalized:
    """Runs the finalizer helper over ConfigMaps, logging which event ran;
    cleanup of `stuck` fails."""

    def manifest(self):
        return Manifest("finalized", CONFIG_MAP).allow(CONFIG_MAP, [Verb.PATCH])

    def reconcile(self, ctx, request):
        cm = ctx.get(CONFIG_MAP, request.key.namespace, request.key.name)
        if cm is None:
            return Action.DONE

        def apply(cm):
            ctx.info("apply", finalizers=",".join(cm["metadata"].get("finalizers") or []))
            return Action.DONE

        def cleanup(cm):
            if cm["metadata"]["name"] == "stuck":
                raise Unavailable("cleanup failed")
            ctx.info("cleanup")
            return Action.requeue_after(1)

        return finalizer(ctx, CONFIG_MAP, NAME, cm, apply, cleanup)


def config_map(name, finalizers=()):
    cm = {"metadata": {"namespace": "ns", "name": name}}
    if finalizers:
        cm["metadata"]["finalizers"] = list(finalizers)
    return cm


def finalizers_of(cluster, name):
    return cluster.get(CONFIG_MAP, "ns", name)["metadata"].get("finalizers") or []


def messages(cluster):
    return [
        f"{line.message} {line.fields[0][0]}={line.fields[0][1]}" if line.fields else line.message
        for line in cluster.logs()
    ]


def key(name):
    return ObjectKey.namespaced("ns", name)


def deleted_after_first_reconcile(name):
    cluster = FakeCluster(Finalized())
    cluster.insert(CONFIG_MAP, config_map(name))
    cluster.reconcile(key(name))
    cluster.delete(CONFIG_MAP, "ns", name)
    return cluster


def test_the_finalizer_is_added_before_apply():
    cluster = FakeCluster(Finalized())
    cluster.insert(CONFIG_MAP, config_map("a"))
    assert cluster.reconcile(key("a")) == Action.DONE
    assert messages(cluster) == ["apply finalizers=recon.dev/test"]
    assert finalizers_of(cluster, "a") == [NAME]
    assert len(cluster.writes()) == 1

    # Next time it is there: apply, and nothing written.
    cluster.clear_records()
    assert cluster.reconcile(key("a")) == Action.DONE
    assert messages(cluster) == ["apply finalizers=recon.dev/test"]
    assert cluster.writes() == []


def test_other_finalizers_are_kept():
    cluster = FakeCluster(Finalized())
    cluster.insert(CONFIG_MAP, config_map("a", ["first", "second"]))
    cluster.reconcile(key("a"))
    assert finalizers_of(cluster, "a") == ["first", "second", NAME]

    cluster.delete(CONFIG_MAP, "ns", "a")
    cluster.clear_records()
    assert cluster.reconcile(key("a")) == Action.requeue_after(1), "cleanup's action"
    assert messages(cluster) == ["cleanup"]
    assert finalizers_of(cluster, "a") == ["first", "second"]


def test_cleanup_runs_on_deletion_and_then_the_object_goes():
    cluster = deleted_after_first_reconcile("a")
    assert cluster.get(CONFIG_MAP, "ns", "a") is not None
    cluster.clear_records()
    cluster.reconcile(key("a"))
    assert messages(cluster) == ["cleanup"]
    assert cluster.get(CONFIG_MAP, "ns", "a") is None
    assert cluster.reconcile(key("a")) == Action.DONE


def test_a_failed_cleanup_keeps_the_finalizer():
    cluster = deleted_after_first_reconcile("stuck")
    with pytest.raises(Unavailable) as failed:
        cluster.reconcile(key("stuck"))
    assert failed.value == Unavailable("cleanup failed")
    assert finalizers_of(cluster, "stuck") == [NAME]


def test_a_deleted_object_without_the_finalizer_is_left_alone():
    cluster = FakeCluster(Finalized())
    cluster.insert(CONFIG_MAP, config_map("a", ["someone-else"]))
    cluster.delete(CONFIG_MAP, "ns", "a")
    assert cluster.reconcile(key("a")) == Action.DONE
    assert cluster.logs() == []
    assert cluster.writes() == []
    assert finalizers_of(cluster, "a") == ["someone-else"]


def test_remove_without_the_finalizer_writes_nothing():
    cluster = FakeCluster(Finalized())
    cm = cluster.insert(CONFIG_MAP, config_map("a", ["other"]))
    assert remove(cluster.context(), CONFIG_MAP, cm, NAME) is None
    assert cluster.writes() == []


OTHERS = [[], ["a"], ["a", "b/c"], ["x/y", "m", "zz", "k/l"]]


@pytest.mark.parametrize("others", OTHERS)
def test_add_then_remove_leaves_the_other_finalizers_in_order(others):
    cluster = FakeCluster(Finalized())
    ctx = cluster.context()
    cm = cluster.insert(CONFIG_MAP, config_map("a", others))
    added = add(ctx, CONFIG_MAP, cm, NAME)
    assert added["metadata"]["finalizers"] == others + [NAME]
    removed = remove(ctx, CONFIG_MAP, added, NAME)
    assert (removed["metadata"].get("finalizers") or []) == others


@pytest.mark.parametrize("others", OTHERS)
def test_a_concurrent_change_fails_the_add_instead_of_being_clobbered(others):
    cluster = FakeCluster(Finalized())
    ctx = cluster.context()
    stale = cluster.insert(CONFIG_MAP, config_map("a", others))
    changed = others + ["intruder"]
    cluster.insert(CONFIG_MAP, config_map("a", changed))
    with pytest.raises(Invalid):
        add(ctx, CONFIG_MAP, stale, NAME)
    assert finalizers_of(cluster, "a") == changed


@pytest.mark.parametrize("others", [o for o in OTHERS if o])
def test_a_concurrent_change_fails_the_remove_instead_of_removing_another(others):
    cluster = FakeCluster(Finalized())
    ctx = cluster.context()
    everything = others + [NAME]
    stale = cluster.insert(CONFIG_MAP, config_map("a", everything))
    # Someone removes the first finalizer: ours moves down one place.
    shifted = everything[1:]
    cluster.insert(CONFIG_MAP, config_map("a", shifted))
    with pytest.raises(Invalid):
        remove(ctx, CONFIG_MAP, stale, NAME)
    assert finalizers_of(cluster, "a") == shifted
