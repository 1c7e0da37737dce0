//! A second real application nobody here wrote, with forms and a database: MediaWiki from Debian
//! (`mediawiki`, on SQLite), served like [`crate::dokuwiki`] by nginx over TLS (`mw.test`, a throwaway CA) and
//! php-fpm on loopback ([`crate::php_site`]). The code is Debian's, read in place (/usr/share/mediawiki);
//! everything that changes is private to the caller's directory: the installer's `LocalSettings.php` (named
//! to php-fpm through `auto_prepend_file`, so /etc/mediawiki is never read), the SQLite database, caches.
//! Installed with MediaWiki's own installer (`maintenance/install.php`), pages seeded with its own
//! `maintenance/edit.php`. Anyone may edit (MediaWiki's default), as on a public wiki.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::php_site::{io, need, run, write, AppError, PhpSite, PhpSiteSpec};

const APP: &str = "MediaWiki";
const PACKAGES: &str = "mediawiki php8.2-sqlite3 php8.2-mbstring nginx-light php-fpm";
const CODE: &str = "/usr/share/mediawiki";

/// The wiki's host.
pub const HOST: &str = "mw.test";
/// Its administrator (created by the installer).
pub const ADMIN: &str = "Admin";

/// The running wiki; its servers are stopped on drop.
pub struct MediaWiki {
    /// nginx's TLS address.
    pub addr: SocketAddr,
    /// The origin's CA (PEM file), for `--upstream-ca`.
    pub ca_file: PathBuf,
    site: PhpSite,
}

impl MediaWiki {
    /// Install a private wiki under `dir` with `pages` (title, wikitext) and start php-fpm and nginx.
    pub fn start(dir: &Path, pages: &[(&str, &str)]) -> Result<MediaWiki, AppError> {
        let php = need(APP, "/usr/bin/php", PACKAGES)?;
        need(APP, &format!("{CODE}/maintenance/install.php"), PACKAGES)?;
        let root = dir.join("mediawiki");
        let data = root.join("data");
        let cache = root.join("cache");
        for d in [&data, &cache] {
            std::fs::create_dir_all(d).map_err(io(APP, d.display()))?;
        }
        let settings = root.join("LocalSettings.php");
        let _ = std::fs::remove_file(&settings);
        run(
            APP,
            Command::new(&php)
                .current_dir(CODE)
                .arg("maintenance/install.php")
                .arg("--dbtype=sqlite")
                .arg(format!("--dbpath={}", data.display()))
                .arg("--dbname=wiki")
                .arg(format!("--server=https://{HOST}"))
                .arg("--scriptpath=")
                .arg(format!("--confpath={}", root.display()))
                .arg("--pass=kettle-42-long-password")
                .arg("--skins=Vector")
                .args(["Test Wiki", ADMIN]),
        )?;
        // Deterministic enough to record and replay: no jobs at the end of page views, no mail, files cached
        // in the private directory.
        let mut f =
            std::fs::OpenOptions::new().append(true).open(&settings).map_err(io(APP, settings.display()))?;
        write!(
            f,
            "\n$wgJobRunRate = 0;\n$wgEnableEmail = false;\n$wgCacheDirectory = \"{}\";\n\
             $wgGroupPermissions['*']['edit'] = true;\n",
            cache.display()
        )
        .map_err(io(APP, settings.display()))?;
        drop(f);
        for (title, text) in pages {
            let mut child = Command::new(&php)
                .current_dir(CODE)
                .arg("maintenance/edit.php")
                .arg("--conf")
                .arg(&settings)
                .args(["-u", ADMIN, "-s", "seeded"])
                .arg(title)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(io(APP, "maintenance/edit.php"))?;
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(text.as_bytes()).map_err(io(APP, "maintenance/edit.php's input"))?;
            }
            let out = child.wait_with_output().map_err(io(APP, "maintenance/edit.php"))?;
            if !out.status.success() {
                return Err(AppError {
                    app: APP,
                    why: format!(
                        "seeding {title}: {}{}",
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    ),
                });
            }
        }
        let prepend = root.join("prepend.php");
        write(
            APP,
            &prepend,
            format!(
                "<?php\nif (!defined('MW_CONFIG_FILE')) define('MW_CONFIG_FILE', '{}');\n",
                settings.display()
            ),
        )?;
        let site = PhpSite::start(&PhpSiteSpec {
            app: APP,
            host: HOST,
            root: &root,
            code: Path::new(CODE),
            index: "index.php",
            deny: "^/(maintenance|includes|vendor|cache|languages|tests|mw-config)/",
            prepend: Some(&prepend),
            packages: PACKAGES,
            front_controller: None,
        })?;
        Ok(MediaWiki { addr: site.addr, ca_file: site.ca_file.clone(), site })
    }

    /// Stop nginx and php-fpm (the app is gone: only a snapshot can answer now).
    pub fn stop(&mut self) {
        self.site.stop();
    }
}
