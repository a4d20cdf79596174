# tbbt-init's planning (src/aging/image.c) through its backend seam (image-int.h): a
# recording fake backend checks the operations and their order, and the manifest lines.
# The real backends run against file systems and the lab server in
# tests/integration/050-init.sh and 055-init-nfs.sh.
tbbt_unit_test(test-image tbbt_aging)
