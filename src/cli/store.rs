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
    /// Import a capture file into a new snapshot (HAR now; the format is sniffed from the content).
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
        /// Output file ("-" for stdout).
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ExportFormat {
    /// HAR 1.2 (bodies as text, or base64 when binary).
    Har,
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
