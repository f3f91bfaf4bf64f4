//! Behaviour suites for the store traits, run against every
//! implementation so they keep one contract: [`event_store`] for
//! `EventStore`, [`task_store`] for `TaskStore`, [`session_store`] for
//! `SessionStore`, [`lease_store`] for `LeaseStore`.

pub mod event_store;
pub mod lease_store;
pub mod session_store;
pub mod task_store;
