//! A task's steps, from its first observation to its end: each step observes the page, reads it (a
//! recording keeps its text, a live run checks it for the task's answer), stops at a wall, explores,
//! asks the policy, acts, and then ends the task or goes on. [`TaskRun`] holds what every step reads and
//! writes; each phase is one of its methods, in the order a step runs them.
//!
//! A phase that ends the task sets the trajectory's outcome (and saves the task's files where the task
//! ends with an answer or an early stop) and returns [`Ended`]; the step budget running out ends it as
//! `MaxSteps`.

use std::time::Instant;

use trajectory::llm::Message;
use trajectory::{Outcome, ProxyStats, Reproduction, RunMode, Step, TaskDir, Timings, Trajectory};

use super::files::Files;
use super::state_probes::StateProbes;
use super::stats::delta;
use super::{AgentConfig, TaskEnv};
use crate::action::{ActionSpace, AnyAction, AnyParsed, ParseError};
use crate::browser::{Observation, ObservationKind, Session};
use crate::contamination::AnswerCheck;
use crate::explore::Explorer;
use crate::policy::{user_text, webarena_user_text, Decision, Policy, Prompt};
use crate::tasks::Task;

/// One task's run: what it is given (its settings, environment, task, policy, browser session,
/// trajectory and files, and what runs beside the steps while recording) and what its steps carry from
/// one to the next.
pub(super) struct TaskRun<'a> {
    pub(super) cfg: &'a AgentConfig,
    pub(super) env: &'a TaskEnv,
    pub(super) task: &'a Task,
    /// The task's input images (VisualWebArena), sent with the first step.
    pub(super) task_images: &'a [Vec<u8>],
    pub(super) policy: &'a mut Policy,
    pub(super) session: &'a Session,
    pub(super) t: &'a mut Trajectory,
    pub(super) files: &'a mut Files,
    /// Recording: the explorer of linked pages.
    pub(super) explorer: Option<&'a mut Explorer>,
    /// Recording a state task: its state probes.
    pub(super) probes: Option<&'a mut StateProbes>,
    /// Live and record: pages quoting the task with its answer are contamination evidence.
    pub(super) answer_check: Option<AnswerCheck>,
    /// The last step's error, shown to the model at the next step.
    pub(super) last_error: Option<String>,
    pub(super) early_stop: EarlyStop,
}

/// The task is over; its outcome is in the trajectory.
struct Ended;

/// A phase's result: go on with `T`, or the task has ended.
type Phase<T> = Result<T, Ended>;

/// What a step has seen before the policy is asked.
struct Seen {
    n: u32,
    obs: Observation,
    /// The step's screenshot file.
    png_name: String,
    /// What the step's record notes (probes, an unsettled page, contamination, exploration).
    notes: Vec<String>,
    /// The proxy's counters before the step.
    before: ProxyStats,
}

/// What the policy answered at a step.
struct Decided {
    decision: Decision,
    parsed: Result<AnyParsed, ParseError>,
}

/// What acting did: the task's answer, or an error that ends the task (a dead browser).
#[derive(Default)]
struct Acted {
    answered: Option<String>,
    fatal: Option<String>,
}

/// The contamination check of a live or recording run (none when replaying).
pub(super) fn answer_check(env: &TaskEnv, task: &Task) -> Option<AnswerCheck> {
    (env.mode != RunMode::Replay)
        .then(|| AnswerCheck::new(&task.question, &task.setup.reference_answers))
        .flatten()
}

impl TaskRun<'_> {
    /// Run the steps until the task ends or the step budget runs out.
    pub(super) async fn run(mut self) {
        for n in 1..=self.cfg.max_steps {
            if self.step(n).await.is_err() {
                return;
            }
        }
        self.t.outcome = Outcome::MaxSteps;
    }

    async fn step(&mut self, n: u32) -> Phase<()> {
        self.recorded_end(n)?;
        let mut seen = self.observe(n).await?;
        self.read_page(&mut seen).await;
        self.stop_at_wall(&mut seen).await?;
        self.explore(&mut seen).await;
        let decided = self.decide(&seen).await?;
        let mut step = self.step_of(&mut seen, &decided.decision);
        let acted = self.act(&mut step, decided.parsed).await;
        self.after_act(&mut step, &seen, &acted).await;
        self.t.steps.push(step);
        self.end_or_go_on(n, acted)
    }

    /// End the task with `outcome` and `error` (its files are not saved here).
    fn end(&mut self, outcome: Outcome, error: String) -> Ended {
        self.t.outcome = outcome;
        self.t.error = Some(error);
        Ended
    }

    /// Re-executing a run that stopped without an answer: stop where it stopped, as it did.
    fn recorded_end(&mut self, n: u32) -> Phase<()> {
        match self.policy.recorded_end(n) {
            Some((outcome, why)) => Err(self.end(outcome, why)),
            None => Ok(()),
        }
    }

    /// Probe the state (recording a state task), observe the page, write its screenshots.
    async fn observe(&mut self, n: u32) -> Phase<Seen> {
        // Recording a state task: its checked pages at this write epoch, before the step is observed.
        let mut notes = match self.probes.as_deref_mut() {
            Some(p) => p.before_step(self.session, self.env).await,
            None => Vec::new(),
        };
        let before = self.env.probe.as_ref().map(|p| p.counters()).unwrap_or_default();
        let obs = match self.session.observe().await {
            Ok(o) => o,
            Err(e) => return Err(self.end(Outcome::Error, format!("step {n}: cannot observe the page: {e}"))),
        };
        let png_name = TaskDir::step_png(n);
        if let Some(pending) = &obs.unsettled {
            notes.push(format!(
                "the page had not settled within {:.0}s; still loading: {}",
                self.cfg.page_timeout.as_secs_f64(),
                pending.join(", ")
            ));
        }
        for (name, what) in [(png_name.clone(), "step"), (format!("screenshot{n}.png"), "webvoyager")] {
            if let Err(e) = self.files.png(&name, &obs.screenshot) {
                notes.push(format!("{what} screenshot: cannot write {name}: {e}"));
            }
        }
        Ok(Seen { n, obs, png_name, notes, before })
    }

    /// What the page rendered: a recording keeps it for the frozen search engine, the live contamination
    /// check reads it.
    async fn read_page(&mut self, seen: &mut Seen) {
        let recording = self.env.mode == RunMode::Record;
        let page_text =
            if recording || self.answer_check.is_some() { self.session.page_text().await.ok() } else { None };
        if let (true, Some(p), Some(text)) = (recording, &self.env.probe, &page_text) {
            p.rendered_text(&seen.obs.url, text);
        }
        let Some(check) = self.answer_check.as_ref() else { return };
        if let Some((question, answer)) = page_text.as_deref().and_then(|text| check.find(text)) {
            seen.notes.push(format!(
                "contamination: the page shows the task's question with its answer {answer:?}"
            ));
            self.t.guard.get_or_insert_default().answer_pages.push(trajectory::TextFlag {
                step: seen.n,
                url: seen.obs.url.clone(),
                question,
                answer,
            });
        }
    }

    /// A wall is not the site: stop before the model spends a step on it, and say so.
    async fn stop_at_wall(&mut self, seen: &mut Seen) -> Phase<()> {
        let Ok(Some(b)) = self.session.wall().await else { return Ok(()) };
        let n = seen.n;
        self.t.error = Some(format!(
            "step {n}: {} answered with a {} ({}, status {}): the task could not be attempted",
            b.host,
            match b.kind {
                wall::BlockKind::Challenge => "bot wall",
                wall::BlockKind::AccessDenied => "denial",
                wall::BlockKind::RateLimited => "rate limit",
            },
            b.marker,
            b.status
        ));
        self.t.blocked = Some(b);
        self.t.outcome = Outcome::Blocked;
        self.t.steps.push(Step {
            n,
            url_before: seen.obs.url.clone(),
            url_after: seen.obs.url.clone(),
            screenshot: seen.png_name.clone(),
            screenshot_blake3: blake3::hash(&seen.obs.screenshot).to_hex().to_string(),
            notes: std::mem::take(&mut seen.notes),
            ..Default::default()
        });
        Err(Ended)
    }

    /// Recording with exploration: open the page's links, keep what they rendered.
    async fn explore(&mut self, seen: &mut Seen) {
        let Some(ex) = self.explorer.as_deref_mut() else { return };
        let opened = ex.after_observation(self.session, &seen.obs.url).await;
        for (url, text) in ex.take_rendered() {
            if let Some(p) = &self.env.probe {
                p.rendered_text(&url, &text);
            }
        }
        if !opened.is_empty() {
            seen.notes.push(format!("explored {} linked page(s): {}", opened.len(), opened.join(" ")));
        }
    }

    /// Ask the policy, and write the exchange to the transcript and the step messages.
    async fn decide(&mut self, seen: &Seen) -> Phase<Decided> {
        let (n, obs) = (seen.n, &seen.obs);
        let last_error = self.last_error.as_deref();
        let text = match self.cfg.action_space {
            ActionSpace::WebVoyager => user_text(self.task, n, last_error, &obs.text),
            ActionSpace::WebArena => webarena_user_text(
                self.task,
                &obs.url,
                &obs.tabs,
                obs.active_tab,
                &obs.text,
                self.t.steps.last().and_then(|s| s.action.as_deref()),
                last_error,
            ),
        };
        let mut images: Vec<&[u8]> = Vec::new();
        if self.cfg.observation != ObservationKind::AxTree {
            images.push(&obs.screenshot);
        }
        let task_images: Vec<&[u8]> =
            if n == 1 { self.task_images.iter().map(Vec::as_slice).collect() } else { Vec::new() };
        let prompt = Prompt { step: n, text: &text, images: &images, task_images: &task_images };
        let decision = match self.policy.decide(&prompt).await {
            Ok(d) => d,
            Err(e) => return Err(self.end(Outcome::Error, format!("step {n}: {e}"))),
        };
        let files = &mut *self.files;
        // The transcript names the screenshot only when one was sent (not with axtree observations).
        files.transcript.push(if images.is_empty() {
            Message::text("user", &text)
        } else {
            let shot_ref = format!("screenshot{n}.png");
            Message {
                role: "user".into(),
                content: serde_json::json!([
                    {"type": "text", "text": text},
                    {"type": "image_url", "image_url": {"url": shot_ref}}
                ]),
            }
        });
        // WebVoyager's scripts look for `Action: ANSWER; ...` in the last reply: the transcript carries the
        // canonical form of a readable reply (the raw text is in messages.json and trajectory.json).
        let parsed = crate::action::parse_reply(self.cfg.action_space, &decision.raw_reply);
        let canonical = match &parsed {
            Ok(p) => format!("Thought: {}\nAction: {}", p.thought, p.action),
            Err(_) => decision.raw_reply.clone(),
        };
        files.transcript.push(Message::text("assistant", &canonical));
        files.messages.push(serde_json::json!({
            "step": n, "user": text, "screenshot": seen.png_name, "images_sent": decision.images_sent,
            "reply": decision.raw_reply, "usage": decision.usage, "ms": decision.ms,
        }));
        self.t.usage += decision.usage;
        Ok(Decided { decision, parsed })
    }

    /// The step's record as decided (its notes move into it), before it acts.
    fn step_of(&self, seen: &mut Seen, decision: &Decision) -> Step {
        let obs = &seen.obs;
        let screenshot_blake3 = blake3::hash(&obs.screenshot).to_hex().to_string();
        // Scripted trajectories carry no observations to compare with.
        let reproduced =
            self.policy.recorded_step(seen.n).filter(|o| !o.screenshot_blake3.is_empty()).map(|o| {
                Reproduction {
                    url: o.url_before == obs.url,
                    screenshot: o.screenshot_blake3 == screenshot_blake3,
                    original_url: (o.url_before != obs.url).then(|| o.url_before.clone()),
                }
            });
        Step {
            n: seen.n,
            url_before: obs.url.clone(),
            url_after: obs.url.clone(),
            screenshot: seen.png_name.clone(),
            screenshot_blake3,
            elements: obs.text.clone(),
            raw_reply: decision.raw_reply.clone(),
            notes: std::mem::take(&mut seen.notes),
            timings: Timings { observe_ms: obs.ms, decide_ms: decision.ms, ..Default::default() },
            usage: decision.usage,
            reproduced,
            ..Default::default()
        }
    }

    /// Perform the parsed action (an answer is not performed: it ends the task); an unreadable reply or a
    /// failed action is the error the model sees next.
    async fn act(&mut self, step: &mut Step, parsed: Result<AnyParsed, ParseError>) -> Acted {
        self.last_error = None;
        let mut acted = Acted::default();
        let p = match parsed {
            Ok(p) => p,
            Err(e) => {
                step.error = Some(e.to_string());
                self.last_error = Some(e.to_string());
                return acted;
            }
        };
        step.thought = p.thought.clone();
        step.raw_action = p.raw_action.clone();
        step.action = Some(p.action.to_string());
        if let Some(a) = p.action.answer() {
            acted.answered = Some(a.to_string());
            return acted;
        }
        let a0 = Instant::now();
        let r = match &p.action {
            AnyAction::WebVoyager(a) => self.session.perform(a).await,
            AnyAction::WebArena(a) => self.session.perform_webarena(a).await,
        };
        step.timings.act_ms = a0.elapsed().as_millis() as u64;
        step.timings.page_ms = self.session.take_page_ms().min(step.timings.act_ms);
        if let Err(e) = r {
            // A failed action may mean a dead browser: probe it before going on.
            if e.is_fatal() || self.session.url().await.is_err() {
                acted.fatal = Some(e.to_string());
            }
            step.error = Some(e.to_string());
            self.last_error = Some(e.to_string());
        }
        acted
    }

    /// Where the step left the browser, and the proxy's traffic during it.
    async fn after_act(&self, step: &mut Step, seen: &Seen, acted: &Acted) {
        if acted.fatal.is_none() {
            step.url_after = self.session.url().await.unwrap_or_else(|_| seen.obs.url.clone());
        }
        if let Some(p) = &self.env.probe {
            step.proxy = delta(&seen.before, &p.counters());
        }
    }

    /// After the step is recorded: end the task (answered, a dead browser, an early stop), or save and go
    /// on.
    fn end_or_go_on(&mut self, n: u32, acted: Acted) -> Phase<()> {
        if let Some(a) = acted.answered {
            self.t.outcome = Outcome::Answered;
            self.t.answer = Some(a);
            self.files.save(self.t);
            return Err(Ended);
        }
        if let Some(e) = acted.fatal {
            return Err(self.end(Outcome::Error, format!("step {n}: {e}")));
        }
        let action = self.t.steps.last().and_then(|s| s.action.as_deref());
        if let Some(why) = self.early_stop.after(action) {
            // No answer, like running out of steps; the reason stays with the trajectory.
            let ended = self.end(Outcome::MaxSteps, why);
            self.files.save(self.t);
            return Err(ended);
        }
        self.files.save(self.t);
        Ok(())
    }
}

/// WebArena's early stop: unparseable replies in a row, and the same action in a row (a limit of 0 never
/// stops).
pub(super) struct EarlyStop {
    parse_limit: u32,
    repeat_limit: u32,
    parse_failures: u32,
    repeats: (Option<String>, u32),
}

impl EarlyStop {
    pub(super) fn new(cfg: &AgentConfig) -> Self {
        Self::with_limits(cfg.stop_after_parse_failures, cfg.stop_after_repeats)
    }

    fn with_limits(parse_limit: u32, repeat_limit: u32) -> Self {
        Self { parse_limit, repeat_limit, parse_failures: 0, repeats: (None, 0) }
    }

    /// Count a step's action (`None`: its reply did not parse); why the task stops after it, if it does.
    fn after(&mut self, action: Option<&str>) -> Option<String> {
        match action {
            None => {
                self.parse_failures += 1;
                self.repeats = (None, 0);
            }
            Some(a) => {
                self.parse_failures = 0;
                let again = self.repeats.0.as_deref() == Some(a);
                self.repeats = (Some(a.to_string()), if again { self.repeats.1 + 1 } else { 1 });
            }
        }
        if self.parse_limit > 0 && self.parse_failures >= self.parse_limit {
            Some(format!(
                "stopped early: {} unparseable replies in a row (--early-stop-parse-failures)",
                self.parse_failures
            ))
        } else if self.repeat_limit > 0 && self.repeats.1 >= self.repeat_limit {
            Some(format!(
                "stopped early: the same action {} times in a row: {} (--early-stop-repeats)",
                self.repeats.1,
                self.repeats.0.as_deref().unwrap_or("")
            ))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::EarlyStop;

    #[test]
    fn early_stop_counts_unparseable_replies_and_repeated_actions_in_a_row() {
        type Case = (u32, u32, &'static [Option<&'static str>], Option<&'static str>);
        let cases: &[Case] = &[
            // Limits of 0 never stop.
            (0, 0, &[None, None, None, Some("click [1]"), Some("click [1]"), Some("click [1]")], None),
            (2, 0, &[None, None], Some("stopped early: 2 unparseable replies in a row")),
            // A parsed reply resets the unparseable count.
            (2, 0, &[None, Some("click [1]"), None], None),
            (
                0,
                3,
                &[Some("a"), Some("a"), Some("a")],
                Some("stopped early: the same action 3 times in a row: a"),
            ),
            // Another action, or an unparseable reply, resets the repeats.
            (0, 3, &[Some("a"), Some("a"), Some("b"), Some("a")], None),
            (0, 2, &[Some("a"), None, Some("a")], None),
        ];
        for (parse, repeat, actions, want) in cases {
            let mut stop = EarlyStop::with_limits(*parse, *repeat);
            let got: Vec<Option<String>> = actions.iter().map(|a| stop.after(*a)).collect();
            let (last, earlier) = got.split_last().unwrap();
            assert!(
                earlier.iter().all(Option::is_none),
                "{actions:?}: stopped before the last step: {got:?}"
            );
            match (last, want) {
                (None, None) => {}
                (Some(why), Some(w)) => assert!(why.starts_with(w), "{actions:?}: {why}"),
                _ => panic!("{actions:?}: {last:?}, want {want:?}"),
            }
        }
    }
}
