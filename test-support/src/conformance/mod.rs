//! Behaviour suites for the store traits, run against every
//! implementation so they keep one contract: [`event_store`] for
//! `EventStore`.

pub mod event_store;
