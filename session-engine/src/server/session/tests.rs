//! Unit tests of [`Session`] and [`Registry`] (session 35, from
//! cargo-mutants' survivors: docs/TESTING.md).

use super::*;
use crate::revision::Plain;
use mcp_test_support::handler::TestHandler;
use mcp_test_support::wait::within;

/// A 2025-11-25 session called `id`, last active at 1,000 ms.
fn session(id: &str) -> Arc<Session> {
    Arc::new(Session::new(
        id.into(),
        SessionTag::from_u64(7),
        ProtocolVersion::V2025_11_25,
        Arc::new(Plain(ProtocolVersion::V2025_11_25)),
        ClientDescription::default(),
        Arc::new(TestHandler::builder("t").build()),
        1_000,
    ))
}

/// The session's end wakes whoever waits on it, whether they began to
/// wait before or after, and stays ended.
#[tokio::test]
async fn a_sessions_end_wakes_every_waiter_and_stays() {
    let s = session("a");
    assert!(!s.shutdown.is_cancelled());
    let before = tokio::spawn(s.shutdown.cancelled());
    let also = tokio::spawn(s.shutdown.cancelled());
    tokio::task::yield_now().await;
    assert!(!before.is_finished());
    s.shut_down();
    assert!(s.shutdown.is_cancelled());
    within("the waiter from before", before).await.unwrap();
    within("the other waiter", also).await.unwrap();
    within("a wait after the end", s.shutdown.cancelled()).await;
    // Ended with nobody waiting: the same.
    let idle = session("b");
    idle.shutdown.cancel();
    assert!(idle.shutdown.is_cancelled());
    within(
        "a wait after an end nobody waited for",
        idle.shutdown.cancelled(),
    )
    .await;
}

/// Renewal numbers run 1, 2, … and never repeat back to back, across the
/// counter's wrap too.
#[test]
fn renewal_numbers_never_repeat_back_to_back() {
    let s = session("a");
    assert_eq!([s.next_renewal(), s.next_renewal()], [1, 2]);
    s.renewals.store(u32::MAX - 2, Ordering::Relaxed);
    let wrap: Vec<u32> = (0..4).map(|_| s.next_renewal()).collect();
    assert_eq!(wrap, [u32::MAX - 1, u32::MAX, 1, 2]);
}

/// An adopted session's streams go on from the number it was given.
#[test]
fn stream_numbers_go_on_from_where_they_were_set() {
    let s = session("a");
    assert_eq!(s.next_stream_id(), StreamId::FIRST_REQUEST);
    s.start_streams_at((1 << 32) | 5);
    assert_eq!(s.next_stream_id(), StreamId((1 << 32) | 5));
    assert_eq!(s.next_stream_id(), StreamId((1 << 32) | 6));
}

/// A stream's live state goes once it has ended and nothing is left to
/// deliver; not before, and never a newer state of the same number.
#[test]
fn a_stream_is_reaped_once_ended_and_delivered() {
    let s = session("a");
    let open = StreamState::new(StreamId(1));
    s.add_stream(open.clone());
    s.reap(&open);
    assert!(s.stream(StreamId(1)).is_some(), "not ended");
    assert_eq!(s.stream_ids(), [StreamId(1)]);

    let undelivered = StreamState::ended(StreamId(2), 3);
    undelivered.attach(1);
    s.add_stream(undelivered.clone());
    s.reap(&undelivered);
    assert!(
        s.stream(StreamId(2)).is_some(),
        "ended, two events undelivered"
    );

    let done = StreamState::ended(StreamId(3), 3);
    s.add_stream(done.clone());
    let stale = StreamState::ended(StreamId(3), 3);
    s.reap(&stale);
    assert!(s.stream(StreamId(3)).is_some(), "another state of stream 3");
    s.reap(&done);
    assert!(s.stream(StreamId(3)).is_none(), "ended and nobody attached");
    let mut ids = s.stream_ids();
    ids.sort_unstable();
    assert_eq!(ids, [StreamId(1), StreamId(2)]);
}

/// The live state of a stream another instance writes goes once no
/// connection here is attached to it; a local stream's never goes this way.
#[test]
fn a_remote_stream_is_forgotten_once_nobody_here_follows_it() {
    let s = session("a");
    let remote = StreamState::remote(StreamId(1), 0);
    s.add_stream(remote.clone());
    let generation = remote.attach(0);
    s.forget_remote(&remote);
    assert!(s.stream(StreamId(1)).is_some(), "followed");
    remote.detach(generation);
    s.forget_remote(&StreamState::remote(StreamId(1), 0));
    assert!(s.stream(StreamId(1)).is_some(), "another state of stream 1");
    s.forget_remote(&remote);
    assert!(s.stream(StreamId(1)).is_none());

    let local = StreamState::new(StreamId(2));
    s.add_stream(local.clone());
    s.forget_remote(&local);
    assert!(s.stream(StreamId(2)).is_some(), "written here");
}

/// A server-to-client request is pending from its registration until it
/// is answered or forgotten, and at most `max` are.
#[test]
fn a_client_request_is_pending_until_answered_or_forgotten() {
    let s = session("a");
    let (one, two) = (RequestId::Number(1), RequestId::Number(2));
    assert!(!s.is_client_request_pending(&one));
    let _rx = s
        .await_client_response(one.clone(), 1)
        .expect("room for one");
    assert!(s.is_client_request_pending(&one));
    assert!(s.await_client_response(two.clone(), 1).is_none(), "max 1");
    assert!(!s.is_client_request_pending(&two));
    s.forget_client_request(&one);
    assert!(!s.is_client_request_pending(&one));
    assert!(s.await_client_response(two.clone(), 1).is_some());
}

/// Idle means nothing running and no activity for longer than the
/// timeout (the timeout itself is not yet longer).
#[test]
fn a_session_expires_only_idle_and_past_its_timeout() {
    let s = session("a");
    let timeout = Duration::from_millis(500);
    assert!(!s.is_busy());
    assert!(!s.is_expired(1_500, timeout), "exactly the timeout");
    assert!(s.is_expired(1_501, timeout));
    s.touch(1_200);
    s.touch(1_100);
    assert!(
        !s.is_expired(1_700, timeout),
        "touched at 1,200, never back"
    );
    s.busy.fetch_add(1, Ordering::AcqRel);
    assert!(s.is_busy());
    assert!(!s.is_expired(u64::MAX, timeout), "busy");
    s.busy.fetch_sub(1, Ordering::AcqRel);
    assert!(!s.is_busy());
    assert!(s.is_expired(u64::MAX, timeout));
}

/// Every level `logging/setLevel` names reads back as itself.
#[test]
fn every_log_level_reads_back() {
    let s = session("a");
    assert_eq!(s.log_level(), LogLevel::Debug, "before any setLevel");
    for level in [
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
        LogLevel::Debug,
    ] {
        s.set_log_level(level);
        assert_eq!(s.log_level(), level);
    }
}

/// The registry holds at most `max` sessions; a session already there is
/// returned whatever the count.
#[test]
fn the_registry_holds_at_most_max_sessions() {
    let r = Registry::default();
    let a = session("a");
    assert!(Arc::ptr_eq(&r.insert_or_get(a.clone(), 1).unwrap(), &a));
    let again = r.insert_or_get(session("a"), 1).unwrap();
    assert!(Arc::ptr_eq(&again, &a), "the one registered");
    assert!(matches!(
        r.insert_or_get(session("b"), 1),
        Err(Full { max: 1 })
    ));
    assert_eq!(r.insert(session("b"), 1).unwrap_err().max, 1);
    assert!(r.insert_or_get(session("b"), 2).is_ok());
    assert_eq!(r.len(), 2);
}

/// The sweeper looks a quarter of the timeout apart, within 10 ms..60 s.
#[test]
fn the_sweep_interval_is_a_quarter_of_the_timeout_within_bounds() {
    assert_eq!(
        sweep_interval(Duration::from_secs(1)),
        Duration::from_millis(250)
    );
    assert_eq!(
        sweep_interval(Duration::from_millis(8)),
        Duration::from_millis(10)
    );
    assert_eq!(
        sweep_interval(Duration::from_secs(3600)),
        Duration::from_secs(60)
    );
}
