//! `mcp-compat check-client -- CMD ...`: the command line of
//! [`crate::matrix::peers::check_client`], with `check-server`'s
//! `--fail-on` levels and `--junit` writer ([`crate::check::level`],
//! [`crate::check::junit`]).

use std::path::PathBuf;

use clap::Args;
use mcp_transport_core::ProtocolVersion;

use crate::check::FailOn;
use crate::matrix::peers::check_client::{junit, render, run};

/// Options of `mcp-compat check-client`.
#[derive(Args, Debug, Clone)]
pub struct CheckClientArgs {
    /// The client program and its arguments (`{url}`, `{scenario}`,
    /// `{revision}` are filled in; without `{url}` the three are appended).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
    /// The revisions to check it at (comma-separated).
    #[arg(long, default_value = "2025-03-26,2025-06-18,2025-11-25,2026-07-28")]
    pub revisions: String,
    /// The `{revision}` value that makes the client dual-era (modern first,
    /// then `initialize`), e.g. `auto`: adds the era fall-back checks.
    #[arg(long, value_name = "NAME")]
    pub dual_era: Option<String>,
    /// `table` or `json`.
    #[arg(long, default_value = "table")]
    pub format: String,
    /// Exit 1 only when a check at this level or a stricter one fails
    /// (must < should < may < policy).
    #[arg(long, value_enum, default_value = "must")]
    pub fail_on: FailOn,
    /// Also write the checks as JUnit XML to this file (one test case per
    /// check and revision; n/a as skipped).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

/// `check-client`: runs the client program against our server at each
/// revision; whether no check failed at the `--fail-on` level or a
/// stricter one.
pub async fn check_client(args: CheckClientArgs) -> Result<bool, String> {
    let mut argv = args.command.clone();
    if !argv.iter().any(|a| a.contains("{url}")) {
        argv.extend(["{url}", "{scenario}", "{revision}"].map(String::from));
    }
    let mut revisions = Vec::new();
    for r in args
        .revisions
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
    {
        let v = ProtocolVersion::parse(r);
        if !v.is_well_formed() || v == ProtocolVersion::V2024_11_05 {
            return Err(format!(
                "--revisions: {r:?} is not a Streamable HTTP revision"
            ));
        }
        revisions.push(v);
    }
    let root = std::env::current_dir().map_err(|e| e.to_string())?;
    let checks = run(&argv, &revisions, args.dual_era.as_deref(), &root).await;
    print!("{}", render(&checks, args.format == "json"));
    if let Some(path) = &args.junit {
        let xml = junit(&checks, &args.command.join(" "))?;
        std::fs::write(path, xml).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(!checks.iter().any(|c| c.fails_at(args.fail_on)))
}
