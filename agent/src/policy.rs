//! Policies: what decides the next action. `llm` asks a vision model over the OpenAI-compatible API;
//! `trajectory:RUN` re-executes the replies recorded in a previous run, step by step, so a failed
//! trajectory can be replayed without the model.

use std::path::{Path, PathBuf};

use crate::tasks::Task;
use trajectory::llm::{Llm, LlmError, Message, Usage};
use trajectory::{
    Outcome, RunDir, RunDirError, RunFile, RunMode, Step, TaskStatus, Trajectory, TRAJECTORY_VERSION,
};

/// Our system prompt, following the WebVoyager protocol (labelled screenshot in, one action out).
pub const SYSTEM_PROMPT: &str =
    "You are a web-browsing agent completing a task for a user, one step at a time, like a person \
using a browser.

At every step you receive a screenshot of the current page. Every element you can interact with carries a \
numbered label at the top left of a dashed box; under the screenshot you also get a list of those labels \
with each element's tag and text. Decide on exactly one action per step from this list:

1. Click [n]             - click the element labelled n (a link, a button, a tab ...).
2. Type [n]; text        - clear the field labelled n, type the text, then press Enter.
3. Scroll [n]; up|down   - scroll inside the element labelled n; write WINDOW instead of n to scroll the page.
4. Wait                  - wait a few seconds for something to load.
5. GoBack                - go back to the previous page.
6. Google                - start again from a search engine.
7. ANSWER; text          - you are done: give the final answer to the task.

Rules:
- One action per reply, no more.
- Use only labels that appear in the latest screenshot.
- Click on the field itself before typing only if typing fails; Type already clears and focuses it.
- Do not repeat an action that did not change the page; try something else.
- When the task asks for information, answer with the information itself, concisely.
- If an action fails you are told why; the failed attempt counts as a step.

Reply in exactly this format:
Thought: {a short account of what you see and what you will do}
Action: {one action in the format above}";

/// Our system prompt for WebArena's action space (`--action-space webarena`), following WebArena's
/// protocol: a text observation (the accessibility tree, or the labelled elements with a screenshot),
/// the URL, the objective and the previous action in; reasoning then one action between triple
/// backticks out.
pub const WEBARENA_SYSTEM_PROMPT: &str = r#"You are an autonomous intelligent agent tasked with navigating a web browser. You will be given web-based tasks. These tasks will be accomplished through the use of specific actions you can issue.

Here's the information you'll have:
The user's objective: This is the task you're trying to complete.
The current web page's observation: the open tabs, then either the page's accessibility tree (each line an element: [id] role 'name' properties) or a list of labelled elements with a screenshot whose labels carry the same ids.
The current web page's URL: This is the page you're currently navigating.
The previous action: This is the action you just performed. It may be helpful to track your progress.

The actions you can perform fall into several categories:

Page Operation Actions:
`click [id]`: click on an element with a specific id on the webpage.
`type [id] [content] [press_enter_after=0|1]`: type the content into the field with id. By default, the "Enter" key is pressed after typing unless press_enter_after is set to 0.
`hover [id]`: hover over an element with id.
`press [key_comb]`: press a key combination on the keyboard (e.g., Control+v).
`scroll [direction=down|up]`: scroll the page up or down.
`clear [id]`: empty the field with id.
`upload [id] [file]`: set the file of the file input with id.

Tab Management Actions:
`new_tab`: open a new, empty browser tab.
`tab_focus [tab_index]`: switch the browser's focus to a specific tab using its index.
`close_tab`: close the currently active tab.

URL Navigation Actions:
`goto [url]`: navigate to a specific URL.
`go_back`: navigate to the previously viewed page.
`go_forward`: navigate to the next page (if a previous 'go_back' action was performed).

Completion Action:
`stop [answer]`: issue this action when you believe the task is complete. If the objective is to find a text-based answer, provide the answer in the bracket. If you believe the task is impossible to complete, provide the answer as "N/A" in the bracket.

Rules:
1. Only issue an action that is valid given the current observation.
2. Only issue one action at a time.
3. Reason step by step, then issue the action.
4. Write the action in the correct format: start with "In summary, the next action I will perform is" followed by the action inside ``````. For example, "In summary, the next action I will perform is ```click [1234]```".
5. Issue the stop action when you think you have achieved the objective. Don't generate anything after stop."#;

/// The user turn at a step in WebArena's space: `OBSERVATION`, `URL`, `OBJECTIVE`, `PREVIOUS ACTION`
/// (WebArena's template), the tab list first, and the previous action's error when it failed.
pub fn webarena_user_text(
    task: &Task,
    url: &str,
    tabs: &[String],
    active_tab: usize,
    observation: &str,
    previous: Option<&str>,
    error: Option<&str>,
) -> String {
    let tab_line = tabs
        .iter()
        .enumerate()
        .map(
            |(i, t)| {
                if i == active_tab {
                    format!("Tab {i} (current): {t}")
                } else {
                    format!("Tab {i}: {t}")
                }
            },
        )
        .collect::<Vec<_>>()
        .join(" | ");
    let mut s = String::new();
    if let Some(e) = error {
        s.push_str(&format!("Your previous action failed: {e}\n\n"));
    }
    // What the benchmark asks of the answer (WebArena-Verified's typed response, ...) is in the objective.
    let objective = crate::tasks::objective(task);
    s.push_str(&format!(
        "OBSERVATION:\n{tab_line}\n\n{observation}\nURL: {url}\nOBJECTIVE: {objective}\nPREVIOUS ACTION: {}",
        previous.unwrap_or("None")
    ));
    s
}

/// The text of the user turn at a step.
pub fn user_text(task: &Task, step: u32, error: Option<&str>, elements: &str) -> String {
    let mut s = String::new();
    if step == 1 {
        let ques = crate::tasks::objective(task);
        s.push_str(&format!(
            "Now given a task: {ques}  Please interact with {} and get the answer.\n\n",
            task.start_url
        ));
    }
    if let Some(e) = error {
        s.push_str(&format!("Your previous action failed: {e}\n\n"));
    }
    s.push_str(
        "Observation: the screenshot of the current page is attached. The labelled elements are listed below \
         as [label]: <tag> \"text\". A field may be editable even when its tag is not input; trust the \
         screenshot first and the list second.\n",
    );
    s.push_str(elements);
    s
}

/// What was omitted from an old turn's text when its screenshot left the context.
const OMITTED: &str = "Observation: (an earlier screenshot and element list, omitted to save context)";

/// The system prompt for an action space.
pub fn system_prompt(space: crate::action::ActionSpace) -> &'static str {
    match space {
        crate::action::ActionSpace::WebVoyager => SYSTEM_PROMPT,
        crate::action::ActionSpace::WebArena => WEBARENA_SYSTEM_PROMPT,
    }
}

/// What a policy decided.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The reply, verbatim.
    pub raw_reply: String,
    /// Tokens.
    pub usage: Usage,
    /// Time taken.
    pub ms: u64,
    /// Images sent with the request (model policy), for the record.
    pub images_sent: usize,
}

pub mod fork;

/// Policy failures that end the task.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The model could not be reached or answered nonsense.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The recorded trajectory has no more steps.
    #[error("the recorded trajectory of task {task:?} has no step {step} (it had {had})")]
    Exhausted {
        /// Task id.
        task: String,
        /// Step asked for.
        step: u32,
        /// Steps recorded.
        had: usize,
    },
    /// A fork past the end of the recorded trajectory.
    #[error(
        "--fork-at {at}: the trajectory of task {task:?} in {run} has {had} step(s); fork at {had} or earlier"
    )]
    ForkBeyond {
        /// Task id.
        task: String,
        /// The recorded run.
        run: String,
        /// Steps asked to re-execute.
        at: u32,
        /// Steps recorded.
        had: usize,
    },
    /// The recorded run is unusable.
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    /// The recorded run lacks the task.
    #[error("{run} has no trajectory for task {task:?}")]
    Missing {
        /// Run dir.
        run: String,
        /// Task id.
        task: String,
    },
}

/// What the policy sees at a step.
#[derive(Debug)]
pub struct Prompt<'a> {
    /// 1-based step.
    pub step: u32,
    /// The user turn's text.
    pub text: &'a str,
    /// The observation's images: the labelled screenshot (none for an accessibility-tree observation).
    pub images: &'a [&'a [u8]],
    /// The task's input images (VisualWebArena), given at the first step: they are part of the task
    /// statement, so they stay in the context when older screenshots leave it.
    pub task_images: &'a [&'a [u8]],
}

struct Turn {
    text: String,
    images: Vec<Vec<u8>>,
    pinned: Vec<Vec<u8>>,
    reply: String,
    answered: bool,
}

/// The model policy.
pub struct LlmPolicy {
    llm: Llm,
    keep_images: usize,
    system: &'static str,
    turns: Vec<Turn>,
}

impl LlmPolicy {
    /// A fresh conversation (one per task), with WebVoyager's system prompt.
    pub fn new(llm: Llm, keep_images: usize) -> Self {
        Self { llm, keep_images, system: SYSTEM_PROMPT, turns: Vec::new() }
    }

    /// The messages for the current turns: system prompt, every turn's text (older ones abridged) and
    /// reply, screenshots only for the last `keep_images` turns.
    fn messages(&self) -> Vec<Message> {
        let mut out = vec![Message::text("system", self.system)];
        let first_with_image = self.turns.len().saturating_sub(self.keep_images);
        for (i, t) in self.turns.iter().enumerate() {
            if i >= first_with_image {
                let images: Vec<&[u8]> = t.pinned.iter().chain(&t.images).map(Vec::as_slice).collect();
                out.push(Message::with_images("user", &t.text, &images));
            } else {
                // Keep the task statement, its input images and any error; drop the observation.
                let cut = ["Observation:", "OBSERVATION:"].iter().filter_map(|m| t.text.find(m)).min();
                let keep = format!("{}{OMITTED}", &t.text[..cut.unwrap_or(t.text.len())]);
                let images: Vec<&[u8]> = t.pinned.iter().map(Vec::as_slice).collect();
                out.push(Message::with_images("user", &keep, &images));
            }
            // Every answered turn keeps its assistant message, an empty reply too: strict chat templates
            // (Gemma's) refuse two user turns in a row. Only the turn being asked has no reply yet.
            if i + 1 < self.turns.len() || t.answered {
                out.push(Message::text("assistant", &t.reply));
            }
        }
        out
    }

    /// Take a turn the model did not decide into its history (a forked trajectory's re-executed steps):
    /// the observation as the user turn, `reply` as the model's.
    pub(crate) fn remember(&mut self, p: &Prompt<'_>, reply: &str) {
        self.turns.push(Turn {
            text: p.text.to_string(),
            images: p.images.iter().map(|i| i.to_vec()).collect(),
            pinned: p.task_images.iter().map(|i| i.to_vec()).collect(),
            reply: reply.to_string(),
            answered: true,
        });
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.llm.config().model
    }

    async fn decide(&mut self, p: &Prompt<'_>) -> Result<Decision, PolicyError> {
        self.turns.push(Turn {
            text: p.text.to_string(),
            images: p.images.iter().map(|i| i.to_vec()).collect(),
            pinned: p.task_images.iter().map(|i| i.to_vec()).collect(),
            reply: String::new(),
            answered: false,
        });
        let msgs = self.messages();
        let images = msgs.iter().map(Message::image_count).sum();
        let temperature = self.llm.config().temperature;
        let c = self.llm.chat(&msgs, temperature).await?;
        if let Some(t) = self.turns.last_mut() {
            t.reply = c.text.clone();
            t.answered = true;
        }
        Ok(Decision { raw_reply: c.text, usage: c.usage, ms: c.ms, images_sent: images })
    }
}

/// Re-executes a recorded run's replies.
pub struct TrajectoryPolicy {
    run: PathBuf,
    original: Trajectory,
}

impl TrajectoryPolicy {
    /// The recorded trajectory of `task` in `run`.
    pub fn load(run: &Path, task: &Task) -> Result<Self, PolicyError> {
        let original = RunDir::new(run)
            .task(&task.id)
            .read_trajectory()?
            .ok_or_else(|| PolicyError::Missing { run: run.display().to_string(), task: task.id.clone() })?;
        Ok(Self { run: run.to_path_buf(), original })
    }

    /// The original trajectory.
    pub fn original(&self) -> &Trajectory {
        &self.original
    }

    /// The run it came from.
    pub fn run(&self) -> &Path {
        &self.run
    }

    fn decide(&mut self, p: &Prompt<'_>) -> Result<Decision, PolicyError> {
        let step = self.original.steps.get(p.step as usize - 1).ok_or_else(|| PolicyError::Exhausted {
            task: self.original.task_id.clone(),
            step: p.step,
            had: self.original.steps.len(),
        })?;
        Ok(Decision { raw_reply: step.raw_reply.clone(), usage: Usage::default(), ms: 0, images_sent: 0 })
    }
}

/// Write hand-written replies as a run the `trajectory:` policy can re-execute: `run.json` in script mode
/// and, per task, a `trajectory.json` whose steps carry only the replies (no observations, so nothing is
/// compared).
pub fn write_script(dir: &Path, scripts: &[(Task, Vec<String>)]) -> Result<(), RunDirError> {
    let run = RunDir::new(dir);
    run.create()?;
    let mut rf = RunFile::script("");
    for (task, replies) in scripts {
        let steps = replies
            .iter()
            .enumerate()
            .map(|(i, r)| Step {
                n: i as u32 + 1,
                raw_reply: r.clone(),
                notes: vec!["scripted".into()],
                ..Default::default()
            })
            .collect();
        let t = Trajectory {
            v: TRAJECTORY_VERSION,
            task_id: task.id.clone(),
            web_name: task.web_name.clone(),
            question: task.question.clone(),
            start_url: task.start_url.clone(),
            mode: RunMode::Script,
            policy: "script".into(),
            outcome: Outcome::Answered,
            steps,
            ..Default::default()
        };
        let td = run.task(&task.id);
        td.create()?;
        td.write_trajectory(&t)?;
        rf.tasks.insert(task.id.clone(), TaskStatus::of(&t));
    }
    run.write_run_file(&rf)
}

/// A policy for one task.
pub enum Policy {
    /// Ask the model.
    Llm(LlmPolicy),
    /// Re-execute a recorded run.
    Trajectory(Box<TrajectoryPolicy>),
    /// Re-execute a recorded run's first steps, then ask the model.
    Fork(Box<fork::ForkPolicy>),
}

impl Policy {
    /// The next reply.
    pub async fn decide(&mut self, p: &Prompt<'_>) -> Result<Decision, PolicyError> {
        match self {
            Policy::Llm(l) => l.decide(p).await,
            Policy::Trajectory(t) => t.decide(p),
            Policy::Fork(f) => f.decide(p).await,
        }
    }

    /// The recorded step a re-executed step `n` is checked against (URL and screenshot): every step of a
    /// `trajectory:` re-execution, a fork's steps up to the fork. None for the model's steps.
    pub fn recorded_step(&self, n: u32) -> Option<&Step> {
        let original = match self {
            Policy::Trajectory(t) => t.original(),
            Policy::Fork(f) if f.replays(n) => f.prefix().original(),
            _ => return None,
        };
        original.steps.get((n as usize).checked_sub(1)?)
    }

    /// Where a forked trajectory forked.
    pub fn fork_point(&self) -> Option<fork::ForkPoint> {
        match self {
            Policy::Fork(f) => Some(f.point()),
            _ => None,
        }
    }

    /// Use the system prompt of an action space (the model policy; a recorded run needs none).
    pub fn set_action_space(&mut self, space: crate::action::ActionSpace) {
        match self {
            Policy::Llm(l) => l.system = system_prompt(space),
            Policy::Fork(f) => f.model_mut().system = system_prompt(space),
            Policy::Trajectory(_) => {}
        }
    }

    /// Re-executing a recorded run: where that run stopped without an answer (a `--task-timeout`, an
    /// error, an early stop or the step budget), step `step` is past its last reply, and the
    /// re-execution ends there the same way. None for the model, and for steps the run has.
    pub fn recorded_end(&self, step: u32) -> Option<(Outcome, String)> {
        let Policy::Trajectory(t) = self else { return None };
        let o = &t.original;
        if (step as usize) <= o.steps.len() || o.outcome == Outcome::Answered {
            return None;
        }
        let why = o.error.clone().unwrap_or_else(|| format!("{:?}", o.outcome));
        Some((o.outcome, format!("the re-executed run stopped here after {} step(s): {why}", o.steps.len())))
    }

    /// `llm:MODEL` or `trajectory:RUN`.
    pub fn describe(&self) -> String {
        match self {
            Policy::Llm(l) => format!("llm:{}", l.llm.config().model),
            Policy::Trajectory(t) => format!("trajectory:{}", t.run.display()),
            Policy::Fork(f) => f.describe(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajectory::llm::LlmConfig;

    fn policy_with_turns(n: usize) -> LlmPolicy {
        let llm = Llm::new(LlmConfig::new("http://127.0.0.1:9/v1", "m", "")).unwrap();
        let mut p = LlmPolicy::new(llm, 3);
        for i in 0..n {
            p.turns.push(Turn {
                text: format!("Error {i}\n\nObservation: list {i}"),
                images: vec![vec![i as u8]],
                pinned: Vec::new(),
                reply: format!("Thought: t{i}\nAction: Wait"),
                answered: true,
            });
        }
        p
    }

    fn turn(text: &str, images: usize, pinned: usize, reply: Option<&str>) -> Turn {
        Turn {
            text: text.into(),
            images: (0..images).map(|i| vec![i as u8]).collect(),
            pinned: (0..pinned).map(|i| vec![100 + i as u8]).collect(),
            reply: reply.unwrap_or_default().into(),
            answered: reply.is_some(),
        }
    }

    /// What each message's content is: "s" a plain string, "pN" a list of parts with N images.
    fn shapes(msgs: &[Message]) -> Vec<String> {
        msgs.iter()
            .map(|m| match &m.content {
                serde_json::Value::String(_) => format!("{}:s", m.role),
                _ => format!("{}:p{}", m.role, m.image_count()),
            })
            .collect()
    }

    #[test]
    fn message_shapes_per_observation_kind() {
        // (turns, keep_images, expected shapes): text-only turns are plain strings (llama.cpp's string
        // templates drop lists of parts), images make parts, task images stay pinned, and an empty reply
        // keeps its assistant turn so roles alternate.
        let cases: Vec<(Vec<Turn>, usize, Vec<&str>)> = vec![
            (vec![turn("Observation: tree", 0, 0, None)], 3, vec!["system:s", "user:s"]),
            (vec![turn("Observation: som", 1, 0, None)], 3, vec!["system:s", "user:p1"]),
            (vec![turn("Observation: som", 1, 2, None)], 3, vec!["system:s", "user:p3"]),
            (
                vec![turn("Observation: a", 0, 0, Some("")), turn("Observation: b", 0, 0, None)],
                3,
                vec!["system:s", "user:s", "assistant:s", "user:s"],
            ),
            (
                vec![
                    turn("Task\nObservation: a", 1, 1, Some("Action: Wait")),
                    turn("Observation: b", 1, 0, Some("")),
                    turn("Observation: c", 1, 0, None),
                ],
                1,
                vec!["system:s", "user:p1", "assistant:s", "user:s", "assistant:s", "user:p1"],
            ),
        ];
        for (i, (turns, keep, want)) in cases.into_iter().enumerate() {
            let llm = Llm::new(LlmConfig::new("http://127.0.0.1:9/v1", "m", "")).unwrap();
            let mut p = LlmPolicy::new(llm, keep);
            p.turns = turns;
            let msgs = p.messages();
            assert_eq!(shapes(&msgs), want, "case {i}");
            let roles: Vec<&str> = msgs.iter().skip(1).map(|m| m.role.as_str()).collect();
            assert!(roles.windows(2).all(|w| w[0] != w[1]), "case {i}: roles must alternate: {roles:?}");
        }
    }

    #[test]
    fn context_keeps_three_screenshots_and_every_reply() {
        for (turns, images) in [(1, 1), (3, 3), (5, 3), (15, 3)] {
            let msgs = policy_with_turns(turns).messages();
            assert_eq!(msgs.iter().map(Message::image_count).sum::<usize>(), images, "{turns} turns");
            let replies = msgs.iter().filter(|m| m.role == "assistant").count();
            assert_eq!(replies, turns);
            assert_eq!(msgs[0].role, "system");
            // Old turns keep their error text but lose their element list.
            if turns > 3 {
                let old = msgs[1].content.as_str().unwrap();
                assert!(
                    old.starts_with("Error 0") && old.contains("omitted") && !old.contains("list 0"),
                    "{old}"
                );
            }
        }
    }
}
