//! What `webfreeze run` decides about a task list before any browser starts: which tasks run
//! ([`task_list`]), what to tell the user about them ([`task_notes`]) and whether a fork can start where
//! it is asked to ([`check_fork`]). The binary parses the command line and prints; these decide.

use std::path::Path;

use agent::action::ActionSpace;
use agent::tasks::Task;
use trajectory::RunDir;

/// A task list as `run` is asked for it.
pub struct TaskListRequest<'a> {
    /// The task file (or directory of WebArena configs).
    pub path: &'a Path,
    /// `--site` and `--sites-file`.
    pub sites: &'a agent::tasks::Sites,
    /// Reference answers given beside the file (`--reference-file`), by task id: the contamination check
    /// looks for them too.
    pub reference_answers: &'a std::collections::HashMap<String, String>,
    /// `--task-filter`.
    pub filter: Option<&'a str>,
}

/// Why a run has no task list.
#[derive(Debug, thiserror::Error)]
pub enum TaskListError {
    /// The file cannot be read as any benchmark's.
    #[error(transparent)]
    Tasks(#[from] agent::tasks::TaskError),
    /// Nothing is left to run.
    #[error("no tasks to run in {0} (check --task-filter)")]
    Empty(String),
}

/// The tasks a run runs: read (the benchmark sniffed), given their reference answers, filtered; an empty
/// list is an error.
pub fn task_list(r: &TaskListRequest<'_>) -> Result<Vec<Task>, TaskListError> {
    let mut tasks = agent::tasks::load_with_sites(r.path, r.sites)?;
    for t in &mut tasks {
        if let Some(a) = r.reference_answers.get(&t.id) {
            t.setup.reference_answers.push(a.clone());
        }
    }
    if let Some(re) = r.filter {
        tasks = agent::tasks::filter(tasks, re)?;
    }
    if tasks.is_empty() {
        return Err(TaskListError::Empty(r.path.display().to_string()));
    }
    Ok(tasks)
}

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
    fn a_task_list_is_read_given_its_answers_and_filtered() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.jsonl");
        std::fs::write(
            &f,
            "{\"web_name\": \"S\", \"id\": \"a\", \"ques\": \"q\", \"web\": \"https://a.test/\"}\n{\"web_name\": \"S\", \"id\": \"b\", \"ques\": \"q\", \"web\": \"https://a.test/\"}\n",
        )
        .unwrap();
        let sites = agent::tasks::Sites::default();
        let answers = std::collections::HashMap::from([("b".to_string(), "42".to_string())]);
        let r = |filter| TaskListRequest { path: &f, sites: &sites, reference_answers: &answers, filter };
        let all = task_list(&r(None)).unwrap();
        assert_eq!(all[1].setup.reference_answers, ["42"]);
        assert_eq!(task_list(&r(Some("^a$"))).unwrap().len(), 1);
        assert!(matches!(task_list(&r(Some("^z$"))), Err(TaskListError::Empty(_))));
        assert!(matches!(task_list(&r(Some("("))), Err(TaskListError::Tasks(_))));
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
