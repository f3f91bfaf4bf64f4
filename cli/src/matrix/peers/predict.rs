//! What the spec predicts for a cell with a peer in it: the negotiation
//! rule of [`expect::negotiated_by`] (the one our own matrix uses too), for
//! sides described by the revisions they offer, accept and serve (a peer's
//! manifest), then the scenario rows of [`expect::on_revision`] — for a
//! server that can do what the spec lets it, unless its mode says it
//! cannot ([`ServerMode`], a manifest's `[server.mode.NAME]`).

use mcp_transport_core::ProtocolVersion as V;

use super::super::expect::{self, Expected, Failure, Prediction};
use super::super::scenario::Scenario;
use super::manifest::ModeLimits;
use super::scenario::PeerScenario;

/// What the server of a cell does beyond the revisions it serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerMode {
    /// It answers with JSON, never SSE (a `json` mode).
    pub json: bool,
    /// What its mode cannot do.
    pub limits: ModeLimits,
}

impl ServerMode {
    /// An SSE server that can do everything (ours, and a peer mode without
    /// limits).
    pub const FULL: ServerMode = ServerMode {
        json: false,
        limits: ModeLimits {
            back_channel: true,
            resumption: true,
        },
    };
}

/// Transports, "Sending Messages to the Server": the requests a server
/// sends before its response are a MAY.
const NO_BACK_CHANNEL: &str = "Transports, \"Sending Messages to the Server\": \"The server MAY send JSON-RPC requests and notifications before sending the JSON-RPC response\" — a server without a way to receive the client's answer (no session: the manifest's back_channel = false) does not ask, and the call ends with an error (Tools, \"Error Handling\": a protocol error or a tool execution error), no hang";
/// SEP-1699: closing a stream for a resumption is a server MAY.
const NO_RESUMPTION: &str = "2025-11-25 Transports, \"Sending Messages to the Server\" (SEP-1699): the server \"MAY close the connection\" before the response and let the client resume — a server that does not (no event store: the manifest's resumption = false) completes the call on its POST stream, every event once, no retry, no GET";

pub use super::super::expect::ClientModel;

/// The revision a client and a server serving `served` negotiate:
/// [`expect::negotiated_by`], the rule our own matrix uses too.
pub fn negotiated(client: &ClientModel, served: &[V]) -> (Option<V>, &'static str) {
    expect::negotiated_by(client, served)
}

/// The prediction for one scenario of a cell: the negotiated revision, then
/// what the scenario does there (the same rows as our own matrix).
pub fn predict(
    client: &ClientModel,
    served: &[V],
    mode: ServerMode,
    sc: PeerScenario,
) -> Prediction {
    match negotiated(client, served) {
        (None, spec) => Prediction {
            revision: None,
            expected: Expected::Fails(Failure::NoMutualRevision),
            spec,
        },
        (Some(rev), _) => {
            let scenario = match sc {
                PeerScenario::Call if mode.json => Scenario::Json,
                other => other.scenario(),
            };
            let (expected, spec) = match scenario {
                Scenario::Input if !mode.limits.back_channel && !rev.is_modern() => {
                    (Expected::Fails(Failure::NoBackChannel), NO_BACK_CHANNEL)
                }
                Scenario::Disconnect if !mode.limits.resumption && rev.has(|f| f.sse_polling) => {
                    (Expected::NotApplicable, NO_RESUMPTION)
                }
                _ => expect::on_revision(&rev, scenario),
            };
            Prediction {
                revision: Some(rev),
                expected,
                spec,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::harness::Observed;
    use super::*;

    fn model(offers: &[V], accepts: &[V]) -> ClientModel {
        ClientModel {
            offers: offers.to_vec(),
            accepts: accepts.to_vec(),
        }
    }

    const LEGACY: [V; 3] = [V::V2025_03_26, V::V2025_06_18, V::V2025_11_25];

    #[test]
    fn a_legacy_client_takes_a_counter_offer_it_accepts() {
        let ts_0326 = model(&[V::V2025_03_26], &LEGACY);
        assert_eq!(negotiated(&ts_0326, &LEGACY).0, Some(V::V2025_03_26));
        assert_eq!(
            negotiated(&ts_0326, &[V::V2025_11_25]).0,
            Some(V::V2025_11_25)
        );
        assert_eq!(negotiated(&ts_0326, &[V::V2026_07_28]).0, None);
        let strict = model(&[V::V2025_03_26], &[V::V2025_03_26]);
        assert_eq!(negotiated(&strict, &[V::V2025_11_25]).0, None);
    }

    #[test]
    fn modern_first_then_initialize() {
        let auto = model(&[V::V2026_07_28, V::V2025_11_25], &LEGACY);
        let all = [V::V2025_11_25, V::V2026_07_28];
        assert_eq!(negotiated(&auto, &all).0, Some(V::V2026_07_28));
        assert_eq!(negotiated(&auto, &LEGACY).0, Some(V::V2025_11_25));
        let modern = model(&[V::V2026_07_28], &[]);
        assert_eq!(negotiated(&modern, &LEGACY).0, None);
        assert_eq!(negotiated(&modern, &all).0, Some(V::V2026_07_28));
    }

    #[test]
    fn a_no_back_channel_prediction_takes_either_error_form_but_not_a_hang() {
        let rev = Some(V::V2025_11_25);
        let p = Prediction {
            revision: rev.clone(),
            expected: Expected::Fails(Failure::NoBackChannel),
            spec: "",
        };
        let failed = |kind| Observed::Failed {
            kind,
            message: String::new(),
        };
        assert!(p.matches(&rev, &failed(Some(Failure::NoBackChannel))));
        assert!(p.matches(&rev, &failed(Some(Failure::InputUnavailable))));
        assert!(!p.matches(&rev, &failed(None)), "a hang or another failure");
        assert!(!p.matches(&rev, &Observed::Works(String::new())));
        let tool_error = Prediction {
            expected: Expected::Fails(Failure::InputUnavailable),
            ..p
        };
        assert!(!tool_error.matches(&rev, &failed(Some(Failure::NoBackChannel))));
    }

    #[test]
    fn a_mode_s_limits_change_only_what_they_name() {
        let legacy = model(&[V::V2025_11_25], &LEGACY);
        let modern = model(&[V::V2026_07_28], &[]);
        let all = [
            V::V2025_03_26,
            V::V2025_06_18,
            V::V2025_11_25,
            V::V2026_07_28,
        ];
        let stateless = ServerMode {
            json: false,
            limits: ModeLimits {
                back_channel: false,
                resumption: false,
            },
        };
        let full = |c: &ClientModel, sc| predict(c, &all, ServerMode::FULL, sc).expected;
        let limited = |c: &ClientModel, sc| predict(c, &all, stateless, sc).expected;
        // Legacy: the server cannot ask, and does not close streams.
        assert_eq!(full(&legacy, PeerScenario::Input), Expected::Works);
        assert_eq!(
            limited(&legacy, PeerScenario::Input),
            Expected::Fails(Failure::NoBackChannel)
        );
        assert_eq!(full(&legacy, PeerScenario::Disconnect), Expected::Works);
        assert_eq!(
            limited(&legacy, PeerScenario::Disconnect),
            Expected::NotApplicable
        );
        // Untouched: the other scenarios, and 2026-07-28 (MRTR needs no
        // back-channel; it has no resumption anyway).
        for sc in [PeerScenario::Call, PeerScenario::Progress] {
            assert_eq!(limited(&legacy, sc), full(&legacy, sc));
        }
        for sc in PeerScenario::ALL {
            assert_eq!(limited(&modern, sc), full(&modern, sc), "{sc}");
        }
        // A JSON mode's call is predicted as the JSON scenario, an SSE
        // server's as the SSE one (their spec texts tell them apart).
        let json = ServerMode {
            json: true,
            ..ServerMode::FULL
        };
        let rev = V::V2025_11_25;
        let spec = |mode, sc| predict(&legacy, &all, mode, sc).spec;
        assert_eq!(
            spec(json, PeerScenario::Call),
            expect::on_revision(&rev, Scenario::Json).1
        );
        assert_eq!(
            spec(ServerMode::FULL, PeerScenario::Call),
            expect::on_revision(&rev, Scenario::Sse).1
        );
        assert_eq!(
            spec(json, PeerScenario::Progress),
            expect::on_revision(&rev, Scenario::Progress).1
        );
        // Without elicitation (2025-03-26) the server cannot ask either.
        let old = model(&[V::V2025_03_26], &[V::V2025_03_26]);
        assert_eq!(
            limited(&old, PeerScenario::Input),
            Expected::Fails(Failure::NoBackChannel)
        );
    }
}
