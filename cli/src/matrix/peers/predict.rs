//! What the spec predicts for a cell with a peer in it: the negotiation
//! rule of [`expect::negotiated_by`] (the one our own matrix uses too), for
//! sides described by the revisions they offer, accept and serve (a peer's
//! manifest), then the scenario rows of [`expect::on_revision`].

use mcp_transport_core::ProtocolVersion as V;

use super::super::expect::{self, Expected, Failure, Prediction};
use super::super::scenario::Scenario;
use super::scenario::PeerScenario;

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
}
