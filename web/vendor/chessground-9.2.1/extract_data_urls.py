#!/usr/bin/env python3
"""Write assets/*.css without data: URLs, for a Content-Security-Policy of 'self'.

chessground's brown board and cburnett pieces are base64 SVG data: URLs inside the CSS, which a
policy of `default-src 'self'` refuses. This script decodes each one into a file under self/
(self/board-brown.svg, self/pieces/wK.svg, ...) and writes self/chessground.brown.css and
self/chessground.cburnett.css that point at them. The upstream files in assets/ stay as shipped.
Run from this folder: python3 extract_data_urls.py
"""
import base64
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "self"
DATA = re.compile(r"url\('data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)'\)")
# The cburnett rules name the piece by its classes: ".cg-wrap piece.pawn.white".
PIECE = re.compile(r"piece\.(\w+)\.(white|black)")
LETTER = {"pawn": "P", "knight": "N", "bishop": "B", "rook": "R", "queen": "Q", "king": "K"}


def rewrite(css_name, name_for):
    text = (HERE / "assets" / css_name).read_text()
    out, pos = [], 0
    for m in DATA.finditer(text):
        name = name_for(text[: m.start()])
        path = OUT / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(m.group(1)))
        out.append(text[pos : m.start()])
        out.append(f"url('{name}')")
        pos = m.end()
    out.append(text[pos:])
    header = f"/* {css_name} of chessground 9.2.1 with its data: URLs written to files (extract_data_urls.py) */\n"
    (OUT / css_name).write_text(header + "".join(out))


def piece_name(before):
    kind, colour = PIECE.findall(before)[-1]
    return f"pieces/{colour[0]}{LETTER[kind]}.svg"


rewrite("chessground.brown.css", lambda before: "board-brown.svg")
rewrite("chessground.cburnett.css", piece_name)
