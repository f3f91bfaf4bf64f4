//! `mcp-compat matrix --self-test`: proves the matrix can fail.
//!
//! Each [`Fault`] (an injected bug in the reference server or client, see
//! `mcp_http_edge::faults`) is switched on in turn and the cells and
//! scenarios it concerns are run; the self-test passes only when every
//! fault turns at least one result red **in a scenario meant to catch it**,
//! and when the same cells are all green with no fault (so that a flaky
//! red cannot pass for a catch). Only the concerned cells run, which keeps
//! the whole self-test to a few dozen scenario runs.

use std::fmt::Write as _;

use mcp_http_edge::faults::{Fault, Faults};

use super::run::{ScenarioResult, run_one_with};
use super::{ClientKind as C, Scenario, ServerKind as S};

/// What one fault concerns: where to run it and which scenarios must catch it.
#[derive(Clone, Debug)]
pub struct Target {
    /// The injected bug.
    pub fault: Fault,
    /// The cells to run.
    pub cells: Vec<(C, S)>,
    /// The scenarios to run, each of which is meant to catch the fault.
    pub scenarios: Vec<Scenario>,
}

/// Cells that negotiate 2025-11-25 (SEP-1699 polling).
const POLLING: [(C, S); 2] = [(C::C1125, S::S1125), (C::All, S::Legacy)];
/// Cells on each legacy revision.
const LEGACY: [(C, S); 3] = [
    (C::C0326, S::S0326),
    (C::C0618, S::S0618),
    (C::C1125, S::S1125),
];
/// Cells that negotiate 2026-07-28.
const MODERN: [(C, S); 2] = [(C::Modern, S::S0728), (C::All, S::All)];
/// Cells that negotiate 2026-07-28 with the Tasks extension on both sides.
const MODERN_TASKS: [(C, S); 2] = [(C::Modern, S::All), (C::All, S::All)];

/// The cells and scenarios of each fault.
pub fn target(fault: Fault) -> Target {
    use Scenario as Sc;
    let (cells, scenarios): (&[(C, S)], &[Scenario]) = match fault {
        Fault::ClientIgnoresRetry => (&POLLING, &[Sc::Disconnect]),
        Fault::ReplayInclusive => (&LEGACY, &[Sc::NetworkDrop, Sc::Disconnect]),
        // Without a priming event a long call that sends nothing has no id
        // to resume from.
        Fault::SkipPriming => (&POLLING, &[Sc::Disconnect, Sc::LongRunningDrop]),
        Fault::CancelOnDisconnect => (
            &POLLING,
            &[Sc::NetworkDrop, Sc::Disconnect, Sc::LongRunningDrop],
        ),
        Fault::IgnoreClose => (&MODERN, &[Sc::Cancel, Sc::NetworkDrop, Sc::LongRunningDrop]),
        Fault::LeakOtherStream => (&LEGACY, &[Sc::TwoStreams]),
        Fault::MintSessionId => (&MODERN, &[Sc::Json, Sc::Sse, Sc::Delete]),
        Fault::DropLastBeforeClose => (&POLLING, &[Sc::Disconnect]),
        Fault::IgnoreTaskCancel => (&MODERN_TASKS, &[Sc::Task]),
        Fault::KeepDeletedSession => (&LEGACY, &[Sc::Delete]),
        // A client that reads 400 as a failure, not as "start a new
        // session", fails the expiry; the DELETE check reads the status.
        Fault::GoneSession400 => (&LEGACY, &[Sc::Expiry, Sc::Delete]),
        Fault::ListenUnfiltered => (&MODERN, &[Sc::Changes]),
        Fault::ClientIgnoresEraCache => (&MODERN, &[Sc::EraCache]),
    };
    Target {
        fault,
        cells: cells.to_vec(),
        scenarios: scenarios.to_vec(),
    }
}

/// One fault's run.
#[derive(Debug)]
pub struct FaultRun {
    /// The fault and where it ran.
    pub target: Target,
    /// Every result (red ones caught the fault).
    pub results: Vec<ScenarioResult>,
}

impl FaultRun {
    /// The red results, by name `client x server / scenario`.
    pub fn caught_by(&self) -> Vec<String> {
        self.results
            .iter()
            .filter(|r| !r.passed())
            .map(|r| format!("{} x {} / {}", r.client, r.server, r.scenario))
            .collect()
    }

    /// Whether the fault turned at least one result red.
    pub fn caught(&self) -> bool {
        self.results.iter().any(|r| !r.passed())
    }
}

/// The whole self-test.
#[derive(Debug)]
pub struct SelfTest {
    /// The same cells with no fault: every result must pass.
    pub baseline: Vec<ScenarioResult>,
    /// One run per fault.
    pub runs: Vec<FaultRun>,
}

impl SelfTest {
    /// Whether the baseline is green and every fault was caught.
    pub fn passed(&self) -> bool {
        self.baseline.iter().all(ScenarioResult::passed) && self.runs.iter().all(FaultRun::caught)
    }

    /// The table "fault → cells that caught it", then what went wrong.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let width = Fault::ALL.iter().map(|f| f.name().len()).max().unwrap_or(0);
        let _ = writeln!(out, "{:width$}  cells that caught it", "fault");
        for run in &self.runs {
            let caught = run.caught_by();
            let text = if caught.is_empty() {
                "NOT CAUGHT".to_owned()
            } else {
                caught.join(", ")
            };
            let _ = writeln!(out, "{:width$}  {text}", run.target.fault.name());
        }
        let bad: Vec<_> = self.baseline.iter().filter(|r| !r.passed()).collect();
        if bad.is_empty() {
            let _ = writeln!(
                out,
                "\nbaseline (no fault): {} results, all green",
                self.baseline.len()
            );
        } else {
            let _ = writeln!(out, "\nbaseline (no fault) is not green:");
            for r in bad {
                let _ = writeln!(out, "  {}", r.explain());
            }
        }
        for run in self.runs.iter().filter(|r| r.caught()) {
            for r in run.results.iter().filter(|r| !r.passed()) {
                let _ = writeln!(out, "  [{}] {}", run.target.fault.name(), r.explain());
            }
        }
        let _ = writeln!(
            out,
            "\nself-test {}: {}/{} faults caught",
            if self.passed() { "passed" } else { "FAILED" },
            self.runs.iter().filter(|r| r.caught()).count(),
            self.runs.len()
        );
        out
    }
}

async fn run_target(target: &Target, faults: Faults) -> Vec<ScenarioResult> {
    let mut results = Vec::new();
    for (c, s) in &target.cells {
        for sc in &target.scenarios {
            results.push(run_one_with(*c, *s, *sc, faults).await);
        }
    }
    results
}

/// Runs the self-test for `faults` (every fault when empty); `progress` is
/// told of each finished fault.
pub async fn run(faults: &[Fault], progress: impl Fn(&str)) -> SelfTest {
    let faults: Vec<Fault> = if faults.is_empty() {
        Fault::ALL.to_vec()
    } else {
        faults.to_vec()
    };
    let targets: Vec<Target> = faults.into_iter().map(target).collect();
    // The baseline: every concerned (cell, scenario) once, with no fault.
    let mut plan: Vec<(C, S, Scenario)> = Vec::new();
    for t in &targets {
        for (c, s) in &t.cells {
            for sc in &t.scenarios {
                if !plan.contains(&(*c, *s, *sc)) {
                    plan.push((*c, *s, *sc));
                }
            }
        }
    }
    let mut baseline = Vec::new();
    for (c, s, sc) in plan {
        baseline.push(run_one_with(c, s, sc, Faults::NONE).await);
    }
    progress(&format!(
        "baseline: {}/{} green",
        baseline.iter().filter(|r| r.passed()).count(),
        baseline.len()
    ));
    let mut runs = Vec::new();
    for target in targets {
        let fault = target.fault;
        let results = run_target(&target, Faults::only(fault)).await;
        let run = FaultRun { target, results };
        progress(&format!(
            "{}: {}",
            fault.name(),
            if run.caught() { "caught" } else { "NOT CAUGHT" }
        ));
        runs.push(run);
    }
    SelfTest { baseline, runs }
}

#[cfg(test)]
mod tests {
    use super::super::expect::expected;
    use super::super::run::Observed;
    use super::*;

    /// `c-2025-11-25 x s-2025-11-25 / json`, green or red.
    fn result(green: bool) -> ScenarioResult {
        let (client, server, scenario) = (C::C1125, S::S1125, Scenario::Json);
        let prediction = expected(client, server, scenario);
        ScenarioResult {
            client,
            server,
            scenario,
            negotiated: prediction.revision.clone(),
            prediction,
            observed: if green {
                Observed::Works("answered".into())
            } else {
                Observed::Failed {
                    kind: None,
                    message: "broken".into(),
                }
            },
        }
    }

    fn run(fault: Fault, greens: &[bool]) -> FaultRun {
        FaultRun {
            target: target(fault),
            results: greens.iter().map(|g| result(*g)).collect(),
        }
    }

    #[test]
    fn a_fault_is_caught_by_a_red_result_and_the_baseline_must_be_green() {
        let caught = run(Fault::SkipPriming, &[true, false]);
        assert!(caught.caught());
        assert_eq!(caught.caught_by(), ["c-2025-11-25 x s-2025-11-25 / json"]);
        let missed = run(Fault::MintSessionId, &[true, true]);
        assert!(!missed.caught());
        assert!(missed.caught_by().is_empty());
        let green = vec![result(true)];
        let all = |baseline: Vec<ScenarioResult>, runs| SelfTest { baseline, runs };
        assert!(all(green.clone(), vec![caught]).passed());
        let caught = run(Fault::SkipPriming, &[false]);
        assert!(!all(vec![result(false)], vec![caught]).passed());
        assert!(!all(green, vec![missed]).passed());
    }

    #[test]
    fn the_table_names_each_fault_and_what_caught_it() {
        let t = SelfTest {
            baseline: vec![result(true), result(true)],
            runs: vec![
                run(Fault::SkipPriming, &[false]),
                run(Fault::MintSessionId, &[true]),
            ],
        }
        .render();
        let width = Fault::ALL.iter().map(|f| f.name().len()).max().unwrap();
        let caught = format!(
            "{:width$}  c-2025-11-25 x s-2025-11-25 / json\n",
            "skip-priming"
        );
        let missed = format!("{:width$}  NOT CAUGHT\n", "mint-session-id");
        assert!(
            t.starts_with(&format!("{:width$}  cells that caught it\n", "fault")),
            "{t}"
        );
        assert!(t.contains(&caught) && t.contains(&missed), "{t}");
        assert!(
            t.contains("\nbaseline (no fault): 2 results, all green\n"),
            "{t}"
        );
        assert!(
            t.contains(&format!("  [skip-priming] {}\n", result(false).explain())),
            "{t}"
        );
        assert!(
            t.ends_with("\nself-test FAILED: 1/2 faults caught\n"),
            "{t}"
        );
        let t = SelfTest {
            baseline: vec![result(false)],
            runs: vec![run(Fault::SkipPriming, &[false])],
        }
        .render();
        assert!(
            t.contains(&format!(
                "\nbaseline (no fault) is not green:\n  {}\n",
                result(false).explain()
            )),
            "{t}"
        );
        let t = SelfTest {
            baseline: vec![result(true)],
            runs: vec![run(Fault::SkipPriming, &[false])],
        }
        .render();
        assert!(
            t.ends_with("\nself-test passed: 1/1 faults caught\n"),
            "{t}"
        );
    }

    #[test]
    fn every_fault_runs_where_its_scenarios_can_catch_it() {
        for fault in Fault::ALL {
            let t = target(fault);
            assert!(!t.cells.is_empty() && !t.scenarios.is_empty(), "{fault:?}");
        }
        // Polling faults run on cells that negotiate 2025-11-25.
        for fault in [Fault::ClientIgnoresRetry, Fault::DropLastBeforeClose] {
            assert_eq!(target(fault).cells, POLLING, "{fault:?}");
            assert_eq!(target(fault).scenarios, [Scenario::Disconnect], "{fault:?}");
        }
        assert_eq!(target(Fault::IgnoreTaskCancel).cells, MODERN_TASKS);
        assert_eq!(
            target(Fault::LeakOtherStream).scenarios,
            [Scenario::TwoStreams]
        );
    }
}
