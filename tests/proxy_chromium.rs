//! A real Chromium loads an HTTPS page through `webfreeze proxy`, with certificate errors respected: the
//! [leaf, CA] chain is really checked against the SPKI pin, and without the pin the load fails.

use futures_util::StreamExt;

use crate::support::*;

pub(crate) async fn launch(
    proxy: std::net::SocketAddr,
    spki: Option<&str>,
    profile: &std::path::Path,
) -> (chromiumoxide::Browser, tokio::task::JoinHandle<()>) {
    launch_via(Some(proxy), spki, profile).await
}

/// Headless Chromium at 1024x768 with the agent's flags and certificate errors respected; through
/// `proxy` (loopback included) when given, else direct.
pub(crate) async fn launch_via(
    proxy: Option<std::net::SocketAddr>,
    spki: Option<&str>,
    profile: &std::path::Path,
) -> (chromiumoxide::Browser, tokio::task::JoinHandle<()>) {
    launch_env(proxy, spki, profile, &[]).await
}

/// [`launch_via`], with the browser process started with extra environment variables (a moved clock:
/// [`faketime_env`]). With variables, the browser binary itself is started, not Debian's launcher script.
pub(crate) async fn launch_env(
    proxy: Option<std::net::SocketAddr>,
    spki: Option<&str>,
    profile: &std::path::Path,
    env: &[(String, String)],
) -> (chromiumoxide::Browser, tokio::task::JoinHandle<()>) {
    use chromiumoxide::browser::BrowserConfig;
    let mut exe = chromium_path();
    let real = std::path::Path::new("/usr/lib/chromium/chromium");
    if !env.is_empty() && exe == std::path::Path::new("/usr/bin/chromium") && real.exists() {
        exe = real.to_path_buf();
    }
    let mut b = BrowserConfig::builder()
        .envs(env.iter().cloned())
        .chrome_executable(exe)
        .new_headless_mode()
        .no_sandbox()
        .respect_https_errors()
        .user_data_dir(profile)
        .window_size(1024, 768)
        .viewport(chromiumoxide::handler::viewport::Viewport {
            width: 1024,
            height: 768,
            ..Default::default()
        })
        .args(agent::browser::CHROMIUM_ARGS.iter().copied());
    if let Some(proxy) = proxy {
        b = b.arg(format!("proxy-server=http://{proxy}")).arg("proxy-bypass-list=<-loopback>");
    }
    if let Some(spki) = spki {
        b = b.arg(format!("ignore-certificate-errors-spki-list={spki}"));
    }
    let (browser, mut handler) =
        chromiumoxide::Browser::launch(b.build().unwrap()).await.expect("launch Chromium");
    let task = tokio::spawn(async move { while handler.next().await.is_some() {} });
    (browser, task)
}

pub(crate) fn spki_of(home: &std::path::Path) -> String {
    let out = run_cli(home, &["ca", "show", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["spki_sha256"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_loads_https_through_the_proxy_with_the_chain_checked() {
    let home = tempfile::tempdir().unwrap();
    let (_origin, reach) = https_origin(home.path(), "origin.test").await;
    let wf = Webfreeze::spawn_with(home.path(), &["proxy"], &reach);
    let spki = spki_of(home.path());

    let profile = tempfile::tempdir().unwrap();
    let (mut browser, task) = launch(wf.addr, Some(&spki), profile.path()).await;
    let page = browser.new_page("https://origin.test/page").await.unwrap();
    page.wait_for_navigation().await.unwrap();
    assert_eq!(page.get_title().await.unwrap().as_deref(), Some("webfreeze test page"));
    let text: String =
        page.evaluate("document.getElementById('t').textContent").await.unwrap().into_value().unwrap();
    assert_eq!(text, HELLO);
    browser.close().await.unwrap();
    let _ = browser.wait().await;
    task.abort();

    // Without the SPKI pin Chromium must reject our certificate: the page never loads.
    let profile = tempfile::tempdir().unwrap();
    let (mut browser, task) = launch(wf.addr, None, profile.path()).await;
    let title = match browser.new_page("https://origin.test/page").await {
        Ok(page) => {
            let _ = page.wait_for_navigation().await;
            page.get_title().await.ok().flatten()
        }
        Err(_) => None,
    };
    assert_ne!(title.as_deref(), Some("webfreeze test page"), "untrusted chain must not load");
    browser.close().await.unwrap();
    let _ = browser.wait().await;
    task.abort();
}
