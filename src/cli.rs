//! What the user typed: clap structs that mirror the command line one to one. Resolution into a working
//! configuration happens in `config`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Record the web into content-addressed snapshots and replay it deterministically, for reproducible
/// web-agent benchmarks.
#[derive(Debug, Parser)]
#[command(name = "webfreeze", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Snapshot store directory [default: $WEBFREEZE_HOME/store; WEBFREEZE_HOME defaults to
    /// $XDG_DATA_HOME/webfreeze, i.e. ~/.local/share/webfreeze]
    #[arg(long, global = true, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// More log output on stderr (-v: debug, -vv: trace). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Manage the local certificate authority the proxy mints site certificates with.
    #[command(subcommand)]
    Ca(CaCmd),
    /// Run the live pass-through MITM proxy (no recording).
    Proxy(ProxyArgs),
    /// Run the proxy live and record every exchange into a new snapshot (Ctrl-C finalizes it).
    Record(RecordArgs),
    /// Answer from a snapshot: no network unless --on-miss live|record.
    Replay(ReplayArgs),
    /// Manage snapshots in the store: list, show, verify, gc, rm, import, export.
    #[command(subcommand)]
    Snapshots(SnapshotsCmd),
    /// Run a browser agent over a task file: live, recording one snapshot per task, or replaying them.
    Run(Box<RunArgs>),
    /// Judge a run (reference matchers, a model judge, or both) into RUN/eval.json, with a table per site.
    Eval(EvalArgs),
    /// Compare two evaluated runs: success per site, agreement, Cohen's kappa, McNemar, flipped tasks.
    Compare(CompareArgs),
    /// The whole loop on the bundled demo sites, no network or API key: record live, drift the sites,
    /// run live again, replay the recording, evaluate and compare.
    Demo(DemoArgs),
}

#[derive(Debug, Subcommand)]
pub enum SnapshotsCmd {
    /// List the snapshots in the store.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one snapshot's manifest and its exchanges.
    Show {
        /// Snapshot name.
        name: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// How many exchanges to list (0 for none).
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Recompute every body's hash and check every reference; exit 1 if anything is damaged.
    Verify {
        /// Only the blobs this snapshot references (default: the whole store).
        name: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Delete bodies that no snapshot references, and report the bytes freed.
    Gc {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Delete a snapshot (its bodies stay until `gc`).
    Rm {
        /// Snapshot name.
        name: String,
    },
    /// Import a capture file into a new snapshot (HAR now; the format is sniffed from the content).
    Import {
        /// The file to import.
        file: PathBuf,
        /// Name of the snapshot to create.
        #[arg(long)]
        snapshot: String,
        /// Print the import report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Export a snapshot to a file.
    Export {
        /// Snapshot name.
        name: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ExportFormat::Har)]
        format: ExportFormat,
        /// Output file ("-" for stdout).
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    /// HAR 1.2 (bodies as text, or base64 when binary).
    Har,
}

#[derive(Debug, Subcommand)]
pub enum CaCmd {
    /// Create the CA in $WEBFREEZE_HOME/ca (private key mode 0600). Other commands create it on first use.
    Init {
        /// Replace an existing CA (clients trusting the old one must be updated).
        #[arg(long)]
        force: bool,
    },
    /// Show the CA's subject, validity and SPKI hash (for Chromium's --ignore-certificate-errors-spki-list).
    Show {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the CA certificate (never the key), to trust it in a browser or curl (--cacert).
    Export {
        /// Certificate encoding.
        #[arg(long, value_enum, default_value_t = CertFormat::Pem)]
        format: CertFormat,
        /// Output file (default: stdout, PEM only).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CertFormat {
    /// PEM text.
    Pem,
    /// DER binary.
    Der,
}

/// Options shared by every command that runs the proxy.
#[derive(Debug, Clone, Args)]
pub struct ProxyArgs {
    /// Address to listen on; port 0 picks a free port. `listening on ADDR` is printed first on stdout.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    pub listen: String,
    /// Allow a non-loopback --listen address (anyone who can reach it can use the proxy).
    #[arg(long)]
    pub allow_remote: bool,
    #[command(flatten)]
    pub upstream: UpstreamArgs,
    /// Seconds a client connection may stay idle before it is closed.
    #[arg(long, default_value_t = 120.0, value_name = "SECS")]
    pub idle_timeout: f64,
    /// Concurrent client connections; further clients wait.
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
}

/// How the proxy reaches origins (shared by `proxy`, `record`, `replay` and `run`).
#[derive(Debug, Clone, Args)]
pub struct UpstreamArgs {
    /// Extra CA certificate (PEM) to trust for origins, e.g. a private test origin. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub upstream_ca: Vec<PathBuf>,
    /// Override DNS like curl: HOST:PORT:ADDR, where ADDR is an IP, or IP:PORT to change the port too.
    /// Repeatable.
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<String>,
    /// Do not verify origin certificates (logged as a warning). Only for broken test origins.
    #[arg(long)]
    pub insecure_upstream: bool,
    /// Seconds to wait for an origin's response head before answering 504.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub upstream_timeout: f64,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Name of the snapshot to create.
    #[arg(long)]
    pub snapshot: String,
    /// Do not record hosts matching this pattern (a host, or *.suffix). Repeatable. Browser background
    /// hosts are never recorded.
    #[arg(long, value_name = "HOST_PATTERN")]
    pub exclude: Vec<String>,
    /// Record only hosts matching these patterns. Repeatable.
    #[arg(long, value_name = "HOST_PATTERN")]
    pub include: Vec<String>,
    /// Time zone recorded in the snapshot for replay (default: $TZ, /etc/timezone, else UTC).
    #[arg(long, value_name = "IANA_ZONE")]
    pub time_zone: Option<String>,
    /// Label the snapshot (KEY=VALUE, e.g. task=Allrecipes--3). Repeatable.
    #[arg(long, value_name = "KEY=VALUE")]
    pub label: Vec<String>,
    #[command(flatten)]
    pub proxy: ProxyArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum MissPolicy {
    /// Answer 404 with a text body naming the URL; never contact an origin.
    #[value(name = "404")]
    NotFound,
    /// Forward misses to the live origin.
    Live,
    /// Forward misses live and record them into a second snapshot (--miss-snapshot).
    Record,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Snapshot to replay.
    #[arg(long)]
    pub snapshot: String,
    /// What to do when no recorded exchange matches.
    #[arg(long, value_enum, default_value_t = MissPolicy::NotFound)]
    pub on_miss: MissPolicy,
    /// Where --on-miss record stores misses [default: SNAPSHOT/misses].
    #[arg(long)]
    pub miss_snapshot: Option<String>,
    /// Extra volatile-parameter rules (JSON: strip_params, strip_param_prefixes, strip_value_patterns).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Write the replay report (layers, misses, fuzzy matches, coverage) as JSON on exit.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Do not inject the determinism shim (frozen Date, seeded Math.random) into HTML.
    #[arg(long)]
    pub no_inject_shim: bool,
    #[command(flatten)]
    pub proxy: ProxyArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunMode {
    /// Through a pass-through proxy: the live web, nothing stored.
    Live,
    /// Live, recording one snapshot per task, named <RUN>/<task-id> (RUN = the --out directory's name).
    Record,
    /// From the snapshots <SNAPSHOTS>/<task-id>; sealed (no network) unless --on-miss says otherwise.
    Replay,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// WebVoyager task file (JSON Lines with web_name, id, ques, web).
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// Where the pages come from.
    #[arg(long, value_enum)]
    pub mode: RunMode,
    /// What decides the actions: `llm` (a vision model over the OpenAI-compatible API) or
    /// `trajectory:RUN_DIR` (re-execute the replies recorded in an earlier run, checking each step's URL
    /// and screenshot hash against it).
    #[arg(long, default_value = "llm", value_name = "llm|trajectory:RUN_DIR")]
    pub policy: String,
    /// Run directory (created; finished tasks in it are skipped on a rerun).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replay: the recording whose <RUN>/<task-id> snapshots to use [default: with --policy
    /// trajectory:DIR, DIR's name].
    #[arg(long, value_name = "RUN")]
    pub snapshots: Option<String>,
    /// Replay: what to do when no recorded exchange matches.
    #[arg(long, value_enum, default_value_t = MissPolicy::NotFound)]
    pub on_miss: MissPolicy,
    /// Tasks run in parallel, each with its own browser and proxy.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub jobs: usize,
    /// Only tasks whose id or site name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub task_filter: Option<String>,
    /// Step budget per task (a failed action costs a step).
    #[arg(long, default_value_t = 15)]
    pub max_steps: u32,
    /// Browser binary [default: the first of /usr/bin/chromium, chromium-browser, google-chrome].
    #[arg(long, env = "WEBFREEZE_CHROME", value_name = "PATH")]
    pub chrome: Option<PathBuf>,
    /// Window and viewport size.
    #[arg(long, default_value = "1024x768", value_name = "WxH")]
    pub window: String,
    /// Seconds a page load or a browser call may take before the step (or task) fails.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub page_timeout: f64,
    /// A page has settled when no request has been in flight for this many milliseconds.
    #[arg(long, default_value_t = 500, value_name = "MS")]
    pub settle_ms: u64,
    /// How long the `Wait` action waits, in milliseconds.
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    pub wait_ms: u64,
    /// Where the `Google` action goes.
    #[arg(long, default_value = "https://www.google.com/", value_name = "URL")]
    pub search_url: String,
    /// Record: the time zone stored in each snapshot and emulated in the browser [default: $TZ,
    /// /etc/timezone, else UTC]. Replay always uses the snapshot's.
    #[arg(long, value_name = "IANA_ZONE")]
    pub time_zone: Option<String>,
    /// Locale the browser reports (ICU form).
    #[arg(long, default_value = "en_US")]
    pub locale: String,
    #[command(flatten)]
    pub llm: LlmArgs,
    #[command(flatten)]
    pub upstream: UpstreamArgs,
}

/// The OpenAI-compatible model API.
#[derive(Debug, Clone, Args)]
pub struct LlmArgs {
    /// Base URL of the OpenAI-compatible API (…/v1).
    #[arg(long, env = "OPENAI_BASE_URL", default_value = "https://api.openai.com/v1", value_name = "URL")]
    pub api_base: String,
    /// Model name.
    #[arg(long, default_value = "gpt-4o")]
    pub model: String,
    /// Name of the environment variable holding the API key.
    #[arg(long, default_value = "OPENAI_API_KEY", value_name = "VAR")]
    pub api_key_env: String,
    /// Sampling temperature.
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Screenshots kept in the model's context (older turns keep their text).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub keep_screenshots: usize,
    /// Attempts per model call on 429, 5xx and timeouts (exponential backoff).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub api_attempts: u32,
    /// Seconds before the first retry of a failed model call (doubles per retry; Retry-After wins).
    #[arg(long, default_value_t = 2.0, value_name = "SECS")]
    pub api_backoff: f64,
    /// Seconds per model call before it counts as a timeout.
    #[arg(long, default_value_t = 120.0, value_name = "SECS")]
    pub api_timeout: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum JudgeArg {
    /// A vision model after the WebVoyager protocol (needs the model API).
    Llm,
    /// Reference matchers: the task file's `eval` specs and --reference (WebVoyager's answers).
    Reference,
    /// Both; a task succeeds only if both agree it did.
    Both,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Run directory (from `webfreeze run --out`).
    pub run: PathBuf,
    /// Which judges run.
    #[arg(long, value_enum, default_value_t = JudgeArg::Reference)]
    pub judge: JudgeArg,
    /// Screenshots the model judge sees: the last N, or `all`.
    #[arg(long, default_value = "3", value_name = "N|all")]
    pub k: String,
    /// Model-judge repeats per task (mean and standard deviation are reported).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeats: u32,
    /// Task file with `eval` specs [default: the run's own task file, from run.json].
    #[arg(long, value_name = "FILE")]
    pub tasks: Option<PathBuf>,
    /// WebVoyager's reference_answer.json: golden answers are scored, possible answers shown.
    #[arg(long, value_name = "FILE")]
    pub reference: Option<PathBuf>,
    /// Score WebVoyager's `possible` answers too.
    #[arg(long)]
    pub score_possible: bool,
    /// Print eval.json on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub llm: LlmArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// First evaluated run (e.g. the live run).
    pub run_a: PathBuf,
    /// Second evaluated run (e.g. its replay).
    pub run_b: PathBuf,
    /// Print JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML page with the flipped tasks' screenshots side by side.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Working directory for the demo's store, runs and reports (runs are replaced on each demo).
    #[arg(long, default_value = "webfreeze-demo", value_name = "DIR")]
    pub dir: PathBuf,
    /// How many days the demo sites' clock moves forward before the second live run.
    #[arg(long, default_value_t = 1, value_name = "DAYS")]
    pub drift_days: u32,
    /// Tasks run in parallel.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub jobs: usize,
    /// Browser binary [default: the first of /usr/bin/chromium, chromium-browser, google-chrome].
    #[arg(long, env = "WEBFREEZE_CHROME", value_name = "PATH")]
    pub chrome: Option<PathBuf>,
}
