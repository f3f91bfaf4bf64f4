//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the
//! 2026-07-28 server.
//!
//! * **Creation** ([`start`]): a `tools/call` whose handler says
//!   [`Execution::MayBeLong`] or [`Execution::TaskOnly`], from a request
//!   whose `_meta` client capabilities declare the extension ("A server
//!   MUST NOT return `CreateTaskResult` to a client that did not include the
//!   extension capability on its request, regardless of prior
//!   declarations"), becomes a task: its id is 16 bytes from the thread
//!   CSPRNG, the task is stored in the [`TaskStore`] *before* the
//!   `CreateTaskResult` is sent ("MUST NOT return `CreateTaskResult` until
//!   the task is durably created"), and the handler runs in a worker that
//!   outlives the HTTP exchange (closing the connection cancels nothing).
//!   A `TaskOnly` call without the declaration is `-32021` naming the
//!   extension (see `post`).
//! * **`tasks/get`, `tasks/update`, `tasks/cancel`** ([`method`]): `-32021`
//!   when the request does not declare the extension ("MUST return this
//!   error for non-declaring clients issuing `tasks/get`, `tasks/update`,
//!   and `tasks/cancel`"); `-32602` for an unknown, foreign or expired task
//!   ("Invalid or nonexistent `taskId`: `-32602`"); `Mcp-Name` must equal
//!   `params.taskId` (checked with the other routing headers, `-32020`).
//!   Update and cancel answer an empty `{resultType: "complete"}`; cancel
//!   of an ended task is the same ack. Cancellation never uses
//!   `notifications/cancelled`: it ends the task in the store and fires
//!   the worker's cancellation token.
//! * **Input inside a task** (`worker`): the handler's
//!   [`Outcome::InputRequired`] becomes the task's `inputRequests` (status
//!   `input_required`), under keys unique for the task's life; `tasks/update`
//!   delivers `inputResponses`, and when every outstanding key is answered
//!   the handler is called again with them, exactly as in the MRTR loop.
//! * **`notifications/tasks`** go to `subscriptions/listen` streams whose
//!   `notifications.taskIds` named the task (see `listen`), at every status
//!   change.
//! * **Scope**: a task is created in the scope of the request's principal
//!   ([`ModernConfig::principal`](super::ModernConfig::principal)); other
//!   principals get "not found".
//!
//! What is process-local: the worker, its cancellation token and its
//! wake-up. The state is the store's.
//!
//! [`Execution::MayBeLong`]: mcp_transport_core::handler::Execution::MayBeLong
//! [`Execution::TaskOnly`]: mcp_transport_core::handler::Execution::TaskOnly
//! [`Outcome::InputRequired`]: mcp_transport_core::handler::Outcome::InputRequired
//! [`TaskStore`]: mcp_transport_core::task_store::TaskStore

pub(crate) mod wire;
mod worker;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::StatusCode;
use mcp_transport_core::admission;
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::jsonrpc::{
    self, ErrorObject, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, RequestId,
};
use mcp_transport_core::task_store::{InputWake, NewTask, TaskRecord, TaskStoreError, liveness};
use rand::RngCore;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Shared;
use super::config::TasksConfig;
use super::mrtr::now_ms;
use super::reply::{self, HttpResponse};
use super::request::Prepared;
use super::validate::Params;

/// A running worker, as the process that runs it knows it.
#[derive(Clone)]
struct Running {
    cancel: CancellationToken,
    wake: Arc<InputWake>,
}

/// The extension's state on one server: its settings and the workers
/// running here.
pub(crate) struct Tasks {
    pub config: TasksConfig,
    running: Mutex<HashMap<String, Running>>,
}

impl Tasks {
    pub fn new(config: TasksConfig) -> Self {
        Tasks {
            config,
            running: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn running(&self, id: &str) -> Option<Running> {
        self.lock().get(id).cloned()
    }

    /// The number of task workers running in this process.
    pub fn running_count(&self) -> usize {
        self.lock().len()
    }
}

/// A fresh task id: 128 bits from the thread CSPRNG (ChaCha, seeded from
/// the OS), URL-safe Base64 so it is a plain `Mcp-Name` value.
fn mint_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The `-32021` naming the extension.
pub(crate) fn missing_extension(id: RequestId, what: &str) -> HttpResponse {
    reply::error(
        StatusCode::BAD_REQUEST,
        Some(id),
        ErrorObject::new(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            format!(
                "Missing required client capability: {what} needs the {} extension, which the request's _meta io.modelcontextprotocol/clientCapabilities.extensions does not declare",
                wire::EXTENSION
            ),
        )
        .with_data(&wire::required_data()),
    )
}

fn result(id: RequestId, raw: Box<RawValue>) -> HttpResponse {
    reply::json(
        StatusCode::OK,
        reply::response_json(jsonrpc::Response::result(id, raw)),
    )
}

/// A store failure as the spec's error (*Tasks*, "Protocol Errors").
fn store_error(id: RequestId, e: &TaskStoreError) -> HttpResponse {
    let error = match e {
        TaskStoreError::NotFound { .. } => {
            ErrorObject::new(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        }
        TaskStoreError::Expired { .. } => {
            ErrorObject::new(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        }
        // The store is out of reach (Redis down): 503, the client may retry.
        TaskStoreError::Backend(cause) => {
            tracing::error!(error = %cause, "task store unavailable");
            let error = ErrorObject::internal(format!("the task store is unavailable: {cause}"));
            return reply::error(StatusCode::SERVICE_UNAVAILABLE, Some(id), error);
        }
        other => {
            tracing::error!(error = %other, "task store failed");
            ErrorObject::internal(format!("Internal error: the task store failed: {other}"))
        }
    };
    reply::error(StatusCode::OK, Some(id), error)
}

/// Publishes the task's state to the listen streams that asked for it.
fn publish(shared: &Shared, record: &TaskRecord) {
    shared.listeners.publish(
        &wire::status_notification(record),
        shared.config.listen_queue.max(1),
    );
}

/// Answers `tasks/get`, `tasks/update` or `tasks/cancel` (the headers have
/// been checked; `scope` is the request's principal).
pub(crate) async fn method(
    shared: &Arc<Shared>,
    tasks: &Tasks,
    id: RequestId,
    method: &str,
    params: &Params,
    capabilities: &Value,
    scope: Option<&str>,
) -> HttpResponse {
    if !wire::declared(capabilities) {
        return missing_extension(id, method);
    }
    let Some(task_id) = params.parsed::<String>("taskId") else {
        return reply::error(
            StatusCode::BAD_REQUEST,
            Some(id),
            ErrorObject::invalid_params(format!("{method} requires params.taskId (a string)")),
        );
    };
    let store = &tasks.config.store;
    let info = shared.server_info.as_deref();
    match method {
        "tasks/get" => match store.get(&task_id, scope, now_ms()).await {
            Ok(r) => {
                let r = match &tasks.config.leases {
                    Some(l) if tasks.running(&task_id).is_none() => {
                        liveness::fail_if_worker_gone(l, store.as_ref(), r).await
                    }
                    _ => r,
                };
                result(id, wire::get_result(&r, info))
            }
            Err(e) => store_error(id, &e),
        },
        "tasks/update" => {
            let responses = match params
                .get("inputResponses")
                .map(serde_json::from_str::<BTreeMap<String, Box<RawValue>>>)
            {
                Some(Ok(m)) => m,
                _ => {
                    return reply::error(
                        StatusCode::BAD_REQUEST,
                        Some(id),
                        ErrorObject::invalid_params(
                            "tasks/update requires params.inputResponses, an object mapping inputRequests keys to their results",
                        ),
                    );
                }
            };
            let before = store.get(&task_id, scope, now_ms()).await;
            match store
                .deliver_input(&task_id, scope, responses, now_ms())
                .await
            {
                Ok(r) => {
                    if let Some(run) = tasks.running(&task_id) {
                        run.wake.notify();
                    }
                    if before.is_ok_and(|b| b.status != r.status) {
                        publish(shared, &r);
                    }
                    result(id, wire::ack(info))
                }
                Err(e) => store_error(id, &e),
            }
        }
        "tasks/cancel" => match store.cancel(&task_id, scope, now_ms()).await {
            Ok(r) => {
                if let Some(run) = tasks.running(&task_id) {
                    // Self-test fault: the work is never told.
                    if !shared
                        .config
                        .http
                        .faults
                        .has(mcp_http_edge::faults::Fault::IgnoreTaskCancel)
                    {
                        run.cancel.cancel();
                    }
                    publish(shared, &r);
                }
                result(id, wire::ack(info))
            }
            Err(e) => store_error(id, &e),
        },
        other => reply::error(
            StatusCode::NOT_FOUND,
            Some(id),
            ErrorObject::method_not_found(other),
        ),
    }
}

/// Makes the prepared `tools/call` a task: stores it, starts its worker,
/// answers `CreateTaskResult`.
pub(crate) async fn start(
    shared: &Arc<Shared>,
    tasks: &Tasks,
    prepared: Prepared,
    scope: Option<String>,
) -> HttpResponse {
    let id = prepared.request.id.clone();
    // Admitted before the task is created: a refused call leaves nothing
    // behind. The worker keeps the place until the task ends.
    let permit = match shared
        .admission
        .try_admit(admission::weight(&prepared.request))
    {
        Ok(p) => p,
        Err(why) => return reply::not_admitted(Some(id), &why),
    };
    let mut attempt = 0;
    let record = loop {
        let new = NewTask {
            id: mint_id(),
            scope: scope.clone(),
            ttl_ms: tasks.config.ttl_ms,
            poll_interval_ms: Some(tasks.config.poll_interval_ms),
            status_message: None,
        };
        match tasks.config.store.create(new, now_ms()).await {
            Ok(r) => break r,
            Err(TaskStoreError::Exists { .. }) if attempt < 3 => attempt += 1,
            // A full store is a load condition (it evicts no task before
            // its TTL): 503, naming the limit (DESIGN.md, "Limits").
            Err(TaskStoreError::TooManyTasks { max }) => {
                return reply::error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    Some(id),
                    ErrorObject::internal(format!(
                        "the server already holds its maximum of {max} tasks; try again later"
                    )),
                );
            }
            Err(TaskStoreError::Full { max }) => {
                return reply::error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    Some(id),
                    ErrorObject::internal(format!(
                        "the server's tasks already hold its maximum of {max} bytes; try again later"
                    )),
                );
            }
            Err(e) => return store_error(id, &e),
        }
    };
    let running = Running {
        cancel: CancellationToken::new(),
        wake: Arc::new(InputWake::new()),
    };
    if let Some(l) = &tasks.config.leases
        && !liveness::start_worker_lease(l, &record.id).await
    {
        tracing::warn!(task = %record.id, "cannot take the task's lease; its worker runs without one");
    }
    tasks.lock().insert(record.id.clone(), running.clone());
    let answer = wire::create_result(&record, shared.server_info.as_deref());
    tokio::spawn(worker::run(
        shared.clone(),
        prepared,
        record,
        running,
        permit,
    ));
    result(id, answer)
}
