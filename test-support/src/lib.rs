//! Helpers shared by the workspace's tests (and the compatibility matrix's
//! network drops), so that no test helper exists twice.
//!
//! | module | what it is for |
//! | --- | --- |
//! | [`balancer`] | [`Balancer`]: a round-robin HTTP reverse proxy over several instances, every request to the next one (no stickiness), bodies streamed through |
//! | [`proxy`] | a loopback TCP proxy that cuts every live connection at once (a network drop), counting cuts and connections |
//! | [`server`] | [`TestServer`]: any axum router on 127.0.0.1:0, stopped on drop; [`EngineServer`]: an engine and its handler served so; [`Hits`]: every exchange of a router recorded |
//! | [`handler`] | [`TestHandler`]: one configurable MCP handler (a tool table, method table, counters) and the shared tools |
//! | [`http_sse_server`] | a minimal 2024-11-05 HTTP+SSE server (the deprecated transport), with misbehaving routes |
//! | [`sse`] | [`SseReader`]: reads SSE answers of raw-HTTP tests with the workspace's decoder; whole-body helpers |
//! | [`conformance`] | the store traits' behaviour suites (`EventStore`, `TaskStore`), run against every implementation |
//! | [`fake`] | [`Fake`]: a scriptable fake server for client tests, and the answers it sends (JSON-RPC, HTTP, SSE with faults) |
//! | [`input`] | [`ScriptedInput`]: a client-side input handler answering from a script |
//! | [`client`] | helpers for tests that drive a client: params, a request's events, results, notification descriptions |
//! | [`process`] | child processes: run one to its end with a bound ([`process::run_to_end`]), or keep one running that announces its endpoint ([`process::Listening`]) |
//! | [`redis`] | [`RedisServer`]: a real `redis-server` on a free loopback port in a temp dir, no persistence, stoppable and restartable, stopped on drop |
//! | [`redis_cluster`] | [`RedisCluster`]: a real three-master Redis Cluster from `redis-server` binaries on free loopback ports, no persistence, stopped on drop |
//! | [`tls`] | [`TlsServer`]: any router over HTTPS with a self-signed certificate made at start |
//! | [`trace`] | tracing layers: [`trace::SseEnds`] collects how each SSE stream ended (`end`, `events`), [`trace::Logged`] every event's level and text |
//! | [`wait`] | [`eventually`], [`within`] and the [`WAIT`] bound |
//!
//! The crate depends only on `mcp-transport-core`, so every crate of the
//! workspace can use it as a dev-dependency without a cycle; a suite's
//! engine-specific pieces (the engine, its config, its raw requests) stay
//! in that suite's `tests/` folder as thin wrappers over these helpers.

pub mod balancer;
pub mod client;
pub mod colliding;
pub mod conformance;
pub mod fake;
pub mod handler;
pub mod http_sse_server;
pub mod input;
pub mod json;
pub mod orphan;
pub mod process;
pub mod proxy;
pub mod proxy_record;
pub mod redis;
pub mod redis_cluster;
pub mod server;
pub mod sse;
pub mod tls;
pub mod trace;
pub mod wait;

pub use balancer::Balancer;
pub use fake::Fake;
pub use handler::TestHandler;
pub use input::ScriptedInput;
pub use proxy::Proxy;
pub use redis::RedisServer;
pub use redis_cluster::RedisCluster;
pub use server::{EngineServer, Hits, TestServer};
pub use sse::SseReader;
pub use tls::TlsServer;
pub use wait::{WAIT, eventually, within};
