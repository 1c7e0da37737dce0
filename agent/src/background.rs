//! Browsers for work outside a task: revisiting recorded documents to explore from them (`webfreeze
//! snapshots explore`) and the crawl's browsers. Each is set up for a proxy's environment as a task's browser
//! is (the agent's settings, [`crate::runner`]) and drives exploration ([`crate::explore`]); its own room so
//! that exploration does not depend on the task runner that uses it.

use crate::explore::Revisit;

/// A browser for work outside a task (revisits, the crawl), set up for `env` like a task's, in a fresh
/// profile (removed when the guard drops).
pub(crate) async fn background_session(
    cfg: &crate::runner::AgentConfig,
    env: &crate::runner::TaskEnv,
    prefix: &str,
) -> Result<(crate::browser::Session, crate::browser::ProfileGuard), crate::browser::BrowserError> {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().map_err(|e| {
        crate::browser::BrowserError::Launch {
            path: cfg.chrome.display().to_string(),
            detail: format!("cannot create a browser profile directory: {e}"),
        }
    })?;
    let profile = crate::browser::ProfileGuard(dir);
    let bo = crate::runner::browser_options(
        cfg,
        env,
        &crate::tasks::TaskSetup::default(),
        profile.path().to_path_buf(),
    );
    let session = crate::browser::Session::launch(bo).await?;
    Ok((session, profile))
}

/// `webfreeze snapshots explore`: revisit recorded documents live in one browser (each with the cookies it
/// was recorded with) and explore from each as a recording would have, through `env`'s proxy (which files
/// everything into the exploration layer). `progress` is told each document as it is revisited.
pub async fn revisit_and_explore(
    cfg: &crate::runner::AgentConfig,
    env: &crate::runner::TaskEnv,
    docs: &[Revisit],
    opts: crate::explore::ExploreOptions,
    progress: &(dyn Fn(usize, &str) + Send + Sync),
) -> Result<crate::explore::Exploration, crate::browser::BrowserError> {
    let (session, profile) = background_session(cfg, env, "webfreeze-profile-explore-").await?;
    let mut explorer = crate::explore::Explorer::new(opts);
    for (i, d) in docs.iter().enumerate() {
        progress(i, &d.url);
        if let Some(c) = &d.cookies {
            if let Err(e) = session.set_cookies(&d.url, c).await {
                tracing::warn!("{}: {e}", d.url);
            }
        }
        if let Err(e) = session.goto(&d.url).await {
            tracing::warn!("cannot revisit {}: {e}", d.url);
            explorer.stats.failed += 1;
            continue;
        }
        let here = session.url().await.unwrap_or_else(|_| d.url.clone());
        explorer.after_observation(&session, &here).await;
    }
    session.close().await;
    drop(profile);
    Ok(explorer.stats)
}
