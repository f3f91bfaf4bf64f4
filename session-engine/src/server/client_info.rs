//! What a session keeps of its client's `initialize` (`clientInfo` and
//! `capabilities`, *Lifecycle*, "Initialization"), compactly.
//!
//! Handlers see the client as an `Arc<ClientDescription>`
//! ([`RequestContext::client`]), whose `serde_json::Value`s cost ~750 bytes
//! for a typical `clientInfo` (a `BTreeMap` node and its strings). Most
//! clients of a server are of a few kinds that describe themselves alike,
//! so sessions share one description: a session whose client describes
//! itself as the previous session's did shares that one
//! ([`Registry::client`]). A session whose client differs keeps the JSON
//! text alone (~50 bytes) and parses it for each request that needs it.
//!
//! [`RequestContext::client`]: mcp_transport_core::handler::RequestContext::client
//! [`Registry::client`]: super::session::Registry::client

use std::sync::{Arc, Mutex, Weak};

use mcp_transport_core::handler::ClientDescription;

use super::session::lock;

/// A session's client description.
#[derive(Debug)]
pub(crate) enum ClientKeep {
    /// Parsed, shared with the sessions whose clients describe themselves
    /// alike.
    Shared(Arc<ClientDescription>),
    /// `[clientInfo, capabilities]` as JSON text, parsed on use.
    Text(Box<str>),
}

impl From<ClientDescription> for ClientKeep {
    fn from(client: ClientDescription) -> Self {
        ClientKeep::Shared(Arc::new(client))
    }
}

impl ClientKeep {
    /// The description (parsed now when only the text is kept).
    pub fn get(&self) -> Arc<ClientDescription> {
        match self {
            ClientKeep::Shared(c) => c.clone(),
            ClientKeep::Text(t) => Arc::new(parse(t)),
        }
    }
}

/// `[clientInfo, capabilities]` as JSON text.
fn text_of(client: &ClientDescription) -> Box<str> {
    serde_json::to_string(&(&client.info, &client.capabilities))
        .unwrap_or_default()
        .into_boxed_str()
}

/// The description `text_of` wrote (an empty one if it somehow cannot be
/// read back).
fn parse(text: &str) -> ClientDescription {
    match serde_json::from_str::<(Option<serde_json::Value>, serde_json::Value)>(text) {
        Ok((info, capabilities)) => ClientDescription { info, capabilities },
        Err(_) => ClientDescription {
            info: None,
            capabilities: serde_json::json!({}),
        },
    }
}

/// The registry's memory of the latest client: its text, and the parsed
/// description sessions share (not kept alive by this).
#[derive(Debug, Default)]
pub(crate) struct LastClient {
    last: Mutex<Option<(Box<str>, Weak<ClientDescription>)>>,
}

impl LastClient {
    /// What a new session of `client` keeps: the shared description when
    /// the latest session's client described itself the same way (parsed
    /// once, on the second such session), else the text.
    pub fn keep(&self, client: &ClientDescription) -> ClientKeep {
        let text = text_of(client);
        let mut last = lock(&self.last);
        if let Some((known, shared)) = last.as_mut()
            && *known == text
        {
            if let Some(c) = shared.upgrade() {
                return ClientKeep::Shared(c);
            }
            let c = Arc::new(client.clone());
            *shared = Arc::downgrade(&c);
            return ClientKeep::Shared(c);
        }
        *last = Some((text.clone(), Weak::new()));
        ClientKeep::Text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(version: &str) -> ClientDescription {
        ClientDescription {
            info: Some(serde_json::json!({"name": "c", "version": version})),
            capabilities: serde_json::json!({"sampling": {}}),
        }
    }

    #[test]
    fn alike_clients_share_one_description_and_others_keep_text() {
        let last = LastClient::default();
        let first = last.keep(&client("1"));
        assert!(matches!(first, ClientKeep::Text(_)), "the first is text");
        let second = last.keep(&client("1"));
        let third = last.keep(&client("1"));
        let (ClientKeep::Shared(a), ClientKeep::Shared(b)) = (&second, &third) else {
            panic!("alike clients share");
        };
        assert!(Arc::ptr_eq(a, b));
        let other = last.keep(&client("2"));
        assert!(
            matches!(other, ClientKeep::Text(_)),
            "a different client is text"
        );
        // Every form reads back as the client described itself.
        for (keep, version) in [(&first, "1"), (&second, "1"), (&other, "2")] {
            let c = keep.get();
            assert_eq!(c.info, client(version).info);
            assert_eq!(c.capabilities, client(version).capabilities);
            assert!(c.has_capability("sampling") && !c.has_capability("roots"));
        }
    }

    #[test]
    fn a_shared_description_is_parsed_again_once_every_holder_is_gone() {
        let last = LastClient::default();
        let _ = last.keep(&client("1"));
        let shared = last.keep(&client("1"));
        drop(shared);
        let again = last.keep(&client("1"));
        assert!(matches!(again, ClientKeep::Shared(_)));
        assert_eq!(again.get().info, client("1").info);
    }
}
