# Report of the player (src/player/report.c): histograms, merge, JSON, text, CSV.
tbbt_unit_test(test-report tbbt_play_report)
# A rank's report as bytes and the merged report of an MPI run (src/player/report-pack.c).
tbbt_unit_test(test-report-pack tbbt_play_report)
