//! `--format html`: one self-contained page (inline style and script, no
//! network): the grid with coloured cells; a click on a cell (or opening
//! the page at `#CLIENT/SERVER`) shows its scenarios with what was
//! expected, what was observed and the spec sentence behind the
//! prediction. Every cell's details are in the page, hidden until chosen,
//! so the page also reads without script.

use std::fmt::Write as _;

use super::run::{CellResult, Observed, ScenarioResult};
use super::{ClientKind, ServerKind};

/// HTML-escapes text for element content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The id of a cell: `CLIENT/SERVER`.
pub fn cell_id(c: ClientKind, s: ServerKind) -> String {
    format!("{c}/{s}")
}

/// The page style (shared with `check-server --format html`).
pub(crate) const STYLE: &str = r#"
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; }
h1 { font-size: 1.3em; }
table { border-collapse: collapse; }
#grid th, #grid td { border: 1px solid #999; padding: .35em .6em; text-align: center; white-space: nowrap; }
#grid td.cell { cursor: pointer; }
#grid td.cell a { color: inherit; text-decoration: none; display: block; }
td.pass { background: #c8f0c8; }
td.fail { background: #f7b3b3; font-weight: bold; }
td.filtered { background: #eee; color: #777; }
td.na { background: #e4e4f4; }
td.inconclusive { background: #f5e6b8; }
td.warn { background: #fbd9a6; }
td.selected { outline: 3px solid #224; outline-offset: -3px; }
section.details { margin-top: 1.2em; }
table.scenarios td, table.scenarios th { border: 1px solid #bbb; padding: .3em .5em; vertical-align: top; text-align: left; }
table.scenarios tr.pass td.mark { background: #c8f0c8; }
table.scenarios tr.fail td.mark { background: #f7b3b3; }
td.spec { color: #444; font-size: .92em; max-width: 40em; }
"#;

/// Shows the details of the cell named by a click or the URL fragment
/// (shared with `check-server --format html`).
pub(crate) const SCRIPT: &str = r#"
function show(id) {
  document.querySelectorAll('section.details').forEach(function (s) { s.hidden = s.dataset.cell !== id; });
  document.querySelectorAll('td.cell').forEach(function (td) { td.classList.toggle('selected', td.dataset.cell === id); });
}
document.querySelectorAll('td.cell[data-cell]').forEach(function (td) {
  td.addEventListener('click', function () { location.hash = td.dataset.cell; show(td.dataset.cell); });
});
window.addEventListener('hashchange', function () { show(decodeURIComponent(location.hash.slice(1))); });
if (location.hash) { show(decodeURIComponent(location.hash.slice(1))); }
"#;

fn find(cells: &[CellResult], c: ClientKind, s: ServerKind) -> Option<&CellResult> {
    cells.iter().find(|x| x.client == c && x.server == s)
}

fn expected_text(r: &ScenarioResult) -> String {
    let rev = r
        .prediction
        .revision
        .as_ref()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "no revision".into());
    let what = match &r.prediction.expected {
        super::Expected::Works => "works".to_owned(),
        super::Expected::Fails(f) => f.to_string(),
        super::Expected::NotApplicable => "not applicable: absence checked".to_owned(),
    };
    format!("{what} on {rev}")
}

fn observed_text(r: &ScenarioResult) -> String {
    let rev = r
        .negotiated
        .as_ref()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "no revision".into());
    let what = match &r.observed {
        Observed::Works(d) => format!("worked: {d}"),
        Observed::Absent(d) => format!("absent, as checked: {d}"),
        Observed::Failed { message, .. } => format!("failed: {message}"),
    };
    format!("{what} (on {rev})")
}

fn details(out: &mut String, cell: &CellResult) {
    let id = cell_id(cell.client, cell.server);
    let rev = cell
        .negotiated()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "none".into());
    let _ = writeln!(
        out,
        r#"<section class="details" data-cell="{id}" hidden><h2>{} × {}: {rev} {}</h2>"#,
        esc(cell.client.name()),
        esc(cell.server.name()),
        if cell.passed() { "✓" } else { "✗" },
        id = esc(&id),
    );
    let _ = writeln!(
        out,
        "<table class=\"scenarios\"><thead><tr><th>scenario</th><th></th><th>expected</th><th>observed</th><th>spec</th></tr></thead><tbody>"
    );
    for r in &cell.scenarios {
        let pass = r.passed();
        let _ = writeln!(
            out,
            r#"<tr class="{}" data-scenario="{}"><td>{}</td><td class="mark">{}</td><td class="expected">{}</td><td class="observed">{}</td><td class="spec">{}</td></tr>"#,
            if pass { "pass" } else { "fail" },
            esc(r.scenario.name()),
            esc(r.scenario.name()),
            if pass { "✓" } else { "✗" },
            esc(&expected_text(r)),
            esc(&observed_text(r)),
            esc(r.prediction.spec),
        );
    }
    let _ = writeln!(out, "</tbody></table></section>");
}

/// The page for `cells` (cells not run show as filtered).
pub fn render(cells: &[CellResult], summary: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mcp-compat matrix</title><style>{STYLE}</style></head><body>"
    );
    let _ = writeln!(
        out,
        "<h1>MCP Streamable HTTP compatibility matrix</h1><p id=\"summary\">{}</p>",
        esc(summary)
    );
    let _ = writeln!(
        out,
        "<p>Rows are clients, columns servers; a cell shows the revision negotiated (<code>none</code>: the spec says it must fail). Click a cell for its scenarios.</p>"
    );
    let _ = write!(
        out,
        "<table id=\"grid\"><thead><tr><th>client \\ server</th>"
    );
    for s in ServerKind::ALL {
        let _ = write!(out, "<th>{}</th>", esc(s.name()));
    }
    let _ = writeln!(out, "</tr></thead><tbody>");
    for c in ClientKind::ALL {
        let _ = write!(out, "<tr><th>{}</th>", esc(c.name()));
        for s in ServerKind::ALL {
            let id = esc(&cell_id(c, s));
            match find(cells, c, s) {
                Some(cell) => {
                    let rev = cell
                        .negotiated()
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "none".into());
                    let off = cell.scenarios.iter().filter(|r| !r.passed()).count();
                    let (class, mark) = if off == 0 {
                        ("pass", "✓".to_owned())
                    } else {
                        ("fail", format!("✗ ({off} off)"))
                    };
                    let _ = write!(
                        out,
                        r##"<td class="cell {class}" data-cell="{id}"><a href="#{id}">{} {mark}</a></td>"##,
                        esc(&rev)
                    );
                }
                None => {
                    let _ = write!(out, r#"<td class="cell filtered">(filtered)</td>"#);
                }
            }
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</tbody></table><div id=\"details\">");
    for cell in cells {
        details(&mut out, cell);
    }
    let _ = writeln!(out, "</div><script>{SCRIPT}</script></body></html>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
