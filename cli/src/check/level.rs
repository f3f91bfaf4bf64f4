//! How binding the rule a check tests is: the RFC 2119 keyword of the spec
//! sentence it quotes (MUST, SHOULD, MAY), or this project's own policy
//! where the spec has no keyword for the behaviour checked.
//!
//! `check-server --fail-on LEVEL` exits 1 only for failures at that level
//! or a stricter one: `must` counts MUST failures; `should` MUST and
//! SHOULD; `may` adds MAY; `policy` counts every failure.

use serde::Serialize;

/// The level of a check, from the sentence it tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// The sentence says **MUST** (or **MUST NOT**).
    Must,
    /// The sentence says **SHOULD** (or **SHOULD NOT**).
    Should,
    /// The sentence says **MAY**: the behaviour is optional, but when a
    /// server does it, it must do it as described.
    May,
    /// This project's policy: what widely used clients need, or what the
    /// spec implies without a keyword (each such check says why).
    Policy,
}

impl Level {
    /// `MUST`, `SHOULD`, `MAY` or `POLICY`.
    pub fn label(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
            Level::Policy => "POLICY",
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// `--fail-on`: the least binding level whose failures make the command
/// fail (exit 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Only MUST failures (the default).
    #[default]
    Must,
    /// MUST and SHOULD failures.
    Should,
    /// MUST, SHOULD and MAY failures.
    May,
    /// Every failure, this project's policies included.
    Policy,
}

impl FailOn {
    /// Whether a failure of a check at `level` counts.
    pub fn counts(self, level: Level) -> bool {
        let bound = match self {
            FailOn::Must => Level::Must,
            FailOn::Should => Level::Should,
            FailOn::May => Level::May,
            FailOn::Policy => Level::Policy,
        };
        level <= bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_threshold_counts_its_level_and_the_stricter_ones() {
        let all = [Level::Must, Level::Should, Level::May, Level::Policy];
        let counted = |f: FailOn| all.iter().filter(|l| f.counts(**l)).count();
        assert_eq!(counted(FailOn::Must), 1);
        assert_eq!(counted(FailOn::Should), 2);
        assert_eq!(counted(FailOn::May), 3);
        assert_eq!(counted(FailOn::Policy), 4);
        assert!(!FailOn::Should.counts(Level::Policy));
        assert!(FailOn::Policy.counts(Level::Must));
        assert_eq!(serde_json::to_value(Level::Should).unwrap(), "SHOULD");
    }
}
