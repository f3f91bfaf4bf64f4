//! What a peer cell's scenario observed, and how it compares with the
//! prediction and the peers' known quirks.

use mcp_transport_core::ProtocolVersion as V;
use serde_json::{Value, json};

use super::super::expect::{Failure, Prediction};
use super::super::harness::Observed;
use super::manifest::Quirk;

/// What happened, as the cell reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerObserved {
    /// The scenario ran: what it observed, as in our own matrix.
    Ran(Observed),
    /// The client cannot express the scenario (an adapter said `n/a`): never
    /// a pass, never a failure.
    NotExpressible(String),
}

/// How a scenario's observation compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// What the spec predicts.
    Pass,
    /// Not what the spec predicts, but what a listed quirk says.
    Quirk(String),
    /// A listed quirk's cell now behaves as the spec predicts: the quirk
    /// is gone (an SDK fix to notice).
    QuirkGone(String),
    /// The client cannot express it.
    NotApplicable(String),
    /// Neither the prediction nor a quirk.
    Fail,
}

impl Verdict {
    /// Whether the matrix run counts it as matching (a pass, a listed quirk,
    /// a gone quirk (reported) or n/a).
    pub fn accepted(&self) -> bool {
        !matches!(self, Verdict::Fail)
    }
}

/// How an observation says that the mechanism was absent: `resumed: false`.
pub const NO_RESUMPTION: &str = "no resumption (the call completed on its stream)";

/// The contract's `kind` of each failure the spec names.
const KINDS: [(&str, Failure); 4] = [
    ("no_mutual_revision", Failure::NoMutualRevision),
    ("input_unavailable", Failure::InputUnavailable),
    ("no_back_channel", Failure::NoBackChannel),
    ("not_resumable", Failure::NotResumable),
];

/// Writes the contract's JSON outcome line of an observation (what
/// [`from_client_line`] reads): `pass`, with `resumed: false` when the
/// mechanism was absent, or `fail` with the failure's `kind`.
pub fn to_client_line(revision: Option<&V>, observed: &Observed) -> String {
    let mut line = match observed {
        Observed::Works(why) => json!({ "outcome": "pass", "reason": why }),
        Observed::Absent(why) => {
            // The reader adds it back.
            let why = why
                .strip_suffix(NO_RESUMPTION)
                .and_then(|w| w.strip_suffix("; "))
                .unwrap_or(why);
            json!({ "outcome": "pass", "reason": why, "resumed": false })
        }
        Observed::Failed { kind, message } => {
            let kind = kind.and_then(|k| KINDS.iter().find(|(_, f)| *f == k).map(|(n, _)| *n));
            json!({ "outcome": "fail", "reason": message, "kind": kind })
        }
    };
    line["revision"] = json!(revision.map(V::as_str));
    line.to_string()
}

/// Reads a client adapter's JSON outcome line: the revision it negotiated
/// and what it observed. `resumed` (disconnect) false on a pass means the
/// call completed on its stream without a resumption: the mechanism absent.
pub fn from_client_line(line: &str) -> (Option<V>, PeerObserved) {
    let v: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return (
                None,
                PeerObserved::Ran(Observed::Failed {
                    kind: None,
                    message: format!("the client printed no JSON outcome ({e}): {line:?}"),
                }),
            );
        }
    };
    let revision = v["revision"].as_str().map(V::parse);
    let reason = v["reason"].as_str().unwrap_or_default().to_owned();
    let observed = match v["outcome"].as_str() {
        Some("pass") if v["resumed"] == false => {
            Observed::Absent(format!("{reason}; {NO_RESUMPTION}"))
        }
        Some("pass") => Observed::Works(reason),
        Some("n/a") => return (revision, PeerObserved::NotExpressible(reason)),
        Some("fail") => Observed::Failed {
            kind: v["kind"]
                .as_str()
                .and_then(|k| KINDS.iter().find(|(name, _)| *name == k))
                .map(|(_, f)| *f),
            message: reason,
        },
        other => Observed::Failed {
            kind: None,
            message: format!("outcome {other:?} is not pass, fail or n/a: {line}"),
        },
    };
    (revision, PeerObserved::Ran(observed))
}

/// Whether `quirk`'s `observed` describes this observation.
fn quirk_describes(quirk: &Quirk, observed: &Observed) -> bool {
    matches!(
        (quirk.observed.as_str(), observed),
        ("works", Observed::Works(_))
            | ("fails", Observed::Failed { .. })
            | ("absent", Observed::Absent(_))
    )
}

/// The verdict: the prediction first, then the quirks that apply to the
/// cell (`applicable`: already filtered by side, scenario, revision, mode
/// and counterpart).
pub fn verdict(
    prediction: &Prediction,
    negotiated: &Option<V>,
    observed: &PeerObserved,
    applicable: &[&Quirk],
) -> Verdict {
    let observed = match observed {
        PeerObserved::NotExpressible(why) => return Verdict::NotApplicable(why.clone()),
        PeerObserved::Ran(o) => o,
    };
    let predicted = prediction.matches(negotiated, observed);
    match (predicted, applicable.first()) {
        (true, None) => Verdict::Pass,
        (true, Some(_)) if applicable.iter().all(|q| q.intermittent) => Verdict::Pass,
        (true, Some(q)) => Verdict::QuirkGone(q.id.clone()),
        (false, _) => applicable
            .iter()
            .find(|q| quirk_describes(q, observed))
            .map(|q| Verdict::Quirk(q.id.clone()))
            .unwrap_or(Verdict::Fail),
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::expect::Expected;
    use super::*;

    fn works_on(rev: V) -> Prediction {
        Prediction {
            revision: Some(rev),
            expected: Expected::Works,
            spec: "s",
        }
    }

    fn quirk(observed: &str) -> Quirk {
        Quirk {
            id: "q".into(),
            side: "server".into(),
            scenario: "disconnect".into(),
            revisions: vec![],
            modes: vec![],
            against: vec![],
            observed: observed.into(),
            intermittent: false,
            what: "w".into(),
            upstream: String::new(),
            versions: String::new(),
        }
    }

    #[test]
    fn an_outcome_line_reads_back_as_what_was_observed() {
        let rev = V::V2025_11_25;
        let back = |o: Observed| from_client_line(&to_client_line(Some(&rev), &o));
        assert_eq!(
            back(Observed::Works("w".into())),
            (
                Some(rev.clone()),
                PeerObserved::Ran(Observed::Works("w".into()))
            )
        );
        let absent = Observed::Absent(format!("a; {NO_RESUMPTION}"));
        assert_eq!(
            back(absent.clone()),
            (Some(rev.clone()), PeerObserved::Ran(absent))
        );
        let (_, bare) = back(Observed::Absent("b".into()));
        assert_eq!(
            bare,
            PeerObserved::Ran(Observed::Absent(format!("b; {NO_RESUMPTION}")))
        );
        for (_, kind) in KINDS {
            let failed = Observed::Failed {
                kind: Some(kind),
                message: "m".into(),
            };
            assert_eq!(
                back(failed.clone()),
                (Some(rev.clone()), PeerObserved::Ran(failed))
            );
        }
        let unnamed = Observed::Failed {
            kind: None,
            message: "m".into(),
        };
        assert_eq!(
            from_client_line(&to_client_line(None, &unnamed)),
            (None, PeerObserved::Ran(unnamed))
        );
    }

    #[test]
    fn client_lines_map_to_observations() {
        let (rev, o) = from_client_line(
            r#"{"outcome":"pass","reason":"ok","revision":"2025-11-25","resumed":false}"#,
        );
        assert_eq!(rev, Some(V::V2025_11_25));
        assert!(matches!(o, PeerObserved::Ran(Observed::Absent(_))));
        let (_, o) = from_client_line(r#"{"outcome":"n/a","reason":"cannot"}"#);
        assert_eq!(o, PeerObserved::NotExpressible("cannot".into()));
        let (_, o) =
            from_client_line(r#"{"outcome":"fail","reason":"x","kind":"input_unavailable"}"#);
        assert!(matches!(
            o,
            PeerObserved::Ran(Observed::Failed {
                kind: Some(Failure::InputUnavailable),
                ..
            })
        ));
        let (_, o) =
            from_client_line(r#"{"outcome":"fail","reason":"x","kind":"no_back_channel"}"#);
        assert!(matches!(
            o,
            PeerObserved::Ran(Observed::Failed {
                kind: Some(Failure::NoBackChannel),
                ..
            })
        ));
        // A pass that resumed, or says nothing of it, is a plain pass.
        for line in [
            r#"{"outcome":"pass","reason":"ok","resumed":true}"#,
            r#"{"outcome":"pass","reason":"ok"}"#,
        ] {
            let (rev, o) = from_client_line(line);
            assert_eq!(rev, None);
            assert_eq!(o, PeerObserved::Ran(Observed::Works("ok".into())));
        }
        let kind = |k: &str| match from_client_line(&format!(
            r#"{{"outcome":"fail","reason":"x","kind":"{k}"}}"#
        )) {
            (_, PeerObserved::Ran(Observed::Failed { kind, .. })) => kind,
            other => panic!("{other:?}"),
        };
        assert_eq!(kind("no_mutual_revision"), Some(Failure::NoMutualRevision));
        assert_eq!(kind("not_resumable"), Some(Failure::NotResumable));
        assert_eq!(kind("timeout"), None);
        let (_, o) = from_client_line(r#"{"outcome":"maybe"}"#);
        assert!(matches!(
            o,
            PeerObserved::Ran(Observed::Failed { kind: None, message }) if message.contains("maybe")
        ));
        let (_, o) = from_client_line("not json");
        assert!(matches!(
            o,
            PeerObserved::Ran(Observed::Failed { kind: None, .. })
        ));
    }

    #[test]
    fn quirks_explain_deviations_and_are_reported_gone() {
        let p = works_on(V::V2025_11_25);
        let rev = Some(V::V2025_11_25);
        let absent = PeerObserved::Ran(Observed::Absent("no close".into()));
        let works = PeerObserved::Ran(Observed::Works("ok".into()));
        let q = quirk("absent");
        assert_eq!(verdict(&p, &rev, &absent, &[]), Verdict::Fail);
        assert_eq!(
            verdict(&p, &rev, &absent, &[&q]),
            Verdict::Quirk("q".into())
        );
        assert_eq!(
            verdict(&p, &rev, &works, &[&q]),
            Verdict::QuirkGone("q".into())
        );
        assert_eq!(verdict(&p, &rev, &works, &[]), Verdict::Pass);
        // A quirk that says something else does not excuse the deviation.
        let other = quirk("fails");
        assert_eq!(verdict(&p, &rev, &absent, &[&other]), Verdict::Fail);
        // An intermittent quirk that did not show this time is not gone.
        let racy = Quirk {
            intermittent: true,
            ..quirk("absent")
        };
        assert_eq!(verdict(&p, &rev, &works, &[&racy]), Verdict::Pass);
        assert_eq!(
            verdict(&p, &rev, &absent, &[&racy]),
            Verdict::Quirk("q".into())
        );
        // n/a is never a pass.
        let na = PeerObserved::NotExpressible("no such API".into());
        assert!(matches!(
            verdict(&p, &rev, &na, &[]),
            Verdict::NotApplicable(_)
        ));
        assert_ne!(verdict(&p, &rev, &na, &[]), Verdict::Pass);
    }

    #[test]
    fn only_a_fail_is_not_accepted() {
        for v in [
            Verdict::Pass,
            Verdict::Quirk("q".into()),
            Verdict::QuirkGone("q".into()),
            Verdict::NotApplicable("n/a".into()),
        ] {
            assert!(v.accepted(), "{v:?}");
        }
        assert!(!Verdict::Fail.accepted());
    }
}
