# One line of figures from a loadgen report, for bench.sh and pair.sh:
#   awk -v head="<label> <store>" -v m=<M> [-v pg=<postgres ticks> -v hz=<CLK_TCK>] -f summary.awk report
# pg (the `postgres` processes' CPU ticks over the run) adds pg_us, Postgres's own CPU per move.
/moves\/s/ {match($0,/\(([0-9]+) moves\/s\)/,a); mv=a[1]; match($0,/errors ([0-9]+)/,e); err=e[1]}
/own diff/ {p50=$5; p99=$7}
/server CPU/ {match($0,/= ([0-9]+) us\/move/,c); cpu=c[1]}
/loadgen CPU/ {match($0,/= ([0-9]+) us\/move/,c); lcpu=c[1]}
/server context switches/ {match($0,/= ([0-9.]+) \/move/,c); cs=c[1]}
/load average/ {la=$3}
/^moves / {match($0,/^moves ([0-9]+)/,n); total=n[1]}
END {
  pgus = (pg != "" && total > 0) ? sprintf(" pg_us=%d", pg * 1e6 / hz / total) : ""
  printf "%s M=%s moves/s=%s own_p50=%s own_p99=%s cpu_us=%s%s cs=%s loadgen_us=%s load=%s errors=%s\n",
    head, m, mv, p50, p99, cpu, pgus, cs, lcpu, la, err
}
