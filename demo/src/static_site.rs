//! A real static site nobody here wrote, for the benches: a directory (Debian's Python documentation,
//! `python3-doc`) served by nginx over TLS (a throwaway CA) under a host name of the caller's choice, on
//! loopback, as a child of the caller with its own configuration. Missing packages are an error that
//! says how to install them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Why the site could not be started.
#[derive(Debug, thiserror::Error)]
#[error("static site: {0}")]
pub struct SiteError(String);

/// The running site; nginx is stopped on drop.
pub struct StaticSite {
    /// nginx's TLS address.
    pub addr: SocketAddr,
    /// The origin's CA (PEM file), for `--upstream-ca`.
    pub ca_file: PathBuf,
    nginx: Option<Child>,
}

impl StaticSite {
    /// Serve `docroot` as `https://HOST/` (nginx, TLS); state under `dir`.
    pub fn start(dir: &Path, host: &str, docroot: &Path) -> Result<StaticSite, SiteError> {
        let nginx = PathBuf::from("/usr/sbin/nginx");
        if !nginx.exists() {
            return Err(SiteError("/usr/sbin/nginx is missing: apt-get install -y nginx-light".into()));
        }
        if !docroot.is_dir() {
            return Err(SiteError(format!("{} is not a directory", docroot.display())));
        }
        let io = |what: String| move |e: std::io::Error| SiteError(format!("{what}: {e}"));
        let root = dir.join(format!("site-{host}"));
        std::fs::create_dir_all(root.join("tmp")).map_err(io(root.display().to_string()))?;
        let (ca, leaf, key) =
            crate::php_site::throwaway_tls(host).map_err(|e| SiteError(format!("certificate: {e}")))?;
        let (cert_f, key_f, ca_file) = (root.join("cert.pem"), root.join("key.pem"), root.join("ca.pem"));
        for (f, t) in [(&cert_f, leaf), (&key_f, key), (&ca_file, ca)] {
            std::fs::write(f, t).map_err(io(f.display().to_string()))?;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(io("a free loopback port".into()))?
            .port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let t = root.join("tmp").display().to_string();
        let conf = root.join("nginx.conf");
        std::fs::write(
            &conf,
            format!(
                "daemon off;\nmaster_process off;\npid {r}/nginx.pid;\nerror_log {r}/nginx-error.log;\nevents {{}}\nhttp {{\n\
                 include /etc/nginx/mime.types;\naccess_log off;\nclient_body_temp_path {t}/body;\n\
                 fastcgi_temp_path {t}/fastcgi;\nproxy_temp_path {t}/proxy;\nuwsgi_temp_path {t}/uwsgi;\n\
                 scgi_temp_path {t}/scgi;\nserver {{\nlisten {addr} ssl;\nserver_name {host};\n\
                 ssl_certificate {cert};\nssl_certificate_key {key};\nroot {docroot};\nindex index.html;\n}}\n}}\n",
                r = root.display(),
                cert = cert_f.display(),
                key = key_f.display(),
                docroot = docroot.display(),
            ),
        )
        .map_err(io(conf.display().to_string()))?;
        let child = Command::new(&nginx)
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(&root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(io("nginx".into()))?;
        let mut site = StaticSite { addr, ca_file, nginx: Some(child) };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(addr).is_err() {
            if let Some(status) = site.nginx.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                return Err(SiteError(format!(
                    "nginx exited ({status}): {}",
                    std::fs::read_to_string(root.join("nginx-error.log")).unwrap_or_default()
                )));
            }
            if Instant::now() > deadline {
                return Err(SiteError("nginx did not start within 20 s".into()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(site)
    }

    /// Stop nginx.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.nginx.take() {
            let _ = Command::new("kill").args(["-TERM", &c.id().to_string()]).status();
            let _ = c.wait();
        }
    }
}

impl Drop for StaticSite {
    fn drop(&mut self) {
        self.stop();
    }
}
