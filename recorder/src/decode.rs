//! Streaming content-decoding into the store.
//!
//! The decoded body goes to one blob writer through a write-side decoder (flate2, brotli, zstd); the raw
//! wire bytes go to a second blob writer in parallel, used only if decoding fails, so a failure needs no
//! second pass and loses nothing. Raw chunks written for a successful decode are orphans that `gc` removes.

use std::io::Write;

use snapshots::{BlobWriter, BodyRef, Store, StoreError};

/// Adapts a [`BlobWriter`] to `std::io::Write` for the decoders.
struct Sink(BlobWriter);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(std::io::Error::other)?;
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
}

impl std::fmt::Debug for Decoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoding").field("failed", &self.failed).finish()
    }
}

impl Decoding {
    /// Start decoding a body with the given Content-Encoding (None or unknown: stored as is).
    pub fn new(store: &Store, content_encoding: Option<&str>) -> Self {
        let sink = Sink(store.blob_writer());
        let enc = content_encoding.map(|e| e.trim().to_ascii_lowercase());
        let decoder = match enc.as_deref() {
            Some("gzip") | Some("x-gzip") => Decoder::Gzip(flate2::write::MultiGzDecoder::new(sink)),
            Some("deflate") => Decoder::PendingDeflate(sink),
            Some("br") => Decoder::Brotli(Box::new(brotli::DecompressorWriter::new(sink, 64 * 1024))),
            Some("zstd") => match zstd::stream::write::Decoder::new(sink) {
                Ok(d) => Decoder::Zstd(d),
                Err(_) => Decoder::Identity(Sink(store.blob_writer())),
            },
            _ => Decoder::Identity(sink),
        };
        let raw = (!matches!(decoder, Decoder::Identity(_))).then(|| store.blob_writer());
        Self { decoder: Some(decoder), raw, failed: false }
    }

    /// Whether feeding `n` wire bytes may write to the store (a chunk of the raw or the decoded body
    /// fills), so a caller on an async worker offloads it. Decoded sizes are not known before decoding:
    /// a compressed body counts as [`EXPANSION`] times its wire size, so a flush is rarely missed (one
    /// missed runs inline, as every write did before).
    pub fn may_store(&self, n: usize) -> bool {
        let raw = self.raw.as_ref().is_some_and(|r| r.write_flushes(n));
        let decoded = match self.decoder.as_ref() {
            Some(Decoder::Identity(s)) | Some(Decoder::PendingDeflate(s)) => s.0.write_flushes(n),
            Some(Decoder::Gzip(d)) => d.get_ref().0.write_flushes(n * EXPANSION),
            Some(Decoder::Deflate(d)) => d.get_ref().0.write_flushes(n * EXPANSION),
            Some(Decoder::RawDeflate(d)) => d.get_ref().0.write_flushes(n * EXPANSION),
            Some(Decoder::Brotli(d)) => d.get_ref().0.write_flushes(n * EXPANSION),
            Some(Decoder::Zstd(d)) => d.get_ref().0.write_flushes(n * EXPANSION),
            None => false,
        };
        raw || decoded
    }

    /// Feed wire bytes.
    pub fn write(&mut self, chunk: &[u8]) {
        if let Some(raw) = self.raw.as_mut() {
            if let Err(e) = raw.write(chunk) {
                tracing::error!("recording raw body: {e}");
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
    /// whether decoding failed.
    pub fn finish(mut self) -> Result<(BodyRef, bool), StoreError> {
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
        match decoded {
            Ok(sink) => Ok((sink.0.finish()?, false)),
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
}
