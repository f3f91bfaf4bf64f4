//! Parsing the `--revisions` option shared by `serve` and `call`.

use mcp_transport_core::ProtocolVersion;

/// Revisions the binary can serve and speak today.
pub const SUPPORTED: &[ProtocolVersion] = &[ProtocolVersion::V2025_11_25];

/// Parses `all` or a comma-separated list of revision dates. Every entry must
/// be one this build supports; the list keeps the given order (most
/// preferred first) without duplicates.
pub fn parse(list: &str) -> Result<Vec<ProtocolVersion>, String> {
    if list.trim() == "all" || list.trim() == "auto" {
        return Ok(SUPPORTED.iter().rev().cloned().collect());
    }
    let mut out: Vec<ProtocolVersion> = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let v = ProtocolVersion::parse(part);
        if !SUPPORTED.contains(&v) {
            let names: Vec<&str> = SUPPORTED.iter().map(|v| v.as_str()).collect();
            return Err(format!(
                "unsupported revision {part:?}: this build supports {} (or `all`)",
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
        assert_eq!(parse("all").unwrap(), vec![ProtocolVersion::V2025_11_25]);
        assert_eq!(
            parse(" 2025-11-25 ,2025-11-25").unwrap(),
            vec![ProtocolVersion::V2025_11_25]
        );
        let e = parse("2025-11-25,1999-01-01").unwrap_err();
        assert!(e.contains("1999-01-01") && e.contains("2025-11-25"), "{e}");
        assert!(parse(",").is_err());
    }
}
