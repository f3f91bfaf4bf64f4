//! Rendering matrix results: a terminal table, Markdown, JSON, JUnit XML or
//! an HTML page ([`super::html`]).

use std::fmt::Write as _;

use quick_junit::{NonSuccessKind, Report as Junit, TestCase, TestCaseStatus, TestSuite};
use serde_json::json;

use super::expect::{Expected, Failure, Prediction};
use super::run::{CellResult, Observed};
use super::{ClientKind, ServerKind};
use crate::table;

/// Output formats of `mcp-compat matrix`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A plain-text table (clients as rows, servers as columns).
    Table,
    /// A Markdown table.
    Markdown,
    /// Every scenario result as JSON.
    Json,
    /// JUnit XML (one test case per cell and scenario).
    Junit,
    /// One self-contained HTML page: the grid, and each cell's scenarios
    /// with expected, observed and the spec sentence.
    Html,
}

fn cell_label(cell: Option<&CellResult>) -> String {
    let Some(cell) = cell else {
        return "(filtered)".to_owned();
    };
    let rev = cell
        .negotiated()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "none".to_owned());
    let mark = if cell.passed() { "✓" } else { "✗" };
    let failed = cell.scenarios.iter().filter(|s| !s.passed()).count();
    if failed == 0 {
        format!("{rev} {mark}")
    } else {
        format!("{rev} {mark} ({failed} off)")
    }
}

fn find(cells: &[CellResult], c: ClientKind, s: ServerKind) -> Option<&CellResult> {
    cells.iter().find(|x| x.client == c && x.server == s)
}

fn grid(cells: &[CellResult], markdown: bool) -> String {
    let mut header = vec!["client \\ server".to_owned()];
    header.extend(ServerKind::ALL.iter().map(|s| s.name().to_owned()));
    let rows: Vec<Vec<String>> = ClientKind::ALL
        .iter()
        .map(|c| {
            let mut row = vec![c.name().to_owned()];
            row.extend(
                ServerKind::ALL
                    .iter()
                    .map(|s| cell_label(find(cells, *c, *s))),
            );
            row
        })
        .collect();
    table::render(&header, &rows, table::Style::markdown_if(markdown))
}

fn summary(cells: &[CellResult]) -> (usize, usize, usize) {
    let all: Vec<_> = cells.iter().flat_map(|c| &c.scenarios).collect();
    let passed = all.iter().filter(|s| s.passed()).count();
    let skipped = all
        .iter()
        .filter(|s| s.passed() && matches!(s.observed, Observed::Absent(_)))
        .count();
    (passed, all.len() - passed, skipped)
}

fn mismatches(cells: &[CellResult]) -> Vec<String> {
    cells
        .iter()
        .flat_map(|c| &c.scenarios)
        .filter(|s| !s.passed())
        .map(|s| s.explain())
        .collect()
}

/// Renders the results.
pub fn render(cells: &[CellResult], format: Format) -> String {
    match format {
        Format::Table | Format::Markdown => {
            let markdown = format == Format::Markdown;
            let mut out = grid(cells, markdown);
            let (passed, failed, skipped) = summary(cells);
            let _ = writeln!(
                out,
                "\n{passed} passed, {failed} failed ({skipped} of the passed checked that a mechanism the negotiated revision lacks is absent)"
            );
            let bad = mismatches(cells);
            if bad.is_empty() {
                let _ = writeln!(out, "Every cell matches the spec's prediction.");
            } else {
                let _ = writeln!(out, "\nMismatches:");
                for b in bad {
                    let _ = writeln!(out, "{}{b}", if markdown { "- " } else { "  " });
                }
            }
            out
        }
        Format::Html => {
            let (passed, failed, skipped) = summary(cells);
            super::html::render(
                cells,
                &format!(
                    "{passed} passed, {failed} failed ({skipped} of the passed checked that a mechanism the negotiated revision lacks is absent)"
                ),
            )
        }
        Format::Json => {
            let rows: Vec<_> = cells
                .iter()
                .flat_map(|c| &c.scenarios)
                .map(|s| {
                    let observed = match &s.observed {
                        Observed::Works(d) => json!({ "outcome": "works", "detail": d }),
                        Observed::Failed { kind, message } => json!({
                            "outcome": "fails",
                            "failure": kind.map(failure_id),
                            "detail": message,
                        }),
                        Observed::Absent(d) => json!({ "outcome": "absent", "detail": d }),
                    };
                    json!({
                        "client": s.client.name(),
                        "server": s.server.name(),
                        "scenario": s.scenario.name(),
                        "expected": expected_json(&s.prediction),
                        "negotiated_revision": s.negotiated.as_ref().map(|v| v.as_str()),
                        "observed": observed,
                        "passed": s.passed(),
                    })
                })
                .collect();
            let (passed, failed, absent) = summary(cells);
            let report = json!({
                "totals": {
                    "scenarios": passed + failed,
                    "passed": passed,
                    "failed": failed,
                    "passed_as_absent": absent,
                    "cells": cells.len(),
                },
                "results": rows,
            });
            serde_json::to_string_pretty(&report).unwrap_or_default()
        }
        Format::Junit => {
            let mut suite = TestSuite::new("mcp-compat matrix");
            for s in cells.iter().flat_map(|c| &c.scenarios) {
                let name = format!("{}::{}::{}", s.client, s.server, s.scenario);
                let status = if s.passed() {
                    TestCaseStatus::success()
                } else {
                    let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    st.set_message(s.explain());
                    st
                };
                let mut case = TestCase::new(name, status);
                case.set_classname("matrix");
                suite.add_test_case(case);
            }
            let mut report = Junit::new("mcp-compat");
            report.add_test_suite(suite);
            report
                .to_string()
                .unwrap_or_else(|e| format!("<!-- cannot write the JUnit report: {e} -->\n"))
        }
    }
}

/// A stable identifier of a predicted failure, for machines.
fn failure_id(f: Failure) -> &'static str {
    match f {
        Failure::NoMutualRevision => "no-mutual-revision",
        Failure::NotResumable => "not-resumable",
        Failure::InputUnavailable => "input-unavailable",
        Failure::NoBackChannel => "no-back-channel",
    }
}

/// A prediction as JSON: the revision the cell should negotiate, the
/// outcome (`works`, `fails` with the failure, or `absent`: the mechanism
/// does not exist there) and the spec text it comes from.
fn expected_json(p: &Prediction) -> serde_json::Value {
    let (outcome, failure) = match p.expected {
        Expected::Works => ("works", None),
        Expected::Fails(f) => ("fails", Some(failure_id(f))),
        Expected::NotApplicable => ("absent", None),
    };
    json!({
        "revision": p.revision.as_ref().map(|v| v.as_str()),
        "outcome": outcome,
        "failure": failure,
        "spec": p.spec,
    })
}

#[cfg(test)]
mod tests {
    use super::super::expect::expected;
    use super::super::run::ScenarioResult;
    use super::super::scenario::Scenario;
    use super::*;

    /// One cell with two scenarios: one as predicted, one not (observed to
    /// fail where the spec says it works).
    fn cells() -> Vec<CellResult> {
        let (client, server) = (ClientKind::C1125, ServerKind::S1125);
        let ok = expected(client, server, Scenario::Json);
        let bad = expected(client, server, Scenario::Sse);
        let result = |scenario, prediction: Prediction, observed| ScenarioResult {
            client,
            server,
            scenario,
            negotiated: prediction.revision.clone(),
            prediction,
            observed,
        };
        vec![CellResult {
            client,
            server,
            scenarios: vec![
                result(Scenario::Json, ok.clone(), observed_as(&ok.expected)),
                result(
                    Scenario::Sse,
                    bad,
                    Observed::Failed {
                        kind: Some(Failure::NotResumable),
                        message: "the stream broke".into(),
                    },
                ),
            ],
        }]
    }

    fn observed_as(e: &Expected) -> Observed {
        match e {
            Expected::Works => Observed::Works("answered".into()),
            Expected::Fails(f) => Observed::Failed {
                kind: Some(*f),
                message: "as predicted".into(),
            },
            Expected::NotApplicable => Observed::Absent("absent".into()),
        }
    }

    #[test]
    fn json_has_totals_and_structured_predictions() {
        let v: serde_json::Value = serde_json::from_str(&render(&cells(), Format::Json)).unwrap();
        assert_eq!(v["totals"]["scenarios"], 2, "{v:#}");
        assert_eq!(v["totals"]["passed"], 1, "{v:#}");
        assert_eq!(v["totals"]["failed"], 1, "{v:#}");
        let bad = &v["results"][1];
        assert_eq!(bad["passed"], false);
        assert!(bad["expected"]["outcome"].is_string(), "{bad:#}");
        assert!(bad["expected"]["spec"].is_string(), "{bad:#}");
        assert_eq!(bad["observed"]["outcome"], "fails");
        assert_eq!(bad["observed"]["failure"], "not-resumable");
        assert_eq!(bad["observed"]["detail"], "the stream broke");
    }

    /// The cell of `cells()`, and a green one whose scenario checked that
    /// a mechanism 2025-03-26 lacks is absent.
    fn two_cells() -> Vec<CellResult> {
        let (client, server) = (ClientKind::C0326, ServerKind::S0326);
        let (scenario, prediction) = Scenario::ALL
            .iter()
            .map(|s| (*s, expected(client, server, *s)))
            .find(|(_, p)| p.expected == Expected::NotApplicable)
            .expect("2025-03-26 lacks a mechanism");
        let mut all = cells();
        all.push(CellResult {
            client,
            server,
            scenarios: vec![ScenarioResult {
                client,
                server,
                scenario,
                negotiated: prediction.revision.clone(),
                observed: observed_as(&prediction.expected),
                prediction,
            }],
        });
        all
    }

    /// The markdown grid's cell of `client` x `server`.
    fn grid_cell(md: &str, client: ClientKind, server: ServerKind) -> String {
        let row =
            |line: &str| -> Vec<String> { line.split('|').map(|c| c.trim().to_owned()).collect() };
        let header = row(md.lines().next().unwrap());
        let col = header.iter().position(|h| h == server.name()).unwrap();
        let line = md
            .lines()
            .find(|l| row(l).get(1).map(String::as_str) == Some(client.name()))
            .unwrap();
        row(line)[col].clone()
    }

    #[test]
    fn the_grid_labels_each_cell_where_it_belongs() {
        let md = render(&two_cells(), Format::Markdown);
        for (c, s, label) in [
            (ClientKind::C1125, ServerKind::S1125, "2025-11-25 ✗ (1 off)"),
            (ClientKind::C0326, ServerKind::S0326, "2025-03-26 ✓"),
            (ClientKind::C1125, ServerKind::S0326, "(filtered)"),
            (ClientKind::C0326, ServerKind::S1125, "(filtered)"),
        ] {
            assert_eq!(grid_cell(&md, c, s), label, "{c} x {s}: {md}");
        }
        let failed_to_negotiate = CellResult {
            client: ClientKind::Modern,
            server: ServerKind::S1125,
            scenarios: vec![],
        };
        let md = render(&[failed_to_negotiate], Format::Markdown);
        assert_eq!(
            grid_cell(&md, ClientKind::Modern, ServerKind::S1125),
            "none ✓",
            "{md}"
        );
    }

    #[test]
    fn the_text_totals_and_lists_the_mismatches() {
        let cells = two_cells();
        let bad = cells[0].scenarios[1].explain();
        let text = render(&cells, Format::Table);
        assert!(
            text.contains("\n2 passed, 1 failed (1 of the passed checked that a mechanism the negotiated revision lacks is absent)\n"),
            "{text}"
        );
        assert!(
            text.contains(&format!("\nMismatches:\n  {bad}\n")),
            "{text}"
        );
        assert!(!text.contains("Every cell matches"), "{text}");
        let md = render(&cells, Format::Markdown);
        assert!(md.contains(&format!("\n- {bad}\n")), "{md}");
        assert!(md.starts_with("| client \\ server |"), "{md}");
        assert!(!text.starts_with('|'), "{text}");
        let green = &cells[1..];
        let text = render(green, Format::Table);
        assert!(
            text.contains("\n1 passed, 0 failed (1 of the passed"),
            "{text}"
        );
        assert!(
            text.ends_with("Every cell matches the spec's prediction.\n"),
            "{text}"
        );
    }

    #[test]
    fn junit_is_well_formed_and_names_the_failure() {
        let xml = render(&cells(), Format::Junit);
        assert!(xml.starts_with("<?xml"), "{xml}");
        assert_eq!(xml.matches("<testcase").count(), 2, "{xml}");
        assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
        assert!(xml.contains(r#"tests="2""#), "{xml}");
        assert!(xml.contains(r#"failures="1""#), "{xml}");
    }
}
