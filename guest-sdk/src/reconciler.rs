//! The [`Reconciler`] trait a guest implements, and
//! [`export_reconciler!`](crate::export_reconciler), which makes a type
//! implementing it the component's `reconciler` export.

use crate::context::Context;
use crate::manifest::Manifest;
use crate::types::{Action, Request, Result};

/// A reconciler. The host calls [`Reconciler::manifest`] once when it loads
/// the component, and [`Reconciler::reconcile`] for one key at a time, each
/// call possibly in a fresh instance: keep no state between calls.
pub trait Reconciler {
    /// What to watch, index and write.
    fn manifest() -> Manifest;

    /// Bring the world in line with the object under `request.key`, which
    /// may have been deleted (then it is not in the cache). An error requeues
    /// the key through the host's rate limiter.
    fn reconcile(ctx: &Context<'_>, request: Request) -> Result<Action>;
}

/// Exports a [`Reconciler`] as the component's `recon:controller/reconciler`
/// interface. Use it once, at the root of a `cdylib` crate:
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_guest_sdk::{Action, Context, Manifest, Reconciler, Request, Result};
///
/// pub struct MyReconciler;
///
/// impl Reconciler for MyReconciler {
///     fn manifest() -> Manifest {
///         Manifest::new::<ConfigMap>("my-reconciler")
///     }
///
///     fn reconcile(ctx: &Context<'_>, request: Request) -> Result<Action> {
///         ctx.info("reconciling", &[("key", &request.key)]);
///         Ok(Action::Done)
///     }
/// }
///
/// recon_guest_sdk::export_reconciler!(MyReconciler);
/// ```
///
/// It expands to nothing outside `wasm32` (natively, test the reconciler
/// through `testing::FakeCluster`).
#[macro_export]
macro_rules! export_reconciler {
    ($reconciler:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct ReconcilerExport;

            impl $crate::bindings::exports::recon::controller::reconciler::Guest for ReconcilerExport {
                fn manifest() -> $crate::bindings::exports::recon::controller::reconciler::ControllerManifest {
                    $crate::wasm::manifest::<$reconciler>()
                }

                fn reconcile(
                    request: $crate::bindings::exports::recon::controller::reconciler::Request,
                ) -> ::core::result::Result<
                    $crate::bindings::exports::recon::controller::reconciler::Action,
                    $crate::Error,
                > {
                    $crate::wasm::reconcile::<$reconciler>(request)
                }
            }

            $crate::bindings::export!(ReconcilerExport with_types_in $crate::bindings);
        };
    };
}
