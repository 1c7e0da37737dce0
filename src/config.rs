//! Configuration resolved in one place: command line > environment > default. The environment variables
//! webfreeze reads are all listed here.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use proxy::{parse_resolve, CertificateAuthority, ProxyConfig, TlsStack, UpstreamConfig};
use trajectory::llm::LlmConfig;

use crate::cli::{GlobalArgs, LlmArgs, ProxyArgs, UpstreamArgs};
use crate::usage::UsageError;

/// Every environment variable webfreeze reads (their own room, `crate::env_names`, so the command line's
/// definitions can name them without depending on this module).
pub(crate) use crate::env_names as env;

/// The shop admin account for WebArena's shop REST helpers: from the environment, each part defaulting
/// to WebArena's published account. Never printed.
pub(crate) fn shop_admin() -> agent::tasks::shop_api::ShopAdmin {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let d = agent::tasks::shop_api::ShopAdmin::default();
    agent::tasks::shop_api::ShopAdmin {
        username: var(env::WEBFREEZE_SHOPPING_ADMIN_USER).unwrap_or(d.username),
        password: var(env::WEBFREEZE_SHOPPING_ADMIN_PASSWORD).unwrap_or(d.password),
    }
}

/// Whether two paths name the same directory (compared canonically when both exist).
pub(crate) fn same_dir(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Object-storage settings: `--endpoint` > `AWS_ENDPOINT_URL`; credentials and region from the AWS
/// variables.
pub(crate) fn s3_options(endpoint: Option<&str>) -> bundle::remote::S3Options {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    bundle::remote::S3Options {
        endpoint: endpoint.map(str::to_string).or_else(|| var(env::AWS_ENDPOINT_URL)),
        region: var(env::AWS_REGION).or_else(|| var(env::AWS_DEFAULT_REGION)),
        access_key_id: var(env::AWS_ACCESS_KEY_ID),
        secret_access_key: var(env::AWS_SECRET_ACCESS_KEY),
        session_token: var(env::AWS_SESSION_TOKEN),
    }
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// `$WEBFREEZE_HOME`.
    pub home: PathBuf,
    /// The store directory.
    pub store: PathBuf,
}

impl Config {
    pub(crate) fn resolve(g: &GlobalArgs) -> anyhow::Result<Self> {
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
    pub(crate) fn time_zone(&self, flag: Option<&str>) -> String {
        flag.map(str::to_string)
            .or_else(|| std::env::var(env::TZ).ok().map(|t| t.trim_start_matches(':').to_string()))
            .or_else(|| std::fs::read_to_string("/etc/timezone").ok().map(|t| t.trim().to_string()))
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "UTC".to_string())
    }

    /// `$WEBFREEZE_HOME/ca`: the CA certificate and its private key.
    pub(crate) fn ca_dir(&self) -> PathBuf {
        self.home.join("ca")
    }
}

/// The per-install CA (created on first use, key 0600).
pub(crate) fn load_ca(cfg: &Config) -> anyhow::Result<Arc<CertificateAuthority>> {
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    Ok(Arc::new(CertificateAuthority::load_or_init(&cfg.ca_dir(), now)?))
}

/// The proxy options of `proxy`, `record` and `replay`.
pub(crate) fn proxy_config(args: &ProxyArgs) -> anyhow::Result<ProxyConfig> {
    Ok(ProxyConfig {
        idle_timeout: Duration::from_secs_f64(positive("--idle-timeout", args.idle_timeout)?),
        header_timeout: Duration::from_secs_f64(positive("--header-timeout", args.header_timeout)?),
        max_connections: args.max_connections.max(1),
        ..upstream_config(&args.upstream)?
    })
}

/// A duration flag in seconds: positive and finite.
fn positive(flag: &str, secs: f64) -> anyhow::Result<f64> {
    if secs.is_finite() && secs > 0.0 && secs < 1e9 {
        Ok(secs)
    } else {
        Err(UsageError(format!("{flag} {secs}: expected a positive number of seconds")).into())
    }
}

/// The proxy settings for reaching origins, with defaults for the rest.
pub(crate) fn upstream_config(args: &UpstreamArgs) -> anyhow::Result<ProxyConfig> {
    let mut resolve = std::collections::HashMap::new();
    for r in &args.resolve {
        let (k, v) = parse_resolve(r).map_err(|e| UsageError(e.to_string()))?;
        resolve.insert(k, v);
    }
    let mut upstream = UpstreamConfig {
        extra_ca_files: args.upstream_ca.clone(),
        resolve,
        insecure: args.insecure_upstream,
        ..UpstreamConfig::default()
    };
    if args.upstream_tls == crate::cli::UpstreamTls::Boring {
        let boring = upstream_boring::BoringBackend::new(&upstream).map_err(|e| UsageError(e.to_string()))?;
        upstream.tls = Some(TlsStack(Arc::new(boring)));
    }
    Ok(ProxyConfig {
        upstream,
        upstream_timeout: Duration::from_secs_f64(args.upstream_timeout),
        forward_browser_background: args.forward_browser_background,
        ..ProxyConfig::default()
    })
}

/// The model API settings from the flags and the key's environment variable.
pub(crate) fn llm_config(a: &LlmArgs) -> anyhow::Result<LlmConfig> {
    let key = std::env::var(&a.api_key_env).unwrap_or_default();
    if key.is_empty() && a.api_base.contains("api.openai.com") {
        return Err(UsageError(format!(
            "the model API at {} needs a key: set {} (or point --api-base at a local OpenAI-compatible server)",
            a.api_base, a.api_key_env
        ))
        .into());
    }
    let mut c = LlmConfig::new(&a.api_base, &a.model, &key);
    c.temperature = a.temperature;
    c.attempts = a.api_attempts.max(1);
    c.timeout = Duration::from_secs_f64(a.api_timeout.max(1.0));
    c.backoff = Duration::from_secs_f64(a.api_backoff.clamp(0.0, 300.0));
    c.max_tokens = a.max_tokens.max(1);
    c.max_tokens_field = a.max_tokens_field;
    Ok(c)
}

/// `--window WxH`.
pub(crate) fn parse_window(s: &str) -> anyhow::Result<(u32, u32)> {
    let bad = || UsageError(format!("--window {s:?}: expected WIDTHxHEIGHT, e.g. 1024x768"));
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (w.trim().parse().map_err(|_| bad())?, h.trim().parse().map_err(|_| bad())?);
    if !(200..=4096).contains(&w) || !(200..=4096).contains(&h) {
        return Err(bad().into());
    }
    Ok((w, h))
}

/// Logging on stderr. `agent_run`: the proxies are internal to `run`/`demo` (their failures show up in the
/// trajectories), so their per-request notes are left out by default.
pub(crate) fn init_logging(verbose: u8, agent_run: bool) {
    let default = match (verbose, agent_run) {
        // chromiumoxide warns about every CDP message newer than its protocol types: noise for users.
        (0, false) => "warn,webfreeze=info,chromiumoxide=error",
        (0, true) => "warn,webfreeze=info,webfreeze_proxy=warn,chromiumoxide=error",
        (1, _) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env(env::RUST_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colour only on a terminal: warnings redirected to a file stay plain text.
    use std::io::IsTerminal as _;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .try_init();
}
