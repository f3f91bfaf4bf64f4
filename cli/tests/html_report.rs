//! The matrix's HTML report in a real browser: headless Chromium loads the
//! page opened at a failing cell, and the rendered DOM must hold the whole
//! grid, that cell selected and its details shown (expected, observed, the
//! spec sentence), every other cell's details hidden. A screenshot is saved
//! as `target/html-report/matrix.png` (a CI artifact).
//!
//! The same for `check-server --format html`, against our server with the
//! priming event switched off by the self-test's fault
//! (`target/html-report/check-server.png`).
//!
//! Skips, saying so, when no Chromium is installed (`.ci/run` installs
//! Debian's `chromium`), so `cargo test` passes on a machine with only Rust.

use std::path::PathBuf;
use std::time::Duration;

use std::sync::Arc;

use mcp_compat::check::{self, CheckOptions, Outcome, id};
use mcp_compat::matrix::report::{Format, render};
use mcp_compat::matrix::run::run_cell;
use mcp_compat::matrix::{ClientKind, Scenario, ServerKind};
use mcp_compat::reference::ReferenceHandler;
use mcp_http_edge::faults::{Fault, Faults};
use mcp_negotiate::server::{MultiConfig, MultiServer, legacy_config};
use mcp_rev_2026_07_28::server::ModernConfig;
use mcp_transport_core::ProtocolVersion;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// The first Chromium on the PATH.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            std::process::Command::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// Runs headless Chromium with `args` then `url`; its stdout.
async fn headless(browser: &str, profile: &std::path::Path, args: &[&str], url: &str) -> String {
    let run = tokio::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .kill_on_drop(true)
        .output();
    // A bound against a browser that never exits, not a speed check.
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("chromium did not exit")
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn the_html_report_renders_in_chromium_with_a_failing_cells_details() {
    // One green cell, and one turned red by an injected bug.
    let green = run_cell(
        ClientKind::C0326,
        ServerKind::S0326,
        |s| s == Scenario::Json,
        Faults::NONE,
    )
    .await;
    let red = run_cell(
        ClientKind::C1125,
        ServerKind::S1125,
        |s| matches!(s, Scenario::Json | Scenario::Disconnect),
        Faults::only(Fault::SkipPriming),
    )
    .await;
    assert!(green.passed() && !red.passed());
    let page = render(&[green, red], Format::Html);
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "self-contained"
    );
    let dir = target_dir().join("html-report");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("matrix.html");
    std::fs::write(&file, &page).unwrap();

    let Some(browser) = chromium() else {
        println!("skipping the browser check: no chromium on the PATH (.ci/run installs it)");
        eprintln!("skipping the browser check: no chromium on the PATH (.ci/run installs it)");
        return;
    };
    let file = file.canonicalize().unwrap();
    let cell = "c-2025-11-25/s-2025-11-25";
    let url = format!("file://{}#{cell}", file.display());
    let profile = dir.join("chromium-profile");
    let dom = headless(browser, &profile, &["--dump-dom"], &url).await;

    let cells = ClientKind::ALL.len() * ServerKind::ALL.len();
    assert_eq!(dom.matches("<td class=\"cell").count(), cells, "{dom}");
    assert_eq!(dom.matches("<td class=\"cell pass").count(), 1, "{dom}");
    assert_eq!(dom.matches("<td class=\"cell filtered").count(), cells - 2);
    // The failing cell is selected and its details shown, the other hidden.
    assert!(
        dom.contains(&format!(
            "<td class=\"cell fail selected\" data-cell=\"{cell}\""
        )),
        "{dom}"
    );
    let start = dom
        .find(&format!("<section class=\"details\" data-cell=\"{cell}\">"))
        .unwrap_or_else(|| panic!("the cell's details are not shown: {dom}"));
    let section = &dom[start..start + dom[start..].find("</section>").unwrap()];
    assert!(
        section.contains("<tr class=\"fail\" data-scenario=\"disconnect\">"),
        "{section}"
    );
    assert!(
        section.contains("did not start with a priming event"),
        "{section}"
    );
    assert!(
        section.contains("SHOULD immediately send an SSE event consisting of an event ID"),
        "the spec sentence: {section}"
    );
    assert!(section.contains("<tr class=\"pass\" data-scenario=\"json\">"));
    assert_eq!(dom.matches("<section class=\"details\"").count(), 2);
    assert!(
        dom.contains("data-cell=\"c-2025-03-26/s-2025-03-26\" hidden"),
        "{dom}"
    );

    let shot = dir.join("matrix.png");
    let _ = std::fs::remove_file(&shot);
    headless(
        browser,
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1500,1100",
            "--hide-scrollbars",
        ],
        &url,
    )
    .await;
    let png = std::fs::read(&shot).expect("a screenshot was written");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    println!("screenshot: {}", shot.display());
}

#[tokio::test]
async fn the_check_server_html_report_renders_in_chromium() {
    // Our server, its 2025-11-25 streams without the priming event.
    let mut legacy = legacy_config();
    legacy.http.faults = Faults::only(Fault::SkipPriming);
    let config = MultiConfig {
        revisions: ProtocolVersion::KNOWN
            .iter()
            .filter(|v| **v != ProtocolVersion::V2024_11_05)
            .cloned()
            .collect(),
        legacy,
        modern: ModernConfig::default(),
        running: Default::default(),
    };
    let server = MultiServer::new(Arc::new(ReferenceHandler::new()), config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = server.route("/mcp");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let report = check::run(&format!("http://{addr}/mcp"), CheckOptions::default())
        .await
        .unwrap();
    task.abort();
    let failing = report
        .find(id::PRIMING_EVENT, &ProtocolVersion::V2025_11_25)
        .expect("the priming check ran at 2025-11-25");
    assert!(matches!(failing.outcome, Outcome::Fail(_)), "{failing:?}");
    let page = mcp_compat::check::report::render(&report, mcp_compat::check::report::Format::Html);
    assert!(self_contained(&page));
    let dir = target_dir().join("html-report");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("check-server.html");
    std::fs::write(&file, &page).unwrap();

    let Some(browser) = chromium() else {
        println!("skipping the browser check: no chromium on the PATH (.ci/run installs it)");
        eprintln!("skipping the browser check: no chromium on the PATH (.ci/run installs it)");
        return;
    };
    let cell = format!("{}/2025-11-25", id::PRIMING_EVENT);
    let url = format!("file://{}#{cell}", file.canonicalize().unwrap().display());
    let profile = dir.join("chromium-profile-check");
    let dom = headless(browser, &profile, &["--dump-dom"], &url).await;
    assert_eq!(
        dom.matches("<td class=\"cell").count(),
        grid_cells(&report),
        "{dom}"
    );
    assert!(
        dom.contains(&format!(
            "<td class=\"cell fail selected\" data-cell=\"{cell}\""
        )),
        "{dom}"
    );
    let start = dom
        .find(&format!("<section class=\"details\" data-cell=\"{cell}\">"))
        .unwrap_or_else(|| panic!("the check's details are not shown: {dom}"));
    let section = &dom[start..start + dom[start..].find("</section>").unwrap()];
    assert!(section.contains(&html_text(failing.spec)), "{section}");
    assert!(section.contains("FAIL"), "{section}");
    let shot = dir.join("check-server.png");
    let _ = std::fs::remove_file(&shot);
    headless(
        browser,
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1300,1500",
            "--hide-scrollbars",
        ],
        &url,
    )
    .await;
    assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"));
}

/// Checks × revisions, as the grid lays them out.
fn grid_cells(report: &check::Report) -> usize {
    let mut ids: Vec<&str> = report.checks.iter().map(|c| c.id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut revs: Vec<&ProtocolVersion> = report.checks.iter().map(|c| &c.revision).collect();
    revs.sort_by_key(|v| v.as_str().to_owned());
    revs.dedup();
    ids.len() * revs.len()
}

/// Text as Chromium serializes it in element content.
fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Nothing on the page is fetched: no external script, style, image or
/// frame (spec sentences may still quote links as text).
fn self_contained(page: &str) -> bool {
    !["src=", "<link", "@import", "url(", "<iframe"]
        .iter()
        .any(|needle| page.contains(needle))
}
