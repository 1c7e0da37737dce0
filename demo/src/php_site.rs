//! A PHP application from Debian served on loopback the way its users serve it: nginx over TLS (a
//! throwaway CA and a leaf for the site's host) in front of php-fpm, both children of the caller with their
//! own configuration under the caller's directory. DokuWiki ([`crate::dokuwiki`]) and MediaWiki
//! ([`crate::mediawiki`]) set up their code, data and settings, then start here. Missing packages are an
//! error that says how to install them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Why an application could not be set up or started.
#[derive(Debug, thiserror::Error)]
#[error("{app}: {why}")]
pub struct AppError {
    /// The application.
    pub app: &'static str,
    /// What went wrong.
    pub why: String,
}

/// How one application is served.
pub struct PhpSiteSpec<'a> {
    /// The application's name, for errors.
    pub app: &'static str,
    /// Its host (the leaf certificate's name, nginx's `server_name`).
    pub host: &'a str,
    /// The private directory: configurations, logs, sockets, certificates.
    pub root: &'a Path,
    /// nginx's document root (the application's code).
    pub code: &'a Path,
    /// nginx's `index`.
    pub index: &'a str,
    /// A path regex nginx refuses (`deny all`), e.g. `/(conf|bin)/`.
    pub deny: &'a str,
    /// A PHP file php-fpm runs before every script (`auto_prepend_file`), e.g. to name a private config.
    pub prepend: Option<&'a Path>,
    /// The Debian packages that provide what is missing, for the error.
    pub packages: &'a str,
    /// The script a path no file answers goes to, with its query (`/index.php?$args`: WordPress's pretty
    /// permalinks), as nginx's `try_files` falls back; None serves files only.
    pub front_controller: Option<&'a str>,
}

/// nginx and php-fpm serving one application; both are stopped on drop.
pub struct PhpSite {
    /// nginx's TLS address.
    pub addr: SocketAddr,
    /// The origin's CA (PEM file), for `--upstream-ca`.
    pub ca_file: PathBuf,
    nginx: Option<Child>,
    php: Option<Child>,
}

pub(crate) fn io(app: &'static str, what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> AppError {
    move |e| AppError { app, why: format!("{what}: {e}") }
}

/// The binary at `bin`, or an error naming the packages to install.
pub(crate) fn need(app: &'static str, bin: &str, packages: &str) -> Result<PathBuf, AppError> {
    let p = PathBuf::from(bin);
    if !p.exists() {
        return Err(AppError {
            app,
            why: format!("{bin} is missing: apt-get install -y {packages} (README's test command does it)"),
        });
    }
    Ok(p)
}

/// Run `cmd` to its end; its output in the error when it fails.
pub(crate) fn run(app: &'static str, cmd: &mut Command) -> Result<(), AppError> {
    let out = cmd.output().map_err(io(app, format!("{cmd:?}")))?;
    if !out.status.success() {
        return Err(AppError {
            app,
            why: format!(
                "{cmd:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    Ok(())
}

pub(crate) fn write(app: &'static str, path: &Path, text: impl AsRef<[u8]>) -> Result<(), AppError> {
    std::fs::write(path, text).map_err(io(app, path.display()))
}

/// A throwaway CA and a leaf for `host` and 127.0.0.1 (PEM: CA, leaf, leaf key).
pub fn throwaway_tls(host: &str) -> Result<(String, String, String), rcgen::Error> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, format!("throwaway {host} CA"));
    ca_params.key_usages =
        vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate()?;
    let mut leaf = rcgen::CertificateParams::new(vec![host.to_string()])?;
    leaf.subject_alt_names.push(rcgen::SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
    let leaf = leaf.signed_by(&leaf_key, &issuer)?;
    Ok((ca_cert.pem(), leaf.pem(), leaf_key.serialize_pem()))
}

impl PhpSite {
    /// Start php-fpm and nginx for `s` and wait (bounded, on their own signs) until both serve.
    pub fn start(s: &PhpSiteSpec<'_>) -> Result<PhpSite, AppError> {
        let app = s.app;
        let fpm = need(app, "/usr/sbin/php-fpm8.2", s.packages)?;
        let nginx_bin = need(app, "/usr/sbin/nginx", s.packages)?;
        let root = s.root;
        std::fs::create_dir_all(root.join("tmp")).map_err(io(app, root.display()))?;
        let (ca_pem, leaf_pem, key_pem) =
            throwaway_tls(s.host).map_err(|e| AppError { app, why: format!("certificate: {e}") })?;
        let (cert, key, ca_file) = (root.join("cert.pem"), root.join("key.pem"), root.join("ca.pem"));
        write(app, &cert, leaf_pem)?;
        write(app, &key, key_pem)?;
        write(app, &ca_file, ca_pem)?;

        let sock = root.join("php.sock");
        let fpm_conf = root.join("php-fpm.conf");
        let prepend = s
            .prepend
            .map(|p| format!("php_admin_value[auto_prepend_file] = {}\n", p.display()))
            .unwrap_or_default();
        write(
            app,
            &fpm_conf,
            format!(
                "[global]\npid = {r}/php-fpm.pid\nerror_log = {r}/php-fpm.log\ndaemonize = no\n\
                 [site]\nuser = root\ngroup = root\nlisten = {s}\npm = static\npm.max_children = 4\n\
                 catch_workers_output = yes\n{prepend}",
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
            .map_err(io(app, "php-fpm"))?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(io(app, "a free loopback port"))?
            .port();
        let mut site = PhpSite {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            ca_file,
            nginx: None,
            php: Some(php_child),
        };
        let addr = site.addr;
        let nginx_conf = root.join("nginx.conf");
        let t = root.join("tmp").display().to_string();
        write(
            app,
            &nginx_conf,
            format!(
                "daemon off;\nmaster_process off;\npid {r}/nginx.pid;\nerror_log {r}/nginx-error.log;\nevents {{}}\nhttp {{\n\
                 include /etc/nginx/mime.types;\naccess_log off;\nclient_body_temp_path {t}/body;\n\
                 fastcgi_temp_path {t}/fastcgi;\nproxy_temp_path {t}/proxy;\nuwsgi_temp_path {t}/uwsgi;\n\
                 scgi_temp_path {t}/scgi;\nserver {{\nlisten {addr} ssl;\nserver_name {host};\n\
                 ssl_certificate {cert};\nssl_certificate_key {key};\nroot {code};\nindex {index};\n\
                 location ~ {deny} {{ deny all; }}\n{front}\
                 location ~ \\.php$ {{\ninclude /etc/nginx/fastcgi_params;\n\
                 fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\nfastcgi_param HTTPS on;\n\
                 fastcgi_pass unix:{sock};\n}}\n}}\n}}\n",
                r = root.display(),
                host = s.host,
                cert = cert.display(),
                key = key.display(),
                code = s.code.display(),
                index = s.index,
                deny = s.deny,
                front = s
                    .front_controller
                    .map(|f| format!("location / {{ try_files $uri $uri/ {f}; }}\n"))
                    .unwrap_or_default(),
                sock = sock.display(),
            ),
        )?;
        site.nginx = Some(
            Command::new(&nginx_bin)
                .arg("-c")
                .arg(&nginx_conf)
                .arg("-p")
                .arg(root)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(io(app, "nginx"))?,
        );
        // Both servers up: nginx listening and php-fpm's socket present (bounded wait on their own signs).
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(addr).is_err() || !sock.exists() {
            for (name, c) in [("nginx", &mut site.nginx), ("php-fpm", &mut site.php)] {
                if let Some(status) = c.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                    return Err(AppError {
                        app,
                        why: format!(
                            "{name} exited ({status}): {}{}",
                            std::fs::read_to_string(root.join("nginx-error.log")).unwrap_or_default(),
                            std::fs::read_to_string(root.join("php-fpm.log")).unwrap_or_default()
                        ),
                    });
                }
            }
            if Instant::now() > deadline {
                return Err(AppError { app, why: "the servers did not start within 20 s".into() });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(site)
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

impl Drop for PhpSite {
    fn drop(&mut self) {
        self.stop();
    }
}
