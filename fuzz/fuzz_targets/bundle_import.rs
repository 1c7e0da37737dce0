//! Bundle verify and import: any file is an error or a whole bundle; a bundle that verifies imports into
//! a (scratch, in-memory) store without error, and a second import changes nothing.
#![no_main]
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use snapshots::Store;

/// One scratch file per fuzzing process (bundles are read from a path).
fn scratch() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("webfreeze-fuzz-bundle-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch dir");
        d.join("input.wfz")
    })
}

fuzz_target!(|data: &[u8]| {
    let file = scratch();
    std::fs::write(file, data).expect("scratch file");
    if bundle::verify(file).is_err() {
        return;
    }
    let store = Store::in_memory();
    let run_dir = file.with_extension("run");
    let _ = std::fs::remove_dir_all(&run_dir);
    let first = bundle::import(file, &store, None, Some(&run_dir)).expect("a verified bundle imports");
    let again = bundle::import(file, &store, None, Some(&run_dir)).expect("re-import");
    assert!(again.imported.is_empty(), "a re-import created {:?}", again.imported);
    assert_eq!(again.already.len(), first.imported.len());
});
