//! `pawndex find` (work in progress).

use anyhow::{Result, bail};
use clap::Args;

#[derive(Args, Debug)]
pub struct FindArgs {}

pub fn run(_args: FindArgs) -> Result<i32> {
    bail!("pawndex find is not implemented yet")
}
