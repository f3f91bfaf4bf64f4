//! The scenarios of the cells with a peer in them: what every adapter
//! implements (the peer client contract, README "Peers").

use std::fmt;

use super::super::scenario::Scenario;

/// One scenario of a peer cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeerScenario {
    /// `echo` and `add` answered (as JSON in a JSON-mode column).
    Call,
    /// `countdown`: progress 1..3 exactly once each, then `done`.
    Progress,
    /// `ask_name`: the server asks for input (elicitation, or an MRTR round
    /// on 2026-07-28), the client answers "Ada".
    Input,
    /// `countdown` 1..4 whose SSE stream the server closes after the 2nd
    /// event (SEP-1699): every progress once, resumed by GET with
    /// `Last-Event-ID` where the revision has it.
    Disconnect,
}

impl PeerScenario {
    /// Every scenario, in report order.
    pub const ALL: [PeerScenario; 4] = [
        PeerScenario::Call,
        PeerScenario::Progress,
        PeerScenario::Input,
        PeerScenario::Disconnect,
    ];

    /// The name passed as `{scenario}`.
    pub fn name(self) -> &'static str {
        match self {
            PeerScenario::Call => "call",
            PeerScenario::Progress => "progress",
            PeerScenario::Input => "input",
            PeerScenario::Disconnect => "disconnect",
        }
    }

    /// The scenario of our own matrix whose prediction applies.
    pub fn scenario(self) -> Scenario {
        match self {
            PeerScenario::Call => Scenario::Sse,
            PeerScenario::Progress => Scenario::Progress,
            PeerScenario::Input => Scenario::Input,
            PeerScenario::Disconnect => Scenario::Disconnect,
        }
    }

    /// Whether it runs against a server in `mode`: a JSON-mode server has
    /// no stream to carry notifications or requests before the answer
    /// (Transports, "Sending Messages to the Server": "return one JSON
    /// object"), so only `call` runs there.
    pub fn runs_in_mode(self, mode: &str) -> bool {
        mode != "json" || self == PeerScenario::Call
    }
}

impl fmt::Display for PeerScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
