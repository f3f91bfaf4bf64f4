//! What the spec predicts for a cell with a peer in it: the same rules as
//! [`expect`](super::super::expect), written for sides described by the
//! revisions they offer, accept and serve (a peer's manifest) rather than
//! by our fixed configurations, and the scenario rows of
//! [`expect::on_revision`].

use mcp_transport_core::ProtocolVersion as V;

use super::super::ClientKind;
use super::super::expect::{
    self, Expected, Failure, HTTP_SSE_CLIENT_NEW_SERVER, HTTP_SSE_SAME, HTTP_SSE_SERVER, LIFECYCLE,
    MATRIX_DUAL_LEGACY, MATRIX_DUAL_MODERN, MATRIX_LEGACY_DUAL, MATRIX_LEGACY_MODERN,
    MATRIX_MODERN_LEGACY, MATRIX_MODERN_MODERN, Prediction,
};
use super::super::scenario::Scenario;
use super::scenario::PeerScenario;

/// A client as negotiation sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientModel {
    /// What it offers, most preferred first (modern revisions are tried
    /// before `initialize`).
    pub offers: Vec<V>,
    /// The legacy revisions it takes in a server's counter-offer.
    pub accepts: Vec<V>,
}

impl ClientModel {
    /// One of our client configurations: it accepts a counter-offer only
    /// among the revisions it is configured with.
    pub fn of(kind: ClientKind) -> ClientModel {
        let offers = kind.revisions();
        ClientModel {
            accepts: offers.clone(),
            offers,
        }
    }
}

fn streamable_legacy(v: &V) -> bool {
    !v.is_modern() && *v != V::V2024_11_05
}

/// The revision a client and a server serving `served` negotiate (`None`:
/// it must fail), with the spec text behind it.
pub fn negotiated(client: &ClientModel, served: &[V]) -> (Option<V>, &'static str) {
    let client_modern: Vec<&V> = client.offers.iter().filter(|v| v.is_modern()).collect();
    let client_legacy: Vec<&V> = client
        .offers
        .iter()
        .filter(|v| streamable_legacy(v))
        .collect();
    let served_legacy: Vec<&V> = served.iter().filter(|v| streamable_legacy(v)).collect();
    let served_modern = served.iter().any(V::is_modern);
    let dual = !client_modern.is_empty() && !client_legacy.is_empty();
    if let Some(v) = client_modern.iter().find(|v| served.contains(v)) {
        let spec = if dual {
            MATRIX_DUAL_MODERN
        } else {
            MATRIX_MODERN_MODERN
        };
        return (Some((*v).clone()), spec);
    }
    let http_sse_client = client.offers.contains(&V::V2024_11_05);
    let http_sse_server = served.contains(&V::V2024_11_05);
    if client_legacy.is_empty() {
        return match (http_sse_client, http_sse_server) {
            (true, true) => (Some(V::V2024_11_05), HTTP_SSE_SAME),
            (true, false) => (None, HTTP_SSE_CLIENT_NEW_SERVER),
            _ => (None, MATRIX_MODERN_LEGACY),
        };
    }
    let Some(latest) = served_legacy.iter().max() else {
        return if http_sse_server {
            (None, HTTP_SSE_SERVER)
        } else {
            (None, MATRIX_LEGACY_MODERN)
        };
    };
    let spec = if dual {
        MATRIX_DUAL_LEGACY
    } else if served_modern {
        MATRIX_LEGACY_DUAL
    } else {
        LIFECYCLE
    };
    let offer = client_legacy[0];
    if served_legacy.contains(&offer) {
        return (Some(offer.clone()), spec);
    }
    if client.accepts.contains(latest) {
        (Some((*latest).clone()), LIFECYCLE)
    } else {
        (None, LIFECYCLE)
    }
}

/// The prediction for one scenario of a cell: the negotiated revision, then
/// what the scenario does there (the same rows as our own matrix).
pub fn predict(
    client: &ClientModel,
    served: &[V],
    json_mode: bool,
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
                PeerScenario::Call if json_mode => Scenario::Json,
                other => other.scenario(),
            };
            let (expected, spec) = expect::on_revision(&rev, scenario);
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
    fn our_configurations_agree_with_our_own_table() {
        use super::super::super::ServerKind;
        for c in ClientKind::ALL {
            for s in ServerKind::ALL {
                if s == ServerKind::S1105 || c == ClientKind::Future {
                    continue; // HTTP+SSE fallback and -32022 retry: ours only
                }
                let ours = expect::negotiated(c, s).0;
                let generic = negotiated(&ClientModel::of(c), &s.revisions()).0;
                assert_eq!(ours, generic, "{c} x {s}");
            }
        }
    }
}
