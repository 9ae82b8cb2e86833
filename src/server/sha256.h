/* sha256.h — SHA-256 (FIPS 180-4), for storing API tokens as hashes. Pure; no I/O. */
#ifndef PS_SERVER_SHA256_H
#define PS_SERVER_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define PS_SHA256_BYTES 32

struct ps_sha256 {
    uint32_t state[8];
    uint64_t total_bytes;
    unsigned char block[64];
    size_t block_len;
};

void ps_sha256_init(struct ps_sha256 *h);
void ps_sha256_update(struct ps_sha256 *h, const void *data, size_t len);
void ps_sha256_final(struct ps_sha256 *h, unsigned char digest[PS_SHA256_BYTES]);

/* One-shot digest as 64 lowercase hex characters plus a NUL. */
void ps_sha256_hex(const void *data, size_t len, char hex[2 * PS_SHA256_BYTES + 1]);

#endif
