//! What a process costs, read from `/proc` (Linux): resident memory, open
//! file descriptors and CPU time — of a server child by its pid, or of the
//! benchmark itself (`self`).

use std::time::Duration;

/// A process to read: a pid, or the benchmark process itself.
#[derive(Clone, Copy, Debug)]
pub enum Pid {
    /// `/proc/self`.
    Current,
    /// `/proc/PID`.
    Of(u32),
}

impl Pid {
    fn dir(self) -> String {
        match self {
            Pid::Current => "/proc/self".into(),
            Pid::Of(p) => format!("/proc/{p}"),
        }
    }
}

/// Resident set size in KiB (`VmRSS` of `/proc/PID/status`).
pub fn rss_kib(pid: Pid) -> Option<u64> {
    let status = std::fs::read_to_string(format!("{}/status", pid.dir())).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Open file descriptors (entries of `/proc/PID/fd`).
pub fn open_fds(pid: Pid) -> Option<u64> {
    Some(std::fs::read_dir(format!("{}/fd", pid.dir())).ok()?.count() as u64)
}

/// CPU time (user + system) the process has used so far.
///
/// Summed over its live threads from `/proc/PID/task/*/schedstat`
/// (nanoseconds, so short runs do not round to zero) plus nothing for
/// threads that have exited; falls back to `/proc/PID/stat`'s clock ticks.
pub fn cpu_time(pid: Pid) -> Duration {
    let dir = format!("{}/task", pid.dir());
    let mut ns: u64 = 0;
    let mut any = false;
    if let Ok(tasks) = std::fs::read_dir(&dir) {
        for t in tasks.flatten() {
            let path = t.path().join("schedstat");
            if let Some(v) = std::fs::read_to_string(path)
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            {
                ns += v;
                any = true;
            }
        }
    }
    if any {
        return Duration::from_nanos(ns);
    }
    stat_cpu(pid).unwrap_or_default()
}

/// `utime + stime` of `/proc/PID/stat`, in clock ticks converted to time.
fn stat_cpu(pid: Pid) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("{}/stat", pid.dir())).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line: 12 and 13 after `) `.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let hz = rustix::param::clock_ticks_per_second().max(1);
    Some(Duration::from_secs_f64(ticks as f64 / hz as f64))
}

/// Bytes of RSS each of `n` things (idle sessions, pending requests) holds,
/// from the resident set's `before` and `after` (KiB) around making them:
/// negative when it shrank, which a figure should show rather than hide.
pub fn bytes_each(before_kib: u64, after_kib: u64, n: usize) -> f64 {
    (after_kib as f64 - before_kib as f64) * 1024.0 / n.max(1) as f64
}

/// Raises the soft open-file limit to the hard one (children inherit it);
/// returns the soft limit in force afterwards.
pub fn raise_nofile_limit() -> u64 {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut lim = getrlimit(Resource::Nofile);
    if lim.current != lim.maximum {
        lim.current = lim.maximum;
        if let Err(e) = setrlimit(Resource::Nofile, lim) {
            tracing::warn!("cannot raise the open-file limit: {e}");
        }
    }
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        // Resident memory grows by what is touched (other tests of this
        // binary run beside this one, but none frees 48 MiB meanwhile).
        let before = rss_kib(Pid::Current).unwrap();
        let touched = vec![1u8; 64 << 20];
        let after = rss_kib(Pid::Current).unwrap();
        assert!(after >= before + (48 << 10), "{before} -> {after} KiB");
        drop(std::hint::black_box(touched));
        assert!(open_fds(Pid::Current).unwrap() >= 3);
        let before = cpu_time(Pid::Current);
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(x != 1);
        assert!(cpu_time(Pid::Current) > before);
        assert!(stat_cpu(Pid::Current).is_some());
    }

    #[test]
    fn the_growth_is_shared() {
        assert_eq!(bytes_each(1_000, 1_002, 2), 1_024.0);
        assert_eq!(bytes_each(1_000, 1_003, 4), 768.0);
        assert_eq!(bytes_each(1_002, 1_000, 2), -1_024.0);
        assert_eq!(bytes_each(1_000, 1_001, 0), 1_024.0);
    }

    /// `/proc/PID/stat`'s ticks (the fallback) and the threads' schedstat
    /// nanoseconds tell the same CPU time, within the ticks' granularity.
    /// Read of a busy child, one thread that lives through the reads (this
    /// process's other test threads come and go, and an exited thread's
    /// time is in `stat` but in no live thread's schedstat).
    #[test]
    fn the_fallback_reads_the_same_cpu_time() {
        // A redirection a turn: about half the child's time is the
        // kernel's, so both of `stat`'s fields count. Killed however the
        // test ends (a failed assertion included: it would spin on, and
        // hold the test's output open, forever).
        let child = mcp_test_support::process::KillOnDrop(
            std::process::Command::new("sh")
                .args(["-c", "while :; do : > /dev/null; done"])
                .spawn()
                .expect("sh"),
        );
        let pid = Pid::Of(child.0.id());
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while cpu_time(pid) < Duration::from_millis(300) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let ticks = stat_cpu(pid).expect("the child's stat");
        let exact = cpu_time(pid);
        drop(child);
        assert!(
            exact >= Duration::from_millis(300),
            "the child ran {exact:?}"
        );
        // Ticks are 10 ms at 100 Hz; the two reads are microseconds apart.
        let apart = ticks.abs_diff(exact);
        assert!(
            apart < Duration::from_millis(60),
            "stat {ticks:?}, schedstat {exact:?}"
        );
    }

    /// The soft open-file limit is raised to the hard one (children, the
    /// servers a benchmark starts, inherit it).
    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_one() {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let mut lim = getrlimit(Resource::Nofile);
        let hard = lim.maximum;
        // Lowered a little first, so there is something to raise (never
        // below what the other tests of this binary may hold open).
        if let Some(h) = hard
            && h > 8192
        {
            lim.current = Some(h - 1);
            setrlimit(Resource::Nofile, lim).expect("lowering the soft limit");
            assert_eq!(getrlimit(Resource::Nofile).current, Some(h - 1));
        }
        assert_eq!(raise_nofile_limit(), hard.unwrap_or(u64::MAX));
        assert_eq!(getrlimit(Resource::Nofile).current, hard);
    }
}
