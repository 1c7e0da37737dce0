//! Unions derived at seal: a named group of sealed snapshots that a replay layers together (`session`'s site
//! union: the recordings, explorations and crawl parts of one site in one recording), with which member
//! holds each host-and-path, so that a replay over a union of thousands needs neither to check each member
//! nor to read each one's path index when a task starts.
//!
//! A snapshot joins a union once, when it is sealed, imported or merged ([`Store::join_union`]): it is
//! checked then (its records and key index against its manifest, [`Store::check_snapshot`]), and one
//! entry per host-and-path it holds is written with its membership record, in one atomic batch. A replay
//! then lists the members ([`Store::union_members`]) and asks, per request, which members hold its address
//! ([`Store::union_holders`], one prefix read).
//!
//! Derived, not recorded: the entries follow the snapshot. [`Store::remove`] drops them, a key migration
//! derives them again with the new path index, and a membership of another [`UNION_VERSION`] or key version
//! is ignored by its readers (which fall back to checking and reading the member themselves).
//!
//! Keys of [`Table::Unions`] (a union is named by the first 16 bytes of its name's blake3 hash, `uid`):
//! - `m` uid id -> [`UnionMember`] record;
//! - `p` uid path-digest id -> empty;
//! - `s` id uid -> empty (which unions a snapshot is in, for its removal).

use super::{id_prefix, Store};
use crate::format::{decode_union_member, encode_union_member, Manifest, SnapshotState, UnionMember};
use crate::kv::{Batch, Table};
use crate::StoreError;

/// How a union's entries are derived. A membership written by another version is ignored by readers.
pub const UNION_VERSION: u32 = 1;

type Uid = [u8; 16];

fn uid(union: &str) -> Uid {
    let h = blake3::hash(union.as_bytes());
    let mut u = [0; 16];
    u.copy_from_slice(&h.as_bytes()[..16]);
    u
}

fn member_key(u: &Uid, id: u64) -> Vec<u8> {
    [&b"m"[..], u, &id.to_be_bytes()].concat()
}

fn path_key(u: &Uid, digest: &[u8; 32], id: u64) -> Vec<u8> {
    [&b"p"[..], u, digest, &id.to_be_bytes()].concat()
}

fn snapshot_key(id: u64, u: &Uid) -> Vec<u8> {
    [&b"s"[..], &id.to_be_bytes(), u].concat()
}

impl Store {
    /// Add sealed snapshot `m` to `union`: check it, then write its membership and one entry per
    /// host-and-path it holds, atomically. Joining again (a replaced or migrated snapshot) writes it anew.
    pub fn join_union(&self, union: &str, m: &Manifest) -> Result<(), StoreError> {
        self.check_writable()?;
        if m.state == SnapshotState::Recording {
            return Err(StoreError::BadState {
                name: m.name.clone(),
                state: m.state.to_string(),
                what: "a snapshot being recorded cannot join a union",
            });
        }
        self.check_snapshot(m)?;
        let u = uid(union);
        let digests = self.path_digests(m)?;
        let mut b = Batch::default();
        // Its earlier entries in this union go first; what is put after them in the batch wins.
        self.leave_unions(m.id, &mut b, Some(&u))?;
        let record = UnionMember {
            union: union.to_string(),
            name: m.name.clone(),
            id: m.id,
            exchanges: m.counts.exchanges,
            key_version: m.key_version,
            union_version: UNION_VERSION,
        };
        b.put(Table::Unions, member_key(&u, m.id), encode_union_member(&record));
        b.put(Table::Unions, snapshot_key(m.id, &u), Vec::new());
        for d in &digests {
            b.put(Table::Unions, path_key(&u, d, m.id), Vec::new());
        }
        self.kv().write(b)
    }

    /// The members of `union` written by this [`UNION_VERSION`] (any key version: the reader compares it
    /// with the manifest's), by id.
    pub fn union_members(&self, union: &str) -> Result<Vec<UnionMember>, StoreError> {
        let u = uid(union);
        let mut out = Vec::new();
        for item in self.kv().scan_prefix(Table::Unions, &[&b"m"[..], &u].concat()) {
            let m = decode_union_member(&item?.1)?;
            if m.union_version == UNION_VERSION && m.union == union {
                out.push(m);
            }
        }
        Ok(out)
    }

    /// Ids of the members of `union` that recorded something at host-and-path `digest`
    /// ([`crate::path_digest`]), ascending. One prefix read.
    pub fn union_holders(&self, union: &str, digest: &[u8; 32]) -> Result<Vec<u64>, StoreError> {
        let prefix = [&b"p"[..], &uid(union), digest].concat();
        let mut out = Vec::new();
        for item in self.kv().scan_prefix(Table::Unions, &prefix) {
            let (k, _) = item?;
            if let Some(id) = k.get(prefix.len()..).and_then(|t| <[u8; 8]>::try_from(t).ok()) {
                out.push(u64::from_be_bytes(id));
            }
        }
        Ok(out)
    }

    /// Add to `b` the deletes that take snapshot `id` out of every union it is in, or only out of `only`
    /// (its path entries read from its path index, which must still be there).
    pub(crate) fn leave_unions(&self, id: u64, b: &mut Batch, only: Option<&Uid>) -> Result<(), StoreError> {
        let mut unions = Vec::new();
        for item in self.kv().scan_prefix(Table::Unions, &[&b"s"[..], &id_prefix(id)].concat()) {
            let (k, _) = item?;
            if let Some(u) = k.get(9..25).and_then(|u| Uid::try_from(u).ok()) {
                if only.is_none_or(|o| *o == u) {
                    unions.push(u);
                }
            }
        }
        if unions.is_empty() {
            return Ok(());
        }
        let mut digests = Vec::new();
        for item in self.kv().scan_prefix(Table::PathIndex, &id_prefix(id)) {
            if let Some(d) = item?.0.get(8..40).and_then(|d| <[u8; 32]>::try_from(d).ok()) {
                if digests.last() != Some(&d) {
                    digests.push(d);
                }
            }
        }
        for u in &unions {
            for d in &digests {
                b.delete(Table::Unions, path_key(u, d, id));
            }
            b.delete(Table::Unions, member_key(u, id));
            b.delete(Table::Unions, snapshot_key(id, u));
        }
        Ok(())
    }

    /// The unions snapshot `id` is in, by name, for a caller that derives them again (a key migration).
    pub(crate) fn unions_of(&self, id: u64) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        for item in self.kv().scan_prefix(Table::Unions, &[&b"s"[..], &id_prefix(id)].concat()) {
            let (k, _) = item?;
            let Some(u) = k.get(9..25).and_then(|u| Uid::try_from(u).ok()) else { continue };
            if let Some(v) = self.kv().get(Table::Unions, &member_key(&u, id))? {
                out.push(decode_union_member(&v)?.union);
            }
        }
        Ok(out)
    }
}
