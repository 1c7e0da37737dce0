//! `snapshots` and `ca`: the store and the certificate authority.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};

#[derive(Debug, Subcommand)]
pub(crate) enum SnapshotsCmd {
    /// List the snapshots in the store.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one snapshot's manifest and its exchanges.
    Show {
        /// Snapshot name.
        name: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// How many exchanges to list (0 for none).
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// What changed between two recordings of a site: HTML documents and other resources added, removed
    /// or changed (status or body), matched by method and normalised URL (each URL by its first response),
    /// with the changed lines of every changed page's visible text.
    Diff {
        /// The earlier snapshot.
        a: String,
        /// The later snapshot.
        b: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Changed text lines to show per page (0 for none).
        #[arg(long, default_value_t = 20)]
        lines: usize,
        /// Also write the diff as an HTML page to this file.
        #[arg(long, value_name = "FILE")]
        html: Option<std::path::PathBuf>,
    },
    /// Union several recordings of the same site (other models, other seeds, a human) into one frozen web:
    /// every exchange of the first snapshot, then of the next, and so on. Replay answers a request several
    /// of them recorded with the first one's responses first (then the next's); requests only the others
    /// recorded fill its gaps. Seed (clock, random) and recording name come from the first. Bodies are
    /// shared, not copied. Run again after an interruption, it replaces its unfinished result.
    ///
    /// With `--runs`, the names are whole recordings (`webfreeze run --mode record` names each task's
    /// snapshot `RUN/TASK`): every task any of them recorded is merged into `INTO/TASK`, task by task (a
    /// task only one of them recorded is copied). Run again after an interruption, it skips the tasks
    /// already merged and redoes the one left unfinished.
    Merge {
        /// The snapshots (or, with --runs, recordings) to merge, in order of precedence.
        #[arg(required = true, num_args = 1..)]
        sources: Vec<String>,
        /// The new snapshot (with --runs, the new recording).
        #[arg(long, value_name = "NAME")]
        into: String,
        /// Merge whole recordings (`RUN/TASK` snapshots), task by task.
        #[arg(long)]
        runs: bool,
    },
    /// Explore a recording made by any harness (BrowserGym, Playwright, `webfreeze record`): its recorded
    /// documents are revisited live in Chromium, each with the cookies it was recorded with, and from each
    /// the links an agent could have followed are opened as `run --mode record --explore` does (same-site
    /// links only, never forms or destructive-looking links, within the budgets; a host that answers with
    /// a wall or a rate limit is not explored further). Everything is recorded into `NAME/explore`
    /// (replaced), which replay consults after NAME itself and before the site union. Needs the sites live.
    Explore {
        /// The snapshot to explore from.
        name: String,
        /// Links opened per revisited page.
        #[arg(long, default_value_t = 8, value_name = "N")]
        explore_links: usize,
        /// Pages opened per host.
        #[arg(long, default_value_t = 40, value_name = "N")]
        explore_host_budget: usize,
        /// 1: the revisited pages' links; 2: also those pages' links.
        #[arg(long, default_value_t = 1, value_name = "N")]
        explore_depth: u32,
        /// Milliseconds between two page loads.
        #[arg(long, default_value_t = 0, value_name = "MS")]
        explore_pace_ms: u64,
        /// A page has settled when no request has been in flight, started or ended, for this many
        /// milliseconds (exploration's background tabs draw no frames, so this quiet period alone
        /// decides there; hence a longer default than `run`'s).
        #[arg(long, default_value_t = 500, value_name = "MS")]
        settle_ms: u64,
        /// Browser binary [default: the first of /usr/bin/chromium, chromium-browser, google-chrome].
        #[arg(long, env = crate::env_names::WEBFREEZE_CHROME, value_name = "PATH")]
        chrome: Option<PathBuf>,
        #[command(flatten)]
        upstream: crate::cli::UpstreamArgs,
    },
    /// Crawl a recorded site in Chromium into its crawl layer, so paths no task recorded stay on the frozen
    /// web. Breadth-first from every document the recording RUN recorded on site SITE (and --start URLs),
    /// on the site's own hosts only (--host adds one),
    /// the page as an agent sees it (scripts run), its links in the order an agent meets them (main content
    /// first, the site's chrome once, tool and account pages last); never a form, never a link that would
    /// act (add to cart, delete, log out, ...); robots.txt honoured (--ignore-robots for sites you own); a
    /// host that answers with a wall or a rate limit is stopped. Each call records the next part
    /// `RUN/crawl/SITE/NNN`; the crawl's state is kept after every page, so a stopped crawl resumes where it
    /// was with the same command (no page is loaded twice; --pages is the budget over all calls). Replay
    /// (`run --mode replay` with `--frozen-web site`, `replay --frozen-web site`) consults it after the
    /// task's own snapshot, its exploration and the site union. Needs the site live.
    Crawl {
        /// The recording (the `--out` name of `run --mode record`, the RUN of its `RUN/TASK` snapshots).
        run: String,
        /// The site (its tasks' `web_name`); `snapshots list` shows the labels.
        #[arg(long)]
        site: String,
        /// More URLs to start from (their hosts are the site's). Repeatable.
        #[arg(long = "start", value_name = "URL")]
        starts: Vec<String>,
        /// Another host whose pages the crawl may load. Without it the crawl keeps to the site's own hosts:
        /// those of the pages its tasks started on, of --start URLs, and their recorded subdomains; never
        /// the frames the pages embed (ads, widgets) or sites a task left for. Repeatable.
        #[arg(long = "host", value_name = "HOST")]
        hosts: Vec<String>,
        /// Pages loaded for the site, over every call.
        #[arg(long, default_value_t = 200, value_name = "N")]
        pages: usize,
        /// Link depth from the start pages.
        #[arg(long, default_value_t = 6, value_name = "N")]
        depth: u32,
        /// Milliseconds between the starts of two page loads of one host (be gentle with sites you do not
        /// own).
        #[arg(long, default_value_t = 200, value_name = "MS")]
        pace_ms: u64,
        /// Browsers loading pages at once (each about 150-300 MiB; each loads one page at a time).
        #[arg(long, default_value_t = 1, value_name = "N")]
        browsers: usize,
        /// Pages of one host loaded at once, at most, whatever --browsers is (1: one after another).
        #[arg(long, default_value_t = 1, value_name = "N")]
        per_host: usize,
        /// Do not read robots.txt: only for sites you own or are allowed to crawl.
        #[arg(long)]
        ignore_robots: bool,
        /// A page has settled when no request has been in flight for this many milliseconds.
        #[arg(long, default_value_t = 300, value_name = "MS")]
        settle_ms: u64,
        /// Browser binary [default: the first of /usr/bin/chromium, chromium-browser, google-chrome].
        #[arg(long, env = crate::env_names::WEBFREEZE_CHROME, value_name = "PATH")]
        chrome: Option<PathBuf>,
        #[command(flatten)]
        upstream: crate::cli::UpstreamArgs,
    },
    /// Derive and store what replay reads from sealed snapshots: the frozen search engine's index (the
    /// full-text index of their pages that replay's `--search` answers from) and, for a recording's task,
    /// exploration and crawl snapshots, their site union entries (what `--frozen-web site` reads instead of
    /// checking and scanning every recording of the site at task start). Recording, import and merge do it
    /// already; run this for snapshots made by an older webfreeze, for one whose index replay reports
    /// damaged, or after the index version changed. It replaces the stored index; `gc` frees the old one.
    #[command(alias = "derive")]
    SearchIndex {
        /// The snapshots to index.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        names: Vec<String>,
        /// Every snapshot in the store.
        #[arg(long)]
        all: bool,
    },
    /// Derive snapshots' request keys and path index again with this webfreeze's key derivation, from the
    /// requests they recorded, and check every exchange is found by its own key. Replay refuses a snapshot
    /// recorded with another key version until it is migrated (its exact hits would otherwise turn into
    /// misses silently). One atomic write per snapshot: an interrupted migration leaves it as it was.
    Migrate {
        /// The snapshots to migrate.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        names: Vec<String>,
        /// Every snapshot in the store whose key version is not this webfreeze's.
        #[arg(long)]
        all: bool,
    },
    /// Recompute every body's hash and check every reference; exit 1 if anything is damaged.
    Verify {
        /// Only the blobs this snapshot references (default: the whole store).
        name: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Delete bodies that no snapshot references, and report the bytes freed.
    Gc {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Delete a snapshot (its bodies stay until `gc`).
    Rm {
        /// Snapshot name.
        name: String,
    },
    /// Import a capture file into a new snapshot. The format is sniffed from the content: HAR (JSON), WARC
    /// (plain or .warc.gz; WARC 1.1, 1.0 and 0.17) or WACZ (zip). Damaged WARC records are reported with
    /// their offset and the rest is imported.
    Import {
        /// The file to import.
        file: PathBuf,
        /// Name of the snapshot to create.
        #[arg(long)]
        snapshot: String,
        /// Print the import report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Export a snapshot to a file.
    Export {
        /// Snapshot name.
        name: String,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ExportFormat::Har)]
        format: ExportFormat,
        /// Output file ("-" for stdout; not for wacz). With --format warc, a name ending in .gz writes
        /// each record as its own gzip member (.warc.gz).
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ExportFormat {
    /// HAR 1.2 (bodies as text, or base64 when binary).
    Har,
    /// WARC 1.1: request, response and revisit records, payload digests.
    Warc,
    /// WACZ 1.1.1: the WARC (gzip), a CDXJ index, pages.jsonl and datapackage.json with their hashes.
    Wacz,
}

#[derive(Debug, Subcommand)]
pub(crate) enum CaCmd {
    /// Create the CA in $WEBFREEZE_HOME/ca (private key mode 0600). Other commands create it on first use.
    Init {
        /// Replace an existing CA (clients trusting the old one must be updated).
        #[arg(long)]
        force: bool,
    },
    /// Show the CA's subject, validity and SPKI hash (for Chromium's --ignore-certificate-errors-spki-list).
    Show {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Trust the CA certificate (never the key) in an NSS database, the store Chromium and Firefox read on
    /// Linux: for harnesses that launch the browser themselves and take no certificate flag. Needs
    /// `certutil` (Debian: `apt-get install -y libnss3-tools`). Replaces an earlier webfreeze entry.
    Install {
        /// The NSS database directory, created when missing [default: ~/.pki/nssdb, Chromium's on Linux;
        /// a browser started with another HOME reads $HOME/.pki/nssdb of that HOME].
        #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "", required = true)]
        nssdb: Option<PathBuf>,
    },
    /// Write the CA certificate (never the key), to trust it in a browser or curl (--cacert).
    Export {
        /// Certificate encoding.
        #[arg(long, value_enum, default_value_t = CertFormat::Pem)]
        format: CertFormat,
        /// Output file (default: stdout, PEM only).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum CertFormat {
    /// PEM text.
    Pem,
    /// DER binary.
    Der,
}

#[derive(Debug, Subcommand)]
pub(crate) enum BundleCmd {
    /// Write one file holding a run's snapshots (bodies deduplicated, compressed), its run directory and
    /// task file, and a manifest with the BLAKE3 of every part and a root hash naming the bundle.
    Create {
        /// A run directory (its snapshots are those run.json names), or a snapshot name / prefix
        /// (every snapshot NAME/...).
        source: String,
        /// The bundle file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Check every part of a bundle (hashes, body names, exchange records) without importing it; exit 1
    /// naming the damaged part.
    Verify {
        /// The bundle file.
        file: PathBuf,
    },
    /// Verify a bundle, then load its snapshots into the store (a re-import changes nothing) and its run
    /// directory beside them; replay then works offline.
    Import {
        /// The bundle file.
        file: PathBuf,
        /// Import under this run name instead (snapshots NAME/<task-id>); needed when the store holds
        /// other snapshots of the bundle's names.
        #[arg(long, value_name = "NAME")]
        rename: Option<String>,
        /// Where the run directory goes [default: ./<run name>].
        #[arg(long, value_name = "DIR")]
        run_dir: Option<PathBuf>,
    },
    /// Upload a bundle to object storage, content-addressed: parts the bucket already holds are skipped
    /// (an interrupted push resumes), large parts go up in multipart uploads, the manifest last. Prints
    /// the root hash. Credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN, AWS_REGION).
    Push {
        /// The bundle file.
        file: PathBuf,
        /// Where: s3://BUCKET[/PREFIX].
        url: String,
        /// An S3-compatible server (MinIO, moto, Ceph...) [env: AWS_ENDPOINT_URL].
        #[arg(long, value_name = "URL")]
        endpoint: Option<String>,
    },
    /// Download a bundle pushed before (by root hash, or by the run name it was pushed under), checking
    /// every part; an interrupted pull resumes from the parts it has (kept in FILE.parts/).
    Pull {
        /// Where: s3://BUCKET[/PREFIX].
        url: String,
        /// The bundle's root hash, or its name.
        which: String,
        /// The bundle file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// An S3-compatible server [env: AWS_ENDPOINT_URL].
        #[arg(long, value_name = "URL")]
        endpoint: Option<String>,
    },
}
