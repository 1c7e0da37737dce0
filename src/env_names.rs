//! Every environment variable webfreeze reads, by name. `config` resolves them (command line >
//! environment > default); the command line's definitions (`cli`) name them for `--help`.

/// Root of webfreeze's data: `store/` and `ca/` live under it.
pub(crate) const WEBFREEZE_HOME: &str = "WEBFREEZE_HOME";
/// XDG base directory for data (used when WEBFREEZE_HOME is unset).
pub(crate) const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
/// Home directory (used when XDG_DATA_HOME is unset).
pub(crate) const HOME: &str = "HOME";
/// Log filter, as tracing-subscriber reads it.
pub(crate) const RUST_LOG: &str = "RUST_LOG";
/// Time zone recorded in new snapshots when --time-zone is not given.
pub(crate) const TZ: &str = "TZ";
/// The browser binary for `run` and `demo` (--chrome wins).
pub(crate) const WEBFREEZE_CHROME: &str = "WEBFREEZE_CHROME";
/// Base URL of the OpenAI-compatible model API (--api-base wins).
pub(crate) const OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// The model API key: read from the variable --api-key-env names, this one by default.
pub(crate) const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// Object storage (`bundle push|pull`): an S3-compatible server (--endpoint wins).
pub(crate) const AWS_ENDPOINT_URL: &str = "AWS_ENDPOINT_URL";
/// Object storage: region (`AWS_DEFAULT_REGION` too; us-east-1 when neither is set).
pub(crate) const AWS_REGION: &str = "AWS_REGION";
/// Object storage: region, the older name.
pub(crate) const AWS_DEFAULT_REGION: &str = "AWS_DEFAULT_REGION";
/// Object storage: access key id.
pub(crate) const AWS_ACCESS_KEY_ID: &str = "AWS_ACCESS_KEY_ID";
/// Object storage: secret access key.
pub(crate) const AWS_SECRET_ACCESS_KEY: &str = "AWS_SECRET_ACCESS_KEY";
/// Object storage: session token of temporary credentials.
pub(crate) const AWS_SESSION_TOKEN: &str = "AWS_SESSION_TOKEN";
/// The shop admin's user name for WebArena's shop REST helpers (WebArena's `admin` when unset).
pub(crate) const WEBFREEZE_SHOPPING_ADMIN_USER: &str = "WEBFREEZE_SHOPPING_ADMIN_USER";
/// The shop admin's password for those helpers (WebArena's published one when unset).
pub(crate) const WEBFREEZE_SHOPPING_ADMIN_PASSWORD: &str = "WEBFREEZE_SHOPPING_ADMIN_PASSWORD";
/// Fault points to arm (`name=action;...`): read by fail-rs when `main` calls
/// `fail::FailScenario::setup`, and only in builds with `--features faults` (the tests').
#[allow(dead_code)] // read by fail-rs, not by name here
pub(crate) const FAILPOINTS: &str = "FAILPOINTS";
/// The number of async worker threads: read by tokio's runtime builder in `main` (the tests set 1).
#[allow(dead_code)] // read by tokio, not by name here
pub(crate) const TOKIO_WORKER_THREADS: &str = "TOKIO_WORKER_THREADS";
