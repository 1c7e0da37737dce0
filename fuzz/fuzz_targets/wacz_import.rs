//! WACZ (zip of WARCs) import.
#![no_main]
use libfuzzer_sys::fuzz_target;
use archive::warc::import_wacz;
use archive::ImportOptions;
use snapshots::Store;

fuzz_target!(|data: &[u8]| {
    let store = Store::in_memory();
    let opts = ImportOptions { snapshot: "fuzz".into(), source_file: "fuzz.wacz".into(), now_ms: 0 };
    let _ = import_wacz(&store, std::io::Cursor::new(data), &opts, |_| {});
});
