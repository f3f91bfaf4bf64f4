//! Rendering the peer matrix: the grid (rows × columns, `·` where both
//! sides are ours: `matrix` without flags runs those), a summary, every
//! deviation with its spec text, the quirks table, and JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use super::cells::{PeerCell, layout};
use super::manifest::Manifest;
use super::outcome::Verdict;
use crate::table;

/// The mark of one cell: the negotiated revision, then ✓ (as predicted),
/// `~N` (N scenarios as a listed quirk says), `n/a N`, `gone N` (quirks
/// no longer seen), `✗N` (N deviations no quirk explains).
pub fn mark(cell: &PeerCell) -> String {
    let rev = cell.negotiated().unwrap_or("none");
    let count = |f: &dyn Fn(&Verdict) -> bool| cell.scenarios.iter().filter(|s| f(&s.v)).count();
    let fails = count(&|v| matches!(v, Verdict::Fail));
    let quirks = count(&|v| matches!(v, Verdict::Quirk(_)));
    let gone = count(&|v| matches!(v, Verdict::QuirkGone(_)));
    let na = count(&|v| matches!(v, Verdict::NotApplicable(_)));
    let mut s = format!("{rev} ");
    s.push_str(&if fails > 0 {
        format!("✗{fails}")
    } else {
        "✓".to_owned()
    });
    if quirks > 0 {
        let _ = write!(s, " ~{quirks}");
    }
    if gone > 0 {
        let _ = write!(s, " gone{gone}");
    }
    if na > 0 {
        let _ = write!(s, " n/a{na}");
    }
    s
}

fn grid(peers: &[Arc<Manifest>], cells: &[PeerCell]) -> (Vec<String>, Vec<Vec<String>>) {
    let (rows, cols) = layout(peers);
    // Only the rows and columns that have a cell (a filter may leave few).
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|r| cells.iter().any(|c| c.client == r.label()))
        .collect();
    let cols: Vec<_> = cols
        .into_iter()
        .filter(|k| cells.iter().any(|c| c.server == k.label()))
        .collect();
    let by: BTreeMap<(String, String), &PeerCell> = cells
        .iter()
        .map(|c| ((c.client.clone(), c.server.clone()), c))
        .collect();
    let mut header = vec!["client \\ server".to_owned()];
    header.extend(cols.iter().map(|c| c.label()));
    let mut out = Vec::new();
    for r in &rows {
        let mut line = vec![r.label()];
        for c in &cols {
            let both_ours = matches!(r, super::cells::Row::Ours(_))
                && matches!(c, super::cells::Column::Ours(_));
            line.push(match by.get(&(r.label(), c.label())) {
                Some(cell) => mark(cell),
                None if both_ours => "·".to_owned(),
                None => "-".to_owned(),
            });
        }
        out.push(line);
    }
    (header, out)
}

/// The whole report as text (`markdown`: a markdown table).
pub fn render(peers: &[Arc<Manifest>], cells: &[PeerCell], markdown: bool) -> String {
    let (header, rows) = grid(peers, cells);
    let mut out = table::render(&header, &rows, table::Style::markdown_if(markdown));
    let all: Vec<_> = cells
        .iter()
        .flat_map(|c| c.scenarios.iter().map(move |s| (c, s)))
        .collect();
    let n = |f: &dyn Fn(&Verdict) -> bool| all.iter().filter(|(_, s)| f(&s.v)).count();
    let _ = writeln!(
        out,
        "\n{} scenarios in {} cells: {} as predicted, {} as a listed quirk, {} quirk(s) gone, {} n/a, {} failed",
        all.len(),
        cells.len(),
        n(&|v| matches!(v, Verdict::Pass)),
        n(&|v| matches!(v, Verdict::Quirk(_))),
        n(&|v| matches!(v, Verdict::QuirkGone(_))),
        n(&|v| matches!(v, Verdict::NotApplicable(_))),
        n(&|v| matches!(v, Verdict::Fail)),
    );
    let section = |out: &mut String, title: &str, f: &dyn Fn(&Verdict) -> bool| {
        let hits: Vec<_> = all.iter().filter(|(_, s)| f(&s.v)).collect();
        if hits.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n{title}:");
        for (c, s) in hits {
            let note = if s.note.is_empty() {
                String::new()
            } else {
                format!(" [{}]", s.note)
            };
            let _ = writeln!(
                out,
                "- {} x {} / {}{note}: expected {} on {}, got {} on {} [spec: {}]",
                c.client,
                c.server,
                s.scenario,
                s.expected,
                s.predicted_revision.as_deref().unwrap_or("no revision"),
                s.observed,
                s.negotiated.as_deref().unwrap_or("no revision"),
                s.spec
            );
        }
    };
    section(
        &mut out,
        "Failed (neither the prediction nor a listed quirk)",
        &|v| matches!(v, Verdict::Fail),
    );
    section(
        &mut out,
        "Quirks gone (the cell now behaves as the spec predicts)",
        &|v| matches!(v, Verdict::QuirkGone(_)),
    );
    section(&mut out, "As a listed quirk", &|v| {
        matches!(v, Verdict::Quirk(_))
    });
    section(&mut out, "Not expressible by the client (n/a)", &|v| {
        matches!(v, Verdict::NotApplicable(_))
    });
    out.push_str(&quirks_table(peers, cells));
    out
}

/// The known quirks of the peers, each with how many scenarios showed it.
pub fn quirks_table(peers: &[Arc<Manifest>], cells: &[PeerCell]) -> String {
    let mut out = String::new();
    let count = |id: &str, gone: bool| {
        cells
            .iter()
            .flat_map(|c| &c.scenarios)
            .filter(|s| match &s.v {
                Verdict::Quirk(q) => !gone && q == id,
                Verdict::QuirkGone(q) => gone && q == id,
                _ => false,
            })
            .count()
    };
    for p in peers.iter().filter(|p| !p.quirks.is_empty()) {
        let _ = writeln!(out, "\nKnown quirks of {}:", p.label());
        for q in &p.quirks {
            let seen = if q.scenario.is_empty() {
                "documented, not exercised by these scenarios".to_owned()
            } else {
                format!("seen {}, gone {}", count(&q.id, false), count(&q.id, true))
            };
            let upstream = if q.upstream.is_empty() {
                "no upstream issue known".to_owned()
            } else {
                q.upstream.clone()
            };
            let _ = writeln!(
                out,
                "- {} ({} side, {}, versions {}): {} ({upstream}; {seen})",
                q.id,
                q.side,
                if q.scenario.is_empty() {
                    "-"
                } else {
                    &q.scenario
                },
                if q.versions.is_empty() {
                    "?"
                } else {
                    &q.versions
                },
                q.what
            );
        }
    }
    out
}

/// The cells as JSON.
pub fn json(cells: &[PeerCell]) -> String {
    serde_json::to_string_pretty(cells).unwrap_or_default() + "\n"
}
