/* SPDX-License-Identifier: MIT */
/*
 * The output and wait clocks of an input whose times may step (see
 * stepclock.h).  Everything is computed from the differences between
 * consecutive input times, so only steps, never the absolute times, move
 * the clocks apart from the input.
 */
#include "extract/stepclock.h"

#include <string.h>

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

void tbbt__stepclock_init(struct tbbt__stepclock *k, uint64_t jump_ns)
{
    memset(k, 0, sizeof(*k));
    k->jump_ns = jump_ns;
}

/* A step back of d ns: the output and wait clocks stay where they are. */
static void step_back(struct tbbt__stepclock *k, uint64_t d)
{
    k->st.steps_back++;
    if (d > k->st.step_back_max_ns)
        k->st.step_back_max_ns = d;
    k->st.shift_ns = add_sat(k->st.shift_ns, d);
}

/* A gap of d ns forward. */
static void step_forward(struct tbbt__stepclock *k, uint64_t d)
{
    k->out = add_sat(k->out, d);
    if (d <= k->jump_ns) {
        k->wait = add_sat(k->wait, d);
        return;
    }
    k->st.jumps_forward++;
    if (d > k->st.jump_forward_max_ns)
        k->st.jump_forward_max_ns = d;
}

uint64_t tbbt__stepclock_next(struct tbbt__stepclock *k, uint64_t t_ns, uint64_t *wait_ns)
{
    if (k->n == 0)
        k->out = t_ns;
    else if (t_ns < k->last_in)
        step_back(k, k->last_in - t_ns);
    else
        step_forward(k, t_ns - k->last_in);
    k->last_in = t_ns;
    k->n++;
    if (k->out != t_ns)
        k->st.shifted++;
    *wait_ns = k->wait;
    return k->out;
}

const struct tbbt__stepclock_stats *tbbt__stepclock_stats(const struct tbbt__stepclock *k)
{
    return &k->st;
}
