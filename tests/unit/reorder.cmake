# Read reordering (src/trace/reorder.c): parser, generator, streaming and array forms.
tbbt_unit_test(test-reorder tbbt_trace)
