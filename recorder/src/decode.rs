//! Streaming content-decoding into the store.
//!
//! The decoded body goes to one blob writer through a write-side decoder (flate2, brotli, zstd); the raw
//! wire bytes go to a second blob writer in parallel, used only if decoding fails, so a failure needs no
//! second pass and loses nothing. Raw chunks written for a successful decode are orphans that `gc` removes.
//!
//! A store error is not a decoding failure: the first one (on either writer, also from inside a decoder,
//! which sees it as an I/O error) is kept as it was and returned by [`Decoding::finish`], so the exchange
//! is not stored with a body that lost a chunk and the recorder reports the store's own error.

use std::io::Write;
use std::sync::{Arc, Mutex};

use snapshots::{BlobWriter, BodyRef, Store, StoreError};

/// The first store error of one body, shared by its writers.
type StoreFailure = Arc<Mutex<Option<StoreError>>>;

fn keep_first(slot: &StoreFailure, e: StoreError) {
    if let Ok(mut g) = slot.lock() {
        g.get_or_insert(e);
    }
}

/// Adapts a [`BlobWriter`] to `std::io::Write` for the decoders; a store error is kept in `failed` (the
/// decoder only sees an I/O error).
struct Sink {
    w: BlobWriter,
    failed: StoreFailure,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Err(e) = self.w.write(buf) {
            let msg = e.to_string();
            keep_first(&self.failed, e);
            return Err(std::io::Error::other(msg));
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How much larger than its wire size a compressed chunk is assumed to decode to, for
/// [`Decoding::may_store`] (text compresses 4-10x).
const EXPANSION: usize = 16;

enum Decoder {
    Identity(Sink),
    /// "deflate" before the first byte: zlib-wrapped per the RFC, but some servers send raw deflate.
    PendingDeflate(Sink),
    Gzip(flate2::write::MultiGzDecoder<Sink>),
    Deflate(flate2::write::ZlibDecoder<Sink>),
    RawDeflate(flate2::write::DeflateDecoder<Sink>),
    Brotli(Box<brotli::DecompressorWriter<Sink>>),
    Zstd(zstd::stream::write::Decoder<'static, Sink>),
}

/// A response body being decoded into the store.
pub struct Decoding {
    decoder: Option<Decoder>,
    raw: Option<BlobWriter>,
    failed: bool,
    /// The first store error of either writer.
    store_failed: StoreFailure,
}

impl std::fmt::Debug for Decoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoding").field("failed", &self.failed).finish()
    }
}

impl Decoding {
    /// Start decoding a body with the given Content-Encoding (None or unknown: stored as is).
    pub fn new(store: &Store, content_encoding: Option<&str>) -> Self {
        let store_failed = StoreFailure::default();
        let sink = Sink { w: store.blob_writer(), failed: store_failed.clone() };
        let enc = content_encoding.map(|e| e.trim().to_ascii_lowercase());
        let decoder = match enc.as_deref() {
            Some("gzip") | Some("x-gzip") => Decoder::Gzip(flate2::write::MultiGzDecoder::new(sink)),
            Some("deflate") => Decoder::PendingDeflate(sink),
            Some("br") => Decoder::Brotli(Box::new(brotli::DecompressorWriter::new(sink, 64 * 1024))),
            Some("zstd") => match zstd::stream::write::Decoder::new(sink) {
                Ok(d) => Decoder::Zstd(d),
                Err(_) => Decoder::Identity(Sink { w: store.blob_writer(), failed: store_failed.clone() }),
            },
            _ => Decoder::Identity(sink),
        };
        let raw = (!matches!(decoder, Decoder::Identity(_))).then(|| store.blob_writer());
        Self { decoder: Some(decoder), raw, failed: false, store_failed }
    }

    /// Whether feeding `n` wire bytes may write to the store (a chunk of the raw or the decoded body
    /// fills), so a caller on an async worker offloads it. Decoded sizes are not known before decoding:
    /// a compressed body counts as [`EXPANSION`] times its wire size, so a flush is rarely missed (one
    /// missed runs inline, as every write did before).
    pub fn may_store(&self, n: usize) -> bool {
        let raw = self.raw.as_ref().is_some_and(|r| r.write_flushes(n));
        let decoded = match self.decoder.as_ref() {
            Some(Decoder::Identity(s)) | Some(Decoder::PendingDeflate(s)) => s.w.write_flushes(n),
            Some(Decoder::Gzip(d)) => d.get_ref().w.write_flushes(n * EXPANSION),
            Some(Decoder::Deflate(d)) => d.get_ref().w.write_flushes(n * EXPANSION),
            Some(Decoder::RawDeflate(d)) => d.get_ref().w.write_flushes(n * EXPANSION),
            Some(Decoder::Brotli(d)) => d.get_ref().w.write_flushes(n * EXPANSION),
            Some(Decoder::Zstd(d)) => d.get_ref().w.write_flushes(n * EXPANSION),
            None => false,
        };
        raw || decoded
    }

    /// Feed wire bytes.
    pub fn write(&mut self, chunk: &[u8]) {
        if let Some(raw) = self.raw.as_mut() {
            if let Err(e) = raw.write(chunk) {
                keep_first(&self.store_failed, e);
            }
        }
        if self.failed {
            return;
        }
        if let Some(Decoder::PendingDeflate(_)) = self.decoder {
            if let Some(Decoder::PendingDeflate(sink)) = self.decoder.take() {
                let zlib = chunk.len() > 1
                    && chunk[0] & 0x0f == 8
                    && (u16::from(chunk[0]) << 8 | u16::from(chunk[1])) % 31 == 0;
                self.decoder = Some(if zlib {
                    Decoder::Deflate(flate2::write::ZlibDecoder::new(sink))
                } else {
                    Decoder::RawDeflate(flate2::write::DeflateDecoder::new(sink))
                });
            }
        }
        let r = match self.decoder.as_mut() {
            Some(Decoder::Identity(s)) => s.write_all(chunk),
            Some(Decoder::PendingDeflate(s)) => s.write_all(chunk),
            Some(Decoder::Gzip(d)) => d.write_all(chunk),
            Some(Decoder::Deflate(d)) => d.write_all(chunk),
            Some(Decoder::RawDeflate(d)) => d.write_all(chunk),
            Some(Decoder::Brotli(d)) => d.write_all(chunk),
            Some(Decoder::Zstd(d)) => d.write_all(chunk),
            None => Ok(()),
        };
        if r.is_err() {
            self.failed = true;
        }
    }

    /// Store the body: the decoded one, or the raw bytes if decoding failed. Returns the body and
    /// whether decoding failed; or the first store error met on the way (then nothing is stored).
    pub fn finish(mut self) -> Result<(BodyRef, bool), StoreError> {
        let failed = |slot: &StoreFailure| slot.lock().ok().and_then(|mut g| g.take());
        if let Some(e) = failed(&self.store_failed) {
            return Err(e);
        }
        let decoded: Result<Sink, ()> = match self.decoder.take() {
            _ if self.failed => Err(()),
            Some(Decoder::Identity(s)) | Some(Decoder::PendingDeflate(s)) => Ok(s),
            Some(Decoder::Gzip(d)) => d.finish().map_err(|_| ()),
            Some(Decoder::Deflate(d)) => d.finish().map_err(|_| ()),
            Some(Decoder::RawDeflate(d)) => d.finish().map_err(|_| ()),
            Some(Decoder::Brotli(mut d)) => match d.close() {
                Ok(()) => d.into_inner().map_err(|_| ()),
                Err(_) => Err(()),
            },
            Some(Decoder::Zstd(mut d)) => match d.flush() {
                Ok(()) => Ok(d.into_inner()),
                Err(_) => Err(()),
            },
            None => Err(()),
        };
        // Finishing a decoder writes its last output: a store error there is the store's, too.
        if let Some(e) = failed(&self.store_failed) {
            return Err(e);
        }
        match decoded {
            Ok(sink) => Ok((sink.w.finish()?, false)),
            Err(()) => match self.raw.take() {
                Some(raw) => Ok((raw.finish()?, true)),
                None => Err(StoreError::Backend("body decoder lost its output".into())),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(kind: &str, data: &[u8]) -> Vec<u8> {
        use std::io::Write as _;
        match kind {
            "gzip" => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            "deflate" => {
                let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            "raw-deflate" => {
                let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            "br" => {
                let mut out = Vec::new();
                brotli::BrotliCompress(
                    &mut &data[..],
                    &mut out,
                    &brotli::enc::BrotliEncoderParams::default(),
                )
                .unwrap();
                out
            }
            "zstd" => zstd::bulk::compress(data, 3).unwrap(),
            _ => data.to_vec(),
        }
    }

    #[test]
    fn decoding_table() {
        let body: Vec<u8> = (0..200_000u32).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        let store = Store::in_memory();
        for (header, wire_kind, expect_decoded) in [
            (Some("gzip"), "gzip", true),
            (Some("x-gzip"), "gzip", true),
            (Some("deflate"), "deflate", true),
            (Some("deflate"), "raw-deflate", true),
            (Some("br"), "br", true),
            (Some("zstd"), "zstd", true),
            (None, "identity", true),
            (Some("identity"), "identity", true),
            (Some("gzip"), "identity", false),
            (Some("br"), "gzip", false),
        ] {
            let wire = enc(wire_kind, &body);
            let mut d = Decoding::new(&store, header);
            for piece in wire.chunks(7_777) {
                d.write(piece);
            }
            let (r, failed) = d.finish().unwrap();
            assert_eq!(failed, !expect_decoded, "{header:?} over {wire_kind}");
            let stored = store.blob_bytes(&r.hash).unwrap();
            if expect_decoded {
                assert!(stored == body, "{header:?} over {wire_kind}: decoded body differs");
            } else {
                assert!(stored == wire, "{header:?} over {wire_kind}: raw bytes kept");
            }
        }
    }

    #[test]
    fn a_store_error_is_reported_as_the_stores_not_as_a_decoding_failure() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open(dir.path()).unwrap());
        // A read-only store refuses the first chunk a body fills.
        let store = Store::open_read_only(dir.path()).unwrap();
        let body: Vec<u8> = (0..1_200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let direct =
            store.blob_writer().write(&body).expect_err("a read-only store refuses a chunk").to_string();
        for (header, wire_kind) in [(None, "identity"), (Some("gzip"), "gzip"), (Some("br"), "br")] {
            let wire = enc(wire_kind, &body);
            let mut d = Decoding::new(&store, header);
            for c in wire.chunks(64 * 1024) {
                d.write(c);
            }
            match d.finish() {
                Ok((_, decode_failed)) => {
                    panic!("{header:?}: stored (decode_failed {decode_failed}) on a read-only store")
                }
                Err(e) => assert_eq!(e.to_string(), direct, "{header:?}: the store's own error"),
            }
        }
    }
}
