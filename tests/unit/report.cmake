# Report of the player (src/player/report.c): histograms, merge, JSON, text, CSV.
tbbt_unit_test(test-report tbbt_play_report)
