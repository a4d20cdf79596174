# SPDX-License-Identifier: MIT
# Plot of bench/readahead (docs/readahead.md): throughput against the number of readers,
# one line per read-ahead x reorder configuration, in the style of the figures of Ellard
# and Seltzer, "NFS Tricks and Benchmarking Traps" (USENIX 2003).  Variables, set with
# gnuplot -e: datafile (blocks separated by two blank lines, columns readers, mean MB/s,
# stddev), titles (one word per block, "_" shown as a space), plottitle, outfile,
# termtype (png or svg).
if (termtype eq "svg") {
    set terminal svg size 720,480 dynamic font "Helvetica,13"
} else {
    set terminal png size 720,480 font ",11"
}
set output outfile
set title plottitle
set xlabel "readers"
set ylabel "throughput (MB/s)"
set logscale x 2
set xtics (1, 2, 4, 8, 16, 32)
set xrange [0.8:40]
set yrange [0:*]
set grid ytics
set key outside right top
set pointsize 1.2
nb = words(titles)
plot for [i = 1:nb] datafile index (i - 1) using 1:2:3 with yerrorlines lw 2 pt (i + 3) \
    title system("echo '" . word(titles, i) . "' | tr _ ' '")
