//! The per-origin era cache.
//!
//! 2026-07-28 *Versioning*: "The era determination is a property of the
//! server, not of an individual request. Clients SHOULD cache the result for
//! the lifetime of the … origin (HTTP), and MAY persist it across restarts of
//! the same server configuration, re-probing if the cached assumption later
//! fails."

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_transport_core::ProtocolVersion;

/// Upper bound on remembered origins (oldest forgotten first).
const MAX_ORIGINS: usize = 1024;

/// Remembers, per origin, which revision a server was last found to speak.
/// Cheap to clone; clones share the cache.
#[derive(Clone, Debug, Default)]
pub struct EraCache {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    map: HashMap<String, (u64, ProtocolVersion)>,
    tick: u64,
}

impl EraCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The revision remembered for `origin`.
    pub fn get(&self, origin: &str) -> Option<ProtocolVersion> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.map.get(origin).map(|(_, v)| v.clone())
    }

    /// Remembers `revision` for `origin`.
    pub fn put(&self, origin: &str, revision: ProtocolVersion) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.tick += 1;
        let tick = inner.tick;
        inner.map.insert(origin.to_owned(), (tick, revision));
        if inner.map.len() > MAX_ORIGINS {
            let oldest = inner
                .map
                .iter()
                .min_by_key(|(_, (t, _))| *t)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                inner.map.remove(&k);
            }
        }
    }

    /// Forgets `origin` (its cached answer stopped working).
    pub fn forget(&self, origin: &str) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.map.remove(origin);
    }

    /// How many origins are remembered.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map
            .len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The origin (`scheme://host:port`) of a URL, the cache key.
pub fn origin_of(url: &str) -> Option<String> {
    let u = reqwest::Url::parse(url).ok()?;
    let host = u.host_str()?;
    let port = u.port_or_known_default()?;
    Some(format!("{}://{}:{}", u.scheme(), host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_and_bounds() {
        assert_eq!(
            origin_of("http://127.0.0.1:8080/mcp?x=1").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            origin_of("https://a.test/mcp").as_deref(),
            Some("https://a.test:443")
        );
        assert_eq!(origin_of("not a url"), None);
        let c = EraCache::new();
        c.put("o", ProtocolVersion::V2025_11_25);
        assert_eq!(c.get("o"), Some(ProtocolVersion::V2025_11_25));
        assert!(!c.is_empty());
        c.forget("o");
        assert!(c.is_empty());
        for i in 0..(MAX_ORIGINS + 10) {
            c.put(&format!("o{i}"), ProtocolVersion::V2026_07_28);
        }
        assert_eq!(c.len(), MAX_ORIGINS);
        assert_eq!(c.get("o0"), None);
    }
}
