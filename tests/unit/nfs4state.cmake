# The NFSv4 replay core (src/player/nfs4state.c, nfs4build.c, nfs4absorb.c): seqid
# regeneration, the stateid, handle and session maps, slots, a record rebuilt, encoded,
# decoded back and its reply absorbed.
tbbt_unit_test(test-nfs4state tbbt_nfs4play)
