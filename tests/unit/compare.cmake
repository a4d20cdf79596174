# tbbt-compare (src/compare/): small original and replay traces in the text form with
# their maps, compared: matching, extras, differences, rewrites, lag, the image root.
if(TARGET tbbt_compare)
  tbbt_unit_test(test-compare tbbt_compare)
endif()
