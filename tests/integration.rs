//! webfreeze's integration tests: one test binary, scenarios in modules, shared support.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod abandoned;
mod agent_run;
mod architecture;
mod assistantbench;
mod bad_origins;
mod batches;
mod bundle_roundtrip;
mod bundle_s3;
mod cli_snapshots;
mod crawl_coverage;
mod dokuwiki;
mod eval_compare;
mod faults;
mod fingerprint;
mod frozen_web;
mod golden;
mod guards;
mod k8s_manifest;
mod llama_server;
mod own_wire;
mod proxy_bad_input;
mod proxy_basic;
mod proxy_chromium;
mod pywb_interop;
mod record_replay;
mod replay_chromium;
mod settle;
mod site_template;
mod slurm_shards;
mod warm_browsers;
mod webarena_actions;
mod webarena_guard;
mod webarena_helpers;
mod webarena_tasks;
mod webarena_verified;
mod websocket;
mod websocket_guard;
