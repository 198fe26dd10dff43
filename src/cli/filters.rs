//! The game filters (players, ratings, dates and years, ECO, result, event, site, time class,
//! the stay in the structure), one set of options flattened into every command that takes
//! them (`find`, `plans`): they fill the same [`Filters`], so they mean the same everywhere.

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
    /// Exactly a player's games: every stored spelling of the player NAME finds (the name
    /// look-up of `pawndex player`; repeat for any of several players)
    #[arg(long = "player-name", value_name = "NAME")]
    pub player_name: Vec<String>,
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
    /// Dates A..B, both included (2020.., ..2019.06, 2018..2019, or one year 2020); a bound's
    /// precision (year, year.month, full date) is the one compared; several: any of them
    #[arg(long, value_name = "A..B")]
    pub date: Vec<String>,
    /// Both players rated at most N (games without both ratings are left out)
    #[arg(long, value_name = "N")]
    pub max_elo: Option<i64>,
    /// Years A..B of the game's date, both included (1990..1999, 2000.., ..1950, or one year
    /// 2001); several: any of them
    #[arg(long, value_name = "A..B")]
    pub year: Vec<String>,
    /// The game's time class: classical, rapid, blitz, bullet, simul, blindfold or unknown
    /// (several: any of them, "classical,rapid"; see TIME CLASS)
    #[arg(long = "time-class", value_name = "CLASS")]
    pub time_class: Vec<String>,
    /// Leave out games of these time classes ("blitz,bullet,simul")
    #[arg(long = "exclude-time-class", value_name = "CLASS")]
    pub exclude_time_class: Vec<String>,
    /// Only games with at least N matching positions (for a structure: N plies in it)
    #[arg(long = "min-stay", value_name = "N")]
    pub min_stay: Option<i64>,
}

impl GameFilterArgs {
    /// Sets the game filters of `f` from these options.
    pub fn fill(&self, f: &mut Filters) {
        f.result.clone_from(&self.result);
        f.min_elo = self.min_elo;
        f.player.clone_from(&self.player);
        f.white_player.clone_from(&self.white_player);
        f.black_player.clone_from(&self.black_player);
        f.player_name.clone_from(&self.player_name);
        f.event.clone_from(&self.event);
        f.site.clone_from(&self.site);
        f.eco.clone_from(&self.eco);
        f.date.clone_from(&self.date);
        f.max_elo = self.max_elo;
        f.year.clone_from(&self.year);
        f.time_class.clone_from(&self.time_class);
        f.exclude_time_class.clone_from(&self.exclude_time_class);
        f.min_stay = self.min_stay;
    }
}
