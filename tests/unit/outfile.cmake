# Output files written aside and renamed into place (src/util/outfile.h): symlinks
# followed, devices in place, the existing file kept on failure, write errors reported.
tbbt_unit_test(test-outfile tbbt_util)
