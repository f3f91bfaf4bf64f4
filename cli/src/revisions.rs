//! Parsing the `--revisions` option shared by `serve` and `call`.

use mcp_transport_core::ProtocolVersion;

/// Revisions the binary can serve (oldest first).
pub const SERVED: &[ProtocolVersion] = &[
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2026_07_28,
];

/// Revisions `call` can speak (oldest first): the served ones plus the
/// deprecated 2024-11-05 HTTP+SSE transport, tried last.
pub const SPOKEN: &[ProtocolVersion] = &[
    ProtocolVersion::V2024_11_05,
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2026_07_28,
];

/// Parses `--revisions` for `serve`: `all` or a comma-separated list.
pub fn parse_served(list: &str) -> Result<Vec<ProtocolVersion>, String> {
    parse(list, SERVED, "all")
}

/// Parses `--revisions` for `call`: `auto` (every revision, newest first)
/// or a comma-separated list, most preferred first.
pub fn parse_spoken(list: &str) -> Result<Vec<ProtocolVersion>, String> {
    parse(list, SPOKEN, "auto")
}

fn parse(
    list: &str,
    known: &[ProtocolVersion],
    word: &str,
) -> Result<Vec<ProtocolVersion>, String> {
    let list = list.trim();
    if list == word || list == "all" || list == "auto" {
        return Ok(known.iter().rev().cloned().collect());
    }
    let mut out: Vec<ProtocolVersion> = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let v = ProtocolVersion::parse(part);
        if !known.contains(&v) {
            let names: Vec<&str> = known.iter().map(|v| v.as_str()).collect();
            return Err(format!(
                "unsupported revision {part:?}: supported here are {} (or `{word}`)",
                names.join(", ")
            ));
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    if out.is_empty() {
        return Err("--revisions needs at least one revision".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_rejects_unknown() {
        let all = parse_served("all").unwrap();
        assert_eq!(all.len(), 4);
        assert_eq!(all[0], ProtocolVersion::V2026_07_28);
        assert_eq!(
            parse_spoken("auto").unwrap().last(),
            Some(&ProtocolVersion::V2024_11_05)
        );
        assert!(parse_served("2024-11-05").is_err());
        assert_eq!(
            parse_served(" 2025-11-25 ,2025-11-25").unwrap(),
            vec![ProtocolVersion::V2025_11_25]
        );
        let e = parse_served("2025-11-25,1999-01-01").unwrap_err();
        assert!(e.contains("1999-01-01") && e.contains("2025-11-25"), "{e}");
        assert!(parse_served(",").is_err());
        // `all` and `auto` are each other's synonyms in both options.
        assert_eq!(parse_served("auto").unwrap(), all);
        assert_eq!(parse_spoken("all").unwrap(), parse_spoken("auto").unwrap());
        assert_eq!(parse_spoken("all").unwrap().len(), 5);
    }
}
