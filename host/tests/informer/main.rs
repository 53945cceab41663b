//! Tests of the informer machinery, named after the rules of the
//! behavioural contract (docs/CONTRACT.md) they check.

mod delta_fifo;
mod model;
mod reflector;
mod shared_informer;
mod support;
