# Unit tests of the fast XDR decode stream (src/proto/xdrmem.h) against libtirpc's.
tbbt_unit_test(test-xdrmem tbbt_proto)
