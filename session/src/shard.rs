//! Splitting a task list into shards (`webfreeze run --shard I/N`), one per machine or array job.
//!
//! The split depends only on the set of task ids, never on the file's order: tasks are ranked by the
//! BLAKE3 of their id (ties, which do not happen in practice, by the id itself) and shard `I` takes the
//! ranks `r` with `r % N == I`. Shards are therefore balanced (sizes differ by at most one), stable under
//! reordering the task file, and every task lands in exactly one shard. Each shard's `run.json` carries a
//! [`ShardInfo`] with the whole list's size and a digest of its ids, which `merge` checks.

use std::fmt;
use std::str::FromStr;

use agent::tasks::Task;
use trajectory::ShardInfo;

/// `I/N`: shard `I` (0-based) of `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 0-based index, below `count`.
    pub index: u32,
    /// Number of shards, at least 1.
    pub count: u32,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A `--shard` value that is not `I/N` with `0 <= I < N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shard {given:?}: {why} (expected I/N with 0 <= I < N, e.g. 0/3 for the first of three; Slurm: $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT, Kubernetes: $JOB_COMPLETION_INDEX/<completions>)")]
pub struct BadShard {
    given: String,
    why: &'static str,
}

impl FromStr for Shard {
    type Err = BadShard;

    fn from_str(s: &str) -> Result<Self, BadShard> {
        let bad = |why| BadShard { given: s.to_string(), why };
        let (i, n) = s.trim().split_once('/').ok_or_else(|| bad("no `/`"))?;
        let index: u32 = i.trim().parse().map_err(|_| bad("I is not a non-negative integer"))?;
        let count: u32 = n.trim().parse().map_err(|_| bad("N is not a positive integer"))?;
        if count == 0 {
            return Err(bad("N must be at least 1"));
        }
        if index >= count {
            return Err(bad("I must be below N (shards are numbered from 0)"));
        }
        Ok(Shard { index, count })
    }
}

fn id_hash(id: &str) -> [u8; 32] {
    *blake3::hash(id.as_bytes()).as_bytes()
}

/// BLAKE3 (hex) of the task ids, sorted and newline-joined: equal for every ordering of one list.
pub fn task_set_digest<'a>(ids: impl IntoIterator<Item = &'a str>) -> String {
    let mut ids: Vec<&str> = ids.into_iter().collect();
    ids.sort_unstable();
    let mut h = blake3::Hasher::new();
    for id in ids {
        h.update(id.as_bytes());
        h.update(b"\n");
    }
    h.finalize().to_hex().to_string()
}

impl Shard {
    /// The shard's part of `tasks`, in the file's order, and what its run.json says about the whole.
    pub fn select(self, tasks: Vec<Task>) -> (Vec<Task>, ShardInfo) {
        let info = ShardInfo {
            index: self.index,
            count: self.count,
            tasks_total: tasks.len(),
            task_set: task_set_digest(tasks.iter().map(|t| t.id.as_str())),
        };
        let mut ranked: Vec<(usize, [u8; 32])> =
            tasks.iter().enumerate().map(|(i, t)| (i, id_hash(&t.id))).collect();
        ranked.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| tasks[a.0].id.cmp(&tasks[b.0].id)));
        let mut mine = vec![false; tasks.len()];
        for (rank, (i, _)) in ranked.iter().enumerate() {
            mine[*i] = rank as u64 % u64::from(self.count) == u64::from(self.index);
        }
        let selected = tasks.into_iter().zip(mine).filter_map(|(t, m)| m.then_some(t)).collect();
        (selected, info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(ids: &[&str]) -> Vec<Task> {
        ids.iter()
            .map(|id| Task {
                web_name: "S".into(),
                id: id.to_string(),
                question: "q".into(),
                start_url: "https://s/".into(),
                benchmark: Default::default(),
                setup: Default::default(),
            })
            .collect()
    }

    fn ids(ts: &[Task]) -> Vec<String> {
        ts.iter().map(|t| t.id.clone()).collect()
    }

    #[test]
    fn shard_specs_parse_or_say_why() {
        let table: &[(&str, Option<(u32, u32)>)] = &[
            ("0/3", Some((0, 3))),
            ("2/3", Some((2, 3))),
            (" 0 / 1 ", Some((0, 1))),
            ("3/3", None),
            ("1/0", None),
            ("-1/3", None),
            ("1", None),
            ("a/b", None),
            ("", None),
        ];
        for (given, want) in table {
            let got = given.parse::<Shard>().ok().map(|s| (s.index, s.count));
            assert_eq!(got, *want, "{given:?}");
        }
        let e = "3/3".parse::<Shard>().unwrap_err().to_string();
        assert!(e.contains("below N") && e.contains("SLURM_ARRAY_TASK_ID"), "{e}");
    }

    #[test]
    fn shards_partition_the_list_balanced_and_independent_of_order() {
        let all: Vec<String> = (0..101).map(|i| format!("Site--{i}")).collect();
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let mut reversed = refs.clone();
        reversed.reverse();
        for n in [1u32, 2, 3, 7, 101, 150] {
            let mut seen = std::collections::BTreeMap::new();
            for i in 0..n {
                let s = Shard { index: i, count: n };
                let (a, info_a) = s.select(tasks(&refs));
                let (b, info_b) = s.select(tasks(&reversed));
                let (mut a, mut b) = (ids(&a), ids(&b));
                assert_eq!(info_a, info_b, "the digest ignores order");
                assert_eq!(info_a.tasks_total, 101);
                a.sort();
                b.sort();
                assert_eq!(a, b, "shard {s} depends on the file's order");
                let expect = 101 / n as usize + usize::from((i as usize) < 101 % n as usize);
                assert!(
                    a.len() == expect || a.len() + 1 == expect || a.len() == expect + 1,
                    "{s}: {}",
                    a.len()
                );
                for id in a {
                    assert!(seen.insert(id.clone(), i).is_none(), "{id} in two shards");
                }
            }
            assert_eq!(seen.len(), 101, "every task in some shard (n = {n})");
            let sizes: Vec<usize> = (0..n).map(|i| seen.values().filter(|&&s| s == i).count()).collect();
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(max - min <= 1, "n = {n}: sizes {sizes:?}");
        }
    }

    #[test]
    fn the_task_set_digest_names_the_list() {
        assert_eq!(task_set_digest(["b", "a"]), task_set_digest(["a", "b"]));
        assert_ne!(task_set_digest(["a", "b"]), task_set_digest(["a", "b", "c"]));
        assert_ne!(task_set_digest(["ab"]), task_set_digest(["a", "b"]));
    }
}
