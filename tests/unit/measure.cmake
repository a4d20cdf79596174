# Aging metrics accumulator (src/aging/measure.c): the arithmetic of docs/tbbt-init.md
# "Measuring aging", fed with synthetic extents; needs no root.  The walk itself is
# tested on real file systems by tests/integration/040-measure.sh.
tbbt_unit_test(test-measure tbbt_aging)
