# spinwise-stress sweep plot (generated)
$s0 << EOD
0 361.93 5.58494 0
1 346.628 5.81289 0
2 311.409 6.72472 0.546088
4 299.154 7.06665 1.00866
6 288.308 6.72472 1.30324
10 330.359 6.49676 1.40387
20 301.066 6.95267 3.64538
30 301.089 6.72472 4.55515
50 345.549 7.52257 5.46013
EOD
$s1 << EOD
0 375.877 4.44515 0
1 376.393 4.55913 0
2 341.324 5.92687 0.719856
4 349.139 5.69891 1.55565
6 296.051 6.72472 3.48651
10 331.777 6.04085 4.12285
20 329.678 6.72472 8.19469
30 337.721 7.52257 9.82655
50 317.783 10.9419 14.9295
EOD
$s2 << EOD
0 384.296 4.44515 0
1 362.996 4.44515 0
2 319.886 6.61074 2.26993
4 308.143 6.49676 5.53685
6 343.702 6.38278 5.94386
10 327.075 7.97848 10.4229
20 292.524 12.5376 19.7875
30 251.013 18.2365 30.0296
50 224.881 25.0752 39.8098
EOD
$s3 << EOD
6 370.948 4.90107 0.589908
EOD
$s4 << EOD
6 364.637 5.47096 0.657849
EOD
$s5 << EOD
6 352.033 5.92687 0.836877
EOD
set terminal pngcairo size 1500,520 font 'sans,10' noenhanced
set output "bench/results/stress/sweep-stats-lock.png"
set multiplot layout 1,3 title "spinwise-stress stats-lock, hybrid_mutex, 25 threads on 2 CPUs (Intel(R) Xeon(R) Processor), 2026-11-30"
set grid
set key top right font 'sans,8'
set xlabel 'spin_wait_delay'
set xrange [-1:*]
set yrange [0:*]
set title 'requests/s'
set ylabel 'requests/s'
plot $s0 using 1:2 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'broadwell (innodb)', \
     $s1 using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'native (13.9 ns) (innodb)', \
     $s2 using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s3 using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#1f77b4' title 'broadwell (time policy)', \
     $s4 using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (13.9 ns) (time policy)', \
     $s5 using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
set title 'p99 request RT (ms)'
set ylabel 'p99 request RT (ms)'
plot $s0 using 1:3 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'broadwell (innodb)', \
     $s1 using 1:3 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'native (13.9 ns) (innodb)', \
     $s2 using 1:3 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s3 using 1:3 with points pt 6 ps 3 lw 2 lc rgb '#1f77b4' title 'broadwell (time policy)', \
     $s4 using 1:3 with points pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (13.9 ns) (time policy)', \
     $s5 using 1:3 with points pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
set title 'spin delays (% of process CPU)'
set ylabel 'spin delays (% of process CPU)'
plot $s0 using 1:4 with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'broadwell (innodb)', \
     $s1 using 1:4 with linespoints lw 2 pt 7 lc rgb '#2ca02c' title 'native (13.9 ns) (innodb)', \
     $s2 using 1:4 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s3 using 1:4 with points pt 6 ps 3 lw 2 lc rgb '#1f77b4' title 'broadwell (time policy)', \
     $s4 using 1:4 with points pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (13.9 ns) (time policy)', \
     $s5 using 1:4 with points pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
unset multiplot
