# The onc module's record marking and RPC header parser (sockets: rpcconn.cmake).
tbbt_unit_test(test-onc tbbt_onc)
