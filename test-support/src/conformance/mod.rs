//! Behaviour suites for the store traits, run against every
//! implementation so they keep one contract: [`event_store`] for
//! `EventStore`, [`task_store`] for `TaskStore`, [`session_store`] for
//! `SessionStore`, [`lease_store`] for `LeaseStore`.

pub mod event_store;
pub mod lease_store;
pub mod session_store;
pub mod task_store;

/// One test per case of a store suite, each calling
/// `conformance::$suite::$case` with the maker `$maker` evaluates to
/// (evaluated in each test, inside its runtime, so it may `.await`),
/// under the test attribute in brackets. What the `*_store_suite!` macros
/// expand to; not for use on its own.
#[doc(hidden)]
#[macro_export]
macro_rules! __store_cases {
    ($suite:ident, $maker:expr, [$attr:meta]; $($case:ident),* $(,)?) => {
        $(
            #[$attr]
            async fn $case() {
                let maker = $maker;
                $crate::conformance::$suite::$case(&maker).await;
            }
        )*
    };
}
