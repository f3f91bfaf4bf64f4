//! Version selection, as pure functions, for both eras.
//!
//! * **Legacy** (`initialize` handshake; 2025-11-25 *Lifecycle*, "Version
//!   Negotiation"): "If the server supports the requested protocol version, it
//!   MUST respond with the same version. Otherwise, the server MUST respond
//!   with another protocol version it supports. This SHOULD be the latest
//!   version supported by the server." and "If the client does not support the
//!   version in the server's response, it SHOULD disconnect."
//! * **Modern** (per-request `_meta`; 2026-07-28 *Versioning*, "Protocol
//!   Version Negotiation"): a server that does not implement the requested
//!   version "MUST respond with an `UnsupportedProtocolVersionError` listing
//!   the versions it does support"; "The client SHOULD select a mutually
//!   supported version from the `supported` list and retry the request".
//!
//! Failures carry both sides' version lists (a lesson from rustls: a
//! negotiation error says what each side offered).

use serde::{Deserialize, Serialize};

use crate::jsonrpc::{ErrorObject, UNSUPPORTED_PROTOCOL_VERSION};
use crate::version::{Era, ProtocolVersion, list};

/// Version negotiation failed; both sides' versions are named.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NegotiationError {
    /// A legacy server answered `initialize` with a version the client does not support.
    #[error(
        "server answered initialize with protocol version {answered}, which this client does not support (client offered {requested}; client supports {})",
        list(client_supports)
    )]
    ServerVersionRejected {
        /// What the client asked for.
        requested: ProtocolVersion,
        /// What the server answered.
        answered: ProtocolVersion,
        /// Everything the client would have accepted.
        client_supports: Vec<ProtocolVersion>,
    },
    /// No version is supported by both sides.
    #[error(
        "no mutually supported protocol version: client supports {}, server supports {}",
        list(client_supports),
        list(server_supports)
    )]
    NoMutualVersion {
        /// The client's versions.
        client_supports: Vec<ProtocolVersion>,
        /// The server's versions.
        server_supports: Vec<ProtocolVersion>,
    },
    /// The server supports no version of the era needed for this exchange.
    #[error(
        "server supports no {era} protocol version (it supports {})",
        list(server_supports)
    )]
    NoVersionOfEra {
        /// The era that was needed.
        era: Era,
        /// The server's versions.
        server_supports: Vec<ProtocolVersion>,
    },
}

/// The server side of legacy `initialize`: the requested version when
/// supported, else the latest legacy version the server supports.
///
/// Fails only when the server supports no legacy version at all (a
/// modern-only server), which SHOULD answer `initialize` with an error naming
/// its versions (2026-07-28 *Versioning*, "Backward Compatibility").
pub fn legacy_server_select(
    requested: &ProtocolVersion,
    server_supports: &[ProtocolVersion],
) -> Result<ProtocolVersion, NegotiationError> {
    if requested.is_legacy() && server_supports.contains(requested) {
        return Ok(requested.clone());
    }
    server_supports
        .iter()
        .filter(|v| v.is_legacy())
        .max()
        .cloned()
        .ok_or_else(|| NegotiationError::NoVersionOfEra {
            era: Era::Legacy,
            server_supports: server_supports.to_vec(),
        })
}

/// The client side of legacy `initialize`: accepts the server's answer when
/// it is one of the client's versions (including a counter-offer), else fails
/// with both sides named.
pub fn legacy_client_accept(
    requested: &ProtocolVersion,
    answered: &ProtocolVersion,
    client_supports: &[ProtocolVersion],
) -> Result<ProtocolVersion, NegotiationError> {
    if answered.is_legacy() && client_supports.contains(answered) {
        Ok(answered.clone())
    } else {
        Err(NegotiationError::ServerVersionRejected {
            requested: requested.clone(),
            answered: answered.clone(),
            client_supports: client_supports.to_vec(),
        })
    }
}

/// The `data` of an `UnsupportedProtocolVersionError` (`-32022`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnsupportedVersionData {
    /// The versions the server supports.
    pub supported: Vec<ProtocolVersion>,
    /// The version the client asked for.
    pub requested: ProtocolVersion,
}

impl UnsupportedVersionData {
    /// The JSON-RPC error object, code `-32022`.
    pub fn to_error(&self) -> ErrorObject {
        ErrorObject::new(
            UNSUPPORTED_PROTOCOL_VERSION,
            format!(
                "Unsupported protocol version: {} (supported: {})",
                self.requested,
                list(&self.supported)
            ),
        )
        .with_data(self)
    }

    /// Reads the data back from an error object, when it is a `-32022` with
    /// well-formed data.
    ///
    /// Lenient where it costs nothing: a missing `requested` reads as an
    /// empty (unknown) version, since only `supported` is needed to retry.
    pub fn from_error(error: &ErrorObject) -> Option<Self> {
        #[derive(Deserialize)]
        struct Lenient {
            supported: Vec<ProtocolVersion>,
            #[serde(default)]
            requested: Option<ProtocolVersion>,
        }
        if error.code != UNSUPPORTED_PROTOCOL_VERSION {
            return None;
        }
        let l: Lenient = serde_json::from_str(error.data.as_ref()?.get()).ok()?;
        Some(UnsupportedVersionData {
            supported: l.supported,
            requested: l
                .requested
                .unwrap_or(ProtocolVersion::Unknown(String::new())),
        })
    }
}

/// The server side of the modern check: `Ok` when the requested version is a
/// modern version the server supports, else the `-32022` data to send back.
/// The `supported` list names every version the server supports, legacy ones
/// included, so a dual-era client can see them.
pub fn modern_server_check(
    requested: &ProtocolVersion,
    server_supports: &[ProtocolVersion],
) -> Result<(), UnsupportedVersionData> {
    if requested.is_modern() && server_supports.contains(requested) {
        Ok(())
    } else {
        Err(UnsupportedVersionData {
            supported: server_supports.to_vec(),
            requested: requested.clone(),
        })
    }
}

/// The client side of the modern model: the highest version in both lists
/// and of the wanted era (`None` = any era).
pub fn highest_mutual(
    client_supports: &[ProtocolVersion],
    server_supports: &[ProtocolVersion],
    era: Option<Era>,
) -> Result<ProtocolVersion, NegotiationError> {
    client_supports
        .iter()
        .filter(|v| server_supports.contains(v))
        .filter(|v| era.is_none_or(|e| v.era() == e))
        .max()
        .cloned()
        .ok_or_else(|| NegotiationError::NoMutualVersion {
            client_supports: client_supports.to_vec(),
            server_supports: server_supports.to_vec(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProtocolVersion as V;

    #[test]
    fn legacy_server_answers_requested_or_latest_legacy() {
        let server = [V::V2025_03_26, V::V2025_06_18, V::V2026_07_28];
        assert_eq!(
            legacy_server_select(&V::V2025_03_26, &server).unwrap(),
            V::V2025_03_26
        );
        assert_eq!(
            legacy_server_select(&V::V2025_11_25, &server).unwrap(),
            V::V2025_06_18
        );
        assert_eq!(
            legacy_server_select(&V::parse("1999-01-01"), &server).unwrap(),
            V::V2025_06_18
        );
        // A modern version named in initialize is not a legacy answer.
        assert_eq!(
            legacy_server_select(&V::V2026_07_28, &server).unwrap(),
            V::V2025_06_18
        );
        let err = legacy_server_select(&V::V2025_11_25, &[V::V2026_07_28]).unwrap_err();
        assert!(err.to_string().contains("2026-07-28"), "{err}");
    }

    #[test]
    fn legacy_client_accepts_counter_offer_in_its_set() {
        let client = [V::V2025_11_25, V::V2025_06_18];
        assert_eq!(
            legacy_client_accept(&V::V2025_11_25, &V::V2025_06_18, &client).unwrap(),
            V::V2025_06_18
        );
        let err = legacy_client_accept(&V::V2025_11_25, &V::V2025_03_26, &client).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("2025-03-26") && msg.contains("2025-06-18"),
            "{msg}"
        );
        // A dual-era client does not take a modern version as the answer
        // to `initialize`, though it supports it.
        let dual = [V::V2026_07_28, V::V2025_11_25];
        assert!(matches!(
            legacy_client_accept(&V::V2025_11_25, &V::V2026_07_28, &dual),
            Err(NegotiationError::ServerVersionRejected { .. })
        ));
    }

    #[test]
    fn modern_check_and_error_roundtrip() {
        let server = [V::V2026_07_28, V::V2025_11_25];
        assert!(modern_server_check(&V::V2026_07_28, &server).is_ok());
        let data = modern_server_check(&V::parse("1900-01-01"), &server).unwrap_err();
        let err = data.to_error();
        assert_eq!(err.code, -32022);
        let back = UnsupportedVersionData::from_error(&err).unwrap();
        assert_eq!(back, data);
        assert_eq!(back.requested.as_str(), "1900-01-01");
        // `requested` may be missing; `supported` may not.
        let lenient = ErrorObject::new(-32022, "x")
            .with_data(&serde_json::json!({"supported": ["2026-07-28"]}));
        let read = UnsupportedVersionData::from_error(&lenient).unwrap();
        assert_eq!(read.supported, vec![V::V2026_07_28]);
        assert_eq!(read.requested, V::Unknown(String::new()));
        // The same data under another code is not this error.
        let other = ErrorObject::new(-32602, "x")
            .with_data(&serde_json::json!({"supported": ["2026-07-28"]}));
        assert!(UnsupportedVersionData::from_error(&other).is_none());
        let no_list =
            ErrorObject::new(-32022, "x").with_data(&serde_json::json!({"requested": "x"}));
        assert!(UnsupportedVersionData::from_error(&no_list).is_none());
        // A legacy version sent as modern metadata is unsupported in that model.
        assert!(modern_server_check(&V::V2025_11_25, &server).is_err());
    }

    #[test]
    fn highest_mutual_version() {
        let client = [V::V2026_07_28, V::V2025_11_25, V::V2025_06_18];
        let server = [V::V2025_06_18, V::V2025_11_25, V::parse("2027-01-01")];
        assert_eq!(
            highest_mutual(&client, &server, None).unwrap(),
            V::V2025_11_25
        );
        assert!(highest_mutual(&client, &server, Some(Era::Modern)).is_err());
        let err = highest_mutual(&[V::V2025_03_26], &server, None).unwrap_err();
        assert!(err.to_string().contains("client supports 2025-03-26"));
    }
}
