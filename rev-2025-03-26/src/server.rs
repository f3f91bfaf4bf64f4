//! The 2025-03-26 and 2025-06-18 servers: the session engine's
//! [`SessionRevision`] for each.

use std::any::Any;
use std::sync::Arc;

use mcp_session_engine::revision::SessionRevision;
use mcp_session_engine::server::ServerConfig;
use mcp_transport_core::ProtocolVersion;

use crate::{V2025_03_26, V2025_06_18};

/// One of this crate's revisions as the session engine asks it. Neither has
/// SEP-1699: no priming event, no `retry`, no connection closed before its
/// response ("The server SHOULD NOT close the SSE stream before sending the
/// JSON-RPC response").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Revision {
    /// 2025-03-26: JSON-RPC batches (*Transports*, "Sending Messages to the
    /// Server" 3); no `MCP-Protocol-Version` header; no elicitation
    /// (`schema.ts`'s `ServerRequest` is ping, sampling and roots).
    V2025_03_26,
    /// 2025-06-18: batches removed (changelog, "Major changes" 1); the
    /// `MCP-Protocol-Version` header ("Protocol Version Header");
    /// `elicitation/create`.
    V2025_06_18,
}

impl Revision {
    /// Both, oldest first.
    pub const ALL: [Revision; 2] = [Revision::V2025_03_26, Revision::V2025_06_18];
}

impl SessionRevision for Revision {
    fn version(&self) -> ProtocolVersion {
        match self {
            Revision::V2025_03_26 => V2025_03_26,
            Revision::V2025_06_18 => V2025_06_18,
        }
    }

    fn batches(&self) -> bool {
        *self == Revision::V2025_03_26
    }

    fn version_header(&self) -> bool {
        *self == Revision::V2025_06_18
    }

    fn elicitation(&self) -> bool {
        *self == Revision::V2025_06_18
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Adds both revisions' implementations to `config`, keeping any it has
/// already for those versions; which are served is still
/// `config.versions`.
pub fn register(config: ServerConfig) -> ServerConfig {
    Revision::ALL.into_iter().fold(config, |c, r| {
        if c.revision(&r.version()).is_some() {
            c
        } else {
            c.with_revision(Arc::new(r))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_are_the_ones_the_docs_describe() {
        let old = Revision::V2025_03_26;
        assert!(old.batches() && !old.version_header() && !old.elicitation());
        assert!(old.polling().is_none());
        let new = Revision::V2025_06_18;
        assert!(!new.batches() && new.version_header() && new.elicitation());
        assert!(new.polling().is_none());
        let c = register(ServerConfig::default());
        assert_eq!(c.revisions.len(), 2);
        assert!(c.revision(&V2025_03_26).is_some() && c.revision(&V2025_06_18).is_some());
    }
}
