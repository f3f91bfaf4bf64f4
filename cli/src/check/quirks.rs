//! Known quirks of named implementations, by version range, kept in one
//! data file: `quirks.json` beside this module (embedded at build time).
//!
//! Each entry names an implementation as it names itself in `serverInfo`
//! (compared case-insensitively), a semver range (`semver::VersionReq`
//! syntax, or `*` for every version, pre-releases and non-semver versions
//! included), the quirk, the check that observes it (or `null`), where it
//! is documented, and a note (for example why the range is `*`). Only
//! quirks this workspace's own design notes already record are listed.
//!
//! A quirk is shown when the peer's name matches and its version falls in
//! the range; the report then says whether our check observed it on this
//! server. A server built on an SDK usually reports its *own* name, so a
//! quirk list keyed by SDK name only catches servers that keep the SDK's
//! default identity (rmcp's `Implementation::from_build_env()` reports
//! `rmcp` and the rmcp version).

use serde::{Deserialize, Serialize};

use super::{Check, Outcome, Peer};

/// The data file.
const DATA: &str = include_str!("quirks.json");

/// One entry of `quirks.json`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Quirk {
    /// The implementation's `serverInfo.name`.
    pub implementation: String,
    /// The versions it affects: a semver range, or `*`.
    pub versions: String,
    /// What it does.
    pub quirk: String,
    /// The check (see `check::id`) that observes it, if one does.
    pub check: Option<String>,
    /// Where it is documented.
    pub source: String,
    /// Why the range is what it is, or anything else worth knowing.
    #[serde(default)]
    pub note: Option<String>,
}

/// Every known quirk, with its range validated.
pub fn known() -> Result<Vec<Quirk>, String> {
    parse(DATA)
}

fn parse(data: &str) -> Result<Vec<Quirk>, String> {
    let quirks: Vec<Quirk> =
        serde_json::from_str(data).map_err(|e| format!("quirks.json is malformed: {e}"))?;
    for q in &quirks {
        if q.versions.trim() != "*" {
            semver::VersionReq::parse(&q.versions).map_err(|e| {
                format!(
                    "quirks.json: bad version range {:?} for {}: {e}",
                    q.versions, q.implementation
                )
            })?;
        }
    }
    Ok(quirks)
}

/// Whether our check saw the quirk on this server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "snake_case")]
pub enum Observation {
    /// The check failed: the server does it.
    Observed(String),
    /// The check passed: this server does not.
    NotObserved(String),
    /// No check could tell (none exists, it did not run, or it was not
    /// applicable or inconclusive).
    NotChecked(String),
}

/// A known quirk that applies to the peer.
#[derive(Clone, Debug, Serialize)]
pub struct QuirkFinding {
    /// The entry.
    #[serde(flatten)]
    pub quirk: Quirk,
    /// `false` when the range could not be checked because the peer's
    /// version is not semver (the quirk may or may not apply).
    pub version_checked: bool,
    /// What our check saw.
    pub observation: Observation,
}

/// Whether `q` applies to `peer`: `Some(true)` when the name matches and
/// the version is in range, `Some(false)` when the name matches but the
/// version is not semver (and the range is not `*`), `None` otherwise.
pub fn applies(q: &Quirk, peer: &Peer) -> Option<bool> {
    if !q
        .implementation
        .trim()
        .eq_ignore_ascii_case(peer.name.trim())
    {
        return None;
    }
    if q.versions.trim() == "*" {
        return Some(true);
    }
    let req = semver::VersionReq::parse(&q.versions).ok()?;
    match &peer.semver {
        Some(v) => req.matches(v).then_some(true),
        None => Some(false),
    }
}

/// The known quirks that apply to `peer`, each with what `checks` saw.
pub fn flag(peer: &Peer, checks: &[Check]) -> Vec<QuirkFinding> {
    let quirks = match known() {
        Ok(q) => q,
        Err(e) => {
            tracing::warn!("{e}");
            return Vec::new();
        }
    };
    quirks
        .into_iter()
        .filter_map(|q| {
            let version_checked = applies(&q, peer)?;
            let observation = observe(&q, checks);
            Some(QuirkFinding {
                quirk: q,
                version_checked,
                observation,
            })
        })
        .collect()
}

fn observe(q: &Quirk, checks: &[Check]) -> Observation {
    let Some(check) = &q.check else {
        return Observation::NotChecked(
            q.note
                .clone()
                .unwrap_or_else(|| "no check observes this".into()),
        );
    };
    let ran: Vec<&Check> = checks.iter().filter(|c| c.id == check).collect();
    if let Some(c) = ran.iter().find(|c| c.outcome.is_fail()) {
        return Observation::Observed(format!(
            "{check} failed at {}: {}",
            c.revision,
            c.outcome.reason().unwrap_or_default()
        ));
    }
    if let Some(c) = ran.iter().find(|c| c.outcome == Outcome::Pass) {
        return Observation::NotObserved(format!("{check} passed at {}", c.revision));
    }
    match ran.first() {
        Some(c) => Observation::NotChecked(format!(
            "{check} was {} at {}: {}",
            c.outcome.label(),
            c.revision,
            c.outcome.reason().unwrap_or_default()
        )),
        None => Observation::NotChecked(format!(
            "{check} did not run (the server does not speak its revision)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::id;
    use super::*;
    use mcp_transport_core::ProtocolVersion;
    use serde_json::json;

    fn peer(name: &str, version: &str) -> Peer {
        Peer::from_server_info(
            &json!({ "name": name, "version": version }),
            &ProtocolVersion::V2025_11_25,
        )
        .unwrap()
    }

    #[test]
    fn the_data_file_is_valid_and_names_real_checks() {
        let quirks = known().unwrap();
        assert!(!quirks.is_empty());
        for q in &quirks {
            if let Some(c) = &q.check {
                assert!(id::ALL.contains(&c.as_str()), "unknown check {c}");
            }
            if q.versions.trim() == "*" {
                assert!(q.note.is_some(), "a * range needs a note: {}", q.quirk);
            }
        }
    }

    /// Sources are in this repository or public addresses, never a path
    /// outside it.
    #[test]
    fn sources_stay_inside_the_repository() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for q in known().unwrap() {
            assert!(!q.source.contains("../"), "{}", q.source);
            for part in q.source.split("; ") {
                if let Some(path) = part.split(',').next().filter(|p| p.starts_with("docs/")) {
                    let text = std::fs::read_to_string(root.join(path))
                        .unwrap_or_else(|e| panic!("{path}: {e}"));
                    let section = part.split_once(", ").map(|(_, s)| s.trim());
                    if let Some(section) = section {
                        assert!(text.contains(&format!("## {section}")), "{path}: {section}");
                    }
                } else {
                    assert!(part.contains("https://"), "{part}");
                }
            }
        }
    }

    #[test]
    fn matching_by_name_and_range() {
        let q = |versions: &str| Quirk {
            implementation: "rmcp".into(),
            versions: versions.into(),
            quirk: "q".into(),
            check: None,
            source: "s".into(),
            note: None,
        };
        assert_eq!(applies(&q("<0.9.0"), &peer("RMCP", "0.8.0")), Some(true));
        assert_eq!(applies(&q("<0.9.0"), &peer("rmcp", "0.9.1")), None);
        assert_eq!(applies(&q("<0.9.0"), &peer("rmcp", "dev")), Some(false));
        assert_eq!(applies(&q("*"), &peer("rmcp", "1.0.0-alpha.1")), Some(true));
        assert_eq!(applies(&q("*"), &peer("other", "0.8.0")), None);
    }

    #[test]
    fn a_bad_range_in_the_data_is_refused() {
        let entry = |versions: &str| {
            json!([{"implementation": "x", "versions": versions, "quirk": "q",
                "check": null, "source": "s"}])
            .to_string()
        };
        assert_eq!(parse(&entry(" * ")).unwrap()[0].versions, " * ");
        assert_eq!(parse(&entry(">=1.2, <2")).unwrap().len(), 1);
        let e = parse(&entry("not a range")).unwrap_err();
        assert!(e.contains("bad version range") && e.contains("x"), "{e}");
        assert!(parse("{").unwrap_err().contains("malformed"));
    }

    fn ran(id: &'static str, revision: ProtocolVersion, outcome: Outcome) -> Check {
        Check::new(id, &revision, "t", super::super::spec::PRIMING, outcome)
    }

    #[test]
    fn a_quirk_is_observed_by_its_own_check_failing() {
        let q = Quirk {
            implementation: "rmcp".into(),
            versions: "*".into(),
            quirk: "q".into(),
            check: Some(id::EVENT_IDS_UNIQUE.into()),
            source: "s".into(),
            note: None,
        };
        let (old, new) = (ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25);
        let other = ran("other", new.clone(), Outcome::Fail("no".into()));
        assert!(matches!(
            observe(&q, std::slice::from_ref(&other)),
            Observation::NotChecked(why) if why.contains("did not run")
        ));
        // A failure at any revision is the quirk seen, before a pass.
        let pass = ran(id::EVENT_IDS_UNIQUE, old.clone(), Outcome::Pass);
        let fail = ran(
            id::EVENT_IDS_UNIQUE,
            new.clone(),
            Outcome::Fail("twice".into()),
        );
        assert_eq!(
            observe(&q, &[other.clone(), pass.clone(), fail]),
            Observation::Observed(format!("{} failed at {new}: twice", id::EVENT_IDS_UNIQUE))
        );
        // A pass, before an inconclusive run, is the quirk not seen.
        let unsure = ran(
            id::EVENT_IDS_UNIQUE,
            new.clone(),
            Outcome::Inconclusive("?".into()),
        );
        assert_eq!(
            observe(&q, &[unsure.clone(), pass]),
            Observation::NotObserved(format!("{} passed at {old}", id::EVENT_IDS_UNIQUE))
        );
        assert!(matches!(
            observe(&q, &[unsure]),
            Observation::NotChecked(why) if why.ends_with(": ?")
        ));
        let unchecked = Quirk {
            check: None,
            note: Some("why".into()),
            ..q
        };
        assert_eq!(
            observe(&unchecked, &[other]),
            Observation::NotChecked("why".into())
        );
    }

    #[test]
    fn only_the_quirks_of_the_peer_are_flagged() {
        let fail = ran(
            id::EVENT_IDS_UNIQUE,
            ProtocolVersion::V2025_11_25,
            Outcome::Fail("twice".into()),
        );
        let found = flag(&peer("rmcp", "1.2.0"), std::slice::from_ref(&fail));
        assert!(!found.is_empty());
        assert!(
            found
                .iter()
                .all(|f| f.quirk.implementation == "rmcp" && f.version_checked)
        );
        assert!(found.iter().any(|f| {
            f.quirk.check.as_deref() == Some(id::EVENT_IDS_UNIQUE)
                && matches!(f.observation, Observation::Observed(_))
        }));
        assert!(flag(&peer("someone-else", "1.2.0"), &[fail]).is_empty());
    }
}
