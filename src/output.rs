//! Human output helpers: tables, sizes, times.

/// Print rows as an aligned table with a header.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{:<w$}  ", c, w = widths[i]));
            }
        }
        println!("{}", s.trim_end());
    };
    line(header.to_vec());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
}

/// 1536 -> "1.5 KiB".
pub(crate) fn bytes(n: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < U.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", U[i])
    }
}

/// Unix ms -> RFC 3339 (UTC).
pub(crate) fn time_ms(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| ms.to_string())
}

/// A progress bar on stderr (hidden when stderr is not a terminal; [`progress_line`] still prints).
pub(crate) fn progress_bar(len: u64, what: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    let style = indicatif::ProgressStyle::with_template(&format!(
        "{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {what} {{msg}}"
    ))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// A line above the progress bar, or on stderr when the bar is hidden (logs, CI).
pub(crate) fn progress_line(bar: &indicatif::ProgressBar, line: &str) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// `webfreeze run`'s progress: the plan, a line per finished task above a bar.
pub(crate) struct RunProgress {
    bar: std::sync::Mutex<Option<indicatif::ProgressBar>>,
    out: std::path::PathBuf,
}

impl RunProgress {
    pub(crate) fn new(out: &std::path::Path) -> Self {
        Self { bar: std::sync::Mutex::new(None), out: out.to_path_buf() }
    }

    fn bar(&self) -> Option<indicatif::ProgressBar> {
        self.bar.lock().ok().and_then(|b| b.clone())
    }

    /// Clear the bar and print the summary line.
    pub(crate) fn finish(&self, rf: &trajectory::RunFile) {
        if let Some(b) = self.bar() {
            b.finish_and_clear();
        }
        let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for s in rf.tasks.values() {
            *counts.entry(s.status.as_str()).or_default() += 1;
        }
        let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
        eprintln!(
            "run {}: {} ({})",
            self.out.display(),
            summary.join(", "),
            self.out.join("run.json").display()
        );
    }
}

impl session::Progress for RunProgress {
    fn start(&self, plan: &session::RunPlan) {
        if let Some(s) = plan.shard {
            eprintln!(
                "shard {s}: {} of the task list's {} task(s)",
                plan.todo + plan.skipped,
                plan.tasks_total
            );
        }
        if plan.skipped > 0 {
            eprintln!("{} task(s) already finished in {} are skipped", plan.skipped, self.out.display());
        }
        eprintln!(
            "running {} task(s) in {} mode with {} (jobs {}) into {}",
            plan.todo,
            plan.mode,
            plan.policy,
            plan.jobs,
            self.out.display()
        );
        if let Ok(mut b) = self.bar.lock() {
            *b = Some(progress_bar(plan.todo as u64, "tasks"));
        }
    }

    fn task_done(&self, t: &trajectory::Trajectory) {
        let line = format!(
            "{:<28} {:<9} {:>2} steps  {}",
            t.task_id,
            t.outcome.as_str(),
            t.steps.len(),
            // Whole (an error says what to do at its end), on one line.
            t.answer
                .as_deref()
                .or(t.error.as_deref())
                .unwrap_or("")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        );
        if let Some(b) = self.bar() {
            progress_line(&b, &line);
            b.inc(1);
        } else {
            eprintln!("{line}");
        }
    }
}

/// Run tasks with the CLI's progress display and Ctrl-C handling; exit 1 (finished tasks kept) when
/// interrupted.
pub(crate) fn run_with_progress(
    opts: session::RunOptions,
    tasks: Vec<agent::tasks::Task>,
) -> anyhow::Result<trajectory::RunFile> {
    let progress = std::sync::Arc::new(RunProgress::new(&opts.out));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let shutdown = {
        let _in_runtime = rt.enter();
        crate::serve::shutdown_signal()
    };
    let outcome = rt.block_on(session::run_tasks(opts, tasks, shutdown, progress.clone()))?;
    progress.finish(&outcome.run_file);
    if let Some(b) = outcome.browsers {
        eprintln!("{}", warm_browsers_line(&b));
    }
    if outcome.interrupted {
        return Err(session::SessionError::Interrupted.into());
    }
    Ok(outcome.run_file)
}

/// The run summary's line on its warm browsers.
fn warm_browsers_line(b: &agent::browser::PoolStats) -> String {
    format!(
        "warm browsers: {} browser process(es) started for {} task(s); replaced {} after their task budget, {} for memory, {} after a crash or timeout; at most {} MiB per browser after a task",
        b.launched,
        b.leases,
        b.recycled_tasks,
        b.recycled_memory,
        b.recycled_broken,
        b.peak_memory_kib / 1024
    )
}
