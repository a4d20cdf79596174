/* SPDX-License-Identifier: MIT */
/*
 * The class of a replay operation that matched no original one (compare.h, "Extras").
 * Start-up and verify traffic is the player's own and normal; retries and other extras
 * are the ones that say something about the replay.
 *
 * With credentials (cred.c) the origin decides: the player's own calls (AUTH_SYS machine
 * name "tbbt-play": its MOUNT, the LOOKUPs of the image's paths, the grace probe's
 * GETATTR and SETATTR of the image root, the --verify walk) are start-up before the
 * first matched replay operation and verify after the last one, whatever their
 * procedure; a replayed call (the traced credential) is never either.  Without them
 * (format 1.0 traces, nfsdump input: origin UNKNOWN) the class follows from the phase
 * (before the first matched replay operation, between, after the last) and the
 * procedure: tbbt-play opens with MNT (MOUNT v3, or v1 for NFSv2) and pipelined LOOKUPs
 * of the image's paths, and its --verify walk is READDIRPLUS (NFSv2: READDIR and
 * LOOKUP) with GETATTRs.
 */
#include "compare/compare-int.h"

#include "proto/nfs2.h"
#include "proto/nfs3.h"

/* Procedures of the player's start-up: MOUNT, the image LOOKUPs, probes. */
static bool startup_proc(int prog, int proc)
{
    if (prog == TBBT_PROG_MNT1 || prog == TBBT_PROG_MNT3)
        return true;
    if (prog == TBBT_PROG_NFS3)
        return proc == NFSPROC3_NULL || proc == NFSPROC3_GETATTR || proc == NFSPROC3_LOOKUP ||
               proc == NFSPROC3_ACCESS || proc == NFSPROC3_FSSTAT || proc == NFSPROC3_FSINFO ||
               proc == NFSPROC3_PATHCONF;
    if (prog == TBBT_PROG_NFS2)
        return proc == NFSPROC_NULL || proc == NFSPROC_GETATTR || proc == NFSPROC_LOOKUP ||
               proc == NFSPROC_STATFS;
    return false;
}

/* Procedures of the --verify walk. */
static bool verify_proc(int prog, int proc)
{
    if (prog == TBBT_PROG_NFS3)
        return proc == NFSPROC3_GETATTR || proc == NFSPROC3_LOOKUP || proc == NFSPROC3_READDIR ||
               proc == NFSPROC3_READDIRPLUS;
    if (prog == TBBT_PROG_NFS2)
        return proc == NFSPROC_GETATTR || proc == NFSPROC_LOOKUP || proc == NFSPROC_READDIR;
    return false;
}

enum tbbt_compare_extra tbbt__cmp_classify(enum tbbt__cmp_phase phase, int prog, int proc,
                                           bool retry, enum tbbt__cmp_origin origin)
{
    switch (origin) {
    case CMP_ORIGIN_PLAYER:
        if (phase == CMP_BEFORE)
            return TBBT_COMPARE_STARTUP;
        if (phase == CMP_AFTER)
            return TBBT_COMPARE_VERIFY;
        return retry ? TBBT_COMPARE_RETRY : TBBT_COMPARE_OTHER;
    case CMP_ORIGIN_REPLAYED:
        return retry ? TBBT_COMPARE_RETRY : TBBT_COMPARE_OTHER;
    case CMP_ORIGIN_UNKNOWN:
    default:
        break;
    }
    if (phase == CMP_BEFORE && startup_proc(prog, proc))
        return TBBT_COMPARE_STARTUP;
    if (phase == CMP_AFTER && verify_proc(prog, proc))
        return TBBT_COMPARE_VERIFY;
    return retry ? TBBT_COMPARE_RETRY : TBBT_COMPARE_OTHER;
}
