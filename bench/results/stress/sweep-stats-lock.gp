# spinwise-stress sweep plot (generated)
$s0 << EOD
0 340.667 326.739 355.454 5.69895 5.35701 6.04089 1.15636 0.867253 1.15806
50 340.667 326.739 355.454 5.69895 5.35701 6.04089 1.15636 0.867253 1.15806
EOD
$s1 << EOD
0 369.293 332.32 378.053 4.9011 4.67314 5.92691 0.545365 0.301204 1.11575
50 369.293 332.32 378.053 4.9011 4.67314 5.92691 0.545365 0.301204 1.11575
EOD
$s2 << EOD
0 339.524 337.909 351.335 6.26885 5.92691 6.38283 0.856529 0.80002 1.03752
50 339.524 337.909 351.335 6.26885 5.92691 6.38283 0.856529 0.80002 1.03752
EOD
$s3 << EOD
0 280.089 269.29 340.589 6.38283 6.15487 6.61078 1.41875 0.97627 1.5643
50 280.089 269.29 340.589 6.38283 6.15487 6.61078 1.41875 0.97627 1.5643
EOD
$s4 << EOD
0 336.628 252.874 350.841 6.15487 5.58497 6.4968 0.999318 0.765443 1.65597
50 336.628 252.874 350.841 6.15487 5.58497 6.4968 0.999318 0.765443 1.65597
EOD
$s5 << EOD
0 343.579 250.364 359.506 6.15487 5.12906 6.38283 0.858286 0.833893 1.5436
50 343.579 250.364 359.506 6.15487 5.12906 6.38283 0.858286 0.833893 1.5436
EOD
$s6 << EOD
0 330.674 326.54 362.758 4.9011 4.44518 5.81293 0.393358 0.25278 0.52371
2 345.99 330.135 348.877 5.92691 5.81293 6.4968 3.81827 3.73294 4.35885
6 275.765 267.323 324.831 9.8022 8.43445 11.3979 15.4453 13.3926 17.9897
20 232.441 219.796 266.661 24.1636 20.9721 24.1636 36.8723 30.558 39.3897
50 184.273 138.568 213.785 45.5916 44.6798 52.8863 53.4943 48.4976 60.4447
EOD
$s7 << EOD
0 356.891 327.18 375.635 4.67314 4.44518 5.69895 0.37161 0.193108 0.413528
2 331.32 328.162 357.618 6.26885 5.81293 6.72476 1.21967 0.962148 1.345
6 324.436 279.076 342.689 6.61078 6.26885 6.95272 4.22741 3.33084 5.46427
20 321.118 232.918 341.174 7.97853 7.52262 10.0302 9.34882 9.1022 16.6739
50 294.279 195.806 309.179 13.9054 12.3097 16.8689 20.1589 19.2042 32.6991
EOD
$s8 << EOD
0 364.509 346.606 387.188 4.55916 4.55916 4.9011 0.278262 0.207948 0.418626
2 331.4 282.125 367.104 6.26885 5.24304 6.83874 0.599933 0.383531 0.838631
6 338.589 299.725 339.194 6.26885 5.69895 6.95272 0.887327 0.720711 1.18522
20 337.016 313.327 377.385 6.26885 4.67314 6.61078 1.92797 0.817337 2.34173
50 340.406 333.784 360.142 6.04089 5.24304 6.15487 3.22932 2.25385 3.29078
EOD
$s9 << EOD
0 362.497 252.606 378.663 4.78712 4.44518 5.92691 0.212414 0.209837 0.240753
2 357.208 356.999 361.085 5.58497 5.12906 5.58497 0.429772 0.344484 0.53489
6 350.314 345.656 354.106 5.92691 5.69895 6.15487 0.766573 0.743131 1.12534
20 327.58 322.992 333.308 6.38283 6.26885 6.61078 3.00627 2.50999 3.05507
50 308.507 250.974 339.486 6.83874 6.04089 7.97853 6.27396 5.13909 8.93284
EOD
$s10 << EOD
0 392.693 379.083 400.953 4.44518 4.3312 4.55916 0.187408 0.142809 0.254633
2 356.979 329.288 372.494 5.58497 4.67314 6.4968 0.767301 0.508487 1.15433
6 354.282 353.587 359.494 5.92691 5.47099 5.92691 2.25933 2.2519 2.47437
20 328.725 313.066 341.826 6.95272 6.61078 9.34628 7.22616 5.20205 7.78879
50 315.403 296.398 333.454 10.2581 10.0302 11.1699 14.2095 13.189 17.558
EOD
$s11 << EOD
0 370.631 277.227 385.056 5.12906 4.67314 5.12906 0.28413 0.221492 0.469277
2 345.465 262.177 352.864 5.81293 5.47099 6.72476 1.95614 1.54082 3.19083
6 311.6 278.115 339.2 6.95272 6.72476 7.52262 7.19034 6.07109 9.38247
20 305.07 248.173 312.899 12.7657 11.6259 15.5011 19.6747 16.6204 24.5267
50 244.211 218.796 277.359 26.4431 22.3399 27.355 37.2362 32.3056 39.8048
EOD
$s12 << EOD
6 305.8 222.068 340.502 6.4968 6.26885 6.61078 1.44318 1.01555 1.48497
EOD
$s13 << EOD
6 337.026 326.297 352.416 5.92691 5.81293 6.04089 1.09022 1.00224 1.13993
EOD
$s14 << EOD
6 366.073 337.186 371.799 5.01508 4.78712 5.47099 0.75472 0.660615 1.09641
EOD
$s15 << EOD
6 330.999 312.813 346.058 6.4968 6.15487 6.4968 1.28199 0.914131 1.33735
EOD
$s16 << EOD
6 326.376 326.114 343.2 6.15487 6.15487 6.4968 1.26834 1.09638 1.28936
EOD
$s17 << EOD
6 342.598 318.001 342.746 6.4968 5.92691 6.4968 0.994843 0.956409 1.3724
EOD
set terminal pngcairo size 1500,520 font 'sans,10' noenhanced
set output "bench/results/stress/sweep-stats-lock.png"
set multiplot layout 1,3 title "spinwise-stress stats-lock, hybrid_mutex, 25 threads on 2 CPUs (Intel(R) Xeon(R) Processor), 2026-12-02\nmedian of 3 runs per point; bars: the median's 95% interval (min..max below 6 runs)"
set grid
set key top right font 'sans,8'
set xlabel 'spin_wait_delay'
set xrange [-1:*]
set yrange [0:*]
set title 'requests/s'
set ylabel 'requests/s'
plot $s0 using 1:2:3:4 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#8c564b' title '100ns (adaptive, no knob)', \
     $s1 using 1:2:3:4 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#ff7f0e' title '20ns (adaptive, no knob)', \
     $s2 using 1:2:3:4 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#9467bd' title '2ns (adaptive, no knob)', \
     $s3 using 1:2:3:4 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#1f77b4' title 'broadwell (adaptive, no knob)', \
     $s4 using 1:2:3:4 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#2ca02c' title 'native (13.9 ns) (adaptive, no knob)', \
     $s5 using 1:2:3:4 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#d62728' title 'skylake (adaptive, no knob)', \
     $s6 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#8c564b' title '100ns (innodb)', \
     $s7 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#ff7f0e' title '20ns (innodb)', \
     $s8 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#9467bd' title '2ns (innodb)', \
     $s9 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#1f77b4' title 'broadwell (innodb)', \
     $s10 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#2ca02c' title 'native (13.9 ns) (innodb)', \
     $s11 using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s12 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#8c564b' title '100ns (time policy)', \
     $s13 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#ff7f0e' title '20ns (time policy)', \
     $s14 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#9467bd' title '2ns (time policy)', \
     $s15 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#1f77b4' title 'broadwell (time policy)', \
     $s16 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (13.9 ns) (time policy)', \
     $s17 using 1:2:3:4 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
set title 'p99 request RT (ms)'
set ylabel 'p99 request RT (ms)'
plot $s0 using 1:5:6:7 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#8c564b' title '100ns (adaptive, no knob)', \
     $s1 using 1:5:6:7 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#ff7f0e' title '20ns (adaptive, no knob)', \
     $s2 using 1:5:6:7 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#9467bd' title '2ns (adaptive, no knob)', \
     $s3 using 1:5:6:7 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#1f77b4' title 'broadwell (adaptive, no knob)', \
     $s4 using 1:5:6:7 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#2ca02c' title 'native (13.9 ns) (adaptive, no knob)', \
     $s5 using 1:5:6:7 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#d62728' title 'skylake (adaptive, no knob)', \
     $s6 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#8c564b' title '100ns (innodb)', \
     $s7 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#ff7f0e' title '20ns (innodb)', \
     $s8 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#9467bd' title '2ns (innodb)', \
     $s9 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#1f77b4' title 'broadwell (innodb)', \
     $s10 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#2ca02c' title 'native (13.9 ns) (innodb)', \
     $s11 using 1:5:6:7 with yerrorlines lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s12 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#8c564b' title '100ns (time policy)', \
     $s13 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#ff7f0e' title '20ns (time policy)', \
     $s14 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#9467bd' title '2ns (time policy)', \
     $s15 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#1f77b4' title 'broadwell (time policy)', \
     $s16 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (13.9 ns) (time policy)', \
     $s17 using 1:5:6:7 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
set title 'spin delays (% of process CPU)'
set ylabel 'spin delays (% of process CPU)'
plot $s0 using 1:8:9:10 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#8c564b' title '100ns (adaptive, no knob)', \
     $s1 using 1:8:9:10 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#ff7f0e' title '20ns (adaptive, no knob)', \
     $s2 using 1:8:9:10 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#9467bd' title '2ns (adaptive, no knob)', \
     $s3 using 1:8:9:10 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#1f77b4' title 'broadwell (adaptive, no knob)', \
     $s4 using 1:8:9:10 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#2ca02c' title 'native (13.9 ns) (adaptive, no knob)', \
     $s5 using 1:8:9:10 with yerrorlines dt 2 lw 2 pt 4 lc rgb '#d62728' title 'skylake (adaptive, no knob)', \
     $s6 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#8c564b' title '100ns (innodb)', \
     $s7 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#ff7f0e' title '20ns (innodb)', \
     $s8 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#9467bd' title '2ns (innodb)', \
     $s9 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#1f77b4' title 'broadwell (innodb)', \
     $s10 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#2ca02c' title 'native (13.9 ns) (innodb)', \
     $s11 using 1:8:9:10 with yerrorlines lw 2 pt 7 lc rgb '#d62728' title 'skylake (innodb)', \
     $s12 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#8c564b' title '100ns (time policy)', \
     $s13 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#ff7f0e' title '20ns (time policy)', \
     $s14 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#9467bd' title '2ns (time policy)', \
     $s15 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#1f77b4' title 'broadwell (time policy)', \
     $s16 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'native (13.9 ns) (time policy)', \
     $s17 using 1:8:9:10 with yerrorbars pt 6 ps 3 lw 2 lc rgb '#d62728' title 'skylake (time policy)'
unset multiplot
