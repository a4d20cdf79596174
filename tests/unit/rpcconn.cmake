# RPC transport (src/onc/rpcconn.c) against an in-process fake server.
tbbt_unit_test(test-rpcconn tbbt_onc)
