//! The `mcp-compat` binary: `serve`, `call`, `matrix`, `bench`,
//! `check-server`, `check-client`, `peer-client` and `conformance-client`.

use clap::{Parser, Subcommand};
use mcp_compat::{
    bench, call, check, check_client_cmd, conformance_client, matrix_cmd, peer_client, serve,
};

/// MCP Streamable HTTP reference server and client.
#[derive(Parser, Debug)]
#[command(name = "mcp-compat", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the reference server.
    Serve(serve::ServeArgs),
    /// Send one request with the reference client and print its result.
    Call(call::CallArgs),
    /// Run the compatibility matrix (every client x server configuration).
    Matrix(matrix_cmd::MatrixArgs),
    /// Load benchmark: the reference server against a bare-axum floor.
    Bench(bench::BenchArgs),
    /// Check someone else's server: the revisions it speaks and the
    /// transport behaviours it gets right or wrong.
    CheckServer(check::CheckArgs),
    /// Check someone else's client: a program (URL, scenario, revision ->
    /// one JSON outcome line) run against the reference server at each
    /// revision, checked on the wire.
    CheckClient(check_client_cmd::CheckClientArgs),
    /// Our client as a peer client program (URL, scenario, revision -> one
    /// JSON outcome line): for `check-client` and peer manifests.
    PeerClient {
        /// The server's MCP endpoint (http).
        url: String,
        /// `call`, `progress`, `input` or `disconnect`.
        scenario: String,
        /// A revision (the client offers only it), a client configuration
        /// of the matrix (`c-legacy`, `c-all`) or `auto` (dual-era).
        revision: String,
    },
    /// The client program for the official conformance suite's client
    /// mode (`conformance client --command "mcp-compat conformance-client"`):
    /// does what the scenario named by `MCP_CONFORMANCE_SCENARIO` checks
    /// against the suite's mock server at URL (unset: connect, list tools,
    /// call the first tool). Not meant to be run by hand.
    ConformanceClient {
        /// The mock server's MCP endpoint.
        url: String,
    },
}

/// The binary's allocator: mimalloc, not the system's. The servers
/// allocate and free a few dozen small blocks per request, and glibc's
/// `malloc`/`free` were about a fifth of a stateless request's
/// instructions (docs/PERFORMANCE.md, session 10). Only this binary
/// chooses it: the libraries leave the allocator to whoever embeds them,
/// and the floor server (`bench --floor-server`) runs in this binary too,
/// so the benchmark's ratios compare like with like.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    mcp_compat::logging::init();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Serve(args) => serve::run(args).await,
        Command::Call(args) => call::run(args).await.map(|result| println!("{result}")),
        Command::Matrix(args) => match matrix_cmd::run(args).await {
            Ok(true) => Ok(()),
            Ok(false) => Err("some cells do not match the spec's prediction".into()),
            Err(e) => Err(e),
        },
        Command::Bench(args) => bench::run(args).await,
        Command::CheckServer(args) => match check::cli(args).await {
            Ok(true) => Ok(()),
            Ok(false) => Err("some checks at or above the --fail-on level failed".into()),
            Err(e) => Err(e),
        },
        Command::CheckClient(args) => match check_client_cmd::check_client(args).await {
            Ok(true) => Ok(()),
            Ok(false) => Err("some checks at or above the --fail-on level failed".into()),
            Err(e) => Err(e),
        },
        Command::PeerClient {
            url,
            scenario,
            revision,
        } => peer_client::run(&url, &scenario, &revision)
            .await
            .map(|line| println!("{line}")),
        Command::ConformanceClient { url } => {
            let scenario = std::env::var(conformance_client::SCENARIO_ENV).unwrap_or_default();
            conformance_client::run(&url, scenario.trim()).await
        }
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-compat: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
