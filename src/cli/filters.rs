//! The game filters `find` has (players, ratings, dates, ECO, result, event, site), as options
//! for the commands that take them besides `find` (`plans`); they fill the same
//! [`Filters`] `find` fills, so they mean the same.

use clap::Args;

use crate::engine::find::Filters;

/// The game filters, flattened into a command's options.
#[derive(Args, Debug, Clone, Default)]
pub struct GameFilterArgs {
    /// Game result: 1-0, 0-1, 1/2-1/2 or * (several: any of them, "1-0,0-1")
    #[arg(long, value_name = "RESULT")]
    pub result: Vec<String>,
    /// Both players rated at least N (games without both ratings are left out)
    #[arg(long, value_name = "N")]
    pub min_elo: Option<i64>,
    /// White or Black name contains NAME (ASCII letters in any case; repeat for any of several)
    #[arg(long, value_name = "NAME")]
    pub player: Vec<String>,
    /// White's name contains NAME (repeat for any of several)
    #[arg(long, value_name = "NAME")]
    pub white_player: Vec<String>,
    /// Black's name contains NAME (repeat for any of several)
    #[arg(long, value_name = "NAME")]
    pub black_player: Vec<String>,
    /// The Event tag contains TEXT (repeat for any of several)
    #[arg(long, value_name = "TEXT")]
    pub event: Vec<String>,
    /// The Site tag contains TEXT (repeat for any of several)
    #[arg(long, value_name = "TEXT")]
    pub site: Vec<String>,
    /// ECO codes: a range A00-E99 (both included) or a prefix (B, B2, D35); several: any of
    /// them (D35,D36)
    #[arg(long, value_name = "CODES")]
    pub eco: Vec<String>,
    /// Dates A..B, both included (2020.., ..2019.06, 2018..2019, or one year 2020); several:
    /// any of them
    #[arg(long, value_name = "A..B")]
    pub date: Vec<String>,
}

impl GameFilterArgs {
    /// Sets the game filters of `f` from these options.
    pub fn fill(&self, f: &mut Filters) {
        f.result.clone_from(&self.result);
        f.min_elo = self.min_elo;
        f.player.clone_from(&self.player);
        f.white_player.clone_from(&self.white_player);
        f.black_player.clone_from(&self.black_player);
        f.event.clone_from(&self.event);
        f.site.clone_from(&self.site);
        f.eco.clone_from(&self.eco);
        f.date.clone_from(&self.date);
    }
}
