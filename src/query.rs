//! `pawndex query` (work in progress).

use anyhow::{Result, bail};
use clap::Args;

#[derive(Args, Debug)]
pub struct QueryArgs {}

pub fn run(_args: QueryArgs) -> Result<i32> {
    bail!("pawndex query is not implemented yet")
}
