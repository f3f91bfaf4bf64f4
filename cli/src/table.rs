//! The tables of the CLI's reports (the matrix grid, the peer matrix grid,
//! `check-server`/`check-client` results), drawn by `comfy-table` in one
//! of two styles. They were three hand-written renderers before, each with
//! its own padding rules.

use comfy_table::{ContentArrangement, Table, presets};

/// How a table is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A GitHub-flavoured markdown table (`|` in a cell escaped as `\|`,
    /// a line break written `<br>`: a row is one line), columns padded so
    /// the source lines up too.
    Markdown,
    /// Aligned columns without borders, for a terminal.
    Plain,
}

impl Style {
    /// [`Style::Markdown`] when `markdown`, else [`Style::Plain`].
    pub fn markdown_if(markdown: bool) -> Style {
        if markdown {
            Style::Markdown
        } else {
            Style::Plain
        }
    }
}

/// Draws `header` and `rows` (every row as long as the header), ending with
/// a newline. Cells are never wrapped or truncated, whatever the terminal.
pub fn render<S: AsRef<str>>(header: &[S], rows: &[Vec<String>], style: Style) -> String {
    let cell = |s: &str| match style {
        Style::Markdown => s
            .replace('|', "\\|")
            .replace("\r\n", "<br>")
            .replace('\n', "<br>"),
        Style::Plain => s.to_owned(),
    };
    let mut table = Table::new();
    table
        .load_style(match style {
            Style::Markdown => presets::ASCII_MARKDOWN,
            Style::Plain => presets::NOTHING,
        })
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.iter().map(|h| cell(h.as_ref())).collect::<Vec<_>>());
    for row in rows {
        table.add_row(row.iter().map(|c| cell(c)).collect::<Vec<_>>());
    }
    let mut out = String::new();
    for line in table.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Vec<String>> {
        vec![
            vec!["c-2025-11-25".into(), "2025-11-25 ✓".into(), "a|b".into()],
            vec!["c".into(), String::new(), "z".into()],
        ]
    }

    #[test]
    fn markdown_pads_columns_and_escapes_pipes() {
        let out = render(
            &["client \\ server", "s-all", "note"],
            &rows(),
            Style::Markdown,
        );
        assert_eq!(
            out,
            "| client \\ server | s-all        | note |\n\
             |-----------------|--------------|------|\n\
             | c-2025-11-25    | 2025-11-25 ✓ | a\\|b |\n\
             | c               |              | z    |\n"
        );
    }

    #[test]
    fn a_markdown_row_is_one_line() {
        let out = render(
            &["a", "b"],
            &rows_of(&[["x\ny", "z\r\nw"]]),
            Style::Markdown,
        );
        assert_eq!(
            out,
            "| a      | b      |\n\
             |--------|--------|\n\
             | x<br>y | z<br>w |\n"
        );
    }

    #[test]
    fn plain_aligns_columns_without_trailing_space() {
        let out = render(
            &["check", "result"],
            &rows_of(&[["a", "PASS"], ["longer", "FAIL"]]),
            Style::Plain,
        );
        assert_eq!(out, " check   result\n a       PASS\n longer  FAIL\n");
    }

    fn rows_of(r: &[[&str; 2]]) -> Vec<Vec<String>> {
        r.iter()
            .map(|r| r.iter().map(|c| (*c).to_owned()).collect())
            .collect()
    }
}
