//! `pawndex stats` (work in progress).

use anyhow::{Result, bail};
use clap::Args;

#[derive(Args, Debug)]
pub struct StatsArgs {}

pub fn run(_args: StatsArgs) -> Result<i32> {
    bail!("pawndex stats is not implemented yet")
}
