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

#[cfg(test)]
mod tests {
    use super::super::cells::PeerResult;
    use super::super::manifest::tests::GOOD;
    use super::*;

    /// The manifests' test peer, with a second client row and a quirk no
    /// scenario exercises.
    fn peer() -> Arc<Manifest> {
        let documented = r#"
[[client.rows]]
name = "c-2025-06-18"
revision = "2025-06-18"
offers = ["2025-06-18"]
[[quirks]]
id = "doc"
side = "client"
observed = "fails"
what = "documented only"
upstream = "https://example.invalid/1"
versions = "<2"
"#;
        Arc::new(Manifest::parse(&format!("{GOOD}{documented}")).unwrap())
    }

    fn result(v: Verdict) -> PeerResult {
        let note = match &v {
            Verdict::Quirk(q) | Verdict::QuirkGone(q) | Verdict::NotApplicable(q) => q.clone(),
            _ => String::new(),
        };
        PeerResult {
            scenario: "call",
            predicted_revision: Some("2025-11-25".into()),
            expected: "works".into(),
            spec: "S",
            negotiated: Some("2025-11-25".into()),
            observed: "worked".into(),
            verdict: String::new(),
            note,
            v,
        }
    }

    fn cell(client: &str, server: &str, verdicts: Vec<Verdict>) -> PeerCell {
        PeerCell {
            client: client.into(),
            server: server.into(),
            scenarios: verdicts.into_iter().map(result).collect(),
        }
    }

    /// Every verdict once, in our row against the peer's column.
    fn mixed() -> PeerCell {
        cell(
            "c-2025-11-25",
            "x@1 s-sse",
            vec![
                Verdict::Pass,
                Verdict::Quirk("q".into()),
                Verdict::QuirkGone("q".into()),
                Verdict::NotApplicable("no API".into()),
                Verdict::Fail,
            ],
        )
    }

    #[test]
    fn a_mark_counts_each_kind_of_verdict() {
        assert_eq!(mark(&mixed()), "2025-11-25 ✗1 ~1 gone1 n/a1");
        let green = cell("r", "c", vec![Verdict::Pass, Verdict::Pass]);
        assert_eq!(mark(&green), "2025-11-25 ✓");
        let mut none = cell("r", "c", vec![Verdict::Fail, Verdict::Fail]);
        for s in &mut none.scenarios {
            s.negotiated = None;
        }
        assert_eq!(mark(&none), "none ✗2");
    }

    #[test]
    fn the_grid_keeps_the_rows_and_columns_that_have_cells() {
        let peers = [peer()];
        let cells = [
            mixed(),
            cell("x@1 c-2025-11-25", "s-2025-11-25", vec![Verdict::Pass]),
            cell("x@1 c-2025-06-18", "s-2025-06-18", vec![Verdict::Pass]),
        ];
        let (header, rows) = grid(&peers, &cells);
        let header_want = [
            "client \\ server",
            "s-2025-06-18",
            "s-2025-11-25",
            "x@1 s-sse",
        ];
        assert_eq!(header, header_want);
        let mark = "2025-11-25 ✗1 ~1 gone1 n/a1";
        assert_eq!(
            rows,
            [
                // Ours against ours is `matrix` without flags: `·`; a cell
                // a filter left out elsewhere is `-`.
                ["c-2025-11-25", "·", "·", mark],
                ["x@1 c-2025-11-25", "-", "2025-11-25 ✓", "-"],
                ["x@1 c-2025-06-18", "2025-11-25 ✓", "-", "-"],
            ]
        );
    }

    #[test]
    fn the_text_lists_each_deviation_under_its_heading() {
        let peers = [peer()];
        let text = render(&peers, &[mixed()], false);
        let line = |note: &str| {
            format!(
                "- c-2025-11-25 x x@1 s-sse / call{note}: expected works on 2025-11-25, got worked on 2025-11-25 [spec: S]\n"
            )
        };
        for (heading, note) in [
            ("Failed (neither the prediction nor a listed quirk)", ""),
            (
                "Quirks gone (the cell now behaves as the spec predicts)",
                " [q]",
            ),
            ("As a listed quirk", " [q]"),
            ("Not expressible by the client (n/a)", " [no API]"),
        ] {
            let section = format!("\n{heading}:\n{}", line(note));
            assert!(text.contains(&section), "{section:?} not in\n{text}");
        }
        assert!(
            text.contains("\n5 scenarios in 1 cells: 1 as predicted, 1 as a listed quirk, 1 quirk(s) gone, 1 n/a, 1 failed\n"),
            "{text}"
        );
        assert!(text.ends_with(&quirks_table(&peers, &[mixed()])), "{text}");
        let green = render(
            &peers,
            &[cell("c-2025-11-25", "x@1 s-sse", vec![Verdict::Pass])],
            true,
        );
        assert!(
            !green.contains("Failed") && !green.contains("As a listed quirk:"),
            "{green}"
        );
        assert!(green.starts_with("| client \\ server |"), "{green}");
    }

    #[test]
    fn the_quirks_table_counts_each_quirk_seen_and_gone() {
        let peers = [peer()];
        let seen_twice = cell(
            "c-2025-11-25",
            "x@1 s-sse",
            vec![
                Verdict::Quirk("q".into()),
                Verdict::Quirk("q".into()),
                Verdict::Quirk("other".into()),
            ],
        );
        let t = quirks_table(&peers, &[mixed(), seen_twice]);
        assert_eq!(
            t,
            "\nKnown quirks of x@1:\n\
             - q (server side, disconnect, versions ?): never closes (no upstream issue known; seen 3, gone 1)\n\
             - doc (client side, -, versions <2): documented only (https://example.invalid/1; documented, not exercised by these scenarios)\n"
        );
        let quiet = Manifest {
            quirks: vec![],
            ..(*peer()).clone()
        };
        assert_eq!(quirks_table(&[Arc::new(quiet)], &[mixed()]), "");
    }

    #[test]
    fn json_lists_the_cells() {
        let v: serde_json::Value = serde_json::from_str(&json(&[mixed()])).unwrap();
        assert_eq!(v[0]["server"], "x@1 s-sse");
        assert_eq!(v[0]["scenarios"].as_array().unwrap().len(), 5);
    }
}
