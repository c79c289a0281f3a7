/*
 * lib/core/xxhash_inline.h — xxHash, compiled into the including unit.
 * XXH_INLINE_ALL makes every xxHash function static, so no XXH symbol is
 * ever part of libpgwitness's ABI (the export test checks this).
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_XXHASH_INLINE_H
#define PGWITNESS_XXHASH_INLINE_H
#define XXH_INLINE_ALL
#include <xxhash.h>
#endif
