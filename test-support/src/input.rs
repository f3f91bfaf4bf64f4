//! A scripted client-side [`InputHandler`]: answers server requests
//! (elicitation, sampling, ...) from a script and records what it was
//! asked.

use std::sync::Arc;
use std::sync::Mutex;

use async_trait::async_trait;
use mcp_transport_core::jsonrpc::{ErrorObject, to_raw};
use mcp_transport_core::transport::InputHandler;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// Answers requests by method from a script (a method it has no answer
/// for gets `-32601`), recording `(method, params)` of every request.
#[derive(Debug, Default)]
pub struct ScriptedInput {
    /// `(method, params)` of every request, in order.
    pub asked: Mutex<Vec<(String, Value)>>,
    /// Answers by method.
    pub answers: Vec<(String, Value)>,
}

impl ScriptedInput {
    /// Answers `answers` (method, result).
    pub fn new(answers: &[(&str, Value)]) -> Arc<Self> {
        Arc::new(ScriptedInput {
            asked: Mutex::new(Vec::new()),
            answers: answers
                .iter()
                .map(|(m, v)| ((*m).to_owned(), v.clone()))
                .collect(),
        })
    }

    /// Accepts every elicitation with the name "Ada".
    pub fn ada() -> Arc<Self> {
        Self::new(&[("elicitation/create", ada())])
    }

    /// What it was asked so far.
    pub fn asked(&self) -> Vec<(String, Value)> {
        self.asked.lock().unwrap().clone()
    }

    /// The methods it was asked so far.
    pub fn methods(&self) -> Vec<String> {
        self.asked().into_iter().map(|(m, _)| m).collect()
    }

    /// How many requests it answered (or refused).
    pub fn calls(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

/// The elicitation result accepting the name "Ada".
pub fn ada() -> Value {
    json!({ "action": "accept", "content": { "name": "Ada" } })
}

/// A sampling result: the assistant says `text` as `model`.
pub fn sampled(text: &str, model: &str) -> Value {
    json!({
        "role": "assistant",
        "content": { "type": "text", "text": text },
        "model": model
    })
}

#[async_trait]
impl InputHandler for ScriptedInput {
    async fn handle(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params = params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        self.asked.lock().unwrap().push((method.to_owned(), params));
        match self.answers.iter().find(|(m, _)| m == method) {
            Some((_, v)) => Ok(to_raw(v).unwrap()),
            None => Err(ErrorObject::method_not_found(method)),
        }
    }
}
