//! `serve`'s options read into the engines' settings: what each option
//! sets, and each refusal (a flag that means nothing for the revisions
//! served, a bad path, a zero limit, a bad key file) with the flag named.

use std::path::PathBuf;
use std::time::Duration;

use mcp_http_edge::config::OriginPolicy;
use mcp_rev_2025_11_25::{DEFAULT_RESUME_HOLD, DEFAULT_RETRY_MS, DisconnectPolicy, PollingExt};
use mcp_transport_core::ProtocolVersion as V;

use super::*;

fn args(options: &[&str]) -> ServeArgs {
    ServeArgs::from_options(options).unwrap_or_else(|e| panic!("{options:?}: {e}"))
}

fn configured(options: &[&str]) -> MultiConfig {
    config(&args(options)).unwrap_or_else(|e| panic!("{options:?}: {e}"))
}

fn refused(options: &[&str]) -> String {
    match config(&args(options)) {
        Ok(_) => panic!("{options:?} accepted"),
        Err(e) => e,
    }
}

#[test]
fn the_defaults_serve_every_revision_with_tasks_a_get_stream_and_sse() {
    let cfg = configured(&[]);
    assert_eq!(
        cfg.revisions,
        [
            V::V2026_07_28,
            V::V2025_11_25,
            V::V2025_06_18,
            V::V2025_03_26
        ],
        "newest first"
    );
    let polling = cfg.legacy.polling();
    assert_eq!(polling.disconnect, DisconnectPolicy::Never);
    assert_eq!(polling.retry_ms, DEFAULT_RETRY_MS);
    assert_eq!(polling.resume_hold, DEFAULT_RESUME_HOLD);
    assert!(polling.tasks.is_some(), "2025-11-25's experimental tasks");
    assert!(cfg.legacy.get_stream);
    assert!(!cfg.legacy.json_response && !cfg.modern.json_response);
    let keepalive = Some(Duration::from_secs(15));
    assert_eq!(cfg.legacy.keepalive, keepalive);
    assert_eq!(cfg.modern.keepalive, keepalive);
    assert!(cfg.modern.tasks.is_some(), "the Tasks extension");
    assert_eq!(cfg.modern.state_key, None, "a random key of its own");
    assert_eq!(cfg.legacy.http.origins, OriginPolicy::default());
    assert_eq!(cfg.modern.http.origins, OriginPolicy::default());
}

#[test]
fn each_option_reaches_the_engines_it_names() {
    let cfg = configured(&[
        "--json-response",
        "--keepalive-ms",
        "250",
        "--disconnect",
        "after-priming",
        "--retry-ms",
        "40",
        "--resume-hold-ms",
        "0",
        "--no-get-stream",
        "--no-legacy-tasks",
        "--allowed-origins",
        "https://a.example,https://b.example",
        "--allowed-hosts",
        "a.example",
        "--max-running",
        "7",
        "--max-running-bytes",
        "9000",
    ]);
    assert!(cfg.legacy.json_response && cfg.modern.json_response);
    let keepalive = Some(Duration::from_millis(250));
    assert_eq!(cfg.legacy.keepalive, keepalive);
    assert_eq!(cfg.modern.keepalive, keepalive);
    let polling = cfg.legacy.polling();
    assert_eq!(polling.disconnect, DisconnectPolicy::AfterPriming);
    assert_eq!(polling.retry_ms, 40);
    assert_eq!(polling.resume_hold, Duration::ZERO);
    assert!(polling.tasks.is_none());
    assert!(!cfg.legacy.get_stream);
    let origins = OriginPolicy {
        allowed_origins: Some(vec!["https://a.example".into(), "https://b.example".into()]),
        allowed_hosts: Some(vec!["a.example".into()]),
    };
    assert_eq!(cfg.legacy.http.origins, origins);
    assert_eq!(cfg.modern.http.origins, origins);
    assert_eq!(cfg.running.max_running, 7);
    assert_eq!(cfg.running.max_running_bytes, 9000);

    let cfg = configured(&[
        "--keepalive-ms",
        "0",
        "--revisions",
        "2025-03-26,2026-07-28",
    ]);
    assert_eq!(cfg.revisions, [V::V2025_03_26, V::V2026_07_28]);
    assert_eq!(cfg.legacy.keepalive, None, "0 sends no keep-alive");
    assert_eq!(cfg.modern.keepalive, None);
}

#[test]
fn polling_flags_mean_nothing_without_2025_11_25() {
    for flag in [
        &["--disconnect", "after-priming"][..],
        &["--disconnect", "idle:5"],
        &["--retry-ms", "10"],
        &["--resume-hold-ms", "10"],
        &["--no-legacy-tasks"],
    ] {
        for revisions in ["2026-07-28", "2025-03-26,2025-06-18"] {
            let options = [flag, &["--revisions", revisions]].concat();
            let e = refused(&options);
            assert!(
                e.starts_with(&format!("{} means nothing here", flag[0])),
                "{e}"
            );
            assert!(e.contains("only on 2025-11-25"), "{e}");
            assert!(
                e.contains(&revisions.replace(',', ", ")),
                "names what is served: {e}"
            );
        }
        configured(&[flag, &["--revisions", "2025-11-25,2026-07-28"]].concat());
    }
    // `never` is what no flag says: nothing to refuse.
    configured(&["--disconnect", "never", "--revisions", "2026-07-28"]);
}

#[test]
fn the_state_key_means_nothing_without_2026_07_28_and_the_get_stream_without_a_legacy_one() {
    let e = refused(&[
        "--state-key-file",
        "/nonexistent",
        "--revisions",
        "2025-11-25",
    ]);
    assert!(e.starts_with("--state-key-file means nothing here"), "{e}");
    let e = refused(&["--no-get-stream", "--revisions", "2026-07-28"]);
    assert!(e.starts_with("--no-get-stream means nothing here"), "{e}");
    let cfg = configured(&["--no-get-stream", "--revisions", "2025-03-26"]);
    assert!(!cfg.legacy.get_stream);
}

#[test]
fn a_relative_path_and_no_running_handlers_are_refused() {
    let e = refused(&["--path", "mcp"]);
    assert_eq!(e, r#"--path must start with '/', got "mcp""#);
    configured(&["--path", "/"]);
    assert_eq!(
        refused(&["--max-running", "0"]),
        "--max-running must be at least 1"
    );
    configured(&["--max-running", "1"]);
    assert!(refused(&["--revisions", "1999-01-01"]).contains("1999-01-01"));
}

#[test]
fn the_connection_limits_are_the_options_and_none_may_be_zero() {
    let limits = conn_limits(&args(&[
        "--header-read-timeout-ms",
        "11",
        "--body-read-timeout-ms",
        "12",
        "--idle-timeout-ms",
        "13",
        "--write-timeout-ms",
        "14",
        "--max-connections",
        "15",
        "--shutdown-grace-ms",
        "0",
    ]))
    .unwrap();
    assert_eq!(limits.header_read_timeout, Duration::from_millis(11));
    assert_eq!(limits.body_read_timeout, Duration::from_millis(12));
    assert_eq!(limits.idle_timeout, Duration::from_millis(13));
    assert_eq!(limits.write_timeout, Duration::from_millis(14));
    assert_eq!(limits.max_connections, 15);
    assert_eq!(limits.shutdown_grace, Duration::ZERO, "0 is no grace");
    for flag in [
        "--max-connections",
        "--header-read-timeout-ms",
        "--body-read-timeout-ms",
        "--idle-timeout-ms",
        "--write-timeout-ms",
    ] {
        let e = conn_limits(&args(&[flag, "0"])).expect_err(flag);
        assert_eq!(e, format!("{flag} must be at least 1"));
        conn_limits(&args(&[flag, "1"])).expect(flag);
    }
}

/// The directory of this process's key files.
fn key_dir() -> PathBuf {
    std::env::temp_dir().join(format!("mcp-serve-keys-{}", std::process::id()))
}

/// A key file named `name` holding `text`.
fn key_file(name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(key_dir()).unwrap();
    let path = key_dir().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_state_key_is_64_hex_digits_read_byte_by_byte() {
    let hex: String = (0..32u8).map(|b| format!("{:02x}", b * 7 + 3)).collect();
    let path = key_file("good", &format!("  {}\n", hex.to_uppercase()));
    let want: Vec<u8> = (0..32u8).map(|b| b * 7 + 3).collect();
    assert_eq!(read_state_key(&path).unwrap().to_vec(), want);
    let cfg = configured(&["--state-key-file", path.to_str().unwrap()]);
    assert_eq!(cfg.modern.state_key.map(|k| k.to_vec()), Some(want));

    for (name, text, found) in [
        ("short", &hex[..63], 63),
        ("long", &format!("{hex}0")[..], 65),
        ("not-hex", &format!("{}g", &hex[..63])[..], 64),
        ("sign", &format!("+{}", &hex[..63])[..], 64),
        (
            "inner-space",
            &format!("{} {}", &hex[..31], &hex[32..])[..],
            64,
        ),
    ] {
        let path = key_file(name, text);
        let e = read_state_key(&path).expect_err(name);
        assert!(e.contains("expected 64 hex digits"), "{name}: {e}");
        assert!(
            e.contains(&format!("found {found} characters")),
            "{name}: {e}"
        );
        assert!(
            e.starts_with(&format!("--state-key-file {}", path.display())),
            "{e}"
        );
    }
    let missing = key_dir().join("missing");
    let e = read_state_key(&missing).expect_err("no file");
    assert!(
        e.starts_with(&format!("--state-key-file {}: ", missing.display())),
        "{e}"
    );
    std::fs::remove_dir_all(key_dir()).unwrap();
}

#[tokio::test]
async fn a_store_is_memory_or_redis_and_leases_need_redis() {
    for (options, want) in [
        (&["--store", "ftp://x/"][..], "--store must be `memory`"),
        (&["--store", "Memory"], "got \"Memory\""),
        (
            &["--lease-renew-ms", "5"],
            "mean nothing with --store memory",
        ),
        (&["--lease-ttl-ms", "5"], "mean nothing with --store memory"),
    ] {
        let a = args(options);
        let e = with_store(config(&a).unwrap(), &a)
            .await
            .map(|_| ())
            .expect_err(options[0]);
        assert!(e.contains(want), "{options:?}: {e}");
    }
    let a = args(&["--store", "memory"]);
    let cfg = with_store(config(&a).unwrap(), &a).await.unwrap();
    assert!(cfg.legacy.polling().tasks.is_some());
}
