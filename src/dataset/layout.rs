//! Where a run's files go in a dataset directory: partitions, shard claims, staging and the
//! final publish (see `docs/dataset.md`).
//!
//! ```text
//! DIR/games/NAME=VALUE/part-SSSSSSS-NNNN.parquet    published: always whole files
//! DIR/_pawndex/shards/SSSSSSS                       a run's claim on shard S (locked while it runs)
//! DIR/_pawndex/staging/SSSSSSS/games/NAME=VALUE/…   what the run holding shard S is writing
//! ```

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::failed::{self, LostRace, Step};
use crate::model::usage;

/// The four tables of a dataset, in the order a run publishes them (games last: a reader
/// that starts from the games never sees one whose runs are not there yet).
pub const TABLES: [&str; 4] = ["rejects", "structure_changes", "runs", "games"];

/// Shard numbers fit in the 23 bits above a game's 40-bit number.
pub const MAX_SHARD: u32 = (1 << 23) - 1;

/// The folder of pawndex's own bookkeeping inside a dataset directory. Engines skip names
/// that start with `_`, and no table glob reaches it.
const META: &str = "_pawndex";

/// Where and how one run writes.
#[derive(Clone, Debug)]
pub struct Target {
    pub dir: PathBuf,
    /// `--partition NAME=VALUE`, in order.
    pub partition: Vec<(String, String)>,
    /// `--shard N`; `None`: claim the smallest free number.
    pub shard: Option<u32>,
    pub overwrite: bool,
}

/// Parses `--partition NAME=VALUE`: NAME an identifier that is no column of the dataset,
/// VALUE letters, digits, `-`, `_` and `.` (not first), so that the directory name means the
/// same in every engine and on every file system.
pub fn parse_partition(spec: &str) -> Result<(String, String)> {
    let Some((name, value)) = spec.split_once('=') else {
        usage!("--partition {spec}: expected NAME=VALUE, e.g. --partition month=2024-01");
    };
    let ident = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        usage!(
            "--partition {spec}: the name must be letters, digits and _ (not starting with a digit)"
        );
    }
    if super::tables::all_columns().any(|c| c.eq_ignore_ascii_case(name)) {
        usage!(
            "--partition {spec}: {name} is a column of the dataset; choose another name, e.g. shard or month"
        );
    }
    let value_ok = !value.is_empty()
        && !value.starts_with(['.', '_'])
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !value_ok {
        usage!(
            "--partition {spec}: the value must be letters, digits, -, _ and . (not first), e.g. 2024-01"
        );
    }
    Ok((name.to_string(), value.to_string()))
}

impl Target {
    /// The partition's directory below the table directory `base` (`base` itself when not
    /// partitioned).
    fn part_path(&self, base: PathBuf) -> PathBuf {
        self.partition
            .iter()
            .fold(base, |p, (n, v)| p.join(format!("{n}={v}")))
    }

    /// The partition as text, `month=2024-01/day=3` (empty when not partitioned).
    fn part_text(&self) -> String {
        self.partition
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Checks the directory before anything is created: it is a dataset (or absent, or empty),
    /// its partitioning matches this run's, and this run's partition is empty unless
    /// `--overwrite`. Nothing is written.
    pub fn check(&self) -> Result<()> {
        let dir = &self.dir;
        match fs::metadata(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
            Ok(m) if !m.is_dir() => bail!(
                "{} is a file, not a directory: give the dataset directory (a new one, or one \
                 pawndex wrote)",
                dir.display()
            ),
            Ok(_) => {}
        }
        let entries = list(dir)?;
        if !entries.is_empty() && !dir.join(META).is_dir() {
            bail!(
                "{} is not empty and is not a pawndex dataset (it has no {META}/ folder); \
                 give a new or empty directory",
                dir.display()
            );
        }
        // What this run would write into (and `--overwrite` replace) holds pawndex's files
        // only: anything else is the user's, and is neither deleted nor mixed into the data.
        let mut foreign = Vec::new();
        for table in TABLES {
            foreign.extend(foreign_entries(&self.part_path(dir.join(table)))?);
        }
        if let Some(first) = foreign.first() {
            bail!("{}", foreign_message(first, foreign.len() - 1, dir));
        }
        let ours: Vec<String> = self.partition.iter().map(|(n, _)| n.clone()).collect();
        for table in TABLES {
            let table_dir = dir.join(table);
            if let Some(theirs) = partition_names(&table_dir)?
                && theirs != ours
            {
                let say = |names: &[String]| {
                    if names.is_empty() {
                        "no partitions".to_string()
                    } else {
                        format!("partitions {}", names.join("/"))
                    }
                };
                bail!(
                    "{} has {}, this run would write {}: one dataset cannot mix them (engines \
                     refuse to read it); use another directory",
                    table_dir.display(),
                    say(&theirs),
                    say(&ours)
                );
            }
            let part = self.part_path(table_dir);
            if !self.overwrite && holds_files(&part)? {
                bail!(
                    "{} already holds files; add --overwrite to replace that partition, or \
                     write another partition (--partition NAME=VALUE)",
                    part.display()
                );
            }
        }
        Ok(())
    }

    /// Creates the directory if needed, claims a shard number (locked for as long as the
    /// returned [`Claim`] lives) and makes an empty staging directory for it. A failed write
    /// (a full disk) is a [`failed::Failed`].
    pub fn claim(&self, inputs: &[String]) -> Result<Claim> {
        self.claim_shard(inputs)
            .map_err(|e| failed::explain(e, &self.dir, Ok(())))
    }

    fn claim_shard(&self, inputs: &[String]) -> Result<Claim> {
        let shards = self.dir.join(META).join("shards");
        let step = || Step::Claim(shards.clone());
        fs::create_dir_all(&shards).with_context(step)?;
        let part = self.part_text();
        let (shard, lock) = match self.shard {
            Some(n) => (n, self.take_shard(&shards, n, &part)?),
            None => self.free_shard(&shards, &part)?,
        };
        let record = serde_json::json!({
            "partition": part,
            "inputs": inputs,
            "pawndex": env!("CARGO_PKG_VERSION"),
        });
        let mut f = &lock;
        f.set_len(0).with_context(step)?;
        writeln!(f, "{record}").with_context(step)?;
        let staging = self
            .dir
            .join(META)
            .join("staging")
            .join(format!("{shard:07}"));
        // From here on, the claim's guard removes the staging folder if the run fails.
        let claim = Claim {
            target: self.clone(),
            shard,
            staging,
            done: false,
            _lock: lock,
        };
        // Left by a run of this shard that was killed: nobody else can be using it, since
        // this run holds the shard's lock.
        if claim.staging.exists() {
            fs::remove_dir_all(&claim.staging)
                .with_context(|| format!("cannot remove {}", claim.staging.display()))?;
        }
        fs::create_dir_all(&claim.staging).with_context(|| Step::Create(claim.staging.clone()))?;
        Ok(claim)
    }

    /// Takes shard `n` for this run: refused when another partition claimed it (ids would
    /// collide) or another run holds it now.
    fn take_shard(&self, shards: &Path, n: u32, part: &str) -> Result<File> {
        if n > MAX_SHARD {
            usage!("--shard {n}: shard numbers go from 0 to {MAX_SHARD}");
        }
        let path = shards.join(format!("{n:07}"));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        if file.try_lock().is_err() {
            bail!(
                "shard {n} of {} is being written by another pawndex run",
                self.dir.display()
            );
        }
        if let Some(theirs) = claimed_partition(&path)?
            && theirs != part
        {
            bail!(
                "shard {n} of {} was claimed by the run that wrote {}; its game ids would \
                 collide with this run's: give another --shard, or leave it out to take a free one",
                self.dir.display(),
                if theirs.is_empty() {
                    "the unpartitioned files".to_string()
                } else {
                    format!("partition {theirs}")
                }
            );
        }
        Ok(file)
    }

    /// The shard this run takes when none is given: the one already claimed for the same
    /// partition (a re-run, an `--overwrite`), else the smallest number nobody claimed. The
    /// claim is an exclusive create, so two runs starting at once never take the same number.
    fn free_shard(&self, shards: &Path, part: &str) -> Result<(u32, File)> {
        let mut used = Vec::new();
        for entry in list(shards)? {
            let Some(n) = entry.to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            used.push(n);
            let path = shards.join(&entry);
            if claimed_partition(&path)?.as_deref() == Some(part) {
                let file = OpenOptions::new().read(true).write(true).open(&path)?;
                if file.try_lock().is_ok() {
                    return Ok((n, file));
                }
            }
        }
        used.sort_unstable();
        let mut n = 0u32;
        loop {
            if used.binary_search(&n).is_ok() {
                n += 1;
                continue;
            }
            if n > MAX_SHARD {
                bail!(
                    "every shard number of {} is taken; use another directory",
                    self.dir.display()
                );
            }
            let path = shards.join(format!("{n:07}"));
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    file.try_lock().map_err(|e| anyhow::anyhow!("{e}"))?;
                    return Ok((n, file));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", path.display()));
                }
            }
        }
    }
}

/// A run's hold on its shard: the staging directory it writes into, published or dropped at
/// the end. It is also the run's guard: dropped before either (an error, an early return, a
/// panic), it removes the staging directory, which holds this run's files only (the shard's
/// lock, held until the claim is gone, keeps every other run out of it).
#[derive(Debug)]
pub struct Claim {
    target: Target,
    pub shard: u32,
    staging: PathBuf,
    /// The staging directory was published or removed.
    done: bool,
    _lock: File,
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.remove_staging();
        }
    }
}

impl Claim {
    /// The dataset directory.
    pub fn dir(&self) -> &Path {
        &self.target.dir
    }

    /// The directory where this run writes the files of `table`.
    pub fn staging_dir(&self, table: &str) -> PathBuf {
        self.target.part_path(self.staging.join(table))
    }

    /// The directory where the files of `table` end up.
    pub fn published_dir(&self, table: &str) -> PathBuf {
        self.target.part_path(self.target.dir.join(table))
    }

    /// Moves the run's partition of every table into place: one rename per table. With
    /// `--overwrite` the old partition is moved aside first and removed after. On an error
    /// every table already moved goes back (nothing of the run stays published, every old
    /// partition is where it was) and the staging directory is left for the caller.
    pub fn publish(&mut self) -> Result<()> {
        let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut aside: Vec<(PathBuf, PathBuf)> = Vec::new();
        let result = self.move_into_place(&mut moved, &mut aside);
        if result.is_err() {
            for (from, to) in moved.iter().rev() {
                let _ = fs::rename(to, from);
            }
            for (to, old) in aside.iter().rev() {
                let _ = fs::rename(old, to);
            }
            return result;
        }
        if let Err((staging, why)) = self.remove_staging() {
            // Published whole; only the emptied staging folder (and the replaced partition)
            // could not go.
            eprintln!(
                "pawndex: warning: cannot remove {} ({why}); remove it by hand",
                staging.display()
            );
            self.done = true;
        }
        Ok(())
    }

    /// The renames of [`Claim::publish`], each recorded as it succeeds.
    fn move_into_place(
        &self,
        moved: &mut Vec<(PathBuf, PathBuf)>,
        aside: &mut Vec<(PathBuf, PathBuf)>,
    ) -> Result<()> {
        let old = self.staging.join("replaced");
        for table in TABLES {
            let from = self.staging_dir(table);
            let to = self.published_dir(table);
            let step = || Step::Publish {
                from: from.clone(),
                to: to.clone(),
            };
            if to.exists() {
                // Files put there since the run started are checked again.
                if let Some(first) = foreign_entries(&to)?.first() {
                    bail!(
                        "{}",
                        foreign_message(first, 0, &self.target.dir).replace(
                            "(nothing was changed)",
                            "(nothing of this run was published)"
                        )
                    );
                }
                if !self.target.overwrite && holds_files(&to)? {
                    return Err(LostRace { published: to }.into());
                }
                let put = old.join(table);
                fs::create_dir_all(&old).with_context(step)?;
                fs::rename(&to, &put).with_context(step)?;
                aside.push((to.clone(), put));
            }
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).with_context(step)?;
            }
            fs::rename(&from, &to).with_context(step)?;
            moved.push((from, to));
        }
        Ok(())
    }

    /// Removes the staging directory (again: a no-op); `Err((folder, why))` if it cannot.
    pub fn remove_staging(&mut self) -> std::result::Result<(), (PathBuf, String)> {
        match fs::remove_dir_all(&self.staging) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err((self.staging.clone(), e.to_string()))
            }
            _ => {
                self.done = true;
                Ok(())
            }
        }
    }

    /// Drops everything the run wrote (an interrupted run publishes nothing).
    pub fn discard(mut self) -> Result<()> {
        self.remove_staging()
            .map_err(|(staging, why)| anyhow::anyhow!("cannot remove {}: {why}", staging.display()))
    }
}

/// Whether a name is one pawndex gives a file of a table: `part-SSSSSSS-NNNN.parquet`.
fn is_part_file(name: &str) -> bool {
    let Some(rest) = name
        .strip_prefix("part-")
        .and_then(|r| r.strip_suffix(".parquet"))
    else {
        return false;
    };
    let Some((shard, number)) = rest.split_once('-') else {
        return false;
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    shard.len() == 7 && number.len() >= 4 && digits(shard) && digits(number)
}

/// The entries of a table directory's partition folder that pawndex did not write: anything
/// but its part files and (a partitioned dataset's) `NAME=VALUE` folders, hidden files
/// included. Sorted; empty when the folder does not exist.
fn foreign_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for name in list(dir)? {
        let path = dir.join(&name);
        let ours = match name.to_str() {
            None => false,
            Some(n) if path.is_dir() && !path.is_symlink() => n
                .split_once('=')
                .is_some_and(|(k, v)| !k.is_empty() && !v.is_empty()),
            Some(n) => is_part_file(n) && path.is_file() && !path.is_symlink(),
        };
        if !ours {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// The refusal for a file or folder pawndex did not write where a run would write.
fn foreign_message(first: &Path, more: usize, dir: &Path) -> String {
    let what = if more == 0 {
        format!("{} was not written by pawndex", first.display())
    } else {
        format!(
            "{} and {more} more were not written by pawndex",
            first.display()
        )
    };
    format!(
        "{what}: a table folder of a dataset holds only the part-*.parquet files pawndex \
         writes (--overwrite replaces them, and engines would read anything else as data); move \
         it out of {} and run the command again (nothing was changed)",
        dir.display()
    )
}

/// The entries of a directory (empty when it does not exist).
fn list(dir: &Path) -> Result<Vec<std::ffi::OsString>> {
    match fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", dir.display())),
        Ok(rd) => rd
            .map(|e| e.map(|e| e.file_name()))
            .collect::<std::io::Result<_>>()
            .with_context(|| format!("cannot read {}", dir.display())),
    }
}

/// Whether a directory holds a file anywhere below it.
fn holds_files(dir: &Path) -> Result<bool> {
    for name in list(dir)? {
        let path = dir.join(&name);
        if path.is_dir() {
            if holds_files(&path)? {
                return Ok(true);
            }
        } else {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The partition names a table directory uses (following its first `NAME=VALUE` folders
/// down), `Some(vec![])` when it holds files directly, `None` when it holds nothing.
fn partition_names(table_dir: &Path) -> Result<Option<Vec<String>>> {
    let mut names = Vec::new();
    let mut dir = table_dir.to_path_buf();
    loop {
        let entries = list(&dir)?;
        let visible: Vec<_> = entries
            .iter()
            .filter_map(|e| e.to_str())
            .filter(|e| !e.starts_with(['.', '_']))
            .collect();
        if visible.is_empty() {
            return Ok(if names.is_empty() { None } else { Some(names) });
        }
        match visible.iter().find(|e| dir.join(e).is_dir()) {
            Some(sub) => {
                let name = sub.split_once('=').map_or(*sub, |(n, _)| n);
                names.push(name.to_string());
                dir = dir.join(sub);
            }
            None => return Ok(Some(names)),
        }
    }
}

/// The partition a shard claim file names (`None` for an empty file: a claim being made).
fn claimed_partition(path: &Path) -> Result<Option<String>> {
    let text =
        fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a pawndex shard claim", path.display()))?;
    Ok(Some(
        value
            .get("partition")
            .and_then(|p| p.as_str())
            .unwrap_or_default()
            .to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(dir: &Path, partition: &[(&str, &str)], shard: Option<u32>) -> Target {
        Target {
            dir: dir.to_path_buf(),
            partition: partition
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            shard,
            overwrite: false,
        }
    }

    #[test]
    fn partitions_are_checked() {
        assert_eq!(
            parse_partition("month=2024-01").unwrap(),
            ("month".into(), "2024-01".into())
        );
        for bad in [
            "month",
            "=x",
            "1m=x",
            "month=",
            "month=a/b",
            "month=..",
            "white=x",
            "id=3",
        ] {
            assert!(parse_partition(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_are_claimed_once_and_reused_by_the_same_partition() {
        let dir = tempfile::tempdir().unwrap();
        let a = target(dir.path(), &[("m", "1")], None);
        let b = target(dir.path(), &[("m", "2")], None);
        let ca = a.claim(&[]).unwrap();
        let cb = b.claim(&[]).unwrap();
        assert_eq!((ca.shard, cb.shard), (0, 1));
        // A second run of partition m=1 while the first holds shard 0: a new number.
        let ca2 = a.claim(&[]).unwrap();
        assert_eq!(ca2.shard, 2);
        drop((ca, cb, ca2));
        // Later runs of m=2 take its shard again.
        assert_eq!(b.claim(&[]).unwrap().shard, 1);
        // An explicit shard of another partition is refused.
        let err = target(dir.path(), &[("m", "3")], Some(1))
            .claim(&[])
            .unwrap_err();
        assert!(err.to_string().contains("collide"), "{err}");
    }

    #[test]
    fn publish_moves_whole_partitions_and_overwrite_replaces_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = target(dir.path(), &[("m", "1")], None);
        for (round, overwrite) in [("first", false), ("second", true)] {
            t.overwrite = overwrite;
            t.check().unwrap();
            let mut claim = t.claim(&[]).unwrap();
            for table in TABLES {
                let d = claim.staging_dir(table);
                fs::create_dir_all(&d).unwrap();
                fs::write(d.join("part-0000000-0000.parquet"), round).unwrap();
            }
            claim.publish().unwrap();
            let f = dir.path().join("runs/m=1/part-0000000-0000.parquet");
            assert_eq!(fs::read_to_string(f).unwrap(), round);
            t.overwrite = false;
            let err = t.check().unwrap_err().to_string();
            assert!(err.contains("--overwrite"), "{err}");
        }
        assert!(!dir.path().join("_pawndex/staging/0000000").exists());
        // Another partitioning of the same dataset is refused.
        let err = target(dir.path(), &[], None).check().unwrap_err();
        assert!(err.to_string().contains("cannot mix"), "{err}");
    }

    #[test]
    fn a_dropped_claim_removes_its_own_staging_directory_only() {
        let dir = tempfile::tempdir().unwrap();
        let t = target(dir.path(), &[], None);
        let a = t.claim(&[]).unwrap();
        let b = t.claim(&[]).unwrap();
        for c in [&a, &b] {
            let d = c.staging_dir("runs");
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("part-0000000-0000.parquet"), "x").unwrap();
        }
        let staging = dir.path().join("_pawndex/staging");
        drop(b);
        assert!(!staging.join("0000001").exists());
        assert!(
            staging
                .join("0000000/runs/part-0000000-0000.parquet")
                .exists()
        );
        drop(a);
        assert_eq!(list(&staging).unwrap().len(), 0);
    }

    #[test]
    fn a_publish_that_fails_half_way_puts_back_what_it_moved() {
        let dir = tempfile::tempdir().unwrap();
        let t = target(dir.path(), &[], None);
        t.check().unwrap();
        let mut claim = t.claim(&[]).unwrap();
        for table in TABLES {
            let d = claim.staging_dir(table);
            fs::create_dir_all(&d).unwrap();
            fs::write(d.join("part-0000000-0000.parquet"), table).unwrap();
        }
        // A file of someone else's appears in the last table's folder while the run writes.
        fs::create_dir_all(dir.path().join("games")).unwrap();
        fs::write(dir.path().join("games/notes.txt"), "mine").unwrap();
        let err = claim.publish().unwrap_err().to_string();
        assert!(
            err.contains("notes.txt was not written by pawndex"),
            "{err}"
        );
        for table in ["rejects", "structure_changes", "runs"] {
            assert!(!dir.path().join(table).exists(), "{table} stayed published");
            assert!(
                claim
                    .staging_dir(table)
                    .join("part-0000000-0000.parquet")
                    .exists()
            );
        }
        assert_eq!(list(&dir.path().join("games")).unwrap().len(), 1);
        drop(claim);
        assert_eq!(list(&dir.path().join("_pawndex/staging")).unwrap().len(), 0);
    }

    #[test]
    fn only_part_files_are_pawndexs() {
        for ours in ["part-0000000-0000.parquet", "part-8388607-12345.parquet"] {
            assert!(is_part_file(ours), "{ours}");
        }
        for theirs in [
            "notes.txt",
            "part-0-0.parquet",
            "part-0000000-0000.parquet.tmp",
            ".part-0000000-0000.parquet.crc",
            "_SUCCESS",
            "part-000000a-0000.parquet",
        ] {
            assert!(!is_part_file(theirs), "{theirs}");
        }
    }

    #[test]
    fn a_directory_that_is_not_a_dataset_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        let err = target(dir.path(), &[], None).check().unwrap_err();
        assert!(err.to_string().contains("not a pawndex dataset"), "{err}");
    }
}
