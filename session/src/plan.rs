//! What `webfreeze run` decides about a task list before any browser starts: what to tell the user about
//! it ([`task_notes`]) and whether a fork can start where it is asked to ([`check_fork`]). The binary
//! parses the command line and prints; these decide.

use std::path::Path;

use agent::action::ActionSpace;
use agent::tasks::Task;
use trajectory::RunDir;

/// What a run should say about its task list before it starts, one line each: spec parts nobody scores
/// (`warning: ...`), a benchmark run outside its own action space, tasks that open several pages in an
/// action space with one tab (`note: ...`).
pub fn task_notes(tasks: &[Task], action_space: ActionSpace) -> Vec<String> {
    let mut out = Vec::new();
    let unknown: Vec<String> = tasks
        .iter()
        .filter_map(|t| {
            let parts = t.setup.eval.as_ref()?.unknown_parts();
            (!parts.is_empty()).then(|| format!("task {}: {}", t.id, parts.join(", ")))
        })
        .collect();
    if !unknown.is_empty() {
        out.push(format!(
            "warning: {} task(s) have eval spec parts this version does not know; they are kept and not scored \
             (eval.json lists them per task): {}",
            unknown.len(),
            unknown.join("; ")
        ));
    }
    // A benchmark's scores compare with its own harness's in the action space it gives its agents.
    if let Some(b) = tasks.first().map(|t| t.benchmark) {
        let native = agent::tasks::native_action_space(b);
        if native != action_space {
            out.push(format!(
                "note: {b} tasks run here with the {action_space} action space; their own harness gives its \
                 agents {native}'s (--action-space {native})"
            ));
        }
    }
    let multi_tab = tasks.iter().filter(|t| t.setup.start_urls.len() > 1).count();
    if multi_tab > 0 && action_space == ActionSpace::WebVoyager {
        out.push(format!(
            "note: {multi_tab} task(s) start on several pages (' |AND| '); only the first is opened (use \
             --action-space webarena for tabs)"
        ));
    }
    out
}

/// Why a run cannot fork its tasks where it is asked to.
#[derive(Debug, thiserror::Error)]
#[error(
    "--fork-at {at}: {run} cannot fork there: {}; fork earlier or choose the tasks with --task-filter",
    short.join(", ")
)]
pub struct ForkTooLate {
    /// The step asked for.
    pub at: u32,
    /// The forked run.
    pub run: String,
    /// The tasks that cannot (`id (why)`).
    pub short: Vec<String>,
}

/// `--fork-at N`: every task has a recorded trajectory with at least N steps in the forked run.
pub fn check_fork(run: &Path, at: u32, tasks: &[Task]) -> Result<(), ForkTooLate> {
    let mut short = Vec::new();
    for t in tasks {
        match RunDir::new(run).task(&t.id).read_trajectory() {
            Ok(Some(tr)) if tr.steps.len() >= at as usize => {}
            Ok(Some(tr)) => short.push(format!("{} ({} step(s))", t.id, tr.steps.len())),
            Ok(None) => short.push(format!("{} (not in that run)", t.id)),
            Err(e) => short.push(format!("{} ({e})", t.id)),
        }
    }
    if short.is_empty() {
        return Ok(());
    }
    Err(ForkTooLate { at, run: run.display().to_string(), short })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trajectory::Benchmark;

    fn task(id: &str, benchmark: Benchmark, pages: usize) -> Task {
        let mut t = Task {
            web_name: "S".into(),
            id: id.into(),
            question: "q".into(),
            start_url: "https://a.test/".into(),
            benchmark,
            setup: Default::default(),
        };
        t.setup.start_urls = vec!["https://a.test/".into(); pages];
        t
    }

    #[test]
    fn notes_name_what_the_run_will_not_do_as_asked() {
        // (tasks, action space, what the notes say)
        let cases: Vec<(Vec<Task>, ActionSpace, Vec<&str>)> = vec![
            (vec![task("a", Benchmark::WebVoyager, 1)], ActionSpace::WebVoyager, vec![]),
            (vec![task("a", Benchmark::WebArena, 1)], ActionSpace::WebArena, vec![]),
            (
                vec![task("a", Benchmark::WebArena, 1)],
                ActionSpace::WebVoyager,
                vec!["webarena tasks run here with the webvoyager"],
            ),
            (
                vec![task("a", Benchmark::WebArena, 2)],
                ActionSpace::WebVoyager,
                vec!["webarena tasks", "1 task(s) start on several pages"],
            ),
            (
                vec![task("a", Benchmark::AssistantBench, 1)],
                ActionSpace::WebArena,
                vec!["assistantbench tasks run here with the webarena"],
            ),
        ];
        for (tasks, space, want) in cases {
            let notes = task_notes(&tasks, space);
            assert_eq!(notes.len(), want.len(), "{notes:?}");
            for (n, w) in notes.iter().zip(want) {
                assert!(n.contains(w), "{n} lacks {w}");
            }
        }
    }

    #[test]
    fn a_fork_past_a_recorded_trajectory_is_refused_by_task() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_fork(dir.path(), 2, &[task("gone", Benchmark::WebVoyager, 1)]).unwrap_err();
        assert_eq!(e.short, ["gone (not in that run)"]);
        assert!(e.to_string().contains("--fork-at 2"), "{e}");
        assert!(check_fork(dir.path(), 2, &[]).is_ok());
    }
}
