# RPC transport of the player (src/player/rpcconn.c) against an in-process fake server.
tbbt_unit_test(test-rpcconn tbbt_onc)
