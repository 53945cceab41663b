//! The WIT bindings of `recon:controller/controller` (generated from
//! `wit/`). The records the SDK already defines with the same shape (kinds,
//! keys, metadata, objects, errors, client requests, log levels) are used
//! directly instead of generated copies, so imports take and return SDK
//! types without conversion. The export macro is public for
//! [`crate::export_reconciler!`].

wit_bindgen::generate!({
    path: "../wit",
    world: "controller",
    with: {
        "recon:controller/types@0.4.0/gvk": crate::types::Gvk,
        "recon:controller/types@0.4.0/object-key": crate::types::ObjectKey,
        "recon:controller/types@0.4.0/owner-ref": crate::types::OwnerRef,
        "recon:controller/types@0.4.0/object-meta": crate::types::Meta,
        "recon:controller/types@0.4.0/object": crate::types::RawObject,
        "recon:controller/types@0.4.0/error": crate::types::Error,
        "recon:controller/client@0.4.0/patch-body": crate::backend::PatchBody,
        "recon:controller/client@0.4.0/apply-patch": crate::backend::ApplyPatch,
        "recon:controller/client@0.4.0/propagation": crate::backend::Propagation,
        "recon:controller/client@0.4.0/delete-options": crate::backend::DeleteOptions,
        "recon:controller/client@0.4.0/event-type": crate::backend::EventType,
        "recon:controller/client@0.4.0/event": crate::backend::Event,
        "recon:controller/log@0.4.0/level": crate::backend::Level,
    },
    generate_all,
    pub_export_macro: true,
    export_macro_name: "export",
    default_bindings_module: "recon_guest_sdk::bindings",
});
