//! The coverage bench's third application, one nothing here was tuned on (issue 61 part 6): Debian's
//! WordPress (`wordpress`, 6.1 with its block theme Twenty Twenty-Three) on Debian's MariaDB, served by nginx
//! over TLS (a throwaway CA, `blog.test`) and php-fpm on loopback, all three children of the bench with their
//! configuration and data under its work directory (WordPress's code copied from /usr/share/wordpress, a
//! private MariaDB data directory on a private socket, no TCP port but nginx's).
//!
//! The blog is seeded with WordPress's own PHP API (`wp_install`, `wp_insert_post`, ...): [`POSTS`] generated
//! posts in [`CATEGORIES`] categories, each with three of [`TAGS`] tags, ten posts a page, pretty permalinks
//! (`/<slug>/`, `/category/x/page/2/`, `/tag/y/`, `/page/2/`, `/?s=word`). As a site owner would through the
//! site editor, the theme's header part gets the search box and its footer part the category list and the
//! tag cloud (Twenty Twenty-Three's own parts have neither, so a reader could not search from a page).
//!
//! Its paths ([`PATHS`]) are rules over the live site's links (the k-th post of a list, a post's own
//! category, its k-th tag, the next page, a query typed in the header's search box), resolved and checked
//! against the pages the site serves before anything is recorded: every step is a link of the page before it,
//! or the URL its search form sends. Half of them start deep (a category page, a category's second page, a
//! tag page, a search results page); four search.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

use super::{App, AppPath, Stop};

/// The application's name (the tasks' site).
pub(crate) const NAME: &str = "WordPress";
const HOST: &str = "blog.test";
/// Generated posts.
const POSTS: usize = 300;
/// Posts on a list page (WordPress's default `posts_per_page`).
const PER_PAGE: usize = 10;
/// Crawl budget (pages): the bench's standing budget, below the blog's size ([`site_size`]).
const CRAWL_BUDGET: usize = 300;
const PACKAGES: &str = "wordpress mariadb-server nginx-light php-fpm php-mysql";

const CATEGORIES: &[&str] =
    &["garden", "kitchen", "birds", "rivers", "tools", "bridges", "music", "weather", "trains", "maps"];
const TAGS: &[&str] = &[
    "spring",
    "summer",
    "autumn",
    "winter",
    "howto",
    "history",
    "photos",
    "review",
    "letters",
    "field-notes",
    "repairs",
    "recipes",
    "walks",
    "archive",
    "guide",
    "abroad",
    "plans",
    "small-things",
    "long-read",
    "quick-tip",
];
/// Words a post is about (each post draws ten: a word is in about 25 posts, so a search for one pages).
const TOPICS: &[&str] = &[
    "lantern",
    "orchard",
    "harbour",
    "meadow",
    "kettle",
    "copper",
    "valley",
    "signal",
    "engine",
    "bridge",
    "market",
    "winter",
    "stone",
    "river",
    "garden",
    "willow",
    "heron",
    "ferry",
    "quarry",
    "beacon",
    "barley",
    "cider",
    "chapel",
    "cottage",
    "dormouse",
    "estuary",
    "fiddle",
    "granary",
    "hedgerow",
    "island",
    "juniper",
    "kestrel",
    "lighthouse",
    "mill",
    "nettle",
    "oyster",
    "pantry",
    "quince",
    "rowan",
    "saddle",
    "thistle",
    "upland",
    "violin",
    "walnut",
    "yarrow",
    "anchor",
    "bellows",
    "compass",
    "drystone",
    "elderflower",
    "foxglove",
    "gorse",
    "harvest",
    "inkwell",
    "jetty",
    "kiln",
    "lichen",
    "marsh",
    "nightjar",
    "otter",
    "pebble",
    "quayside",
    "reed",
    "sorrel",
    "tidepool",
    "umbrella",
    "viaduct",
    "wagon",
    "yew",
    "acorn",
    "bramble",
    "candle",
    "damson",
    "ember",
    "fern",
    "glacier",
    "hawthorn",
    "ivy",
    "jam",
    "knot",
    "loom",
    "moss",
    "nutmeg",
    "oak",
    "plough",
    "quilt",
    "rhubarb",
    "spindle",
    "teapot",
    "urn",
    "vane",
    "weir",
    "almanac",
    "beehive",
    "cobble",
    "dovecote",
    "eel",
    "flint",
    "gate",
    "hazel",
    "iris",
    "journal",
    "kite",
    "lamp",
    "mackerel",
    "needle",
    "orchid",
    "parsley",
    "rope",
    "sextant",
    "timber",
    "vinegar",
    "wren",
];
const FILLER: &[&str] = &[
    "the", "a", "small", "old", "green", "light", "north", "quiet", "bright", "narrow", "long", "early",
    "late", "keeps", "holds", "turns", "runs", "opens", "near", "under", "over", "beside", "with", "for",
    "and", "of", "in", "on", "by",
];

/// One step of a path, resolved on the live site against the page before it.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// The path's start (a path on the blog).
    Start(&'static str),
    /// The k-th post (1-based) a list page links, in page order.
    Post(usize),
    /// The post's own category (the first category link, the post's meta line).
    Category,
    /// The post's k-th tag (1-based).
    Tag(usize),
    /// The list's next page (`/page/N+1/`).
    Next,
    /// A word typed into the header's search box (`/?s=word`, what the form sends).
    Search(&'static str),
}

use Step::{Category, Next, Post, Search, Start, Tag};

/// The paths, as rules: some from the home page, some starting deep; the ones with a [`Step::Search`] (or
/// starting on a results page) are the search paths. Written before the bench ever ran on the blog.
const PATHS: &[&[Step]] = &[
    &[Start("/"), Next, Next, Post(4), Category, Next],
    &[Start("/category/birds/"), Next, Post(2), Tag(2), Next, Post(5)],
    &[Start("/category/music/page/2/"), Post(7), Tag(1), Post(3), Category, Post(1)],
    &[Start("/tag/field-notes/"), Next, Post(4), Category, Next, Post(6)],
    &[Start("/?s=lantern"), Next, Post(3), Tag(3), Post(2), Category],
    &[Start("/"), Post(1), Search("orchard"), Next, Post(5), Tag(2)],
    &[Start("/category/tools/"), Search("harbour"), Post(1), Category, Next, Post(8)],
    &[Start("/tag/recipes/page/2/"), Post(2), Search("meadow"), Post(2), Tag(1), Post(4)],
];

fn next(seed: &mut u64) -> u64 {
    // xorshift: the same blog on every run.
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// A generated post.
struct Article {
    title: String,
    slug: String,
    content: String,
    date: String,
    category: &'static str,
    tags: Vec<&'static str>,
}

fn posts() -> anyhow::Result<Vec<Article>> {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let day0 = time::Date::from_calendar_date(2024, time::Month::January, 1)?;
    let mut out = Vec::new();
    for i in 0..POSTS {
        let category = CATEGORIES[i % CATEGORIES.len()];
        let mut topics: Vec<&str> = Vec::new();
        while topics.len() < 10 {
            let w = TOPICS[(next(&mut seed) % TOPICS.len() as u64) as usize];
            if !topics.contains(&w) {
                topics.push(w);
            }
        }
        let mut tags: Vec<&'static str> = Vec::new();
        while tags.len() < 3 {
            let t = TAGS[(next(&mut seed) % TAGS.len() as u64) as usize];
            if !tags.contains(&t) {
                tags.push(t);
            }
        }
        let mut paragraphs = Vec::new();
        for p in 0..3 {
            let mut words = Vec::new();
            for k in 0..36 {
                words.push(if k % 3 == 2 {
                    topics[(p * 4 + k / 3) % topics.len()]
                } else {
                    FILLER[(next(&mut seed) % FILLER.len() as u64) as usize]
                });
            }
            paragraphs
                .push(format!("<!-- wp:paragraph -->\n<p>{}.</p>\n<!-- /wp:paragraph -->", words.join(" ")));
        }
        let n = i + 1;
        let date = day0 + time::Duration::days(i as i64);
        out.push(Article {
            title: format!("{} note {n}: the {} and the {}", capitalise(category), topics[0], topics[1]),
            slug: format!("{category}-note-{n}"),
            content: paragraphs.join("\n\n"),
            date: format!("{date} 10:00:00"),
            category,
            tags,
        });
    }
    Ok(out)
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// Pages a reader reaches by links without searching: the posts, the two pages (About and WordPress's
/// Sample Page), and every list page with its paging (the home page's, each category's, each tag's).
fn site_size(posts: &[Article]) -> usize {
    let pages = |n: usize| n.div_ceil(PER_PAGE);
    let mut per_term: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for p in posts {
        *per_term.entry(("category", p.category)).or_default() += 1;
        for t in &p.tags {
            *per_term.entry(("tag", t)).or_default() += 1;
        }
    }
    posts.len() + 2 + pages(posts.len()) + per_term.values().map(|n| pages(*n)).sum::<usize>()
}

/// The seed: WordPress installed with its own API, then the header and footer parts, categories, posts.
const SEED_PHP: &str = r#"<?php
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
const HEADER: &str = r#"<!-- wp:group {"layout":{"type":"constrained"}} --><div class="wp-block-group"><!-- wp:group {"align":"wide","layout":{"type":"flex","justifyContent":"space-between"}} --><div class="wp-block-group alignwide"><!-- wp:site-title {"level":0} /--><!-- wp:navigation {"layout":{"type":"flex","justifyContent":"right"}} /--><!-- wp:search {"label":"Search","buttonText":"Search"} /--></div><!-- /wp:group --></div><!-- /wp:group -->"#;
/// The footer part: the category list (with counts) and the tag cloud.
const FOOTER: &str = r#"<!-- wp:group {"layout":{"type":"constrained"}} --><div class="wp-block-group"><!-- wp:columns {"align":"wide"} --><div class="wp-block-columns alignwide"><!-- wp:column --><div class="wp-block-column"><!-- wp:heading {"level":3} --><h3>Categories</h3><!-- /wp:heading --><!-- wp:categories {"showPostCounts":true} /--></div><!-- /wp:column --><!-- wp:column --><div class="wp-block-column"><!-- wp:heading {"level":3} --><h3>Tags</h3><!-- /wp:heading --><!-- wp:tag-cloud /--></div><!-- /wp:column --></div><!-- /wp:columns --></div><!-- /wp:group -->"#;

/// A throwaway CA and a leaf for `host` (PEM: CA, leaf, leaf key).
fn throwaway_tls(host: &str) -> anyhow::Result<(String, String, String)> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, format!("throwaway {host} CA"));
    ca_params.key_usages =
        vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate()?;
    let leaf = rcgen::CertificateParams::new(vec![host.to_string()])?.signed_by(&leaf_key, &issuer)?;
    Ok((ca_cert.pem(), leaf.pem(), leaf_key.serialize_pem()))
}

fn need(bin: &str) -> anyhow::Result<()> {
    if !Path::new(bin).exists() {
        bail!("{bin} is missing: apt-get install -y {PACKAGES}");
    }
    Ok(())
}

fn run(cmd: &mut Command) -> anyhow::Result<String> {
    let out = cmd.output().with_context(|| format!("{cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `program` as a server child: under `setpriv --pdeathsig TERM` (util-linux), so it gets SIGTERM even when
/// the bench itself is killed and its drops never run.
fn child(program: &str) -> Command {
    let mut c = Command::new("/usr/bin/setpriv");
    c.args(["--pdeathsig", "TERM", "--", program]);
    c
}

/// MariaDB, php-fpm and nginx serving the blog; every one is stopped on drop (the bench's end or failure).
pub(crate) struct WordPress {
    addr: SocketAddr,
    ca_file: PathBuf,
    root: PathBuf,
    /// Started children, in start order (stopped in reverse).
    children: Vec<(&'static str, Child)>,
}

impl Stop for WordPress {
    fn stop(&mut self) {
        // SIGTERM, newest first: nginx, then php-fpm's master (it stops its workers; a SIGKILL would orphan
        // them), then MariaDB (a clean shutdown); a child still alive after 20 s is killed.
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

    /// Set up the blog under `dir` (database, code, seed) and serve it.
    fn start(dir: &Path, posts: &[Article]) -> anyhow::Result<WordPress> {
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
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut wp = WordPress {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            ca_file: root.join("ca.pem"),
            root: root.clone(),
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
        // php-fpm and nginx.
        let (ca, leaf, key) = throwaway_tls(HOST)?;
        let (cert_f, key_f) = (root.join("cert.pem"), root.join("key.pem"));
        std::fs::write(&cert_f, leaf)?;
        std::fs::write(&key_f, key)?;
        std::fs::write(&wp.ca_file, ca)?;
        let php_sock = root.join("php.sock");
        let fpm_conf = root.join("php-fpm.conf");
        std::fs::write(
            &fpm_conf,
            format!(
                "[global]\npid = {r}/php-fpm.pid\nerror_log = {r}/php-fpm.log\ndaemonize = no\n\
                 [site]\nuser = root\ngroup = root\nlisten = {s}\npm = static\npm.max_children = 4\n\
                 catch_workers_output = yes\n",
                r = root.display(),
                s = php_sock.display()
            ),
        )?;
        wp.spawn("php-fpm", child("/usr/sbin/php-fpm8.2").args(["-F", "-R", "-y"]).arg(&fpm_conf))?;
        let nginx_conf = root.join("nginx.conf");
        let t = root.join("tmp").display().to_string();
        std::fs::write(
            &nginx_conf,
            format!(
                "daemon off;\nmaster_process off;\npid {r}/nginx.pid;\nerror_log {r}/nginx-error.log;\nevents {{}}\nhttp {{\n\
                 include /etc/nginx/mime.types;\naccess_log off;\nclient_body_temp_path {t}/body;\n\
                 fastcgi_temp_path {t}/fastcgi;\nproxy_temp_path {t}/proxy;\nuwsgi_temp_path {t}/uwsgi;\n\
                 scgi_temp_path {t}/scgi;\nserver {{\nlisten {addr} ssl;\nserver_name {HOST};\n\
                 ssl_certificate {cert};\nssl_certificate_key {key};\nroot {code};\nindex index.php;\n\
                 location ~ /wp-config\\.php$ {{ deny all; }}\n\
                 location / {{ try_files $uri $uri/ /index.php?$args; }}\n\
                 location ~ \\.php$ {{\ninclude /etc/nginx/fastcgi_params;\n\
                 fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\nfastcgi_param HTTPS on;\n\
                 fastcgi_pass unix:{sock};\n}}\n}}\n}}\n",
                r = root.display(),
                addr = wp.addr,
                cert = cert_f.display(),
                key = key_f.display(),
                code = code.display(),
                sock = php_sock.display(),
            ),
        )?;
        wp.spawn("nginx", child("/usr/sbin/nginx").arg("-c").arg(&nginx_conf).arg("-p").arg(&root))?;
        let addr = wp.addr;
        wp.wait_for("nginx and php-fpm", "nginx-error.log", || {
            std::net::TcpStream::connect(addr).is_ok() && php_sock.exists()
        })?;
        Ok(wp)
    }

    /// `GET https://blog.test{path}` as served (no redirect followed): the body, or an error unless 200.
    fn get(&self, url: &str) -> anyhow::Result<String> {
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

/// The page's links (absolute, without fragments), distinct, in page order.
fn links(html: &str, base: &url::Url) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for h in html.split("<a ").skip(1).filter_map(|a| a.split("href=\"").nth(1)?.split('"').next()) {
        let Ok(mut u) = base.join(&html_escape::decode_html_entities(h)) else { continue };
        u.set_fragment(None);
        let s = u.to_string();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Whether the page has the site's search form: a GET form sending a box named `s` to the home page.
fn has_search_form(html: &str) -> bool {
    html.split("<form").skip(1).any(|f| {
        let f = f.split("</form>").next().unwrap_or_default();
        let head = f.split('>').next().unwrap_or_default();
        head.contains("method=\"get\"")
            && head.contains(&format!("action=\"https://{HOST}/\""))
            && f.contains("name=\"s\"")
    })
}

/// Resolve the paths on the live blog (each step a link of the page before it, or its search form's URL).
fn resolve(wp: &WordPress, slugs: &BTreeSet<String>) -> anyhow::Result<Vec<AppPath>> {
    let mut out = Vec::new();
    for (n, rules) in PATHS.iter().enumerate() {
        let mut urls: Vec<String> = Vec::new();
        let mut html = String::new();
        for rule in rules.iter() {
            let here = urls.last().map(|u| url::Url::parse(u)).transpose()?;
            let page_links = here.as_ref().map(|b| links(&html, b)).unwrap_or_default();
            let of = |pred: &dyn Fn(&url::Url) -> bool| -> Vec<String> {
                page_links
                    .iter()
                    .filter(|l| url::Url::parse(l).map(|u| pred(&u)).unwrap_or(false))
                    .cloned()
                    .collect()
            };
            let on_blog = |u: &url::Url| u.host_str() == Some(HOST);
            let is_post = |u: &url::Url| on_blog(u) && slugs.contains(u.path().trim_matches('/'));
            let term = |kind: &'static str| {
                move |u: &url::Url| on_blog(u) && u.path().starts_with(kind) && !u.path().contains("/page/")
            };
            let pick = |v: Vec<String>, k: usize, what: &str| -> anyhow::Result<String> {
                v.get(k - 1).cloned().with_context(|| {
                    format!("path {n}: {} links no {what} {k}", urls.last().map(String::as_str).unwrap_or(""))
                })
            };
            let url = match *rule {
                Start(p) => format!("https://{HOST}{p}"),
                Post(k) => pick(of(&is_post), k, "post")?,
                Tag(k) => pick(of(&term("/tag/")), k, "tag")?,
                Category => pick(of(&term("/category/")), 1, "category")?,
                Next => {
                    let here = here.as_ref().context("a path starts with Start")?;
                    let page: usize = here
                        .path()
                        .split("/page/")
                        .nth(1)
                        .and_then(|s| s.trim_matches('/').parse().ok())
                        .unwrap_or(1);
                    let want = format!("/page/{}/", page + 1);
                    pick(of(&|u: &url::Url| on_blog(u) && u.path().contains(&want)), 1, "next page")?
                }
                Search(q) => {
                    if !has_search_form(&html) {
                        bail!(
                            "path {n}: {} has no search form",
                            urls.last().map(String::as_str).unwrap_or("")
                        );
                    }
                    format!("https://{HOST}/?s={q}")
                }
            };
            html = wp.get(&url).with_context(|| format!("path {n}"))?;
            urls.push(url);
        }
        let search =
            rules.iter().any(|r| matches!(r, Search(_))) || urls.first().is_some_and(|u| u.contains("?s="));
        out.push(AppPath { urls, search });
    }
    Ok(out)
}

/// Seed and serve the blog, resolve its paths: the bench's WordPress application.
pub(crate) fn start(work: &Path) -> anyhow::Result<App> {
    let posts = posts()?;
    let t0 = Instant::now();
    let wp = WordPress::start(work, &posts)?;
    let slugs: BTreeSet<String> = posts.iter().map(|p| p.slug.clone()).collect();
    let paths = resolve(&wp, &slugs)?;
    let size = site_size(&posts);
    eprintln!(
        "bench coverage: WordPress up and seeded in {:.0} s ({} posts, {size} pages reachable by links)",
        t0.elapsed().as_secs_f64(),
        posts.len()
    );
    Ok(App {
        name: NAME,
        host: HOST,
        addr: wp.addr,
        ca_file: wp.ca_file.clone(),
        paths,
        home: format!("https://{HOST}/"),
        budget: CRAWL_BUDGET,
        size,
        size_note: format!(
            "{POSTS} posts in {} categories, {} tags, 2 pages, and the list pages with their paging \
             (home, categories, tags; {PER_PAGE} posts a page)",
            CATEGORIES.len(),
            TAGS.len()
        ),
        search_field: Some("s"),
        server: Box::new(wp),
    })
}
