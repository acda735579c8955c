/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crc32c.h - CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of every .xtf section.  Incremental: crc = xpl_crc32c(crc, p, n)
 * starting from 0.  Async-signal-safe (no state but a const table).
 */
#ifndef XPL_CRC32C_H
#define XPL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t xpl_crc32c(uint32_t crc, const void *data, size_t len);

#endif /* XPL_CRC32C_H */
