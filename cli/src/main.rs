//! The `mcp-compat` binary: `serve` and `call`.

use clap::{Parser, Subcommand};
use mcp_compat::{call, serve};

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
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Serve(args) => serve::run(args).await,
        Command::Call(args) => call::run(args).await.map(|result| println!("{result}")),
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-compat: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
