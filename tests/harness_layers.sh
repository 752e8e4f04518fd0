#!/bin/sh
# The harness's files depend on each other one way only: no import circle;
# and the suites see the benchmark API alone.
#
#   harness_layers.sh NM ARCHIVE HARNESS_DIR
#
# ARCHIVE is the harness's core (libkcross_harness_core.a: every harness/*.c
# and harness/bench/*.c but main.c).  Member A uses member B when A leaves a
# symbol undefined that B defines (NM -A: "U name" in A, "T/D/B/R name" in B).
# A circle (measure.c -> threads.c -> measure.c, say) fails the test, named.
# Static inline functions from the headers leave no symbol, so what this
# sees is what the linker sees: calls between files.
#
# The suites (HARNESS_DIR/bench/*.c) include bench/api.h through
# bench/bench.h, never the internals (harness.h, stats.h).
set -eu
nm=$1
archive=$2
dir=$3
failed=0
echo "1..2"
syms=$("$nm" -A "$archive") || { echo "not ok 1 - $nm -A $archive failed"; exit 1; }
printf '%s\n' "$syms" | awk '
	# "archive:member.o:ADDR T name" or "archive:member.o:  U name"
	{
		n = split($1, part, ":")
		member = part[n - 1]
		sub(/\.o$/, "", member)
		type = $2
		name = $3
		members[member] = 1
		if (type == "U")
			used[member, name] = 1
		else if (type ~ /^[TDBRVWGS]$/)
			def[name] = member
	}
	END {
		nm = 0
		for (m in members)
			id[++nm] = m
		nedges = 0
		for (k in used) {
			split(k, p, SUBSEP)
			if ((p[2] in def) && def[p[2]] != p[1]) {
				if (!((p[1], def[p[2]]) in reach)) {
					nedges++
					why[p[1], def[p[2]]] = p[2]
				}
				reach[p[1], def[p[2]]] = 1
			}
		}
		# Transitive closure (Warshall): a member that reaches itself is
		# in a circle, with every member it reaches and is reached by.
		for (k = 1; k <= nm; k++)
			for (i = 1; i <= nm; i++)
				if ((id[i], id[k]) in reach)
					for (j = 1; j <= nm; j++)
						if ((id[k], id[j]) in reach)
							reach[id[i], id[j]] = 1
		for (i = 1; i <= nm; i++) {
			a = id[i]
			if (!((a, a) in reach))
				continue
			circle = ""
			for (j = 1; j <= nm; j++) {
				b = id[j]
				if (((a, b) in reach) && ((b, a) in reach))
					for (l = 1; l <= nm; l++)
						if (((b, id[l]) in why) && ((id[l], a) in reach) &&
						    ((a, id[l]) in reach))
							circle = circle (circle == "" ? "" : "; ") b \
								" uses " why[b, id[l]] " of " id[l]
			}
			print "not ok 1 - the harness files depend on each other in a circle: " circle
			exit 1
		}
		print "ok 1 - no circle among " nm " files (" nedges " uses between them)"
		exit 0
	}' || failed=1
inside=$(grep -lE '^#[[:space:]]*include[[:space:]]*"([^"]*/)?(harness|stats)\.h"' \
	"$dir"/bench/*.c "$dir"/bench/*.h 2>/dev/null || true)
if [ -n "$inside" ]; then
	echo "not ok 2 - suites include the harness's internals:" $inside
	failed=1
else
	echo "ok 2 - the suites include the benchmark API, not the internals"
fi
exit $failed
