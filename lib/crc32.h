/* lib/crc32.h - IEEE 802.3 CRC-32 (reflected, polynomial 0xEDB88320), the one zlib's
 * crc32() computes. Records carry it so that a host reader detects a damaged line. */
#ifndef TICKLAB_LIB_CRC32_H
#define TICKLAB_LIB_CRC32_H
#include <stddef.h>
#include <stdint.h>

/* Continue a CRC over len more bytes. Start with crc = 0; crc32_update(0, "", 0) == 0.
 * crc32_update(crc32_update(0, a, n), b, m) equals the CRC of a followed by b. */
uint32_t crc32_update(uint32_t crc, const void *data, size_t len);

#endif
