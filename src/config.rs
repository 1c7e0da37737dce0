//! Configuration resolved in one place: command line > environment > default. The environment variables
//! webfreeze reads are all listed here.

use std::path::PathBuf;

use anyhow::Context as _;

use crate::cli::GlobalArgs;

/// Every environment variable webfreeze reads.
pub mod env {
    /// Root of webfreeze's data: `store/` and `ca/` live under it.
    pub const WEBFREEZE_HOME: &str = "WEBFREEZE_HOME";
    /// XDG base directory for data (used when WEBFREEZE_HOME is unset).
    pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
    /// Home directory (used when XDG_DATA_HOME is unset).
    pub const HOME: &str = "HOME";
    /// Log filter, as tracing-subscriber reads it.
    pub const RUST_LOG: &str = "RUST_LOG";
    /// Time zone recorded in new snapshots when --time-zone is not given.
    pub const TZ: &str = "TZ";
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// `$WEBFREEZE_HOME`.
    pub home: PathBuf,
    /// The store directory.
    pub store: PathBuf,
}

impl Config {
    pub fn resolve(g: &GlobalArgs) -> anyhow::Result<Self> {
        let home = match std::env::var_os(env::WEBFREEZE_HOME).filter(|v| !v.is_empty()) {
            Some(h) => PathBuf::from(h),
            None => {
                let data = match std::env::var_os(env::XDG_DATA_HOME).filter(|v| !v.is_empty()) {
                    Some(d) => PathBuf::from(d),
                    None => PathBuf::from(
                        std::env::var_os(env::HOME)
                            .context("neither WEBFREEZE_HOME nor HOME is set; pass --store DIR")?,
                    )
                    .join(".local/share"),
                };
                data.join("webfreeze")
            }
        };
        let store = g.store.clone().unwrap_or_else(|| home.join("store"));
        Ok(Self { home, store })
    }
}

impl Config {
    /// The time zone to record: the flag, else $TZ, else /etc/timezone, else UTC.
    pub fn time_zone(&self, flag: Option<&str>) -> String {
        flag.map(str::to_string)
            .or_else(|| std::env::var(env::TZ).ok().map(|t| t.trim_start_matches(':').to_string()))
            .or_else(|| std::fs::read_to_string("/etc/timezone").ok().map(|t| t.trim().to_string()))
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "UTC".to_string())
    }

    /// `$WEBFREEZE_HOME/ca`: the CA certificate and its private key.
    pub fn ca_dir(&self) -> PathBuf {
        self.home.join("ca")
    }
}

/// Logging on stderr. `agent_run`: the proxies are internal to `run`/`demo` (their failures show up in the
/// trajectories), so their per-request notes are left out by default.
pub fn init_logging(verbose: u8, agent_run: bool) {
    let default = match (verbose, agent_run) {
        // chromiumoxide warns about every CDP message newer than its protocol types: noise for users.
        (0, false) => "warn,webfreeze=info,chromiumoxide=error",
        (0, true) => "warn,webfreeze=info,webfreeze_proxy=warn,chromiumoxide=error",
        (1, _) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env(env::RUST_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
