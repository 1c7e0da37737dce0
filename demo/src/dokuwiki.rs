//! A real web application nobody here wrote, for the suite and the benches: DokuWiki from Debian
//! (`dokuwiki`, file-based), served by nginx over TLS (a throwaway CA, `wiki.test`) and php-fpm, both run as
//! children of the caller on loopback with their own configuration, the wiki's code copied from
//! /usr/share/dokuwiki and its configuration and data private to the caller's directory. Pages are seeded
//! with DokuWiki's own tools (`bin/dwpage.php`, then `bin/indexer.php` for search). Missing packages are an
//! error that says how to install them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::php_site::{need, run, write, AppError, PhpSite, PhpSiteSpec};

/// The wiki's account (an admin), as the tests log in.
pub const WIKI_USER: &str = "alice";
/// Its password.
pub const WIKI_PASSWORD: &str = "kettle-42";

/// Why the wiki could not be started.
pub type WikiError = AppError;

type Result<T> = std::result::Result<T, WikiError>;

const APP: &str = "DokuWiki";
const PACKAGES: &str = "dokuwiki nginx-light php-fpm";

/// The running wiki; its servers are stopped on drop.
pub struct DokuWiki {
    /// nginx's TLS address.
    pub addr: SocketAddr,
    /// The origin's CA (PEM file), for `--upstream-ca`.
    pub ca_file: PathBuf,
    site: PhpSite,
}

/// PHP's own bcrypt, as DokuWiki's plain auth stores it.
fn password_hash(php: &Path, password: &str) -> Result<String> {
    let out = Command::new(php)
        .args(["-r", &format!("echo password_hash('{password}', PASSWORD_BCRYPT);")])
        .output()
        .map_err(crate::php_site::io(APP, "php"))?;
    if !out.status.success() {
        return Err(AppError { app: APP, why: "php could not hash the password".into() });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl DokuWiki {
    /// Set up a private wiki under `dir` with `pages` (id, wiki text) and start php-fpm and nginx.
    pub fn start(dir: &Path, pages: &[(&str, &str)]) -> Result<DokuWiki> {
        Self::start_with(dir, pages, &[])
    }

    /// [`DokuWiki::start`] with further `$conf` settings (name, PHP literal), e.g. `("breadcrumbs", "0")`.
    pub fn start_with(dir: &Path, pages: &[(&str, &str)], conf_extra: &[(&str, &str)]) -> Result<DokuWiki> {
        let php = need(APP, "/usr/bin/php", PACKAGES)?;
        need(APP, "/usr/share/dokuwiki/doku.php", PACKAGES)?;
        let root = dir.join("wiki");
        std::fs::create_dir_all(root.join("tmp")).map_err(crate::php_site::io(APP, root.display()))?;
        let code = root.join("dokuwiki");
        run(APP, Command::new("cp").args(["-aL", "/usr/share/dokuwiki"]).arg(&code))?;
        let conf = root.join("conf");
        run(APP, Command::new("cp").args(["-aL", "/etc/dokuwiki"]).arg(&conf))?;
        let data = root.join("data");
        run(APP, Command::new("cp").args(["-aL", "/var/lib/dokuwiki/data"]).arg(&data))?;
        // This copy reads its own configuration, not /etc/dokuwiki.
        write(
            APP,
            &code.join("inc/preload.php"),
            format!("<?php\nif(!defined('DOKU_CONF')) define('DOKU_CONF', '{}/');\n", conf.display()),
        )?;
        write(
            APP,
            &conf.join("local.php"),
            format!(
                "<?php\n$conf['title'] = 'Test Wiki';\n$conf['savedir'] = '{}';\n$conf['useacl'] = 1;\n\
                 $conf['superuser'] = '@admin';\n$conf['updatecheck'] = 0;\n$conf['userewrite'] = 0;\n\
                 $conf['dnslookups'] = 0;\n$conf['license'] = '0';\n$conf['baseurl'] = 'https://wiki.test';\n{}",
                data.display(),
                conf_extra.iter().map(|(k, v)| format!("$conf['{k}'] = {v};\n")).collect::<String>()
            ),
        )?;
        write(
            APP,
            &conf.join("users.auth.php"),
            format!(
                "# users\n{WIKI_USER}:{}:Alice Example:alice@wiki.test:admin,user\n",
                password_hash(&php, WIKI_PASSWORD)?
            ),
        )?;
        write(APP, &conf.join("acl.auth.php"), "# acl\n*\t@ALL\t1\n*\t@user\t8\n")?;
        for (id, text) in pages {
            let file = root.join("tmp").join(format!("{id}.txt"));
            write(APP, &file, text)?;
            run(
                APP,
                Command::new(&php)
                    .arg(code.join("bin/dwpage.php"))
                    .args(["-u", WIKI_USER, "commit", "-m", "seeded"])
                    .arg(&file)
                    .arg(id),
            )?;
        }
        run(APP, Command::new(&php).arg(code.join("bin/indexer.php")).arg("-c"))?;
        run(APP, Command::new(&php).arg(code.join("bin/indexer.php")).arg("-q"))?;

        let site = PhpSite::start(&PhpSiteSpec {
            app: APP,
            host: "wiki.test",
            root: &root,
            code: &code,
            index: "doku.php",
            deny: "/(conf|bin|inc|vendor|data)/",
            prepend: None,
            packages: PACKAGES,
            front_controller: None,
        })?;
        Ok(DokuWiki { addr: site.addr, ca_file: site.ca_file.clone(), site })
    }

    /// Stop nginx and php-fpm (the app is gone: only a snapshot can answer now).
    pub fn stop(&mut self) {
        self.site.stop();
    }
}
