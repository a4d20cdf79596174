# Unit tests of the NFSv4 XDR (src/proto/nfs4.x through rpcgen) and the NFSv4 name
# tables (src/proto/nfs4op.def, status.def); the test reads nfs4.x to check the tables.
tbbt_unit_test(test-nfs4xdr tbbt_proto)
target_compile_definitions(test-nfs4xdr PRIVATE
  TBBT_NFS4_X="${CMAKE_SOURCE_DIR}/src/proto/nfs4.x")
