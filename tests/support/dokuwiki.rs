//! A real web application nobody here wrote: DokuWiki from Debian (`dokuwiki`, file-based), served by
//! nginx over TLS (a throwaway CA, `wiki.test`) and php-fpm, both run as this test's children on loopback
//! with their own configuration, the wiki's code copied from /usr/share/dokuwiki and its configuration and
//! data private to the test. Pages are seeded with DokuWiki's own tools (`bin/dwpage.php`, then
//! `bin/indexer.php` for search). Missing packages are an error that says how to install them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::origin_tls;

pub(crate) const WIKI_USER: &str = "alice";
pub(crate) const WIKI_PASSWORD: &str = "kettle-42";

/// The running wiki; its servers are stopped on drop.
pub(crate) struct DokuWiki {
    /// nginx's TLS address.
    pub addr: SocketAddr,
    /// The origin's CA (PEM file), for `--upstream-ca`.
    pub ca_file: PathBuf,
    nginx: Option<Child>,
    php: Option<Child>,
}

fn need(bin: &str) -> PathBuf {
    let p = PathBuf::from(bin);
    assert!(
        p.exists(),
        "{bin} is missing: apt-get install -y dokuwiki nginx-light php-fpm (README's test command does it)"
    );
    p
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// PHP's own bcrypt, as DokuWiki's plain auth stores it.
fn password_hash(php: &Path, password: &str) -> String {
    let out = Command::new(php)
        .args(["-r", &format!("echo password_hash('{password}', PASSWORD_BCRYPT);")])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

impl DokuWiki {
    /// Set up a private wiki under `dir` with `pages` (id, wiki text) and start php-fpm and nginx.
    pub(crate) fn start(dir: &Path, pages: &[(&str, &str)]) -> DokuWiki {
        let php = need("/usr/bin/php");
        let fpm = need("/usr/sbin/php-fpm8.2");
        let nginx_bin = need("/usr/sbin/nginx");
        need("/usr/share/dokuwiki/doku.php");
        let root = dir.join("wiki");
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        let code = root.join("dokuwiki");
        run(Command::new("cp").args(["-aL", "/usr/share/dokuwiki"]).arg(&code));
        let conf = root.join("conf");
        run(Command::new("cp").args(["-aL", "/etc/dokuwiki"]).arg(&conf));
        let data = root.join("data");
        run(Command::new("cp").args(["-aL", "/var/lib/dokuwiki/data"]).arg(&data));
        // This copy reads its own configuration, not /etc/dokuwiki.
        std::fs::write(
            code.join("inc/preload.php"),
            format!("<?php\nif(!defined('DOKU_CONF')) define('DOKU_CONF', '{}/');\n", conf.display()),
        )
        .unwrap();
        std::fs::write(
            conf.join("local.php"),
            format!(
                "<?php\n$conf['title'] = 'Test Wiki';\n$conf['savedir'] = '{}';\n$conf['useacl'] = 1;\n\
                 $conf['superuser'] = '@admin';\n$conf['updatecheck'] = 0;\n$conf['userewrite'] = 0;\n\
                 $conf['dnslookups'] = 0;\n$conf['license'] = '0';\n$conf['baseurl'] = 'https://wiki.test';\n",
                data.display()
            ),
        )
        .unwrap();
        std::fs::write(
            conf.join("users.auth.php"),
            format!(
                "# users\n{WIKI_USER}:{}:Alice Example:alice@wiki.test:admin,user\n",
                password_hash(&php, WIKI_PASSWORD)
            ),
        )
        .unwrap();
        std::fs::write(conf.join("acl.auth.php"), "# acl\n*\t@ALL\t1\n*\t@user\t8\n").unwrap();
        for (id, text) in pages {
            let file = root.join("tmp").join(format!("{id}.txt"));
            std::fs::write(&file, text).unwrap();
            run(Command::new(&php)
                .arg(code.join("bin/dwpage.php"))
                .args(["-u", WIKI_USER, "commit", "-m", "seeded"])
                .arg(&file)
                .arg(id));
        }
        run(Command::new(&php).arg(code.join("bin/indexer.php")).arg("-c"));
        run(Command::new(&php).arg(code.join("bin/indexer.php")).arg("-q"));

        let tls = origin_tls(&["wiki.test"], &[b"http/1.1"]);
        let (cert, key, ca_file) = (root.join("cert.pem"), root.join("key.pem"), root.join("ca.pem"));
        std::fs::write(&cert, &tls.leaf_pem).unwrap();
        std::fs::write(&key, &tls.key_pem).unwrap();
        std::fs::write(&ca_file, &tls.ca_pem).unwrap();

        let sock = root.join("php.sock");
        let fpm_conf = root.join("php-fpm.conf");
        std::fs::write(
            &fpm_conf,
            format!(
                "[global]\npid = {r}/php-fpm.pid\nerror_log = {r}/php-fpm.log\ndaemonize = no\n\
                 [wiki]\nuser = root\ngroup = root\nlisten = {s}\npm = static\npm.max_children = 4\n\
                 catch_workers_output = yes\n",
                r = root.display(),
                s = sock.display()
            ),
        )
        .unwrap();
        let php_child = Command::new(&fpm)
            .args(["-F", "-R", "-y"])
            .arg(&fpm_conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();

        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let nginx_conf = root.join("nginx.conf");
        let t = root.join("tmp").display().to_string();
        std::fs::write(
            &nginx_conf,
            format!(
                "daemon off;\nmaster_process off;\npid {r}/nginx.pid;\nerror_log {r}/nginx-error.log;\nevents {{}}\nhttp {{\n\
                 include /etc/nginx/mime.types;\naccess_log off;\nclient_body_temp_path {t}/body;\n\
                 fastcgi_temp_path {t}/fastcgi;\nproxy_temp_path {t}/proxy;\nuwsgi_temp_path {t}/uwsgi;\n\
                 scgi_temp_path {t}/scgi;\nserver {{\nlisten {addr} ssl;\nserver_name wiki.test;\n\
                 ssl_certificate {cert};\nssl_certificate_key {key};\nroot {code};\nindex doku.php;\n\
                 location ~ /(conf|bin|inc|vendor|data)/ {{ deny all; }}\n\
                 location ~ \\.php$ {{\ninclude /etc/nginx/fastcgi_params;\n\
                 fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\nfastcgi_param HTTPS on;\n\
                 fastcgi_pass unix:{sock};\n}}\n}}\n}}\n",
                r = root.display(),
                cert = cert.display(),
                key = key.display(),
                code = code.display(),
                sock = sock.display(),
            ),
        )
        .unwrap();
        let nginx = Command::new(&nginx_bin)
            .arg("-c")
            .arg(&nginx_conf)
            .arg("-p")
            .arg(&root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut wiki = DokuWiki { addr, ca_file, nginx: Some(nginx), php: Some(php_child) };
        // Both servers up: nginx listening and php-fpm's socket present (bounded wait on their own signs).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(addr).is_err() || !sock.exists() {
            for (name, c) in [("nginx", &mut wiki.nginx), ("php-fpm", &mut wiki.php)] {
                if let Some(status) = c.as_mut().and_then(|c| c.try_wait().unwrap()) {
                    panic!(
                        "{name} exited ({status}): {}{}",
                        std::fs::read_to_string(root.join("nginx-error.log")).unwrap_or_default(),
                        std::fs::read_to_string(root.join("php-fpm.log")).unwrap_or_default()
                    );
                }
            }
            assert!(std::time::Instant::now() < deadline, "the wiki's servers did not start");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        wiki
    }

    /// Stop nginx and php-fpm (the app is gone: only a snapshot can answer now).
    pub(crate) fn stop(&mut self) {
        // SIGTERM: php-fpm's master stops its workers (a SIGKILL would orphan them, still serving).
        for c in [self.nginx.take(), self.php.take()].into_iter().flatten() {
            let mut c = c;
            let _ = Command::new("kill").args(["-TERM", &c.id().to_string()]).status();
            let _ = c.wait();
        }
    }
}

impl Drop for DokuWiki {
    fn drop(&mut self) {
        self.stop();
    }
}
