//! The peer manifest: one TOML file per external implementation
//! (`peers/NAME.toml`), read by `mcp-compat matrix --peer NAME`.
//!
//! ```toml
//! name = "ts-sdk"
//! version = "1.32.2"
//! install = ["sh", "peers/ts-sdk/install.sh"]      # run once, idempotent
//!
//! [server]                                          # optional: no server columns
//! revisions = ["2025-03-26", "2025-06-18", "2025-11-25"]
//! modes = ["sse", "json"]                           # one column per mode
//! command = ["node", "peers/ts-sdk/server.mjs", "--port", "{port}", "--mode", "{mode}"]
//! [server.mode.stateless]                           # optional: what a mode cannot do
//! back_channel = false           # no server-to-client requests on legacy revisions
//! resumption = false             # never closes a stream early for a resumption
//!
//! [client]                                          # optional: no client rows
//! command = ["node", "peers/ts-sdk/client.mjs", "{url}", "{scenario}", "{revision}"]
//! [[client.rows]]
//! name = "c-2025-11-25"          # the row's label
//! revision = "2025-11-25"        # what `{revision}` becomes
//! offers = ["2025-11-25"]        # what it offers, most preferred first
//! accepts = ["2025-03-26", "2025-06-18", "2025-11-25"]  # counter-offers it takes
//!
//! [[quirks]]                                        # known deviations
//! id = "..."; side = "server"; scenario = "disconnect"; revisions = ["2025-11-25"]
//! observed = "fails"; what = "..."; upstream = "..."; versions = "1.32.2"
//! intermittent = false            # true: a race; not "gone" when absent
//! ```
//!
//! Commands run in the directory that holds `peers/` (the repository
//! root); a server command containing `{revision}` gives one column per
//! revision and mode, serving only that revision.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_transport_core::ProtocolVersion;
use serde::Deserialize;

/// One peer's manifest.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Short name (`ts-sdk`): the file is `peers/NAME.toml`.
    pub name: String,
    /// The pinned version of the implementation.
    pub version: String,
    /// What it is, for the report.
    #[serde(default)]
    pub description: String,
    /// The install command (argv), run before the peer's cells; it must be
    /// idempotent and install into `.cache/`.
    #[serde(default)]
    pub install: Vec<String>,
    /// The server program, if the peer has one.
    pub server: Option<ServerSpec>,
    /// The client program, if the peer has one.
    pub client: Option<ClientSpec>,
    /// Known deviations from the spec's prediction.
    #[serde(default)]
    pub quirks: Vec<Quirk>,
}

/// A peer's server program.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// The revisions it serves.
    pub revisions: Vec<String>,
    /// Its modes (`sse`, `json`, `stateless`, ...), one column each.
    pub modes: Vec<String>,
    /// argv with `{port}`, `{mode}` and optionally `{revision}`.
    pub command: Vec<String>,
    /// What a mode cannot do, by mode (a mode not named can do
    /// everything): the prediction follows the spec for such a server.
    #[serde(default)]
    pub mode: BTreeMap<String, ModeLimits>,
}

impl ServerSpec {
    /// What `mode` can do.
    pub fn limits(&self, mode: &str) -> ModeLimits {
        self.mode.get(mode).copied().unwrap_or_default()
    }
}

/// What a server mode can do (`[server.mode.NAME]`), for a configuration
/// that cannot do everything the spec lets a server do — a limit of the
/// configuration, not a deviation from the spec, so it is not a quirk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeLimits {
    /// It can send requests to the client (elicitation, ...) on a legacy
    /// revision; `false` for a server without sessions, which has no way
    /// to receive the answer. Default `true`.
    #[serde(default = "yes")]
    pub back_channel: bool,
    /// It closes a request's stream early and lets the client resume it
    /// (SEP-1699, 2025-11-25); `false` for a server without an event
    /// store. Default `true`.
    #[serde(default = "yes")]
    pub resumption: bool,
}

impl Default for ModeLimits {
    fn default() -> Self {
        ModeLimits {
            back_channel: true,
            resumption: true,
        }
    }
}

fn yes() -> bool {
    true
}

/// A peer's client program.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    /// argv with `{url}`, `{scenario}` and `{revision}`.
    pub command: Vec<String>,
    /// One matrix row per entry.
    pub rows: Vec<ClientRow>,
}

/// One configuration of a peer's client: a matrix row.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientRow {
    /// The row's label (`c-2025-11-25`, `c-auto`).
    pub name: String,
    /// What `{revision}` becomes in the client command.
    pub revision: String,
    /// The revisions it offers, most preferred first (modern ones are
    /// tried before `initialize`).
    pub offers: Vec<String>,
    /// The legacy revisions it accepts when the server counter-offers
    /// (default: `offers`).
    #[serde(default)]
    pub accepts: Vec<String>,
}

/// A known deviation of a peer: what it does instead of the prediction.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quirk {
    /// A short id.
    pub id: String,
    /// `server` (the peer's server columns) or `client` (its rows).
    pub side: String,
    /// The scenario it shows in (`""`: documented, not exercised).
    #[serde(default)]
    pub scenario: String,
    /// The revisions it shows on (empty: all).
    #[serde(default)]
    pub revisions: Vec<String>,
    /// The server modes it shows in (empty: all).
    #[serde(default)]
    pub modes: Vec<String>,
    /// Only against these counterparts (cell column or row names contain
    /// one of them; empty: any).
    #[serde(default)]
    pub against: Vec<String>,
    /// What happens instead: `works`, `fails` or `absent`.
    pub observed: String,
    /// It shows only sometimes (a race): a cell that matches the spec is
    /// then a pass, not "quirk gone".
    #[serde(default)]
    pub intermittent: bool,
    /// What the peer does, in a sentence.
    pub what: String,
    /// The upstream issue or PR, when known.
    #[serde(default)]
    pub upstream: String,
    /// The versions affected.
    #[serde(default)]
    pub versions: String,
}

impl Manifest {
    /// Parses a manifest and checks what the matrix relies on.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let m: Manifest = toml::from_str(text).map_err(|e| e.to_string())?;
        let check_revs = |what: &str, revs: &[String]| -> Result<(), String> {
            for r in revs {
                if !ProtocolVersion::parse(r).is_well_formed() {
                    return Err(format!("{what}: {r:?} is not a protocol version"));
                }
            }
            Ok(())
        };
        if let Some(s) = &m.server {
            check_revs("server.revisions", &s.revisions)?;
            if s.revisions.is_empty() || s.modes.is_empty() || s.command.is_empty() {
                return Err("server needs revisions, modes and a command".into());
            }
            if !s.command.iter().any(|a| a.contains("{port}")) {
                return Err("server.command has no {port}".into());
            }
            if let Some(m) = s.mode.keys().find(|m| !s.modes.contains(m)) {
                return Err(format!("server.mode.{m}: {m:?} is not one of server.modes"));
            }
        }
        if let Some(c) = &m.client {
            if c.command.is_empty() || c.rows.is_empty() {
                return Err("client needs a command and rows".into());
            }
            for p in ["{url}", "{scenario}"] {
                if !c.command.iter().any(|a| a.contains(p)) {
                    return Err(format!("client.command has no {p}"));
                }
            }
            for r in &c.rows {
                check_revs(&format!("client row {}", r.name), &r.offers)?;
                check_revs(&format!("client row {}", r.name), &r.accepts)?;
            }
        }
        for q in &m.quirks {
            if !matches!(q.side.as_str(), "server" | "client") {
                return Err(format!("quirk {}: side must be server or client", q.id));
            }
            if !matches!(q.observed.as_str(), "works" | "fails" | "absent") {
                return Err(format!(
                    "quirk {}: observed must be works, fails or absent",
                    q.id
                ));
            }
        }
        Ok(m)
    }

    /// Reads `DIR/NAME.toml`.
    pub fn load(dir: &Path, name: &str) -> Result<Manifest, String> {
        let path = dir.join(format!("{name}.toml"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let m = Manifest::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if m.name != name {
            return Err(format!(
                "{}: name is {:?}, not {name:?}",
                path.display(),
                m.name
            ));
        }
        Ok(m)
    }

    /// Every manifest in `dir` (`--peers`), by name.
    pub fn names(dir: &Path) -> Result<Vec<String>, String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        names.sort();
        Ok(names)
    }

    /// `name@version`, as the report shows the peer.
    pub fn label(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

/// Parses a list of revisions (manifest strings are checked by
/// [`Manifest::parse`]).
pub fn versions(list: &[String]) -> Vec<ProtocolVersion> {
    list.iter().map(|s| ProtocolVersion::parse(s)).collect()
}

/// Fills a command template: every `{key}` is replaced by its value.
pub fn fill(template: &[String], values: &[(&str, &str)]) -> Vec<String> {
    template
        .iter()
        .map(|arg| {
            values
                .iter()
                .fold(arg.clone(), |a, (k, v)| a.replace(&format!("{{{k}}}"), v))
        })
        .collect()
}

/// Where the commands run: the parent of the manifests' directory.
pub fn root_of(dir: &Path) -> PathBuf {
    let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    abs.parent().map(Path::to_path_buf).unwrap_or(abs)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A peer with a server, a client row and one quirk (other modules'
    /// tests build on it too).
    pub(crate) const GOOD: &str = r#"
name = "x"
version = "1"
install = ["true"]
[server]
revisions = ["2025-11-25"]
modes = ["sse"]
command = ["srv", "--port", "{port}"]
[client]
command = ["cli", "{url}", "{scenario}", "{revision}"]
[[client.rows]]
name = "c-2025-11-25"
revision = "2025-11-25"
offers = ["2025-11-25"]
[[quirks]]
id = "q"
side = "server"
scenario = "disconnect"
observed = "absent"
what = "never closes"
"#;

    #[test]
    fn a_manifest_parses_and_its_templates_fill() {
        let m = Manifest::parse(GOOD).expect("parses");
        assert_eq!(m.label(), "x@1");
        let c = m.client.expect("client");
        let argv = fill(
            &c.command,
            &[
                ("url", "http://h/mcp"),
                ("scenario", "call"),
                ("revision", "r"),
            ],
        );
        assert_eq!(argv, ["cli", "http://h/mcp", "call", "r"]);
        assert_eq!(m.quirks.len(), 1);
    }

    #[test]
    fn bad_manifests_are_refused_with_the_reason() {
        let no_port = GOOD.replace("\"--port\", \"{port}\"", "\"--port\"");
        assert!(Manifest::parse(&no_port).unwrap_err().contains("{port}"));
        let bad_rev = GOOD.replace("revisions = [\"2025-11-25\"]", "revisions = [\"soon\"]");
        assert!(Manifest::parse(&bad_rev).unwrap_err().contains("soon"));
        let bad_quirk = GOOD.replace("observed = \"absent\"", "observed = \"maybe\"");
        assert!(
            Manifest::parse(&bad_quirk)
                .unwrap_err()
                .contains("observed")
        );
        let unknown = format!("{GOOD}\nextra = 1\n");
        assert!(Manifest::parse(&unknown).is_err());
        let unknown_mode = GOOD.replace(
            "[client]",
            "[server.mode.stateless]\nresumption = false\n[client]",
        );
        assert!(
            Manifest::parse(&unknown_mode)
                .unwrap_err()
                .contains("server.mode.stateless")
        );
        let unknown_limit =
            GOOD.replace("[client]", "[server.mode.sse]\nteleport = false\n[client]");
        assert!(Manifest::parse(&unknown_limit).is_err());
    }

    #[test]
    fn each_side_needs_every_part() {
        let needs = |text: &str, why: &str| {
            let err = Manifest::parse(text).expect_err(text);
            assert!(err.contains(why), "{err}");
        };
        let server = "server needs revisions, modes and a command";
        needs(
            &GOOD.replace("revisions = [\"2025-11-25\"]", "revisions = []"),
            server,
        );
        needs(&GOOD.replace("modes = [\"sse\"]", "modes = []"), server);
        needs(
            &GOOD.replace(
                "command = [\"srv\", \"--port\", \"{port}\"]",
                "command = []",
            ),
            server,
        );
        let client = "client needs a command and rows";
        needs(
            &GOOD.replace(
                "command = [\"cli\", \"{url}\", \"{scenario}\", \"{revision}\"]",
                "command = []",
            ),
            client,
        );
        let rowless = GOOD
            .replace(
                "[[client.rows]]\nname = \"c-2025-11-25\"\nrevision = \"2025-11-25\"\noffers = [\"2025-11-25\"]\n",
                "",
            )
            .replace("\"{revision}\"]\n", "\"{revision}\"]\nrows = []\n");
        assert_ne!(rowless, GOOD);
        needs(&rowless, client);
        needs(
            &GOOD.replace("\"{scenario}\", ", ""),
            "client.command has no {scenario}",
        );
        needs(
            &GOOD.replace("\"{url}\", ", ""),
            "client.command has no {url}",
        );
        needs(
            &GOOD.replace("offers = [\"2025-11-25\"]", "offers = [\"later\"]"),
            "client row c-2025-11-25: \"later\"",
        );
        needs(
            &GOOD.replace("side = \"server\"", "side = \"both\""),
            "quirk q: side must be server or client",
        );
    }

    #[test]
    fn manifests_load_by_name_from_a_directory() {
        let tmp = std::env::temp_dir().join(format!("manifest-load-{}", std::process::id()));
        let dir = tmp.join("peers");
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("x.toml"), GOOD).expect("written");
        std::fs::write(dir.join("a.toml"), GOOD).expect("written");
        std::fs::write(dir.join("notes.md"), "not a manifest").expect("written");
        assert_eq!(Manifest::names(&dir).expect("listed"), ["a", "x"]);
        assert_eq!(Manifest::load(&dir, "x").expect("loads").label(), "x@1");
        let err = Manifest::load(&dir, "a").expect_err("its name is x");
        assert!(err.ends_with("a.toml: name is \"x\", not \"a\""), "{err}");
        let err = Manifest::load(&dir, "b").expect_err("no such file");
        assert!(
            err.starts_with("cannot read ") && err.contains("b.toml"),
            "{err}"
        );
        assert!(Manifest::names(&dir.join("none")).is_err());
        // Commands run in the directory above the manifests.
        assert_eq!(
            root_of(&dir),
            std::fs::canonicalize(&tmp).expect("canonical")
        );
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn a_mode_declares_what_it_cannot_do() {
        let text = GOOD.replace(
            "[client]",
            "[server.mode.sse]\nback_channel = false\n[client]",
        );
        let s = Manifest::parse(&text)
            .expect("parses")
            .server
            .expect("server");
        assert_eq!(
            s.limits("sse"),
            ModeLimits {
                back_channel: false,
                resumption: true
            }
        );
        assert_eq!(s.limits("json"), ModeLimits::default());
    }
}
