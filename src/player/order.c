/* SPDX-License-Identifier: MIT */
/* placeholder: being written. */
typedef int tbbt_placeholder_order;
