# spinwise-stress sweep plot (generated)
$s0 << EOD
0 373.382 366.715 397.435 4.43658 4.43658 4.53741 0.0384286 0.0345815 0.04505
1 384.335 383.003 397.058 4.43658 4.43658 4.43658 0.0543715 0.0425327 0.0651648
2 377.043 369.665 377.217 4.43658 4.43658 4.43658 0.125948 0.101539 0.128073
4 380.151 374.668 395.469 4.43658 4.43658 4.43658 0.246259 0.218803 0.268118
6 371.368 365.038 406.796 4.53741 4.43658 4.53741 0.371593 0.329044 0.372293
10 376.774 366.592 407.726 4.43658 4.43658 4.53741 0.544664 0.530598 0.544862
20 385.511 371.102 397.485 4.53741 4.43658 4.63824 1.01655 1.01061 1.08323
30 365.949 365.174 386.888 4.73908 4.73908 4.83991 1.60182 1.50854 1.60521
50 364.121 357.333 366.534 5.34406 5.24323 5.34406 2.88112 2.7062 3.06547
EOD
$s1 << EOD
0 376.286 361.637 393.871 4.43658 4.43658 4.43658 0.0371407 0.0341002 0.0433564
1 400.614 367.044 401.339 4.43658 4.43658 4.43658 0.0432723 0.0417642 0.0821276
2 354.58 346.852 373.366 4.53741 4.43658 4.53741 0.240176 0.196552 0.246357
4 353.958 351.218 373.177 4.63824 4.53741 4.73908 0.577221 0.565641 0.614706
6 368.438 355.536 375.534 4.63824 4.63824 4.73908 0.934705 0.794976 0.952718
10 357.349 351.596 362.812 4.94074 4.94074 5.04157 1.71253 1.67376 1.71439
20 356.377 356.302 372.451 5.54573 5.34406 5.74739 3.27973 3.02244 3.59668
30 351.68 347.935 364.055 6.25155 6.25155 6.65487 4.90145 4.28691 5.38787
50 345.638 333.666 350.888 8.06651 7.66319 8.46984 7.55012 7.47544 7.58667
EOD
$s2 << EOD
0 381.524 379.691 404.424 4.43658 4.43658 4.53741 0.0440856 0.0371643 0.0489293
1 372.43 372.295 377.892 4.43658 4.43658 4.53741 0.0489255 0.0436448 0.0594195
2 366.888 366.278 371.384 4.63824 4.53741 4.63824 0.784949 0.721119 0.85867
4 371.701 363.813 379.591 5.1424 4.73908 5.44489 2.62355 2.56205 2.69469
6 361.024 359.924 371.288 5.64656 5.34406 6.04988 3.98586 3.26319 4.20853
10 356.262 350.121 367.278 7.0582 7.0582 7.46152 6.78159 5.97005 7.29938
20 330.787 304.555 338.531 10.6881 10.4865 11.0915 13.2024 12.6562 14.0068
30 311.628 310.206 313 14.923 14.923 15.3264 19.1602 17.3612 19.3547
50 280.681 275.95 282.162 22.9896 20.9729 23.7962 28.2567 26.7744 31.5301
EOD
$s3 << EOD
6 372.356 361.282 374.419 4.53741 4.43658 4.53741 0.449469 0.400268 0.466183
EOD
$s4 << EOD
6 366.025 360.333 389.793 4.53741 4.53741 4.63824 0.463317 0.444912 0.479182
EOD
$s5 << EOD
6 361.372 355 367.446 4.53741 4.53741 4.73908 0.413354 0.411971 0.426396
EOD
set terminal pngcairo size 1500,520 font 'sans,10' noenhanced
set output "bench/results/stress/sweep-stats-lock.png"
set multiplot layout 1,3 title "spinwise-stress stats-lock, hybrid_mutex, 25 threads on 2 CPUs (Intel(R) Xeon(R) Processor), 2026-12-01\nmedian of 3 runs per point; bars: the median's 95% interval (min..max below 6 runs)"
set grid
set key top right font 'sans,8'
set xlabel 'spin_wait_delay'
set xrange [-1:*]
set yrange [0:*]
set title 'requests/s'
set ylabel 'requests/s'
plot $s0 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#1f77b4' title 'broadwell (innodb)', \
     $s1 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#2ca02c' title 'native (9.9 ns) (innodb)', \
     $s2 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s3 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#1f77b4' title 'broadwell (time policy)', \
     $s4 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (9.9 ns) (time policy)', \
     $s5 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
set title 'p99 request RT (ms)'
set ylabel 'p99 request RT (ms)'
plot $s0 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#1f77b4' title 'broadwell (innodb)', \
     $s1 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#2ca02c' title 'native (9.9 ns) (innodb)', \
     $s2 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s3 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#1f77b4' title 'broadwell (time policy)', \
     $s4 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (9.9 ns) (time policy)', \
     $s5 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
set title 'spin delays (% of process CPU)'
set ylabel 'spin delays (% of process CPU)'
plot $s0 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#1f77b4' title 'broadwell (innodb)', \
     $s1 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#2ca02c' title 'native (9.9 ns) (innodb)', \
     $s2 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s3 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#1f77b4' title 'broadwell (time policy)', \
     $s4 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (9.9 ns) (time policy)', \
     $s5 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
unset multiplot
