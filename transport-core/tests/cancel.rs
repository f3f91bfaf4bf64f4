//! The runtime-free cancellation token works under an async runtime (on a
//! paused clock: the 50 ms "not yet" wait costs no real time).

use std::time::Duration;

use mcp_transport_core::cancel::CancellationToken;

#[tokio::test(start_paused = true)]
async fn cancelled_future_completes_on_cancel_and_not_before() {
    let token = CancellationToken::new();
    let waiter = tokio::spawn({
        let t = token.clone();
        async move { t.cancelled().await }
    });
    // Not cancelled yet: the waiter must still be pending.
    let early = tokio::time::timeout(Duration::from_millis(50), token.cancelled()).await;
    assert!(early.is_err(), "completed before cancel");
    assert!(!waiter.is_finished());
    token.cancel();
    tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("waiter not woken")
        .unwrap();
    // Already cancelled: completes at once.
    token.cancelled().await;
}
