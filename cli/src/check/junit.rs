//! `check-server --junit FILE`: the report as JUnit XML, written with the
//! maintained `quick-junit` crate.
//!
//! One test suite per revision checked, one test case per check (named by
//! its id, class `check-server.<revision>`), with the check's level, spec
//! section and address as properties. A failed check is a `<failure>`
//! whose message is the reason and whose type is the level (`MUST`,
//! `SHOULD`, `MAY`, `POLICY`), so a CI can tell them apart; a check that
//! was not applicable or inconclusive is `<skipped>` with its reason; a
//! warning passes with the warning on its `system-out`.

use quick_junit::{NonSuccessKind, Property, Report as Junit, TestCase, TestCaseStatus, TestSuite};

use super::{Check, Outcome, Report};

fn case(c: &Check) -> TestCase {
    let status = match &c.outcome {
        Outcome::Pass | Outcome::Warn(_) => TestCaseStatus::success(),
        Outcome::Fail(reason) => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(reason.as_str())
                .set_type(c.level.label())
                .set_description(format!("{}\n{}", c.spec, c.spec_url));
            s
        }
        Outcome::NotApplicable(reason) | Outcome::Inconclusive(reason) => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(format!("{}: {reason}", c.outcome.label()))
                .set_type(c.outcome.label());
            s
        }
    };
    let mut t = TestCase::new(c.id, status);
    t.set_classname(format!("check-server.{}", c.revision));
    t.add_properties([
        Property::new("level", c.level.label()),
        Property::new("title", c.title),
        Property::new("spec-section", c.spec_section),
        Property::new("spec-url", c.spec_url.as_str()),
    ]);
    if let Outcome::Warn(w) = &c.outcome {
        t.set_system_out(format!("warn: {w}"));
    }
    t
}

/// The report as a JUnit XML document.
pub fn render(report: &Report) -> Result<String, String> {
    let mut junit = Junit::new(format!("check-server {}", report.url));
    let mut revisions = Vec::new();
    for c in &report.checks {
        if !revisions.contains(&c.revision) {
            revisions.push(c.revision.clone());
        }
    }
    for rev in revisions {
        let mut suite = TestSuite::new(format!("check-server {rev}"));
        suite.add_test_cases(report.checks.iter().filter(|c| c.revision == rev).map(case));
        junit.add_test_suite(suite);
    }
    junit
        .to_string()
        .map_err(|e| format!("cannot write the JUnit report: {e}"))
}
