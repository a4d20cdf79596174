# Pass B's execution order (src/extract/execorder.c): records racing for one directory
# entry, and a listing that shows a later-called change, in the traced server's order.
tbbt_unit_test(test-execorder tbbt_extract tbbt_ns tbbt_trace)
