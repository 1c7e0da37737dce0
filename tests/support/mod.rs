//! Test support, one module per kind of fixture:
//! - [`origin`]: local origin servers (HTTP and HTTPS with a throwaway CA, h1 and h2);
//! - [`client`]: a client that goes through a proxy (absolute-form for http, CONNECT + TLS for https);
//! - [`bin`]: the `webfreeze` binary as a child process, reading its `listening on ADDR` line;
//! - [`llm`]: a fake OpenAI-compatible model server;
//! - [`llama`]: a real one (llama-cpp-python's server with a small model);
//! - [`demo_sites`]: the bundled demo sites on loopback;
//! - [`dokuwiki`]: Debian's DokuWiki behind nginx (TLS) and php-fpm on loopback;
//! - [`login_app`]: a sign-in application on the origin whose cookies and cached resources live seconds;
//! - [`fingerprint`]: a TLS origin that fingerprints clients (JA4, HTTP/2) and can act as a bot wall;
//! - [`s3`]: a real S3-compatible server (moto) on loopback;
//! - [`pywb`]: pywb's collection manager, indexer and replay server;
//! - [`slurm`]: a single-node Slurm cluster (munged, slurmctld, slurmd) on localhost;
//! - [`guard_origin`]: an origin for the guards (an order form, a search form, a leaked answer, a link to
//!   published answers);
//! - [`ws_origin`]: a WebSocket origin (a ticker, an echo, a JSON-RPC server) and a page that renders them;
//! - [`scripted`]: a one-task file, a script of replies for it, and the `webfreeze run` arguments;
//! - [`batch_origin`]: pages that batch their script modules as MediaWiki's ResourceLoader does;
//! - [`in_process`]: a recording into an in-memory store and a proxy served in the test's process.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub(crate) mod batch_origin;
pub(crate) mod bin;
pub(crate) mod client;
pub(crate) mod crawl_origin;
pub(crate) mod demo_sites;
pub(crate) mod dokuwiki;
pub(crate) mod fingerprint;
pub(crate) mod guard_origin;
pub(crate) mod in_process;
pub(crate) mod llama;
pub(crate) mod llm;
pub(crate) mod login_app;
pub(crate) mod origin;
pub(crate) mod pywb;
pub(crate) mod s3;
pub(crate) mod scripted;
pub(crate) mod slurm;
pub(crate) mod ws_origin;

pub(crate) use batch_origin::*;
pub(crate) use bin::*;
pub(crate) use client::*;
pub(crate) use crawl_origin::*;
pub(crate) use demo_sites::*;
pub(crate) use dokuwiki::*;
pub(crate) use fingerprint::*;
pub(crate) use guard_origin::*;
pub(crate) use in_process::*;
pub(crate) use llama::*;
pub(crate) use llm::*;
pub(crate) use login_app::*;
pub(crate) use origin::*;
pub(crate) use pywb::*;
pub(crate) use s3::*;
pub(crate) use scripted::*;
pub(crate) use slurm::*;
pub(crate) use ws_origin::*;
