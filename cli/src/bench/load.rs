//! The load generator: closed-loop, a fixed number of HTTP/1.1 keep-alive
//! connections, each sending its next request as soon as the previous
//! answer has been read in full — the model `wrk` uses, so the figures
//! compare with it. It measures the highest throughput the server sustains;
//! latencies are those seen at that throughput (closed-loop latencies omit
//! the waiting an open-loop arrival would have done: coordinated omission).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::latency::percentile;
use super::proc::{Pid, cpu_time};
use super::wire::{self, Template};

/// How the connections use 2025-11-25 sessions.
#[derive(Clone, Debug)]
pub enum Sessions {
    /// No session (2026-07-28, the floor).
    None,
    /// Each connection opens its own session first.
    PerConnection,
    /// Every connection uses this one session.
    Shared(String),
}

/// The shape of one load run.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    /// Connections, each with one request in flight at a time.
    pub connections: usize,
    /// Measured time (after the warm-up).
    pub duration: Duration,
    /// Time before measuring starts (connections are busy already).
    pub warmup: Duration,
}

/// What one load run measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LoadFigures {
    /// Correct answers per second over the measured time.
    pub requests_per_sec: f64,
    /// Correct answers in the measured time.
    pub requests: u64,
    /// Answers that were not 200 with the expected result, or failed.
    pub errors: u64,
    /// Median latency, microseconds.
    pub p50_us: f64,
    /// 99th-percentile latency, microseconds.
    pub p99_us: f64,
    /// Server CPU time per correct answer, microseconds.
    pub server_cpu_us_per_request: f64,
    /// Load generator (this process) CPU time per correct answer, microseconds.
    pub client_cpu_us_per_request: f64,
    /// The first wrong answer or failure, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

struct ConnResult {
    latencies_us: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

/// Runs `template` against `addr` under `load`; `server` is the server's
/// pid. A correct answer is a 200 of media type `media` (`type/subtype`)
/// whose body holds [`wire::MARKER`] ([`wire::is_correct`]): the media
/// type tells a JSON server's answers apart from an SSE server's, which
/// carry the same result.
pub async fn run(
    addr: SocketAddr,
    path: &str,
    template: Template,
    sessions: Sessions,
    load: Load,
    server: u32,
    media: &'static str,
) -> Result<LoadFigures, String> {
    let template = Arc::new(template);
    let window = load.window(Instant::now());
    let mut tasks = Vec::with_capacity(load.connections);
    // Sessions are opened before the clock starts mattering (warm-up).
    for conn in 0..load.connections {
        let template = template.clone();
        let sessions = sessions.clone();
        let path = path.to_owned();
        tasks.push(tokio::spawn(async move {
            connection(addr, &path, &template, sessions, conn as u64, media, window).await
        }));
    }
    // CPU counters are read at the edges of the measured time.
    tokio::time::sleep_until(window.from.into()).await;
    let (server0, client0) = (cpu_time(Pid::Of(server)), cpu_time(Pid::Current));
    tokio::time::sleep_until(window.end.into()).await;
    let (server1, client1) = (cpu_time(Pid::Of(server)), cpu_time(Pid::Current));
    let mut results = Vec::with_capacity(tasks.len());
    for t in tasks {
        results.push(t.await.map_err(|e| format!("load task failed: {e}"))??);
    }
    let cpu = (
        server1.saturating_sub(server0),
        client1.saturating_sub(client0),
    );
    summarise(results, load.duration, cpu)
}

impl Load {
    /// The measured time of a run started at `start`: from the end of the
    /// warm-up to `duration` later.
    fn window(&self, start: Instant) -> Window {
        let from = start + self.warmup;
        Window {
            from,
            end: from + self.duration,
        }
    }
}

/// The measured time of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Window {
    from: Instant,
    end: Instant,
}

impl Window {
    /// Whether an exchange sent at `sent` and answered at `done` counts:
    /// it lies wholly in the window (its edges included).
    fn holds(&self, sent: Instant, done: Instant) -> bool {
        self.from <= sent && done <= self.end
    }
}

/// The figures of the connections' `results` over `duration`, in which the
/// server and this process spent `cpu` (server, client); an error when no
/// answer was correct.
fn summarise(
    results: Vec<ConnResult>,
    duration: Duration,
    (server_cpu, client_cpu): (Duration, Duration),
) -> Result<LoadFigures, String> {
    let mut all = Vec::new();
    let mut errors = 0;
    let mut first_error = None;
    for r in results {
        all.extend_from_slice(&r.latencies_us);
        errors += r.errors;
        first_error = first_error.or(r.first_error);
    }
    if all.is_empty() {
        return Err(format!(
            "no correct answer in {duration:?} ({errors} errors; first: {})",
            first_error.unwrap_or_default()
        ));
    }
    if let Some(e) = &first_error {
        tracing::warn!("{errors} errors; first: {e}");
    }
    all.sort_unstable();
    let n = all.len() as f64;
    let per = |d: Duration| d.as_secs_f64() * 1e6 / n;
    Ok(LoadFigures {
        requests_per_sec: n / duration.as_secs_f64(),
        requests: all.len() as u64,
        errors,
        p50_us: percentile(&all, 0.50),
        p99_us: percentile(&all, 0.99),
        server_cpu_us_per_request: per(server_cpu),
        client_cpu_us_per_request: per(client_cpu),
        first_error,
    })
}

async fn connection(
    addr: SocketAddr,
    path: &str,
    template: &Template,
    sessions: Sessions,
    conn: u64,
    media: &str,
    window: Window,
) -> Result<ConnResult, String> {
    let mut sender = wire::connect(addr).await?;
    let template = match sessions {
        Sessions::None => template.clone(),
        Sessions::Shared(s) => template.in_session(&s),
        Sessions::PerConnection => {
            let s = wire::open_session(&mut sender, addr, path).await?;
            template.in_session(&s)
        }
    };
    let mut out = ConnResult {
        latencies_us: Vec::with_capacity(1 << 16),
        errors: 0,
        first_error: None,
    };
    // Ids are unique across connections: they may share a session.
    let mut id: u64 = conn << 32;
    loop {
        let sent = Instant::now();
        if sent >= window.end {
            break;
        }
        id += 1;
        let outcome = wire::exchange(&mut sender, template.request(id)).await;
        let done = Instant::now();
        let error = match outcome {
            Ok(a) if a.is_correct(media) => None,
            Ok(a) => Some(format!(
                "{} ({:?}, expected {media}): {}",
                a.status,
                a.content_type,
                String::from_utf8_lossy(&a.body[..a.body.len().min(300)])
            )),
            Err(e) => {
                // A broken connection is replaced, once per failure.
                if let Ok(s) = wire::connect(addr).await {
                    sender = s;
                }
                Some(e)
            }
        };
        if !window.holds(sent, done) {
            continue;
        }
        match error {
            None => out
                .latencies_us
                .push(u32::try_from((done - sent).as_micros()).unwrap_or(u32::MAX)),
            Some(e) => {
                out.errors += 1;
                out.first_error.get_or_insert(e);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use axum::Router;
    use axum::body::Bytes;
    use axum::routing::post;

    use super::*;

    /// A server answering the floor's answer as `media`, that keeps every
    /// JSON-RPC id it was sent.
    async fn answering_as(media: &'static str) -> (SocketAddr, Arc<Mutex<Vec<u64>>>) {
        let ids = Arc::new(Mutex::new(Vec::new()));
        let kept = ids.clone();
        let app = Router::new().route(
            "/mcp",
            post(move |body: Bytes| {
                let request: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
                kept.lock()
                    .unwrap()
                    .push(request["id"].as_u64().expect("an id"));
                async move {
                    (
                        [(http::header::CONTENT_TYPE, media)],
                        super::super::floor::ANSWER,
                    )
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (addr, ids)
    }

    /// Two connections for 200 ms, no warm-up: every exchange but the
    /// last of each connection (answered after the end) lies in the window.
    async fn load(addr: SocketAddr, media: &'static str) -> Result<LoadFigures, String> {
        let load = Load {
            connections: 2,
            duration: Duration::from_millis(200),
            warmup: Duration::ZERO,
        };
        let template = Template::add(addr, "/mcp", None);
        run(
            addr,
            "/mcp",
            template,
            Sessions::None,
            load,
            std::process::id(),
            media,
        )
        .await
    }

    /// Every request has an id of its own, across connections (they may
    /// share a session), and the answers of the media type asked for count:
    /// those in the window, which (without a warm-up) is more than the one
    /// straddling its end on each connection.
    #[tokio::test]
    async fn each_request_has_its_own_id() {
        let (addr, ids) = answering_as("application/json").await;
        let figures = load(addr, "application/json")
            .await
            .expect("correct answers");
        assert!(figures.requests > 2 && figures.errors == 0, "{figures:?}");
        let ids = ids.lock().unwrap().clone();
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len(), "repeated ids");
    }

    /// An answer of another media type is wrong, whatever its body.
    #[tokio::test]
    async fn an_answer_of_another_media_type_is_wrong() {
        let (addr, _) = answering_as("text/event-stream").await;
        let e = load(addr, "application/json")
            .await
            .expect_err("wrong answers");
        assert!(e.contains("expected application/json"), "{e}");
        assert!(
            !e.contains("(0 errors;"),
            "each wrong answer is counted: {e}"
        );
    }

    fn conn(latencies_us: &[u32], errors: u64, first_error: Option<&str>) -> ConnResult {
        ConnResult {
            latencies_us: latencies_us.to_vec(),
            errors,
            first_error: first_error.map(str::to_owned),
        }
    }

    #[test]
    fn the_measured_time_follows_the_warm_up() {
        let load = Load {
            connections: 1,
            duration: Duration::from_secs(5),
            warmup: Duration::from_secs(1),
        };
        let start = Instant::now();
        let window = load.window(start);
        let at = |s: u64| start + Duration::from_millis(s);
        assert_eq!(
            window,
            Window {
                from: at(1_000),
                end: at(6_000)
            }
        );
        // An exchange counts when it lies wholly in the window.
        assert!(window.holds(at(1_000), at(6_000)));
        assert!(window.holds(at(2_000), at(2_001)));
        assert!(!window.holds(at(999), at(2_000)), "sent in the warm-up");
        assert!(
            !window.holds(at(5_999), at(6_001)),
            "answered after the end"
        );
    }

    #[test]
    fn the_connections_are_summed_up() {
        // 200 answers over 2 s from two connections (latencies 1..=200 µs),
        // 3 errors; 1 ms of server and 0.5 ms of client CPU.
        let low: Vec<u32> = (1..=100).collect();
        let high: Vec<u32> = (101..=200).rev().collect();
        let figures = summarise(
            vec![
                conn(&high, 1, None),
                conn(&low, 2, Some("first")),
                conn(&[], 0, Some("second")),
            ],
            Duration::from_secs(2),
            (Duration::from_millis(1), Duration::from_micros(500)),
        )
        .expect("answers");
        assert_eq!(figures.requests_per_sec, 100.0);
        assert_eq!(figures.requests, 200);
        assert_eq!(figures.errors, 3);
        assert_eq!((figures.p50_us, figures.p99_us), (100.0, 198.0));
        assert_eq!(figures.server_cpu_us_per_request, 5.0);
        assert_eq!(figures.client_cpu_us_per_request, 2.5);
        assert_eq!(figures.first_error.as_deref(), Some("first"));
    }

    #[test]
    fn no_correct_answer_is_an_error_naming_the_first_wrong_one() {
        let e = summarise(
            vec![conn(&[], 4, Some("500: oops")), conn(&[], 1, None)],
            Duration::from_secs(1),
            (Duration::ZERO, Duration::ZERO),
        )
        .expect_err("nothing correct");
        assert_eq!(e, "no correct answer in 1s (5 errors; first: 500: oops)");
    }
}
