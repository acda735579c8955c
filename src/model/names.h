/* SPDX-License-Identifier: Apache-2.0 */
/*
 * names.h - the contract's name of an enum value, from a table indexed by
 * the enum (designated initializers: [XP_FOO] = "foo").  One lookup for
 * every enum that has a JSON spelling (validate's activation, reason and
 * Python status; doctor's check status; the correlator's confidence and
 * clock alignment; object kinds), instead of a switch each.
 *
 * Invariant: a value outside the table or without a name gives @fallback,
 * never NULL and never a read past the table.
 */
#ifndef XP_MODEL_NAMES_H
#define XP_MODEL_NAMES_H

#include <stddef.h>

#define XP_NAME_OF(table, v, fallback)                                           \
	((size_t)(v) < sizeof(table) / sizeof((table)[0]) && (table)[(size_t)(v)] ? \
		 (table)[(size_t)(v)] :                                          \
		 (fallback))

#endif /* XP_MODEL_NAMES_H */
