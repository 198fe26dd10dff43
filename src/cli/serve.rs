//! `pawndex serve`: the options, then [`crate::web::serve`].

use std::net::IpAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::store::DEFAULT_DB;

/// Options of `pawndex serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Database to serve (opened read-only)
    #[arg(long, default_value = DEFAULT_DB, value_name = "PATH")]
    pub db: PathBuf,
    /// Port to listen on (0: any free port; the printed URL has it)
    #[arg(long, default_value_t = 8080, value_name = "N")]
    pub port: u16,
    /// Address to listen on; any but a loopback one lets other machines read the database
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub bind: IpAddr,
    /// Also open the URL in the desktop's browser
    #[arg(long)]
    pub open: bool,
    /// Another name (or address) the server answers to, beside 127.0.0.1, localhost, [::1]
    /// and the --bind address; repeatable. Requests naming any other host are refused (403)
    #[arg(long, value_name = "NAME", value_parser = crate::web::host::parse_allowed)]
    pub allow_host: Vec<String>,
}

/// Runs the server until Ctrl-C.
pub fn run(args: ServeArgs) -> Result<i32> {
    crate::web::serve(crate::web::Options {
        db: args.db,
        bind: args.bind,
        port: args.port,
        open: args.open,
        allow_hosts: args.allow_host,
    })
}
