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
use std::pin::Pin;
use std::sync::Arc;

use axum::body::Body;
use futures_util::future::Either;
use http::StatusCode;
use http::request::Parts;
use mcp_http_edge::server::checks::check_post_media;
use mcp_http_edge::server::read_body_unless_parsed;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::{Execution, LogLevel};
use mcp_transport_core::json_members::ObjectIndex;
use mcp_transport_core::jsonrpc::{
    self, ErrorObject, Message, Notification, Parsed, Request, RequestId,
};
use mcp_transport_core::negotiation::{UnsupportedVersionData, modern_server_check};
use mcp_transport_core::request_head::RequestHead;
use serde_json::Value;
use serde_json::value::RawValue;

use super::catalog::ToolHeaders;
use super::reply::{self, HttpResponse};
use super::request::{self, Prepared};
use super::schema::ParamHeader;
use super::validate::{self, Params, Rejection, RequestMeta};
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
    parsed: Option<Parsed>,
    body: Body,
) -> impl Future<Output = HttpResponse> + Send + '_ {
    async move {
        if let Err(r) = check_post_media(&parts.headers) {
            return r.response();
        }
        // Parsed already by the dispatcher in front (`mcp_negotiate`), handed
        // over as an argument (the body then held to this engine's limit,
        // not read again) or in the extensions, or parsed here.
        let limit = shared.config.http.max_body_bytes;
        let bytes =
            match read_body_unless_parsed(body, &parts.headers, limit, parsed.as_ref()).await {
                Ok(b) => b,
                Err(r) => return r.response(),
            };
        let parsed = parsed.or_else(|| parts.extensions.remove::<Message>().map(Parsed::from));
        let (message, params_index) = match parsed.map_or_else(|| jsonrpc::parse_single(&bytes), Ok)
        {
            Ok(p) => p.into_indexed(),
            Err(e) => return reply::body_error(&e),
        };
        match message {
            Message::Request(req) => on_request(shared, parts, req, params_index).await,
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
/// Not an `async fn`, and no `async` block around the checks: they never
/// wait (but for a `tools/call` whose tool the header catalog does not
/// know yet, a rare path), so they run when this is called ([`checked`]),
/// and the future returned is the answer's alone — the handler's
/// ([`request::serve`]), one ready, or a boxed one for the rare methods.
/// As one `async` block, the request's future kept the checks' locals
/// (the HTTP parts, the request, `_meta`, the MRTR binding: ~700 bytes)
/// beside the handler's, and every request's future was that large
/// (docs/PERFORMANCE.md, session 18).
fn on_request(
    shared: &Arc<Shared>,
    parts: Parts,
    req: Request,
    params_index: Option<ObjectIndex>,
) -> impl Future<Output = HttpResponse> + Send + '_ {
    match checked(shared, parts, req, params_index) {
        Next::Done(r) => Either::Left(std::future::ready(r)),
        Next::Serve(prepared) => Either::Right(Either::Left(request::serve(shared, prepared))),
        Next::Rare(f) => Either::Right(Either::Right(f)),
    }
}

/// What the checks of a request decided.
#[expect(
    clippy::large_enum_variant,
    reason = "made once a request and taken apart at once; a box for `Prepared` would be an allocation a request"
)]
enum Next<'a> {
    /// Answered: an error, `initialize`, `server/discover`.
    Done(HttpResponse),
    /// Passed: the handler answers, in this POST.
    Serve(Prepared),
    /// Anything else (a listen stream, a task, the task methods, a tool
    /// the header catalog must fetch first): rare, so boxed.
    Rare(Pin<Box<dyn Future<Output = HttpResponse> + Send + 'a>>),
}

impl Next<'_> {
    /// The answer, from within a rare path's future.
    async fn answer(self, shared: &Arc<Shared>) -> HttpResponse {
        match self {
            Next::Done(r) => r,
            Next::Serve(prepared) => request::serve(shared, prepared).await,
            Next::Rare(f) => f.await,
        }
    }
}

/// A request past the checks that need nothing but itself (see
/// [`checked`]).
struct Checked {
    parts: Parts,
    req: Request,
    id: RequestId,
    params: Params,
    meta: RequestMeta,
    version: ProtocolVersion,
    log_level: Option<LogLevel>,
    principal: Option<String>,
    /// How a `tools/call`'s handler wants to run (`Immediate` for any
    /// other method, and without the Tasks extension).
    execution: Execution,
}

/// The `Mcp-Param-*` headers a `tools/call`'s tool defines.
enum Specs {
    /// Not a `tools/call`: none.
    None,
    /// Known.
    Known(ToolHeaders),
    /// The catalog must fetch the tools first (this tool's name).
    Fetch(String),
}

/// The checks, in the module docs' order (steps 8–17), and where the
/// request goes.
fn checked(
    shared: &Arc<Shared>,
    parts: Parts,
    req: Request,
    params_index: Option<ObjectIndex>,
) -> Next<'_> {
    let (c, specs) = match head_checks(shared, parts, req, params_index) {
        Ok(c) => c,
        Err(next) => return next,
    };
    match specs {
        Specs::None => finish(shared, c, &[]),
        Specs::Known(specs) => finish(shared, c, &specs),
        Specs::Fetch(name) => Next::Rare(Box::pin(async move {
            let specs = shared
                .catalog
                .headers_for(&shared.handler, &c.version, &name)
                .await;
            finish(shared, c, &specs).answer(shared).await
        })),
    }
}

/// Steps 8–15 (and 16's catalog lookup): what needs only the request.
/// `Err` is the request's answer or, for `subscriptions/listen` and the
/// Tasks extension's methods, its future.
#[expect(
    clippy::result_large_err,
    reason = "the checks' outcome, used at once by `checked`"
)]
// Inlined into `checked` (as `finish`): called, each moved the ~600 bytes
// of `Checked` once more, +97 instructions a request (measured,
// docs/PERFORMANCE.md, session 18).
#[inline(always)]
fn head_checks(
    shared: &Arc<Shared>,
    parts: Parts,
    req: Request,
    params_index: Option<ObjectIndex>,
) -> Result<(Checked, Specs), Next<'_>> {
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
        return Err(Next::Done(initialize(shared, &req)));
    }
    let id = req.id.clone();
    let params = Params::indexed(req.params.as_deref(), params_index);
    let meta = validate::read_meta(&params).map_err(|r| Next::Done(reject(&id, r)))?;
    // The headers the body is checked against, read in one pass.
    let mcp_headers = validate::McpHeaders::read(&parts.headers);
    if let Err(r) = validate::check_version_header(&mcp_headers, meta.version.as_str()) {
        return Err(Next::Done(reject(&id, r)));
    }
    let version = meta.version.clone();
    if let Err(data) = modern_server_check(&version, &shared.served) {
        return Err(Next::Done(unsupported(shared, &id, data.requested)));
    }
    if let Err(r) = validate::check_method_header(&mcp_headers, &req.method) {
        return Err(Next::Done(reject(&id, r)));
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
    // The body's value `Mcp-Name` was checked against (a `tools/call`'s
    // tool name, used below).
    let named = if shared.tasks.is_some() || !extension_method {
        validate::check_name_header(&mcp_headers, &req.method, &params)
            .map_err(|r| Next::Done(reject(&id, r)))?
    } else {
        None
    };
    let log_level = meta.log_level().map_err(|r| Next::Done(reject(&id, r)))?;
    if let Some(why) = removed(&req.method) {
        return Err(Next::Done(reply::error(
            StatusCode::NOT_FOUND,
            Some(id),
            ErrorObject::new(
                jsonrpc::METHOD_NOT_FOUND,
                format!("Method not found: {} ({why})", req.method),
            ),
        )));
    }
    let principal = shared.config.principal.as_ref().and_then(|f| f(&parts));
    match req.method.as_str() {
        "server/discover" => return Err(Next::Done(discover::respond(shared, id))),
        "subscriptions/listen" => {
            return Err(Next::Rare(Box::pin(async move {
                listen::open(
                    shared,
                    id,
                    &params,
                    &meta.capabilities,
                    principal.as_deref(),
                )
                .await
            })));
        }
        "tasks/get" | "tasks/update" | "tasks/cancel" if shared.tasks.is_some() => {
            return Err(Next::Rare(Box::pin(async move {
                let Some(t) = shared.tasks.as_ref() else {
                    unreachable!("guarded")
                };
                tasks::method(
                    shared,
                    t,
                    id,
                    &req.method,
                    &params,
                    &meta.capabilities,
                    principal.as_deref(),
                )
                .await
            })));
        }
        _ => {}
    }
    // A `tools/call`'s tool, read once (with `Mcp-Name`, which a
    // `tools/call` must carry): its `Mcp-Param-*` headers and whether it
    // may run as a task are decided by it. Whether it may is only asked
    // when it can matter: without the Tasks extension every call is served
    // in its POST.
    let (specs, execution) = match named.filter(|_| req.method == "tools/call") {
        Some(name) => {
            let specs = match shared.catalog.cached(&name) {
                Some(specs) => Specs::Known(specs),
                None => Specs::Fetch(name.clone().into_owned()),
            };
            let execution = match shared.tasks {
                Some(_) => shared.handler.tool_execution(&name, &req),
                None => Execution::Immediate,
            };
            (specs, execution)
        }
        None => (Specs::None, Execution::Immediate),
    };
    let c = Checked {
        parts,
        req,
        id,
        params,
        meta,
        version,
        log_level,
        principal,
        execution,
    };
    Ok((c, specs))
}

/// Steps 16–17 and where a request that passed them goes: this POST's
/// handler, or a task.
#[inline(always)] // see `head_checks`
fn finish<'a>(shared: &'a Arc<Shared>, c: Checked, specs: &[ParamHeader]) -> Next<'a> {
    let Checked {
        parts,
        req,
        id,
        params,
        meta,
        version,
        log_level,
        principal,
        execution,
    } = c;
    if !specs.is_empty() {
        let arguments = params.parsed::<Value>("arguments");
        if let Err(r) = validate::check_param_headers(&parts.headers, specs, arguments.as_ref()) {
            return Next::Done(reject(&id, r));
        }
    }
    // MRTR (*Multi Round-Trip Requests*, "Server Requirements").
    let input_responses = match params.get("inputResponses") {
        None => None,
        Some(raw) => match serde_json::from_str::<BTreeMap<String, Box<RawValue>>>(raw) {
            Ok(m) => Some(m),
            Err(_) => {
                return Next::Done(reject(
                    &id,
                    Rejection::params(
                        "Invalid params: inputResponses must be an object mapping the keys of the server's inputRequests to their results",
                    ),
                ));
            }
        },
    };
    let token = match params.get("requestState") {
        None => None,
        Some(raw) => match serde_json::from_str::<String>(raw) {
            Ok(t) => Some(t),
            Err(_) => {
                return Next::Done(reject(
                    &id,
                    Rejection::params("Invalid params: requestState must be a string"),
                ));
            }
        },
    };
    let mut binding = mrtr::input_method(&req.method)
        .map(|method| mrtr::BindingSource::new(method, params.clone(), principal.clone()));
    let opened = match (token, &mut binding) {
        (None, _) => None,
        (Some(_), None) => {
            return Next::Done(reject(
                &id,
                Rejection::params(format!(
                    "Invalid params: requestState on {}, which never receives an InputRequiredResult (only tools/call, prompts/get and resources/read do)",
                    req.method
                )),
            ));
        }
        (Some(token), Some(binding)) => {
            match shared
                .sealer
                .open(&token, binding.binding(), mrtr::now_ms())
            {
                Ok(o) => Some(o),
                Err(e) => return Next::Done(reject(&id, Rejection::params(e.to_string()))),
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
        (_, Some(t)) if as_task => {
            Next::Rare(Box::pin(tasks::start(shared, t, prepared, principal)))
        }
        (Execution::TaskOnly, Some(_)) => Next::Done(tasks::missing_extension(id, "this tool")),
        _ => Next::Serve(prepared),
    }
}
