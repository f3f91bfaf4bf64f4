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
//! text alone (~50 bytes). The registry keeps the latest client's
//! description parsed (one, whatever the number of sessions), so a request
//! of a session whose client is the latest kind — every request, on a
//! server with one kind of client — takes that one
//! ([`Registry::described`]); a session of an earlier kind parses its text
//! for each request that needs it.
//!
//! [`RequestContext::client`]: mcp_transport_core::handler::RequestContext::client
//! [`Registry::client`]: super::session::Registry::client
//! [`Registry::described`]: super::session::Registry::described

use std::sync::{Arc, Mutex};

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

/// The registry's memory of the latest client: its text and, once a
/// session or a request needed it, its description parsed (kept by the
/// registry: one description, ~750 bytes, whatever the number of sessions).
#[derive(Debug, Default)]
pub(crate) struct LastClient {
    last: Mutex<Option<Latest>>,
}

/// The latest client (see [`LastClient`]).
#[derive(Debug)]
struct Latest {
    text: Box<str>,
    parsed: Option<Arc<ClientDescription>>,
}

impl LastClient {
    /// What a new session of `client` keeps: the shared description when
    /// the latest session's client described itself the same way, else the
    /// text (and this client becomes the latest).
    pub fn keep(&self, client: &ClientDescription) -> ClientKeep {
        let text = text_of(client);
        let mut last = lock(&self.last);
        if let Some(latest) = last.as_mut()
            && latest.text == text
        {
            let c = latest
                .parsed
                .get_or_insert_with(|| Arc::new(client.clone()));
            return ClientKeep::Shared(c.clone());
        }
        *last = Some(Latest {
            text: text.clone(),
            parsed: None,
        });
        ClientKeep::Text(text)
    }

    /// The description a session keeps as `keep`: its shared one; for text,
    /// the latest client's parsed description when the text is the latest
    /// client's (parsed on the first such request and kept), else the text
    /// parsed now.
    pub fn get(&self, keep: &ClientKeep) -> Arc<ClientDescription> {
        let text = match keep {
            ClientKeep::Shared(c) => return c.clone(),
            ClientKeep::Text(t) => t,
        };
        let mut last = lock(&self.last);
        match last.as_mut() {
            Some(latest) if latest.text == *text => latest
                .parsed
                .get_or_insert_with(|| Arc::new(parse(text)))
                .clone(),
            _ => {
                drop(last);
                Arc::new(parse(text))
            }
        }
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
            let c = last.get(keep);
            assert_eq!(c.info, client(version).info);
            assert_eq!(c.capabilities, client(version).capabilities);
            assert!(c.has_capability("sampling") && !c.has_capability("roots"));
        }
    }

    #[test]
    fn a_text_session_of_the_latest_kind_takes_the_kept_description() {
        let last = LastClient::default();
        let first = last.keep(&client("1"));
        assert!(matches!(first, ClientKeep::Text(_)));
        let a = last.get(&first);
        let b = last.get(&first);
        assert!(Arc::ptr_eq(&a, &b), "parsed once, then kept");
        let second = last.keep(&client("1"));
        let ClientKeep::Shared(s) = &second else {
            panic!("alike clients share");
        };
        assert!(Arc::ptr_eq(&a, s), "the session after shares it too");
        // Once another kind is the latest, the first parses its text.
        let _ = last.keep(&client("2"));
        let c = last.get(&first);
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(c.info, client("1").info);
    }

    #[test]
    fn the_latest_description_outlives_its_sessions() {
        let last = LastClient::default();
        let _ = last.keep(&client("1"));
        let shared = last.keep(&client("1"));
        let ClientKeep::Shared(s) = &shared else {
            panic!("alike clients share");
        };
        let weak = Arc::downgrade(s);
        drop(shared);
        let again = last.keep(&client("1"));
        let ClientKeep::Shared(s) = &again else {
            panic!("alike clients share");
        };
        assert!(Arc::ptr_eq(&weak.upgrade().expect("kept"), s));
    }
}
