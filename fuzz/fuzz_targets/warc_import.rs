//! WARC record framing and import (plain or gzip).
#![no_main]
use libfuzzer_sys::fuzz_target;
use archive::warc::import_warc;
use archive::ImportOptions;
use snapshots::Store;

fuzz_target!(|data: &[u8]| {
    let store = Store::in_memory();
    let opts = ImportOptions { snapshot: "fuzz".into(), source_file: "fuzz.warc".into(), now_ms: 0 };
    let _ = import_warc(&store, data, &opts, |_| {});
});
