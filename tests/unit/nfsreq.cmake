# Trace record -> NFSv2/v3 call arguments and reply helpers of the player
# (src/player/nfsreq.c): every procedure encoded and decoded back with the rpcgen routines.
tbbt_unit_test(test-nfsreq tbbt_play_nfs)
