# Unit tests of the protocol catalogue (src/proto/catalogue.def, status.def) and the
# tables derived from it in proto and trace.
tbbt_unit_test(test-catalogue tbbt_trace tbbt_proto)
