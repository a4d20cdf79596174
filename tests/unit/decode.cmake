# Unit tests of the NFS/MOUNT decoders (src/extract/decode*.c).
tbbt_unit_test(test-decode tbbt_extract tbbt_proto)
