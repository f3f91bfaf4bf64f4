//! `check-server --format html`: one self-contained page like the matrix's
//! (`crate::matrix::html`): the revisions probed, a grid of checks (rows)
//! by revision (columns) with coloured outcomes, and, on a click or at
//! `#CHECK/REVISION`, the check's result, its level, the spec sentence it
//! tests and a link to that sentence's section on the published spec site.
//! Each cell shows the result and the level (`FAIL MUST`).

use std::fmt::Write as _;

use crate::matrix::html::{SCRIPT, STYLE, esc};

use super::{Check, Outcome, Report};

fn class(o: &Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Fail(_) => "fail",
        Outcome::NotApplicable(_) => "na",
        Outcome::Inconclusive(_) => "inconclusive",
        Outcome::Warn(_) => "warn",
    }
}

/// The id of a check's cell: `CHECK/REVISION`.
pub fn cell_id(c: &Check) -> String {
    format!("{}/{}", c.id, c.revision)
}

/// Renders `report` as a page.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>check-server</title><style>{STYLE}</style></head><body>"
    );
    let _ = writeln!(out, "<h1>check-server {}</h1>", esc(&report.url));
    let peer = match &report.peer {
        Some(p) => format!("server: {} {}", p.name, p.version),
        None => "server: no serverInfo seen".to_owned(),
    };
    let failures = report.failures().len();
    let _ = writeln!(
        out,
        "<p id=\"summary\">{}; {} checks, {failures} failed</p>",
        esc(&peer),
        report.checks.len()
    );
    let _ = writeln!(
        out,
        "<table class=\"scenarios\"><thead><tr><th>revision</th><th>answer</th><th>detail</th></tr></thead><tbody>"
    );
    for p in &report.revisions {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{:?}</td><td>{}</td></tr>",
            esc(p.revision.as_str()),
            p.answer,
            esc(&p.detail)
        );
    }
    let _ = writeln!(out, "</tbody></table>");
    // The grid: checks by revision.
    let mut revisions = Vec::new();
    let mut ids = Vec::new();
    for c in &report.checks {
        if !revisions.contains(&c.revision) {
            revisions.push(c.revision.clone());
        }
        if !ids.contains(&c.id) {
            ids.push(c.id);
        }
    }
    let _ = write!(
        out,
        "<h2>Checks</h2><p>Click a cell for the check's result and the spec sentence it tests.</p><table id=\"grid\"><thead><tr><th>check</th>"
    );
    for r in &revisions {
        let _ = write!(out, "<th>{}</th>", esc(r.as_str()));
    }
    let _ = writeln!(out, "</tr></thead><tbody>");
    for id in &ids {
        let _ = write!(out, "<tr><th>{}</th>", esc(id));
        for r in &revisions {
            match report.find(id, r) {
                Some(c) => {
                    let cid = esc(&cell_id(c));
                    let _ = write!(
                        out,
                        r##"<td class="cell {}" data-cell="{cid}"><a href="#{cid}">{}</a> <small class="level">{}</small></td>"##,
                        class(&c.outcome),
                        esc(c.outcome.label()),
                        c.level
                    );
                }
                None => {
                    let _ = write!(out, r#"<td class="cell filtered">—</td>"#);
                }
            }
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</tbody></table><div id=\"details\">");
    for c in &report.checks {
        let _ = writeln!(
            out,
            r#"<section class="details" data-cell="{}" hidden><h2>{} at {}: {}</h2><p class="title">{}</p><p class="level">level: {}</p><p class="outcome">{}</p><blockquote class="spec">{}</blockquote><p class="source"><a href="{}">{}</a></p></section>"#,
            esc(&cell_id(c)),
            esc(c.id),
            esc(c.revision.as_str()),
            esc(c.outcome.label()),
            esc(c.title),
            c.level,
            esc(c
                .outcome
                .reason()
                .unwrap_or("the server does what the sentence says")),
            esc(c.spec),
            esc(&c.spec_url),
            esc(c.spec_section),
        );
    }
    if !report.quirks.is_empty() {
        let _ = writeln!(out, "<h2>Known quirks</h2><ul>");
        for q in &report.quirks {
            let _ = writeln!(
                out,
                "<li><pre>{}</pre></li>",
                esc(&serde_json::to_string_pretty(q).unwrap_or_default())
            );
        }
        let _ = writeln!(out, "</ul>");
    }
    let _ = writeln!(out, "</div><script>{SCRIPT}</script></body></html>");
    out
}
