//! The per-session handler wrapper that serves 2025-11-25 tasks (see the
//! [module docs](super)).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use mcp_transport_core::handler::{Execution, Handler, Outcome, RequestContext, ServerDescription};
use mcp_transport_core::json_members::Valid;
use mcp_transport_core::jsonrpc::{ErrorObject, METHOD_NOT_FOUND, Notification, Request};
use serde_json::Value;

use super::{Tasks, request, worker};

/// The server's handler, with this session's tasks in front of it.
pub(crate) struct TaskHandler {
    pub inner: Arc<dyn Handler>,
    pub tasks: Arc<Tasks>,
    /// The session's id (the session's own `Arc`, not a copy).
    pub session: Arc<str>,
}

impl Drop for TaskHandler {
    fn drop(&mut self) {
        // The session is gone (the handler lives as long as it does).
        self.tasks.end_session(&self.session);
    }
}

/// `capabilities.tasks` as this server declares it (*Tasks*, "Server
/// Capabilities").
fn capability() -> Value {
    serde_json::json!({
        "list": {},
        "cancel": {},
        "requests": { "tools": { "call": {} } },
    })
}

/// What a `tools/call` wrapper needs of its params, read in one walk of
/// their members: the tool's `name` when it is a string, and `params.task`
/// (SEP-1686, "Creating Tasks") parsed when present (a `"task": null`
/// counts as present, as it does in the object). A repeated member is its
/// last value, as `params_of` reads it. The params are a `RawValue`,
/// valid JSON, so the walk needs no parser: the members it skips
/// (`arguments`, `_meta`) are stepped over, not read. Before, a serde
/// read of `task` and the handler's own read of `name` walked the params
/// twice (~2,600 instructions of a 2025-11-25 `tools/call`:
/// docs/PERFORMANCE.md, session 21).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct CallParams<'a> {
    /// `params.name`, when a string.
    pub name: Option<Cow<'a, str>>,
    /// `params.task`, when present.
    pub task: Option<Value>,
}

impl<'a> CallParams<'a> {
    /// Reads `request`'s params (nothing when they are absent or not an
    /// object).
    pub fn read(request: &'a Request) -> CallParams<'a> {
        let Some(members) = request
            .params
            .as_deref()
            .and_then(|p| Valid::from(p).object())
        else {
            return CallParams::default();
        };
        let (mut name, mut task) = (None, None);
        for m in members {
            if m.is("name") {
                name = Some(m.value());
            } else if m.is("task") {
                task = Some(m.value());
            }
        }
        CallParams {
            name: name.and_then(Valid::as_str),
            task: task.and_then(|t| serde_json::from_str(t.text()).ok()),
        }
    }
}

/// `params` parsed as an object (empty when absent or not an object).
pub(crate) fn params_of(request: &Request) -> serde_json::Map<String, Value> {
    request
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default()
}

/// The wire value of `execution.taskSupport` for an [`Execution`].
fn task_support(e: Execution) -> Option<&'static str> {
    match e {
        Execution::Immediate => None,
        Execution::MayBeLong => Some("optional"),
        Execution::TaskOnly => Some("required"),
    }
}

impl TaskHandler {
    /// `tasks/get`, `tasks/list`, `tasks/cancel` and `tasks/result`.
    async fn tasks_request(&self, request: Request, cx: RequestContext) -> Outcome {
        match request.method.as_str() {
            "tasks/get" => request::get(&self.tasks, &self.session, &request).await,
            "tasks/list" => request::list(&self.tasks, &self.session, &request).await,
            "tasks/cancel" => request::cancel(&self.tasks, &self.session, &request).await,
            _ => request::result(&self.tasks, &self.session, &request, &cx).await,
        }
    }

    /// The execution the handler gives a call of tool `name`.
    fn tool_execution(&self, name: &str) -> Execution {
        let probe = Request::new(
            mcp_transport_core::jsonrpc::RequestId::Number(0),
            "tools/call",
            Some(&serde_json::json!({ "name": name })),
        );
        probe.map_or(Execution::Immediate, |r| self.inner.execution(&r))
    }

    /// `tools/list` with `execution.taskSupport` on each tool the handler
    /// did not mark itself.
    fn mark_tools(&self, outcome: Outcome) -> Outcome {
        let Outcome::Result(raw) = outcome else {
            return outcome;
        };
        let Ok(mut v) = serde_json::from_str::<Value>(raw.get()) else {
            return Outcome::Result(raw);
        };
        let Some(tools) = v.get_mut("tools").and_then(Value::as_array_mut) else {
            return Outcome::Result(raw);
        };
        for tool in tools.iter_mut() {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let Some(support) = task_support(self.tool_execution(name)) else {
                continue;
            };
            if let Some(obj) = tool.as_object_mut() {
                let exec = obj
                    .entry("execution")
                    .or_insert_with(|| serde_json::json!({}));
                if let Some(exec) = exec.as_object_mut() {
                    exec.entry("taskSupport").or_insert_with(|| support.into());
                }
            }
        }
        Outcome::json(&v)
    }
}

#[async_trait]
impl Handler for TaskHandler {
    fn describe(&self) -> ServerDescription {
        let mut d = self.inner.describe();
        if !d.capabilities.is_object() {
            d.capabilities = serde_json::json!({});
        }
        d.capabilities["tasks"] = capability();
        d
    }

    /// Written out rather than `async`: a request this wrapper does not
    /// answer itself is the server handler's future, returned as is, so a
    /// pending `tools/call` holds no future of this layer (an `async`
    /// wrapper's boxed future held the request, its context and room for
    /// the largest `tasks/*` branch: 1,920 bytes per pending call).
    fn handle<'life0, 'async_trait>(
        &'life0 self,
        request: Request,
        cx: RequestContext,
    ) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        match request.method.as_str() {
            "tasks/get" | "tasks/list" | "tasks/cancel" | "tasks/result" => {
                Box::pin(self.tasks_request(request, cx))
            }
            "tools/list" => Box::pin(async move {
                let outcome = self.inner.handle(request, cx).await;
                self.mark_tools(outcome)
            }),
            "tools/call" => {
                let CallParams { name, task } = CallParams::read(&request);
                let execution = match name {
                    Some(name) => self.inner.tool_execution(&name, &request),
                    None => self.inner.execution(&request),
                };
                match (task, execution) {
                    (Some(_), Execution::Immediate) => {
                        Box::pin(std::future::ready(Outcome::Error(ErrorObject::new(
                            METHOD_NOT_FOUND,
                            "Method not found: this tool cannot run as a task (execution.taskSupport is forbidden)",
                        ))))
                    }
                    (None, Execution::TaskOnly) => {
                        Box::pin(std::future::ready(Outcome::Error(ErrorObject::new(
                            METHOD_NOT_FOUND,
                            "Method not found: this tool must be called as a task (execution.taskSupport is required); add params.task",
                        ))))
                    }
                    (Some(task), _) => Box::pin(async move {
                        worker::start(&self.tasks, &self.session, &self.inner, request, task, &cx)
                            .await
                    }),
                    (None, _) => self.inner.handle(request, cx),
                }
            }
            _ => self.inner.handle(request, cx),
        }
    }

    fn execution(&self, request: &Request) -> Execution {
        self.inner.execution(request)
    }

    fn tool_execution(&self, name: &str, request: &Request) -> Execution {
        self.inner.tool_execution(name, request)
    }

    async fn notification(&self, notification: Notification) {
        self.inner.notification(notification).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    use super::super::TasksConfig;

    /// A handler whose tools say how they run and which records the
    /// notifications it receives.
    #[derive(Default)]
    struct Inner(Mutex<Vec<String>>);

    #[async_trait]
    impl Handler for Inner {
        fn describe(&self) -> ServerDescription {
            ServerDescription {
                info: serde_json::json!({"name": "inner", "version": "1"}),
                capabilities: serde_json::json!({}),
                instructions: None,
            }
        }
        async fn handle(&self, _: Request, _: RequestContext) -> Outcome {
            Outcome::json(&serde_json::json!({}))
        }
        fn execution(&self, _: &Request) -> Execution {
            Execution::MayBeLong
        }
        fn tool_execution(&self, name: &str, _: &Request) -> Execution {
            if name == "only_as_task" {
                Execution::TaskOnly
            } else {
                Execution::MayBeLong
            }
        }
        async fn notification(&self, n: Notification) {
            self.0.lock().unwrap().push(n.method);
        }
    }

    /// The wrapper is the session's handler to everything above it: what
    /// it does not serve itself must be the inner handler's answer.
    #[tokio::test]
    async fn what_the_wrapper_does_not_serve_is_the_inner_handlers() {
        let inner = Arc::new(Inner::default());
        let wrapper = TaskHandler {
            inner: inner.clone(),
            tasks: Arc::new(Tasks::new(TasksConfig::default())),
            session: Arc::from("s-1"),
        };
        let r = call(r#"{"name":"only_as_task"}"#);
        assert_eq!(wrapper.execution(&r), Execution::MayBeLong);
        assert_eq!(
            Handler::tool_execution(&wrapper, "only_as_task", &r),
            Execution::TaskOnly
        );
        let n = Notification::new("notifications/roots/list_changed", None::<&Value>).unwrap();
        wrapper.notification(n).await;
        assert_eq!(
            *inner.0.lock().unwrap(),
            ["notifications/roots/list_changed"]
        );
        assert_eq!(wrapper.describe().info["name"], "inner");
        assert!(wrapper.describe().capabilities["tasks"].is_object());
    }

    fn call(params: &str) -> Request {
        Request {
            id: mcp_transport_core::jsonrpc::RequestId::Number(1),
            method: "tools/call".into(),
            params: Some(serde_json::value::RawValue::from_string(params.to_owned()).unwrap()),
        }
    }

    /// The one walk gives what the whole object gives, for every shape of
    /// `params`: `task` as `params_of` reads it, `name` when a string.
    #[test]
    fn the_call_params_are_read_as_the_whole_params_give_them() {
        for params in [
            r#"{"name":"add","arguments":{"a":1,"task":2,"name":"x"}}"#,
            r#"{"name":"add","task":{"ttl":60000}}"#,
            r#"{"task":null,"name":"add"}"#,
            r#"{"task":1,"task":{"ttl":5},"name":"a","name":"b"}"#,
            r#"{"n\u0061me":"add","\u0074ask":{}}"#,
            r#"{"name":"\u0061dd"}"#,
            r#"{"name":7,"_meta":{"name":"no","task":{}}}"#,
            r#"[{"ttl":1}]"#,
            r#"{}"#,
        ] {
            let r = call(params);
            let whole = params_of(&r);
            let read = CallParams::read(&r);
            assert_eq!(read.task, whole.get("task").cloned(), "params {params}");
            assert_eq!(
                read.name.as_deref(),
                whole.get("name").and_then(Value::as_str),
                "params {params}"
            );
        }
        assert_eq!(
            CallParams::read(&call(r#"{"task":null}"#)).task,
            Some(Value::Null)
        );
        let none = Request {
            params: None,
            ..call("{}")
        };
        assert_eq!(CallParams::read(&none), CallParams::default());
    }
}
