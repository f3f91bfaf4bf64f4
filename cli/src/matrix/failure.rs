//! The ways a scenario is predicted to fail ([`Failure`]), apart from the
//! predictions (`expect`) so the harness that classifies errors needs no
//! prediction machinery.

/// A predicted failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No revision both sides speak: negotiation ends in an error that names
    /// both sides.
    NoMutualRevision,
    /// The request's stream broke and the revision cannot resume it: a clear
    /// error, no hang (and, on 2026-07-28, the server cancelled the request).
    NotResumable,
    /// The handler asked for a kind of client input the revision does not
    /// have: the call ends with a tool execution error (`isError: true`),
    /// no hang.
    InputUnavailable,
    /// The server cannot send requests to the client in its configuration
    /// (no session to carry the answer: a manifest's `back_channel =
    /// false`), so it does not ask: the call ends with an error — a
    /// JSON-RPC error or a tool execution error —, no input request, no
    /// hang.
    NoBackChannel,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Failure::NoMutualRevision => "fails: no mutually supported revision",
            Failure::NotResumable => "fails: stream not resumable",
            Failure::InputUnavailable => "fails: tool error, input kind not in this revision",
            Failure::NoBackChannel => "fails: an error, the server cannot ask in this mode",
        })
    }
}
