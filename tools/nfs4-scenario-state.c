/* SPDX-License-Identifier: MIT */
/*
 * nfs4-scenario's client state (nfs4-scenario-int.h).  NFSv4.0: SETCLIENTID and
 * SETCLIENTID_CONFIRM (RFC 7530 16.33-16.34; the callback address names port 0, so the
 * server's callback probe fails and it offers no delegations), RENEW (16.29), and the
 * seqids of the open and lock owners (9.1.7: bumped by every seqid-using operation that
 * did not fail with one of the errors listed there; the scenario only bumps after
 * success or an expected error that counts).  NFSv4.1/4.2: EXCHANGE_ID (RFC 8881
 * 18.35), CREATE_SESSION with no back channel (18.36: flags 0), one slot whose sequence
 * id the COMPOUND code advances (nfs4-scenario-conn.c), RECLAIM_COMPLETE (18.51),
 * DESTROY_SESSION (18.37) and DESTROY_CLIENTID (18.50), each the only operation of its
 * COMPOUND, as the RFC allows.
 */
#include <stdio.h>
#include <string.h>

#include "nfs4-scenario-int.h"

#define CB_PROGRAM 0x40000000u  /* a callback program number, as Linux uses */

static void setclientid(struct client *cl)
{
    struct c4 c;
    SETCLIENTID4args *a;

    n4_c4_init_bare(&c, cl, "SETCLIENTID");
    a = &n4_c4_add(&c, OP_SETCLIENTID)->nfs_argop4_u.opsetclientid;
    memcpy(a->client.verifier, cl->verf, sizeof(a->client.verifier));
    a->client.id.id_len = (u_int)strlen(cl->name);
    a->client.id.id_val = n4_c4_keep(&c, cl->name, strlen(cl->name) + 1);
    a->callback.cb_program = CB_PROGRAM;
    a->callback.cb_location.na_r_netid = n4_c4_keep(&c, "tcp", 4);
    a->callback.cb_location.na_r_addr = n4_c4_keep(&c, "127.0.0.1.0.0", 14);
    a->callback_ident = (uint32_t)cl->index + 1;
    n4_c4_run(&c);
    SETCLIENTID4resok *ok =
        &n4_c4_res(&c, 0)->nfs_resop4_u.opsetclientid.SETCLIENTID4res_u.resok4;
    cl->clientid = ok->clientid;
    verifier4 confirm;
    memcpy(confirm, ok->setclientid_confirm, sizeof(confirm));
    n4_c4_done(&c);

    n4_c4_init_bare(&c, cl, "SETCLIENTID_CONFIRM");
    SETCLIENTID_CONFIRM4args *ca =
        &n4_c4_add(&c, OP_SETCLIENTID_CONFIRM)->nfs_argop4_u.opsetclientid_confirm;
    ca->clientid = cl->clientid;
    memcpy(ca->setclientid_confirm, confirm, sizeof(confirm));
    n4_c4_run(&c);
    n4_c4_done(&c);
}

static void exchange_id(struct client *cl)
{
    struct c4 c;
    EXCHANGE_ID4args *a;

    n4_c4_init_bare(&c, cl, "EXCHANGE_ID");
    a = &n4_c4_add(&c, OP_EXCHANGE_ID)->nfs_argop4_u.opexchange_id;
    memcpy(a->eia_clientowner.co_verifier, cl->verf, sizeof(cl->verf));
    a->eia_clientowner.co_ownerid.co_ownerid_len = (u_int)strlen(cl->name);
    a->eia_clientowner.co_ownerid.co_ownerid_val =
        n4_c4_keep(&c, cl->name, strlen(cl->name) + 1);
    a->eia_flags = EXCHGID4_FLAG_SUPP_MOVED_REFER;
    a->eia_state_protect.spa_how = SP4_NONE;
    n4_c4_run(&c);
    EXCHANGE_ID4resok *ok =
        &n4_c4_res(&c, 0)->nfs_resop4_u.opexchange_id.EXCHANGE_ID4res_u.eir_resok4;
    cl->clientid = ok->eir_clientid;
    cl->cs_seq = ok->eir_sequenceid;
    if (cl->verbose)
        fprintf(stderr, PROG ": client %d: EXCHANGE_ID: clientid %016llx flags 0x%x\n",
                cl->index, (unsigned long long)cl->clientid, ok->eir_flags);
    n4_c4_done(&c);
}

static void channel(channel_attrs4 *ch, count4 maxreq, count4 maxresp, count4 maxops,
                    count4 slots)
{
    ch->ca_headerpadsize = 0;
    ch->ca_maxrequestsize = maxreq;
    ch->ca_maxresponsesize = maxresp;
    ch->ca_maxresponsesize_cached = 4096;
    ch->ca_maxoperations = maxops;
    ch->ca_maxrequests = slots;
}

static void create_session(struct client *cl)
{
    struct c4 c;
    CREATE_SESSION4args *a;
    callback_sec_parms4 *sec;

    n4_c4_init_bare(&c, cl, "CREATE_SESSION");
    a = &n4_c4_add(&c, OP_CREATE_SESSION)->nfs_argop4_u.opcreate_session;
    a->csa_clientid = cl->clientid;
    a->csa_sequence = cl->cs_seq;
    a->csa_flags = 0;   /* no persistence, no back channel on this connection */
    channel(&a->csa_fore_chan_attrs, 1049620, 1049480, 16, 4);
    channel(&a->csa_back_chan_attrs, 4096, 4096, 2, 1);
    a->csa_cb_program = CB_PROGRAM;
    sec = n4_c4_keep(&c, NULL, sizeof(*sec));
    sec->cb_secflavor = AUTH_NONE;
    a->csa_sec_parms.csa_sec_parms_len = 1;
    a->csa_sec_parms.csa_sec_parms_val = sec;
    n4_c4_run(&c);
    CREATE_SESSION4resok *ok =
        &n4_c4_res(&c, 0)->nfs_resop4_u.opcreate_session.CREATE_SESSION4res_u.csr_resok4;
    memcpy(cl->session, ok->csr_sessionid, sizeof(cl->session));
    if (ok->csr_fore_chan_attrs.ca_maxoperations < N4_MAXOPS ||
        ok->csr_fore_chan_attrs.ca_maxrequests < 1)
        n4_die("client %d: CREATE_SESSION: the server allows %u operations and %u slots",
               cl->index, ok->csr_fore_chan_attrs.ca_maxoperations,
               ok->csr_fore_chan_attrs.ca_maxrequests);
    if (cl->verbose)
        fprintf(stderr, PROG ": client %d: CREATE_SESSION: flags 0x%x, %u slots\n", cl->index,
                ok->csr_flags, ok->csr_fore_chan_attrs.ca_maxrequests);
    cl->slot_seq = 1;
    n4_c4_done(&c);
}

static void reclaim_complete(struct client *cl)
{
    struct c4 c;

    n4_c4_init(&c, cl, "RECLAIM_COMPLETE");
    n4_c4_add(&c, OP_RECLAIM_COMPLETE)->nfs_argop4_u.opreclaim_complete.rca_one_fs = FALSE;
    n4_c4_run(&c);
    n4_c4_done(&c);
}

void n4_state_begin(struct client *cl)
{
    if (cl->minor == 0) {
        setclientid(cl);
        cl->oo_seqid = 1;   /* any start value; Linux starts at 0, we show a bump from 1 */
        cl->lo_seqid = 0;
        return;
    }
    exchange_id(cl);
    create_session(cl);
    reclaim_complete(cl);
}

void n4_state_renew(struct client *cl)
{
    struct c4 c;

    if (cl->minor > 0) {
        n4_c4_init(&c, cl, "SEQUENCE (lease renewal)");
    } else {
        n4_c4_init_bare(&c, cl, "RENEW");
        n4_c4_add(&c, OP_RENEW)->nfs_argop4_u.oprenew.clientid = cl->clientid;
    }
    n4_c4_run(&c);
    n4_c4_done(&c);
}

void n4_state_end(struct client *cl)
{
    struct c4 c;

    if (cl->minor == 0)
        return;
    n4_c4_init_bare(&c, cl, "DESTROY_SESSION");
    memcpy(n4_c4_add(&c, OP_DESTROY_SESSION)->nfs_argop4_u.opdestroy_session.dsa_sessionid,
           cl->session, sizeof(cl->session));
    n4_c4_run(&c);
    n4_c4_done(&c);
    n4_c4_init_bare(&c, cl, "DESTROY_CLIENTID");
    n4_c4_add(&c, OP_DESTROY_CLIENTID)->nfs_argop4_u.opdestroy_clientid.dca_clientid =
        cl->clientid;
    n4_c4_run(&c);
    n4_c4_done(&c);
}

void n4_state_oo_bump(struct client *cl)
{
    if (cl->minor == 0)
        cl->oo_seqid++;
}

void n4_state_lo_bump(struct client *cl)
{
    if (cl->minor == 0)
        cl->lo_seqid++;
}
