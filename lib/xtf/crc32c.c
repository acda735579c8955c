/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crc32c.c - CRC32C for the .xtf checksums.
 *
 * Chosen over xxhash because x86-64 has it in hardware (SSE4.2 crc32q:
 * ~8 bytes per cycle per stream here, so checksumming a 440 MB
 * 10-million-event ntrace.pb costs ~60 ms of a ~1 s serialize) and every
 * language has a library for it.  Machines without SSE4.2 use the
 * slicing-by-8 table below (~1.5 GB/s).  The choice is made with CPUID
 * (leaf 1, ECX bit 20), which needs no allocation and is safe to call from
 * the signal stop path.
 */
#include "crc32c.h"

#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define POLY 0x82F63B78u

static uint32_t table[8][256];

/* Built when the library loads, before any thread can checksum. */
__attribute__((constructor)) static void make_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

static uint32_t crc_soft(uint32_t crc, const unsigned char *p, size_t n)
{
	while (n >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		v ^= crc;
		crc = table[7][v & 0xff] ^ table[6][(v >> 8) & 0xff] ^ table[5][(v >> 16) & 0xff] ^
		      table[4][(v >> 24) & 0xff] ^ table[3][(v >> 32) & 0xff] ^
		      table[2][(v >> 40) & 0xff] ^ table[1][(v >> 48) & 0xff] ^ table[0][v >> 56];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p,
							 size_t n)
{
	uint64_t c = crc;

	while (n >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		n -= 8;
	}
	crc = (uint32_t)c;
	while (n--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}
#endif

#if defined(__x86_64__)
static int have_sse42(void)
{
	static int cached = -1; /* racing first calls compute the same value */
	unsigned int a, b, c, d;
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (v < 0) {
		v = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 20));
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}
#endif

uint32_t xpl_crc32c(uint32_t crc, const void *data, size_t len)
{
	crc = ~crc;
#if defined(__x86_64__)
	if (have_sse42())
		return ~crc_hw(crc, data, len);
#endif
	return ~crc_soft(crc, data, len);
}
