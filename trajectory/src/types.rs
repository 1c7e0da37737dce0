//! The per-task record, `trajectory.json` (our format, versioned): what each step saw, decided and did.
//! [`crate::run_dir`] reads and writes it.

use serde::{Deserialize, Serialize};

use crate::llm::Usage;

/// Format version of `trajectory.json`.
pub const TRAJECTORY_VERSION: u32 = 1;

/// Where a run's pages came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunMode {
    /// The live web through a counting pass-through proxy.
    #[default]
    Live,
    /// The live web, recorded into one snapshot per task.
    Record,
    /// The recorded snapshots, with no network unless asked.
    Replay,
    /// Hand-written replies for the `trajectory:` policy (no browser ran).
    Script,
}

impl RunMode {
    /// The name used in files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            RunMode::Live => "live",
            RunMode::Record => "record",
            RunMode::Replay => "replay",
            RunMode::Script => "script",
        }
    }
}

impl std::fmt::Display for RunMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a task ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Still running (or the process died mid-task).
    #[default]
    Running,
    /// The agent answered.
    Answered,
    /// Ran out of steps.
    MaxSteps,
    /// Browser, page or model failure.
    Error,
    /// Stopped by the per-task wall-clock limit (`--task-timeout`); the steps before it are kept.
    Timeout,
    /// The site answered with a bot wall, an access denial or a rate limit (see `blocked` for the
    /// evidence): not the model's failure, counted apart by `eval` and `compare`.
    Blocked,
}

/// Proxy counters (replay: how each request was answered): cumulative from the task proxy's probe, per
/// step in a [`Step`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProxyStats {
    /// Requests the proxy handled.
    pub requests: u64,
    /// Record: writes stored that changed state (`proxy_report::writes`); when it grows, the runner runs
    /// the task's state probes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub writes: u64,
    /// Replay: exact-key answers.
    pub exact: u64,
    /// Replay: normalised answers.
    pub normalised: u64,
    /// Replay: fuzzy answers.
    pub fuzzy: u64,
    /// Replay: answers from other tasks' recordings of the same site (the `site-union` layer).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub site_union: u64,
    /// Replay: those answers (`URL <- SNAPSHOT`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub site_union_urls: Vec<String>,
    /// Replay: search engine pages answered by the frozen search engine (the `frozen-search` layer).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub frozen_search: u64,
    /// Replay: script-module batches nobody recorded, assembled from recorded batches that hold their
    /// modules (the `assembled-batch` answer, `replay::batches`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub assembled_batches: u64,
    /// Replay: answers from the task's exploration (the `explore` layer).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub explore: u64,
    /// Replay: answers from the site's crawl (the `crawl` layer).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub crawl: u64,
    /// Replay: misses.
    pub missed: u64,
    /// Record: exchanges stored.
    pub recorded: u64,
    /// Live: requests that got no response from the origin (page traffic only).
    #[serde(default)]
    pub failed: u64,
    /// Live: those requests (`URL: why`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_urls: Vec<String>,
    /// Replay: the URLs missed (`METHOD URL`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub miss_urls: Vec<String>,
    /// Replay: fuzzy matches (`asked -> served`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fuzzy_urls: Vec<String>,
    /// Replay: misses of a document or frame (a page the recording never saw).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub document_missed: u64,
    /// Replay: misses the page's rendering needed (documents, frames, styles, scripts, fonts, images).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub render_missed: u64,
    /// Replay: WebSocket messages the page sent that no recorded one matched (answered by nothing).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub websocket_missed: u64,
    /// Replay: those messages (`URL: message`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub websocket_miss_messages: Vec<String>,
    /// Live and record: writes the side-effect guard refused (an order, a payment, a post ...).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocked_writes: u64,
    /// Live and record: requests the contamination guard refused (a place a benchmark's answers are
    /// published).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocked_answers: u64,
    /// Those refusals (`METHOD URL: why (rule; evidence)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What exploration did while recording a task (`webfreeze run --mode record --explore`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exploration {
    /// Pages opened in background tabs.
    pub pages: u64,
    /// Time spent loading them (ms).
    pub ms: u64,
    /// Links left out because they were in a form or looked destructive.
    #[serde(default)]
    pub skipped_destructive: u64,
    /// Links left out for the per-host budget or a stopped host.
    #[serde(default)]
    pub skipped_budget: u64,
    /// Pages that failed to load.
    #[serde(default)]
    pub failed: u64,
    /// Hosts exploration stopped on: they answered with a wall, a denial or a rate limit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stopped_hosts: Vec<String>,
}

/// Where a forked trajectory came from (`webfreeze run --policy trajectory:RUN --fork-at N`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fork {
    /// The run whose replies were re-executed.
    pub run: String,
    /// Recorded steps re-executed (1..=at); the model decided from step `at + 1` on.
    pub at: u32,
}

/// How much of a replayed task the snapshot could answer (replay mode only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// Steps whose traffic missed a document or frame: the agent asked for a page nobody recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps_document_missed: Vec<u32>,
    /// Steps whose traffic missed something the page's rendering needed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps_render_missed: Vec<u32>,
    /// Over the whole task (start page included): documents and render-needed resources missed.
    pub documents_missed: u64,
    /// Render-needed resources missed over the whole task.
    pub render_missed: u64,
    /// Steps some of whose traffic was answered by another task's recording of the site (`site-union`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps_site_union: Vec<u32>,
    /// Requests over the whole task answered by the site union (never counted as exact).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub site_union: u64,
    /// Requests over the whole task answered by the task's exploration (`explore`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub explore: u64,
    /// Requests over the whole task answered by the site's crawl (`crawl`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub crawl: u64,
    /// Searches over the whole task answered by the frozen search engine.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub frozen_search: u64,
    /// Module batches over the whole task assembled from recorded batches.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub assembled_batches: u64,
    /// Steps during which the page sent a WebSocket message no recorded one matched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps_websocket_missed: Vec<u32>,
    /// WebSocket messages over the whole task that no recorded one matched.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub websocket_missed: u64,
    /// Share of steps with nothing render-needed missing (1.0 for a task without steps).
    pub covered: f64,
    /// The task left the frozen web: a document it asked for was never recorded. `eval` counts such tasks
    /// apart: their outcome says nothing about the model.
    pub off_snapshot: bool,
}

impl ProxyStats {
    /// How the requests were answered, by replay's layer (name as the wire log and `coverage` write it,
    /// count), misses last: one list for every table that shows them.
    pub fn layers(&self) -> [(&'static str, u64); 9] {
        [
            ("exact", self.exact),
            ("normalised", self.normalised),
            ("fuzzy", self.fuzzy),
            ("site-union", self.site_union),
            ("explore", self.explore),
            ("crawl", self.crawl),
            ("frozen-search", self.frozen_search),
            ("assembled-batch", self.assembled_batches),
            ("missed", self.missed),
        ]
    }
}

/// What the guards of a live or recording run saw in one task (`proxy::guard`, the agent's page check).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardFlags {
    /// Writes the side-effect guard refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<StepFlag>,
    /// Requests to places a benchmark's answers are published, refused: contamination evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answer_places: Vec<StepFlag>,
    /// Pages whose visible text held the task's question with its reference answer: contamination evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answer_pages: Vec<TextFlag>,
}

impl GuardFlags {
    /// Whether the task saw contamination (an answer place asked for, or a page quoting its answer).
    pub fn contaminated(&self) -> bool {
        !self.answer_places.is_empty() || !self.answer_pages.is_empty()
    }
}

/// One refusal at a step (0: the start page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepFlag {
    /// The step.
    pub step: u32,
    /// `METHOD URL: why (rule; evidence)`.
    pub what: String,
}

/// A page that showed the task's question and its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextFlag {
    /// The step whose observation showed it (0: the start page).
    pub step: u32,
    /// The page.
    pub url: String,
    /// The part of the question found.
    pub question: String,
    /// The reference answer found.
    pub answer: String,
}

/// Re-execution check of one step against the original run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reproduction {
    /// The URL before the action equals the original's.
    pub url: bool,
    /// The screenshot's hash equals the original's.
    pub screenshot: bool,
    /// The original's URL (when it differs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_url: Option<String>,
}

/// Step timings (milliseconds).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    /// Labels + screenshot + element list.
    pub observe_ms: u64,
    /// The policy's decision (model latency).
    pub decide_ms: u64,
    /// Carrying out the action, including the page settling.
    pub act_ms: u64,
    /// Of `act_ms`, the page's own work: from the action to the last network event it caused (the rest
    /// is the agent's overhead). 0 in trajectories written before it was measured.
    #[serde(default)]
    pub page_ms: u64,
}

/// One step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// 1-based.
    pub n: u32,
    /// URL the observation was made on.
    pub url_before: String,
    /// URL after the action.
    pub url_after: String,
    /// `step-NN.png`.
    pub screenshot: String,
    /// BLAKE3 of the screenshot PNG.
    pub screenshot_blake3: String,
    /// The element list shown.
    pub elements: String,
    /// The model's reasoning.
    pub thought: String,
    /// The raw reply.
    pub raw_reply: String,
    /// The action as written (empty when none could be read).
    pub raw_action: String,
    /// The parsed action (`Click [3]` ...), absent when the reply had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Why the step failed (parse or action error); it went back to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Notes (page did not settle ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Timings.
    pub timings: Timings,
    /// Tokens for this step's model call.
    #[serde(default)]
    pub usage: Usage,
    /// The proxy's counters over this step.
    #[serde(default)]
    pub proxy: ProxyStats,
    /// Re-execution check (trajectory policy only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduced: Option<Reproduction>,
}

/// A recorded task's state probes (`agent`'s runner): before the first action and after each write, the
/// pages and REST reads its checks will read were fetched in the background, so the recording knows the
/// checked state at every write epoch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeStats {
    /// Rounds (1 + the writes that started one).
    pub rounds: u32,
    /// Pages loaded in a background tab.
    pub pages: u32,
    /// Shop REST reads made.
    pub rest_reads: u32,
    /// Wall-clock time spent probing.
    pub ms: u64,
}

/// One task's record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// Format version.
    pub v: u32,
    /// Task id.
    pub task_id: String,
    /// The benchmark the task comes from (absent in trajectories of older versions: see
    /// [`Trajectory::benchmark`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<crate::Benchmark>,
    /// Site name.
    pub web_name: String,
    /// Question.
    pub question: String,
    /// Start URL.
    pub start_url: String,
    /// live / record / replay (script: hand-written replies).
    pub mode: RunMode,
    /// Snapshot used or written (record / replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// `llm:MODEL` or `trajectory:RUN`.
    pub policy: String,
    /// Record mode with `--explore`: what exploration did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exploration: Option<Exploration>,
    /// Record mode, a task whose checks read the site's state: its state probes (not steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_probes: Option<ProbeStats>,
    /// A forked trajectory: the run whose first steps it re-executed before the model took over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked: Option<Fork>,
    /// How it ended.
    pub outcome: Outcome,
    /// The final answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// What ended it, when it was an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Final URL.
    #[serde(default)]
    pub final_url: String,
    /// Why the task ended `blocked`: the walled document and the marker found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<wall::Blocked>,
    /// The User-Agent the browser presented (the same in record and replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// Replay: how much of the task the snapshot answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// Live and record: what the guards refused and the contamination seen, by step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<GuardFlags>,
    /// Steps.
    pub steps: Vec<Step>,
    /// Wall clock at start (ms since epoch).
    pub started_ms: i64,
    /// Task duration.
    #[serde(default)]
    pub duration_ms: u64,
    /// Browser start time.
    #[serde(default)]
    pub browser_start_ms: u64,
    /// Tokens over the task.
    #[serde(default)]
    pub usage: Usage,
    /// The proxy's totals over the task (replay: the whole report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy_report: Option<proxy_report::ProxyReport>,
    /// Steps whose URL and screenshot both matched the original (trajectory policy only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduced_steps: Option<u32>,
    /// The task's own evaluation spec when its file carries one in WebArena's format (`eval`, site
    /// placeholders resolved): `webfreeze eval` scores it without the task file or the site list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_eval: Option<crate::TaskEvalSpec>,
    /// The task's set-up as its file gave it (start pages, viewport, storage state, ...; WebArena format
    /// only, without `eval`, which is [`Trajectory::task_eval`]): what `eval --rescore` needs to
    /// re-execute the task against its snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_setup: Option<serde_json::Value>,
    /// What the task's `program_html` checks found, in spec order: run at the end of the task in the same
    /// browser, through the same proxy (so in record mode the pages they load are recorded too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub html_checks: Vec<HtmlCheck>,
    /// What the task's `page_image_query` checks (VisualWebArena) found, in spec order: the images on
    /// the page and the gold images, fetched through the task's proxy at the end of the task and saved
    /// next to the trajectory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_checks: Vec<ImageCheck>,
}

/// What a task's end-of-task checks found: `program_html`'s and `page_image_query`'s evidence.
pub type CheckEvidence = (Vec<HtmlCheck>, Vec<ImageCheck>);

/// Why a task's end-of-task checks could not be re-run against its snapshot (`eval --rescore`); the
/// evaluator reports the task as not scored, with this.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RescoreError {
    /// A live run: nothing was recorded to re-run against.
    #[error("the task has no snapshot to re-score against (a live run)")]
    NoSnapshot,
    /// The trajectory's recorded replies cannot be read back as a policy.
    #[error("its recorded replies cannot be replayed: {0}")]
    Replies(#[source] std::sync::Arc<dyn std::error::Error + Send + Sync>),
    /// The task's replay proxy did not start.
    #[error("{0}")]
    Proxy(#[source] std::sync::Arc<dyn std::error::Error + Send + Sync>),
    /// The re-execution ended in an error (the task's recorded error text).
    #[error("re-executing the task against its snapshot failed: {0}")]
    Reexecution(String),
}

/// One `page_image_query` check's evidence.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageCheck {
    /// The query's `eval_image_url` (`last`, or a URL with placeholders resolved).
    pub url: String,
    /// The URL the page was at when the images were collected.
    #[serde(default)]
    pub visited: String,
    /// The query's `eval_image_class` (a `.class` selector; empty: every image on the page).
    pub locator: String,
    /// The images the locator selected, in page order.
    #[serde(default)]
    pub images: Vec<ImageFile>,
    /// The `eval_fuzzy_image_match` gold images (its ` |OR| ` alternatives), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gold: Vec<ImageFile>,
    /// Why the query could not run as written (a `func:` URL, an unknown locator, a navigation error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// An image fetched for a check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageFile {
    /// Where it came from (a URL, or the gold image's path).
    pub url: String,
    /// Its bytes, relative to the task's directory ("" when it could not be fetched).
    #[serde(default)]
    pub file: String,
    /// Why it could not be fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One `program_html` check's evidence.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HtmlCheck {
    /// The check's `url` as the spec gives it (`last`, or a URL with placeholders resolved).
    pub url: String,
    /// The URL the page was at when the locator ran.
    #[serde(default)]
    pub visited: String,
    /// The locator (a JavaScript expression; empty: the page's HTML).
    pub locator: String,
    /// What the locator gave (HTML entities unescaped by the evaluator), `""` if it threw.
    #[serde(default)]
    pub result: String,
    /// The locator gave a number (a helper like `shopping_get_product_price`), written in `result`:
    /// `required_values` compares it as a number, as VWA does, not as text read as an integer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub numeric: bool,
    /// Why the check could not run as written (a `func:` helper, a navigation or script error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Outcome {
    /// The name used in files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Running => "running",
            Outcome::Answered => "answered",
            Outcome::MaxSteps => "max_steps",
            Outcome::Error => "error",
            Outcome::Timeout => "timeout",
            Outcome::Blocked => "blocked",
        }
    }
}

impl Trajectory {
    /// True once the task has ended (a rerun skips it).
    pub fn finished(&self) -> bool {
        self.outcome != Outcome::Running
    }

    /// The benchmark the task comes from: as recorded, else (a trajectory of an older version) what its
    /// spec says, else WebVoyager's (the format older versions read without a spec).
    pub fn benchmark(&self) -> crate::Benchmark {
        self.benchmark
            .or_else(|| self.task_eval.as_ref().and_then(crate::TaskEvalSpec::benchmark))
            .unwrap_or_default()
    }
}
