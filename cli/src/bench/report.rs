//! The benchmark's table (the JSON is [`Report`]'s serialisation).

use std::fmt::Write;

use super::Report;

/// The report as plain-text tables.
pub fn table(r: &Report) -> String {
    let mut out = String::new();
    let m = &r.machine;
    let _ = writeln!(
        out,
        "machine: {} CPUs (load average {:.2} at the start), open-file limit {}; rate workloads: {} connections, {} ms each (closed loop), {} round(s); store: {}",
        m.cpus, m.load_average, m.nofile_limit, m.connections, m.duration_ms, m.rounds, m.store
    );
    if !r.throughput.is_empty() {
        let _ = writeln!(
            out,
            "\n{:<18} {:>10} {:>6} {:>9} {:>6} {:>9} {:>6} {:>9} {:>9} {:>6}  description",
            "workload",
            "req/s",
            "×floor",
            "p50 µs",
            "×floor",
            "p99 µs",
            "×floor",
            "srv µs/r",
            "cli µs/r",
            "errors"
        );
        for t in &r.throughput {
            let f = &t.figures;
            let _ = writeln!(
                out,
                "{:<18} {:>10.0} {:>6.2} {:>9.0} {:>6.2} {:>9.0} {:>6.2} {:>9.1} {:>9.1} {:>6}  {}",
                t.workload,
                f.requests_per_sec,
                t.rps_ratio_to_floor,
                f.p50_us,
                t.p50_ratio_to_floor,
                f.p99_us,
                t.p99_ratio_to_floor,
                f.server_cpu_us_per_request,
                f.client_cpu_us_per_request,
                f.errors,
                t.description
            );
            if m.rounds > 1 && t.workload != "floor" {
                let _ = writeln!(
                    out,
                    "{:<18} ×floor over {} rounds: {:.2}–{:.2} (the row is the median round)",
                    "", m.rounds, t.rps_ratio_min, t.rps_ratio_max
                );
            }
            if let Some(e) = &f.first_error {
                let _ = writeln!(out, "{:<18} first error: {e}", "");
            }
        }
    }
    if let Some(x) = r.legacy_sse_rate_over_rmcp {
        let _ = writeln!(
            out,
            "\nlegacy-sse against rmcp 3.11 (same load, same run): {x:.2}× rmcp's request rate; rmcp spends {:.2}× the server CPU per request",
            r.rmcp_server_cpu_over_legacy_sse.unwrap_or(0.0)
        );
    }
    if let Some(c) = &r.cancel_by_close {
        let _ = writeln!(
            out,
            "\ncancel-by-close (2026-07-28, server in process): {} trials, client close → handler's token p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
            c.trials, c.p50_us, c.p99_us, c.max_us
        );
    }
    if let Some(c) = &r.resume_after_disconnect {
        let _ = writeln!(
            out,
            "\nresume after disconnect (2025-11-25, retry 0, server in process): {} trials, end of stream → first resumed event p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
            c.trials, c.p50_us, c.p99_us, c.max_us
        );
    }
    if let Some(i) = &r.idle_sessions {
        let _ = writeln!(
            out,
            "\nidle 2025-11-25 sessions: {} sessions, server RSS {} → {} KiB: {:.0} bytes per idle session",
            i.sessions, i.rss_before_kib, i.rss_after_kib, i.bytes_per_idle_session
        );
    }
    if !r.long_running.is_empty() {
        let _ = writeln!(
            out,
            "\nlong-running: {} requests at once, {} s of work each (progress every second; tasks: `slow`, no progress), polling retry {} ms",
            m.long_requests, m.long_seconds, m.retry_ms
        );
        let _ = writeln!(
            out,
            "{:<10} {:>6} {:>4} {:>7} {:>6} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9}",
            "mode",
            "done",
            "err",
            "http/r",
            "prog/r",
            "p50 ms",
            "p99 ms",
            "RSS KiB",
            "B/pend",
            "fds idle",
            "fds mid",
            "fds peak",
            "srv ms/r",
            "cli ms/r"
        );
        for l in &r.long_running {
            let _ = writeln!(
                out,
                "{:<10} {:>6} {:>4} {:>7.2} {:>6.2} {:>9.0} {:>9.0} {:>9} {:>9.0} {:>8} {:>8} {:>8} {:>9.3} {:>9.3}",
                l.mode,
                l.completed,
                l.errors,
                l.http_requests_per_request,
                l.progress_per_request,
                l.completion_p50_ms,
                l.completion_p99_ms,
                l.server_rss_peak_kib,
                l.server_bytes_per_pending_request,
                l.server_fds_idle,
                l.server_fds_midway,
                l.server_fds_peak,
                l.server_cpu_ms_per_request,
                l.client_cpu_ms_per_request
            );
            if let Some(e) = &l.first_error {
                let _ = writeln!(out, "{:<10} first error: {e}", "");
            }
        }
        if let (Some(p50), Some(p99)) = (
            r.polling_extra_latency_p50_ms,
            r.polling_extra_latency_p99_ms,
        ) {
            let _ = writeln!(
                out,
                "polling adds {p50:.0} ms at p50 and {p99:.0} ms at p99 to completion (vs held-2025)"
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::Machine;
    use super::super::load::LoadFigures;
    use super::super::throughput::ThroughputRow;
    use super::*;

    fn row(workload: &'static str, rps: f64, ratio: f64, error: Option<&str>) -> ThroughputRow {
        ThroughputRow {
            workload,
            description: "what it sends",
            figures: LoadFigures {
                requests_per_sec: rps,
                requests: 1000,
                errors: u64::from(error.is_some()),
                p50_us: 400.0,
                p99_us: 900.0,
                server_cpu_us_per_request: 9.2,
                client_cpu_us_per_request: 8.5,
                first_error: error.map(str::to_owned),
            },
            rps_ratio_to_floor: ratio,
            p50_ratio_to_floor: 1.0,
            p99_ratio_to_floor: 1.0,
            rps_ratio_min: ratio - 0.05,
            rps_ratio_max: ratio + 0.05,
        }
    }

    fn report(rounds: usize, throughput: Vec<ThroughputRow>) -> Report {
        Report {
            machine: Machine {
                cpus: 2,
                load_average: 0.25,
                nofile_limit: 4096,
                duration_ms: 2000,
                connections: 64,
                rounds,
                long_requests: 0,
                long_seconds: 0,
                retry_ms: 0,
                pool_idle: 0,
                store: "memory".into(),
            },
            throughput,
            idle_sessions: None,
            long_running: Vec::new(),
            cancel_by_close: None,
            resume_after_disconnect: None,
            legacy_sse_rate_over_rmcp: None,
            rmcp_server_cpu_over_legacy_sse: None,
            polling_extra_latency_p50_ms: None,
            polling_extra_latency_p99_ms: None,
        }
    }

    /// The machine line, the rate table with each row's ratio, the rounds'
    /// spread under every row but the floor's (only with more than one
    /// round), a row's first error, and no section for what did not run.
    #[test]
    fn the_table_shows_what_ran() {
        let rows = || {
            vec![
                row("floor", 120_000.0, 1.0, None),
                row("modern-json", 102_000.0, 0.85, Some("status 500")),
            ]
        };
        let text = table(&report(3, rows()));
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("machine: 2 CPUs (load average 0.25 at the start)"),
            "{text}"
        );
        assert!(lines[0].contains("3 round(s); store: memory"), "{text}");
        let header = lines
            .iter()
            .position(|l| l.starts_with("workload"))
            .expect("a header");
        assert!(lines[header + 1].starts_with("floor "), "{text}");
        assert!(lines[header + 2].starts_with("modern-json"), "{text}");
        assert!(lines[header + 2].contains(" 102000   0.85 "), "{text}");
        assert!(
            lines[header + 3]
                .ends_with("×floor over 3 rounds: 0.80–0.90 (the row is the median round)"),
            "{text}"
        );
        assert!(
            lines[header + 4].ends_with("first error: status 500"),
            "{text}"
        );
        assert_eq!(text.matches("rounds:").count(), 1, "{text}");
        assert!(!text.contains("long-running"), "{text}");
        assert!(!text.contains("rmcp"), "{text}");

        let one_round = table(&report(1, rows()));
        assert!(!one_round.contains("rounds:"), "{one_round}");
        let nothing = table(&report(3, Vec::new()));
        assert_eq!(nothing.lines().count(), 1, "{nothing}");
    }
}
