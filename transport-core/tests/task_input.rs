//! `InputRounds`, the input exchange both revisions' task workers run:
//! unique wire keys over a task's life, answers mapped back to the
//! handler's keys, the round bound, and every way the wait ends.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::handler::{InputRequest, InputRequired};
use mcp_transport_core::task_store::{
    InputEnd, InputRounds, InputWake, MemoryTaskStore, MemoryTaskStoreConfig, NewTask, TaskInput,
    TaskStatus, TaskStore, Terminal, follow_store, now_ms,
};
use serde_json::value::RawValue;

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).unwrap()
}

fn ask(keys: &[&str]) -> InputRequired {
    InputRequired {
        requests: keys
            .iter()
            .map(|k| {
                (
                    (*k).to_owned(),
                    InputRequest {
                        method: "elicitation/create".into(),
                        params: Some(raw(r#"{"message":"name?"}"#)),
                    },
                )
            })
            .collect(),
        state: None,
    }
}

struct Fixture {
    store: Arc<MemoryTaskStore>,
    wake: Arc<InputWake>,
    cancel: CancellationToken,
}

impl Fixture {
    async fn new() -> Self {
        let store = Arc::new(MemoryTaskStore::new(MemoryTaskStoreConfig::default()));
        let task = NewTask {
            id: "t".into(),
            scope: Some("s".into()),
            ttl_ms: None,
            poll_interval_ms: None,
            status_message: None,
        };
        store.create(task, now_ms()).await.unwrap();
        Fixture {
            store,
            wake: Arc::new(InputWake::new()),
            cancel: CancellationToken::new(),
        }
    }

    fn input(&self, max_rounds: u32) -> TaskInput {
        TaskInput {
            store: self.store.clone(),
            id: "t".into(),
            scope: Some("s".into()),
            max_rounds,
            wake: self.wake.clone(),
            cancel: self.cancel.clone(),
        }
    }

    fn rounds(&self, max_rounds: u32) -> InputRounds {
        InputRounds::new(self.input(max_rounds))
    }

    async fn status(&self) -> TaskStatus {
        self.store
            .get("t", Some("s"), now_ms())
            .await
            .unwrap()
            .status
    }

    /// Waits until the task asks for input.
    async fn until_input_required(store: &MemoryTaskStore) {
        while store.get("t", Some("s"), now_ms()).await.unwrap().status != TaskStatus::InputRequired
        {
            tokio::task::yield_now().await;
        }
    }

    /// Answers every outstanding request once the task is
    /// `input_required`, with `{"answer": KEY}`, then wakes the worker.
    fn answer_all(&self) -> tokio::task::JoinHandle<()> {
        let (store, wake) = (self.store.clone(), self.wake.clone());
        tokio::spawn(async move {
            loop {
                let r = store.get("t", Some("s"), now_ms()).await.unwrap();
                if r.status == TaskStatus::InputRequired {
                    let responses: BTreeMap<String, Box<RawValue>> = r
                        .input_requests
                        .keys()
                        .map(|k| (k.clone(), raw(&format!(r#"{{"answer":"{k}"}}"#))))
                        .collect();
                    store
                        .deliver_input("t", Some("s"), responses, now_ms())
                        .await
                        .unwrap();
                    wake.notify();
                    return;
                }
                tokio::task::yield_now().await;
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_use_unique_wire_keys_and_map_answers_back() {
    let f = Fixture::new().await;
    // Two rounds at a bound of two: the last allowed round is served.
    let mut rounds = f.rounds(2);
    let mut published = 0;
    for (round, wire_key) in [(1, "name"), (2, "name#2")] {
        let answering = f.answer_all();
        let answers = rounds
            .exchange(&ask(&["name"]), |r| {
                assert_eq!(r.status, TaskStatus::InputRequired);
                published += 1;
            })
            .await
            .unwrap();
        answering.await.unwrap();
        // The handler sees its own key; the client answered the wire key.
        assert_eq!(answers.len(), 1, "round {round}");
        assert_eq!(
            answers["name"].get(),
            format!(r#"{{"answer":"{wire_key}"}}"#),
            "round {round}"
        );
        assert_eq!(f.status().await, TaskStatus::Working);
    }
    assert_eq!(published, 2);
}

#[tokio::test]
async fn more_rounds_than_allowed_fail_the_task() {
    let f = Fixture::new().await;
    let end = f
        .rounds(0)
        .exchange(&ask(&["a"]), |_| {
            panic!("nothing is published past the bound")
        })
        .await
        .unwrap_err();
    assert!(
        matches!(&end, InputEnd::Fail(e) if e.message.contains("more than 0 times")),
        "{end:?}"
    );
    // The task was not moved to input_required.
    assert_eq!(f.status().await, TaskStatus::Working);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_worker_while_it_waits_ends_the_exchange() {
    let f = Fixture::new().await;
    let cancel = f.cancel.clone();
    let store = f.store.clone();
    tokio::spawn(async move {
        Fixture::until_input_required(&store).await;
        cancel.cancel();
    });
    let end = f
        .rounds(3)
        .exchange(&ask(&["a"]), |_| {})
        .await
        .unwrap_err();
    assert!(matches!(end, InputEnd::Ended), "{end:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_cancelled_while_its_worker_waits_ends_the_exchange() {
    let f = Fixture::new().await;
    let (store, wake) = (f.store.clone(), f.wake.clone());
    tokio::spawn(async move {
        Fixture::until_input_required(&store).await;
        store.cancel("t", Some("s"), now_ms()).await.unwrap();
        wake.notify();
    });
    let end = f
        .rounds(3)
        .exchange(&ask(&["a"]), |_| {})
        .await
        .unwrap_err();
    assert!(matches!(end, InputEnd::Ended), "{end:?}");
    assert_eq!(f.status().await, TaskStatus::Cancelled);
}

#[tokio::test]
async fn a_task_that_already_ended_is_not_asked() {
    let f = Fixture::new().await;
    f.store
        .finish("t", Terminal::Cancelled, None, now_ms())
        .await
        .unwrap();
    let end = f
        .rounds(3)
        .exchange(&ask(&["a"]), |_| {
            panic!("a terminal task is not published as input_required")
        })
        .await
        .unwrap_err();
    assert!(matches!(end, InputEnd::Ended), "{end:?}");
}

/// Answers another instance delivered into the shared store (nobody calls
/// `notify` here) reach an exchange waiting on this one: `follow_store`
/// reads the task `working` again and wakes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_delivered_elsewhere_reach_the_waiting_exchange() {
    let f = Fixture::new().await;
    let following = f.input(0);
    let follower = tokio::spawn(async move {
        follow_store(&following, || tokio::time::sleep(Duration::from_millis(5))).await;
    });
    let store = f.store.clone();
    tokio::spawn(async move {
        Fixture::until_input_required(&store).await;
        let r = store.get("t", Some("s"), now_ms()).await.unwrap();
        let responses: BTreeMap<String, Box<RawValue>> = r
            .input_requests
            .keys()
            .map(|k| (k.clone(), raw(r#"{"answer":"elsewhere"}"#)))
            .collect();
        store
            .deliver_input("t", Some("s"), responses, now_ms())
            .await
            .unwrap();
    });
    let answers = tokio::time::timeout(
        Duration::from_secs(5),
        f.rounds(1).exchange(&ask(&["a"]), |_| {}),
    )
    .await
    .expect("the exchange was woken")
    .unwrap();
    assert_eq!(answers["a"].get(), r#"{"answer":"elsewhere"}"#);
    follower.abort();
}

/// `follow_store` ends, and cancels the worker, when the task is gone from
/// the store or has expired.
#[tokio::test]
async fn following_a_task_that_is_gone_or_expired_ends_and_cancels() {
    let f = Fixture::new().await;
    f.store
        .create(
            NewTask {
                id: "short".into(),
                scope: Some("s".into()),
                ttl_ms: Some(1),
                poll_interval_ms: None,
                status_message: None,
            },
            now_ms() - 10,
        )
        .await
        .unwrap();
    for id in ["never-stored", "short"] {
        let cancel = CancellationToken::new();
        let followed = TaskInput {
            id: id.into(),
            cancel: cancel.clone(),
            ..f.input(0)
        };
        tokio::time::timeout(
            Duration::from_secs(5),
            follow_store(&followed, tokio::task::yield_now),
        )
        .await
        .expect(id);
        assert!(cancel.is_cancelled(), "{id}");
    }
}

/// The workers' clock is the wall clock in milliseconds (another instance
/// reads the same task).
#[test]
fn now_ms_is_the_wall_clock() {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(now_ms().abs_diff(wall) < 60_000, "{} vs {wall}", now_ms());
}
