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

use super::{Check, Level, Outcome, Report};

/// How one case ended, for [`render_cases`].
#[derive(Clone, Debug)]
pub enum CaseOutcome {
    /// Passed (`warning`: passed with a warning, on `system-out`).
    Pass {
        /// A warning to show, if any.
        warning: Option<String>,
    },
    /// Failed: `<failure>` with the reason as message, the level as type
    /// and `description` as text.
    Fail {
        /// What went wrong.
        reason: String,
        /// The spec sentence (and its address) behind the check.
        description: String,
    },
    /// Not applicable or inconclusive: `<skipped>`.
    Skipped {
        /// `n/a`, `inconclusive`, ...
        label: String,
        /// Why.
        reason: String,
    },
}

/// One test case of a JUnit report, from `check-server` or `check-client`.
#[derive(Clone, Debug)]
pub struct Case {
    /// The check's name.
    pub name: String,
    /// The suite it belongs to (one per revision).
    pub suite: String,
    /// Its class name (`check-server.<revision>`).
    pub class: String,
    /// The level of the sentence it checks.
    pub level: Level,
    /// How it ended.
    pub outcome: CaseOutcome,
    /// More properties (`level` is always added first).
    pub properties: Vec<(String, String)>,
}

fn test_case(c: &Case) -> TestCase {
    let status = match &c.outcome {
        CaseOutcome::Pass { .. } => TestCaseStatus::success(),
        CaseOutcome::Fail {
            reason,
            description,
        } => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(reason.as_str())
                .set_type(c.level.label())
                .set_description(description.as_str());
            s
        }
        CaseOutcome::Skipped { label, reason } => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(format!("{label}: {reason}"))
                .set_type(label.as_str());
            s
        }
    };
    let mut t = TestCase::new(c.name.as_str(), status);
    t.set_classname(c.class.as_str());
    t.add_property(Property::new("level", c.level.label()));
    t.add_properties(
        c.properties
            .iter()
            .map(|(k, v)| Property::new(k.as_str(), v.as_str())),
    );
    if let CaseOutcome::Pass {
        warning: Some(w), ..
    } = &c.outcome
    {
        t.set_system_out(format!("warn: {w}"));
    }
    t
}

/// `cases` as a JUnit XML document titled `title`: one test suite per
/// distinct `suite`, in first-seen order.
pub fn render_cases(title: &str, cases: &[Case]) -> Result<String, String> {
    let mut junit = Junit::new(title);
    let mut suites: Vec<&str> = Vec::new();
    for c in cases {
        if !suites.contains(&c.suite.as_str()) {
            suites.push(&c.suite);
        }
    }
    for name in suites {
        let mut suite = TestSuite::new(name);
        suite.add_test_cases(cases.iter().filter(|c| c.suite == name).map(test_case));
        junit.add_test_suite(suite);
    }
    junit
        .to_string()
        .map_err(|e| format!("cannot write the JUnit report: {e}"))
}

fn case(c: &Check) -> Case {
    let outcome = match &c.outcome {
        Outcome::Pass => CaseOutcome::Pass { warning: None },
        Outcome::Warn(w) => CaseOutcome::Pass {
            warning: Some(w.clone()),
        },
        Outcome::Fail(reason) => CaseOutcome::Fail {
            reason: reason.clone(),
            description: format!("{}\n{}", c.spec, c.spec_url),
        },
        Outcome::NotApplicable(reason) | Outcome::Inconclusive(reason) => CaseOutcome::Skipped {
            label: c.outcome.label().to_owned(),
            reason: reason.clone(),
        },
    };
    Case {
        name: c.id.to_owned(),
        suite: format!("check-server {}", c.revision),
        class: format!("check-server.{}", c.revision),
        level: c.level,
        outcome,
        properties: vec![
            ("title".into(), c.title.into()),
            ("spec-section".into(), c.spec_section.into()),
            ("spec-url".into(), c.spec_url.clone()),
        ],
    }
}

/// The report as a JUnit XML document.
pub fn render(report: &Report) -> Result<String, String> {
    let cases: Vec<Case> = report.checks.iter().map(case).collect();
    render_cases(&format!("check-server {}", report.url), &cases)
}
