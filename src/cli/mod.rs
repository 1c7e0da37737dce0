//! What the user typed: clap structs that mirror the command line one to one. Resolution into a working
//! configuration happens in `config`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use replay::NotCaptured;
use trajectory::{FrozenWebUnit, MissPolicy, SearchMode, WsPacing};

mod agent;
mod store;

pub(crate) use agent::*;
pub(crate) use store::*;

/// Record the web into content-addressed snapshots and replay it deterministically, for reproducible
/// web-agent benchmarks.
#[derive(Debug, Parser)]
#[command(name = "webfreeze", version, propagate_version = true, max_term_width = 100)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// Snapshot store directory [default: $WEBFREEZE_HOME/store; WEBFREEZE_HOME defaults to
    /// $XDG_DATA_HOME/webfreeze, i.e. ~/.local/share/webfreeze]
    #[arg(long, global = true, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// More log output on stderr (-v: debug, -vv: trace). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Manage the local certificate authority the proxy mints site certificates with.
    #[command(subcommand)]
    Ca(CaCmd),
    /// Run the live pass-through MITM proxy (no recording).
    Proxy(ProxyArgs),
    /// Run the proxy live and record every exchange into a new snapshot (Ctrl-C finalizes it).
    Record(RecordArgs),
    /// Answer from a snapshot: no network unless --on-miss live|record.
    Replay(ReplayArgs),
    /// Manage snapshots in the store: list, show, verify, gc, rm, import, export, diff, merge.
    #[command(subcommand)]
    Snapshots(SnapshotsCmd),
    /// Share a frozen run: one verifiable file with its snapshots, run directory and task file.
    #[command(subcommand)]
    Bundle(BundleCmd),
    /// Run a browser agent over a task file: live, recording one snapshot per task, or replaying them.
    Run(Box<RunArgs>),
    /// Join shard run directories (`run --shard I/N`) and the stores they recorded into into one run;
    /// refuses shards of different runs, overlaps, and a task set that is not the whole.
    Merge(MergeArgs),
    /// Judge a run (reference matchers, a model judge, or both) into RUN/eval.json, with a table per site.
    Eval(EvalArgs),
    /// Compare two evaluated runs: success per site, agreement, Cohen's kappa, McNemar, flipped tasks.
    Compare(CompareArgs),
    /// How a client is told to use a running proxy: proxy variables with a NO_PROXY that keeps loopback
    /// and the model API out, a CA bundle (system roots + this install's CA) for Python, curl and Node, and
    /// Chromium's flags. As shell `export` lines or JSON; what the Python package's `Proxy.env()` uses.
    Env(EnvArgs),
    /// The whole loop on the bundled demo sites, no network or API key: record live, drift the sites,
    /// run live again, replay the recording, evaluate and compare.
    Demo(DemoArgs),
    /// The guards' judges, offline: what they would refuse in a recording.
    #[command(subcommand)]
    Guard(GuardCmd),
    /// How much of a frozen benchmark an agent that did not record it would find: every task of a
    /// recorded run re-executed from its recorded replies with its own snapshot and exploration left out
    /// (against the rest of its site's frozen web: the other tasks' recordings, their explorations, the
    /// site's crawl, the frozen search engine); per task and per site, the share of steps served as
    /// recorded, the layers that answered and the first miss. No network.
    Coverage(CoverageArgs),
}

/// `webfreeze coverage`.
#[derive(Debug, Args)]
pub(crate) struct CoverageArgs {
    /// The recorded run (`run --mode record --out RUN`).
    pub run: PathBuf,
    /// Where the re-executions go [default: RUN/coverage] (replaced).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write the per-site table as an HTML page.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Print the report as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Tasks re-executed at once.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub jobs: usize,
    /// Browser binary [default: the first of /usr/bin/chromium, chromium-browser, google-chrome].
    #[arg(long, env = crate::env_names::WEBFREEZE_CHROME, value_name = "PATH")]
    pub chrome: Option<PathBuf>,
}

/// `webfreeze guard`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum GuardCmd {
    /// Print what the side-effect and contamination guards would refuse among a recording's requests, and
    /// why (the rule and the evidence), so a recording or a rule change can be audited before a live run.
    /// A write is judged with its control's label where a HAR carries one (`_webfreeze.control`, or an
    /// `x-webfreeze-control` request header); the WebSocket messages the page sent are judged too. Requests
    /// it cannot read are listed, not skipped. Exits 0 when every request was judged, whatever it would
    /// refuse; 1 when the recording, or any of its requests, cannot be read (after the report).
    Check(GuardCheckArgs),
}

/// `webfreeze guard check`.
#[derive(Debug, Args)]
pub(crate) struct GuardCheckArgs {
    /// A HAR file (`*.har`, from a browser, Playwright or `snapshots export`), or a snapshot's name in the
    /// store.
    pub recording: String,
    /// Print JSON (`refused`: one object per refused request; `unparsed`: the requests not read) instead
    /// of a table.
    #[arg(long)]
    pub json: bool,
    /// Hosts whose writes pass (as `run --allow-writes`: exact names, or `*.domain`).
    #[arg(long = "allow-writes", value_name = "HOST")]
    pub allow_writes: Vec<String>,
    /// More side-effect rules and harmless paths (as `run --write-guard-file`).
    #[arg(long, value_name = "FILE")]
    pub write_guard_file: Option<PathBuf>,
    /// The rules alone decide (as `run --no-learned-guard`): what they leave unnamed passes instead of
    /// being read by the learned judge.
    #[arg(long)]
    pub no_learned_guard: bool,
    /// More places answers are published (as `run --answer-guard-file`).
    #[arg(long, value_name = "FILE")]
    pub answer_guard_file: Option<PathBuf>,
}

/// `webfreeze env`.
#[derive(Debug, Args)]
pub(crate) struct EnvArgs {
    /// The proxy's address, as its `listening on ADDR` line printed it.
    #[arg(long, value_name = "ADDR")]
    pub proxy: String,
    /// Output format: `shell` (export lines, for `eval "$(webfreeze env --proxy ADDR)"`) or `json` (the
    /// variables, Chromium's flags, the CA's SPKI hash and files).
    #[arg(long, value_enum, default_value_t = EnvFormat::Shell)]
    pub format: EnvFormat,
    /// A host (or URL, whose host is taken) that must not go through the proxy, e.g. the model API.
    /// Repeatable. Loopback (localhost, 127.0.0.1, ::1) and the host of $OPENAI_BASE_URL are always
    /// left out.
    #[arg(long, value_name = "HOST|URL")]
    pub no_proxy: Vec<String>,
}

/// `webfreeze env --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum EnvFormat {
    /// `export NAME='value'` lines.
    Shell,
    /// One JSON object.
    Json,
}

/// Options shared by every command that runs the proxy.
#[derive(Debug, Clone, Args)]
pub(crate) struct ProxyArgs {
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
    /// Seconds a new connection has to send its first request head (and, through CONNECT, its TLS
    /// ClientHello and first request head); a client trickling its head byte by byte (slowloris) is
    /// closed after this. Later requests on a kept-alive connection are bounded by --idle-timeout.
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    pub header_timeout: f64,
    /// Concurrent client connections; a connection past it is answered 503 (Retry-After: 1) at once.
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    /// Put the guards in front of what goes to origins (comma-separated): `writes` refuses requests that
    /// act in the world (placing an order, paying, posting, messaging, subscribing, deleting, changing an
    /// account; searches, log-ins, translations and cart changes pass), `answers` refuses the places
    /// benchmarks' answers are published, `none` turns them off. A refused request gets a 403 page saying
    /// why and is listed when the proxy stops. Off by default in `proxy` and `record` (`run` has both on);
    /// `replay --on-miss live|record` has both on unless told otherwise, and guards only what it sends out.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "GUARDS")]
    pub guard: Vec<GuardKind>,
    /// With --guard writes: hosts whose writes pass (exact names, or `*.domain`). Repeatable.
    #[arg(long = "allow-writes", value_name = "HOST")]
    pub allow_writes: Vec<String>,
}

/// A guard of `--guard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum GuardKind {
    /// Requests that act in the world.
    Writes,
    /// Places benchmarks' answers are published.
    Answers,
    /// No guard.
    None,
}

/// How the proxy reaches origins (shared by `proxy`, `record`, `replay` and `run`).
#[derive(Debug, Clone, Args)]
pub(crate) struct UpstreamArgs {
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
    /// The TLS stack for origin connections. `boring` presents the browser's own TLS ClientHello (the one
    /// the proxy terminated: JA4, GREASE, ALPS, post-quantum key shares) and its HTTP/2 SETTINGS, so a bot
    /// wall sees the browser, not a proxy; a client with nothing to mirror gets Chrome's. `rustls` presents
    /// rustls's own handshake (walls can tell it from a browser's).
    #[arg(long, value_enum, default_value_t = UpstreamTls::Boring, value_name = "STACK")]
    pub upstream_tls: UpstreamTls,
    /// Forward the browser's own background traffic (Google account, component updates, safe browsing,
    /// optimization hints, browser-use's loading-screen logo) to the network. By default the proxy answers
    /// it locally in every mode, so a recording makes no request and no DNS lookup the page did not ask for.
    #[arg(long)]
    pub forward_browser_background: bool,
}

/// `--upstream-tls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum UpstreamTls {
    /// BoringSSL, mirroring the browser's ClientHello and HTTP/2 settings.
    Boring,
    /// rustls, with its own ClientHello.
    Rustls,
}

#[derive(Debug, Args)]
pub(crate) struct RecordArgs {
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
    /// Do not inject the determinism shim into the HTML the browser gets. By default the browser runs the
    /// same seeded script replay injects (frozen Date, seeded Math.random and crypto.getRandomValues), so
    /// script-made URLs (random cache-busters, time stamps) match exactly at replay. The snapshot always
    /// stores the origin's bytes.
    #[arg(long)]
    pub no_inject_shim: bool,
    #[command(flatten)]
    pub proxy: ProxyArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
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
    /// Fuzzy answers scoring under this (query-parameter overlap, 0 to 1) are misses. Candidates whose
    /// parameters name another resource (a value that differs and is not a number, date, hash or token)
    /// are never served, whatever their score. The report records the threshold.
    #[arg(long, default_value_t = 0.0, value_name = "SCORE")]
    pub fuzzy_min_score: f64,
    /// Exchanges recorded without their body (HAR files that left bodies out): `404` (default: the page
    /// sees the resource as missing) or `empty` (recorded status and headers, empty body). Either way the
    /// report counts them as served without a body, never as hits.
    #[arg(long, value_enum, default_value_t = NotCaptured::NotFound)]
    pub not_captured: NotCaptured,
    /// Serve `Date`, `Expires`, `Last-Modified` and cookies' `Expires` as recorded (by default they are
    /// shifted by one offset to now, so caches and cookies see the freshness and lifetimes of recording
    /// time: a replay months later makes the requests the recording made).
    #[arg(long)]
    pub no_refresh: bool,
    /// The unit of the frozen web. `task` (default): this snapshot only. `site`: what it lacks is answered
    /// from the other snapshots of its recording (named RUN/<task>, like SNAPSHOT) on the same site (their
    /// `web_name` label), by name, GET/HEAD/OPTIONS only, their first recorded response; counted in the
    /// report as the `site-union` layer and marked `x-webfreeze-layer: site-union`, never as exact.
    #[arg(long, value_enum, default_value_t = FrozenWebUnit::Task, value_name = "task|site")]
    pub frozen_web: FrozenWebUnit,
    /// Also answer what SNAPSHOT lacks from this snapshot, as part of the site union (repeatable; consulted
    /// in the order given, after those --frozen-web site finds).
    #[arg(long = "union", value_name = "SNAPSHOT")]
    pub union: Vec<String>,
    /// Leave out the exploration layer: by default a snapshot's `NAME/explore` (made by `run --explore` or
    /// `snapshots explore NAME`) answers what NAME lacks, before any union (and each union member's own
    /// exploration after the members), reported as the `explore` layer.
    #[arg(long)]
    pub no_explore_layer: bool,
    /// With --frozen-web site or --union: let the union also answer POST, PUT, PATCH and DELETE (by default
    /// only the replayed snapshot answers requests whose answer carries state).
    #[arg(long)]
    pub union_writes: bool,
    /// The frozen search engine: a search engine's page (Google, Bing, DuckDuckGo, --search-url) that no
    /// recording answers gets results from a full-text index of the replayed pages (this snapshot and its
    /// union), marked `x-webfreeze-layer: frozen-search`. `off` (default here) leaves such searches misses;
    /// `always` answers recorded searches from the index too; `site` is `fallback` plus a site's own search
    /// (a GET to a path recorded with other values of its search parameter gets the site's matching pages).
    #[arg(long, value_enum, default_value_t = SearchMode::Off, value_name = "off|fallback|always|site")]
    pub search: SearchMode,
    /// Another search engine's results page for the frozen search engine (its host and path), e.g.
    /// https://search.example/find (repeatable).
    #[arg(long = "search-url", value_name = "URL")]
    pub search_urls: Vec<String>,
    /// Recorded WebSockets: a handshake is answered from the snapshot, then the server messages recorded
    /// before the first client message are sent, and after each client message the ones recorded after
    /// its recorded match (exact, else JSON equal once volatile fields such as timestamps are dropped);
    /// a client message nothing matches is a WebSocket miss in the report. `recorded` (default) sends
    /// each after its recorded delay, `fast` at once.
    #[arg(long, value_enum, default_value_t = WsPacing::Recorded, value_name = "recorded|fast")]
    pub ws_pacing: WsPacing,
    /// Keep this replay's own wire, one log per episode: every request the client made, what answered it
    /// (layer, recorded exchange) and the status, in DIR/episode-NNNN/wire.jsonl.zst (JSON lines in one
    /// zstd stream, written as requests are answered). `POST /__webfreeze/reset` starts the next episode's
    /// log. Score an episode on what *its* client sent, not on the recording.
    #[arg(long, value_name = "DIR")]
    pub wire_dir: Option<PathBuf>,
    #[command(flatten)]
    pub proxy: ProxyArgs,
}
