//! Output files: checked before any work, and never left half-written.

use std::io;
use std::path::Path;

use anyhow::Result;

/// Checks the path of an output file (`option` names it in the message) before any work: its
/// folder exists and is a folder, the path is not a folder, and it can be written (an existing
/// file is opened for writing without truncating it; in its folder, a probe file is made and
/// removed at once). Nothing is left behind.
pub fn check_output_path(option: &str, path: &Path) -> Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let (p, f) = (path.display(), folder.display());
    match std::fs::metadata(folder) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => anyhow::bail!(
            "{option} {p}: the folder {f} does not exist; create it first, or give a path in a \
             folder that exists"
        ),
        Err(e) => anyhow::bail!("{option} {p}: cannot use the folder {f}: {e}"),
        Ok(m) if !m.is_dir() => anyhow::bail!("{option} {p}: {f} is not a folder"),
        Ok(_) => {}
    }
    if path.is_dir() {
        anyhow::bail!("{option} {p}: {p} is a folder; give a file name");
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| anyhow::anyhow!("{option} {p}: cannot write it: {e}"))?;
    } else {
        tempfile::Builder::new()
            .prefix(".pawndex-probe-")
            .tempfile_in(folder)
            .map_err(|e| anyhow::anyhow!("{option} {p}: cannot write in the folder {f}: {e}"))?;
    }
    Ok(())
}

/// Writes an output file with `write`; when that fails, a file this call created is removed
/// (no empty or half-written file is left), and the message says the path and the reason.
pub fn write_output(
    path: &Path,
    what: &str,
    write: impl FnOnce(io::BufWriter<std::fs::File>) -> Result<()>,
) -> Result<()> {
    let existed = path.symlink_metadata().is_ok();
    let result = std::fs::File::create(path)
        .map_err(anyhow::Error::from)
        .and_then(|file| write(io::BufWriter::new(file)));
    result.map_err(|e| {
        if !existed {
            let _ = std::fs::remove_file(path);
        }
        anyhow::anyhow!("cannot write the {what} {}: {e:#}", path.display())
    })
}
