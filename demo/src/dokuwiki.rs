//! A real web application nobody here wrote, for the suite and the benches: DokuWiki from Debian
//! (`dokuwiki`, file-based), served by nginx over TLS (a throwaway CA, `wiki.test`) and php-fpm, both run as
//! children of the caller on loopback with their own configuration, the wiki's code copied from
//! /usr/share/dokuwiki and its configuration and data private to the caller's directory. Pages are seeded
//! with DokuWiki's own tools (`bin/dwpage.php`, then `bin/indexer.php` for search). Missing packages are an
//! error that says how to install them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The wiki's account (an admin), as the tests log in.
pub const WIKI_USER: &str = "alice";
/// Its password.
pub const WIKI_PASSWORD: &str = "kettle-42";

/// Why the wiki could not be started.
#[derive(Debug, thiserror::Error)]
#[error("DokuWiki: {0}")]
pub struct WikiError(String);

type Result<T> = std::result::Result<T, WikiError>;

fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> WikiError {
    move |e| WikiError(format!("{what}: {e}"))
}

/// The running wiki; its servers are stopped on drop.
pub struct DokuWiki {
    /// nginx's TLS address.
    pub addr: SocketAddr,
    /// The origin's CA (PEM file), for `--upstream-ca`.
    pub ca_file: PathBuf,
    nginx: Option<Child>,
    php: Option<Child>,
}

fn need(bin: &str) -> Result<PathBuf> {
    let p = PathBuf::from(bin);
    if !p.exists() {
        return Err(WikiError(format!(
            "{bin} is missing: apt-get install -y dokuwiki nginx-light php-fpm (README's test command does it)"
        )));
    }
    Ok(p)
}

fn run(cmd: &mut Command) -> Result<()> {
    let out = cmd.output().map_err(io(format!("{cmd:?}")))?;
    if !out.status.success() {
        return Err(WikiError(format!(
            "{cmd:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(())
}

fn write(path: &Path, text: impl AsRef<[u8]>) -> Result<()> {
    std::fs::write(path, text).map_err(io(path.display()))
}

/// PHP's own bcrypt, as DokuWiki's plain auth stores it.
fn password_hash(php: &Path, password: &str) -> Result<String> {
    let out = Command::new(php)
        .args(["-r", &format!("echo password_hash('{password}', PASSWORD_BCRYPT);")])
        .output()
        .map_err(io("php"))?;
    if !out.status.success() {
        return Err(WikiError("php could not hash the password".into()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A throwaway CA and a leaf for `wiki.test` (PEM: CA, leaf, leaf key).
fn wiki_tls() -> Result<(String, String, String)> {
    throwaway_tls("wiki.test").map_err(|e| WikiError(format!("certificate: {e}")))
}

/// A throwaway CA and a leaf for `host` and 127.0.0.1 (PEM: CA, leaf, leaf key).
pub(crate) fn throwaway_tls(host: &str) -> std::result::Result<(String, String, String), rcgen::Error> {
    let e = |e: rcgen::Error| e;
    let ca_key = rcgen::KeyPair::generate().map_err(e)?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(e)?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, format!("throwaway {host} CA"));
    ca_params.key_usages =
        vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca_params.self_signed(&ca_key).map_err(e)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate().map_err(e)?;
    let mut leaf = rcgen::CertificateParams::new(vec![host.to_string()]).map_err(e)?;
    leaf.subject_alt_names.push(rcgen::SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
    let leaf = leaf.signed_by(&leaf_key, &issuer).map_err(e)?;
    Ok((ca_cert.pem(), leaf.pem(), leaf_key.serialize_pem()))
}

impl DokuWiki {
    /// Set up a private wiki under `dir` with `pages` (id, wiki text) and start php-fpm and nginx.
    pub fn start(dir: &Path, pages: &[(&str, &str)]) -> Result<DokuWiki> {
        Self::start_with(dir, pages, &[])
    }

    /// [`DokuWiki::start`] with further `$conf` settings (name, PHP literal), e.g. `("breadcrumbs", "0")`.
    pub fn start_with(dir: &Path, pages: &[(&str, &str)], conf_extra: &[(&str, &str)]) -> Result<DokuWiki> {
        let php = need("/usr/bin/php")?;
        let fpm = need("/usr/sbin/php-fpm8.2")?;
        let nginx_bin = need("/usr/sbin/nginx")?;
        need("/usr/share/dokuwiki/doku.php")?;
        let root = dir.join("wiki");
        std::fs::create_dir_all(root.join("tmp")).map_err(io(root.display()))?;
        let code = root.join("dokuwiki");
        run(Command::new("cp").args(["-aL", "/usr/share/dokuwiki"]).arg(&code))?;
        let conf = root.join("conf");
        run(Command::new("cp").args(["-aL", "/etc/dokuwiki"]).arg(&conf))?;
        let data = root.join("data");
        run(Command::new("cp").args(["-aL", "/var/lib/dokuwiki/data"]).arg(&data))?;
        // This copy reads its own configuration, not /etc/dokuwiki.
        write(
            &code.join("inc/preload.php"),
            format!("<?php\nif(!defined('DOKU_CONF')) define('DOKU_CONF', '{}/');\n", conf.display()),
        )?;
        write(
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
            &conf.join("users.auth.php"),
            format!(
                "# users\n{WIKI_USER}:{}:Alice Example:alice@wiki.test:admin,user\n",
                password_hash(&php, WIKI_PASSWORD)?
            ),
        )?;
        write(&conf.join("acl.auth.php"), "# acl\n*\t@ALL\t1\n*\t@user\t8\n")?;
        for (id, text) in pages {
            let file = root.join("tmp").join(format!("{id}.txt"));
            write(&file, text)?;
            run(Command::new(&php)
                .arg(code.join("bin/dwpage.php"))
                .args(["-u", WIKI_USER, "commit", "-m", "seeded"])
                .arg(&file)
                .arg(id))?;
        }
        run(Command::new(&php).arg(code.join("bin/indexer.php")).arg("-c"))?;
        run(Command::new(&php).arg(code.join("bin/indexer.php")).arg("-q"))?;

        let (ca_pem, leaf_pem, key_pem) = wiki_tls()?;
        let (cert, key, ca_file) = (root.join("cert.pem"), root.join("key.pem"), root.join("ca.pem"));
        write(&cert, leaf_pem)?;
        write(&key, key_pem)?;
        write(&ca_file, ca_pem)?;

        let sock = root.join("php.sock");
        let fpm_conf = root.join("php-fpm.conf");
        write(
            &fpm_conf,
            format!(
                "[global]\npid = {r}/php-fpm.pid\nerror_log = {r}/php-fpm.log\ndaemonize = no\n\
                 [wiki]\nuser = root\ngroup = root\nlisten = {s}\npm = static\npm.max_children = 4\n\
                 catch_workers_output = yes\n",
                r = root.display(),
                s = sock.display()
            ),
        )?;
        let php_child = Command::new(&fpm)
            .args(["-F", "-R", "-y"])
            .arg(&fpm_conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(io("php-fpm"))?;
        let mut wiki = DokuWiki {
            addr: "127.0.0.1:0".parse().map_err(|_| WikiError("addr".into()))?,
            ca_file,
            nginx: None,
            php: Some(php_child),
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(io("a free loopback port"))?
            .port();
        wiki.addr = SocketAddr::from(([127, 0, 0, 1], port));
        let addr = wiki.addr;
        let nginx_conf = root.join("nginx.conf");
        let t = root.join("tmp").display().to_string();
        write(
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
        )?;
        wiki.nginx = Some(
            Command::new(&nginx_bin)
                .arg("-c")
                .arg(&nginx_conf)
                .arg("-p")
                .arg(&root)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(io("nginx"))?,
        );
        // Both servers up: nginx listening and php-fpm's socket present (bounded wait on their own signs).
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(addr).is_err() || !sock.exists() {
            for (name, c) in [("nginx", &mut wiki.nginx), ("php-fpm", &mut wiki.php)] {
                if let Some(status) = c.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                    return Err(WikiError(format!(
                        "{name} exited ({status}): {}{}",
                        std::fs::read_to_string(root.join("nginx-error.log")).unwrap_or_default(),
                        std::fs::read_to_string(root.join("php-fpm.log")).unwrap_or_default()
                    )));
                }
            }
            if Instant::now() > deadline {
                return Err(WikiError("the wiki's servers did not start within 20 s".into()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(wiki)
    }

    /// Stop nginx and php-fpm (the app is gone: only a snapshot can answer now).
    pub fn stop(&mut self) {
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
