tbbt_unit_test(test-extract tbbt_extract)
