//! Games read one after the other from one PGN input and replayed, for the commands that read
//! games without storing them (`pawndex annotate`, "Your game" in the explorer): the same
//! input checks, reader and replay as `pawndex index`, without the pipeline's threads.

use std::io::{Cursor, Read};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use crate::ingest::input;
use crate::ingest::reader::{PgnGames, RawGame, StreamError, layout, tag_pairs};
use crate::ingest::replay::{Replayed, replay};
use crate::model::annotate::{Failure, Layout, strip};
use crate::model::game::GameRecord;

/// The games of one input, in order; every piece of its text comes back in one of them (text
/// that is no game, too), so writing their texts one after the other gives the input back.
pub struct GameStream {
    games: PgnGames<Box<dyn Read + Send>>,
}

impl GameStream {
    /// Opens `name` (a path, or `-` for standard input; plain, gzip, bzip2 or zstd). `Err` is
    /// the message for a person: it cannot be read, or it is an archive, binary data or a
    /// stream broken from its start (nothing was read from it as games).
    pub fn open(name: &str) -> Result<GameStream, String> {
        input::check(name)?;
        let input =
            input::open(name).map_err(|e| format!("{}: cannot read: {e}", input::shown(name)))?;
        let mut reader = input.reader;
        let head = input::read_head(&mut reader)
            .map_err(|e| format!("{}: cannot read: {e}", input::shown(name)))?;
        if let Some(refusal) = input::judge_head(&head) {
            return Err(refusal.message(name));
        }
        let reader: Box<dyn Read + Send> = Box::new(Cursor::new(head).chain(reader));
        Ok(GameStream {
            games: PgnGames::new(reader, input.decoded, input.trapped),
        })
    }

    /// The games of PGN text in memory (a request's body). `Err`: the bytes are an archive or
    /// binary data.
    pub fn of_bytes(bytes: Vec<u8>, name: &str) -> Result<GameStream, String> {
        let head = &bytes[..bytes.len().min(input::HEAD_BYTES)];
        if let Some(refusal) = input::judge_head(head) {
            return Err(refusal.message(name));
        }
        let decoded = Arc::new(AtomicU64::new(0));
        let reader: Box<dyn Read + Send> =
            Box::new(input::Counting::new(Cursor::new(bytes), decoded.clone()));
        Ok(GameStream {
            games: PgnGames::new(reader, decoded, Arc::new(Mutex::new(None))),
        })
    }

    /// The next piece of the input: a game (its moves read), or text that is no game
    /// ([`RawGame::is_not_a_game`]); `None` at the end; `Err` when the stream breaks (the
    /// pieces before it came first).
    pub fn next_game(&mut self) -> Result<Option<RawGame>, StreamError> {
        let mut game = self.games.next_game()?;
        if let Some(g) = &mut game {
            g.read_moves();
        }
        Ok(game)
    }
}

/// A game made ready to annotate: its tags, its text without pawndex's comments with that
/// text's layout, and its replay (or why it has none).
pub struct Prepared {
    pub offset: u64,
    pub tags: Vec<(String, String)>,
    pub text: Vec<u8>,
    pub layout: Layout,
    pub replayed: Result<Box<GameRecord>, Failure>,
}

impl Prepared {
    /// Strips `raw`'s text of pawndex's comments and replays it (the moves are the same with
    /// or without them).
    #[must_use]
    pub fn of(raw: RawGame) -> Prepared {
        let first = layout(&raw.text);
        let text = strip(&raw.text, &first);
        // Nothing stripped (the usual case): the layout is the one read already.
        let layout = if text.len() == raw.text.len() {
            first
        } else {
            layout(&text)
        };
        let tags = tag_pairs(&raw.text);
        let offset = raw.offset;
        let replayed = match replay(raw) {
            Replayed::Game(record) => Ok(record),
            Replayed::Rejected(r) => Err(Failure {
                ply: r.ply,
                reason: r.reason,
            }),
            Replayed::Copy => unreachable!("replay never calls a game a copy"),
        };
        Prepared {
            offset,
            tags,
            text,
            layout,
            replayed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces' texts, one after the other, are the input: what `annotate` writes back
    /// around its comments.
    #[test]
    fn the_pieces_give_the_input_back() {
        let text =
            b"Some words first.\n\n[White \"A\"]\n[Black \"B\"]\n\n1. e4 {hi} (1. d4) e5 $1 *\n\n\
                     [White \"C\"]\n\n1. d4 d5 1-0\n\ntrailing words\n"
                .to_vec();
        let mut stream = GameStream::of_bytes(text.clone(), "test").expect("PGN");
        let mut back = Vec::new();
        let mut games = 0;
        while let Some(g) = stream.next_game().expect("readable") {
            if !g.is_not_a_game() {
                games += 1;
                assert!(!g.moves.is_empty(), "moves read");
            }
            back.extend_from_slice(&g.text);
        }
        assert_eq!(games, 2);
        assert_eq!(
            String::from_utf8_lossy(&back),
            String::from_utf8_lossy(&text)
        );
    }

    #[test]
    fn binary_bytes_are_refused() {
        let bytes: Vec<u8> = (0u8..=255).cycle().take(5000).collect();
        let e = GameStream::of_bytes(bytes, "paste").err().expect("refused");
        assert!(e.contains("not a PGN file"), "{e}");
    }
}
