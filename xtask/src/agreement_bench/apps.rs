//! The real applications of `bench agreement`: what each serves, its state tasks, and how its form is
//! reached. None was written here; all come from Debian (`demo::dokuwiki`, `demo::mediawiki`, and WordPress
//! on MariaDB as the coverage bench serves it, `coverage_real::wordpress`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::coverage_real::wordpress::{self, capitalise, Article, WordPress};

/// One state task: (task id, page, the text the page must end up with (show, for a comment), another text).
pub(crate) type Task = (&'static str, &'static str, &'static str, &'static str);

/// An application under test.
pub(crate) struct App {
    /// Its name in the table.
    pub(crate) name: &'static str,
    /// Its host.
    pub(crate) host: &'static str,
    /// The task file's site placeholder (`__KEY__`) and its `sites` entry.
    pub(crate) key: &'static str,
    /// Its pages: (id or title, text in the application's markup; a blog post's slug and paragraph).
    pub(crate) pages: &'static [(&'static str, &'static str)],
    /// Its state tasks.
    pub(crate) tasks: &'static [Task],
    /// What a task asks, from its page and text.
    pub(crate) intent: fn(&str, &str) -> String,
    /// The path of a page, and of the page with its form (after the host): a wiki's edit form, or the page
    /// itself when the form is on it (a blog post's comment form).
    pub(crate) page_path: fn(&str) -> String,
    pub(crate) edit_path: fn(&str) -> String,
    /// The page the tasks start on.
    pub(crate) start: &'static str,
    /// What `program_html` reads of the edited page.
    pub(crate) locator: &'static str,
    /// Words naming the form's text area, save and preview buttons in an observation (alternatives in
    /// order); None: the form has no preview (agents that preview do not apply).
    pub(crate) text_words: &'static [&'static [&'static str]],
    pub(crate) save_words: &'static [&'static [&'static str]],
    pub(crate) preview_words: Option<&'static [&'static [&'static str]]>,
    /// Whether the page with the form lists what was saved above the form (a post's comments): the form's
    /// element numbers after a save are then read apart.
    pub(crate) lists_writes: bool,
    /// The browser's viewport height for its tasks (the task file's `viewport_size`): tall enough that the
    /// edit form's buttons are in the observation without scrolling.
    pub(crate) viewport_height: u32,
}

impl App {
    pub(crate) fn page_url(&self, page: &str) -> String {
        format!("https://{}{}", self.host, (self.page_path)(page))
    }
    pub(crate) fn edit_url(&self, page: &str) -> String {
        format!("https://{}{}", self.host, (self.edit_path)(page))
    }
}

/// A running application; its servers stop on drop.
pub(crate) enum Running {
    Doku(demo::dokuwiki::DokuWiki),
    Media(demo::mediawiki::MediaWiki),
    Press(Blog),
}

/// A running WordPress; on drop its servers stop and its code and database (about 200 MB a copy, one
/// per restore) are removed, its logs kept.
pub(crate) struct Blog {
    wp: Option<WordPress>,
    dir: PathBuf,
}

impl Drop for Blog {
    fn drop(&mut self) {
        drop(self.wp.take());
        for d in ["code", "db"] {
            let _ = std::fs::remove_dir_all(self.dir.join("wordpress").join(d));
        }
    }
}

impl Blog {
    fn wp(&self) -> &WordPress {
        self.wp.as_ref().expect("running until dropped")
    }
}

impl Running {
    pub(crate) fn addr(&self) -> SocketAddr {
        match self {
            Running::Doku(w) => w.addr,
            Running::Media(w) => w.addr,
            Running::Press(b) => b.wp().addr,
        }
    }
    pub(crate) fn ca_file(&self) -> PathBuf {
        match self {
            Running::Doku(w) => w.ca_file.clone(),
            Running::Media(w) => w.ca_file.clone(),
            Running::Press(b) => b.wp().ca_file.clone(),
        }
    }
}

/// WordPress's options for its tasks: an anonymous comment (no name or email asked) appears at once; no
/// avatars beside comments (each is an image from secure.gravatar.com, off loopback: the browser asked for
/// it through the proxy in the first run).
const WORDPRESS_OPTIONS: &[(&str, &str)] = &[
    ("comment_moderation", "0"),
    ("comment_previously_approved", "0"),
    ("require_name_email", "0"),
    ("show_avatars", "0"),
];

/// The blog's posts: each app page a post of one paragraph, titled by its slug, a day apart.
fn blog_posts(app: &App) -> Vec<Article> {
    app.pages
        .iter()
        .enumerate()
        .map(|(i, (slug, text))| Article {
            title: capitalise(slug),
            slug: slug.to_string(),
            content: format!("<!-- wp:paragraph -->\n<p>{text}</p>\n<!-- /wp:paragraph -->"),
            date: format!("2024-05-{:02} 10:00:00", i + 1),
            category: if i % 2 == 0 { "garden" } else { "kitchen" },
            tags: vec![["summer", "recipes", "howto"][i % 3]],
        })
        .collect()
}

/// Start `app` afresh (its pages as seeded, nothing else) under `dir`.
pub(crate) fn restore(app: &App, dir: &Path) -> anyhow::Result<Running> {
    std::fs::create_dir_all(dir)?;
    Ok(match app.name {
        "DokuWiki" => {
            let conf = [("useacl", "0"), ("usedraft", "0"), ("breadcrumbs", "0")];
            Running::Doku(demo::dokuwiki::DokuWiki::start_with(dir, app.pages, &conf)?)
        }
        "MediaWiki" => Running::Media(demo::mediawiki::MediaWiki::start(dir, app.pages)?),
        _ => Running::Press(Blog {
            wp: Some(WordPress::start(dir, &blog_posts(app), WORDPRESS_OPTIONS)?),
            dir: dir.to_path_buf(),
        }),
    })
}

pub(crate) const DOKUWIKI: App = App {
    name: "DokuWiki",
    host: "wiki.test",
    key: "WIKI",
    pages: &[
        (
            "start",
            "====== Test Wiki ======\n  * [[garden:tomatoes]]\n  * [[garden:herbs]]\n  * [[kitchen:tea]]\n",
        ),
        ("garden:tomatoes", "====== Tomatoes ======\nTomatoes need sun.\n"),
        ("garden:herbs", "====== Herbs ======\n  * Thyme\n  * Sage\n"),
        ("kitchen:tea", "====== Tea ======\nGreen tea wants water below boiling.\n"),
    ],
    tasks: &[
        (
            "wiki-edit-tomatoes",
            "garden:tomatoes",
            "Tomatoes need sun. Water them daily.",
            "Tomatoes need shade.",
        ),
        ("wiki-list-herbs", "garden:herbs", "  * Thyme\n  * Sage\n  * Basil", "  * Thyme\n  * Mint"),
        (
            "wiki-edit-tea",
            "kitchen:tea",
            "Green tea wants water at 80 degrees.",
            "Black tea wants boiling water.",
        ),
    ],
    intent: wiki_intent,
    page_path: |p| format!("/doku.php?id={p}"),
    edit_path: |p| format!("/doku.php?id={p}&do=edit"),
    start: "start",
    locator: "document.querySelector('.page').outerText",
    text_words: &[&["textbox", "multiline"], &["textbox"], &["textarea"]],
    save_words: &[&["button", "save"]],
    preview_words: Some(&[&["button", "preview"]]),
    lists_writes: false,
    viewport_height: 720,
};

/// MediaWiki on SQLite; the same kinds of task on its own markup, forms and URLs (an edit form with a
/// summary box, save, preview and "show changes", an edit token, start and edit times).
pub(crate) const MEDIAWIKI: App = App {
    name: "MediaWiki",
    host: "mw.test",
    key: "MW",
    pages: &[
        ("Garden", "The garden pages:\n* [[Tomatoes]]\n* [[Herbs]]\n* [[Tea]]\n"),
        ("Tomatoes", "Tomatoes need sun.\n"),
        ("Herbs", "* Thyme\n* Sage\n"),
        ("Tea", "Green tea wants water below boiling.\n"),
    ],
    tasks: &[
        ("mw-edit-tomatoes", "Tomatoes", "Tomatoes need sun. Water them daily.", "Tomatoes need shade."),
        ("mw-list-herbs", "Herbs", "* Thyme\n* Sage\n* Basil", "* Thyme\n* Mint"),
        ("mw-edit-tea", "Tea", "Green tea wants water at 80 degrees.", "Black tea wants boiling water."),
    ],
    intent: wiki_intent,
    page_path: |p| format!("/index.php?title={p}"),
    edit_path: |p| format!("/index.php?title={p}&action=edit"),
    start: "Garden",
    locator: "document.querySelector('#mw-content-text').outerText",
    text_words: &[&["textarea"], &["textbox", "multiline"]],
    save_words: &[&["submit", "save"], &["button", "save"], &["submit", "publish"]],
    preview_words: Some(&[&["submit", "preview"], &["button", "preview"]]),
    lists_writes: false,
    viewport_height: 1600,
};

fn wiki_intent(page: &str, text: &str) -> String {
    format!("Change the text of the wiki page {page} to: {text}")
}

/// WordPress (6.1, Twenty Twenty-Three) on MariaDB, the held-out application: its tasks were written before
/// the bench first ran on it. A small blog of four posts; each task posts a comment through the comment
/// form under a post (a text area and "Post Comment", no preview), anonymously ([`WORDPRESS_OPTIONS`]),
/// scored on the post's comments section. WordPress refuses a duplicate comment, and a second comment from
/// the same address within 15 s: its own behaviour, kept.
pub(crate) const WORDPRESS: App = App {
    name: "WordPress",
    host: wordpress::HOST,
    key: "BLOG",
    pages: &[
        ("tomatoes", "Tomatoes need sun and a sheltered wall."),
        ("bread", "A slow rise makes a better loaf."),
        ("herbs", "Thyme and sage share a dry corner of the garden."),
        ("tea", "Green tea wants water below boiling."),
    ],
    tasks: &[
        (
            "wp-comment-tomatoes",
            "tomatoes",
            "My tomatoes ripened early this year.",
            "Mine never ripened at all.",
        ),
        ("wp-comment-herbs", "herbs", "Basil grows well beside the thyme.", "Mint spreads everywhere here."),
        ("wp-comment-tea", "tea", "Green tea at 80 degrees tastes sweeter.", "I prefer black tea with milk."),
    ],
    intent: |page, text| format!("Post a comment on the blog post {} saying: {text}", capitalise(page)),
    page_path: |p| if p.is_empty() { "/".into() } else { format!("/{p}/") },
    edit_path: |p| format!("/{p}/"),
    start: "",
    locator: "document.querySelector('.wp-block-comments').outerText",
    text_words: &[&["textarea"]],
    save_words: &[&["submit", "post comment"], &["button", "post comment"]],
    preview_words: None,
    lists_writes: true,
    viewport_height: 2000,
};
