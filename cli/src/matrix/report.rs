//! Rendering matrix results: a terminal table, Markdown, JSON, JUnit XML or
//! an HTML page ([`super::html`]).

use std::fmt::Write as _;

use serde_json::json;

use super::run::{CellResult, Observed};
use super::{ClientKind, ServerKind};

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
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["client \\ server".to_owned()];
    header.extend(ServerKind::ALL.iter().map(|s| s.name().to_owned()));
    rows.push(header);
    for c in ClientKind::ALL {
        let mut row = vec![c.name().to_owned()];
        row.extend(
            ServerKind::ALL
                .iter()
                .map(|s| cell_label(find(cells, c, *s))),
        );
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (n, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(t, w)| format!("{t}{}", " ".repeat(w - t.chars().count())))
            .collect();
        if markdown {
            let _ = writeln!(out, "| {} |", cells.join(" | "));
            if n == 0 {
                let seps: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
                let _ = writeln!(out, "| {} |", seps.join(" | "));
            }
        } else {
            let _ = writeln!(out, "{}", cells.join("  "));
        }
    }
    out
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
                            "outcome": "failed",
                            "kind": kind.map(|k| k.to_string()),
                            "detail": message,
                        }),
                        Observed::Absent(d) => json!({ "outcome": "absent", "detail": d }),
                    };
                    json!({
                        "client": s.client.name(),
                        "server": s.server.name(),
                        "scenario": s.scenario.name(),
                        "expected_revision": s.prediction.revision.as_ref().map(|v| v.as_str()),
                        "negotiated_revision": s.negotiated.as_ref().map(|v| v.as_str()),
                        "expected": format!("{:?}", s.prediction.expected),
                        "observed": observed,
                        "spec": s.prediction.spec,
                        "passed": s.passed(),
                    })
                })
                .collect();
            serde_json::to_string_pretty(&json!({ "results": rows })).unwrap_or_default()
        }
        Format::Junit => {
            let (passed, failed, _) = summary(cells);
            let mut out = String::new();
            let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
            let _ = writeln!(
                out,
                r#"<testsuite name="mcp-compat matrix" tests="{}" failures="{failed}">"#,
                passed + failed
            );
            for s in cells.iter().flat_map(|c| &c.scenarios) {
                let name = format!("{}::{}::{}", s.client, s.server, s.scenario);
                let _ = write!(
                    out,
                    r#"  <testcase classname="matrix" name="{}""#,
                    xml(&name)
                );
                if s.passed() {
                    let _ = writeln!(out, "/>");
                } else {
                    let _ = writeln!(
                        out,
                        "><failure message=\"{}\"/></testcase>",
                        xml(&s.explain())
                    );
                }
            }
            let _ = writeln!(out, "</testsuite>");
            out
        }
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
