//! WordPress's servers for the bench: MariaDB on a private socket, php-fpm and nginx over TLS (a throwaway CA),
//! each a child that dies with the bench; the blog installed and seeded through WordPress's own PHP API.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

use super::super::Stop;
use super::content::*;
use super::{HOST, PACKAGES};

/// The seed: WordPress installed with its own API, then the header and footer parts, categories, posts.
pub(super) const SEED_PHP: &str = r#"<?php
// Seeds a fresh WordPress from the JSON file argv[1] with WordPress's own API.
$_SERVER['HTTP_HOST'] = 'blog.test';
$_SERVER['REQUEST_URI'] = '/';
define('WP_INSTALLING', true);
require_once __DIR__ . '/wp-load.php';
// No mail from the install (pluggable; upgrade.php declares it only when undefined).
function wp_new_blog_notification($blog_title, $blog_url, $user_id, $password) {}
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
$spec = json_decode(file_get_contents($argv[1]), true);
wp_install($spec['title'], 'admin', 'admin@blog.test', true, '', 'kettle-42');
update_option('blogdescription', $spec['tagline']);
foreach ($spec['options'] as $name => $value) update_option($name, $value);
global $wp_rewrite;
$wp_rewrite->set_permalink_structure('/%postname%/');
wp_delete_post(1, true);
function fail($e) { fwrite(STDERR, $e->get_error_message() . "\n"); exit(1); }
foreach ($spec['parts'] as $slug => $content) {
    $id = wp_insert_post(['post_type' => 'wp_template_part', 'post_name' => $slug, 'post_title' => ucfirst($slug),
        'post_content' => $content, 'post_status' => 'publish'], true);
    if (is_wp_error($id)) fail($id);
    wp_set_object_terms($id, 'twentytwentythree', 'wp_theme');
    wp_set_object_terms($id, $slug, 'wp_template_part_area');
}
$cats = [];
foreach ($spec['categories'] as $c) {
    $t = wp_insert_term($c['name'], 'category', ['slug' => $c['slug']]);
    if (is_wp_error($t)) fail($t);
    $cats[$c['slug']] = $t['term_id'];
}
wp_defer_term_counting(true);
foreach ($spec['posts'] as $p) {
    $id = wp_insert_post(['post_title' => $p['title'], 'post_name' => $p['slug'], 'post_content' => $p['content'],
        'post_status' => 'publish', 'post_date' => $p['date'], 'post_author' => 1,
        'post_category' => [$cats[$p['category']]], 'tags_input' => $p['tags']], true);
    if (is_wp_error($id)) fail($id);
}
wp_defer_term_counting(false);
$id = wp_insert_post(['post_title' => 'About', 'post_name' => 'about', 'post_type' => 'page',
    'post_content' => '<!-- wp:paragraph --><p>Notes on gardens, rivers and trains.</p><!-- /wp:paragraph -->',
    'post_status' => 'publish', 'post_author' => 1], true);
if (is_wp_error($id)) fail($id);
// The rules written during the install lack the taxonomies' (registered later): the first request writes them.
delete_option('rewrite_rules');
echo "seeded\n";
"#;

/// The header part: Twenty Twenty-Three's (site title, navigation) with a search box.
pub(super) const HEADER: &str = r#"<!-- wp:group {"layout":{"type":"constrained"}} --><div class="wp-block-group"><!-- wp:group {"align":"wide","layout":{"type":"flex","justifyContent":"space-between"}} --><div class="wp-block-group alignwide"><!-- wp:site-title {"level":0} /--><!-- wp:navigation {"layout":{"type":"flex","justifyContent":"right"}} /--><!-- wp:search {"label":"Search","buttonText":"Search"} /--></div><!-- /wp:group --></div><!-- /wp:group -->"#;
/// The footer part: the category list (with counts) and the tag cloud.
pub(super) const FOOTER: &str = r#"<!-- wp:group {"layout":{"type":"constrained"}} --><div class="wp-block-group"><!-- wp:columns {"align":"wide"} --><div class="wp-block-columns alignwide"><!-- wp:column --><div class="wp-block-column"><!-- wp:heading {"level":3} --><h3>Categories</h3><!-- /wp:heading --><!-- wp:categories {"showPostCounts":true} /--></div><!-- /wp:column --><!-- wp:column --><div class="wp-block-column"><!-- wp:heading {"level":3} --><h3>Tags</h3><!-- /wp:heading --><!-- wp:tag-cloud /--></div><!-- /wp:column --></div><!-- /wp:columns --></div><!-- /wp:group -->"#;

pub(super) fn need(bin: &str) -> anyhow::Result<()> {
    if !Path::new(bin).exists() {
        bail!("{bin} is missing: apt-get install -y {PACKAGES}");
    }
    Ok(())
}

pub(super) fn run(cmd: &mut Command) -> anyhow::Result<String> {
    let out = cmd.output().with_context(|| format!("{cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `program` as a server child: under `setpriv --pdeathsig TERM` (util-linux), so it gets SIGTERM even when
/// the bench itself is killed and its drops never run.
pub(super) fn child(program: &str) -> Command {
    let mut c = Command::new("/usr/bin/setpriv");
    c.args(["--pdeathsig", "TERM", "--", program]);
    c
}

/// MariaDB, php-fpm and nginx serving the blog; every one is stopped on drop (the bench's end or failure).
pub(crate) struct WordPress {
    pub(crate) addr: SocketAddr,
    pub(crate) ca_file: PathBuf,
    root: PathBuf,
    /// nginx and php-fpm (demo's PHP site), stopped first.
    site: Option<demo::php_site::PhpSite>,
    /// MariaDB, started before the site.
    children: Vec<(&'static str, Child)>,
}

impl Stop for WordPress {
    fn stop(&mut self) {
        // nginx and php-fpm first (demo's site: its master stops its workers), then MariaDB with SIGTERM
        // (a clean shutdown); a child still alive after 20 s is killed.
        if let Some(site) = self.site.as_mut() {
            site.stop();
        }
        while let Some((name, mut c)) = self.children.pop() {
            let _ = Command::new("kill").args(["-TERM", &c.id().to_string()]).status();
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                match c.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() > deadline => {
                        eprintln!("bench coverage: {name} did not stop on SIGTERM within 20 s: killed");
                        let _ = c.kill();
                        let _ = c.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        }
    }
}

impl Drop for WordPress {
    fn drop(&mut self) {
        self.stop();
    }
}

impl WordPress {
    fn spawn(&mut self, name: &'static str, cmd: &mut Command) -> anyhow::Result<()> {
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        self.children.push((name, child));
        Ok(())
    }

    /// Wait (bounded) until `ready`; a child that exits meanwhile is an error with its log.
    fn wait_for(&mut self, what: &str, log: &str, ready: impl Fn() -> bool) -> anyhow::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !ready() {
            for (name, c) in &mut self.children {
                if let Ok(Some(status)) = c.try_wait() {
                    bail!(
                        "{name} exited ({status}) before {what}: {}",
                        std::fs::read_to_string(self.root.join(log)).unwrap_or_default()
                    );
                }
            }
            if Instant::now() > deadline {
                bail!("{what}: not within 30 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Set up the blog under `dir` (database, code, seed with `posts` and WordPress's `options` set) and
    /// serve it.
    pub(crate) fn start(
        dir: &Path,
        posts: &[Article],
        options: &[(&str, &str)],
    ) -> anyhow::Result<WordPress> {
        for bin in [
            "/usr/sbin/mariadbd",
            "/usr/bin/mariadb-install-db",
            "/usr/bin/mariadb",
            "/usr/bin/php",
            "/usr/sbin/php-fpm8.2",
            "/usr/sbin/nginx",
            "/usr/share/wordpress/wp-settings.php",
            "/usr/bin/curl",
            "/usr/bin/setpriv",
        ] {
            need(bin)?;
        }
        let root = dir.join("wordpress");
        std::fs::create_dir_all(root.join("tmp"))?;
        // The address and the CA are the site's, once it is up.
        let mut wp = WordPress {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            ca_file: root.join("ca.pem"),
            root: root.clone(),
            site: None,
            children: Vec::new(),
        };
        // MariaDB: a private data directory, its own socket, no TCP.
        let (data, sock) = (root.join("db"), root.join("mysql.sock"));
        run(Command::new("/usr/bin/mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .args(["--user=root", "--auth-root-authentication-method=socket", "--skip-test-db"]))?;
        wp.spawn(
            "mariadbd",
            child("/usr/sbin/mariadbd")
                .arg("--no-defaults")
                .arg(format!("--datadir={}", data.display()))
                .arg(format!("--socket={}", sock.display()))
                .arg(format!("--pid-file={}", root.join("mysql.pid").display()))
                .arg(format!("--log-error={}", root.join("mysql.err").display()))
                .args([
                    "--skip-networking",
                    "--user=root",
                    "--innodb-buffer-pool-size=64M",
                    // A bench's database: no fsync per commit (the seed's 300 posts in seconds).
                    "--innodb-flush-log-at-trx-commit=0",
                ]),
        )?;
        let mysql = |sql: &str| {
            run(Command::new("/usr/bin/mariadb").arg("-S").arg(&sock).args(["-u", "root", "-e", sql]))
        };
        wp.wait_for("MariaDB's socket", "mysql.err", || mysql("SELECT 1").is_ok())?;
        mysql(
            "CREATE DATABASE wordpress; CREATE USER wp@localhost IDENTIFIED BY 'wp'; \
             GRANT ALL ON wordpress.* TO wp@localhost;",
        )?;
        // The code, copied (Debian's wp-config.php reads /etc/wordpress; this copy reads its own).
        let code = root.join("code");
        run(Command::new("cp").args(["-aL", "/usr/share/wordpress"]).arg(&code))?;
        std::fs::remove_dir_all(code.join("wp-content"))?;
        run(Command::new("cp").args(["-aL", "/var/lib/wordpress/wp-content"]).arg(code.join("wp-content")))?;
        let salts: String = [
            "AUTH_KEY",
            "SECURE_AUTH_KEY",
            "LOGGED_IN_KEY",
            "NONCE_KEY",
            "AUTH_SALT",
            "SECURE_AUTH_SALT",
            "LOGGED_IN_SALT",
            "NONCE_SALT",
        ]
        .iter()
        .map(|k| format!("define('{k}', 'webfreeze-bench-{k}');\n"))
        .collect();
        std::fs::write(
            code.join("wp-config.php"),
            format!(
                "<?php\ndefine('DB_NAME', 'wordpress');\ndefine('DB_USER', 'wp');\ndefine('DB_PASSWORD', 'wp');\n\
                 define('DB_HOST', 'localhost:{sock}');\ndefine('DB_CHARSET', 'utf8mb4');\ndefine('DB_COLLATE', '');\n\
                 {salts}$table_prefix = 'wp_';\ndefine('WP_HOME', 'https://{HOST}');\ndefine('WP_SITEURL', 'https://{HOST}');\n\
                 // Offline: no cron requests to itself, no updates, no outside HTTP from PHP.\n\
                 define('DISABLE_WP_CRON', true);\ndefine('AUTOMATIC_UPDATER_DISABLED', true);\n\
                 define('WP_HTTP_BLOCK_EXTERNAL', true);\n$_SERVER['HTTPS'] = 'on';\n\
                 if (!defined('ABSPATH')) define('ABSPATH', __DIR__ . '/');\nrequire_once ABSPATH . 'wp-settings.php';\n",
                sock = sock.display()
            ),
        )?;
        // The seed, with WordPress's own API.
        let spec = serde_json::json!({
            "title": "Test Blog",
            "tagline": "Notes from a small town",
            "parts": { "header": HEADER, "footer": FOOTER },
            "options": options.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>(),
            "categories": CATEGORIES.iter().map(|c| serde_json::json!({"name": capitalise(c), "slug": c})).collect::<Vec<_>>(),
            "posts": posts.iter().map(|p| serde_json::json!({
                "title": p.title, "slug": p.slug, "content": p.content, "date": p.date,
                "category": p.category, "tags": p.tags,
            })).collect::<Vec<_>>(),
        });
        let spec_file = root.join("seed.json");
        std::fs::write(&spec_file, serde_json::to_vec(&spec)?)?;
        let seed = code.join("wp-seed.php");
        std::fs::write(&seed, SEED_PHP)?;
        run(Command::new("/usr/bin/php").arg(&seed).arg(&spec_file))?;
        std::fs::remove_file(&seed)?;
        // php-fpm and nginx, as demo's PHP applications are served, with WordPress's front controller for
        // its pretty permalinks.
        let site = demo::php_site::PhpSite::start(&demo::php_site::PhpSiteSpec {
            app: "WordPress",
            host: HOST,
            root: &root,
            code: &code,
            index: "index.php",
            deny: "/wp-config\\.php$",
            prepend: None,
            packages: PACKAGES,
            front_controller: Some("/index.php?$args"),
        })?;
        wp.addr = site.addr;
        wp.ca_file = site.ca_file.clone();
        wp.site = Some(site);
        Ok(wp)
    }

    /// `GET https://blog.test{path}` as served (no redirect followed): the body, or an error unless 200.
    pub(super) fn get(&self, url: &str) -> anyhow::Result<String> {
        let body = self.root.join("tmp/get.html");
        let code = run(Command::new("/usr/bin/curl")
            .args(["-s", "--max-time", "30", "-o"])
            .arg(&body)
            .args(["-w", "%{http_code}", "--cacert"])
            .arg(&self.ca_file)
            .arg("--connect-to")
            .arg(format!("{HOST}:443:127.0.0.1:{}", self.addr.port()))
            .arg(url))?;
        if code.trim() != "200" {
            bail!("{url} answered {code}, not 200");
        }
        Ok(std::fs::read_to_string(&body)?)
    }
}
