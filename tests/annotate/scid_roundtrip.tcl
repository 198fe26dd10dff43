# SPDX-License-Identifier: GPL-3.0-or-later
# tkscid scid_roundtrip.tcl BASE FILE.pgn: imports FILE into a new Scid database BASE and prints
# every game back as Scid writes PGN (comments and variations kept); the import count and
# Scid's PGN warnings go to stderr. Used by check_annotate.py when Scid is installed.
set base [lindex $argv 0]
set pgn [lindex $argv 1]
set db [sc_base create $base]
set result [sc_base import $db $pgn]
puts stderr "imported [lindex $result 0] games; warnings: [lindex $result 1]"
set n [sc_base numGames $db]
for {set i 1} {$i <= $n} {incr i} {
    sc_game load $i
    puts [sc_game pgn -tags 1 -comments 1 -var 1 -width 75]
}
sc_base close $db
exit 0
