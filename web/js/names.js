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

/** The game filters of `/api/games` that select exactly a player's stored spellings, per colour
 *  the player had (docs/serve.md); each spelling is one value (the filter takes several). */
export const NAME_FILTER = { white: 'white_name', black: 'black_name' };
