//! Rendering a [`Report`]: a plain-text table, markdown, JSON, or an HTML
//! page ([`super::html`]).
//!
//! The text formats list the revisions probed, one row per check (revision,
//! id, level, result, and for anything but a pass the reason), the failures
//! by level, the known quirks of the peer, and then every check once with
//! its level, the spec sentence it tests and that sentence's section on the
//! published spec site.

use std::fmt::Write as _;

use serde::Serialize;

use super::{Level, Observation, ProbeAnswer, Report};
use crate::table;

/// Output format of `check-server`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned plain text.
    #[default]
    Table,
    /// GitHub-flavoured markdown.
    Markdown,
    /// The whole report as JSON (for machines).
    Json,
    /// One self-contained HTML page ([`super::html`]).
    Html,
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Table => text(report, false),
        Format::Markdown => text(report, true),
        Format::Json => json(report),
        Format::Html => super::html::render(report),
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    passed: bool,
    speaks: Vec<String>,
    /// Failed checks by level (`MUST`, `SHOULD`, `MAY`, `POLICY`).
    failures_by_level: std::collections::BTreeMap<Level, usize>,
    #[serde(flatten)]
    report: &'a Report,
}

fn json(report: &Report) -> String {
    let wrapped = JsonReport {
        passed: report.passed(),
        speaks: report.speaks().iter().map(ToString::to_string).collect(),
        failures_by_level: [Level::Must, Level::Should, Level::May, Level::Policy]
            .into_iter()
            .map(|l| {
                let n = report.failures().iter().filter(|c| c.level == l).count();
                (l, n)
            })
            .collect(),
        report,
    };
    let mut s = serde_json::to_string_pretty(&wrapped)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialize the report: {e}\"}}"));
    s.push('\n');
    s
}

fn answer_label(a: ProbeAnswer) -> &'static str {
    match a {
        ProbeAnswer::Accepted => "accepted",
        ProbeAnswer::CounterOffered => "counter-offered",
        ProbeAnswer::Refused => "refused",
    }
}

fn observation_label(o: &Observation) -> (&'static str, &str) {
    match o {
        Observation::Observed(d) => ("observed", d),
        Observation::NotObserved(d) => ("not observed", d),
        Observation::NotChecked(d) => ("not checked", d),
    }
}

/// Rows as an aligned plain-text table, or a markdown table.
fn table(out: &mut String, header: &[&str], rows: &[Vec<String>], markdown: bool) {
    out.push_str(&table::render(
        header,
        rows,
        table::Style::markdown_if(markdown),
    ));
}

fn text(report: &Report, md: bool) -> String {
    let mut out = String::new();
    let h = |out: &mut String, title: &str| {
        if md {
            let _ = writeln!(out, "\n### {title}\n");
        } else {
            let _ = writeln!(out, "\n{title}");
        }
    };
    if md {
        let _ = writeln!(out, "## check-server {}", report.url);
    } else {
        let _ = writeln!(out, "check-server {}", report.url);
    }
    match &report.peer {
        Some(p) => {
            let semver = match &p.semver {
                Some(v) => format!("semver {v}"),
                None => "not semver".to_owned(),
            };
            let _ = writeln!(
                out,
                "{}server: {} {} ({semver}; serverInfo from the {} probe)",
                if md { "\n" } else { "" },
                p.name,
                p.version,
                p.revision
            );
        }
        None => {
            let _ = writeln!(
                out,
                "{}server: no serverInfo seen",
                if md { "\n" } else { "" }
            );
        }
    }

    h(&mut out, "Revisions");
    let rows: Vec<Vec<String>> = report
        .revisions
        .iter()
        .map(|p| {
            vec![
                p.revision.to_string(),
                answer_label(p.answer).to_owned(),
                p.detail.clone(),
            ]
        })
        .collect();
    table(&mut out, &["revision", "answer", "detail"], &rows, md);
    let speaks = report.speaks();
    let _ = writeln!(
        out,
        "{}speaks: {}",
        if md { "\n" } else { "" },
        if speaks.is_empty() {
            "none of the revisions tried".to_owned()
        } else {
            mcp_transport_core::version::list(&speaks)
        }
    );

    if !report.checks.is_empty() {
        h(&mut out, "Checks");
        let rows: Vec<Vec<String>> = report
            .checks
            .iter()
            .map(|c| {
                vec![
                    c.revision.to_string(),
                    c.id.to_owned(),
                    c.level.label().to_owned(),
                    c.outcome.label().to_owned(),
                    c.outcome.reason().unwrap_or_default().to_owned(),
                ]
            })
            .collect();
        table(
            &mut out,
            &["revision", "check", "level", "result", "detail"],
            &rows,
            md,
        );
        let count = |label: &str| {
            report
                .checks
                .iter()
                .filter(|c| c.outcome.label() == label)
                .count()
        };
        let _ = writeln!(
            out,
            "{}{} passed, {} failed, {} not applicable, {} inconclusive, {} warnings",
            if md { "\n" } else { "" },
            count("pass"),
            count("FAIL"),
            count("n/a"),
            count("inconclusive"),
            count("warn")
        );
        let by_level: Vec<String> = [Level::Must, Level::Should, Level::May, Level::Policy]
            .into_iter()
            .map(|l| {
                let n = report.failures().iter().filter(|c| c.level == l).count();
                format!("{l} {n}")
            })
            .collect();
        let _ = writeln!(
            out,
            "{}failed by level: {}",
            if md { "\n" } else { "" },
            by_level.join(", ")
        );
    }

    if let Some(p) = &report.peer
        && !report.quirks.is_empty()
    {
        h(
            &mut out,
            &format!("Known quirks of {} {} (quirks.json)", p.name, p.version),
        );
        for f in &report.quirks {
            let (label, detail) = observation_label(&f.observation);
            let range = if f.version_checked {
                format!("versions {}", f.quirk.versions)
            } else {
                format!(
                    "versions {}, not checked: {:?} is not semver",
                    f.quirk.versions, p.version
                )
            };
            let _ = writeln!(out, "- [{label}] {} ({range})", f.quirk.quirk);
            let _ = writeln!(out, "  {detail}");
            let _ = writeln!(out, "  source: {}", f.quirk.source);
            if let Some(n) = &f.quirk.note {
                let _ = writeln!(out, "  note: {n}");
            }
        }
    }

    if !report.checks.is_empty() {
        h(&mut out, "What each check tests");
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for c in &report.checks {
            if seen.contains(&(c.id, c.spec)) {
                continue;
            }
            seen.push((c.id, c.spec));
            let same: Vec<&super::Check> = report
                .checks
                .iter()
                .filter(|o| o.id == c.id && o.spec == c.spec)
                .collect();
            let revs: Vec<String> = same.iter().map(|o| o.revision.to_string()).collect();
            let mut sources: Vec<(&str, &str)> = Vec::new();
            for o in &same {
                if !sources.contains(&(o.spec_section, o.spec_url.as_str())) {
                    sources.push((o.spec_section, o.spec_url.as_str()));
                }
            }
            if md {
                let cited: Vec<String> = sources
                    .iter()
                    .map(|(section, url)| format!("[{section}]({url})"))
                    .collect();
                let _ = writeln!(
                    out,
                    "- **{}** [{}] ({}): {}\n  > {}\n  — {}",
                    c.id,
                    c.level,
                    revs.join(", "),
                    c.title,
                    c.spec,
                    cited.join(", ")
                );
            } else {
                let cited: Vec<String> = sources
                    .iter()
                    .map(|(section, url)| format!("\"{section}\" {url}"))
                    .collect();
                let _ = writeln!(
                    out,
                    "- {} [{}] ({}): {}",
                    c.id,
                    c.level,
                    revs.join(", "),
                    c.title
                );
                let _ = writeln!(out, "    \"{}\"", c.spec);
                let _ = writeln!(out, "    — {}", cited.join(", "));
            }
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::detect::RevisionProbe;
    use super::super::quirks::{Quirk, QuirkFinding};
    use super::super::{Check, Outcome, Peer, spec};
    use super::*;
    use mcp_transport_core::ProtocolVersion as V;

    fn check(id: &'static str, rev: V, s: spec::Spec, outcome: Outcome) -> Check {
        Check::new(id, &rev, "title", s, outcome)
    }

    fn probe(revision: V, answer: ProbeAnswer) -> RevisionProbe {
        RevisionProbe {
            revision,
            answer,
            detail: format!("{answer:?}"),
        }
    }

    /// A report of every kind of row: three answers, each outcome, one
    /// check at two revisions from two pages, a quirk on a non-semver
    /// version.
    pub(crate) fn report() -> Report {
        let fail = |why: &str| Outcome::Fail(why.into());
        Report {
            url: "http://127.0.0.1:1/mcp".into(),
            peer: Peer::from_server_info(
                &serde_json::json!({"name": "rmcp", "version": "dev"}),
                &V::V2025_11_25,
            ),
            revisions: vec![
                probe(V::V2025_11_25, ProbeAnswer::Accepted),
                probe(V::V2025_06_18, ProbeAnswer::CounterOffered),
                probe(V::V2026_07_28, ProbeAnswer::Refused),
            ],
            checks: vec![
                check(
                    "origin",
                    V::V2025_11_25,
                    spec::origin(&V::V2025_11_25).0,
                    fail("200"),
                ),
                check(
                    "origin",
                    V::V2025_06_18,
                    spec::origin(&V::V2025_11_25).0,
                    Outcome::Pass,
                ),
                check("priming", V::V2025_11_25, spec::PRIMING, fail("none")),
                // Another check quoting the same sentence.
                check(
                    "resumed-close",
                    V::V2025_11_25,
                    spec::PRIMING_POLICY,
                    Outcome::Pass,
                ),
                check(
                    "replay",
                    V::V2025_11_25,
                    spec::REPLAY_AFTER,
                    Outcome::NotApplicable("-".into()),
                ),
                check(
                    "retry",
                    V::V2025_11_25,
                    spec::RETRY,
                    Outcome::Inconclusive("?".into()),
                ),
                check(
                    "accept",
                    V::V2025_11_25,
                    spec::accept(&V::V2025_11_25),
                    Outcome::Warn("!".into()),
                ),
            ],
            quirks: vec![QuirkFinding {
                quirk: Quirk {
                    implementation: "rmcp".into(),
                    versions: "<2".into(),
                    quirk: "the quirk".into(),
                    check: Some("priming".into()),
                    source: "the source".into(),
                    note: Some("the note".into()),
                },
                version_checked: false,
                observation: Observation::Observed("seen".into()),
            }],
        }
    }

    #[test]
    fn the_table_has_every_part_of_the_report() {
        let r = report();
        let t = render(&r, Format::Table);
        for part in [
            "check-server http://127.0.0.1:1/mcp\n",
            "server: rmcp dev (not semver; serverInfo from the 2025-11-25 probe)",
            "\nRevisions\n",
            "accepted",
            "counter-offered",
            "refused",
            "speaks: 2025-11-25\n",
            "\nChecks\n",
            "2 passed, 2 failed, 1 not applicable, 1 inconclusive, 1 warnings",
            "failed by level: MUST 1, SHOULD 1, MAY 0, POLICY 0",
            "- [observed] the quirk (versions <2, not checked: \"dev\" is not semver)\n  seen\n  source: the source\n  note: the note\n",
            "\nWhat each check tests\n",
            "- origin [MUST] (2025-11-25, 2025-06-18): title\n",
            "- priming [SHOULD] (2025-11-25): title\n",
            "- resumed-close [POLICY] (2025-11-25): title\n",
        ] {
            assert!(t.contains(part), "{part:?} not in\n{t}");
        }
        // A check at two revisions is described once, its page once.
        assert_eq!(t.matches("- origin [MUST]").count(), 1, "{t}");
        assert_eq!(t.matches("\"Security Warning\" https://").count(), 1, "{t}");
        assert!(!t.contains("###"), "{t}");
    }

    #[test]
    fn markdown_cites_with_links_and_heads_each_part() {
        let r = report();
        let md = render(&r, Format::Markdown);
        for part in [
            "## check-server http://127.0.0.1:1/mcp\n",
            "\nserver: rmcp dev",
            "### Revisions",
            "### Checks",
            "### Known quirks of rmcp dev (quirks.json)",
            "### What each check tests",
            "- **origin** [MUST] (2025-11-25, 2025-06-18): title\n  > ",
            "[Security Warning](https://",
            "\nspeaks: 2025-11-25",
        ] {
            assert!(md.contains(part), "{part:?} not in\n{md}");
        }
    }

    #[test]
    fn json_counts_failures_by_level() {
        let v: serde_json::Value = serde_json::from_str(&render(&report(), Format::Json)).unwrap();
        assert_eq!(v["passed"], false);
        assert_eq!(v["speaks"], serde_json::json!(["2025-11-25"]));
        let by = &v["failures_by_level"];
        assert_eq!(
            (&by["MUST"], &by["SHOULD"], &by["MAY"]),
            (&1.into(), &1.into(), &0.into()),
            "{by}"
        );
        assert_eq!(v["url"], "http://127.0.0.1:1/mcp");
        assert!(render(&report(), Format::Html).contains("<html"));
    }

    #[test]
    fn an_empty_report_says_so() {
        let r = Report {
            url: "u".into(),
            peer: None,
            revisions: vec![probe(V::V2025_11_25, ProbeAnswer::Refused)],
            checks: vec![],
            quirks: vec![],
        };
        let t = render(&r, Format::Table);
        assert!(t.contains("server: no serverInfo seen"), "{t}");
        assert!(t.contains("speaks: none of the revisions tried"), "{t}");
        assert!(
            !t.contains("Checks") && !t.contains("What each check tests"),
            "{t}"
        );
        let with_semver = Report {
            peer: Peer::from_server_info(
                &serde_json::json!({"name": "rmcp", "version": "1.2.3"}),
                &V::V2025_11_25,
            ),
            ..r
        };
        let t = render(&with_semver, Format::Table);
        assert!(t.contains("server: rmcp 1.2.3 (semver 1.2.3;"), "{t}");
        assert!(!t.contains("Known quirks"), "{t}");
    }
}
