//! Whether each side of a cell declares tasks, configured and as seen on
//! the wire.
//!
//! The predictions of `long_running_drop` and `task` depend on it: work
//! becomes a task only when the negotiated revision has tasks **and** both
//! sides declare them. The matrix configures the declarations
//! ([`configured`]); the scenarios read what actually went over the wire
//! ([`on_wire`]) and the prediction follows the wire, so that a revision
//! whose tasks land later (2025-11-25's experimental tasks) makes its cells
//! applicable by itself. What was configured must be on the wire: a
//! configured declaration that is missing is a failure, not "not
//! applicable" ([`missing`]).

use mcp_transport_core::ProtocolVersion as V;
use serde_json::Value;

use super::ServerKind;
use super::wire::Exchange;

/// The 2026-07-28 Tasks extension's identifier (SEP-2663).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// The `_meta` key of a 2026-07-28 request's client capabilities.
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// Who declares tasks in one cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    /// The server: 2026-07-28 `server/discover` lists the extension in
    /// `capabilities.extensions`; 2025-11-25 `initialize` answers
    /// `capabilities.tasks.requests.tools.call`.
    pub server: bool,
    /// The client: 2026-07-28 the `tools/call`'s `_meta` client
    /// capabilities list the extension; 2025-11-25 `initialize` carries
    /// `capabilities.tasks` and the `tools/call` is task-augmented
    /// (`params.task`: the requestor's per-request choice, which the
    /// spec leaves to it — "clients MAY invoke the tool as a task or as a
    /// normal request").
    pub client: bool,
}

impl Declared {
    /// Both sides declare tasks.
    pub fn both(self) -> bool {
        self.server && self.client
    }
}

/// Whether `revision` has tasks at all: 2025-11-25's experimental tasks
/// (SEP-1686) and 2026-07-28's Tasks extension (SEP-2663).
pub fn revision_has_tasks(revision: &V) -> bool {
    *revision == V::V2025_11_25 || revision.is_modern()
}

/// What the matrix configures for the task scenarios, and so must see on
/// the wire: on 2026-07-28 the client declares the extension in every row,
/// `s-all` enables it and `s-2026-07-28` does not (so both outcomes of
/// 2026-07-28 are in the matrix). On 2025-11-25 `s-all` serves the
/// experimental tasks (SEP-1686) too, and the client sends the `tasks`
/// capability ([`client_capabilities`]); whether it augments a call is
/// its own choice (it does when the server declares `tools.call` tasks and
/// the tool allows them), so nothing is required of the client there.
pub fn configured(server: ServerKind, revision: &V) -> Declared {
    Declared {
        server: revision_has_tasks(revision) && server.predicted_as() == ServerKind::All,
        client: revision.is_modern(),
    }
}

/// The client capabilities the matrix client sends in the task scenarios:
/// elicitation, the 2025-11-25 `tasks` capability (no task-augmented
/// requests of its own to offer) and the 2026-07-28 extension.
pub fn client_capabilities() -> Value {
    serde_json::json!({
        "elicitation": {},
        "tasks": {},
        "extensions": { TASKS_EXTENSION: {} },
    })
}

fn declares_extension(capabilities: &Value) -> bool {
    capabilities["extensions"]
        .get(TASKS_EXTENSION)
        .is_some_and(|v| !v.is_null())
}

/// What the wire shows each side declared on `revision`.
pub fn on_wire(exchanges: &[Exchange], revision: &V) -> Declared {
    if revision.is_modern() {
        let server = exchanges
            .iter()
            .filter(|e| e.rpc_method().as_deref() == Some("server/discover"))
            .flat_map(Exchange::messages)
            .any(|m| declares_extension(&m["result"]["capabilities"]));
        let client = exchanges
            .iter()
            .filter(|e| e.rpc_method().as_deref() == Some("tools/call"))
            .any(|e| declares_extension(&e.json()["params"]["_meta"][META_CLIENT_CAPABILITIES]));
        return Declared { server, client };
    }
    if *revision != V::V2025_11_25 {
        return Declared::default();
    }
    let inits = || {
        exchanges
            .iter()
            .filter(|e| e.rpc_method().as_deref() == Some("initialize"))
    };
    let server = inits()
        .flat_map(Exchange::messages)
        .any(|m| !m["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"].is_null());
    let augmented = exchanges
        .iter()
        .filter(|e| e.rpc_method().as_deref() == Some("tools/call"))
        .any(|e| e.json()["params"]["task"].is_object());
    let client =
        augmented && inits().any(|e| e.json()["params"]["capabilities"]["tasks"].is_object());
    Declared { server, client }
}

/// A configured declaration the wire does not show, described.
pub fn missing(configured: Declared, seen: Declared) -> Option<String> {
    match (
        configured.server && !seen.server,
        configured.client && !seen.client,
    ) {
        (false, false) => None,
        (true, _) => Some("the server was configured with tasks but does not declare them".into()),
        (_, true) => Some("the client was configured with tasks but does not declare them".into()),
    }
}

/// The task id of a `CreateTaskResult` message: 2026-07-28
/// `{resultType: "task", taskId}`, 2025-11-25 `{task: {taskId}}`.
pub fn created_task(message: &Value) -> Option<String> {
    let r = &message["result"];
    let id = if r["resultType"] == "task" {
        &r["taskId"]
    } else {
        &r["task"]["taskId"]
    };
    id.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::super::test_wire::post;
    use super::*;
    use serde_json::json;

    #[test]
    fn create_task_results_of_both_eras_are_recognized() {
        let modern =
            json!({"id": 1, "result": {"resultType": "task", "taskId": "t1", "status": "working"}});
        let legacy = json!({"id": 1, "result": {"task": {"taskId": "t2", "status": "working"}}});
        let plain = json!({"id": 1, "result": {"content": []}});
        assert_eq!(created_task(&modern).as_deref(), Some("t1"));
        assert_eq!(created_task(&legacy).as_deref(), Some("t2"));
        assert_eq!(created_task(&plain), None);
    }

    #[test]
    fn a_configured_declaration_must_be_seen() {
        let both = Declared {
            server: true,
            client: true,
        };
        assert_eq!(missing(both, both), None);
        assert!(missing(both, Declared::default()).is_some());
        // Declared without being configured (a revision whose tasks landed
        // later) is not a failure: the prediction follows the wire.
        assert_eq!(missing(Declared::default(), both), None);
    }

    #[test]
    fn only_s_all_is_configured_with_tasks() {
        assert!(configured(ServerKind::All, &V::V2026_07_28).both());
        assert!(configured(ServerKind::Cluster, &V::V2026_07_28).both());
        assert!(!configured(ServerKind::S0728, &V::V2026_07_28).server);
        // s-all serves 2025-11-25's experimental tasks; augmenting a call
        // is the client's own choice, so nothing is required of it.
        assert!(configured(ServerKind::All, &V::V2025_11_25).server);
        assert!(!configured(ServerKind::S1125, &V::V2025_11_25).server);
        assert!(!configured(ServerKind::All, &V::V2025_11_25).client);
        assert!(!configured(ServerKind::All, &V::V2025_06_18).server);
        assert!(!configured(ServerKind::All, &V::V2025_06_18).client);
    }

    fn discover(extensions: Value) -> Exchange {
        post(json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover"})).answered_json(
            http::StatusCode::OK,
            &json!({"jsonrpc": "2.0", "id": 0,
                "result": {"capabilities": {"extensions": extensions}}}),
        )
    }

    fn modern_call(extensions: Value) -> Exchange {
        post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "slow", "_meta": {META_CLIENT_CAPABILITIES: {"extensions": extensions}}}}))
    }

    #[test]
    fn the_wire_shows_each_side_s_2026_07_28_declaration() {
        let on = json!({ TASKS_EXTENSION: {} });
        let both = on_wire(
            &[discover(on.clone()), modern_call(on.clone())],
            &V::V2026_07_28,
        );
        assert_eq!(
            both,
            Declared {
                server: true,
                client: true
            }
        );
        let server_only = on_wire(
            &[discover(on.clone()), modern_call(json!({}))],
            &V::V2026_07_28,
        );
        assert_eq!(
            server_only,
            Declared {
                server: true,
                client: false
            }
        );
        // A null entry is no declaration; only `server/discover` and
        // `tools/call` are read.
        let null = json!({ TASKS_EXTENSION: null });
        assert_eq!(
            on_wire(
                &[discover(null.clone()), modern_call(null)],
                &V::V2026_07_28
            ),
            Declared::default()
        );
        let mut other = discover(on.clone());
        other.body = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
            .to_string()
            .into();
        let mut listed = modern_call(on.clone());
        listed.body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": {META_CLIENT_CAPABILITIES: {"extensions": on}}}})
        .to_string()
        .into();
        assert_eq!(
            on_wire(&[other, listed], &V::V2026_07_28),
            Declared::default()
        );
    }

    fn initialize(client_tasks: Value, server_tasks: Value) -> Exchange {
        post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"capabilities": {"tasks": client_tasks}}}))
        .answered_sse(&format!(
            "id: 0\ndata: {}\n\n",
            json!({"jsonrpc": "2.0", "id": 0, "result": {"capabilities": {"tasks": server_tasks}}})
        ))
    }

    fn legacy_call(task: Value) -> Exchange {
        post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "slow", "task": task}}))
    }

    #[test]
    fn the_wire_shows_each_side_s_2025_11_25_declaration() {
        let call = json!({"requests": {"tools": {"call": {}}}});
        let wire = [
            initialize(json!({}), call.clone()),
            legacy_call(json!({"ttl": 1})),
        ];
        let both = Declared {
            server: true,
            client: true,
        };
        assert_eq!(on_wire(&wire, &V::V2025_11_25), both);
        // Only 2025-11-25 has the experimental tasks.
        assert_eq!(on_wire(&wire, &V::V2025_06_18), Declared::default());
        // The server must declare task-augmented `tools/call`, not only
        // some tasks.
        let list_only = json!({"requests": {"tasks": {"list": {}}}});
        let wire = [initialize(json!({}), list_only), legacy_call(json!({}))];
        assert_eq!(
            on_wire(&wire, &V::V2025_11_25),
            Declared {
                server: false,
                client: true
            }
        );
        // The client declares by both its capability and an augmented call.
        let unaugmented = [
            initialize(json!({}), call.clone()),
            legacy_call(Value::Null),
        ];
        let uncapable = [initialize(Value::Null, call), legacy_call(json!({}))];
        for wire in [unaugmented, uncapable] {
            assert_eq!(
                on_wire(&wire, &V::V2025_11_25),
                Declared {
                    server: true,
                    client: false
                }
            );
        }
    }

    #[test]
    fn a_missing_declaration_names_its_side() {
        let server = Declared {
            server: true,
            client: false,
        };
        let client = Declared {
            server: false,
            client: true,
        };
        assert!(missing(server, client).unwrap().contains("the server"));
        assert!(missing(client, server).unwrap().contains("the client"));
        assert_eq!(missing(client, client), None);
    }

    #[test]
    fn tasks_are_on_2025_11_25_and_2026_07_28_only() {
        assert!(revision_has_tasks(&V::V2025_11_25));
        assert!(revision_has_tasks(&V::V2026_07_28));
        assert!(!revision_has_tasks(&V::V2025_06_18));
        assert!(!revision_has_tasks(&V::V2025_03_26));
    }
}
