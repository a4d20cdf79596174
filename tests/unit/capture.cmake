# Unit tests of the capture module (packet decoder and capture files).
tbbt_unit_test(test-capture tbbt_capture)
