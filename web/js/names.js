// Players' names as links to their profile (/player?name=NAME, web/js/players.js): the game
// page, the lists of games and the model games use these; the players' pages load apart.
import { query } from './api.js';
import { link } from './dom.js';

/** The page of a player: the link every name of the explorer uses. */
export const playerHref = (name, more = {}) => `/player${query({ name, ...more })}`;

/** A player's name as a link to their page (a plain text when there is no name). */
export function playerLink(name, attrs = {}) {
  if (!name || name === '?') return name || '?';
  return link(playerHref(name), { class: 'player-link', title: `${name}: structure profile`, ...attrs }, name);
}

/** The game filter of `/api/games` that selects exactly a player's games (`find --player-name`:
 *  every stored spelling of the player the name finds), and per colour the filter that keeps
 *  the games where the player had it (the spellings, each one value: a name holds commas). */
export const NAME_FILTER = 'player_name';
export const COLOUR_FILTER = { white: 'white_player', black: 'black_player' };
