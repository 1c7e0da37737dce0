//! Snapshot names as a hierarchy: `RUN/TASK`, `RUN/TASK/explore`, `RUN/crawl/SITE/NNN`. A name is under
//! another when it is that name or continues it after a `/`; moving a family of names to another prefix
//! keeps what follows the prefix. What each kind of name means is `session::names`'s (`SnapshotName`);
//! these are the two operations on the hierarchy that anything holding snapshots needs (a bundle selects
//! a family and imports it under another run).

/// Whether `name` is `prefix` or a name under it (`prefix/...`).
pub fn is_under(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// `name` moved from under `from` to under `to` (`from/x` -> `to/x`, `from` -> `to`); a name not under
/// `from` is put under `to` whole (`y` -> `to/y`).
pub fn moved(name: &str, from: &str, to: &str) -> String {
    if is_under(name, from) {
        format!("{to}{}", &name[from.len()..])
    } else {
        format!("{to}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_of_names() {
        for (name, prefix, under) in [
            ("rec/1", "rec", true),
            ("rec", "rec", true),
            ("rec/1/explore", "rec/1", true),
            ("record/1", "rec", false),
            ("rec1", "rec", false),
            ("", "rec", false),
        ] {
            assert_eq!(is_under(name, prefix), under, "{name} under {prefix}");
        }
        assert_eq!(moved("rec/1/explore", "rec", "new"), "new/1/explore");
        assert_eq!(moved("rec", "rec", "new"), "new");
        assert_eq!(moved("other/1", "rec", "new"), "new/other/1");
        assert_eq!(moved("recx/1", "rec", "new"), "new/recx/1");
    }
}
