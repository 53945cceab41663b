//! The informer machinery: a reflector lists and watches a kind through a
//! [`ListerWatcher`], feeds a DeltaFIFO, and the shared informer pops deltas
//! into the indexed cache and out to event handlers.

pub mod indexer;
pub mod object;
