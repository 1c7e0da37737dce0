//! `run`, `eval`, `compare` and `demo`: the agent, the evaluator and the demo.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use trajectory::{
    ActionSpace, FrozenWebUnit, MaxTokensField, MissPolicy, ObservationKind, SearchMode, WsPacing,
};

use super::UpstreamArgs;
use evaluator::evaluate::JudgeKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RunMode {
    /// Through a pass-through proxy: the live web, nothing stored.
    Live,
    /// Live, recording one snapshot per task, named <RUN>/<task-id> (RUN = the --out directory's name).
    Record,
    /// From the snapshots <SNAPSHOTS>/<task-id>; sealed (no network) unless --on-miss says otherwise.
    Replay,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Task file, sniffed from its content: WebVoyager JSON Lines (web_name, id, ques, web), or
    /// WebArena / VisualWebArena configs (a JSON array like test.raw.json, one config object, or a
    /// directory of them like config_files/), or WebArena-Verified's file (webarena-verified.json: its
    /// evaluators run by `eval`, the network checks over the task snapshots' requests), or
    /// AssistantBench's JSON Lines (id, task, answer: each task starts on the search page, --site
    /// SEARCH=URL, and `eval` scores its accuracy).
    #[arg(long, value_name = "FILE|DIR")]
    pub tasks: PathBuf,
    /// A WebArena site: NAME=URL replaces __NAME__ in start URLs and eval specs (repeatable), e.g.
    /// --site SHOPPING=http://localhost:7770 --site REDDIT=http://localhost:9999. AssistantBench's tasks
    /// start on SEARCH [default: https://www.google.com/, as their harness].
    #[arg(long = "site", value_name = "NAME=URL")]
    pub sites: Vec<String>,
    /// A file of WebArena sites: a JSON object {"SHOPPING": "http://...", ...} or NAME=URL lines;
    /// --site entries win over it.
    #[arg(long = "sites", value_name = "FILE")]
    pub sites_file: Option<PathBuf>,
    /// Where the pages come from.
    #[arg(long, value_enum)]
    pub mode: RunMode,
    /// What decides the actions: `llm` (a vision model over the OpenAI-compatible API) or
    /// `trajectory:RUN_DIR` (re-execute the replies recorded in an earlier run, checking each step's URL
    /// and screenshot hash against it).
    #[arg(long, default_value = "llm", value_name = "llm|trajectory:RUN_DIR")]
    pub policy: String,
    /// With --policy trajectory:RUN_DIR: re-execute only the first N recorded steps of each task, then hand
    /// the browser, the message history as the model would have seen it (each re-executed step's
    /// observation and the recorded reply) and the rest of the step budget to the model (--api-base,
    /// --model). The trajectory says where it forked and from which run. 0 is the model from the start
    /// page; past a task's recorded steps is an error.
    #[arg(long, value_name = "N")]
    pub fork_at: Option<u32>,
    /// Record: after each observation, open the links an agent could have followed from the page (the
    /// labelled ones first, then the page's other same-site links) in background tabs of the same browser,
    /// each settled as a step is, and record them into the task's exploration layer `<RUN>/<task-id>/explore`,
    /// which replay consults after the task's own recording and before the site union. Links only (GET),
    /// never forms or links that look destructive (log out, delete, remove, unsubscribe, cancel, checkout);
    /// stops on a host that answers with a wall or a rate limit.
    #[arg(long)]
    pub explore: bool,
    /// With --explore: links opened per explored page.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub explore_links: usize,
    /// With --explore: pages opened per host over a task.
    #[arg(long, default_value_t = 40, value_name = "N")]
    pub explore_host_budget: usize,
    /// With --explore: 1 explores the links of the pages the agent observed; 2 also the links of those.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub explore_depth: u32,
    /// With --explore: milliseconds between two background page loads (politeness to the site).
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub explore_pace_ms: u64,
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
    /// Replay: the unit of the frozen web. `site`: what a task's own snapshot lacks is answered from the
    /// other tasks' snapshots of the same recording on the same site (GET, HEAD and OPTIONS only; their
    /// first recorded response; by snapshot name), reported as the `site-union` layer, never as exact;
    /// `task`: the task's own snapshot only, exactly what was recorded for it [default: site; with --policy
    /// trajectory:RUN, RUN's when it was a replay].
    #[arg(long, value_enum, value_name = "site|task")]
    pub frozen_web: Option<FrozenWebUnit>,
    /// Replay: the frozen search engine. A search engine's page (Google, Bing, DuckDuckGo, --search-url)
    /// that no recording answers gets results from a full-text index (BM25, ties by URL) of the replayed
    /// pages (the task's snapshot and, with --frozen-web site, the site's): links that replay, marked
    /// `x-webfreeze-layer: frozen-search` and counted as the `frozen-search` layer. `always` answers
    /// recorded searches from the index too; `off` leaves them misses. With --on-miss live|record an
    /// unrecorded search goes to the live engine instead (`always` still answers from the index). `site`
    /// (opt-in): as `fallback`, and a site's own search for a value no recording has (a GET to a path
    /// recorded with other values of its search parameter, e.g. /search?q=) gets that site's matching
    /// pages on a page of the same shape, marked the same [default: fallback; with --policy trajectory:RUN,
    /// RUN's when it was a replay].
    #[arg(long, value_enum, value_name = "off|fallback|always|site")]
    pub search: Option<SearchMode>,
    /// Replay: recorded WebSockets: a handshake is answered from the snapshot, then the server messages recorded
    /// before the first client message are sent, and after each client message the ones recorded after
    /// its recorded match (exact, else JSON equal once volatile fields such as timestamps are dropped);
    /// a client message nothing matches is a WebSocket miss in the report. `recorded` sends each after its
    /// recorded delay, `fast` at once [default: recorded; with --policy trajectory:RUN, RUN's when it was a
    /// replay].
    #[arg(long, value_enum, value_name = "recorded|fast")]
    pub ws_pacing: Option<WsPacing>,
    /// Tasks run in parallel, each with its own browser and proxy; `auto`: one per core, as far as
    /// available memory allows (about 1 GiB per browser and proxy).
    #[arg(long, default_value = "1", value_name = "N|auto")]
    pub jobs: String,
    /// Run one shard of the task list: shard I (0-based) of N. Tasks are split by a hash of their id
    /// (balanced, independent of the file's order); each shard writes its own --out directory (and in
    /// record mode its own snapshots); `webfreeze merge` joins them. Slurm:
    /// `--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<session::Shard>,
    /// Wall-clock limit per task in seconds: past it the task's browser is killed and the task is
    /// recorded as `timeout` with the steps it had taken (a hung page or model call cannot stall a run).
    #[arg(long, value_name = "SECS")]
    pub task_timeout: Option<f64>,
    /// Cap each browser tab's JavaScript heap at this many MiB (V8's --max-old-space-size; the part of
    /// Chromium's memory it lets one bound). A page past it crashes and its task ends in an error.
    #[arg(long, value_name = "MIB")]
    pub browser_js_heap_mb: Option<u32>,
    /// Warm browsers: each Chromium process serves this many tasks, one after another, each in a fresh
    /// browser context (its own cookies, storage, cache, permissions and proxy; disposed when the task
    /// ends), before it is replaced. Saves starting a browser per task (most of a replayed task's time).
    /// A process is also replaced after a crash, a task timeout or past --browser-memory-mib. 0: a new
    /// browser process for every task.
    #[arg(long, default_value_t = agent::browser::PoolOptions::default().recycle_after, value_name = "N")]
    pub browser_recycle: u32,
    /// Warm browsers: replace a browser process when, after a task, it and its renderers use more than
    /// this many MiB (their proportional set size).
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub browser_memory_mib: u64,
    /// Re-run the tasks of --out that ended `blocked` (a bot wall, denial or rate limit answered instead
    /// of the site); other finished tasks are kept as usual.
    #[arg(long)]
    pub retry_blocked: bool,
    /// Live and record: let this host's writes through the side-effect guard (repeatable; `*.example.org`
    /// for its subdomains). By default writes that act in the world (placing an order, paying, booking,
    /// posting, voting, sending a message, deleting an account; decided by the method, path, form or JSON
    /// field names and the label of the control the agent used) are answered locally with a page saying
    /// what was blocked, never sent, on every host but the --site hosts. Searches, filters, sign-in and
    /// add-to-cart pass.
    #[arg(long = "allow-writes", value_name = "HOST")]
    pub allow_writes: Vec<String>,
    /// Live and record: turn the side-effect guard off (run.json says so).
    #[arg(long)]
    pub no_write_guard: bool,
    /// Live and record: the side-effect guard also refuses every POST, PUT, PATCH or DELETE that none of
    /// its rules names, harmful or harmless (run.json says so). On the held-out guard table it refuses more
    /// of the harmful requests and more ordinary ones (docs/BENCHMARKS.md): for live runs where an act
    /// that slips through costs more than a refused ordinary request.
    #[arg(long, conflicts_with = "no_write_guard")]
    pub strict_write_guard: bool,
    /// Live and record: the side-effect guard's rules alone decide. By default what they let pass is read
    /// again by a model trained on the guard's tables of real sites' requests, and a write it reads as an
    /// act (p >= 0.7) is refused as rule `learned`: on the held-out table it refuses more of the harmful
    /// requests and a few more ordinary ones (docs/BENCHMARKS.md). run.json says which.
    #[arg(long, conflicts_with = "no_write_guard")]
    pub no_learned_guard: bool,
    /// Live and record: more side-effect rules and harmless paths (JSON: {"rules": [{"id", "why",
    /// "methods", "path", "fields", "label"}], "safe_paths": [...]}).
    #[arg(long, value_name = "FILE")]
    pub write_guard_file: Option<PathBuf>,
    /// Live and record: turn the contamination guard off. By default requests to where benchmarks' answers
    /// are published (WebVoyager, WebArena / VWA / WebArena-Verified, Mind2Web, GAIA, BrowseComp: their
    /// repositories, dataset pages, leaderboards) are answered locally and flagged.
    #[arg(long)]
    pub no_answer_guard: bool,
    /// Live and record: more places answers are published (JSON: {"places": [{"family", "host", "path"}]}).
    #[arg(long, value_name = "FILE")]
    pub answer_guard_file: Option<PathBuf>,
    /// Live and record: WebVoyager's reference_answer.json. A page whose visible text holds a task's question
    /// with its reference answer (from this file, the task file's `eval` or WebArena's
    /// `reference_answers`) is flagged as contamination evidence at its step; `eval` counts such tasks
    /// apart.
    #[arg(long, value_name = "FILE")]
    pub reference_file: Option<PathBuf>,
    /// Let the browser disclose automation as chromiumoxide does by default (`--enable-automation`,
    /// navigator.webdriver true, a `HeadlessChrome` User-Agent). By default it presents itself as the
    /// Chromium it is.
    #[arg(long)]
    pub disclose_automation: bool,
    /// Only tasks whose id or site name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub task_filter: Option<String>,
    /// Step budget per task (a failed action costs a step) [default: 15; with --policy trajectory:RUN,
    /// RUN's].
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u32>,
    /// The grammar of the model's actions: `webvoyager` (Click [n], Type [n]; text, ..., one tab) or
    /// `webarena` (click [id], type [id] [text] [1], hover, press, scroll, goto, go_back, go_forward,
    /// new_tab, tab_focus, close_tab, stop [answer], VWA's clear and upload; real tabs, one per
    /// ` |AND| ` start page) [default: the one the tasks' benchmark gives its agents: webarena for WebArena
    /// and WebArena-Verified, webvoyager for WebVoyager and AssistantBench; with --policy trajectory:RUN,
    /// RUN's].
    #[arg(long, value_enum, value_name = "webvoyager|webarena")]
    pub action_space: Option<ActionSpace>,
    /// What the model observes: `som` (the screenshot with numbered labels and the list of labelled
    /// elements), `axtree` (the accessibility tree as WebArena writes it, no image; needs
    /// --action-space webarena) or `som+axtree` (the labelled screenshot and the tree, its lines
    /// carrying the labels) [default: som; with --policy trajectory:RUN, RUN's].
    #[arg(long, value_enum, value_name = "som|axtree|som+axtree")]
    pub observation: Option<ObservationKind>,
    /// Stop a task after N unparseable model replies in a row (WebArena uses 3) [default: never; with
    /// --policy trajectory:RUN, RUN's].
    #[arg(long, value_name = "N")]
    pub early_stop_parse_failures: Option<u32>,
    /// Stop a task after the same action N times in a row (WebArena uses 5) [default: never; with
    /// --policy trajectory:RUN, RUN's].
    #[arg(long, value_name = "N")]
    pub early_stop_repeats: Option<u32>,
    /// Browser binary [default: the first of /usr/bin/chromium, chromium-browser, google-chrome].
    #[arg(long, env = crate::env_names::WEBFREEZE_CHROME, value_name = "PATH")]
    pub chrome: Option<PathBuf>,
    /// Window and viewport size [default: 1024x768; with --policy trajectory:RUN, RUN's].
    #[arg(long, value_name = "WxH")]
    pub window: Option<String>,
    /// Seconds a page load or a browser call may take before the step (or task) fails [default: 30;
    /// with --policy trajectory:RUN, RUN's].
    #[arg(long, value_name = "SECS")]
    pub page_timeout: Option<f64>,
    /// A page has settled when no request has been in flight, started or ended, for this many
    /// milliseconds, the page has drawn a frame since and its load event has fired; the wait is cut short
    /// when the page has no timer of at most this length pending and its main thread is idle. Raise it
    /// for pages whose scripts start requests on longer timers [default: 50; with --policy
    /// trajectory:RUN, RUN's].
    #[arg(long, value_name = "MS")]
    pub settle_ms: Option<u64>,
    /// How long the `Wait` action waits, in milliseconds [default: 5000; with --policy
    /// trajectory:RUN, RUN's].
    #[arg(long, value_name = "MS")]
    pub wait_ms: Option<u64>,
    /// Where the `Google` action goes [default: https://www.google.com/; with --policy
    /// trajectory:RUN, RUN's].
    #[arg(long, value_name = "URL")]
    pub search_url: Option<String>,
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
pub(crate) struct LlmArgs {
    /// Base URL of the OpenAI-compatible API (…/v1).
    #[arg(long, env = crate::env_names::OPENAI_BASE_URL, default_value = "https://api.openai.com/v1", value_name = "URL")]
    pub api_base: String,
    /// Model name.
    #[arg(long, default_value = "gpt-4o")]
    pub model: String,
    /// Name of the environment variable holding the API key.
    #[arg(long, default_value = crate::env_names::OPENAI_API_KEY, value_name = "VAR")]
    pub api_key_env: String,
    /// Sampling temperature.
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Screenshots kept in the model's context (older turns keep their text, without the observation);
    /// with `--observation axtree` it bounds the whole observations kept (WebArena shows the latest
    /// only: 1).
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
    /// Completion budget per model call (tokens).
    #[arg(long, default_value_t = 1000, value_name = "TOKENS")]
    pub max_tokens: u32,
    /// The request field that carries --max-tokens: `max_tokens` (most servers, llama.cpp, vLLM) or
    /// `max_completion_tokens` (newer OpenAI models, which refuse `max_tokens`).
    #[arg(long, value_enum, default_value_t = MaxTokensField::MaxTokens)]
    pub max_tokens_field: MaxTokensField,
}

#[derive(Debug, Args)]
pub(crate) struct EvalArgs {
    /// Run directory (from `webfreeze run --out`).
    pub run: PathBuf,
    /// Which judges run.
    #[arg(long, value_enum, default_value_t = JudgeKind::Reference)]
    pub judge: JudgeKind,
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
    /// Re-run the program_html checks of WebArena-format tasks offline, each against its task's
    /// snapshot in a fresh Chromium (no network, no agent), and score with what they find now.
    #[arg(long)]
    pub rescore: bool,
    /// Also write each task's own requests as HAR 1.2, `DIR/<task-id>.har`, for a benchmark's own evaluator
    /// (WebArena-Verified's reads HAR): a replayed task's from its wire log, a recorded task's from its
    /// snapshot. A live task has none.
    #[arg(long, value_name = "DIR")]
    pub har: Option<PathBuf>,
    /// SSIM above which a VisualWebArena `eval_fuzzy_image_match` image counts as the gold one, for
    /// queries that set no `ssim_threshold` of their own (VWA uses 0.8).
    #[arg(long, default_value_t = evaluator::webarena::DEFAULT_SSIM_THRESHOLD, value_name = "X")]
    pub ssim_threshold: f64,
    /// Browser binary for --rescore [default: the first of /usr/bin/chromium, chromium-browser,
    /// google-chrome].
    #[arg(long, env = crate::env_names::WEBFREEZE_CHROME, value_name = "PATH")]
    pub chrome: Option<PathBuf>,
    #[command(flatten)]
    pub llm: LlmArgs,
}

#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// The shard run directories (from `webfreeze run --shard I/N --out DIR`), in any order.
    #[arg(required = true, value_name = "SHARD_RUN")]
    pub shards: Vec<PathBuf>,
    /// The merged run directory (must not exist). In record mode its name names the merged snapshots
    /// (`<name>/<task-id>`), which are copied into --store.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// A store a record-mode shard recorded into (repeatable; each machine's or array task's own
    /// store). Snapshots not found in these are looked up in --store itself.
    #[arg(long, value_name = "STORE_DIR")]
    pub from_store: Vec<PathBuf>,
    /// Merge even if some tasks did not finish (they stay pending; `webfreeze run` on the merged
    /// directory with the same task file does them).
    #[arg(long)]
    pub partial: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// First evaluated run (e.g. the live run).
    pub run_a: PathBuf,
    /// Second evaluated run (e.g. its replay).
    pub run_b: PathBuf,
    /// More evaluated runs of the same tasks (e.g. one per date). With three or more runs compare prints the
    /// success rate per run and site in time order (a drift curve; `--html` draws it) instead of the
    /// pairwise comparison.
    pub more: Vec<PathBuf>,
    /// Print JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML page with the flipped tasks' screenshots side by side, and, for
    /// each flipped task both runs recorded into the store (`--store`), what changed on its site between
    /// the recordings (`snapshots diff`).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Working directory for the demo's store, runs and reports (runs are replaced on each demo).
    #[arg(long, default_value = "webfreeze-demo", value_name = "DIR")]
    pub dir: PathBuf,
    /// How many days the demo sites' clock moves forward before the second live run.
    #[arg(long, default_value_t = 1, value_name = "DAYS")]
    pub drift_days: u32,
    /// Tasks run in parallel.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub jobs: usize,
    /// Run the WebArena-format demo instead: a stateful forum and shop (login, votes, a post, a cart, an
    /// admin page by storage state), WebArena's action space with tabs, hover, press and goto, an input
    /// image; recorded live, scored, re-scored offline with the sites stopped, and replayed (DIR/webarena).
    #[arg(long)]
    pub webarena: bool,
    /// Only serve the demo sites (until Ctrl-C) and print the command lines that run the WebArena demo
    /// tasks against them by hand: `webfreeze run --tasks ... --mode record`, `eval`, `eval --rescore`.
    #[arg(long, conflicts_with = "webarena")]
    pub serve: bool,
    /// Browser binary [default: the first of /usr/bin/chromium, chromium-browser, google-chrome].
    #[arg(long, env = crate::env_names::WEBFREEZE_CHROME, value_name = "PATH")]
    pub chrome: Option<PathBuf>,
}

impl RunArgs {
    /// The warm browsers `--browser-recycle` asks for (None: a browser per task).
    pub(crate) fn browser_pool(&self) -> Option<std::sync::Arc<agent::browser::BrowserPool>> {
        (self.browser_recycle > 0).then(|| {
            agent::browser::BrowserPool::new(agent::browser::PoolOptions {
                recycle_after: self.browser_recycle,
                memory_ceiling_mib: Some(self.browser_memory_mib),
                contexts_per_browser: 1,
            })
        })
    }
}
