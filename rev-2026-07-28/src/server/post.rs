//! `POST`: one JSON-RPC message per request (*Streamable HTTP*, "Sending
//! Messages"), checked in this order — each failure is answered with its
//! status and a JSON-RPC error, and nothing is kept:
//!
//! | # | check | failure |
//! | --- | --- | --- |
//! | 1 | `Accept` lists `application/json` and `text/event-stream` | 406, `-32600`, no id |
//! | 2 | `Content-Type: application/json` | 415, `-32600`, no id |
//! | 3 | body at most `max_body_bytes` | 413, `-32600`, no id |
//! | 4 | the body is JSON | 400, `-32700`, no id |
//! | 5 | it is one conforming message, not a batch | 400, `-32600`, no id |
//! | 6 | a notification is accepted as is | 202 |
//! | 7 | a response is refused (this revision has no server-to-client requests) | 400, `-32600` |
//! | 8 | `initialize` is answered with the versions this server speaks | 400, `-32022` |
//! | 9 | `_meta` carries `protocolVersion` and `clientCapabilities` | 400, `-32602` |
//! | 10 | `MCP-Protocol-Version` is present and equals the `_meta` version | 400, `-32020` |
//! | 11 | that version is served | 400, `-32022` with `{supported, requested}` |
//! | 12 | `Mcp-Method` equals the method | 400, `-32020` |
//! | 13 | `Mcp-Name` equals `params.name`/`params.uri` (`tools/call`, `prompts/get`, `resources/read`) or `params.taskId` (`tasks/get`, `tasks/update`, `tasks/cancel`) | 400, `-32020` (`-32602` if the body lacks it) |
//! | 14 | `io.modelcontextprotocol/logLevel`, when present, is a log level | 400, `-32602` |
//! | 15 | methods this revision removed | 404, `-32601` |
//! | 16 | `tools/call`: the tool's `Mcp-Param-*` headers | 400, `-32020` |
//! | 17 | MRTR retry: a `requestState` must verify (`inputResponses` without one reach the handler unverified) | 400, `-32602` |
//!
//! The version is checked (11) before the other headers because a version
//! this server does not speak may define other header rules; the header
//! version is compared with the body (10) first, so a disagreement is
//! reported as such rather than as an unsupported version.
//!
//! `server/discover`, `subscriptions/listen` and (with the Tasks extension
//! configured) `tasks/get`, `tasks/update` and `tasks/cancel` are then
//! answered by the transport; a `tools/call` the handler calls long-running
//! becomes a task when the request declares the extension ([`tasks`]);
//! everything else goes to the handler ([`request::serve`]).
//!
//! ## Notifications
//!
//! "This revision of the core protocol defines no client-to-server
//! notifications over Streamable HTTP" and "header requirements for
//! notification POSTs are not defined by this revision" (*Streamable HTTP*,
//! "Sending Messages", Note). A notification POST is therefore accepted with
//! `202` ("If the server accepts it, the server MUST return HTTP status code
//! `202 Accepted` with no body") without header checks:
//! `notifications/cancelled` and `notifications/initialized` are ignored
//! (closing the stream is the cancellation; there is no handshake), anything
//! else (an extension's notification) is passed to `Handler::notification`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use http::StatusCode;
use http::request::Parts;
use mcp_http_edge::server::checks::check_post_media;
use mcp_http_edge::server::read_body;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::Execution;
use mcp_transport_core::jsonrpc::{self, ErrorObject, Message, Notification, Request, RequestId};
use mcp_transport_core::negotiation::{UnsupportedVersionData, modern_server_check};
use mcp_transport_core::request_head::RequestHead;
use serde_json::Value;
use serde_json::value::RawValue;

use super::reply::{self, HttpResponse};
use super::request::{self, Prepared};
use super::validate::{self, Params, Rejection};
use super::{Shared, discover, listen, mrtr, tasks};

/// Handles one POST.
///
/// Not an `async fn`: its arguments are the future's own fields, used in
/// place (an `async fn` copies each into a local of its own, which doubled
/// `parts` in the future and copied it once more per request).
#[expect(
    clippy::manual_async_fn,
    reason = "arguments used in place: an async fn copies each into a local of its future"
)]
pub(crate) fn post(
    shared: &Arc<Shared>,
    mut parts: Parts,
    parsed: Option<Message>,
    body: Body,
) -> impl Future<Output = HttpResponse> + Send + '_ {
    async move {
        if let Err(r) = check_post_media(&parts.headers) {
            return r.response();
        }
        let bytes = match read_body(body, &parts.headers, shared.config.http.max_body_bytes).await {
            Ok(b) => b,
            Err(r) => return r.response(),
        };
        // Parsed already by the dispatcher in front (`mcp_negotiate`), handed
        // over as an argument or in the extensions, or parsed here.
        let parsed = parsed.or_else(|| parts.extensions.remove::<Message>());
        let message = match parsed.map_or_else(
            || jsonrpc::parse_body(&bytes, false),
            |m| Ok(jsonrpc::Body::Single(m)),
        ) {
            Ok(jsonrpc::Body::Single(m)) => m,
            Ok(jsonrpc::Body::Batch(_)) => {
                // Not reachable with `allow_batch = false`; kept total.
                return reply::body_error(&jsonrpc::BodyError::BatchNotAllowed);
            }
            Err(e) => return reply::body_error(&e),
        };
        match message {
            Message::Request(req) => on_request(shared, parts, req).await,
            Message::Notification(n) => {
                on_notification(shared, n).await;
                reply::accepted()
            }
            Message::Response(_) => reply::invalid(
                StatusCode::BAD_REQUEST,
                "Invalid Request: clients must not send JSON-RPC responses; in protocol revision 2026-07-28 servers send no requests (input is requested with InputRequiredResult)",
            ),
        }
    }
}

async fn on_notification(shared: &Shared, n: Notification) {
    match n.method.as_str() {
        "notifications/cancelled" | "notifications/initialized" => {
            tracing::debug!(method = %n.method, "notification has no meaning on 2026-07-28 Streamable HTTP; ignored");
        }
        _ => shared.handler.notification(n).await,
    }
}

/// 400 with the rejection's code, echoing the id.
fn reject(id: &RequestId, r: Rejection) -> HttpResponse {
    reply::error(
        StatusCode::BAD_REQUEST,
        Some(id.clone()),
        ErrorObject::new(r.code, r.message),
    )
}

/// `-32022` with `{supported, requested}`.
fn unsupported(shared: &Shared, id: &RequestId, requested: ProtocolVersion) -> HttpResponse {
    let data = UnsupportedVersionData {
        supported: shared.advertised.clone(),
        requested,
    };
    reply::error(StatusCode::BAD_REQUEST, Some(id.clone()), data.to_error())
}

/// The answer to `initialize` (*Versioning*, "Backward Compatibility with
/// Initialization-Based Versions": "A server that supports only modern
/// versions SHOULD name the protocol versions it supports in any error it
/// returns to an `initialize` request"). It is an
/// `UnsupportedProtocolVersionError` for the version `initialize` asked for,
/// with status 400 (the compatibility matrix: the legacy client's request
/// "is rejected per server validation with `400 Bad Request`").
fn initialize(shared: &Shared, req: &Request) -> HttpResponse {
    let params = Params::parse(req.params.as_deref());
    let requested = params
        .parsed::<String>("protocolVersion")
        .unwrap_or_default();
    let mut error = UnsupportedVersionData {
        supported: shared.advertised.clone(),
        requested: ProtocolVersion::parse(&requested),
    }
    .to_error();
    error.message = format!(
        "Unsupported protocol version: this endpoint speaks the stateless protocol (no initialize handshake); supported protocol versions: {} (initialize asked for {})",
        mcp_transport_core::version::list(&shared.advertised),
        if requested.is_empty() {
            "no version"
        } else {
            &requested
        },
    );
    reply::error(StatusCode::BAD_REQUEST, Some(req.id.clone()), error)
}

/// Methods this revision removed, with what replaces them.
fn removed(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => {
            "initialize was removed in 2026-07-28: there is no handshake; every request carries its version and capabilities in _meta (call server/discover to learn the supported versions)"
        }
        "ping" => "ping was removed in 2026-07-28; any request shows the server is alive",
        "logging/setLevel" => {
            "logging/setLevel was removed in 2026-07-28; set _meta io.modelcontextprotocol/logLevel on each request"
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            "resource subscriptions were replaced in 2026-07-28 by subscriptions/listen with a resourceSubscriptions filter"
        }
        _ => return None,
    })
}

/// A request (its HTTP parts end up in the handler's
/// `RequestContext::http`, their extensions moved, not cloned).
///
/// Not an `async fn`, as [`post`].
#[expect(
    clippy::manual_async_fn,
    reason = "arguments used in place: an async fn copies each into a local of its future"
)]
fn on_request(
    shared: &Arc<Shared>,
    parts: Parts,
    req: Request,
) -> impl Future<Output = HttpResponse> + Send + '_ {
    async move {
        // A legacy client's `initialize` (no per-request metadata) gets the
        // versions named; one that carries modern `_meta` is a modern request
        // for a method this revision removed (404 below).
        // (`_meta` is read here for `initialize` alone: every other request
        // pays for one parse of its params, below.)
        if req.method == "initialize"
            && !req
                .meta()
                .is_some_and(|m| m.contains_key(crate::headers::META_PROTOCOL_VERSION))
        {
            return initialize(shared, &req);
        }
        let id = req.id.clone();
        let params = Params::parse(req.params.as_deref());
        let meta = match validate::read_meta(&params) {
            Ok(m) => m,
            Err(r) => return reject(&id, r),
        };
        // The headers the body is checked against, read in one pass; the
        // block ends their borrow of `parts` before any await.
        let (version, named) = {
            let mcp_headers = validate::McpHeaders::read(&parts.headers);
            if let Err(r) = validate::check_version_header(&mcp_headers, meta.version.as_str()) {
                return reject(&id, r);
            }
            let version = meta.version.clone();
            if let Err(data) = modern_server_check(&version, &shared.served) {
                return unsupported(shared, &id, data.requested);
            }
            if let Err(r) = validate::check_method_header(&mcp_headers, &req.method) {
                return reject(&id, r);
            }
            // `Mcp-Name: <taskId>` on `tasks/*` is the Tasks extension's rule
            // (*Tasks*: "When `tasks/get`, `tasks/update`, or `tasks/cancel` is sent
            // over the Streamable HTTP transport, the client MUST set the
            // `Mcp-Name` header"); the core spec names only `tools/call`,
            // `resources/read` and `prompts/get`. Without the extension those
            // methods do not exist here, so they get `-32601`, not `-32020`.
            let extension_method = matches!(
                req.method.as_str(),
                "tasks/get" | "tasks/update" | "tasks/cancel"
            );
            // The body's value `Mcp-Name` was checked against (a
            // `tools/call`'s tool name, used below).
            let named = if shared.tasks.is_some() || !extension_method {
                match validate::check_name_header(&mcp_headers, &req.method, &params) {
                    Ok(named) => named,
                    Err(r) => return reject(&id, r),
                }
            } else {
                None
            };
            (version, named)
        };
        let log_level = match meta.log_level() {
            Ok(l) => l,
            Err(r) => return reject(&id, r),
        };
        if let Some(why) = removed(&req.method) {
            return reply::error(
                StatusCode::NOT_FOUND,
                Some(id),
                ErrorObject::new(
                    jsonrpc::METHOD_NOT_FOUND,
                    format!("Method not found: {} ({why})", req.method),
                ),
            );
        }
        let principal = shared.config.principal.as_ref().and_then(|f| f(&parts));
        // A `tools/call`'s tool, read once (with `Mcp-Name`, which a
        // `tools/call` must carry): its `Mcp-Param-*` headers and whether it
        // may run as a task are decided by it.
        let tool_name = named.filter(|_| req.method == "tools/call");
        match req.method.as_str() {
            "server/discover" => return discover::respond(shared, id),
            "subscriptions/listen" => {
                // Boxed, as the task methods below: rare paths whose futures
                // would otherwise size every request's future.
                return Box::pin(listen::open(
                    shared,
                    id,
                    &params,
                    &meta.capabilities,
                    principal.as_deref(),
                ))
                .await;
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" if shared.tasks.is_some() => {
                let Some(t) = shared.tasks.as_ref() else {
                    unreachable!("guarded")
                };
                return Box::pin(tasks::method(
                    shared,
                    t,
                    id,
                    &req.method,
                    &params,
                    &meta.capabilities,
                    principal.as_deref(),
                ))
                .await;
            }
            "tools/call" => {
                let name = tool_name.as_deref().unwrap_or_default();
                let specs = shared
                    .catalog
                    .headers_for(&shared.handler, &version, name)
                    .await;
                if !specs.is_empty() {
                    let arguments = params.parsed::<Value>("arguments");
                    if let Err(r) =
                        validate::check_param_headers(&parts.headers, &specs, arguments.as_ref())
                    {
                        return reject(&id, r);
                    }
                }
            }
            _ => {}
        }

        // Only asked when it can matter: without the Tasks extension every
        // call is served in its POST.
        let execution = match (&tool_name, &shared.tasks) {
            (Some(name), Some(_)) => shared.handler.tool_execution(name, &req),
            _ => Execution::Immediate,
        };
        // It borrows `params`, which the MRTR binding below takes.
        drop(tool_name);

        // MRTR (*Multi Round-Trip Requests*, "Server Requirements").
        let input_responses = match params.get("inputResponses") {
            None => None,
            Some(raw) => match serde_json::from_str::<BTreeMap<String, Box<RawValue>>>(raw) {
                Ok(m) => Some(m),
                Err(_) => {
                    return reject(
                        &id,
                        Rejection::params(
                            "Invalid params: inputResponses must be an object mapping the keys of the server's inputRequests to their results",
                        ),
                    );
                }
            },
        };
        let token = match params.get("requestState") {
            None => None,
            Some(raw) => match serde_json::from_str::<String>(raw) {
                Ok(t) => Some(t),
                Err(_) => {
                    return reject(
                        &id,
                        Rejection::params("Invalid params: requestState must be a string"),
                    );
                }
            },
        };
        let mut binding = mrtr::input_method(&req.method)
            .map(|method| mrtr::BindingSource::new(method, params.clone(), principal.clone()));
        let opened = match (token, &mut binding) {
            (None, _) => None,
            (Some(_), None) => {
                return reject(
                    &id,
                    Rejection::params(format!(
                        "Invalid params: requestState on {}, which never receives an InputRequiredResult (only tools/call, prompts/get and resources/read do)",
                        req.method
                    )),
                );
            }
            (Some(token), Some(binding)) => {
                match shared
                    .sealer
                    .open(&token, binding.binding(), mrtr::now_ms())
                {
                    Ok(o) => Some(o),
                    Err(e) => return reject(&id, Rejection::params(e.to_string())),
                }
            }
        };
        // `inputResponses` without a `requestState` reach the handler as
        // unverified input: the spec lets an InputRequiredResult carry no
        // `requestState` ("the client MUST NOT include one in the retry"), and
        // inputResponses are client-controlled either way; the handler validates
        // them, re-asks for what is missing, and ignores what it never asked for.
        let declared = tasks::wire::declared(&meta.capabilities);
        let as_task = matches!(
            (execution, shared.tasks.is_some()),
            (Execution::MayBeLong | Execution::TaskOnly, true)
        ) && declared;
        // A task outlives its POST: its head is copied into one small buffer.
        // Any other request is answered while its exchange lasts, so its
        // headers are kept as received (no copy).
        let head = if as_task {
            RequestHead::new(parts)
        } else {
            RequestHead::as_received(parts)
        };
        let prepared = Prepared {
            request: req,
            params,
            version,
            meta,
            log_level,
            binding,
            opened,
            input_responses,
            http: Some(Arc::new(head)),
        };
        // Long-running work (*Tasks*, "Capability Negotiation"): a task only
        // for a request that declares the extension; `-32021` naming it when
        // the handler can only run as a task.
        match (execution, shared.tasks.as_ref()) {
            (_, Some(t)) if as_task => Box::pin(tasks::start(shared, t, prepared, principal)).await,
            (Execution::TaskOnly, Some(_)) => tasks::missing_extension(id, "this tool"),
            _ => request::serve(shared, prepared).await,
        }
    }
}
