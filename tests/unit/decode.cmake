# Unit tests of the NFS/MOUNT decoders (src/extract/decode*.c).
tbbt_unit_test(test-decode tbbt_extract tbbt_proto)
# The NFSv4 message walk and its counting (src/extract/decode-nfs4.c, nfs4count.c).
tbbt_unit_test(test-nfs4dec tbbt_extract tbbt_proto)
