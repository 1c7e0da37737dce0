//! The real applications of `bench agreement`: what each serves, its state tasks, and how its edit form is
//! reached. Neither was written here; both come from Debian (`demo::dokuwiki`, `demo::mediawiki`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// One state task: (task id, page, the text the page must end up with, another text).
pub(crate) type Task = (&'static str, &'static str, &'static str, &'static str);

/// An application under test.
pub(crate) struct App {
    /// Its name in the table.
    pub(crate) name: &'static str,
    /// Its host.
    pub(crate) host: &'static str,
    /// The task file's site placeholder (`__KEY__`) and its `sites` entry.
    pub(crate) key: &'static str,
    /// Its pages: (id or title, text in the application's markup).
    pub(crate) pages: &'static [(&'static str, &'static str)],
    /// Its state tasks.
    pub(crate) tasks: &'static [Task],
    /// The path of a page, and of its edit form (after the host).
    pub(crate) page_path: fn(&str) -> String,
    pub(crate) edit_path: fn(&str) -> String,
    /// The page the tasks start on.
    pub(crate) start: &'static str,
    /// What `program_html` reads of the edited page.
    pub(crate) locator: &'static str,
    /// Words naming the edit form's text area, save and preview buttons in an observation (alternatives
    /// in order).
    pub(crate) text_words: &'static [&'static [&'static str]],
    pub(crate) save_words: &'static [&'static [&'static str]],
    pub(crate) preview_words: &'static [&'static [&'static str]],
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
}

impl Running {
    pub(crate) fn addr(&self) -> SocketAddr {
        match self {
            Running::Doku(w) => w.addr,
            Running::Media(w) => w.addr,
        }
    }
    pub(crate) fn ca_file(&self) -> PathBuf {
        match self {
            Running::Doku(w) => w.ca_file.clone(),
            Running::Media(w) => w.ca_file.clone(),
        }
    }
}

/// Start `app` afresh (its pages as seeded, nothing else) under `dir`.
pub(crate) fn restore(app: &App, dir: &Path) -> anyhow::Result<Running> {
    std::fs::create_dir_all(dir)?;
    Ok(match app.name {
        "DokuWiki" => {
            let conf = [("useacl", "0"), ("usedraft", "0"), ("breadcrumbs", "0")];
            Running::Doku(demo::dokuwiki::DokuWiki::start_with(dir, app.pages, &conf)?)
        }
        _ => Running::Media(demo::mediawiki::MediaWiki::start(dir, app.pages)?),
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
    page_path: |p| format!("/doku.php?id={p}"),
    edit_path: |p| format!("/doku.php?id={p}&do=edit"),
    start: "start",
    locator: "document.querySelector('.page').outerText",
    text_words: &[&["textbox", "multiline"], &["textbox"], &["textarea"]],
    save_words: &[&["button", "save"]],
    preview_words: &[&["button", "preview"]],
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
    page_path: |p| format!("/index.php?title={p}"),
    edit_path: |p| format!("/index.php?title={p}&action=edit"),
    start: "Garden",
    locator: "document.querySelector('#mw-content-text').outerText",
    text_words: &[&["textarea"], &["textbox", "multiline"]],
    save_words: &[&["submit", "save"], &["button", "save"], &["submit", "publish"]],
    preview_words: &[&["submit", "preview"], &["button", "preview"]],
    viewport_height: 1600,
};
