"""The component's entry module (componentize-py's `app`): the mirror as
the `reconciler` export of the `recon:controller@0.4.0` `controller` world."""

from configmap_mirror import ConfigMapMirror
from recon_guest.wasm import export

Reconciler = export(ConfigMapMirror)
