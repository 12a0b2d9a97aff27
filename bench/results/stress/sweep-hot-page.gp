# spinwise-stress sweep plot (generated)
$s0 << EOD
0 8515.95 8138.3 8628.7 32.8261 31.9143 35.5616 0.176252 0.146729 0.179707
30 8515.95 8138.3 8628.7 32.8261 31.9143 35.5616 0.176252 0.146729 0.179707
EOD
$s1 << EOD
0 8173.12 7970.45 9297.68 36.4735 32.8261 37.3853 0.158714 0.149144 0.197135
30 8173.12 7970.45 9297.68 36.4735 32.8261 37.3853 0.158714 0.149144 0.197135
EOD
$s2 << EOD
0 9132.52 7950.67 9183.09 32.8261 31.0024 33.7379 0.148524 0.142409 0.15351
30 9132.52 7950.67 9183.09 32.8261 31.0024 33.7379 0.148524 0.142409 0.15351
EOD
$s3 << EOD
0 8719.7 6570.68 9131.95 34.6498 33.7379 35.5616 0.0449275 0.0415023 0.0456537
6 8234.14 8065.59 8601.86 32.8261 25.9873 36.4735 6.31862 4.13924 6.90668
30 7194.96 6009.22 7642.6 46.5037 44.68 51.0628 16.4115 14.7272 23.1967
EOD
$s4 << EOD
0 8143 7235.98 8909.91 34.6498 33.7379 39.209 0.0424208 0.0396739 0.0491091
6 7715.59 7423.68 8409.34 32.8261 32.8261 36.4735 1.00437 0.841412 1.05778
30 8290.7 5685.2 8394.7 39.209 38.2971 39.209 6.79871 4.73096 7.32573
EOD
$s5 << EOD
0 8560.63 8053.25 8673.92 31.9143 30.0906 34.6498 0.0475503 0.0409988 0.0613702
6 8545.91 8199.89 8848.13 34.6498 31.9143 37.3853 4.10238 3.22519 4.75646
30 7100.07 6979.46 7537.45 40.1208 37.3853 43.7681 17.0859 12.7706 17.6299
EOD
$s6 << EOD
6 8011.14 7538.33 9209.69 32.8261 32.8261 36.4735 0.452155 0.443045 0.468471
EOD
$s7 << EOD
6 8170.34 7847.06 9154.53 38.2971 36.4735 38.2971 0.451386 0.430485 0.541342
EOD
$s8 << EOD
6 7605.39 6827.41 9257.8 34.6498 31.9143 35.5616 0.358247 0.337274 0.401282
EOD
set terminal pngcairo size 1500,520 font 'sans,10' noenhanced
set output "bench/results/stress/sweep-hot-page.png"
set multiplot layout 1,3 title "spinwise-stress hot-page, sx_lock, 25 threads on 2 CPUs (Intel(R) Xeon(R) Processor), 2026-12-02\nmedian of 3 runs per point; bars: the median's 95% interval (min..max below 6 runs)"
set grid
set key top right font 'sans,8'
set xlabel 'spin_wait_delay'
set xrange [-1:*]
set yrange [0:*]
set title 'requests/s'
set ylabel 'requests/s'
plot $s0 using 1:2:3:4 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#8c564b' title '100ns (adaptive, no knob)', \
     $s1 using 1:2:3:4 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#2ca02c' title 'native (13.9 ns) (adaptive, no knob)', \
     $s2 using 1:2:3:4 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#d62728' title 'skylake (adaptive, no knob)', \
     $s3 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#8c564b' title '100ns (innodb)', \
     $s4 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#2ca02c' title 'native (13.9 ns) (innodb)', \
     $s5 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s6 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#8c564b' title '100ns (time policy)', \
     $s7 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (13.9 ns) (time policy)', \
     $s8 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
set title 'p99 request RT (ms)'
set ylabel 'p99 request RT (ms)'
plot $s0 using 1:5:6:7 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#8c564b' title '100ns (adaptive, no knob)', \
     $s1 using 1:5:6:7 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#2ca02c' title 'native (13.9 ns) (adaptive, no knob)', \
     $s2 using 1:5:6:7 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#d62728' title 'skylake (adaptive, no knob)', \
     $s3 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#8c564b' title '100ns (innodb)', \
     $s4 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#2ca02c' title 'native (13.9 ns) (innodb)', \
     $s5 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s6 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#8c564b' title '100ns (time policy)', \
     $s7 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (13.9 ns) (time policy)', \
     $s8 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
set title 'spin delays (% of process CPU)'
set ylabel 'spin delays (% of process CPU)'
plot $s0 using 1:8:9:10 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#8c564b' title '100ns (adaptive, no knob)', \
     $s1 using 1:8:9:10 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#2ca02c' title 'native (13.9 ns) (adaptive, no knob)', \
     $s2 using 1:8:9:10 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#d62728' title 'skylake (adaptive, no knob)', \
     $s3 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#8c564b' title '100ns (innodb)', \
     $s4 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#2ca02c' title 'native (13.9 ns) (innodb)', \
     $s5 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s6 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#8c564b' title '100ns (time policy)', \
     $s7 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (13.9 ns) (time policy)', \
     $s8 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
unset multiplot
