//! A dataset run that failed, said once its own unfinished files are gone: which directory,
//! what the run was doing (the step, with the file), what is left and what to do. The
//! database's counterpart is `store::WriteFailed`.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What a run was doing when an error came: attached to errors as their context, read back
/// by [`explain`].
#[derive(Clone, Debug)]
pub(crate) enum Step {
    /// Claiming a shard number (the claims folder).
    Claim(PathBuf),
    /// Creating a staging folder.
    Create(PathBuf),
    /// Writing a Parquet file.
    Write(PathBuf),
    /// Moving a staged table into place.
    Publish { from: PathBuf, to: PathBuf },
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Claim(dir) => write!(f, "claiming a shard number in {}", dir.display()),
            Step::Create(dir) => write!(f, "creating {}", dir.display()),
            Step::Write(file) => write!(f, "writing {}", file.display()),
            Step::Publish { from, to } => write!(
                f,
                "publishing: moving {} to {}",
                from.display(),
                to.display()
            ),
        }
    }
}

/// Another run published the partition this run writes while it was writing (without
/// `--overwrite`, the later run loses).
#[derive(Debug)]
pub(crate) struct LostRace {
    pub published: PathBuf,
}

impl fmt::Display for LostRace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "another pawndex run published {} while this one was writing",
            self.published.display()
        )
    }
}

impl std::error::Error for LostRace {}

/// Why the run failed.
#[derive(Debug)]
enum Kind {
    /// The disk is full.
    Full,
    /// Another I/O error, in words.
    Io(String),
    /// Another run published the same partition first.
    Lost(PathBuf),
}

/// A failed dataset run, after its staging folder was removed (or not, and why).
#[derive(Debug)]
pub struct Failed {
    dir: PathBuf,
    step: Option<String>,
    kind: Kind,
    /// `Err((folder, why))` when this run's staging folder could not be removed.
    cleanup: Result<(), (PathBuf, String)>,
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = self.dir.display();
        let step = self.step.as_deref().unwrap_or("writing its files");
        let left = match &self.cleanup {
            Ok(()) => "nothing was published and this run's unfinished files were removed".into(),
            Err((staging, why)) => format!(
                "nothing was published, but this run's unfinished files could not be removed \
                 ({why}): remove {} by hand",
                staging.display()
            ),
        };
        match &self.kind {
            Kind::Full => write!(
                f,
                "disk full while writing the dataset {dir} ({step}): {left}; free space on the \
                 disk of {dir} and run the same command again"
            ),
            Kind::Io(cause) => write!(
                f,
                "I/O error while writing the dataset {dir} ({step}: {cause}): {left}; check the \
                 disk and run the same command again"
            ),
            Kind::Lost(published) => write!(
                f,
                "another pawndex run published {} while this one was writing: {left}; run the \
                 same command again with --overwrite to replace that run's files, or write \
                 another partition (--partition NAME=VALUE)",
                published.display()
            ),
        }
    }
}

impl std::error::Error for Failed {}

/// Turns the error of a run on the dataset `dir` into a [`Failed`] when it is a failed write
/// (a full disk, an I/O error) or a lost race; `cleanup` says whether the run's staging
/// folder is gone. Any other error (a usage error, a refusal, a bug) is returned as it is.
pub(crate) fn explain(
    e: anyhow::Error,
    dir: &Path,
    cleanup: Result<(), (PathBuf, String)>,
) -> anyhow::Error {
    if e.downcast_ref::<Failed>().is_some() {
        return e;
    }
    let kind = if let Some(lost) = e.downcast_ref::<LostRace>() {
        Kind::Lost(lost.published.clone())
    } else {
        match e.chain().find_map(|c| c.downcast_ref::<io::Error>()) {
            Some(io) if io.kind() == io::ErrorKind::StorageFull => Kind::Full,
            Some(io) => Kind::Io(io.to_string()),
            None => return e,
        }
    };
    Failed {
        dir: dir.to_path_buf(),
        step: e.downcast_ref::<Step>().map(Step::to_string),
        kind,
        cleanup,
    }
    .into()
}
