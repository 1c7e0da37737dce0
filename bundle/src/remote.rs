//! Bundles in object storage (S3 and S3-compatible servers, through the `object_store` crate).
//!
//! A pushed bundle is stored content-addressed under the URL's prefix:
//! - `parts/<blake3>`: each part's bytes, named by their hash: a part the bucket already holds (from this
//!   bundle pushed before, or from another bundle sharing bodies) is not uploaded again; parts over
//!   [`MULTIPART_OVER`] go up as multipart uploads, which are invisible until complete;
//! - `bundles/<root>.json`: the bundle's manifest, written last, so a bundle is visible only once every
//!   part is there; `names/<name>`: the root of the bundle last pushed under that name.
//!
//! An interrupted push is resumed by pushing again (the parts already up are skipped). A pull fetches
//! the manifest, checks its root, fetches the parts into `<out>.parts/` (kept across an interrupted pull:
//! a part already there with the right hash is not fetched again), checks every part's BLAKE3, and
//! reassembles the bundle, byte for byte the file that was pushed, then verifies it.

use std::io::Read;
use std::path::{Path, PathBuf};

use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload, WriteMultipart};

use crate::{self as bundle, BundleError, BundleManifest};

/// Parts larger than this go up in multipart uploads of this size.
pub const MULTIPART_OVER: usize = 8 << 20;

/// Errors of push and pull.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// Not an `s3://bucket[/prefix]` URL.
    #[error("{0:?}: expected s3://BUCKET[/PREFIX]")]
    BadUrl(String),
    /// The object store failed.
    #[error("{what}: {source}")]
    Store {
        /// What was being done.
        what: String,
        /// Error.
        #[source]
        source: object_store::Error,
    },
    /// A part or manifest that is not what its name says.
    #[error("{0}")]
    Damaged(String),
    /// No such bundle.
    #[error("no bundle {0:?} at {1} (push it first, or check the name / root hash)")]
    NotFound(String, String),
    /// The bundle file.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// Local files.
    #[error("{path}: {source}")]
    Io {
        /// Path.
        path: String,
        /// Error.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RemoteError + '_ {
    move |source| RemoteError::Io { path: path.display().to_string(), source }
}

fn store_err(what: impl Into<String>) -> impl FnOnce(object_store::Error) -> RemoteError {
    let what = what.into();
    move |source| RemoteError::Store { what, source }
}

/// An `s3://bucket/prefix` location.
pub struct Remote {
    store: Box<dyn ObjectStore>,
    prefix: String,
    url: String,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote").field("url", &self.url).finish()
    }
}

/// How to reach the bucket (the binary fills it from its flags and the AWS environment variables).
#[derive(Clone, Default)]
pub struct S3Options {
    /// An S3-compatible server's URL (path-style requests; plain http allowed).
    pub endpoint: Option<String>,
    /// Region (`us-east-1` when unset).
    pub region: Option<String>,
    /// Access key id.
    pub access_key_id: Option<String>,
    /// Secret access key.
    pub secret_access_key: Option<String>,
    /// Session token (temporary credentials).
    pub session_token: Option<String>,
}

impl std::fmt::Debug for S3Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets.
        f.debug_struct("S3Options").field("endpoint", &self.endpoint).field("region", &self.region).finish()
    }
}

impl Remote {
    /// Open `s3://bucket[/prefix]`.
    pub fn open(url: &str, o: &S3Options) -> Result<Remote, RemoteError> {
        let rest = url.strip_prefix("s3://").ok_or_else(|| RemoteError::BadUrl(url.to_string()))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(RemoteError::BadUrl(url.to_string()));
        }
        let mut b = AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_region(o.region.clone().unwrap_or_else(|| "us-east-1".into()));
        if let Some(k) = &o.access_key_id {
            b = b.with_access_key_id(k);
        }
        if let Some(k) = &o.secret_access_key {
            b = b.with_secret_access_key(k);
        }
        if let Some(t) = &o.session_token {
            b = b.with_token(t);
        }
        if let Some(e) = &o.endpoint {
            b = b
                .with_endpoint(e)
                .with_allow_http(e.starts_with("http://"))
                .with_virtual_hosted_style_request(false);
        }
        let store = b.build().map_err(store_err(format!("opening {url}")))?;
        Ok(Remote {
            store: Box::new(store),
            prefix: prefix.trim_matches('/').to_string(),
            url: url.to_string(),
        })
    }

    fn path(&self, rel: &str) -> ObjectPath {
        if self.prefix.is_empty() {
            ObjectPath::from(rel)
        } else {
            ObjectPath::from(format!("{}/{rel}", self.prefix))
        }
    }

    async fn exists(&self, rel: &str) -> Result<bool, RemoteError> {
        match self.store.head(&self.path(rel)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(store_err(format!("checking {rel}"))(e)),
        }
    }

    async fn put(&self, rel: &str, bytes: &[u8]) -> Result<(), RemoteError> {
        let path = self.path(rel);
        if bytes.len() <= MULTIPART_OVER {
            self.store
                .put(&path, PutPayload::from(bytes.to_vec()))
                .await
                .map_err(store_err(format!("uploading {rel}")))?;
            return Ok(());
        }
        let upload = self.store.put_multipart(&path).await.map_err(store_err(format!("uploading {rel}")))?;
        let mut w = WriteMultipart::new_with_chunk_size(upload, MULTIPART_OVER);
        for chunk in bytes.chunks(MULTIPART_OVER) {
            w.wait_for_capacity(4).await.map_err(store_err(format!("uploading {rel}")))?;
            w.write(chunk);
        }
        w.finish().await.map_err(store_err(format!("uploading {rel}")))?;
        Ok(())
    }

    async fn get(&self, rel: &str) -> Result<Option<Vec<u8>>, RemoteError> {
        match self.store.get(&self.path(rel)).await {
            Ok(r) => Ok(Some(r.bytes().await.map_err(store_err(format!("downloading {rel}")))?.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(store_err(format!("downloading {rel}"))(e)),
        }
    }
}

/// What a push did.
#[derive(Debug, Clone, Default)]
pub struct PushReport {
    /// The bundle's root hash.
    pub root: String,
    /// Parts uploaded now.
    pub uploaded: usize,
    /// Parts the bucket already had.
    pub skipped: usize,
    /// Bytes uploaded.
    pub bytes: u64,
}

/// Upload the bundle `file` to `remote` (verified first; parts already there are skipped).
pub async fn push(
    file: &Path,
    remote: &Remote,
    progress: &dyn Fn(usize, usize),
) -> Result<PushReport, RemoteError> {
    let checked = bundle::verify(file)?;
    let m = &checked.manifest;
    let mut report = PushReport { root: m.root.clone(), ..Default::default() };
    let f = std::fs::File::open(file).map_err(io(file))?;
    let mut ar = tar::Archive::new(std::io::BufReader::new(f));
    let mut manifest_bytes = None;
    let entries = ar.entries().map_err(io(file))?;
    for (i, entry) in entries.enumerate() {
        let mut entry = entry.map_err(io(file))?;
        let path = entry.path().map_err(io(file))?.to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(io(file))?;
        if path == bundle::MANIFEST_PATH {
            manifest_bytes = Some(bytes);
            continue;
        }
        let hash = blake3::hash(&bytes).to_hex().to_string();
        let rel = format!("parts/{hash}");
        if remote.exists(&rel).await? {
            report.skipped += 1;
        } else {
            remote.put(&rel, &bytes).await?;
            report.uploaded += 1;
            report.bytes += bytes.len() as u64;
        }
        progress(i + 1, m.parts.len());
    }
    let manifest_bytes =
        manifest_bytes.ok_or_else(|| RemoteError::Damaged(format!("{}: no manifest", file.display())))?;
    remote.put(&format!("bundles/{}.json", m.root), &manifest_bytes).await?;
    if !m.name.is_empty() {
        remote.put(&format!("names/{}", m.name), m.root.as_bytes()).await?;
    }
    Ok(report)
}

/// What a pull did.
#[derive(Debug, Clone, Default)]
pub struct PullReport {
    /// The bundle's root hash.
    pub root: String,
    /// Parts downloaded now.
    pub downloaded: usize,
    /// Parts already fetched by an earlier, interrupted pull.
    pub resumed: usize,
}

fn is_root(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Fetch bundle `which` (a root hash, or a name pushed before) from `remote` into `out`, every part
/// checked, and verify the result.
pub async fn pull(
    remote: &Remote,
    which: &str,
    out: &Path,
    progress: &dyn Fn(usize, usize),
) -> Result<PullReport, RemoteError> {
    let root = if is_root(which) {
        which.to_string()
    } else {
        let r = remote
            .get(&format!("names/{which}"))
            .await?
            .ok_or_else(|| RemoteError::NotFound(which.to_string(), remote.url.clone()))?;
        String::from_utf8_lossy(&r).trim().to_string()
    };
    let manifest_bytes = remote
        .get(&format!("bundles/{root}.json"))
        .await?
        .ok_or_else(|| RemoteError::NotFound(which.to_string(), remote.url.clone()))?;
    let m: BundleManifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| RemoteError::Damaged(format!("bundles/{root}.json: {e}")))?;
    if bundle::root_of(&m.parts) != root || m.root != root {
        return Err(RemoteError::Damaged(format!("bundles/{root}.json does not hash to its name")));
    }
    let cache = PathBuf::from(format!("{}.parts", out.display()));
    std::fs::create_dir_all(&cache).map_err(io(&cache))?;
    let mut report = PullReport { root: root.clone(), ..Default::default() };
    for (i, p) in m.parts.iter().enumerate() {
        let local = cache.join(&p.blake3);
        let have = std::fs::read(&local).ok().filter(|b| blake3::hash(b).to_hex().as_str() == p.blake3);
        if have.is_some() {
            report.resumed += 1;
        } else {
            let bytes = remote.get(&format!("parts/{}", p.blake3)).await?.ok_or_else(|| {
                RemoteError::Damaged(format!("part {} ({}) is missing from {}", p.path, p.blake3, remote.url))
            })?;
            if blake3::hash(&bytes).to_hex().as_str() != p.blake3 || bytes.len() as u64 != p.size {
                return Err(RemoteError::Damaged(format!(
                    "part {} from {} does not match its hash",
                    p.path, remote.url
                )));
            }
            let tmp = cache.join(format!(".{}.tmp", p.blake3));
            std::fs::write(&tmp, &bytes).map_err(io(&tmp))?;
            std::fs::rename(&tmp, &local).map_err(io(&local))?;
            report.downloaded += 1;
        }
        progress(i + 1, m.parts.len());
    }
    // Reassemble: the same headers as `bundle::create` writes, so the file is the one pushed.
    let tmp = PathBuf::from(format!("{}.tmp", out.display()));
    {
        let f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        let mut tar = tar::Builder::new(std::io::BufWriter::new(f));
        for p in &m.parts {
            let bytes = std::fs::read(cache.join(&p.blake3)).map_err(io(&cache))?;
            crate::create::append_part(&mut tar, &p.path, &bytes).map_err(io(&tmp))?;
        }
        crate::create::append_part(&mut tar, bundle::MANIFEST_PATH, &manifest_bytes).map_err(io(&tmp))?;
        let mut inner = tar.into_inner().map_err(io(&tmp))?;
        std::io::Write::flush(&mut inner).map_err(io(&tmp))?;
    }
    let checked = bundle::verify(&tmp)?;
    if checked.manifest.root != root {
        return Err(RemoteError::Damaged(format!(
            "the reassembled bundle's root is {}, not {root}",
            checked.manifest.root
        )));
    }
    std::fs::rename(&tmp, out).map_err(io(out))?;
    let _ = std::fs::remove_dir_all(&cache);
    Ok(report)
}
