//! `webfreeze`: the command line over the webfreeze crates. Thin on purpose: argument parsing (clap),
//! configuration resolution (`config`), output formatting, and exit codes. Everything else lives in the
//! library crates.

mod cli;
mod cmd_bundle;
mod cmd_ca;
mod cmd_compare;
mod cmd_coverage;
mod cmd_demo;
mod cmd_demo_webarena;
mod cmd_env;
mod cmd_eval;
mod cmd_guard;
mod cmd_merge;
mod cmd_proxy;
mod cmd_record;
mod cmd_replay;
mod cmd_run;
mod cmd_snapshots;
mod config;
mod demo_runs;
mod env_names;
mod guarded;
mod output;
mod serve;
mod site_diff;
mod usage;

use std::process::ExitCode;

use clap::Parser;

use usage::UsageError;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse(); // exits 2 on a usage error, 0 on --help
    let agent_run = matches!(args.command, cli::Command::Run(_) | cli::Command::Demo(_));
    config::init_logging(args.global.verbose, agent_run);
    // Fault points named by FAILPOINTS (tests/faults.rs pauses a writer there to kill it midway); inert when
    // the variable is unset.
    let _faults = fail::FailScenario::setup();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn run(args: cli::Cli) -> anyhow::Result<()> {
    let cfg = config::Config::resolve(&args.global)?;
    match args.command {
        cli::Command::Snapshots(cmd) => cmd_snapshots::run(&cfg, cmd),
        cli::Command::Ca(cmd) => cmd_ca::run(&cfg, cmd),
        cli::Command::Bundle(cmd) => cmd_bundle::run(&cfg, cmd),
        cli::Command::Proxy(a) => cmd_proxy::run(&cfg, a),
        cli::Command::Record(a) => cmd_record::run(&cfg, a),
        cli::Command::Replay(a) => cmd_replay::run(&cfg, a),
        cli::Command::Run(a) => cmd_run::run(&cfg, *a),
        cli::Command::Merge(a) => cmd_merge::run(&cfg, a),
        cli::Command::Eval(a) => cmd_eval::run(&cfg, a),
        cli::Command::Compare(a) => cmd_compare::run(&cfg, a),
        cli::Command::Env(a) => cmd_env::run(&cfg, a),
        cli::Command::Guard(cli::GuardCmd::Check(a)) => cmd_guard::check(&cfg, a),
        cli::Command::Coverage(a) => cmd_coverage::run(&cfg, a),
        cli::Command::Demo(a) if a.serve => cmd_demo_webarena::serve(a),
        cli::Command::Demo(a) if a.webarena => cmd_demo_webarena::run(&cfg, a),
        cli::Command::Demo(a) => cmd_demo::run(&cfg, a),
    }
}
